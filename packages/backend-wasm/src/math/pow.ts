/**
 * pow(x, y) = 2^(y·log2 x): log2 |x| in extra precision (x = 2^n·(1 + f) around 1 or 1.5, a
 * minimax series in s = f/(2 + f) carried as a head and a tail), multiplied by y split in two,
 * then 2^z by a reduced exponential. Special values (zeros, infinities, NaN, negative bases with
 * integer exponents) follow ECMAScript's Math.pow, which are fdlibm's. Algorithm, constants and
 * special cases from Sun's fdlibm.
 */
import {
  type Routine,
  abs,
  add,
  and,
  div,
  eq,
  f,
  f64i,
  fromHi,
  ge,
  gt,
  hi,
  horner,
  le,
  lo,
  lt,
  mul,
  ne,
  neg,
  or,
  shl,
  shr,
  shru,
  sqrt,
  sub,
  withHi,
  clearLo,
  eqz,
  pow2,
  select,
  xor,
  type Ex,
  type Var,
} from './builder.js'

const BP = [1.0, 1.5],
  DP_H = [0.0, 5.84962487220764160156e-1],
  DP_L = [0.0, 1.35003920212974897128e-8]
const TWO53 = 9007199254740992.0
const L = [
  5.99999999999994648725e-1, 4.28571428578550184252e-1, 3.33333329818377432918e-1, 2.72728123808534006489e-1,
  2.30660745775561754067e-1, 2.06975017800338417784e-1,
]
const P = [
  1.66666666666666019037e-1, -2.77777777770155933842e-3, 6.61375632143793436117e-5, -1.6533902205465251539e-6,
  4.13813679705723846039e-8,
]
const LG2 = 6.93147180559945286227e-1,
  LG2_H = 6.93147182464599609375e-1,
  LG2_L = -1.90465429995776804525e-9
const OVT = 8.0085662595372944372e-17
const CP = 9.61796693925975554329e-1,
  CP_H = 9.61796700954437255859e-1,
  CP_L = -7.02846165095275826516e-9
const IVLN2 = 1.442695040888963387,
  IVLN2_H = 1.44269502162933349609,
  IVLN2_L = 1.92596299112661746887e-8

/** `pow(x, y)`. */
export function buildPow(r: Routine): void {
  const x = r.param(0),
    y = r.param(1)
  const hx = r.let(hi(x)),
    lx = r.let(lo(x)),
    hy = r.let(hi(y)),
    ly = r.let(lo(y))
  const ix = r.var('i32', and(hx, 0x7fffffff)),
    iy = r.let(and(hy, 0x7fffffff))
  r.if(eqz(or(iy, ly)), () => r.ret(f(1)))
  const nan = (h: Var, lw: Var) => or(gt(h, 0x7ff00000), and(eq(h, 0x7ff00000), ne(lw, 0)))
  r.if(or(nan(ix, lx), nan(iy, ly)), () => r.ret(add(x, y)))
  // yisint: 0 (y not an integer), 1 (odd), 2 (even), for a negative x
  const yisint = r.var('i32', 0)
  r.if(lt(hx, 0), () => {
    r.if(
      ge(iy, 0x43400000),
      () => r.set(yisint, 2),
      () => {
        r.if(ge(iy, 0x3ff00000), () => {
          const k = r.let(sub(shr(iy, 20), 0x3ff))
          r.if(
            gt(k, 20),
            () => {
              const j = r.let(shru(ly, sub(52, k)))
              r.if(eq(shl(j, sub(52, k)), ly), () => r.set(yisint, sub(2, and(j, 1))))
            },
            () => {
              r.if(eqz(ly), () => {
                const j = r.let(shr(iy, sub(20, k)))
                r.if(eq(shl(j, sub(20, k)), iy), () => r.set(yisint, sub(2, and(j, 1))))
              })
            },
          )
        })
      },
    )
  })
  r.if(eqz(ly), () => {
    r.if(eq(iy, 0x7ff00000), () => {
      // y = ±∞
      r.if(eqz(or(sub(ix, 0x3ff00000), lx)), () => r.ret(f(NaN)))
      r.if(ge(ix, 0x3ff00000), () => r.ret(cond0(ge(hy, 0), y)))
      r.ret(cond0(lt(hy, 0), neg(y)))
    })
    r.if(eq(iy, 0x3ff00000), () => {
      r.if(lt(hy, 0), () => r.ret(div(f(1), x)))
      r.ret(x)
    })
    r.if(eq(hy, 0x40000000), () => r.ret(mul(x, x)))
    r.if(and(eq(hy, 0x3fe00000), ge(hx, 0)), () => r.ret(sqrt(x)))
  })
  const ax = r.var('f64', abs(x))
  r.if(and(eqz(lx), or(or(eq(ix, 0x7ff00000), eqz(ix)), eq(ix, 0x3ff00000))), () => {
    // x = ±0, ±∞, ±1
    const z = r.var('f64', ax)
    r.if(lt(hy, 0), () => r.set(z, div(f(1), z)))
    r.if(lt(hx, 0), () => {
      r.if(
        eqz(or(sub(ix, 0x3ff00000), yisint)),
        () => r.set(z, f(NaN)),
        () => {
          r.if(eq(yisint, 1), () => r.set(z, neg(z)))
        },
      )
    })
    r.ret(z)
  })
  const negX = r.let(lt(hx, 0))
  r.if(and(negX, eqz(yisint)), () => r.ret(f(NaN)))
  const s = r.let(cond1(and(negX, eq(yisint, 1))))
  const t1 = r.var('f64'),
    t2 = r.var('f64')
  const huge = () => r.ret(mul(s, f(Infinity)))
  const tiny = () => r.ret(mul(s, f(0)))
  r.if(
    gt(iy, 0x41e00000),
    () => {
      // |y| > 2³¹
      r.if(gt(iy, 0x43f00000), () => {
        r.if(le(ix, 0x3fefffff), () => r.ret(cond0(lt(hy, 0), f(Infinity))))
        r.if(ge(ix, 0x3ff00000), () => r.ret(cond0(gt(hy, 0), f(Infinity))))
      })
      r.if(lt(ix, 0x3fefffff), () => r.if(lt(hy, 0), huge, tiny))
      r.if(gt(ix, 0x3ff00000), () => r.if(gt(hy, 0), huge, tiny))
      // |1 − x| < 2⁻²⁰: log2 x by its series in t = x − 1
      const t = r.let(sub(ax, f(1)))
      const w = r.let(mul(mul(t, t), sub(f(0.5), mul(t, sub(f(0.3333333333333333333333), mul(t, f(0.25)))))))
      const u = r.let(mul(f(IVLN2_H), t))
      const v = r.let(sub(mul(t, f(IVLN2_L)), mul(w, f(IVLN2))))
      r.set(t1, clearLo(add(u, v)))
      r.set(t2, sub(v, sub(t1, u)))
    },
    () => {
      const n = r.var('i32', 0)
      r.if(lt(ix, 0x00100000), () => {
        r.set(ax, mul(ax, f(TWO53)))
        r.set(n, -53)
        r.set(ix, hi(ax))
      })
      r.set(n, add(n, sub(shr(ix, 20), 0x3ff)))
      const j = r.let(and(ix, 0x000fffff))
      r.set(ix, or(j, 0x3ff00000))
      const k = r.var('i32', 0)
      r.if(gt(j, 0x3988e), () => {
        r.if(
          lt(j, 0xbb67a),
          () => r.set(k, 1),
          () => {
            r.set(n, add(n, 1))
            r.set(ix, sub(ix, 0x00100000))
          },
        )
      })
      r.set(ax, withHi(ax, ix))
      const sel = (vals: number[]) => cond2(k, vals)
      const bp = r.let(sel(BP))
      const u = r.let(sub(ax, bp))
      const v = r.let(div(f(1), add(ax, bp)))
      const ss = r.let(mul(u, v))
      const sh = r.let(clearLo(ss))
      const th = r.var('f64', fromHi(add(add(or(shr(ix, 1), 0x20000000), 0x00080000), shl(k, 18))))
      const tl = r.var('f64', sub(ax, sub(th, bp)))
      const sl = r.let(mul(v, sub(sub(u, mul(sh, th)), mul(sh, tl))))
      const s2 = r.var('f64', mul(ss, ss))
      const rr = r.var('f64', mul(mul(s2, s2), horner(s2, L)))
      r.set(rr, add(rr, mul(sl, add(sh, ss))))
      r.set(s2, mul(sh, sh))
      r.set(th, clearLo(add(add(f(3), s2), rr)))
      r.set(tl, sub(rr, sub(sub(th, f(3)), s2)))
      const uu = r.let(mul(sh, th))
      const vv = r.let(add(mul(sl, th), mul(tl, ss)))
      const ph = r.let(clearLo(add(uu, vv)))
      const pl = r.let(sub(vv, sub(ph, uu)))
      const zh = r.let(mul(f(CP_H), ph))
      const zl = r.let(add(add(mul(f(CP_L), ph), mul(pl, f(CP))), sel(DP_L)))
      const dph = r.let(sel(DP_H))
      const t = r.let(f64i(n))
      r.set(t1, clearLo(add(add(add(zh, zl), dph), t)))
      r.set(t2, sub(zl, sub(sub(sub(t1, t), dph), zh)))
    },
  )
  // y·log2 x = p_h + p_l
  const y1 = r.let(clearLo(y))
  const pl = r.let(add(mul(sub(y, y1), t1), mul(y, t2)))
  const ph = r.var('f64', mul(y1, t1))
  const z = r.var('f64', add(pl, ph))
  const j = r.var('i32', hi(z)),
    i = r.var('i32', lo(z))
  r.if(
    ge(j, 0x40900000),
    () => {
      // z ≥ 1024
      r.if(ne(or(sub(j, 0x40900000), i), 0), huge)
      r.if(gt(add(pl, f(OVT)), sub(z, ph)), huge)
    },
    () => {
      r.if(ge(and(j, 0x7fffffff), 0x4090cc00), () => {
        // z ≤ −1075
        r.if(ne(or(sub(j, 0xc090cc00 | 0), i), 0), tiny)
        r.if(le(pl, sub(z, ph)), tiny)
      })
    },
  )
  // 2^z: z = n + (p_h + p_l) with |p_h + p_l| ≤ ½
  r.set(i, and(j, 0x7fffffff))
  const k = r.var('i32', sub(shr(i, 20), 0x3ff))
  const n = r.var('i32', 0)
  r.if(gt(i, 0x3fe00000), () => {
    r.set(n, add(j, shr(0x00100000, add(k, 1))))
    r.set(k, sub(shr(and(n, 0x7fffffff), 20), 0x3ff))
    const t = r.let(fromHi(and(n, xorAll(shr(0x000fffff, k)))))
    r.set(n, shr(or(and(n, 0x000fffff), 0x00100000), sub(20, k)))
    r.if(lt(j, 0), () => r.set(n, sub(0, n)))
    r.set(ph, sub(ph, t))
  })
  const t = r.let(clearLo(add(pl, ph)))
  const u = r.let(mul(t, f(LG2_H)))
  const v = r.let(add(mul(sub(pl, sub(t, ph)), f(LG2)), mul(t, f(LG2_L))))
  r.set(z, add(u, v))
  const w = r.let(sub(v, sub(z, u)))
  const tt = r.let(mul(z, z))
  const tt1 = r.let(sub(z, mul(tt, horner(tt, P))))
  const rr = r.let(sub(div(mul(z, tt1), sub(tt1, f(2))), add(w, mul(z, w))))
  r.set(z, sub(f(1), sub(rr, z)))
  r.set(j, add(hi(z), shl(n, 20)))
  r.if(le(shr(j, 20), 0), () => {
    // a subnormal result: scaled in two steps, one rounding
    r.ret(mul(s, mul(mul(z, pow2(add(n, 54))), f(2 ** -54))))
  })
  r.ret(mul(s, withHi(z, j)))
}

/** `c ? v : 0`. */
const cond0 = (c: Ex, v: Ex): Ex => select(c, v, f(0))
/** `c ? −1 : 1`. */
const cond1 = (c: Ex): Ex => select(c, f(-1), f(1))
/** `vals[k]` for k ∈ {0, 1}. */
const cond2 = (k: Var, vals: number[]): Ex => select(k, f(vals[1]!), f(vals[0]!))
/** ~a (an i32). */
const xorAll = (a: Ex): Ex => xor(a, -1)
