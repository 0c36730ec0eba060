/**
 * Gradients (fused and two-sweep, checks on) of a program whose small callees are inlined with
 * element arguments the callee reads in another order (`g`) or never reads (`u`): the same errors
 * as the reference interpreter where an argument is out of range (the argument's bounds are
 * checked as the call checks them, see `inlineCall` of `@tenet/ir`), and otherwise the
 * interpreter's gradient, which finite differences confirm.
 */
import { describe, expect, it } from 'vitest'
import { finiteDifference, raisedError } from '@tenet/testing'
import { grad } from './index.js'
import { tag } from './test-util.js'

const src = `fn g(y: f64, x: f64, s: f64) { x += y * s }
fn u(y: f64, x: f64) { x += 1.0 }
fn f(e: f64, y: f64[], x: f64[], k: i32) {
  for i in 0..len(x) { g(y[i + k], x[i], 2.0); u(y[i + k + 1], x[i]) }
  for i in 0..len(x) { e += x[i] * sin(x[i]) }
}`
const text = (v: unknown) => JSON.stringify(v, (_k, x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x))
const ys = [0.3, -1.1, 0.7, 2.2]
const xs = [0.5, 0.25]
type Run = (...a: unknown[]) => unknown[]

describe('gradients of inlined calls with element arguments, checks on', () => {
  const cpu = tag({ checks: true })(src)
  const interp = tag({ checks: true, backend: 'interpreter' })(src)
  for (const fuse of [true, false])
    it(`fuse ${fuse}: the interpreter's errors and gradients`, () => {
      for (const k of [-1, 0, 1, 2, 3]) {
        const outcome = (m: typeof cpu) => {
          const a = [0, Float64Array.from(ys), Float64Array.from(xs), k]
          let g: unknown
          const e = raisedError(() => {
            g = grad(m.f!, { loss: 0, fuse })(...a)
          })
          return e === 'no error' ? `${text(g)} ${text(a)}` : e
        }
        const want = outcome(interp)
        expect(outcome(cpu), `k ${k}`).toBe(want)
        if (k === 2 || k === 3) expect(want).toMatch(/^runtime\/out-of-bounds \| index 4 is out of bounds for `y`/)
        if (k === -1) expect(want).toMatch(/^runtime\/out-of-bounds \| index -1 is out of bounds for `y`/)
        if (k === 0 || k === 1) {
          // d e / d y against central differences of the objective
          const got = grad(cpu.f!, { loss: 0, fuse })(0, Float64Array.from(ys), Float64Array.from(xs), k) as unknown[]
          const objective = (y: number[]) =>
            (interp.f as unknown as Run)(0, Float64Array.from(y), Float64Array.from(xs), k)[0] as number
          const fd = finiteDifference(objective, ys)
          Array.from(got[1] as Float64Array).forEach((d, i) => expect(d).toBeCloseTo(fd[i]!, 6))
        }
      }
    })
})
