/**
 * exp and expm1: x = k·ln 2 + r with |r| ≤ ln2/2 (ln 2 in a 32-bit head and a tail, so k·head is
 * exact), a rational approximation of e^r on that interval, and k added to the exponent. The
 * approximations and thresholds are those of Sun's fdlibm (its published coefficients).
 */
import {
  type Routine,
  add,
  and,
  div,
  eq,
  f,
  f64i,
  ge,
  gt,
  hi,
  horner,
  i32f,
  lo,
  lt,
  mul,
  ne,
  or,
  pow2,
  shr,
  shru,
  sub,
  trunc,
  fromHi,
  type Var,
} from './builder.js'

export const LN2_HI = 6.9314718036912381649e-1,
  LN2_LO = 1.90821492927058770002e-10,
  INVLN2 = 1.442695040888963387
export const P = [
  1.66666666666666019037e-1, -2.77777777770155933842e-3, 6.61375632143793436117e-5, -1.6533902205465251539e-6,
  4.13813679705723846039e-8,
]
const O_THRESHOLD = 7.09782712893383973096e2,
  U_THRESHOLD = -7.4513321910194110842e2
const TWO1023 = 8.98846567431157953865e307,
  TWOM1000 = 9.3326361850321887899e-302

/** y·2^k for k ≤ 1024 (k = 1024 as y·2·2¹⁰²³; below −1021 in two steps, one rounding). */
function scale(r: Routine, y: Var, k: Var): void {
  r.if(eq(k, 1024), () => r.ret(mul(mul(y, f(2)), f(TWO1023))))
  r.if(ge(k, -1021), () => r.ret(mul(y, pow2(k))))
  r.ret(mul(mul(y, pow2(add(k, 1000))), f(TWOM1000)))
}

/**
 * Reduces x (|x| > ln2/2) to x' = hi − lo ≈ x − k·ln 2; sets k, hiV, loV and x.
 */
function reduce(r: Routine, x: Var, ax: Var, neg: Var, k: Var, hiV: Var, loV: Var): void {
  r.if(
    lt(ax, 0x3ff0a2b2),
    () => {
      // |x| < 1.5·ln 2: k = ±1
      r.if(
        neg,
        () => {
          r.set(hiV, add(x, f(LN2_HI)))
          r.set(loV, f(-LN2_LO))
          r.set(k, -1)
        },
        () => {
          r.set(hiV, sub(x, f(LN2_HI)))
          r.set(loV, f(LN2_LO))
          r.set(k, 1)
        },
      )
    },
    () => {
      // k = (INVLN2·x ± 0.5) truncated: as a double by f64.trunc (the value i32 truncation and
      // conversion back give, |·| ≥ 2 here), so the reduction does not wait for the conversions
      const t = r.let(trunc(add(mul(f(INVLN2), x), cond05(neg))))
      r.set(k, i32f(t))
      r.set(hiV, sub(x, mul(t, f(LN2_HI))))
      r.set(loV, mul(t, f(LN2_LO)))
    },
  )
  r.set(x, sub(hiV, loV))
}
const cond05 = (neg: Var) => sub(f(0.5), f64i(neg)) // 0.5 or −0.5

/** `exp`. */
export function buildExp(r: Routine): void {
  const x = r.var('f64', r.param(0))
  const h = r.let(hi(x))
  const neg = r.let(shru(h, 31)),
    ax = r.let(and(h, 0x7fffffff))
  r.if(ge(ax, 0x40862e42), () => {
    r.if(ge(ax, 0x7ff00000), () => {
      r.if(ne(or(and(ax, 0xfffff), lo(x)), 0), () => r.ret(add(x, x)))
      r.if(neg, () => r.ret(f(0)))
      r.ret(x)
    })
    r.if(gt(x, f(O_THRESHOLD)), () => r.ret(f(Infinity)))
    r.if(lt(x, f(U_THRESHOLD)), () => r.ret(f(0)))
  })
  // e¹ is Math.E (as V8 returns it; the polynomial gives the double above)
  r.if(eq(x, f(1)), () => r.ret(f(Math.E)))
  const k = r.var('i32', 0),
    hiV = r.var('f64', f(0)),
    loV = r.var('f64', f(0))
  r.if(
    gt(ax, 0x3fd62e42),
    () => reduce(r, x, ax, neg, k, hiV, loV),
    () => {
      r.if(lt(ax, 0x3e300000), () => r.ret(add(f(1), x)))
    },
  )
  const t = r.let(mul(x, x))
  const c = r.let(sub(x, mul(t, horner(t, P))))
  r.if(eq(k, 0), () => r.ret(sub(f(1), sub(div(mul(x, c), sub(c, f(2))), x))))
  const y = r.let(sub(f(1), sub(sub(loV, div(mul(x, c), sub(f(2), c))), hiV)))
  scale(r, y, k)
}

const Q = [
  -3.33333333333331316428e-2, 1.58730158725481460165e-3, -7.93650757867487942473e-5, 4.00821782732936239552e-6,
  -2.01099218183624371326e-7,
]

/** `expm1`: e^x − 1, accurate near 0 (sinh, cosh and tanh are built on it). */
export function buildExpm1(r: Routine): void {
  const x = r.var('f64', r.param(0))
  const h = r.let(hi(x))
  const neg = r.let(shru(h, 31)),
    ax = r.let(and(h, 0x7fffffff))
  r.if(ge(ax, 0x4043687a), () => {
    r.if(ge(ax, 0x40862e42), () => {
      r.if(ge(ax, 0x7ff00000), () => {
        r.if(ne(or(and(ax, 0xfffff), lo(x)), 0), () => r.ret(add(x, x)))
        r.if(neg, () => r.ret(f(-1)))
        r.ret(x)
      })
      r.if(gt(x, f(O_THRESHOLD)), () => r.ret(f(Infinity)))
    })
    // x < −56·ln 2: −1
    r.if(neg, () => r.ret(f(-1)))
  })
  const k = r.var('i32', 0),
    hiV = r.var('f64', f(0)),
    loV = r.var('f64', f(0)),
    c = r.var('f64', f(0))
  r.if(
    gt(ax, 0x3fd62e42),
    () => {
      reduce(r, x, ax, neg, k, hiV, loV)
      r.set(c, sub(sub(hiV, x), loV))
    },
    () => {
      r.if(lt(ax, 0x3c900000), () => r.ret(x))
    },
  )
  const hfx = r.let(mul(f(0.5), x))
  const hxs = r.let(mul(x, hfx))
  const r1 = r.let(add(f(1), mul(hxs, horner(hxs, Q))))
  const t = r.let(sub(f(3), mul(r1, hfx)))
  const e = r.let(mul(hxs, div(sub(r1, t), sub(f(6), mul(x, t)))))
  r.if(eq(k, 0), () => r.ret(sub(x, sub(mul(x, e), hxs))))
  r.set(e, sub(sub(mul(x, sub(e, c)), c), hxs))
  r.if(eq(k, -1), () => r.ret(sub(mul(f(0.5), sub(x, e)), f(0.5))))
  r.if(eq(k, 1), () => {
    r.if(lt(x, f(-0.25)), () => r.ret(mul(f(-2), sub(e, add(x, f(0.5))))))
    r.ret(add(f(1), mul(f(2), sub(x, e))))
  })
  r.if(or(le2(k), gt(k, 56)), () => {
    const y = r.let(sub(f(1), sub(e, x)))
    r.if(eq(k, 1024), () => r.ret(sub(mul(mul(y, f(2)), f(TWO1023)), f(1))))
    r.ret(sub(mul(y, pow2(k)), f(1)))
  })
  r.if(lt(k, 20), () => {
    // 1 − 2^−k
    const one = fromHi(sub(0x3ff00000, shr(0x200000, k)))
    r.ret(mul(sub(one, sub(e, x)), pow2(k)))
  })
  const twomk = fromHi(shlK(k))
  r.ret(mul(add(sub(x, add(e, twomk)), f(1)), pow2(k)))
}
const le2 = (k: Var) => lt(k, -1)
/** (0x3ff − k) << 20: the high word of 2^−k. */
const shlK = (k: Var) => mul(sub(0x3ff, k), 0x100000)
