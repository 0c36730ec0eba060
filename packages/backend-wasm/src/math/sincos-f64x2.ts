/**
 * sin and cos of the two lanes of an f64x2 at once, for map lanes (`map-lanes.ts`) whose
 * iterations take the sine or cosine of a varying value: lane by lane the arithmetic of the scalar
 * `__sincos` (trig.ts), so each lane is the scalar routine's double bit for bit.
 *
 * The scalar routine branches on |x|: below π/4 its kernels take x itself (the sine's polynomial
 * without a tail), below 3π/4 it reduces by ±π/2, and up to 2¹⁹·π/2 by n·π/2 in 33-bit pieces of
 * π/2, with more pieces where the reduction cancels many bits. Here both lanes compute the
 * unreduced kernels' inputs and the reduction by n·π/2 with the first two pieces (for |x| < 3π/4,
 * n = 1 gives the doubles of the ±π/2 branch: the same subtractions, negated for x < 0, and
 * rounding is symmetric), select per lane, and run the kernels and the quadrant's signs lane by
 * lane. Where either lane is beyond 2¹⁹·π/2 (or infinite, or NaN), or needs the extra pieces (the
 * scalar routine's cancellation test, or x within a high word of π/2), both lanes call the scalar
 * routine.
 */
import { type Ex, type Routine, eqz, words } from './builder.js'
import { C, INVPIO2, PIO2_1, PIO2_1T, PIO2_HI, S } from './trig.js'
import {
  allTrue,
  anyTrue,
  iand64,
  ieq64,
  ilt64,
  ishr64u,
  isub64,
  lane,
  pair,
  truncToF64,
  truncToI64,
  vabs,
  vadd,
  vand,
  vandnot,
  vf,
  vge,
  vhorner,
  vi64,
  vlt,
  vmul,
  vneg,
  vor,
  vselect,
  vsub,
  vxor,
} from './vector.js'

/** |x| below which the scalar routine does not reduce (its high word at most 0x3fe921fb). */
const UNREDUCED = words(0x3fe921fc, 0)
/** |x| below which n is ±1 (the high word below 0x4002d97c). */
const N_ONE = words(0x4002d97c, 0)
/** |x| below which the reduction subtracts pieces of π/2 (the high word at most 0x413921fb). */
const MEDIUM = words(0x413921fc, 0)
/** |r| below which sin r is r and cos r is 1 (the high word below 0x3e400000). */
const TINY = words(0x3e400000, 0)
/** |r| below which cos r is 1 − (z/2 − tail) (the high word below 0x3fd33333). */
const NEAR = words(0x3fd33333, 0)
/** |r| from which cos r subtracts 0.28125 first (the high word above 0x3fe90000). */
const QX_FIXED = words(0x3fe90001, 0)

/** `__sincos_f64x2`: (sin x₀, sin x₁), (cos x₀, cos x₁) of the f64x2 (x₀, x₁). */
export function buildSincosF64x2(r: Routine): void {
  const x = r.param(0)
  const ax = r.let(vabs(x))
  const scalar = () => {
    const s0 = r.var('f64'),
      c0 = r.var('f64'),
      s1 = r.var('f64'),
      c1 = r.var('f64')
    r.callInto('__sincos', [lane(x, 0)], [s0, c0])
    r.callInto('__sincos', [lane(x, 1)], [s1, c1])
    r.ret(pair(s0, s1), pair(c0, c1))
  }
  r.if(eqz(allTrue(vlt(ax, vf(MEDIUM)))), scalar)
  const small = r.let(vlt(ax, vf(UNREDUCED)))
  // both lanes below π/4 (the common case of many programs' angles): the kernels of x itself
  r.if(allTrue(small), () => {
    const k = kernels(r, x, ax, vf(0), true)
    r.ret(k.s, k.c)
  })
  const one = r.let(vlt(ax, vf(N_ONE)))
  // n as a double (the scalar routine's i32 n, converted), then |x| − n·π/2 in two pieces
  const fn = r.let(vselect(one, vf(1), truncToF64(vadd(vmul(ax, vf(INVPIO2)), vf(0.5)))))
  const rr = r.let(vsub(ax, vmul(fn, vf(PIO2_1))))
  const w = r.let(vmul(fn, vf(PIO2_1T)))
  const y0 = r.let(vsub(rr, w))
  // the lanes for which the scalar routine subtracts more pieces: n ≥ 32 or |x|'s high word that
  // of n·π/2, and then near π/2 (n = ±1) or more than 16 bits of the exponent lost (medium)
  const check = vor(vge(fn, vf(32)), ieq64(ishr64u(ax, 32), ishr64u(vmul(fn, vf(PIO2_HI)), 32)))
  const lost = ilt64(vi64(16), isub64(ishr64u(ax, 52), iand64(ishr64u(y0, 52), vi64(0x7ff))))
  r.if(anyTrue(vandnot(vand(check, vor(one, lost)), small)), scalar)
  const y1 = r.let(vsub(vsub(rr, y0), w))
  // x < 0: −n, −y0, −y1; below π/4 the kernels take x and 0, and n is 0
  const negative = r.let(vlt(x, vf(0)))
  const xr = r.let(vselect(small, x, vselect(negative, vneg(y0), y0)))
  const yr = r.let(vselect(small, vf(0), vselect(negative, vneg(y1), y1)))
  const ni = truncToI64(fn)
  const n = r.let(vselect(small, vi64(0), vselect(negative, isub64(vi64(0), ni), ni)))
  const k = kernels(r, xr, r.let(vabs(xr)), yr, small)
  const s = k.s,
    c = k.c
  // the quadrant n mod 4: odd swaps sine and cosine; the sine is negated for 2 and 3, the cosine
  // for 1 and 2 (a flip of the sign bit, as the scalar routine's negation)
  const odd = r.let(ieq64(iand64(n, vi64(1)), vi64(1)))
  const sign = vi64(-0x8000000000000000n)
  const flipSin = iand64(ieq64(iand64(n, vi64(2)), vi64(2)), sign)
  const flipCos = iand64(ieq64(iand64(isub64(n, vi64(-1)), vi64(2)), vi64(2)), sign)
  r.ret(vxor(vselect(odd, c, s), flipSin), vxor(vselect(odd, s, c), flipCos))
}

/**
 * The kernels of trig.ts lane by lane: sin(x + y) (kSin: its polynomial without the tail where
 * \`plain\` is true in a lane, a mask or \`true\` for both) and cos(x + y) (kCos), for |x + y| ≤ π/4;
 * \`ax\` is |x|.
 */
function kernels(r: Routine, xr: Ex, ar: Ex, yr: Ex, plain: Ex | true): { s: Ex; c: Ex } {
  const z = r.let(vmul(xr, xr))
  const v = r.let(vmul(z, xr))
  const p = r.let(vhorner(z, S.slice(1)))
  const untailed = vadd(xr, vmul(v, vadd(vf(S[0]!), vmul(z, p))))
  const sinPoly =
    plain === true
      ? untailed
      : vselect(
          plain,
          untailed,
          vsub(xr, vsub(vsub(vmul(z, vsub(vmul(vf(0.5), yr), vmul(v, p))), yr), vmul(v, vf(S[0]!)))),
        )
  const tiny = r.let(vlt(ar, vf(TINY)))
  const s = r.let(vselect(tiny, xr, sinPoly))
  const pc = r.let(vmul(z, vhorner(z, C)))
  const tail = r.let(vsub(vmul(z, pc), vmul(xr, yr)))
  // qx = the double with |r|'s high word less 0x00200000, or 0.28125 from 0x3fe90001 on
  const qx = r.let(
    vselect(vge(ar, vf(QX_FIXED)), vf(0.28125), isub64(iand64(ar, vi64(-0x100000000n)), vi64(0x200000n << 32n))),
  )
  const half = r.let(vmul(vf(0.5), z))
  const near = vsub(vf(1), vsub(half, tail))
  const far = vsub(vsub(vf(1), qx), vsub(vsub(half, qx), tail))
  const c = r.let(vselect(tiny, vf(1), vselect(vlt(ar, vf(NEAR)), near, far)))
  return { s, c }
}
