import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry } from '@tenet/ir'
import { registerNumbers } from '@tenet/numbers'
import { interpreterBackend } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { checkGrad, grad, gradient } from './index.js'
import { tag } from './test-util.js'

const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** Central finite differences of the loss argument w.r.t. every number / array element (real values). */
function fd(f: (...a: unknown[]) => unknown[], args: unknown[], loss: number, h = 1e-5): Array<number | number[] | null> {
  const run = (a: unknown[]) => f(...a.map((x) => (ArrayBuffer.isView(x) ? (x as Float64Array).slice() : x)))[loss] as number
  return args.map((a, i) => {
    if (typeof a === 'number') {
      const up = args.slice(); up[i] = a + h
      const dn = args.slice(); dn[i] = a - h
      return (run(up) - run(dn)) / (2 * h)
    }
    if (a instanceof Float64Array) {
      return [...a].map((_, j) => {
        const up = args.slice(); const u = a.slice(); u[j]! += h; up[i] = u
        const dn = args.slice(); const d = a.slice(); d[j]! -= h; dn[i] = d
        return (run(up) - run(dn)) / (2 * h)
      })
    }
    return null
  })
}

function expectClose(ad: unknown[], want: Array<number | number[] | null>, tol: number, skip: number[] = []) {
  want.forEach((w, i) => {
    if (w === null || skip.includes(i)) return
    if (typeof w === 'number') expect(Math.abs((ad[i] as number) - w), `arg ${i}: ${ad[i]} vs ${w}`).toBeLessThan(tol * Math.max(1, Math.abs(w)))
    else w.forEach((x, j) => expect(Math.abs((ad[i] as Float64Array)[j]! - x), `arg ${i}[${j}]`).toBeLessThan(tol * Math.max(1, Math.abs(x))))
  })
}

describe.each(['cpu', 'interpreter'] as const)('fixed-point and ulog programs on the %s backend', (backend) => {
  const rev = tag({ backend, registry })
  const m = rev`
    fn fsum(y: fixed, x: fixed[]) {
      for i in 0..len(x) { y += x[i] * x[i] - 2.0 * x[i] }
    }
    fn fprod(y: fixed, a: fixed, b: fixed, c: f64) {
      y += a * b
      y -= sin(a) * exp(b / 4.0)
      y += convert(c * c)
    }
    fn ftrans(y: fixed, x: fixed) {
      t: fixed <- 0.0
      t += log(x) + sqrt(x)
      y += t * t
      t -= log(x) + sqrt(x)
      t -> 0.0
    }
    fn power(y: ulog, x: ulog, n: i32) {
      for i in 0..n { y *= x }
    }
    fn upoly(loss: f64, x: ulog, y: ulog, z: ulog) {
      x *= y + z
      x /= z
      x *= y - z
      x *= y ** 1.5
      loss += f64(x)
    }
    fn uarr(loss: f64, a: ulog[], s: f64) {
      p: ulog <- 1.0
      for i in 0..len(a) { p *= a[i] }
      p *= s
      loss += f64(p)
      p /= s
      for i in reverse 0..len(a) { p /= a[i] }
      p -> 1.0
    }
  `

  it('fixed: sums, products and transcendental += f(x) have f64 gradients matching finite differences', () => {
    const x = new Float64Array([0.5, -1.25, 2.0])
    const g = gradient(m.fsum!, [0, x], { loss: 0 })
    expect(g[0]).toBe(1)
    expect([...(g[1] as Float64Array)]).toEqual([...x].map((v) => 2 * v - 2))
    expect(g[1]).toBeInstanceOf(Float64Array)
    const args = [0.25, 0.7, -0.3, 1.1]
    expectClose(gradient(m.fprod!, args, { loss: 0 }), fd(m.fprod!, args, 0, 1e-4), 1e-6)
    expect(checkGrad(m.fprod!, args, { loss: 0, step: 1e-4, atol: 1e-6, rtol: 1e-6 }).ok).toBe(true)
    const g2 = gradient(m.ftrans!, [0, 1.7], { loss: 0 }) as number[]
    const t = Math.log(1.7) + Math.sqrt(1.7)
    expect(g2[1]).toBeCloseTo(2 * t * (1 / 1.7 + 0.5 / Math.sqrt(1.7)), 9)
  })

  it('ulog: the power function by *= has gradient n·x^(n−1)·y w.r.t. x and x^n w.r.t. y', () => {
    const [y, x, n] = [1.5, 1.3, 7]
    const g = gradient(m.power!, [y, x, n], { loss: 0 }) as Array<number | null>
    expect(g[0]).toBeCloseTo(x ** n, 10)
    expect(g[1]).toBeCloseTo(n * x ** (n - 1) * y, 10)
    expect(g[2]).toBeNull()
    expect(checkGrad(m.power!, [y, x, n], { loss: 0, step: 1e-5, atol: 1e-6, rtol: 1e-6 }).ok).toBe(true)
  })

  it('ulog: x *= y + z, /=, x *= y − z and x *= y ** r against finite differences', () => {
    const args = [0, 1.2, 2.5, 0.8]
    expectClose(gradient(m.upoly!, args, { loss: 0 }), fd(m.upoly!, args, 0, 1e-5), 1e-7)
    const r = checkGrad(m.upoly!, args, { loss: 0, step: 1e-5, atol: 1e-6, rtol: 1e-6 })
    expect(r.ok, JSON.stringify(r.worst)).toBe(true)
  })

  it('ulog arrays: the product of the elements (an ancilla p) and a reused grad', () => {
    const a = new Float64Array([1.5, -0.5, 2.0, 0.75])
    const g = grad(m.uarr!, { loss: 0 })
    const out = g(0, a, 3)
    const prod = a.reduce((p, v) => p * v, 1)
    ;[...a].forEach((v, i) => expect((out[1] as Float64Array)[i]).toBeCloseTo(3 * prod / v, 10))
    expect(out[2]).toBeCloseTo(prod, 10)
    expect([...a]).toEqual([1.5, -0.5, 2.0, 0.75])
    expect(g.lastLoss).toBeCloseTo(3 * prod, 10)
  })
})
