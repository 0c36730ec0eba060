/**
 * log Γ(x) for x > 0 by the Lanczos approximation (g = 7, nine coefficients; relative error
 * about 1e-15), with the reflection formula below 1/2, and the multivariate log-gamma
 * log Γ_d(a) = d(d−1)/4 · log π + Σ_{j=1..d} log Γ(a + (1 − j)/2).
 */
const G = 7
const C = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
]

/** log Γ(x) (x not a non-positive integer). */
export function lgamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lgamma(1 - x)
  const z = x - 1
  let a = C[0]!
  const t = z + G + 0.5
  for (let i = 1; i < G + 2; i++) a += C[i]! / (z + i)
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a)
}

/** The multivariate log-gamma function log Γ_d(a). */
export function multivariateLgamma(d: number, a: number): number {
  let s = d * (d - 1) * 0.25 * Math.log(Math.PI)
  for (let j = 1; j <= d; j++) s += lgamma(a + (1 - j) * 0.5)
  return s
}
