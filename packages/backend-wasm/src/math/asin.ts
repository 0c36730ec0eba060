/**
 * asin and acos: a rational minimax approximation R(x²) of (asin x − x)/x³ on |x| < ½, and
 * beyond it the half-angle identities with s = √((1 − |x|)/2) (asin x = π/2 − 2·asin s,
 * acos x = 2·asin s or π − 2·asin s), with s split so that 1 − 2s² is exact. Coefficients and
 * branches as in Sun's fdlibm.
 */
import {
  type Routine,
  add,
  and,
  div,
  eq,
  f,
  ge,
  gt,
  hi,
  horner,
  le,
  lo,
  lt,
  mul,
  neg,
  or,
  sqrt,
  sub,
  abs,
  clearLo,
  type Ex,
} from './builder.js'

const PIO2_HI = 1.570796326794896558,
  PIO2_LO = 6.12323399573676603587e-17,
  PIO4_HI = 7.85398163397448278999e-1
const PI = 3.141592653589793116
const PS = [
  1.66666666666666657415e-1, -3.25565818622400915405e-1, 2.01212532134862925881e-1, -4.00555345006794114027e-2,
  7.91534994289814532176e-4, 3.4793310759602116757e-5,
]
const QS = [1, -2.40339491173441421878, 2.02094576023350569471, -6.8828397160545329303e-1, 7.70381505559019352791e-2]

/** R(t) = p(t)/q(t) as (p, q). */
const pq = (t: Ex): [Ex, Ex] => [mul(t, horner(t, PS)), horner(t, QS)]

/** `asin`. */
export function buildAsin(r: Routine): void {
  const x = r.param(0)
  const hx = r.let(hi(x)),
    ix = r.let(and(hx, 0x7fffffff))
  r.if(ge(ix, 0x3ff00000), () => {
    r.if(eq(or(sub(ix, 0x3ff00000), lo(x)), 0), () => r.ret(add(mul(x, f(PIO2_HI)), mul(x, f(PIO2_LO)))))
    r.ret(f(NaN))
  })
  r.if(lt(ix, 0x3fe00000), () => {
    r.if(lt(ix, 0x3e400000), () => r.ret(x))
    const t = r.let(mul(x, x))
    const [p, q] = pq(t)
    r.ret(add(x, mul(x, div(p, q))))
  })
  const w = r.let(sub(f(1), abs(x)))
  const t = r.let(mul(w, f(0.5)))
  const [p0, q0] = pq(t)
  const p = r.let(p0),
    q = r.let(q0)
  const s = r.let(sqrt(t))
  const res = r.var('f64')
  r.if(
    ge(ix, 0x3fef3333),
    () => {
      // |x| > 0.975
      r.set(res, sub(f(PIO2_HI), sub(mul(f(2), add(s, mul(s, div(p, q)))), f(PIO2_LO))))
    },
    () => {
      const wh = r.let(clearLo(s))
      const c = r.let(div(sub(t, mul(wh, wh)), add(s, wh)))
      const pp = r.let(sub(mul(mul(f(2), s), div(p, q)), sub(f(PIO2_LO), mul(f(2), c))))
      const qq = r.let(sub(f(PIO4_HI), mul(f(2), wh)))
      r.set(res, sub(f(PIO4_HI), sub(pp, qq)))
    },
  )
  r.if(gt(hx, 0), () => r.ret(res))
  r.ret(neg(res))
}

/** `acos`. */
export function buildAcos(r: Routine): void {
  const x = r.param(0)
  const hx = r.let(hi(x)),
    ix = r.let(and(hx, 0x7fffffff))
  r.if(ge(ix, 0x3ff00000), () => {
    r.if(eq(or(sub(ix, 0x3ff00000), lo(x)), 0), () => {
      r.if(gt(hx, 0), () => r.ret(f(0)))
      r.ret(f(PI + 2.0 * PIO2_LO))
    })
    r.ret(f(NaN))
  })
  r.if(lt(ix, 0x3fe00000), () => {
    r.if(le(ix, 0x3c600000), () => r.ret(f(PIO2_HI + PIO2_LO)))
    const z = r.let(mul(x, x))
    const [p, q] = pq(z)
    const rr = r.let(div(p, q))
    r.ret(sub(f(PIO2_HI), sub(x, sub(f(PIO2_LO), mul(x, rr)))))
  })
  r.if(lt(hx, 0), () => {
    const z = r.let(mul(add(f(1), x), f(0.5)))
    const [p, q] = pq(z)
    const pv = r.let(p),
      qv = r.let(q)
    const s = r.let(sqrt(z))
    const w = r.let(sub(mul(div(pv, qv), s), f(PIO2_LO)))
    r.ret(sub(f(PI), mul(f(2), add(s, w))))
  })
  const z = r.let(mul(sub(f(1), x), f(0.5)))
  const s = r.let(sqrt(z))
  const df = r.let(clearLo(s))
  const c = r.let(div(sub(z, mul(df, df)), add(s, df)))
  const [p, q] = pq(z)
  const pv = r.let(p),
    qv = r.let(q)
  const w = r.let(add(mul(div(pv, qv), s), c))
  r.ret(mul(f(2), add(df, w)))
}
