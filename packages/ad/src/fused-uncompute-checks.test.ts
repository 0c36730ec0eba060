/**
 * The fused gradient program (`FunctionAdjoint.buildFused`) skips the uncompute `~P₀` at the end
 * of f and its recompute at the head of the adjoint. With run-time checks on, `~P₀` may fail a
 * check the call of f raises (its body writes an ancilla of P₀): the fused program, and the
 * forward-over-reverse Hessian and `hvp` made from it, must raise the same error (they returned
 * numbers). With checks off nothing is raised.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from '@tenet/backend-wasm'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { compileFused, compileSecondOrder, grad, hessian, hvp } from './index.js'

// each of the form `P₀; C; ~P₀` where C writes what `~P₀` checks (an ancilla of P₀), so that the
// last argument (k, j or e) decides whether the call passes
const text = `
fn anc(y: f64, x: f64[], k: i32) {
  t <- 0.0
  t += x[0] * f64(k)
  y += sin(t) * x[1] * x[1]
  t -= x[0] * 3.0
  t -> 0.0
}
fn two(y: f64, z: f64, x: f64[], k: i32) {
  t <- 0.0
  t += x[0] * f64(k)
  z += t
  y += sin(t) * x[1] * x[1]
  t -= x[0] * 3.0
  t -> 0.0
}
fn arr(y: f64, x: f64[], k: i32) {
  a: f64[] <- zeros(2)
  a[1] += x[0] * f64(k)
  y += sin(a[1]) * x[1] * x[1]
  a[1] -= x[0] * 3.0
  a -> zeros(2)
}
fn post(y: f64, x: f64[], j: i32) {
  k: i32 <- 0
  while (k < 3, k > 0) { k += 1 }
  k += j
  y += x[0] * x[1] * x[1] + sin(x[0])
  y *= x[0]
  k -= 1
  while (k > 0, k < 3) { k -= 1 }
  k -> 0
}
fn tol(y: f64, x: f64[], e: f64) {
  t <- 0.0
  t += x[0] * x[0]
  y += sin(t) * x[1] * x[1]
  t -= x[0] * x[0]
  t += e
  t -> 0.0
}
`
const BACKENDS = ['interpreter', 'cpu', 'wasm']
const make = (backend: string, checks = true): TenetModule =>
  compileModule(parse({ text, name: `fused-checks-${backend}` }), {
    registry: createRegistry()
      .registerBackend(cpuBackend)
      .registerBackend(createWasmBackend())
      .registerBackend(interpreterBackend),
    backend,
    checks,
  })

/** The arguments of each function, failing its check (`bad`) or passing (the call returns). */
const cases: Record<string, { loss: number; x: number; args: (bad: boolean) => unknown[] }> = {
  anc: { loss: 0, x: 1, args: (bad) => [0, Float64Array.of(0.5, 2), bad ? 2 : 3] },
  two: { loss: 0, x: 2, args: (bad) => [0, 0, Float64Array.of(0.5, 2), bad ? 2 : 3] },
  arr: { loss: 0, x: 1, args: (bad) => [0, Float64Array.of(0.5, 2), bad ? 4 : 3] },
  post: { loss: 0, x: 1, args: (bad) => [0, Float64Array.of(0.5, 2), bad ? 2 : 1] },
  // (within the tolerance of the deallocation check, 1e-8, or not)
  tol: { loss: 0, x: 1, args: (bad) => [0, Float64Array.of(0.5, 2), bad ? 1e-4 : 1e-12] },
}
const fresh = (a: unknown[]) => a.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v))
/** The direction of `hvp` for arguments `a`: along the array argument `x`. */
const direction = (a: unknown[], x: number) => a.map((_, i) => (i === x ? Float64Array.of(1, -0.5) : null))

describe('checks of the uncompute that the fused program skips', () => {
  it('the programs under test are fused ones (the second-order program too)', () => {
    const m = make('interpreter')
    for (const name of Object.keys(cases)) {
      const so = compileSecondOrder(m[name]!, 0, 1)
      expect(
        so.functions.some((g) => g.name.includes('$fused')),
        name,
      ).toBe(true)
    }
    expect(compileFused(m.two!, 0)!.source).toContain('$fused')
  })

  it('the fused program keeps the uncompute and its recompute with checks on only', () => {
    const kept = '  $loss += y\n  t -> 0.0\n  t <- 0.0\n  g_t: f64 <- 0.0\n  t += x[0] * 3.0\n'
    expect(compileFused(make('interpreter').two!, 0)!.source).toContain(kept)
    const off = compileFused(make('interpreter', false).two!, 0)!.source
    expect(off).toContain('  $loss += y\n  g_t: f64 <- 0.0\n  t += x[0] * 3.0\n')
    expect(off.match(/\bt -> 0\.0/g)).toHaveLength(1)
  })

  for (const backend of BACKENDS)
    it(`${backend}: the Hessian (both methods), hvp and the gradients raise the call's error`, () => {
      const m = make(backend)
      for (const [name, c] of Object.entries(cases)) {
        const f = m[name]!
        const a = c.args(true)
        const want = raisedError(() => f(...fresh(a)))
        expect(want, name).toMatch(/^runtime\/(dealloc|post-condition)/)
        const got = {
          'forward-over-reverse': raisedError(() => hessian(f, fresh(a), { loss: c.loss, wrt: [c.x] })),
          'reverse-over-forward': raisedError(() =>
            hessian(f, fresh(a), { loss: c.loss, wrt: [c.x], method: 'reverse-over-forward' }),
          ),
          hvp: raisedError(() => hvp(f, fresh(a), { loss: c.loss, v: direction(a, c.x) })),
          fused: raisedError(() => grad(f, { loss: c.loss, fuse: true })(...fresh(a))),
          'two-sweep': raisedError(() => grad(f, { loss: c.loss, fuse: false })(...fresh(a))),
        }
        // (the adjoint-only program, the first-order one of \`anc\`, runs f's body backwards: it
        // raises the same check's code, at its inverse, the allocation, where it fails)
        const adjointOnly = compileFused(f, c.loss)!.source.includes('$adjonly')
        const same = (how: string, e: string) =>
          how === 'fused' && adjointOnly ? e.split(' | ')[0] === want.split(' | ')[0] : e === want
        const diffs = Object.entries(got)
          .filter(([how, e]) => !same(how, e))
          .map(([how, e]) => `${name} ${how}: ${e}`)
        expect(diffs).toEqual([])
      }
    })

  for (const backend of BACKENDS)
    it(`${backend}: where the checks pass, the Hessian is that of reverse-over-forward and of finite differences, checks on and off`, () => {
      const on = make(backend),
        off = make(backend, false)
      for (const [name, c] of Object.entries(cases)) {
        const a = c.args(false)
        expect(
          raisedError(() => on[name]!(...fresh(a))),
          name,
        ).toBe('no error')
        const h = hessian(on[name]!, fresh(a), { loss: c.loss, wrt: [c.x] })
        const ref = hessian(on[name]!, fresh(a), { loss: c.loss, wrt: [c.x], method: 'reverse-over-forward' })
        const hOff = hessian(off[name]!, fresh(a), { loss: c.loss, wrt: [c.x] })
        // central differences of the two-sweep gradient
        const g = grad(on[name]!, { loss: c.loss, fuse: false })
        const fd: number[] = []
        const eps = 1e-5
        for (let j = 0; j < 2; j++) {
          const at = (d: number) => {
            const b = fresh(a)
            ;(b[c.x] as Float64Array)[j]! += d
            return Array.from((g(...b) as unknown[])[c.x] as Float64Array)
          }
          const p = at(eps),
            q = at(-eps)
          for (let i = 0; i < 2; i++) fd[i * 2 + j] = (p[i]! - q[i]!) / (2 * eps)
        }
        for (let i = 0; i < 4; i++) {
          expect(h[i], `${name} ${i}`).toBeCloseTo(ref[i]!, 10)
          expect(h[i], `${name} ${i}`).toBeCloseTo(hOff[i]!, 10)
          expect(h[i], `${name} ${i}`).toBeCloseTo(fd[i]!, 5)
        }
        // hvp is the Hessian times the direction
        const v = hvp(on[name]!, fresh(a), { loss: c.loss, v: direction(a, c.x) })[c.x] as Float64Array
        expect(v[0]).toBeCloseTo(h[0]! - 0.5 * h[1]!, 10)
        expect(v[1]).toBeCloseTo(h[2]! - 0.5 * h[3]!, 10)
      }
    })

  it('checks off: nothing is raised where the call would fail a check', () => {
    for (const backend of BACKENDS) {
      const m = make(backend, false)
      for (const [name, c] of Object.entries(cases)) {
        const a = c.args(true)
        expect(
          raisedError(() => m[name]!(...fresh(a))),
          `${backend} ${name}`,
        ).toBe('no error')
        let h: Float64Array = new Float64Array()
        expect(
          raisedError(() => (h = hessian(m[name]!, fresh(a), { loss: c.loss, wrt: [c.x] }))),
          name,
        ).toBe('no error')
        expect(h.length).toBe(4)
        expect(h.every(Number.isFinite)).toBe(true)
        expect(raisedError(() => hvp(m[name]!, fresh(a), { loss: c.loss, v: direction(a, c.x) }))).toBe('no error')
      }
    }
  })
})
