/**
 * sinh, cosh and tanh from expm1 and exp: near 0 through e^|x| − 1 (no cancellation), then
 * ½·e^|x|, and past ln(DBL_MAX) as (½·e^{|x|/2})·e^{|x|/2} so that the result overflows only
 * where it must. Thresholds as in V8's and fdlibm's versions.
 */
import { type Routine, abs, add, and, div, f, ge, hi, lt, le, mul, neg, select, sub } from './builder.js'

const OVERFLOW = 710.4758600739439,
  LOG_MAXD = 709.7822265625

/** `sinh`. */
export function buildSinh(r: Routine): void {
  const x = r.param(0)
  const ix = r.let(and(hi(x), 0x7fffffff))
  r.if(ge(ix, 0x7ff00000), () => r.ret(add(x, x)))
  const h = r.let(select(lt(x, f(0)), f(-0.5), f(0.5)))
  const ax = r.let(abs(x))
  r.if(lt(ax, f(22)), () => {
    r.if(lt(ax, f(3.725290298461914e-9)), () => r.ret(x))
    const t = r.let(r.call('expm1', [ax]))
    r.if(lt(ax, f(1)), () => r.ret(mul(h, sub(mul(f(2), t), div(mul(t, t), add(t, f(1)))))))
    r.ret(mul(h, add(t, div(t, add(t, f(1))))))
  })
  r.if(lt(ax, f(LOG_MAXD)), () => r.ret(mul(h, r.call('exp', [ax]))))
  r.if(le(ax, f(OVERFLOW)), () => {
    const w = r.let(r.call('exp', [mul(f(0.5), ax)]))
    r.ret(mul(mul(h, w), w))
  })
  r.ret(mul(x, f(1e307)))
}

/** `cosh`. */
export function buildCosh(r: Routine): void {
  const x = r.param(0)
  const ix = r.let(and(hi(x), 0x7fffffff))
  r.if(lt(ix, 0x3fd62e43), () => {
    const t = r.let(r.call('expm1', [abs(x)]))
    const w = r.let(add(f(1), t))
    r.if(lt(ix, 0x3c800000), () => r.ret(w))
    r.ret(add(f(1), div(mul(t, t), add(w, w))))
  })
  r.if(lt(ix, 0x40360000), () => {
    const t = r.let(r.call('exp', [abs(x)]))
    r.ret(add(mul(f(0.5), t), div(f(0.5), t)))
  })
  r.if(lt(ix, 0x40862e42), () => r.ret(mul(f(0.5), r.call('exp', [abs(x)]))))
  r.if(le(abs(x), f(OVERFLOW)), () => {
    const w = r.let(r.call('exp', [mul(f(0.5), abs(x))]))
    r.ret(mul(mul(f(0.5), w), w))
  })
  r.if(ge(ix, 0x7ff00000), () => r.ret(mul(x, x)))
  r.ret(f(Infinity))
}

/** `tanh`. */
export function buildTanh(r: Routine): void {
  const x = r.param(0)
  const jx = r.let(hi(x)),
    ix = r.let(and(jx, 0x7fffffff))
  r.if(ge(ix, 0x7ff00000), () => {
    r.if(ge(jx, 0), () => r.ret(add(div(f(1), x), f(1))))
    r.ret(sub(div(f(1), x), f(1)))
  })
  const z = r.var('f64')
  r.if(
    lt(ix, 0x40360000),
    () => {
      r.if(lt(ix, 0x3e300000), () => r.ret(x))
      r.if(
        ge(ix, 0x3ff00000),
        () => {
          const t = r.let(r.call('expm1', [mul(f(2), abs(x))]))
          r.set(z, sub(f(1), div(f(2), add(t, f(2)))))
        },
        () => {
          const t = r.let(r.call('expm1', [mul(f(-2), abs(x))]))
          r.set(z, div(neg(t), add(t, f(2))))
        },
      )
    },
    () => r.set(z, f(1)),
  )
  r.if(ge(jx, 0), () => r.ret(z))
  r.ret(neg(z))
}
