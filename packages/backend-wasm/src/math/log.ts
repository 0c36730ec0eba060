/**
 * log: x = 2^k·(1 + f) with √2/2 ≤ 1 + f < √2, log(1 + f) = 2s + s·R(s²) with s = f/(2 + f)
 * (R a minimax polynomial), plus k·ln 2 in a head and a tail. Algorithm and coefficients from
 * Sun's fdlibm.
 */
import {
  type Routine,
  add,
  and,
  div,
  eq,
  f,
  f64i,
  gt,
  hi,
  horner,
  lo,
  lt,
  mul,
  or,
  shr,
  sub,
  withHi,
  eqz,
  type Ex,
} from './builder.js'

export const LN2_HI = 6.9314718036912381649e-1,
  LN2_LO = 1.90821492927058770002e-10,
  TWO54 = 1.8014398509481984e16
export const LG = [
  6.66666666666673513e-1, 3.999999999940941908e-1, 2.857142874366239149e-1, 2.222219843214978396e-1,
  1.818357216161805012e-1, 1.531383769920937332e-1, 1.479819860511658591e-1,
]

/** `log`. */
export function buildLog(r: Routine): void {
  const x = r.var('f64', r.param(0))
  const hx = r.var('i32', hi(x))
  const k = r.var('i32', 0)
  r.if(lt(hx, 0x00100000), () => {
    // zero, negative, or subnormal (scaled up by 2⁵⁴)
    r.if(eq(or(and(hx, 0x7fffffff), lo(x)), 0), () => r.ret(f(-Infinity)))
    r.if(lt(hx, 0), () => r.ret(f(NaN)))
    r.set(k, -54)
    r.set(x, mul(x, f(TWO54)))
    r.set(hx, hi(x))
  })
  r.if(gt(hx, 0x7fefffff), () => r.ret(add(x, x)))
  r.set(k, add(k, sub(shr(hx, 20), 1023)))
  r.set(hx, and(hx, 0x000fffff))
  const ii = r.var('i32', and(add(hx, 0x95f64), 0x100000))
  // 1 + f in [√2/2, √2)
  r.set(x, withHi(x, or(hx, xor3ff(ii))))
  r.set(k, add(k, shr(ii, 20)))
  const fv = r.let(sub(x, f(1)))
  const dk = r.let(f64i(k))
  r.if(lt(and(0x000fffff, add(2, hx)), 3), () => {
    // |f| < 2⁻²⁰
    r.if(eq(fv, f(0)), () => {
      r.if(eqz(k), () => r.ret(f(0)))
      r.ret(add(mul(dk, f(LN2_HI)), mul(dk, f(LN2_LO))))
    })
    const R = r.let(mul(mul(fv, fv), sub(f(0.5), mul(f(0.33333333333333333), fv))))
    r.if(eqz(k), () => r.ret(sub(fv, R)))
    r.ret(sub(mul(dk, f(LN2_HI)), sub(sub(R, mul(dk, f(LN2_LO))), fv)))
  })
  const s = r.let(div(fv, add(f(2), fv)))
  const z = r.let(mul(s, s))
  const w = r.let(mul(z, z))
  const t1 = mul(w, horner(w, [LG[1]!, LG[3]!, LG[5]!]))
  const t2 = mul(z, horner(w, [LG[0]!, LG[2]!, LG[4]!, LG[6]!]))
  const R = r.let(add(t2, t1))
  const far = or(sub(hx, 0x6147a), sub(0x6b851, hx))
  r.if(gt(far, 0), () => {
    const hfsq = r.let(mul(mul(f(0.5), fv), fv))
    r.if(eqz(k), () => r.ret(sub(fv, sub(hfsq, mul(s, add(hfsq, R))))))
    r.ret(sub(mul(dk, f(LN2_HI)), sub(sub(hfsq, add(mul(s, add(hfsq, R)), mul(dk, f(LN2_LO)))), fv)))
  })
  r.if(eqz(k), () => r.ret(sub(fv, mul(s, sub(fv, R)))))
  r.ret(sub(mul(dk, f(LN2_HI)), sub(sub(mul(s, sub(fv, R)), mul(dk, f(LN2_LO))), fv)))
}
const xor3ff = (ii: Ex): Ex => sub(0x3ff00000, ii) // i ^ 0x3ff00000 for i in {0, 0x100000}
