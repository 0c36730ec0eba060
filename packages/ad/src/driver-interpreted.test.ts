import { afterEach, describe, expect, it } from 'vitest'
import { grad, hessian, jacobian } from './index.js'
import { setEvalAllowedForTesting } from './driver-interpreted.js'
import { randomExpressions, tag } from './test-util.js'

afterEach(() => setEvalAllowedForTesting(undefined))

/** Runs `f` with generated drivers, then with the interpreted ones, and returns both results. */
function both<T>(f: () => T): [T, T] {
  setEvalAllowedForTesting(true)
  const a = f()
  setEvalAllowedForTesting(false)
  const b = f()
  setEvalAllowedForTesting(undefined)
  return [a, b]
}

const copy = (g: unknown[]) => g.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))

describe('the interpreted gradient driver gives what the generated one gives', () => {
  const rev = tag({ backend: 'interpreter' })
  it('random programs: two sweeps, fused/one-pass, forward mode; Jacobians and Hessians', () => {
    const { rnd, expr } = randomExpressions(2024)
    for (let t = 0; t < 40; t++) {
      const src = `fn f(y: f64, a: f64, b: f64, x: f64[], k: i32, flag: bool) {
        for i in 0..len(x) { a += ${expr(['b', 'x[i]'], 2)} }
        if (flag, ~) { b += ${expr(['a'], 2)} }
        y += ${expr(['a', 'b', 'x[0]'], 2)}
      }
      fn one(y: f64, u: f64) { y += ${expr(['u'], 3)} }`
      const m = rev(src)
      const args = [0, rnd() - 0.5, rnd() - 0.5, Float64Array.from([rnd(), rnd(), rnd()]), 3, t % 2 === 0]
      for (const fuse of [true, false]) {
        const [g1, g2] = both(() => copy(grad(m.f!, { loss: 0, fuse })(...args)))
        expect(g2).toEqual(g1)
      }
      const [o1, o2] = both(() => grad(m.one!, { loss: 0, mode: 'forward' })(0, 0.3)[1])
      expect(o2).toBe(o1)
      if (t % 8 === 0) {
        const [j1, j2] = both(() => Array.from(jacobian(m.f!, args, { outputs: [0], inputs: [1, 2, 3] })))
        expect(j2).toEqual(j1)
        const [h1, h2] = both(() => Array.from(hessian(m.f!, args, { loss: 0, wrt: [1, 2] })))
        expect(h2).toEqual(h1)
      }
    }
  })

  it('checks the uncompute the same way (an unstable inverse is an ad/uncompute error), and disposal', () => {
    const m = rev(`fn f(loss: f64, x: f64, y: f64) {
      loss += sin(x)
      for k in 0..16 { y += 2.0 * x; x += y }
    }`)
    const [e1, e2] = both(() => {
      try {
        grad(m.f!, { loss: 0 })(0, 0.3, 0.1)
        return ''
      } catch (e) {
        return `${(e as { code?: string }).code}: ${(e as Error).message}`
      }
    })
    expect(e1).toMatch(/^ad\/uncompute: /)
    expect(e2).toBe(e1)
    const [d1, d2] = both(() => {
      const g = grad(m.f!, { loss: 0, uncompute: 'off' })
      g.dispose()
      try {
        g(0, 0.3, 0.1)
        return ''
      } catch (e) {
        return (e as { code?: string }).code
      }
    })
    expect(d1).toBe('ad/disposed')
    expect(d2).toBe(d1)
  })

  it('checks arguments the same way', () => {
    const m = rev('fn f(y: f64, x: f64[]) { y += x[0] }')
    const [e1, e2] = both(() => {
      try {
        grad(m.f!, { loss: 0 })(0, [1])
        return ''
      } catch (e) {
        return (e as Error).message
      }
    })
    expect(e1).toMatch(/must be a Float64Array/)
    expect(e2).toBe(e1)
  })
})
