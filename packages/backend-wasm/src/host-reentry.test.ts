/**
 * A host function that the program calls from an expression may call Tenet again (a reentrant
 * call). The aliasing rule holds across such calls (`running-calls.ts` of @tenet/reversible): a
 * nested call must not read or write an array the running call writes, nor write one it reads —
 * the running call may hold that array's new values in locals (cpu) or in a copy (wasm) until it
 * returns, so the backends would disagree. Such a nested call is `call/overlap` on every backend,
 * checks on and off, raised before it runs anything; nested calls on other memory run as the
 * reference interpreter runs them. Programs where the code generators keep elements in locals
 * (promoted loop elements, reused loads), against the interpreter, cpu and wasm.
 */
import { describe, expect, it } from 'vitest'
import { TenetError, createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from './index.js'

const registry = createRegistry()
  .registerBackend(cpuBackend)
  .registerBackend(wasmBackend)
  .registerBackend(interpreterBackend)
const show = (xs: ArrayLike<number>) => Array.from(xs, (v) => (Object.is(v, -0) ? '-0' : String(v)))

const bodies: Record<string, string> = {
  loop: `for i in 0..n { y[k] += 1.0 ; z[i] += \${0}(x[i]) }`,
  branch: `for i in 0..n { if (x[i] > 0.0, ~) { y[k] += 1.0 ; z[i] += \${0}(x[i]) } }`,
  'loop, host call first': `for i in 0..n { z[i] += \${0}(x[i]) ; y[k] += 1.0 }`,
  'nested loop': `for j in 0..2 { for i in 0..n { y[k] += 1.0 ; z[i] += \${0}(x[i]) } }`,
  'straight line': `y[k] += 1.0
  z[0] += \${0}(x[0])
  y[k] += 1.0
  z[1] += y[k]`,
  'element read in the loop': `for i in 0..n { y[k] += 1.0 ; z[i] += y[k] * \${0}(x[i]) }`,
}

const source = (body: string) => `fn inc(y: f64[], k: i32) {
  y[k] += 10.0
}
fn total(s: f64, y: f64[]) {
  for i in 0..len(y) { s += y[i] }
}
fn f(y: f64[], x: f64[], z: f64[], k: i32, n: i32) {
  ${body}
}`

/**
 * What the host function does: `inc` on the caller's `y` (written by `f`), `total` of `y`, `inc`
 * on an array of its own, `total` of the caller's `x` (only read by `f`), or `inc` on `x`.
 */
type Mode = 'inc y' | 'total y' | 'inc own' | 'total x' | 'inc x'

function run(body: string, backend: string, checks: boolean, mode: Mode): string {
  let m: Record<string, (...a: unknown[]) => unknown[]> = {}
  const y = new Float64Array(3)
  const x = Float64Array.of(1, 2, 3)
  const own = new Float64Array(2)
  const host = (v: number) => {
    if (mode === 'inc y') m.inc!(y, 1)
    else if (mode === 'inc x') m.inc!(x, 0)
    else if (mode === 'inc own') m.inc!(own, 1)
    else return (m.total!(0, mode === 'total y' ? y : x)[0] as number) + v
    return v
  }
  m = compileModule(parse(source(body), [host]), { registry, backend, checks }) as typeof m
  const z = new Float64Array(3)
  try {
    m.f!(y, x, z, 1, 3)
  } catch (e) {
    return e instanceof TenetError ? `throws ${e.code}` : `throws ${String(e)}`
  }
  return JSON.stringify([show(y), show(x), show(z), show(own)])
}

describe('a call nested in a running call (from a host function) keeps the aliasing rule', () => {
  for (const [name, body] of Object.entries(bodies))
    for (const backend of ['interpreter', 'cpu', 'wasm'])
      it(`${name}, ${backend}`, () => {
        for (const checks of [false, true]) {
          const at = `checks ${checks}`
          // on the running call's memory: refused, before the nested call runs
          for (const mode of ['inc y', 'total y', 'inc x'] as const)
            expect(run(body, backend, checks, mode), `${at}, ${mode}`).toBe('throws call/overlap')
          // elsewhere, or read-only on both sides: as the interpreter
          for (const mode of ['inc own', 'total x'] as const) {
            const got = run(body, backend, checks, mode)
            expect(got, `${at}, ${mode}`).not.toMatch(/^throws/)
            expect(got, `${at}, ${mode}`).toBe(run(body, 'interpreter', checks, mode))
          }
        }
      })

  it('says which call runs, which argument overlaps which, and who writes it', () => {
    const y = new Float64Array(3)
    let m: Record<string, (...a: unknown[]) => unknown[]> = {}
    const host = (v: number) => (m.total!(0, y)[0] as number) + v
    m = compileModule(parse(source(bodies.loop!), [host]), { registry, backend: 'cpu' }) as typeof m
    expect(() => m.f!(y, Float64Array.of(1, 2, 3), new Float64Array(3), 1, 3)).toThrow(
      /`total` was called while `f` runs \(from a host function\), and its argument 2 \(`y: f64\[\]`\) of `total` shares memory with argument 1 \(`y: f64\[\]`\) of `f`, which `f` writes/,
    )
    // the checked call put its arrays back
    expect(show(y)).toEqual(['0', '0', '0'])
  })

  it('a view overlapping a running call’s written array is refused too; sequential calls are not', () => {
    const buf = new Float64Array(6)
    const y = buf.subarray(0, 3)
    const view = buf.subarray(2, 5)
    let m: Record<string, (...a: unknown[]) => unknown[]> = {}
    const host = (v: number) => {
      m.inc!(view, 0)
      return v
    }
    m = compileModule(parse(source(bodies.loop!), [host]), { registry, backend: 'cpu' }) as typeof m
    expect(() => m.f!(y, Float64Array.of(1, 2, 3), new Float64Array(3), 1, 3)).toThrow(TenetError)
    // after the failed call nothing is running: the same arrays are accepted again
    m.inc!(y, 1)
    m.inc!(view, 0)
    expect(show(buf)).toEqual(['0', '10', '10', '0', '0', '0'])
  })
})
