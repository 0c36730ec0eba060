/**
 * The tracing engine of staged gradients: a `Dual` that also records, for every node it creates,
 * which operation made it (an opcode and its constants), and every sign or comparison the function
 * asked for (a guard). The recorded arena then describes the whole computation for one input shape
 * and one set of branch decisions, which `compile.ts` turns into straight-line or looped JS. Anything
 * the record could not replay — a `value` read, a registry primitive, a custom rule — marks the trace
 * unstageable (the call itself still runs and differentiates as usual).
 */
import { Dual } from './dual.js'
import type { DualRule, Real } from './tape.js'

/** Operation codes of traced nodes. */
export const Op = {
  Const: 1,
  Neg: 2,
  Scale: 3,
  Offset: 4,
  Add: 5,
  Sub: 6,
  Mul: 7,
  Div: 8,
  AddScaled: 9,
  Combine: 10,
  Square: 11,
  Inv: 12,
  PowConst: 13,
  Pow: 14,
  Sin: 15,
  Cos: 16,
  Tan: 17,
  Exp: 18,
  Log: 19,
  Sqrt: 20,
  Sinh: 21,
  Cosh: 22,
  Tanh: 23,
  Asin: 24,
  Acos: 25,
  Atan: 26,
  Abs: 27,
  Atan2: 28,
  Min: 29,
  Max: 30,
  Sum: 31,
  Dot: 32,
  Linear: 33,
} as const
/** An operation code. */
export type Op = (typeof Op)[keyof typeof Op]

/** A recorded guard: before node `at` was created, `sign(a)` (b < 0) or `compare(a, b)` returned `expected`. */
export interface Guard {
  at: number
  a: number
  b: number
  expected: number
}

/** A `Dual` that records opcodes, constants and guards (see the module comment). */
export class Tracer extends Dual {
  /** Per node: its opcode (0: not recorded, e.g. an input). */
  ops = new Uint8Array(this.val.length)
  /** Per node: its first and second constants (scale factor, offset, exponent, constant value…). */
  k0 = new Float64Array(this.val.length)
  k1 = new Float64Array(this.val.length)
  guards: Guard[] = []
  /** Why this trace cannot be staged (undefined: it can). */
  unstageable: string | undefined

  override reset(): void {
    this.ops.fill(0, 0, this.top)
    super.reset()
    this.guards.length = 0
    this.unstageable = undefined
  }

  override grow(): void {
    super.grow()
    const n = this.val.length
    const ops = new Uint8Array(n)
    ops.set(this.ops)
    this.ops = ops
    const k0 = new Float64Array(n)
    k0.set(this.k0)
    this.k0 = k0
    const k1 = new Float64Array(n)
    k1.set(this.k1)
    this.k1 = k1
  }

  private rec(r: Real, op: Op, c0 = 0, c1 = 0): Real {
    const i = this.top - 1
    this.ops[i] = op
    this.k0[i] = c0
    this.k1[i] = c1
    return r
  }

  private refuse(why: string): void {
    this.unstageable ??= why
  }

  override value(x: Real): number {
    this.refuse('it reads a value with `d.value` (use `d.sign` or `d.compare` for branches)')
    return super.value(x)
  }
  override sign(x: Real): number {
    const s = super.sign(x)
    if (Number.isNaN(s)) this.refuse('a guard compared NaN')
    this.guards.push({ at: this.top, a: x - (1 << 29), b: -1, expected: s })
    return s
  }
  override compare(x: Real, y: Real): number {
    const s = super.compare(x, y)
    if (Number.isNaN(s)) this.refuse('a guard compared NaN')
    this.guards.push({ at: this.top, a: x - (1 << 29), b: y - (1 << 29), expected: s })
    return s
  }
  override constant(c: number): Real {
    return this.rec(super.constant(c), Op.Const, c)
  }
  override add(x: Real, y: Real): Real {
    return this.rec(super.add(x, y), Op.Add)
  }
  override sub(x: Real, y: Real): Real {
    return this.rec(super.sub(x, y), Op.Sub)
  }
  override mul(x: Real, y: Real): Real {
    return this.rec(super.mul(x, y), Op.Mul)
  }
  override div(x: Real, y: Real): Real {
    return this.rec(super.div(x, y), Op.Div)
  }
  override neg(x: Real): Real {
    return this.rec(super.neg(x), Op.Neg)
  }
  override scale(x: Real, c: number): Real {
    return this.rec(super.scale(x, c), Op.Scale, c)
  }
  override offset(x: Real, c: number): Real {
    return this.rec(super.offset(x, c), Op.Offset, c)
  }
  override addScaled(x: Real, y: Real, c: number): Real {
    return this.rec(super.addScaled(x, y, c), Op.AddScaled, c)
  }
  override combine(a: number, x: Real, b: number, y: Real): Real {
    return this.rec(super.combine(a, x, b, y), Op.Combine, a, b)
  }
  override square(x: Real): Real {
    return this.rec(super.square(x), Op.Square)
  }
  override inv(x: Real): Real {
    return this.rec(super.inv(x), Op.Inv)
  }
  override powConst(x: Real, p: number): Real {
    return this.rec(super.powConst(x, p), Op.PowConst, p)
  }
  override pow(x: Real, p: Real): Real {
    return this.rec(super.pow(x, p), Op.Pow)
  }
  override sin(x: Real): Real {
    return this.rec(super.sin(x), Op.Sin)
  }
  override cos(x: Real): Real {
    return this.rec(super.cos(x), Op.Cos)
  }
  override tan(x: Real): Real {
    return this.rec(super.tan(x), Op.Tan)
  }
  override exp(x: Real): Real {
    return this.rec(super.exp(x), Op.Exp)
  }
  override log(x: Real): Real {
    return this.rec(super.log(x), Op.Log)
  }
  override sqrt(x: Real): Real {
    return this.rec(super.sqrt(x), Op.Sqrt)
  }
  override sinh(x: Real): Real {
    return this.rec(super.sinh(x), Op.Sinh)
  }
  override cosh(x: Real): Real {
    return this.rec(super.cosh(x), Op.Cosh)
  }
  override tanh(x: Real): Real {
    return this.rec(super.tanh(x), Op.Tanh)
  }
  override asin(x: Real): Real {
    return this.rec(super.asin(x), Op.Asin)
  }
  override acos(x: Real): Real {
    return this.rec(super.acos(x), Op.Acos)
  }
  override atan(x: Real): Real {
    return this.rec(super.atan(x), Op.Atan)
  }
  override abs(x: Real): Real {
    return this.rec(super.abs(x), Op.Abs)
  }
  override atan2(y: Real, x: Real): Real {
    return this.rec(super.atan2(y, x), Op.Atan2)
  }
  override min(x: Real, y: Real): Real {
    return this.rec(super.min(x, y), Op.Min)
  }
  override max(x: Real, y: Real): Real {
    return this.rec(super.max(x, y), Op.Max)
  }
  override sum(xs: ArrayLike<Real>): Real {
    return this.rec(super.sum(xs), Op.Sum)
  }
  override dot(xs: ArrayLike<Real>, ys: ArrayLike<Real>, xStart?: number, yStart?: number, n?: number): Real {
    return this.rec(super.dot(xs, ys, xStart, yStart, n), Op.Dot)
  }
  override linear(cs: ArrayLike<number>, xs: ArrayLike<Real>, cStart?: number, xStart?: number, n?: number): Real {
    return this.rec(super.linear(cs, xs, cStart, xStart, n), Op.Linear)
  }
  override apply(name: string, ...args: Real[]): Real {
    this.refuse(`it applies the registry primitive \`${name}\``)
    return super.apply(name, ...args)
  }
  override call(rule: DualRule, xs: ArrayLike<Real>, ys?: Real[]): Real[] {
    this.refuse(`it calls the custom rule \`${rule.name}\``)
    return super.call(rule, xs, ys)
  }
}
