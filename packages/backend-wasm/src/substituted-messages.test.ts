/**
 * Run-time errors inside loops that a pass copies with the loop variable replaced (`unroll`: by
 * each value; `jam`: the second iteration's copy, the variable one step on and counters moved;
 * `pair-series`: a callee inlined per lane) or whose invariant values it moves out
 * (`hoist-invariants`: `theta[k]` read into a local) print the source's words
 * (`Substituted.shown`), as the reference interpreter does: the same error code, message and
 * location, cpu and wasm, checks on.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const ref = referenceBackend({ checks: true })
const cpu = backendUnderTest(cpuBackend, { checks: true })
const wasm = backendUnderTest(wasmBackend, { checks: true })

/** The error of `f` (code | message | line:column) on each engine. */
function errors(src: string, args: () => unknown[], name = 'f'): { ref: string; cpu: string; wasm: string } {
  return {
    ref: raisedError(() => ref.compile(src)[name]!(...args())),
    cpu: raisedError(() => cpu.compile(src)[name]!(...args())),
    wasm: raisedError(() => wasm.compile(src)[name]!(...args())),
  }
}

const f64 = (...v: number[]) => Float64Array.from(v)

describe('messages of checks in copies of a loop body', () => {
  it('unroll: the loop variable prints as itself, not its value', () => {
    const src = `fn f(x: f64[]) {
  for j in 0..2 {
    t <- x[j] * 2.0
    x[j] += 1.0
    t -> x[j] * 2.0
  }
}`
    const r = errors(src, () => [f64(1, 2)])
    expect(r.ref).toContain('`t -> x[j] * 2.0` expects 4')
    expect(r.cpu).toBe(r.ref)
    expect(r.wasm).toBe(r.ref)
  })

  it('unroll: an offset folded around the variable prints as written (`k + c`, `k + c - 1`)', () => {
    for (const index of ['k + c', 'k + c - 1', 'c + k', '2 * c'])
      for (const at of [0, 1, 2]) {
        // the check fails in copy `at` (x[at + offset] is the element that is zero)
        const src = `fn f(x: f64[], y: f64[], k: i32) {
  for c in 0..3 {
    y[c] *= x[${index}]
  }
}`
        const offset = index === 'k + c - 1' ? -1 : 0
        const x = () => {
          const v = Float64Array.from({ length: 8 }, () => 2)
          v[index === '2 * c' ? 2 * at : at + 2 + offset] = 0
          return v
        }
        const r = errors(src, () => [x(), f64(1, 1, 1), 2])
        expect(r.ref, `${index} at ${at}`).toMatch(
          new RegExp(`^runtime/zero-factor .*\`y\\[c\\] \\*= x\\[${index.replace(/[*+]/g, '\\$&')}\\]\``),
        )
        expect(r.cpu, `${index} at ${at}`).toBe(r.ref)
        expect(r.wasm, `${index} at ${at}`).toBe(r.ref)
      }
  })

  it('jam: the second iteration prints the loop variable and the counter as written', () => {
    // the unitary column program's shape: work on rows i and i + 1 of each column l, theta[k]
    // counted; the zero-factor check of theta[k] = 0 fails in the first or the second copy
    const src = `fn f(x: f64[], theta: f64[], m: i32, n: i32) {
  k: i32 <- 0
  for i in 0..m - 1 {
    for l in 0..n {
      x[i + m * l] += x[i + 1 + m * l]
      x[i + 1 + m * l] *= theta[k]
    }
    k += 1
  }
  k -> m - 1
}`
    for (const bad of [0, 1, 2, 3]) {
      const args = () => {
        const theta = f64(0.5, 0.25, 2, 4)
        theta[bad] = 0
        return [Float64Array.from({ length: 10 }, (_, i) => 0.1 * i + 1), theta, 5, 2]
      }
      const r = errors(src, args)
      expect(r.ref, `bad = ${bad}`).toMatch(/^runtime\/zero-factor .*`x\[i \+ 1 \+ m \* l\] \*= theta\[k\]`/)
      expect(r.cpu, `bad = ${bad}`).toBe(r.ref)
      expect(r.wasm, `bad = ${bad}`).toBe(r.ref)
    }
  })

  it("pair-series (cpu): a later lane's check prints the callee's words, as the reference", () => {
    const src = `fn g(o: f64, z: f64) {
  k <- 0.0
  while (k < 3.0, k > 0.0) {
    k += 1.0
    t <- k * z
    o += t
    t -> k * 2.0
  }
  k -> 3.0
}
fn f(o: f64[], z: f64[]) {
  for i in 0..len(z) { g(o[i], z[i]) }
}`
    for (const bad of [0, 1, 2, 4]) {
      const args = () => {
        const z = f64(2, 2, 2, 2, 2)
        z[bad] = 5
        return [new Float64Array(5), z]
      }
      const r = errors(src, args)
      expect(r.ref, `bad = ${bad}`).toMatch(
        /^runtime\/dealloc \| cannot deallocate `t`: it holds 5, but `t -> k \* 2.0` expects 2/,
      )
      expect(r.cpu, `bad = ${bad}`).toBe(r.ref)
      expect(r.wasm, `bad = ${bad}`).toBe(r.ref)
    }
  })
})
