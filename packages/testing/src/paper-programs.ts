/**
 * Listings of the papers that several backends' tests run (`@tenet/ad`'s examples, which the
 * backends' tests cannot import, write the same programs).
 */

/**
 * Paper 001's Bessel function J_ν(z), `ibesselj(out, nu, z)`, as `@tenet/ad`'s examples write it
 * (`besselSource`): the approximate multipliers `imul` and `imul_int` (a dirty ancilla, so the
 * series loop needs no tape) and ν! by `ifactorial` in a routine.
 */
export const besselSource = `
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
