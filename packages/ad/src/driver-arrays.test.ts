/**
 * How `grad`'s generated driver copies the arrays f writes and zeroes the gradient buffers it
 * reuses (one block for all of them): by a loop below 16 elements, by the `set` and `fill`
 * builtins from 16 on. Whichever it
 * takes, a call sees only its own arguments (the copy is the caller's array, untouched by the
 * sweep) and a zero gradient to accumulate into (nothing left from the call before); the
 * gradients are those of central differences.
 */
import { describe, expect, it } from 'vitest'
import { checkGradient } from '@tenet/testing'
import { grad } from './index.js'
import { DRIVER, type DriverContext } from './driver.js'
import { tag } from './test-util.js'

// x is written (the driver copies it), w only read (passed as it is); l = Σ w[i]·(x[i] + w[i]²)²
const source = `
fn f(l: f64, x: f64[], w: f64[]) {
  for i in 0..len(x) { x[i] += w[i] * w[i] }
  for i in 0..len(x) { l += w[i] * x[i] * x[i] }
}`

function loss(x: ArrayLike<number>, w: ArrayLike<number>): number {
  let l = 0
  for (let i = 0; i < x.length; i++) l += w[i]! * (x[i]! + w[i]! * w[i]!) ** 2
  return l
}

describe('the gradient driver copies arrays and zeroes reused gradients, short or long', () => {
  for (const checks of [true, false]) {
    it(`gives each call the gradient at its own arguments (lengths 3 to 40, checks ${checks ? 'on' : 'off'})`, () => {
      const g = grad(tag({ checks })(source).f!, { loss: 0, fuse: false })
      const ctx = (g as unknown as { [DRIVER]: DriverContext })[DRIVER]
      // x copied by a function made for its length at the layout (straight-line short, \`set\` long)
      expect(ctx.source).toContain('const v1 = V1; CP1(v1, a1);')
      expect(ctx.source).toContain('CP1 = copyOf("Float64Array", a1.length)')
      // the gradients of x and w in one block, zeroed by one function made for its length
      expect(ctx.source).toContain('ZB = zeroOf("Float64Array", HZ.length)')
      expect(ctx.source).toContain('ZB(HZ);')
      let seed = 1
      const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1
      // each length twice in a row (the buffers are reused), and lengths that change the buffers
      for (const n of [3, 3, 15, 16, 16, 40, 40, 15, 17]) {
        const x = Float64Array.from({ length: n }, rand)
        const w = Float64Array.from({ length: n }, rand)
        const x0 = x.slice()
        g.run(0, x, w)
        expect(Array.from(x), 'the caller’s x is not written').toEqual(Array.from(x0))
        expect(g.lastLoss).toBeCloseTo(loss(x, w), 12)
        // with y = x + w²: ∂l/∂x[i] = 2 w[i] y[i], ∂l/∂w[i] = y[i]² + 4 w[i]² y[i]
        for (let i = 0; i < n; i++) {
          const y = x[i]! + w[i]! * w[i]!
          expect(g.buffers[1]![i]).toBeCloseTo(2 * w[i]! * y, 12)
          expect(g.buffers[2]![i]).toBeCloseTo(y * y + 4 * w[i]! * w[i]! * y, 12)
        }
        const fx = checkGradient((v) => loss(v, w), Array.from(g.buffers[1]!), Array.from(x))
        const fw = checkGradient((v) => loss(x, v), Array.from(g.buffers[2]!), Array.from(w))
        expect(fx.ok && fw.ok, JSON.stringify([fx, fw])).toBe(true)
      }
    })
  }
})
