/**
 * A float64 `exp` for generated code, faster than V8's `Math.exp` (which TurboFan compiles to a
 * call into C; this one is small enough to be inlined into the generated loop) and as accurate:
 * about half an ulp from the correctly rounded result (`fast-exp.test.ts` measures it against a
 * 200-bit reference), where `Math.exp` is within one ulp.
 *
 * The method is the usual table-driven one. With N = 128, x = (128q + j)·ln2/N + r, |r| ≤ ln2/2N:
 * exp(x) = 2^q · 2^(j/N) · exp(r). 2^(j/N) comes from a table as a sum hi + lo of two doubles
 * (computed here from an exact integer root), exp(r) − 1 from its Taylor polynomial of degree 5
 * (the first neglected term, r⁶/720, is below 10⁻¹⁸ for |r| ≤ ln2/256), and 2^q from a table of
 * powers of two. Arguments outside [−708, 708] (overflow, subnormal results, ±Infinity, NaN) go
 * to `Math.exp`.
 */

const N = 128
/** fractional bits of the fixed-point numbers the table is computed with */
const P = 120n

/** ⌊A^(1/k)⌋ by Newton's method from a start above the root. */
function integerRoot(a: bigint, k: bigint, start: bigint): bigint {
  let y = start
  for (;;) {
    const z = ((k - 1n) * y + a / y ** (k - 1n)) / k
    if (z >= y) return y
    y = z
  }
}

/** 2^(j/N) = hi[j] + lo[j], each the double nearest to what is left. */
function exp2Table(): { hi: Float64Array; lo: Float64Array } {
  const hi = new Float64Array(N)
  const lo = new Float64Array(N)
  const one = 1n << P
  // 2^(1/N) in fixed point (⌊·⌋; Newton from above: the double estimate plus a margin)
  const step = integerRoot(
    1n << (P * BigInt(N) + 1n),
    BigInt(N),
    (BigInt(Math.floor(2 ** (1 / N) * 2 ** 52)) + 4n) << (P - 52n),
  )
  const scale = 2 ** -Number(P)
  let t = one
  for (let j = 0; j < N; j++) {
    // each product is truncated: the error after 127 steps is below 2⁻¹¹⁰, far below lo's ulp
    if (j > 0) t = (t * step) >> P
    const h = Number(t) * scale
    hi[j] = h
    lo[j] = Number(t - BigInt(h * 2 ** Number(P))) * scale
  }
  return { hi, lo }
}

const { hi: EXP2_HI, lo: EXP2_LO } = exp2Table()

/** 2^q for q in [−1022, 1023] at index q + 1022 (by doubling and halving: exact). */
const POW2 = (() => {
  const p = new Float64Array(2046)
  p[1022] = 1
  for (let q = 1; q <= 1023; q++) p[1022 + q] = p[1021 + q]! * 2
  for (let q = 1; q <= 1022; q++) p[1022 - q] = p[1023 - q]! / 2
  return p
})()

/** 1.5·2⁵²: adding and subtracting it rounds a double of magnitude below 2⁵¹ to an integer */
const ROUND = 6755399441055744
const N_OVER_LN2 = N / Math.LN2
// ln 2 / N as hi + lo, hi with 32 significant bits (fdlibm's split of ln 2, divided by N: exact),
// so that k·hi is exact for the k that occur (|k| < 2¹⁸)
const LN2_HI_N = 6.9314718036912381649e-1 / N
const LN2_LO_N = 1.90821492927058770002e-10 / N
const C3 = 1 / 6
const C4 = 1 / 24
const C5 = 1 / 120

/**
 * e^x in float64, about half an ulp from the correctly rounded result (see the module comment);
 * special and extreme arguments give what `Math.exp` gives.
 */
export function fastExp(x: number): number {
  if (!(x <= 708 && x >= -708)) return Math.exp(x)
  const kd = x * N_OVER_LN2 + ROUND - ROUND
  const r = x - kd * LN2_HI_N - kd * LN2_LO_N
  const k = kd | 0
  const j = k & (N - 1)
  const h = EXP2_HI[j]!
  const r2 = r * r
  const p = r + r2 * (0.5 + r * C3) + r2 * r2 * (C4 + r * C5)
  return POW2[(k >> 7) + 1022]! * (h + (EXP2_LO[j]! + h * p))
}

/**
 * The tables and constants above, for `fast-tanh.ts`. (An importing module should copy them into
 * consts of its own: V8 reads an exported binding through a cell on every access, which made
 * `fastExp` itself 2.4× slower when its own constants were exported.)
 */
export const EXP_TABLES = {
  EXP2_HI,
  EXP2_LO,
  POW2,
  ROUND,
  N_OVER_LN2,
  LN2_HI_N,
  LN2_LO_N,
  C3,
  C4,
  C5,
} as const
