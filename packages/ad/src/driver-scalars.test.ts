/**
 * How `grad`'s generated driver hands scalars from the forward run to the adjoint: a scalar that
 * f never writes is passed on as the caller gave it (not read back from the results buffer, a
 * Float64Array, which would turn a small integer into a heap-allocated double and deoptimise the
 * adjoint's integer arithmetic), an i32 that f writes is read back with `| 0`, a bool as a bool.
 * The gradients stay those of central differences.
 */
import { describe, expect, it } from 'vitest'
import { checkGradient } from '@tenet/testing'
import { grad } from './index.js'
import { DRIVER, type DriverContext } from './driver.js'
import { tag } from './test-util.js'

const source = `
fn f(l: f64, x: f64[], n: i32, k: i32, flip: bool) {
  k += n
  flip ^= true
  for i in 0..n {
    if (flip, flip) { l += x[i] * x[i] * f64(k) } else { l += x[i] * f64(k) }
  }
}`

describe('the gradient driver passes scalars on in their own representation', () => {
  for (const checks of [true, false]) {
    it(`reads back only what f writes: i32 with | 0, bool as a bool (checks ${checks ? 'on' : 'off'})`, () => {
      const m = tag({ checks })(source)
      // the two sweeps (the one-pass program applies too, and runs no separate forward)
      const g = grad(m.f!, { loss: 0, fuse: false })
      const ctx = (g as unknown as { [DRIVER]: DriverContext })[DRIVER]
      // parameters: 0 l (f64, written), 1 x, 2 n (i32, never written), 3 k (i32, written), 4 flip (bool, written)
      expect(ctx.source).toContain('v0 = R[0];')
      expect(ctx.source).not.toMatch(/v2 = R\[2\]/)
      expect(ctx.source).toContain('v3 = R[3] | 0;')
      expect(ctx.source).toContain('v4 = R[4] !== 0;')
      const x = Float64Array.from([0.5, -1.5, 2, 0.25])
      const r = g(0, x, 3, 2, false)
      // k becomes 5 and flip true: l = 5 Σ_{i<3} x[i]², ∂l/∂x[i] = 10 x[i] for i < 3, 0 after
      const fd = checkGradient(
        (v) => {
          let l = 0
          for (let i = 0; i < 3; i++) l += v[i]! * v[i]! * 5
          return l
        },
        Array.from(r[1] as Float64Array),
        Array.from(x),
      )
      expect(fd.ok, JSON.stringify(fd)).toBe(true)
      expect(Array.from(r[1] as Float64Array)).toEqual([5, -15, 20, 0])
      expect(g.lastLoss).toBeCloseTo(5 * (0.25 + 2.25 + 4), 12)
    })
  }
})
