import { describe, expect, it } from 'vitest'
import { printFunction } from '@tenet/ir'
import { checkGrad, compileTangent, gradient, hessian, hvp, jacobian } from './index.js'
import { tag } from './test-util.js'

import {
  besselReciprocalSource,
  besselSource,
  complexLogSource,
  sparseDotSource,
  unitarySource,
} from './examples/papers.js'
import { randomCsc } from '@tenet/testing'

describe.each(['cpu', 'interpreter'] as const)("the papers' programs on the %s backend", (backend) => {
  const rev = tag({ backend })

  it('complex log: ∂Re/∂x = x/|x|², ∂Im/∂x from atan2', () => {
    const m = rev(complexLogSource)
    const [xr, xi] = [0.6, -1.3],
      r2 = xr * xr + xi * xi
    const g0 = gradient(m.complex_log!, [0, 0, xr, xi], { loss: 0 }) as number[]
    expect(g0[2]).toBeCloseTo(xr / r2, 14)
    expect(g0[3]).toBeCloseTo(xi / r2, 14)
    const g1 = gradient(m.complex_log!, [0, 0, xr, xi], { loss: 1 }) as number[]
    expect(g1[2]).toBeCloseTo(-xi / r2, 14)
    expect(g1[3]).toBeCloseTo(xr / r2, 14)
    for (const loss of [0, 1]) expect(checkGrad(m.complex_log!, [0.2, 0.1, xr, xi], { loss, atol: 1e-7 }).ok).toBe(true)
  })

  it('sparse dot: ∂r/∂A.nzval are the matching B entries (and vice versa)', () => {
    const m = rev(sparseDotSource)
    const [M, N] = [7, 6]
    const a = randomCsc(M, N, 0.5, 11),
      b = randomCsc(M, N, 0.5, 23)
    const g = gradient(m.sparse_dot!, [0, M, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval], { loss: 0 })
    const ga = g[5] as Float64Array,
      gb = g[8] as Float64Array
    for (let j = 0; j < N; j++) {
      for (let p = a.colptr[j]!; p < a.colptr[j + 1]!; p++) {
        let want = 0
        for (let q = b.colptr[j]!; q < b.colptr[j + 1]!; q++) if (b.rowval[q] === a.rowval[p]) want = b.nzval[q]!
        expect(ga[p]).toBe(want)
      }
      for (let q = b.colptr[j]!; q < b.colptr[j + 1]!; q++) {
        let want = 0
        for (let p = a.colptr[j]!; p < a.colptr[j + 1]!; p++) if (b.rowval[q] === a.rowval[p]) want = a.nzval[p]!
        expect(gb[q]).toBe(want)
      }
    }
    expect(g[1]).toBeNull()
    expect(g[3]).toBeNull()
    const r = checkGrad(m.sparse_dot!, [0.3, M, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval], {
      loss: 0,
      atol: 1e-8,
      rtol: 1e-8,
    })
    expect(r.ok, JSON.stringify(r.worst)).toBe(true)
  })

  it('i_umm: gradients w.r.t. the Givens angles and the matrix match finite differences', () => {
    const m = rev(unitarySource)
    const [M, N] = [4, 3]
    const x = Float64Array.from({ length: M * N }, (_, i) => Math.sin(i + 1))
    const theta = Float64Array.from({ length: (M * (M - 1)) / 2 }, (_, i) => 0.3 * i - 0.5)
    const w = Float64Array.from({ length: M * N }, (_, i) => 1 + (i % 3))
    const r = checkGrad(m.umm_loss!, [0, x, theta, w, M, N], { loss: 0, atol: 1e-7, rtol: 1e-7 })
    expect(r.ok, JSON.stringify(r.worst)).toBe(true)
    // the Jacobian of the rotated matrix w.r.t. θ, against finite differences of i_umm itself
    const J = jacobian(m.i_umm!, [x, theta, M, N], { inputs: [1], outputs: [0] })
    const h = 1e-6
    for (let k = 0; k < theta.length; k++) {
      const tp = theta.slice(),
        tm = theta.slice()
      tp[k]! += h
      tm[k]! -= h
      const xp = x.slice(),
        xm = x.slice()
      m.i_umm!(xp, tp, M, N)
      m.i_umm!(xm, tm, M, N)
      for (let r2 = 0; r2 < x.length; r2++)
        expect(J[r2 * theta.length + k]).toBeCloseTo((xp[r2]! - xm[r2]!) / (2 * h), 7)
    }
  })

  // the paper's listing, and the variant whose multiplier undoes its product with a reciprocal
  for (const [label, src] of [
    ['imul', besselSource],
    ['imul_recip', besselReciprocalSource],
  ] as const) {
    it(`Bessel J₂(1.0) by ibesselj (${label}), its derivative and second derivative`, () => {
      const m = rev(src)
      expect(m.ibesselj!(0, 2, 1.0)[0]).toBeCloseTo(0.11490348493190048, 10)
      // grad's forward mode (this is a function of one variable) and the adjoint
      for (const mode of ['auto', 'reverse'] as const) {
        const g = gradient(m.ibesselj!, [0, 2, 1.0], { loss: 0, mode })
        expect(g[0]).toBe(1)
        expect(g[1]).toBeNull()
        // J₂'(1) = (J₁(1) − J₃(1)) / 2
        expect(Math.abs((g[2] as number) - 0.21024361588113258)).toBeLessThan(1e-8)
      }
      // J₂''(1) = (J₀(1) − 2 J₂(1) + J₄(1)) / 4, exact by forward-over-reverse (the papers' figure)
      const H = hessian(m.ibesselj!, [0, 2, 1.0], { loss: 0, wrt: [2] })
      expect(Math.abs(H[0]! - 0.13446683844358093)).toBeLessThan(1e-8)
      const hv = hvp(m.ibesselj!, [0, 2, 1.0], { loss: 0, v: [0, null, 1] })
      expect(Math.abs((hv[2] as number) - 0.13446683844358093)).toBeLessThan(1e-8)
      // the arguments come back: the inverse undoes the call
      expect(m.ibesselj!.inverse(...m.ibesselj!(0.25, 2, 1.0))).toEqual([0.25, 2, 1.0])
    })
  }

  it("the reciprocal multiplier agrees with the paper's imul; at z = 0 it gives J₀(0) = 1 where imul divides 0 by 0", () => {
    const a = rev(besselSource),
      b = rev(besselReciprocalSource)
    // J_ν from 60 terms of the series, for reference
    const J = (n: number, z: number) => {
      let s = 0,
        t = (z / 2) ** n
      for (let i = 2; i <= n; i++) t /= i
      for (let k = 0; k < 60; k++) {
        s += t
        t *= -((z * z) / 4) / ((k + 1) * (k + 1 + n))
      }
      return s
    }
    for (const nu of [0, 1, 2, 5]) {
      for (const z of [0.3, 1.0, 2.5]) {
        const [ya] = a.ibesselj!(0, nu, z),
          [yb] = b.ibesselj!(0, nu, z)
        expect(Math.abs((yb as number) - (ya as number)), `ν=${nu} z=${z}`).toBeLessThan(1e-8)
        expect(Math.abs((yb as number) - J(nu, z)), `ν=${nu} z=${z}`).toBeLessThan(1e-8)
        const gb = gradient(b.ibesselj!, [0, nu, z], { loss: 0 })[2] as number
        // J_ν' = (J_{ν−1} − J_{ν+1})/2, J₀' = −J₁
        const d = nu === 0 ? -J(1, z) : (J(nu - 1, z) - J(nu + 1, z)) / 2
        expect(Math.abs(gb - d), `ν=${nu} z=${z}`).toBeLessThan(1e-8)
      }
    }
    // tiny z, where (z/2)⁻² would overflow: the reciprocal is not formed, the value is the first term
    for (const nu of [0, 1, 2]) {
      for (const z of [1e-155, 1e-160, 1e-200]) {
        const [y] = b.ibesselj!(0, nu, z)
        expect(Math.abs((y as number) - J(nu, z)), `ν=${nu} z=${z}`).toBeLessThanOrEqual(1e-16 * Math.abs(J(nu, z)))
        const gz = gradient(b.ibesselj!, [0, nu, z], { loss: 0 })[2] as number
        const d = nu === 0 ? -z / 2 : nu === 1 ? 0.5 : z / 4
        expect(Math.abs(gz - d), `ν=${nu} z=${z}`).toBeLessThanOrEqual(1e-15 * Math.abs(d))
      }
    }
    expect(b.ibesselj!(0, 0, 0)).toEqual([1, 0, 0])
    expect(b.ibesselj!(0, 2, 0)).toEqual([0, 2, 0])
    // imul's 0/0 puts NaN in its dirty ancilla, which the check of the undo loop's post-condition reports
    expect(() => a.ibesselj!(0, 0, 0)).toThrow(/post-condition/)
    // J₁'(0) = 1/2, J₂'(0) = 0
    expect(gradient(b.ibesselj!, [0, 1, 0], { loss: 0 })[2]).toBe(0.5)
    expect(gradient(b.ibesselj!, [0, 2, 0], { loss: 0, mode: 'reverse' })[2]).toBe(0)
  })

  it('the tangent of the reciprocal variant carries no tangents for k, ν and the factors made from them alone', () => {
    const text = printFunction(compileTangent(rev(besselReciprocalSource).ibesselj!, 1).tangent.ir)
    // their tangents are allocated at zero, set aside without checks and freed, and read nowhere
    for (const n of ['k', 'nuf', 'kk', 'rden']) {
      const lines = text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l.includes(`t$${n} `) || l.includes(`t$${n})`) || l.includes(`t$${n},`))
      expect(lines.length, n).toBeGreaterThan(0)
      for (const l of lines)
        expect(l, n).toMatch(new RegExp(`^(t\\$${n}: f64 <- 0\\.0|SWAP\\(\\$z\\d+, t\\$${n}\\)|t\\$${n} -> 0\\.0)$`))
    }
    // the factor's tangent has the one term of (z/2)²'s, none of 1/(k(k+ν))'s
    expect(text).toContain('t$x: f64 <- -(rden * t$halfz_power_2)')
  })
})
