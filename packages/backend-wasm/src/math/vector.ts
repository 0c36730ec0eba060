/**
 * The f64x2 (WebAssembly SIMD) operations of the math builder: lazy `Ex` values of type `v128`,
 * as `builder.ts` writes its scalar ones. Each lane of an f64x2 arithmetic operation rounds as
 * the scalar instruction does, so a routine that does lane by lane what a scalar routine does
 * gives the scalar routine's doubles in each lane. Comparisons give lane masks (all ones or all
 * zeros), for `bitselect`.
 */
import type { Bytes } from '../encoder.js'
import { type Ex, l } from './builder.js'
import { constantAddress } from './constants.js'

// the 0xfd-prefixed sub-opcodes of the SIMD instructions used here
const SIMD = {
  i64x2_splat: 0x12,
  f64x2_splat: 0x14,
  v128_load64_splat: 0x0a,
  f64x2_extract_lane: 0x21,
  f64x2_replace_lane: 0x22,
  f64x2_eq: 0x47,
  f64x2_ne: 0x48,
  f64x2_lt: 0x49,
  f64x2_gt: 0x4a,
  f64x2_le: 0x4b,
  f64x2_ge: 0x4c,
  v128_and: 0x4e,
  v128_andnot: 0x4f,
  v128_or: 0x50,
  v128_xor: 0x51,
  v128_bitselect: 0x52,
  v128_any_true: 0x53,
  i64x2_all_true: 0xc3,
  i64x2_extend_low_i32x4_s: 0xc7,
  i64x2_shl: 0xcb,
  i64x2_shr_u: 0xcd,
  i64x2_add: 0xce,
  i64x2_sub: 0xd1,
  i64x2_eq: 0xd6,
  i64x2_lt_s: 0xd8,
  i64x2_le_s: 0xda,
  i64x2_ge_s: 0xdb,
  f64x2_trunc: 0x7a,
  f64x2_abs: 0xec,
  f64x2_neg: 0xed,
  f64x2_add: 0xf0,
  f64x2_sub: 0xf1,
  f64x2_mul: 0xf2,
  f64x2_div: 0xf3,
  i32x4_trunc_sat_f64x2_s_zero: 0xfc,
  f64x2_convert_low_i32x4_s: 0xfe,
} as const

function simd(o: Bytes, op: number): void {
  o.byte(0xfd).u32(op)
}

function need(t: string, ...xs: Ex[]): void {
  for (const x of xs) if (x.t !== t) throw new Error(`math builder: expected ${t}, got ${x.t}`)
}

/** An operation of v128 operands (or of the given scalar operands) with a v128 result. */
function vop(op: number, args: Ex[], t: 'v128' | 'i32' = 'v128'): Ex {
  return {
    t,
    w: (o) => {
      for (const a of args) a.w(o)
      simd(o, op)
    },
  }
}

const binary =
  (op: number) =>
  (a: Ex, b: Ex): Ex => {
    need('v128', a, b)
    return vop(op, [a, b])
  }
const unary =
  (op: number) =>
  (a: Ex): Ex => {
    need('v128', a)
    return vop(op, [a])
  }

/** Lane-wise f64 arithmetic. */
export const vadd = binary(SIMD.f64x2_add),
  vsub = binary(SIMD.f64x2_sub),
  vmul = binary(SIMD.f64x2_mul),
  vdiv = binary(SIMD.f64x2_div)
/** Lane-wise x rounded toward zero (\`f64.trunc\`: one \`roundpd\` on x64). */
export const vtrunc = unary(SIMD.f64x2_trunc)
/** Lane-wise |x|, and −x (the sign bit flipped, as \`f64.neg\`). */
export const vabs = unary(SIMD.f64x2_abs),
  vneg = unary(SIMD.f64x2_neg)
/** Lane-wise f64 comparisons: masks. */
export const veq = binary(SIMD.f64x2_eq),
  vne = binary(SIMD.f64x2_ne),
  vlt = binary(SIMD.f64x2_lt),
  vgt = binary(SIMD.f64x2_gt),
  vle = binary(SIMD.f64x2_le),
  vge = binary(SIMD.f64x2_ge)
/** Bitwise and, or, xor of two masks (or of any two v128: \`iand64\` names the and of integer lanes). */
export const vand = binary(SIMD.v128_and),
  vor = binary(SIMD.v128_or),
  vxor = binary(SIMD.v128_xor),
  iand64 = vand
/** a & ~b. */
export const vandnot = binary(SIMD.v128_andnot)
/** 64-bit integer lanes: a + b, a − b, and comparisons (signed) giving masks. */
export const iadd64 = binary(SIMD.i64x2_add),
  isub64 = binary(SIMD.i64x2_sub),
  ieq64 = binary(SIMD.i64x2_eq),
  ilt64 = binary(SIMD.i64x2_lt_s),
  ile64 = binary(SIMD.i64x2_le_s),
  ige64 = binary(SIMD.i64x2_ge_s)
const shift =
  (op: number) =>
  (a: Ex, n: number): Ex => {
    need('v128', a)
    return {
      t: 'v128',
      w: (o) => {
        a.w(o)
        o.byte(0x41).s32(n)
        simd(o, op)
      },
    }
  }
/** 64-bit integer lanes shifted by n bits: left, right (unsigned). */
export const ishl64 = shift(SIMD.i64x2_shl),
  ishr64u = shift(SIMD.i64x2_shr_u)
/** `mask ? a : b`, lane by lane (bitwise). */
export function vselect(mask: Ex, a: Ex, b: Ex): Ex {
  need('v128', mask, a, b)
  return vop(SIMD.v128_bitselect, [a, b, mask])
}
/** Whether every 64-bit lane is nonzero (an i32 0/1): a mask true in both lanes. */
export const allTrue = (mask: Ex): Ex => {
  need('v128', mask)
  return vop(SIMD.i64x2_all_true, [mask], 'i32')
}
/** Whether some bit is set (an i32 0/1): a mask true in either lane. */
export const anyTrue = (mask: Ex): Ex => {
  need('v128', mask)
  return vop(SIMD.v128_any_true, [mask], 'i32')
}
/** The polynomial c0 + z·(c1 + z·(c2 + …)) lane by lane, in the order of \`horner\` (builder.ts). */
export function vhorner(z: Ex, cs: number[]): Ex {
  let e = vf(cs[cs.length - 1]!)
  for (let k = cs.length - 2; k >= 0; k--) e = vadd(vf(cs[k]!), vmul(z, e))
  return e
}
/** Both lanes truncated to i32 (in range: the callers keep them so) and widened back: the i32 lanes as i64x2. */
export const truncToI64 = (a: Ex): Ex => {
  need('v128', a)
  return vop(SIMD.i64x2_extend_low_i32x4_s, [vop(SIMD.i32x4_trunc_sat_f64x2_s_zero, [a])])
}
/** Both lanes truncated to i32 and converted back to f64 (exactly the scalar `f64(i32(x))`). */
export const truncToF64 = (a: Ex): Ex => {
  need('v128', a)
  return vop(SIMD.f64x2_convert_low_i32x4_s, [vop(SIMD.i32x4_trunc_sat_f64x2_s_zero, [a])])
}

/** An f64 in both lanes. */
export function splat(x: Ex): Ex {
  need('f64', x)
  return vop(SIMD.f64x2_splat, [x])
}
/** An f64 literal in both lanes. */
export const vf = (v: number): Ex => ({
  t: 'v128',
  w: (o) => {
    const at = constantAddress(v)
    if (at !== undefined) {
      // v128.load64_splat (align 8) at a constant address (the constants table, \`constants.ts\`)
      o.byte(0x41).s32(0)
      simd(o, SIMD.v128_load64_splat)
      o.u32(3).u32(at)
      return
    }
    o.byte(0x44).f64(v)
    simd(o, SIMD.f64x2_splat)
  },
})
/** An i64 literal in both lanes. */
export const vi64 = (v: number | bigint): Ex => {
  const x = l(BigInt(v))
  return {
    t: 'v128',
    w: (o) => {
      x.w(o)
      simd(o, SIMD.i64x2_splat)
    },
  }
}
/** Lane k (0 or 1) of an f64x2. */
export function lane(a: Ex, k: 0 | 1): Ex {
  need('v128', a)
  return {
    t: 'f64',
    w: (o) => {
      a.w(o)
      simd(o, SIMD.f64x2_extract_lane)
      o.byte(k)
    },
  }
}
/** The f64x2 (a, b). */
export function pair(a: Ex, b: Ex): Ex {
  need('f64', a, b)
  return {
    t: 'v128',
    w: (o) => {
      a.w(o)
      simd(o, SIMD.f64x2_splat)
      b.w(o)
      simd(o, SIMD.f64x2_replace_lane)
      o.byte(1)
    },
  }
}
