/**
 * atan and atan2: |x| is mapped to a small t by one of four identities around the breakpoints
 * 7/16, 11/16, 19/16 and 39/16 (atan x = atan c + atan((x − c)/(1 + c·x)) with c = ½, 1, 3/2, ∞),
 * then atan t = t − t·(odd minimax polynomial). atan2 handles the signs, zeros and infinities of
 * both arguments and calls atan on |y/x|. Breakpoints, coefficients and special cases as in Sun's
 * fdlibm.
 */
import {
  type Routine,
  abs,
  add,
  and,
  div,
  eq,
  f,
  ge,
  gt,
  hi,
  horner,
  lo,
  lt,
  mul,
  ne,
  neg,
  or,
  shr,
  shru,
  sub,
  eqz,
  type Ex,
} from './builder.js'

const ATANHI = [4.63647609000806093515e-1, 7.85398163397448278999e-1, 9.82793723247329054082e-1, 1.570796326794896558]
const ATANLO = [
  2.26987774529616870924e-17, 3.06161699786838301793e-17, 1.39033110312309984516e-17, 6.12323399573676603587e-17,
]
const AT = [
  3.33333333333329318027e-1, -1.99999999998764832476e-1, 1.42857142725034663711e-1, -1.1111110405462355788e-1,
  9.09088713343650656196e-2, -7.69187620504482999495e-2, 6.66107313738753120669e-2, -5.83357013379057348645e-2,
  4.97687799461593236017e-2, -3.6531572744216915527e-2, 1.62858201153657823623e-2,
]

/** `atan`. */
export function buildAtan(r: Routine): void {
  const x0 = r.param(0)
  const x = r.var('f64', x0)
  const hx = r.let(hi(x)),
    ix = r.let(and(hx, 0x7fffffff))
  r.if(ge(ix, 0x44100000), () => {
    // |x| ≥ 2⁶⁶ or NaN
    r.if(or(gt(ix, 0x7ff00000), and(eq(ix, 0x7ff00000), ne(lo(x), 0))), () => r.ret(add(x, x)))
    r.if(gt(hx, 0), () => r.ret(f(ATANHI[3]! + ATANLO[3]!)))
    r.ret(f(-ATANHI[3]! - ATANLO[3]!))
  })
  // the odd polynomial of t (returns t·(s1 + s2))
  const tail = (t: Ex): Ex => {
    const z = r.let(mul(t, t)),
      w = r.let(mul(z, z))
    const s1 = mul(z, horner(w, [AT[0]!, AT[2]!, AT[4]!, AT[6]!, AT[8]!, AT[10]!]))
    const s2 = mul(w, horner(w, [AT[1]!, AT[3]!, AT[5]!, AT[7]!, AT[9]!]))
    return mul(t, add(s1, s2))
  }
  r.if(lt(ix, 0x3fdc0000), () => {
    // |x| < 7/16
    r.if(lt(ix, 0x3e400000), () => r.ret(x))
    r.ret(sub(x, tail(x)))
  })
  const ax = r.let(abs(x))
  const done = (id: number, t: Ex) => {
    const tt = r.let(t)
    const z = r.let(sub(f(ATANHI[id]!), sub(sub(tail(tt), f(ATANLO[id]!)), tt)))
    r.if(lt(hx, 0), () => r.ret(neg(z)))
    r.ret(z)
  }
  r.if(lt(ix, 0x3ff30000), () => {
    r.if(lt(ix, 0x3fe60000), () => done(0, div(sub(mul(f(2), ax), f(1)), add(f(2), ax))))
    done(1, div(sub(ax, f(1)), add(ax, f(1))))
  })
  r.if(lt(ix, 0x40038000), () => done(2, div(sub(ax, f(1.5)), add(f(1), mul(f(1.5), ax)))))
  done(3, div(f(-1), ax))
}

const PI_O_4 = 7.85398163397448279e-1,
  PI_O_2 = 1.570796326794896558,
  PI = 3.141592653589793116,
  PI_LO = 1.2246467991473531772e-16

/** `atan2(y, x)`. */
export function buildAtan2(r: Routine): void {
  const y = r.param(0),
    x = r.param(1)
  const hx = r.let(hi(x)),
    lx = r.let(lo(x)),
    ix = r.let(and(hx, 0x7fffffff))
  const hy = r.let(hi(y)),
    ly = r.let(lo(y)),
    iy = r.let(and(hy, 0x7fffffff))
  const nan = (h: Ex, lw: Ex) => gtu(or(h, shru(or(lw, sub(0, lw)), 31)), 0x7ff00000)
  r.if(or(nan(ix, lx), nan(iy, ly)), () => r.ret(add(x, y)))
  r.if(eq(or(sub(hx, 0x3ff00000), lx), 0), () => r.ret(r.call('atan', [y])))
  // 2·sign(x) + sign(y)
  const m = r.var('i32', or(and(shr(hy, 31), 1), and(shr(hx, 30), 2)))
  const bySign = (vals: [number, number, number, number]) => {
    r.if(eq(m, 0), () => r.ret(f(vals[0])))
    r.if(eq(m, 1), () => r.ret(f(vals[1])))
    r.if(eq(m, 2), () => r.ret(f(vals[2])))
    r.ret(f(vals[3]))
  }
  r.if(eqz(or(iy, ly)), () => {
    r.if(lt(m, 2), () => r.ret(y))
    bySign([0, 0, PI, -PI])
  })
  const halfPi = () => {
    r.if(lt(hy, 0), () => r.ret(f(-PI_O_2)))
    r.ret(f(PI_O_2))
  }
  r.if(eqz(or(ix, lx)), halfPi)
  r.if(eq(ix, 0x7ff00000), () => {
    r.if(eq(iy, 0x7ff00000), () => bySign([PI_O_4, -PI_O_4, 3 * PI_O_4, -3 * PI_O_4]))
    bySign([0, -0, PI, -PI])
  })
  r.if(eq(iy, 0x7ff00000), halfPi)
  const k = r.let(shr(sub(iy, ix), 20))
  const z = r.var('f64')
  r.if(
    gt(k, 60),
    () => {
      r.set(z, f(PI_O_2 + 0.5 * PI_LO))
      r.set(m, and(m, 1))
    },
    () => {
      r.if(
        and(lt(hx, 0), lt(k, -60)),
        () => r.set(z, f(0)),
        () => r.set(z, r.call('atan', [abs(div(y, x))])),
      )
    },
  )
  r.if(eq(m, 0), () => r.ret(z))
  r.if(eq(m, 1), () => r.ret(neg(z)))
  r.if(eq(m, 2), () => r.ret(sub(f(PI), sub(z, f(PI_LO)))))
  r.ret(sub(sub(z, f(PI_LO)), f(PI)))
}
const gtu = (a: Ex, b: number): Ex => ({
  t: 'i32',
  w: (o) => {
    a.w(o)
    o.byte(0x41).s32(b)
    o.byte(0x4b)
  },
})
