import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry } from '@tenet/ir'
import { registerNumbers } from '@tenet/numbers'
import { interpreterBackend } from '@tenet/reversible'
import { finiteDifferenceOfCall } from '@tenet/testing'
import { describe, expect, it } from 'vitest'
import { checkGrad, grad, gradient, hessian, hvp, jacobian, jvp } from './index.js'
import { tag } from './test-util.js'

const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)

function expectClose(ad: unknown[], want: Array<number | number[] | null>, tol: number, skip: number[] = []) {
  want.forEach((w, i) => {
    if (w === null || skip.includes(i)) return
    if (typeof w === 'number')
      expect(Math.abs((ad[i] as number) - w), `arg ${i}: ${ad[i]} vs ${w}`).toBeLessThan(tol * Math.max(1, Math.abs(w)))
    else
      w.forEach((x, j) =>
        expect(Math.abs((ad[i] as Float64Array)[j]! - x), `arg ${i}[${j}]`).toBeLessThan(
          tol * Math.max(1, Math.abs(x)),
        ),
      )
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
    expectClose(
      gradient(m.fprod!, args, { loss: 0 }),
      finiteDifferenceOfCall(m.fprod!, args, { loss: 0, h: 1e-4 }),
      1e-6,
    )
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
    expectClose(
      gradient(m.upoly!, args, { loss: 0 }),
      finiteDifferenceOfCall(m.upoly!, args, { loss: 0, h: 1e-5 }),
      1e-7,
    )
    const r = checkGrad(m.upoly!, args, { loss: 0, step: 1e-5, atol: 1e-6, rtol: 1e-6 })
    expect(r.ok, JSON.stringify(r.worst)).toBe(true)
  })

  it('ulog arrays: the product of the elements (an ancilla p) and a reused grad', () => {
    const a = new Float64Array([1.5, -0.5, 2.0, 0.75])
    const g = grad(m.uarr!, { loss: 0 })
    const out = g(0, a, 3)
    const prod = a.reduce((p, v) => p * v, 1)
    ;[...a].forEach((v, i) => expect((out[1] as Float64Array)[i]).toBeCloseTo((3 * prod) / v, 10))
    expect(out[2]).toBeCloseTo(prod, 10)
    expect([...a]).toEqual([1.5, -0.5, 2.0, 0.75])
    expect(g.lastLoss).toBeCloseTo(3 * prod, 10)
  })
})

describe.each([
  ['cpu', true],
  ['interpreter', true],
  ['cpu', false],
] as const)(
  'forward mode and second order on fixed-point and ulog programs (%s backend, checks %s)',
  (backend, checks) => {
    // without checks the second-order program also goes through dead-update elimination
    const rev = tag({ backend, registry, checks })
    const m = rev`
    fn fmix(y: fixed, x: fixed[], c: f64) {
      for i in 0..len(x) { y += sin(x[i]) * x[i] * convert(c) }
    }
    fn uprod(y: ulog, x: ulog[], z: fixed[]) {
      for i in 0..len(x) { y *= x[i] }
      for i in 0..len(z) { y /= exp(f64(z[i]) * 0.5) }
    }
    fn uloss(loss: f64, x: ulog[], z: fixed[]) {
      t: ulog <- 1.0
      for i in 0..len(x) { t *= x[i] * x[i] }
      loss += f64(t) * f64(z[0]) + f64(z[1]) ** 3
      ~{ for i in 0..len(x) { t *= x[i] * x[i] } }
      t -> 1.0
    }
  `
    const x = new Float64Array([1.5, 0.7]),
      z = new Float64Array([0.3, -0.2])

    it('jvp: f64 tangents of fixed and ulog values, against finite differences; the arguments stay as passed', () => {
      const v = [0, new Float64Array([0.4, -1.1]), 0.7]
      const r = jvp(m.fmix!, [0.25, x, 1.3], { v })
      const along = (h: number) =>
        m.fmix!(
          0.25,
          x.map((xi, i) => xi + h * (v[1] as Float64Array)[i]!),
          1.3 + h * 0.7,
        )[0] as number
      expect(r.tangent[0] as number).toBeCloseTo((along(1e-5) - along(-1e-5)) / 2e-5, 6)
      expect(r.value[0]).toBe(m.fmix!(0.25, x.slice(), 1.3)[0])
      const ru = jvp(m.uprod!, [2, x, z], { v: [1, new Float64Array([1, 0]), new Float64Array([0, 1])] })
      const y = (dy: number, dx: number, dz: number) =>
        m.uprod!(2 + dy, new Float64Array([1.5 + dx, 0.7]), new Float64Array([0.3, -0.2 + dz]))[0] as number
      const h = 1e-6
      expect(ru.tangent[0] as number).toBeCloseTo((y(h, h, h) - y(-h, -h, -h)) / (2 * h), 6)
      expect(ru.value[0] as number).toBeCloseTo((2 * 1.5 * 0.7) / Math.exp(0.05), 10)
      expect(ru.value[1]).toEqual(new Float64Array(m.uprod!(2, x.slice(), z.slice())[1] as Float64Array))
      expect([...x, ...z]).toEqual([1.5, 0.7, 0.3, -0.2])
    })

    it('ulog *= and /= scale derivatives with one rounding: tiny and huge factors, a negated target, an f32 factor', () => {
      const s = rev`
      fn two(y: ulog, a: ulog, b: ulog) { y *= a
        y *= b }
      fn quot(y: ulog, x: ulog) { y /= x }
      fn negated(y: ulog, x: ulog) { -y *= x }
      fn single(y: ulog, x: f32) { y *= x }
    `
      // y·a·b with b = 1e-17: ∂/∂a = y·b, which a scaling through b − 1 ≈ −1 would round to 0
      const t = jvp(s.two!, [1, 1, 1e-17], { v: [0, 1, 0] }).tangent[0] as number
      expect(Math.abs(t / 1e-17 - 1)).toBeLessThan(1e-12)
      const g = gradient(s.two!, [1, 1, 1e-17], { loss: 0 }) as number[]
      expect(Math.abs(g[1]! / 1e-17 - 1)).toBeLessThan(1e-12)
      // y/x at 1e250/1e200: ∂/∂y = 1e-200, ∂/∂x = −y/x² = −1e-150 (x² overflows f64)
      for (const mode of ['forward', 'reverse'] as const) {
        const J = jacobian(s.quot!, [1e250, 1e200], { inputs: [0, 1], outputs: [0], mode })
        expect(Math.abs(J[0]! / 1e-200 - 1)).toBeLessThan(1e-10)
        expect(Math.abs(J[1]! / -1e-150 - 1)).toBeLessThan(1e-10)
      }
      // derivatives are f64 real values (README, "Range of ulog derivatives"): y·a·b with ∂/∂y = a·b
      // = 1e400 is Infinity and the other two stay exact; in reverse mode also when an intermediate
      // real value (y·a = 1e400) is beyond f64, while forward mode's tangent reads it as Infinity
      // (Infinity times a zero tangent is NaN)
      for (const mode of ['forward', 'reverse'] as const) {
        expect(Array.from(jacobian(s.two!, [1e-200, 1e200, 1e200], { inputs: [0, 1, 2], outputs: [0], mode }))).toEqual(
          [Infinity, 1, 1],
        )
      }
      expect(
        Array.from(jacobian(s.two!, [1e200, 1e200, 1e-200], { inputs: [0, 1, 2], outputs: [0], mode: 'reverse' })),
      ).toEqual([1, 1, Infinity])
      expect(gradient(s.two!, [1e200, 1e200, 1e-200], { loss: 0 })).toEqual([1, 1, Infinity])
      expect(
        Array.from(jacobian(s.two!, [1e200, 1e200, 1e-200], { inputs: [0, 1, 2], outputs: [0], mode: 'forward' })),
      ).toEqual([NaN, NaN, Infinity])
      // (−y)·x = −(y·x): the same derivatives as y *= x
      expect(jvp(s.negated!, [1.5, 2], { v: [1, 1] }).tangent[0]).toBeCloseTo(2 + 1.5, 10)
      const gn = gradient(s.negated!, [1.5, 2], { loss: 0 }) as number[]
      expect(gn[0]).toBeCloseTo(2, 10)
      expect(gn[1]).toBeCloseTo(1.5, 10)
      const gs = gradient(s.single!, [1.5, 2], { loss: 0 }) as number[]
      expect(gs[1]).toBeCloseTo(1.5, 6)
      expect(jvp(s.single!, [1.5, 2], { v: [1, 1] }).tangent[0]).toBeCloseTo(3.5, 6)
    })

    it('fixed ROT and INV in forward mode agree with the f64 program', () => {
      const r = rev`
      fn rfix(a: fixed, b: fixed, t: fixed) { ROT(a, b, t) }
      fn rf64(a: f64, b: f64, t: f64) { ROT(a, b, t) }
      fn ifix(a: fixed) { INV(a) }
    `
      const v = [0.3, -0.2, 1]
      const tf = jvp(r.rfix!, [1, 0.5, 0.3], { v }).tangent as number[],
        t64 = jvp(r.rf64!, [1, 0.5, 0.3], { v }).tangent as number[]
      tf.forEach((x, i) => expect(x).toBeCloseTo(t64[i]!, 9))
      expect(jvp(r.ifix!, [0.5], { v: [1] }).tangent[0]).toBeCloseTo(-4, 9)
      // reverse mode: the f64 adjoint snippets see the real values of fixed arguments in f64
      // ancillas, so the gradients are those of the f64 program (up to the grid of the values)
      for (const loss of [0, 1]) {
        const gf = gradient(r.rfix!, [1, 0.5, 0.3], { loss }) as number[],
          g64 = gradient(r.rf64!, [1, 0.5, 0.3], { loss }) as number[]
        gf.forEach((x, i) => expect(x).toBeCloseTo(g64[i]!, 9))
        const J = jacobian(r.rfix!, [1, 0.5, 0.3], { inputs: [0, 1, 2], outputs: [loss], mode: 'reverse' })
        const Jf = jacobian(r.rfix!, [1, 0.5, 0.3], { inputs: [0, 1, 2], outputs: [loss], mode: 'forward' })
        Array.from(J).forEach((x, i) => expect(x).toBeCloseTo(Jf[i]!, 9))
      }
      expect(gradient(r.ifix!, [0.5], { loss: 0 })[0]).toBeCloseTo(-4, 9)
    })

    it('reverse mode through INV and ROT on fixed values and arrays, against finite differences', () => {
      const r = rev`
      fn finv(y: f64, x: fixed) {
        INV(x)
        y += f64(x) * f64(x)
        INV(x)
      }
      fn rarr(y: f64, v: fixed[], t: fixed) {
        for i in 0..len(v) - 1 { ROT(v[i], v[i + 1], t) }
        for i in 0..len(v) { y += f64(v[i]) * f64(v[i]) * f64(i + 1) }
        for i in reverse 0..len(v) - 1 { IROT(v[i], v[i + 1], t) }
      }
    `
      // y = 1/x² at x = 0.8: dy/dx = −2/x³ (0.8 and 1/0.8 are on the fixed grid up to its rounding)
      const gi = gradient(r.finv!, [0, 0.8], { loss: 0 }) as number[]
      expect(gi[1]).toBeCloseTo(-2 / 0.8 ** 3, 6)
      const v = Float64Array.from([0.5, -0.25, 0.75, 1])
      const c = checkGrad(r.rarr!, [0, v, 0.3], { loss: 0, atol: 1e-5 })
      expect(c.maxError).toBeLessThan(1e-5)
      expect(c.ok).toBe(true)
      expect(Array.from(v)).toEqual([0.5, -0.25, 0.75, 1])
    })

    it('jacobian: forward columns equal reverse rows', () => {
      const fwd = jacobian(m.uprod!, [2, x, z], { inputs: [0, 1, 2], outputs: [0], mode: 'forward' })
      const bwd = jacobian(m.uprod!, [2, x, z], { inputs: [0, 1, 2], outputs: [0], mode: 'reverse' })
      expect(fwd.length).toBe(5)
      fwd.forEach((v, i) => expect(v).toBeCloseTo(bwd[i]!, 10))
    })

    it('hessian and hvp: forward-over-reverse through *= on ulog and fixed reads, against the closed form', () => {
      // L = (x0·x1)²·z0 + z1³
      const H = hessian(m.uloss!, [0, x, z], { loss: 0, wrt: [1, 2] })
      const [x0, x1, z0, z1] = [1.5, 0.7, 0.3, -0.2]
      const want = [
        2 * x1 * x1 * z0,
        4 * x0 * x1 * z0,
        2 * x0 * x1 * x1,
        0,
        4 * x0 * x1 * z0,
        2 * x0 * x0 * z0,
        2 * x0 * x0 * x1,
        0,
        2 * x0 * x1 * x1,
        2 * x0 * x0 * x1,
        0,
        0,
        0,
        0,
        0,
        6 * z1,
      ]
      want.forEach((w, i) => expect(H[i]).toBeCloseTo(w, 9))
      const hv = hvp(m.uloss!, [0, x, z], { loss: 0, v: [0, new Float64Array([1, 0]), new Float64Array([0, 1])] })
      expect((hv[1] as Float64Array)[0]).toBeCloseTo(want[0]! + want[3]!, 9)
      expect((hv[2] as Float64Array)[1]).toBeCloseTo(want[12]! + want[15]!, 9)
    })
  },
)

interface C {
  re: number
  im: number
}
const cmul = (a: C, b: C): C => ({ re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re })
const conj = (a: C): C => ({ re: a.re, im: -a.im })
const cinv = (a: C): C => {
  const d = a.re * a.re + a.im * a.im
  return { re: a.re / d, im: -a.im / d }
}

describe.each(['cpu', 'interpreter'] as const)('complex gradients in the surface view on the %s backend', (backend) => {
  const rev = tag({ backend, registry })
  const m = rev`
    fn clog(y: complex, x: complex) { y += log(x) }
    fn cprod(y: complex, a: complex, b: complex) { y += a * b }
    fn csum(loss: f64, z: complex[]) {
      for i in 0..len(z) { loss += z[i].re * z[i].im }
    }
  `
  /** Finite differences of part `part` of y (the first result) w.r.t. the parts of argument i. */
  const fdParts = (f: (...a: unknown[]) => unknown[], args: C[], i: number, part: 're' | 'im', h = 1e-6): C => {
    const at = (d: C) => (f(...args.map((a, k) => (k === i ? { re: a.re + d.re, im: a.im + d.im } : a)))[0] as C)[part]
    return {
      re: (at({ re: h, im: 0 }) - at({ re: -h, im: 0 })) / (2 * h),
      im: (at({ re: 0, im: h }) - at({ re: 0, im: -h })) / (2 * h),
    }
  }

  it('log: for L = Re(y), x̄ = conj(1/x) = conj(f′(x))·ȳ with ȳ = 1; for L = Im(y), ȳ = i', () => {
    const x = { re: 0.6, im: -1.3 },
      y = { re: 0.1, im: 0.2 }
    const g = gradient(m.clog!, [y, x], { loss: 0 }) as C[]
    expect(g[0]).toEqual({ re: 1, im: 0 })
    const want = conj(cinv(x))
    expect(g[1]!.re).toBeCloseTo(want.re, 13)
    expect(g[1]!.im).toBeCloseTo(want.im, 13)
    const fd = fdParts(m.clog!, [y, x], 1, 're')
    expect(g[1]!.re).toBeCloseTo(fd.re, 7)
    expect(g[1]!.im).toBeCloseTo(fd.im, 7)
    // L = Im(y): ȳ = ∂L/∂Re y + i ∂L/∂Im y = i, x̄ = conj(1/x)·i
    const gi = gradient(m.clog!, [y, x], { loss: 0, lossPart: 'im' }) as C[]
    const wantI = cmul(conj(cinv(x)), { re: 0, im: 1 })
    const fdI = fdParts(m.clog!, [y, x], 1, 'im')
    expect(gi[1]!.re).toBeCloseTo(wantI.re, 13)
    expect(gi[1]!.im).toBeCloseTo(wantI.im, 13)
    expect(gi[1]!.re).toBeCloseTo(fdI.re, 7)
    expect(gi[1]!.im).toBeCloseTo(fdI.im, 7)
    expect(checkGrad(m.clog!, [y, x], { loss: 0, atol: 1e-7 }).ok).toBe(true)
    // the lowered view is still accepted
    const lowered = gradient(m.clog!, [0.1, 0.2, x.re, x.im], { loss: 0 }) as number[]
    expect(lowered[2]).toBe(g[1]!.re)
    expect(lowered[3]).toBe(g[1]!.im)
  })

  it('product: ā = conj(b)·ȳ and b̄ = conj(a)·ȳ, against finite differences', () => {
    const a = { re: 0.7, im: -0.4 },
      b = { re: -1.1, im: 2.3 },
      y = { re: 0, im: 0 }
    for (const part of ['re', 'im'] as const) {
      const ybar = part === 're' ? { re: 1, im: 0 } : { re: 0, im: 1 }
      const g = gradient(m.cprod!, [y, a, b], { loss: 0, lossPart: part }) as C[]
      const wa = cmul(conj(b), ybar),
        wb = cmul(conj(a), ybar)
      const fa = fdParts(m.cprod!, [y, a, b], 1, part),
        fb = fdParts(m.cprod!, [y, a, b], 2, part)
      for (const [got, want, fd] of [
        [g[1]!, wa, fa],
        [g[2]!, wb, fb],
      ] as const) {
        expect(got.re).toBeCloseTo(want.re, 13)
        expect(got.im).toBeCloseTo(want.im, 13)
        expect(got.re).toBeCloseTo(fd.re, 7)
        expect(got.im).toBeCloseTo(fd.im, 7)
      }
    }
  })

  it('complex arrays: one { re, im } per element', () => {
    const z = new Float64Array([1, 2, -3, 0.5])
    const g = gradient(m.csum!, [0, z], { loss: 0 })
    expect(g[1]).toEqual([
      { re: 2, im: 1 },
      { re: 0.5, im: -3 },
    ])
  })
})
