/**
 * exp of the two lanes of an f64x2, for lane pairs (`lanes.ts`) that apply exp in both lanes:
 * lane by lane the arithmetic of the scalar `exp` (exp.ts), so each lane is the scalar
 * routine's double bit for bit. The scalar routine branches on |x|; here the common arguments,
 * 2⁻²⁸ ≤ |x| < 708 (x ≠ 1) and x = ±0, take every branch's arithmetic at once and select per
 * lane: k = 0 below ln2/2, k = ±1 below 1.5·ln 2 (for which the general reduction x − k·ln2_hi,
 * k·ln2_lo gives the same doubles), k = the rounded x/ln 2 above, and 2^k stays a normal number.
 * Whenever a lane is outside that range (tiny but not zero, large, infinite, NaN, or exactly 1)
 * both lanes call the scalar routine.
 */
import { type Routine, eqz, words } from './builder.js'
import { INVLN2, LN2_HI, LN2_LO, P } from './exp.js'
import {
  allTrue,
  iadd64,
  ishl64,
  lane,
  pair,
  vabs,
  vadd,
  vand,
  vdiv,
  veq,
  vf,
  vge,
  vhorner,
  vi64,
  vlt,
  vmul,
  vne,
  vor,
  vselect,
  vsub,
  vtrunc,
} from './vector.js'

/** |x| at and above which the scalar routine reduces x (its high word above 0x3fd62e42). */
const REDUCED = words(0x3fd62e43, 0)
/** |x| below which k is ±1 (the high word below 0x3ff0a2b2). */
const K_ONE = words(0x3ff0a2b2, 0)
/** |x| below which the scalar routine returns 1 + x (the high word below 0x3e300000). */
const TINY = words(0x3e300000, 0)
/** 1.5·2⁵²: an integer-valued double below 2⁵¹ added to it lands in the low bits of the sum. */
const ROUND_BITS = 6755399441055744
/** Below this |x|, k·ln 2 ≈ x leaves 2^k normal (|k| ≤ 1021) and nothing overflows. */
const LIMIT = 708

/** `__exp_f64x2`: (exp(x₀), exp(x₁)) of the f64x2 (x₀, x₁). */
export function buildExpF64x2(r: Routine): void {
  const x = r.param(0)
  const ax = r.let(vabs(x))
  // (x = ±0 takes the unreduced formula too, which gives exactly 1 there, as the scalar 1 + x:
  // the largest term of a log-sum-exp is exp(0))
  const common = vand(vand(vor(vge(ax, vf(TINY)), veq(x, vf(0))), vlt(ax, vf(LIMIT))), vne(x, vf(1)))
  r.if(eqz(allTrue(common)), () => r.ret(pair(r.call('exp', [lane(x, 0)]), r.call('exp', [lane(x, 1)]))))
  const neg = r.let(vlt(x, vf(0)))
  // k as a double: (INVLN2·x ± 0.5) truncated, ±1, or 0, as the scalar routine's branches choose
  // (f64x2.trunc: the scalar routine's i32 truncation and conversion back give the same integer,
  // |·| ≥ 2 where this k is selected, so no sign of zero to tell apart)
  const general = vtrunc(vadd(vmul(vf(INVLN2), x), vselect(neg, vf(-0.5), vf(0.5))))
  const reduced = r.let(vge(ax, vf(REDUCED)))
  const k = r.let(vselect(reduced, vselect(vlt(ax, vf(K_ONE)), vselect(neg, vf(-1), vf(1)), general), vf(0)))
  // where k = 0 these are x, 0 and x: the scalar routine's unreduced x
  const hiV = r.let(vsub(x, vmul(k, vf(LN2_HI))))
  const loV = r.let(vmul(k, vf(LN2_LO)))
  const xr = r.let(vsub(hiV, loV))
  const t = r.let(vmul(xr, xr))
  const c = r.let(vsub(xr, vmul(t, vhorner(t, P))))
  const xc = r.let(vmul(xr, c))
  // One division serves both of the scalar routine's formulas: c − 2 = −(2 − c) and a quotient's
  // sign is symmetric, so its xc/(c − 2) is exactly −q. Where k = 0 (hiV = xr, loV = 0) the
  // reduced formula below is then the unreduced one, 1 − (xc/(c − 2) − xr), to the bit (0 − q is
  // −q unless q = 0, which only x = ±0 gives, and 1 − ±0 is 1), and 2⁰ scales by 1: no select.
  const q = vdiv(xc, vsub(vf(2), c))
  const y = vsub(vf(1), vsub(vsub(loV, q), hiV))
  // 2^k from its bits, (k + 1023) << 52 in each 64-bit lane: k + 1.5·2⁵² holds 2⁵¹ + k in its
  // low 52 bits (k is an integer, |k| ≤ 1022), and the shift keeps (k + 1023) mod 2¹² of them
  const scale = ishl64(iadd64(vadd(k, vf(ROUND_BITS)), vi64(1023)), 52)
  r.ret(vmul(y, scale))
}
