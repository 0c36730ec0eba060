import { describe, expect, it } from 'vitest'
import { checkGrad, gradient, hessian, hvp, jacobian } from './index.js'
import { tag } from './test-util.js'

// The papers' programs, as written for the `tenet` package's examples (our own Tenet source).
const complexLogSource = `
fn complex_log(y_re: f64, y_im: f64, x_re: f64, x_im: f64) {
  routine {
    n <- 0.0
    n += sqrt(x_re * x_re + x_im * x_im)
  }
  y_re += log(n)
  y_im += atan2(x_im, x_re)
  ~routine
}`

const sparseDotSource = `
fn sparse_dot(r: f64, m: i32, n: i32, acolptr: i32[], arowval: i32[], anzval: f64[], bcolptr: i32[], browval: i32[], bnzval: f64[]) {
  keeper: bool[] <- zeros(2 * m)
  for j in 0..n {
    ia: i32 <- acolptr[j]
    ib: i32 <- bcolptr[j]
    @unchecked {
      for i in 0..acolptr[j + 1] - acolptr[j] + bcolptr[j + 1] - bcolptr[j] {
        if (ia < acolptr[j + 1] && ib < bcolptr[j + 1] && arowval[ia] == browval[ib], ~) {
          r += anzval[ia] * bnzval[ib]
        }
        keeper[i] ^= ia == acolptr[j + 1] || ib < bcolptr[j + 1] && browval[ib] < arowval[ia]
        if (keeper[i], ~) {
          ib += 1
        } else {
          ia += 1
        }
      }
      ~{
        for i in 0..acolptr[j + 1] - acolptr[j] + bcolptr[j + 1] - bcolptr[j] {
          keeper[i] ^= ia == acolptr[j + 1] || ib < bcolptr[j + 1] && browval[ib] < arowval[ia]
          if (keeper[i], ~) {
            ib += 1
          } else {
            ia += 1
          }
        }
      }
    }
    ia -> acolptr[j]
    ib -> bcolptr[j]
  }
  keeper -> zeros(2 * m)
}`

const unitarySource = `
fn i_umm(x: f64[], theta: f64[], m: i32, n: i32) {
  for l in 0..n {
    k: i32 <- 0
    for j in 0..m {
      for i in m - 2..=j by -1 {
        ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        INC(k)
      }
    }
    k -> len(theta)
  }
}
fn umm_loss(loss: f64, x: f64[], theta: f64[], w: f64[], m: i32, n: i32) {
  i_umm(x, theta, m, n)
  for i in 0..len(x) { loss += w[i] * x[i] * x[i] }
  ~{ i_umm(x, theta, m, n) }
}`

/**
 * Seed 001, "The first kind Bessel function": J_ν(z) by its Taylor series, with the approximate
 * multiplier imul (anc4 is a dirty ancilla) so the loop needs no tape.
 */
const besselSource = `
fn imul(out: f64, x: f64, anc: f64) {
  anc += out * x
  out -= anc / x
  SWAP(out, anc)
}
fn imul_int(out: i32, x: i32, anc: i32) {
  anc += out * x
  out -= div(anc, x)
  SWAP(out, anc)
}
fn ifactorial(out: i32, n: i32) {
  anc: i32 <- 0
  out += 1
  for i in 1..=n { imul_int(out, i, anc) }
  anc -> 0
}
fn ibesselj(out: f64, nu: i32, z: f64) {
  k: i32 <- 0
  fact_nu: i32 <- 0
  halfz <- 0.0
  halfz_power_nu <- 0.0
  halfz_power_2 <- 0.0
  out_anc <- 0.0
  anc1 <- 0.0
  anc2 <- 0.0
  anc3 <- 0.0
  anc4 <- 0.0
  anc5 <- 0.0
  routine {
    halfz += z / 2.0
    halfz_power_nu += halfz ** nu
    halfz_power_2 += halfz ** 2
    ifactorial(fact_nu, nu)
    anc1 += halfz_power_nu / f64(fact_nu)
    out_anc += identity(anc1)
    while (abs(anc1) > 1e-8 && abs(anc4) < 1e-8, k != 0) {
      k += 1
      routine {
        anc5 += f64(k)
        anc5 += f64(nu)
        anc2 -= f64(k) * anc5
        anc3 += halfz_power_2 / anc2
      }
      imul(anc1, anc3, anc4)
      out_anc += identity(anc1)
      ~routine
    }
  }
  out += identity(out_anc)
  ~routine
  anc5 -> 0.0
  anc4 -> 0.0
  anc3 -> 0.0
  anc2 -> 0.0
  anc1 -> 0.0
  out_anc -> 0.0
  halfz_power_2 -> 0.0
  halfz_power_nu -> 0.0
  halfz -> 0.0
  fact_nu -> 0
  k -> 0
}`

function randomCsc(m: number, n: number, density: number, seed: number) {
  let s = seed >>> 0
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
  const colptr = new Int32Array(n + 1)
  const rows: number[] = [], vals: number[] = []
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < m; i++) if (rnd() < density) { rows.push(i); vals.push(rnd() * 2 - 1) }
    colptr[j + 1] = rows.length
  }
  return { colptr, rowval: Int32Array.from(rows), nzval: Float64Array.from(vals) }
}

describe.each(['cpu', 'interpreter'] as const)('the papers\' programs on the %s backend', (backend) => {
  const rev = tag({ backend })

  it('complex log: ∂Re/∂x = x/|x|², ∂Im/∂x from atan2', () => {
    const m = rev(complexLogSource)
    const [xr, xi] = [0.6, -1.3], r2 = xr * xr + xi * xi
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
    const a = randomCsc(M, N, 0.5, 11), b = randomCsc(M, N, 0.5, 23)
    const g = gradient(m.sparse_dot!, [0, M, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval], { loss: 0 })
    const ga = g[5] as Float64Array, gb = g[8] as Float64Array
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
    const r = checkGrad(m.sparse_dot!, [0.3, M, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval], { loss: 0, atol: 1e-8, rtol: 1e-8 })
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
      const tp = theta.slice(), tm = theta.slice(); tp[k]! += h; tm[k]! -= h
      const xp = x.slice(), xm = x.slice()
      m.i_umm!(xp, tp, M, N); m.i_umm!(xm, tm, M, N)
      for (let r2 = 0; r2 < x.length; r2++) expect(J[r2 * theta.length + k]).toBeCloseTo((xp[r2]! - xm[r2]!) / (2 * h), 7)
    }
  })

  it('Bessel J₂(1.0) by ibesselj, its derivative and second derivative', () => {
    const m = rev(besselSource)
    expect(m.ibesselj!(0, 2, 1.0)[0]).toBeCloseTo(0.11490348493190048, 10)
    const g = gradient(m.ibesselj!, [0, 2, 1.0], { loss: 0 })
    expect(g[0]).toBe(1)
    expect(g[1]).toBeNull()
    // J₂'(1) = (J₁(1) − J₃(1)) / 2
    expect(Math.abs((g[2] as number) - 0.21024361588113258)).toBeLessThan(1e-8)
    // J₂''(1) = (J₀(1) − 2 J₂(1) + J₄(1)) / 4, exact by forward-over-reverse (the papers' figure)
    const H = hessian(m.ibesselj!, [0, 2, 1.0], { loss: 0, wrt: [2] })
    expect(Math.abs(H[0]! - 0.13446683844358093)).toBeLessThan(1e-8)
    const hv = hvp(m.ibesselj!, [0, 2, 1.0], { loss: 0, v: [0, null, 1] })
    expect(Math.abs((hv[2] as number) - 0.13446683844358093)).toBeLessThan(1e-8)
  })
})
