/**
 * J_ν(z) as a Tenet program that suits f32 on the GPU: the series Σ_k (−1)^k (z/2)^{2k+ν} /
 * (k! (k+ν)!) with each term formed as exp((2k+ν)·log(z/2) − log k! − log (k+ν)!), the log
 * factorials carried in one ancilla and uncomputed at the end. The paper's version (seed 001)
 * multiplies terms in place with a dirty ancilla, whose residue f32 cannot keep below the loop's
 * threshold; this one only adds. For 0 < z ≲ 5 with 24 terms.
 */
export const besselF32Source = `fn besselj(out: f32, nu: i32, z: f32) {
  lf: f32 <- 0.0
  for i in 1..=nu { lf += log(f32(i)) }
  out += exp(f32(nu) * log(z / 2.0) - lf)
  for k in 1..24 {
    lf += log(f32(k)) + log(f32(k + nu))
    out += f32(1 - 2 * (k % 2)) * exp(f32(2 * k + nu) * log(z / 2.0) - lf)
  }
  for k in 1..24 { lf -= log(f32(k)) + log(f32(k + nu)) }
  for i in 1..=nu { lf -= log(f32(i)) }
  lf -> 0.0
}`
