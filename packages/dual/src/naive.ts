/**
 * The naive dual-numbers reverse AD of seed 003 §3, kept as a test oracle: every scalar is paired
 * with a backpropagator, a closure that maps the scalar's cotangent to the cotangent of the whole
 * input (here a dense vector), calling the backpropagators of the scalars it was computed from and
 * adding their results. It is obviously correct (each rule is the chain rule for one operation) and
 * hopelessly slow: a scalar used k times has its backpropagator called k times, and so on
 * recursively, so `y = x + x` repeated n times calls 2ⁿ⁺¹ − 1 backpropagators. Not exported from
 * the package.
 */

/** A naive dual number: a value and its backpropagator. */
export interface NaiveReal {
  v: number
  bp: (g: number) => Float64Array
}

/** The naive engine: the same operations as `Dual`, on closures. Counts backpropagator calls. */
export class Naive {
  /** Backpropagator invocations since construction (an operation count). */
  calls = 0
  /** Vector additions performed by backpropagators (each costs n). */
  additions = 0

  constructor(readonly n: number) {}

  private zero(): Float64Array {
    return new Float64Array(this.n)
  }
  private plus(a: Float64Array, b: Float64Array): Float64Array {
    this.additions++
    const out = new Float64Array(this.n)
    for (let i = 0; i < this.n; i++) out[i] = a[i]! + b[i]!
    return out
  }

  /** The k-th input: its backpropagator is the one-hot injection. */
  input(k: number, v: number): NaiveReal {
    return {
      v,
      bp: (g) => {
        this.calls++
        const c = this.zero()
        c[k] = g
        return c
      },
    }
  }
  private lift1(v: number, x: NaiveReal, dx: number): NaiveReal {
    return {
      v,
      bp: (g) => {
        this.calls++
        return x.bp(g * dx)
      },
    }
  }
  private lift2(v: number, x: NaiveReal, dx: number, y: NaiveReal, dy: number): NaiveReal {
    return {
      v,
      bp: (g) => {
        this.calls++
        return this.plus(x.bp(g * dx), y.bp(g * dy))
      },
    }
  }

  value(x: NaiveReal): number {
    return x.v
  }
  constant(c: number): NaiveReal {
    return {
      v: c,
      bp: () => {
        this.calls++
        return this.zero()
      },
    }
  }
  add(x: NaiveReal, y: NaiveReal): NaiveReal {
    return this.lift2(x.v + y.v, x, 1, y, 1)
  }
  sub(x: NaiveReal, y: NaiveReal): NaiveReal {
    return this.lift2(x.v - y.v, x, 1, y, -1)
  }
  mul(x: NaiveReal, y: NaiveReal): NaiveReal {
    return this.lift2(x.v * y.v, x, y.v, y, x.v)
  }
  div(x: NaiveReal, y: NaiveReal): NaiveReal {
    return this.lift2(x.v / y.v, x, 1 / y.v, y, -x.v / (y.v * y.v))
  }
  neg(x: NaiveReal): NaiveReal {
    return this.lift1(-x.v, x, -1)
  }
  scale(x: NaiveReal, c: number): NaiveReal {
    return this.lift1(c * x.v, x, c)
  }
  offset(x: NaiveReal, c: number): NaiveReal {
    return this.lift1(x.v + c, x, 1)
  }
  square(x: NaiveReal): NaiveReal {
    return this.lift1(x.v * x.v, x, 2 * x.v)
  }
  sin(x: NaiveReal): NaiveReal {
    return this.lift1(Math.sin(x.v), x, Math.cos(x.v))
  }
  cos(x: NaiveReal): NaiveReal {
    return this.lift1(Math.cos(x.v), x, -Math.sin(x.v))
  }
  exp(x: NaiveReal): NaiveReal {
    return this.lift1(Math.exp(x.v), x, Math.exp(x.v))
  }
  log(x: NaiveReal): NaiveReal {
    return this.lift1(Math.log(x.v), x, 1 / x.v)
  }
  sqrt(x: NaiveReal): NaiveReal {
    return this.lift1(Math.sqrt(x.v), x, 0.5 / Math.sqrt(x.v))
  }
  tanh(x: NaiveReal): NaiveReal {
    return this.lift1(Math.tanh(x.v), x, 1 - Math.tanh(x.v) ** 2)
  }

  /** The gradient of `f` at `x`: one call of the result's backpropagator with cotangent 1. */
  static grad(
    f: (d: Naive, x: NaiveReal[]) => NaiveReal,
    x: ArrayLike<number>,
  ): { value: number; grad: Float64Array; calls: number; additions: number } {
    const d = new Naive(x.length)
    const xs = Array.from(x, (v, k) => d.input(k, v))
    const y = f(d, xs)
    d.calls = 0
    d.additions = 0
    const grad = y.bp(1)
    return { value: y.v, grad, calls: d.calls, additions: d.additions }
  }
}
