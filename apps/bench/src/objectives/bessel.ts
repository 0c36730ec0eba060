/**
 * Bessel function of the first kind by its power series, as in the paper's `besselj`:
 * s₀ = (z/2)^ν / ν!, s_k = s_{k−1} · (−(z/2)²) / (k (k + ν)), summed until |s| ≤ atol.
 */
export function besselJPlain(nu: number, z: number, atol = 1e-8): number {
  const half = z / 2
  let s = powInt(half, nu) / factorial(nu)
  let out = s
  const h2 = half * half
  let k = 0
  while (Math.abs(s) > atol) {
    k += 1
    s *= -h2 / (k * (k + nu))
    out += s
  }
  return out
}

/**
 * x^n for the series' integer order n: x·x for 2 and x for 1, as Tenet's generated code (its
 * `$pow`) and the listing's arithmetic below compute them, `x ** n` otherwise. With ν read
 * through the harness's black box (a value the JIT cannot fold, as a real caller's), `half ** nu`
 * became a call of the general power function, about 3.5 ns of the 8 ns single-z baseline, that
 * the Tenet rows never pay; with ν folded V8 had reduced it to `half * half` (black-box.ts).
 */
export function powInt(x: number, n: number): number {
  return n === 2 ? x * x : n === 1 ? x : x ** n
}

/** n! for a non-negative integer n (exact in float64 up to 22!). */
export function factorial(n: number): number {
  let f = 1
  for (let i = 2; i <= n; i++) f *= i
  return f
}

/** J_ν for any integer ν (J_{−ν} = (−1)^ν J_ν), series to full precision. */
function besselJInteger(nu: number, z: number): number {
  if (nu < 0) return (nu % 2 === 0 ? 1 : -1) * besselJPlain(-nu, z, 0)
  return besselJPlain(nu, z, 0)
}

/**
 * Exact derivatives by the recurrences J'_ν = (J_{ν−1} − J_{ν+1})/2 and
 * J''_ν = (J_{ν−2} − 2J_ν + J_{ν+2})/4 — the independent oracle for the Bessel rows.
 */
export function besselJDerivative(nu: number, z: number): number {
  return 0.5 * (besselJInteger(nu - 1, z) - besselJInteger(nu + 1, z))
}

export function besselJSecondDerivative(nu: number, z: number): number {
  return 0.25 * (besselJInteger(nu - 2, z) - 2 * besselJInteger(nu, z) + besselJInteger(nu + 2, z))
}

/** Besselj series terms the plain loop takes at z (so the unrolled graph computes the same sum). */
export function besselTermCount(nu: number, z: number, atol = 1e-8): number {
  const half = z / 2
  let s = powInt(half, nu) / factorial(nu)
  let k = 0
  while (Math.abs(s) > atol) {
    k++
    s *= -(half * half) / (k * (k + nu))
  }
  return k
}

/**
 * The paper's listing (`besselSource`) in plain TS, operation for operation: ν! by the integer
 * approximate multiplier (anc += out·i; out −= trunc(anc / i); swap), and each term by the float
 * one (anc += s·x; s −= anc / x; swap), whose residue s − (s·x)/x is carried into the next term
 * and ends the loop when it reaches atol. It is what the Tenet program computes, to the bit; where
 * `besselJPlain` takes s ← s·x, this takes two divisions per term and two integer divisions per
 * factor of ν! (the residue is not zero at about half of the z in [0.1, 3], where the result
 * differs from `besselJPlain` in its last bits: the divisions cannot be dropped without changing
 * the answer). A baseline for how close the generated code comes to the same arithmetic by hand.
 */
export function besselJListing(nu: number, z: number, atol = 1e-8): number {
  let fact = 1,
    fanc = 0
  for (let i = 1; i <= nu; i++) {
    fanc = (fanc + Math.imul(fact, i)) | 0
    fact = (fact - (Math.trunc(fanc / i) | 0)) | 0
    const t = fact
    fact = fanc
    fanc = t
  }
  const half = z / 2
  const h2 = half * half
  // (a run-time exponent: x·x for 2 and x for 1, as Math.pow gives them)
  let s = (nu === 2 ? half * half : nu === 1 ? half : Math.pow(half, nu)) / fact
  let out = 0 + s,
    anc = 0,
    k = 0
  while (Math.abs(s) > atol && Math.abs(anc) < atol) {
    k++
    const x = 0 - h2 / (k * (k + nu))
    anc += s * x
    s -= anc / x
    const t = s
    s = anc
    anc = t
    out += s
  }
  return out
}
