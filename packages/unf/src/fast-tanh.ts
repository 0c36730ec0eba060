/**
 * A float64 `tanh` for generated code, small enough for V8 to inline into the generated loop
 * (`Math.tanh` is a call into C, fdlibm's `tanh`), about as accurate as `Math.tanh`
 * (`fast-tanh.test.ts` measures both against a 200-bit reference).
 *
 * tanh is odd; for a = |x|:
 * - a < 2⁻²⁷: x itself; a < 2⁻⁶: the Taylor polynomial a − a³/3 + 2a⁵/15 − 17a⁷/315 + 62a⁹/2835
 *   (the first neglected term, 1382a¹¹/155925, is below 2⁻⁶⁶ of the result);
 * - otherwise E = e^(2a) by `fast-exp.ts`'s table method, kept split as S + T with
 *   S = 2^q · 2^(j/128)ʰⁱ and T = 2^q (2^(j/128)ˡᵒ + 2^(j/128)ʰⁱ (e^r − 1)), |T| ≤ 0.003 S. For
 *   0 ≤ q ≤ 52, S − 1 is exact (S is a multiple of 2^(q−52) below 2^(q+1)), so u = e^(2a) − 1 =
 *   (S − 1) + T has no cancellation, and tanh a = u / (u + 2). Numerator and denominator are kept
 *   as sums of two doubles (uh + ul, dh + dl), and the rounded quotient uh/dh is corrected to
 *   first order by the low parts: the sums add next to no error, the one division its rounding.
 *   There is no branch on the argument's range beyond the polynomial's (the arguments of a
 *   hidden layer jump about);
 * - a ≥ 19.0625: ±1, the correctly rounded result (1 − tanh a < 2e^(−2a) < 2⁻⁵⁴, half an ulp
 *   below 1); NaN gives NaN, −0 gives −0.
 */
import { EXP_TABLES } from './fast-exp.js'

// module consts of our own (an imported binding is read through a cell on every access)
const { C3, C4, C5, EXP2_HI, EXP2_LO, LN2_HI_N, LN2_LO_N, N_OVER_LN2, POW2, ROUND } = EXP_TABLES

const T3 = -1 / 3
const T5 = 2 / 15
const T7 = -17 / 315
const T9 = 62 / 2835

/** tanh(x) in float64 (see the module comment for the method and `fast-tanh.test.ts` for its error). */
export function fastTanh(x: number): number {
  const a = x < 0 ? -x : x
  if (!(a < 19.0625)) return Number.isNaN(a) ? x : x < 0 ? -1 : 1
  if (a < 7.450580596923828e-9) return x // 2⁻²⁷: x − x³/3 rounds to x (and −0 stays −0)
  if (a < 0.015625) {
    const a2 = x * x
    return x + x * a2 * (T3 + a2 * (T5 + a2 * (T7 + a2 * T9)))
  }
  const y = a + a
  const kd = y * N_OVER_LN2 + ROUND - ROUND
  const r = y - kd * LN2_HI_N - kd * LN2_LO_N
  const k = kd | 0
  const j = k & 127
  const h = EXP2_HI[j]!
  const r2 = r * r
  const p = r + r2 * (0.5 + r * C3) + r2 * r2 * (C4 + r * C5)
  const s = POW2[(k >> 7) + 1022]!
  const S = s * h
  const T = s * (EXP2_LO[j]! + h * p)
  // u = e^(2a) − 1 = uh + ul (S − 1 exact, |S − 1| ≥ |T| or S − 1 = 0); d = u + 2 = dh + dl
  const sm1 = S - 1
  const uh = sm1 + T
  const ul = T - (uh - sm1)
  const dh = uh + 2
  const bb = dh - uh // the rounding error of uh + 2 by Knuth's two-sum (either may be larger)
  const dl = uh - (dh - bb) + (2 - bb) + ul
  // tanh a = u/d = q0 + (ul − q0·dl)/dh to first order, q0 = uh/dh; the correction is ~2⁻⁵³ of
  // q0, so 1/dh = (1 − q0)/2 (from q0 ≈ u/(u + 2)) is close enough, and saves a division
  const q0 = uh / dh
  const t = q0 + (ul - q0 * dl) * (1 - q0) * 0.5
  return x < 0 ? -t : t
}
