/**
 * How `grad`'s generated driver copies the arguments that f writes (so that the caller's arrays
 * are left as passed): straight-line stores for short arrays (a function made per length), the `set` builtin from `SHORT`
 * elements. Both copy every element on every call, whatever lengths came before; the gradients
 * are those of central differences.
 */
import { describe, expect, it } from 'vitest'
import { checkGradient } from '@tenet/testing'
import { grad } from './index.js'
import { DRIVER, type DriverContext, SHORT } from './driver.js'
import { tag } from './test-util.js'

// x is written (so copied), then read: l = Σ (x + c)² with c = 1 + i, ∂l/∂x = 2 (x + c)
const source = `
fn f(l: f64, x: f64[]) {
  for i in 0..len(x) { x[i] += 1.0 + f64(i) }
  for i in 0..len(x) { l += x[i] * x[i] }
}`

describe('the gradient driver copies the arrays f writes', () => {
  for (const fuse of [true, false]) {
    it(`by stores below SHORT elements and by set from there, every call (${fuse ? 'fused' : 'two sweeps'})`, () => {
      const m = tag({ checks: false })(source)
      const g = grad(m.f!, { loss: 0, fuse })
      const ctx = (g as unknown as { [DRIVER]: DriverContext })[DRIVER]
      // (straight-line below SHORT elements, by \`set\` from there: see short-arrays.ts)
      expect(ctx.source).toContain('CP1(v1, a1);')
      const L = SHORT
      for (const [t, len] of [0, 3, L - 1, L, 40, 40, L, L - 1, 3, 0].entries()) {
        const x = Float64Array.from({ length: len }, (_, i) => Math.sin(3 * i + t) - 0.5)
        const before = x.slice()
        const r = g(0, x) as unknown as [number, Float64Array]
        const gx = r[1]
        expect(gx.length).toBe(len)
        // the caller's array is left as passed
        expect(Array.from(x)).toEqual(Array.from(before))
        for (let i = 0; i < len; i++) expect(gx[i]).toBe(2 * (x[i]! + (1 + i)))
        const loss = (v: Float64Array | number[]) => {
          let l = 0
          for (let i = 0; i < v.length; i++) l += (v[i]! + (1 + i)) ** 2
          return l
        }
        expect(g.lastLoss).toBeCloseTo(loss(x), 12)
        if (len > 0) {
          const fd = checkGradient(loss, Array.from(gx), Array.from(x))
          expect(fd.ok, JSON.stringify(fd)).toBe(true)
        }
      }
    })
  }
})
