/**
 * The papers' programs (seed 001) as Tenet source, our own text: the complex logarithm, the
 * sparse (CSC) dot product, the unitary matrix multiply by Givens rotations (i_umm), and the
 * Bessel function J_ν(z) by its Taylor series with the approximate multiplier `imul`. Their one
 * home: `@tenet/ad` exports them as its examples (`examples/papers.ts` re-exports this file), and
 * the benchmarks and the tests of `@tenet/ad` and of the backends (which cannot import
 * `@tenet/ad`) compile them from here.
 */

/** `complex_log(y_re, y_im, x_re, x_im)`: y += log(x) on complex numbers given by parts. */
export const complexLogSource = `
fn complex_log(y_re: f64, y_im: f64, x_re: f64, x_im: f64) {
  routine {
    n <- 0.0
    n += sqrt(x_re * x_re + x_im * x_im)
  }
  y_re += log(n)
  y_im += atan2(x_im, x_re)
  ~routine
}`

/** `sparse_dot(r, m, n, acolptr, arowval, anzval, bcolptr, browval, bnzval)`: r += ⟨A, B⟩ for CSC matrices with sorted rows. */
export const sparseDotSource = `
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

/**
 * The same Frobenius dot product written with reversible thinking instead of a branch keeper:
 * the post-condition of the merge's `if` recognises which list advanced (the element moved last
 * is the larger one; ties move A first), so nothing is stored and nothing must be uncomputed
 * per column. With checks off the post-conditions are not evaluated at all.
 */
export const sparseDotMergeSource = `
fn sparse_dot_merge(r: f64, m: i32, n: i32, acolptr: i32[], arowval: i32[], anzval: f64[], bcolptr: i32[], browval: i32[], bnzval: f64[]) {
  for j in 0..n {
    routine {
      sa: i32 <- acolptr[j]
      sb: i32 <- bcolptr[j]
      ea: i32 <- acolptr[j + 1]
      eb: i32 <- bcolptr[j + 1]
    }
    ia: i32 <- sa
    ib: i32 <- sb
    while (ia < ea || ib < eb, ia > sa || ib > sb) {
      if (ia == ea || ib < eb && browval[ib] < arowval[ia], ib > sb && (ia == sa || browval[ib - 1] >= arowval[ia - 1])) {
        ib += 1
      } else {
        if (ib < eb && arowval[ia] == browval[ib], ~) {
          r += anzval[ia] * bnzval[ib]
        }
        ia += 1
      }
    }
    ia -> ea
    ib -> eb
    ~routine
  }
}`

/** Listing 14: `i_umm(x, theta, m, n)`, the Givens rotations of each column of x (m×n). */
export const ummSource = `
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
`

/** `i_umm` and the loss `umm_loss(loss, x, theta, w, m, n)` = Σ w·x² of the rotated x, rotated back. */
export const unitarySource = `${ummSource}
fn umm_loss(loss: f64, x: f64[], theta: f64[], w: f64[], m: i32, n: i32) {
  i_umm(x, theta, m, n)
  for i in 0..len(x) { loss += w[i] * x[i] * x[i] }
  ~{ i_umm(x, theta, m, n) }
}`

/** ν! in place by the integer approximate multiplier (exact for integers): `ifactorial(out, n)`. */
const factorialSource = `fn imul_int(out: i32, x: i32, anc: i32) {
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
`

/**
 * Seed 001, "The first kind Bessel function": J_ν(z) by its Taylor series, with the approximate
 * multiplier imul (anc4 is a dirty ancilla) so the loop needs no tape. The ratio of consecutive
 * terms, −(z/2)²/(k(k+ν)), is one compound expression where the paper's listing builds it in the
 * ancillas anc5 and anc2.
 */
export const besselSource = `
fn imul(out: f64, x: f64, anc: f64) {
  anc += out * x
  out -= anc / x
  SWAP(out, anc)
}
${factorialSource}fn ibesselj(out: f64, nu: i32, z: f64) {
  k: i32 <- 0
  fact_nu: i32 <- 0
  halfz <- 0.0
  halfz_power_nu <- 0.0
  halfz_power_2 <- 0.0
  out_anc <- 0.0
  anc1 <- 0.0
  anc3 <- 0.0
  anc4 <- 0.0
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
        anc3 -= halfz_power_2 / (f64(k) * f64(k + nu))
      }
      imul(anc1, anc3, anc4)
      out_anc += identity(anc1)
      ~routine
    }
  }
  out += identity(out_anc)
  ~routine
  anc4 -> 0.0
  anc3 -> 0.0
  anc1 -> 0.0
  out_anc -> 0.0
  halfz_power_2 -> 0.0
  halfz_power_nu -> 0.0
  halfz -> 0.0
  fact_nu -> 0
  k -> 0
}`

/**
 * J_ν(z) by the same series and the same dirty-ancilla trick, with an approximate multiplier
 * that undoes its product by multiplying with the reciprocal of the factor, `imul_recip(out, x,
 * 1/x, anc)`, where the paper's `imul` divides by x. The loop computes the factor
 * x = −(z/2)²/(k(k+ν)) and its reciprocal −k(k+ν)·(z/2)⁻² from k and the loop-invariant
 * (z/2)⁻², so the only division left in the loop is 1/(k(k+ν)), which no iteration waits for;
 * in `imul` the division sits in the chain from one term to the next. The values agree with
 * `besselSource` to rounding (the two ancillas' residues differ). The reciprocal is formed only
 * where (z/2)² > 1e-300, so that it is finite (an infinite one would leave NaN behind in the
 * uncompute); below that it is 0, the multiplier's uncompute does nothing, the term stays in the
 * dirty ancilla and the loop ends after it: J_ν(z) is its first term there, which it is to
 * rounding. So J₀(0) = 1 with run-time checks on, where `imul`'s 0/0 fails the check of its loop.
 *
 * The term's index k is an f64 (small integers are exact), as is `nuf`, ν's copy, so the loop does
 * no integer-to-float conversion: V8 converts with an instruction that also reads a scratch
 * register, which the loop's swaps write, and that made each iteration wait for the last one's
 * residue before computing its factor (the gradient ran 1.4× slower with an i32 k). Neither k nor
 * ν carries a tangent: ancillas that only ever receive values without one have none.
 */
export const besselReciprocalSource = `
fn imul_recip(out: f64, x: f64, xinv: f64, anc: f64) {
  anc += out * x
  out -= anc * xinv
  SWAP(out, anc)
}
${factorialSource}
fn ibesselj(out: f64, nu: i32, z: f64) {
  k <- 0.0
  nuf <- 0.0
  fact_nu: i32 <- 0
  halfz <- 0.0
  halfz_power_nu <- 0.0
  halfz_power_2 <- 0.0
  inv_halfz_power_2 <- 0.0
  out_anc <- 0.0
  anc1 <- 0.0
  anc4 <- 0.0
  routine {
    nuf += f64(nu)
    halfz += z / 2.0
    halfz_power_nu += halfz ** nu
    halfz_power_2 += halfz ** 2
    if (halfz_power_2 > 1e-300, ~) { inv_halfz_power_2 += 1.0 / halfz_power_2 }
    ifactorial(fact_nu, nu)
    anc1 += halfz_power_nu / f64(fact_nu)
    out_anc += identity(anc1)
    while (abs(anc1) > 1e-8 && abs(anc4) < 1e-8, k != 0.0) {
      k += 1.0
      kk <- k * (k + nuf)
      rden <- 1.0 / kk
      x <- -(halfz_power_2 * rden)
      xinv <- -(kk * inv_halfz_power_2)
      imul_recip(anc1, x, xinv, anc4)
      out_anc += identity(anc1)
      xinv -> -(kk * inv_halfz_power_2)
      x -> -(halfz_power_2 * rden)
      rden -> 1.0 / kk
      kk -> k * (k + nuf)
    }
  }
  out += identity(out_anc)
  ~routine
  anc4 -> 0.0
  anc1 -> 0.0
  out_anc -> 0.0
  inv_halfz_power_2 -> 0.0
  halfz_power_2 -> 0.0
  halfz_power_nu -> 0.0
  halfz -> 0.0
  fact_nu -> 0
  nuf -> 0.0
  k -> 0.0
}`

/**
 * J_ν(z) by the same series and the same stopping rule (the loop ends after the first term with
 * |term| ≤ 1e-8), with every term kept in its own element of a work array instead of the
 * approximate multiplier's dirty ancilla: term m is t[m] = t[m−1] · (−(z/2)²/(m(m+ν))), a
 * plain product, and the terms are uncomputed with the routine. It costs a 64-element array
 * (enough for the series to converge to 1e-8 for |z| up to about 20) but leaves no rounding
 * residue behind: in `besselSource` the multiplier's residue of one term is divided by the next
 * factors (about 1/term by the end of the loop), which is harmless for the value but amplifies
 * the rounding of high-order derivatives (seen by Taylor mode from the 3rd derivative on).
 * Used to check higher-order derivatives against the series' term-by-term derivatives.
 */
export const besselTermsSource = `
${factorialSource}fn ibesselj_terms(out: f64, nu: i32, z: f64) {
  m: i32 <- 0
  fact_nu: i32 <- 0
  halfz <- 0.0
  halfz_power_2 <- 0.0
  out_anc <- 0.0
  t: f64[] <- zeros(64)
  routine {
    halfz += z / 2.0
    halfz_power_2 += halfz ** 2
    ifactorial(fact_nu, nu)
    t[0] += halfz ** nu / f64(fact_nu)
    out_anc += identity(t[0])
    while (abs(t[m]) > 1e-8 && m < 63, m != 0) {
      m += 1
      t[m] -= t[m - 1] * halfz_power_2 / (f64(m) * f64(m + nu))
      out_anc += identity(t[m])
    }
  }
  out += identity(out_anc)
  ~routine
  t -> zeros(64)
  out_anc -> 0.0
  halfz_power_2 -> 0.0
  halfz -> 0.0
  fact_nu -> 0
  m -> 0
}`
