/**
 * log of the two lanes of an f64x2, for lane pairs (`lanes.ts`) that apply log in both lanes:
 * lane by lane the arithmetic of the scalar `log` (log.ts), so each lane is the scalar routine's
 * double bit for bit. The common arguments, positive normal finite x whose 1 + f is not within
 * 2⁻²⁰ of 1 (where the scalar routine takes a branch of its own), take the integer steps of the
 * scalar routine in 64-bit lanes (the high word is bits ≫ 32 for a positive x), compute every
 * final formula (near or far from √2/2…√2's ends, k = 0 or not) and select per lane. Whenever
 * a lane is outside that range (zero, negative, subnormal, infinite, NaN, or near a power of
 * two) both lanes call the scalar routine.
 */
import { type Ex, type Routine, eqz } from './builder.js'
import { LG, LN2_HI, LN2_LO } from './log.js'
import {
  allTrue,
  iadd64,
  ieq64,
  ige64,
  ile64,
  ilt64,
  ishl64,
  ishr64u,
  isub64,
  lane,
  pair,
  vadd,
  vand,
  vandnot,
  vdiv,
  vf,
  vge,
  vi64,
  vle,
  vmul,
  vor,
  vselect,
  vsub,
} from './vector.js'

/** The polynomial of `horner` (builder.ts), lane-wise, in the same order. */
function vhorner(z: Ex, cs: number[]): Ex {
  let e = vf(cs[cs.length - 1]!)
  for (let k = cs.length - 2; k >= 0; k--) e = vadd(vf(cs[k]!), vmul(z, e))
  return e
}

/** 1.5·2⁵², whose bits plus a small integer k are the bits of 1.5·2⁵² + k. */
const MAGIC = 0x4338000000000000n

/** `__log_f64x2`: (log(x₀), log(x₁)) of the f64x2 (x₀, x₁). */
export function buildLogF64x2(r: Routine): void {
  const x = r.param(0)
  const normal = vand(vge(x, vf(2.2250738585072014e-308)), vle(x, vf(Number.MAX_VALUE)))
  // the high word without its exponent, and the scalar routine's i (0 or 0x100000)
  const hx = r.let(vand(ishr64u(x, 32), vi64(0xfffff)))
  const ii = r.let(vand(iadd64(hx, vi64(0x95f64)), vi64(0x100000)))
  // |f| < 2⁻²⁰: the scalar routine's own branch
  const nearOne = ilt64(vand(iadd64(hx, vi64(2)), vi64(0xfffff)), vi64(3))
  r.if(eqz(allTrue(vandnot(normal, nearOne))), () =>
    r.ret(pair(r.call('log', [lane(x, 0)]), r.call('log', [lane(x, 1)]))),
  )
  // k = exponent − 1023 + (i ≫ 20), as a double (exact through 1.5·2⁵²)
  const k = r.let(iadd64(isub64(ishr64u(x, 52), vi64(1023)), ishr64u(ii, 20)))
  const dk = r.let(vsub(iadd64(k, vi64(MAGIC)), vf(1.5 * 2 ** 52)))
  // 1 + f in [√2/2, √2): the high word hx | (0x3ff00000 − i), the low word kept
  const high = vor(hx, isub64(vi64(0x3ff00000), ii))
  const m = vor(ishl64(high, 32), vand(x, vi64(0xffffffff)))
  const fv = r.let(vsub(m, vf(1)))
  const s = r.let(vdiv(fv, vadd(vf(2), fv)))
  const z = r.let(vmul(s, s))
  const w = r.let(vmul(z, z))
  const t1 = vmul(w, vhorner(w, [LG[1]!, LG[3]!, LG[5]!]))
  const t2 = vmul(z, vhorner(w, [LG[0]!, LG[2]!, LG[4]!, LG[6]!]))
  const R = r.let(vadd(t2, t1))
  const hfsq = r.let(vmul(vmul(vf(0.5), fv), fv))
  const sR = r.let(vmul(s, vadd(hfsq, R)))
  const sF = r.let(vmul(s, vsub(fv, R)))
  const hi = r.let(vmul(dk, vf(LN2_HI)))
  const lo = r.let(vmul(dk, vf(LN2_LO)))
  const far = r.let(vand(ige64(hx, vi64(0x6147a)), ile64(hx, vi64(0x6b851))))
  const k0 = r.let(ieq64(k, vi64(0)))
  const farK0 = vsub(fv, vsub(hfsq, sR))
  const farK = vsub(hi, vsub(vsub(hfsq, vadd(sR, lo)), fv))
  const nearK0 = vsub(fv, sF)
  const nearK = vsub(hi, vsub(vsub(sF, lo), fv))
  r.ret(vselect(far, vselect(k0, farK0, farK), vselect(k0, nearK0, nearK)))
}
