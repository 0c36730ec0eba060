import { describe, expect, it } from 'vitest'
import { createRegistry, standardPrimitives, type PurePrimitiveSpec } from '@tenet/ir'
import { finiteDifference, Random } from '@tenet/testing'
import { defineRule, Dual, DualError, grad, HANDLE_BASE, jacobian, valueAndGrad, vjp, type Real } from './index.js'

/** The standard primitives the engine has a method for, with a domain to sample. */
const METHODS: Array<[string, number, [number, number]]> = [
  ['sin', 1, [-3, 3]],
  ['cos', 1, [-3, 3]],
  ['tan', 1, [-1.2, 1.2]],
  ['exp', 1, [-2, 2]],
  ['log', 1, [0.1, 5]],
  ['sqrt', 1, [0.1, 5]],
  ['sinh', 1, [-2, 2]],
  ['cosh', 1, [-2, 2]],
  ['tanh', 1, [-2, 2]],
  ['asin', 1, [-0.9, 0.9]],
  ['acos', 1, [-0.9, 0.9]],
  ['atan', 1, [-3, 3]],
  ['abs', 1, [-3, 3]],
  ['atan2', 2, [-3, 3]],
  ['min', 2, [-3, 3]],
  ['max', 2, [-3, 3]],
  ['pow', 2, [0.2, 3]],
]

/** Runs method `name` on fresh inputs and returns the value and the recorded partials. */
function record(name: string, args: number[]): { value: number; partials: number[] } {
  const d = new Dual()
  const xs = args.map((a) => d.leaf(a))
  const y = (d as unknown as Record<string, (...a: Real[]) => Real>)[name]!.apply(d, xs)
  const i = y - HANDLE_BASE
  return { value: d.val[i]!, partials: args.length === 1 ? [d.p0[i]!] : [d.p0[i]!, d.p1[i]!] }
}

describe('elementary functions: the same values and partials as the registry’s primitives', () => {
  const spec = (name: string) => standardPrimitives.find((p) => p.name === name) as PurePrimitiveSpec
  it.each(METHODS)('%s', (name, arity, [lo, hi]) => {
    const rng = new Random(name.length * 31 + arity)
    for (let t = 0; t < 25; t++) {
      const args = Array.from({ length: arity }, () => lo + (hi - lo) * rng.next())
      const ours = record(name, args)
      expect(ours.value).toBe(spec(name).evaluate(...args))
      const theirs = spec(name).partials!(...args)
      ours.partials.forEach((p, k) => expect(p).toBeCloseTo(theirs[k]!, 12))
      // and against finite differences (independent of both)
      const fd = finiteDifference((x) => spec(name).evaluate(...x), args)
      ours.partials.forEach((p, k) => expect(Math.abs(p - fd[k]!)).toBeLessThan(1e-6 * Math.max(1, Math.abs(p))))
    }
  })

  it('arithmetic and the constant helpers', () => {
    const f = (d: Dual, x: Real, y: Real) =>
      d.add(
        d.sub(d.div(d.mul(x, y), d.offset(d.square(y), 1)), d.neg(d.scale(x, 3))),
        d.add(d.add(d.inv(d.offset(x, 4)), d.powConst(y, 3)), d.add(d.addScaled(x, y, -2), d.combine(0.5, x, 3, y))),
      )
    const plain = ([x, y]: number[]) =>
      (x! * y!) / (y! * y! + 1) + 3 * x! + 1 / (x! + 4) + y! ** 3 + (x! - 2 * y!) + (0.5 * x! + 3 * y!)
    const g = grad(f)(0.7, -1.3) as number[]
    const fd = finiteDifference(plain, [0.7, -1.3])
    g.forEach((v, k) => expect(v).toBeCloseTo(fd[k]!, 7))
  })

  it('n-ary nodes: sum, dot and linear spill their edges', () => {
    const rng = new Random(5)
    const a = Float64Array.from({ length: 2000 }, () => rng.next() - 0.5)
    const b = Float64Array.from({ length: 2000 }, () => rng.next() - 0.5)
    const c = Float64Array.from({ length: 2000 }, () => rng.next())
    const r = valueAndGrad((d, x: Real[], y: Real[]) => d.add(d.add(d.dot(x, y), d.sum(x)), d.linear(c, y)))(a, b)
    const [gx, gy] = r.grad as [Float64Array, Float64Array]
    let v = 0
    for (let i = 0; i < a.length; i++) {
      v += a[i]! * b[i]! + a[i]! + c[i]! * b[i]!
      expect(gx[i]).toBeCloseTo(b[i]! + 1, 12)
      expect(gy[i]).toBeCloseTo(a[i]! + c[i]!, 12)
    }
    expect(r.value).toBeCloseTo(v, 10)
    expect(() => grad((d, x: Real[]) => d.dot(x, x.slice(1)))([1, 2])).toThrow(/lengths 2 and 1/)
    // offsets: rows of a flat matrix without copies
    const m = grad((d, v: Real[]) => d.add(d.dot(v, v, 0, 2, 2), d.linear([5, 7], v, 0, 1, 2)))([
      1, 2, 3, 4,
    ]) as number[]
    expect(m).toEqual([3, 4 + 5, 1 + 7, 2])
  })
})

describe('registry primitives: a primitive registered once differentiates here by its partials', () => {
  const registry = createRegistry()
  registry.registerPrimitive({
    specificationVersion: 'v1',
    name: 'softplus',
    kind: 'pure',
    arity: 1,
    evaluate: (x) => Math.log1p(Math.exp(x)),
    partials: (x) => [1 / (1 + Math.exp(-x))],
  })
  registry.registerPrimitive({
    specificationVersion: 'v1',
    name: 'fma3',
    kind: 'pure',
    arity: 3,
    evaluate: (a, b, c) => a * b + c,
    partials: (a, b) => [b, a, 1],
  })
  it('user primitives of arity 1 and 3 (spilled), and a standard one by name', () => {
    const f = (d: Dual, x: Real[]) => d.apply('fma3', d.apply('softplus', x[0]!), d.apply('sin', x[1]!), x[2]!)
    const g = grad(f, { registry })([0.3, -0.8, 2]) as number[]
    const fd = finiteDifference(([a, b, c]) => Math.log1p(Math.exp(a!)) * Math.sin(b!) + c!, [0.3, -0.8, 2])
    g.forEach((v, k) => expect(v).toBeCloseTo(fd[k]!, 7))
  })
  it('clear errors: unknown primitive, wrong arity, no partials', () => {
    registry.registerPrimitive({
      specificationVersion: 'v1',
      name: 'opaque',
      kind: 'pure',
      arity: 1,
      evaluate: (x) => x,
    })
    expect(() => grad((d, x: Real) => d.apply('softplux', x), { registry })(1)).toThrow(/did you mean/)
    expect(() => grad((d, x: Real) => d.apply('fma3', x), { registry })(1)).toThrow(DualError)
    expect(() => grad((d, x: Real) => d.apply('opaque', x), { registry })(1)).toThrow(/no `partials`/)
  })
})

describe('custom rules (forward → outputs, pullback → input cotangents)', () => {
  const polar = defineRule({
    name: 'polar',
    inputs: 2,
    outputs: 2,
    forward: (x, y) => {
      y[0] = Math.hypot(x[0]!, x[1]!)
      y[1] = Math.atan2(x[1]!, x[0]!)
    },
    pullback: (x, y, ybar, xbar) => {
      const r = y[0]!,
        r2 = r * r
      xbar[0] += (ybar[0]! * x[0]!) / r - (ybar[1]! * x[1]!) / r2
      xbar[1] += (ybar[0]! * x[1]!) / r + (ybar[1]! * x[0]!) / r2
    },
  })
  const square = defineRule({
    name: 'square',
    inputs: 1,
    outputs: 1,
    forward: (x, y) => {
      const v = x[0]!
      y[0] = v * v
      return (ybar, xbar) => {
        xbar[0] += 2 * v * ybar[0]!
      }
    },
  })
  const plain = ([a, b]: number[]) => {
    const r = Math.hypot(a!, b!),
      t = Math.atan2(b!, a!)
    return r * r * Math.sin(t) + t
  }
  it('a two-output rule with a static pullback and a one-output rule whose forward returns its pullback', () => {
    const f = (d: Dual, x: Real[]) => {
      const [r, t] = d.call(polar, x)
      return d.add(d.mul(d.call(square, [r!])[0]!, d.sin(t!)), t!)
    }
    for (const p of [
      [0.6, 0.8],
      [-1.5, 0.2],
      [2, -3],
    ]) {
      const g = grad(f)(p) as number[]
      const fd = finiteDifference(plain, p)
      g.forEach((v, k) => expect(v).toBeCloseTo(fd[k]!, 6))
    }
  })
  it('only one output used: the other’s cotangent is zero; an unused rule call is never pulled back', () => {
    let pulls = 0
    const counted = defineRule({
      name: 'id',
      inputs: 1,
      outputs: 1,
      forward: (x, y) => {
        y[0] = x[0]!
      },
      pullback: (_x, _y, ybar, xbar) => {
        pulls++
        xbar[0] += ybar[0]!
      },
    })
    const g = grad((d, x: Real[]) => {
      d.call(counted, [x[0]!])
      return d.call(polar, x)[1]!
    })([1, 1]) as number[]
    expect(g[0]).toBeCloseTo(-0.5, 12)
    expect(g[1]).toBeCloseTo(0.5, 12)
    expect(pulls).toBe(0)
  })
  it('errors: wrong number of inputs, no pullback at all, bad counts', () => {
    expect(() => grad((d, x: Real) => d.call(polar, [x])[0]!)(1)).toThrow(/takes 2 inputs/)
    const none = defineRule({
      name: 'none',
      inputs: 1,
      outputs: 1,
      forward: (x, y) => {
        y[0] = x[0]!
      },
    })
    expect(() => grad((d, x: Real) => d.call(none, [x])[0]!)(1)).toThrow(/no pullback/)
    expect(() => defineRule({ name: 'bad', inputs: 1, outputs: 0, forward: () => {} })).toThrow(/outputs/)
  })
})

describe('nested inputs and outputs', () => {
  type P = { w: Real[][]; b: Real[]; meta: { scale: Real; name: string; on: boolean }; ints: Int32Array }
  const model = (d: Dual, p: P, x: Real[]) => {
    let s = d.constant(0)
    p.w.forEach((row, i) => {
      s = d.add(s, d.tanh(d.add(d.dot(row, x), p.b[i]!)))
    })
    if (p.meta.on && p.meta.name === 'mlp') s = d.mul(s, p.meta.scale)
    return d.scale(s, p.ints[0]!)
  }
  const params = () => ({
    w: [
      [0.1, -0.2],
      [0.3, 0.4],
      [-0.5, 0.6],
    ],
    b: Float64Array.of(0.01, 0.02, 0.03),
    meta: { scale: 1.5, name: 'mlp', on: true },
    ints: Int32Array.of(2),
  })
  const plain = (v: number[]) => {
    const x = [v[10]!, v[11]!]
    let s = 0
    for (let i = 0; i < 3; i++) s += Math.tanh(v[2 * i]! * x[0]! + v[2 * i + 1]! * x[1]! + v[6 + i]!)
    return s * v[9]! * 2
  }
  const flatOf = (p: ReturnType<typeof params>, x: number[]) => [...p.w.flat(), ...p.b, p.meta.scale, ...x]
  it('records, arrays, Float64Arrays and static leaves (strings, booleans, Int32Array) in; the same tree out', () => {
    const p = params(),
      x = [0.7, -0.3]
    const [gp, gx] = grad(model)(p, x) as [any, number[]]
    expect(gp.meta.name).toBe('mlp')
    expect(gp.meta.on).toBe(true)
    expect(gp.ints).toBe(p.ints)
    expect(gp.b).toBeInstanceOf(Float64Array)
    const ours = [...(gp.w as number[][]).flat(), ...gp.b, gp.meta.scale, ...gx]
    const fd = finiteDifference(plain, flatOf(p, x))
    ours.forEach((v, k) => expect(v).toBeCloseTo(fd[k]!, 7))
  })
  it('a static leaf that changes between calls reaches the function (the cached handle tree is refreshed)', () => {
    const g = grad(model)
    const p = params()
    const a = (g(p, [1, 1]) as any)[0].meta.scale
    p.meta.on = false
    const b = (g(p, [1, 1]) as any)[0].meta.scale
    expect(a).not.toBe(0)
    expect(b).toBe(0)
  })
  it('a new shape is described again', () => {
    const g = grad((d, x: Real[]) => d.sum(x.map((v) => d.square(v))))
    expect(g([1, 2])).toEqual([2, 4])
    expect(g([1, 2, 3])).toEqual([2, 4, 6])
    expect(g(Float64Array.of(3))).toEqual(Float64Array.of(6))
  })
  it('into: writes into an existing tree and returns the value', () => {
    const g = grad((d, p: { a: Real; v: Real[] }) => d.mul(p.a, d.sum(p.v)))
    const out = { a: 0, v: new Float64Array(3) }
    g.into(out, { a: 2, v: Float64Array.of(1, 2, 3) })
    expect(g.value).toBe(12)
    expect(out).toEqual({ a: 6, v: Float64Array.of(2, 2, 2) })
  })
  it('vjp and jacobian with a record of outputs; the pullback stays valid after other calls', () => {
    const f = (d: Dual, x: Real[]) => ({ p: d.mul(x[0]!, x[1]!), q: [d.sin(x[0]!), d.exp(x[1]!)] })
    const r = vjp(f)([0.5, -1])
    expect(r.value).toEqual({ p: -0.5, q: [Math.sin(0.5), Math.exp(-1)] })
    grad((d, x: Real) => d.square(x))(3) // reuses the pool's arena, not the pullback's
    expect(r.pullback({ p: 1, q: [0, 0] })).toEqual([-1, 0.5])
    const both = r.pullback({ p: 0, q: Float64Array.of(1, 1) }) as number[]
    expect(both[0]).toBeCloseTo(Math.cos(0.5), 14)
    expect(both[1]).toBeCloseTo(Math.exp(-1), 14)
    const j = jacobian(f)([0.5, -1])
    const fd = finiteDifference(([a, b]) => [a! * b!, Math.sin(a!), Math.exp(b!)], [0.5, -1])
    const rows = [j.jacobian.p, ...j.jacobian.q] as number[][]
    rows.forEach((row, i) => row.forEach((v, k) => expect(v).toBeCloseTo(fd[i]![k]!, 7)))
    expect(() => r.pullback({ p: 1 } as never)).toThrow(/cotangent/)
  })
  it('a dual-engine function may call grad of another inside (nested calls get their own arena)', () => {
    const inner = grad((d, x: Real) => d.mul(x, d.sin(x)))
    const outer = grad((d, x: Real) => d.scale(d.square(x), inner(d.value(x)) as number))
    const x = 0.9
    expect(outer(x)).toBeCloseTo(2 * x * (Math.sin(x) + x * Math.cos(x)), 14)
  })
  it('arenas grow past their first size (nodes and spilled edges)', () => {
    const n = 300_000
    const x = Float64Array.from({ length: n }, (_, i) => Math.sin(i))
    const g = grad((d, v: Real[]) => {
      let s = d.constant(0)
      for (let i = 0; i < v.length; i++) s = d.add(s, d.square(v[i]!))
      return d.add(s, d.sum(v))
    })(x) as Float64Array
    for (let i = 0; i < n; i += 9973) expect(g[i]).toBeCloseTo(2 * x[i]! + 1, 12)
  })
})

describe('errors', () => {
  it('a result that is not a handle of this call', () => {
    expect(() => grad((_d, _x: Real) => 0 as Real)(1)).toThrow(/not a handle/)
    expect(() => grad((_d, x: Real) => (x + 5) as Real)(1)).toThrow(DualError)
    expect(() => grad((d, x: Real) => [x, d.square(x)] as unknown as Real)(1)).toThrow(/vjp or jacobian/)
  })
  it('inputs that are not numbers, arrays or records, with their path', () => {
    expect(() => grad((d, p: any) => d.square(p.a))({ a: new Date() } as never)).toThrow(/arguments\[0\]\.a/)
    expect(() => grad((d, p: any) => d.square(p))(Float32Array.of(1) as never)).toThrow(/Float64Array/)
    const caught = (() => {
      try {
        grad((d, p: any) => d.square(p))(new Map() as never)
      } catch (e) {
        return e
      }
    })()
    expect(DualError.isInstance(caught)).toBe(true)
    expect((caught as DualError).code).toBe('dual/input')
  })
})

describe('the README example', () => {
  it('runs and agrees with finite differences', () => {
    const loss = (d: Dual, p: { w: Real[]; b: Real }, x: Real[]) => {
      let s = d.constant(0)
      for (let i = 0; i < x.length; i++) s = d.add(s, d.tanh(d.add(d.mul(p.w[i]!, x[i]!), p.b)))
      return d.value(s) > 0 ? d.square(s) : d.neg(s)
    }
    const [gp, gx] = grad(loss)({ w: Float64Array.of(0.1, 0.2), b: 0.3 }, [1, -1]) as [
      { w: Float64Array; b: number },
      number[],
    ]
    const plain = ([w0, w1, b, x0, x1]: number[]) => {
      const s = Math.tanh(w0! * x0! + b!) + Math.tanh(w1! * x1! + b!)
      return s > 0 ? s * s : -s
    }
    const fd = finiteDifference(plain, [0.1, 0.2, 0.3, 1, -1])
    ;[...gp.w, gp.b, ...gx].forEach((v, k) => expect(v).toBeCloseTo(fd[k]!, 7))
  })
})
