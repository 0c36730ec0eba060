/**
 * Scalar operations (`op1`/`op2` of the paper, §3.2): their semantics, their JS lowering, their
 * cost class (Fig. 11: ADDS, MULTS or NLOPS) and their partial derivatives as target terms, so
 * that the target language is closed under partial differentiation. Operations not built in are
 * looked up in a Tenet registry: a pure primitive's `partialExprs` (translated to terms) or its
 * numeric `partials` supply the derivatives.
 */
import type { Expr, PurePrimitiveSpec, Registry } from '@tenet/ir'
import { UnfError } from './errors.js'
import type { Term } from './term.js'
import { B, R, type Type } from './types.js'

/** How an operation counts in the cost model of Fig. 11. */
export type CostClass = 'add' | 'mult' | 'nlop' | 'compare'

/** One scalar operation. */
export interface ScalarOp {
  name: string
  arity: number
  result: Type
  /** reference semantics */
  evaluate: (...args: number[]) => number | boolean
  /** a JS expression over JS argument expressions; absent: generated code calls `evaluate` */
  js?: (...args: string[]) => string
  cost: CostClass
  /**
   * ∂op/∂argᵢ as terms over the argument terms (variables) and the result (a variable bound to
   * the operation's value); absent for non-smooth operations (comparisons), whose arguments
   * receive no gradient.
   */
  partials?: (args: Term[], result: Term) => Term[]
}

const t = {
  c: (value: number): Term => ({ k: 'const', value }),
  op: (op: string, ...args: Term[]): Term => ({ k: 'op', op, args }),
}
const real = (
  name: string,
  arity: number,
  cost: CostClass,
  evaluate: (...a: number[]) => number,
  js: (...a: string[]) => string,
  partials: ScalarOp['partials'],
): ScalarOp => ({ name, arity, result: R, evaluate, js, cost, partials })
const compare = (name: string, evaluate: (a: number, b: number) => boolean, js: string): ScalarOp => ({
  name,
  arity: 2,
  result: B,
  evaluate: evaluate as ScalarOp['evaluate'],
  js: (a, b) => `(${a} ${js} ${b})`,
  cost: 'compare',
})

/** The built-in scalar operations. */
export const BUILTIN_OPS: ReadonlyMap<string, ScalarOp> = new Map(
  [
    real(
      '+',
      2,
      'add',
      (a, b) => a + b,
      (a, b) => `(${a} + ${b})`,
      () => [t.c(1), t.c(1)],
    ),
    real(
      '-',
      2,
      'add',
      (a, b) => a - b,
      (a, b) => `(${a} - ${b})`,
      () => [t.c(1), t.c(-1)],
    ),
    real(
      '*',
      2,
      'mult',
      (a, b) => a * b,
      (a, b) => `(${a} * ${b})`,
      ([a, b]) => [b!, a!],
    ),
    real(
      '/',
      2,
      'mult',
      (a, b) => a / b,
      (a, b) => `(${a} / ${b})`,
      ([, b], r) => [t.op('/', t.c(1), b!), t.op('neg', t.op('/', r, b!))],
    ),
    real(
      'neg',
      1,
      'add',
      (a) => -a,
      (a) => `(-${a})`,
      () => [t.c(-1)],
    ),
    real(
      'exp',
      1,
      'nlop',
      Math.exp,
      (a) => `Math.exp(${a})`,
      (_, r) => [r],
    ),
    real(
      'log',
      1,
      'nlop',
      Math.log,
      (a) => `Math.log(${a})`,
      ([a]) => [t.op('/', t.c(1), a!)],
    ),
    real(
      'sin',
      1,
      'nlop',
      Math.sin,
      (a) => `Math.sin(${a})`,
      ([a]) => [t.op('cos', a!)],
    ),
    real(
      'cos',
      1,
      'nlop',
      Math.cos,
      (a) => `Math.cos(${a})`,
      ([a]) => [t.op('neg', t.op('sin', a!))],
    ),
    real(
      'sqrt',
      1,
      'nlop',
      Math.sqrt,
      (a) => `Math.sqrt(${a})`,
      (_, r) => [t.op('/', t.c(0.5), r)],
    ),
    real(
      'tanh',
      1,
      'nlop',
      Math.tanh,
      (a) => `Math.tanh(${a})`,
      (_, r) => [t.op('-', t.c(1), t.op('*', r, r))],
    ),
    real(
      'nograd',
      1,
      'add',
      (a) => a,
      (a) => a,
      () => [t.c(0)],
    ),
    real(
      'square',
      1,
      'mult',
      (a) => a * a,
      (a) => `(${a} * ${a})`,
      ([a]) => [t.op('*', t.c(2), a!)],
    ),
    compare('<', (a, b) => a < b, '<'),
    compare('<=', (a, b) => a <= b, '<='),
    compare('>', (a, b) => a > b, '>'),
    compare('>=', (a, b) => a >= b, '>='),
    compare('==', (a, b) => a === b, '==='),
    compare('!=', (a, b) => a !== b, '!=='),
  ].map((o) => [o.name, o]),
)

/** Boolean connectives (arguments and result of type B). */
export const BOOL_OPS: ReadonlyMap<
  string,
  { arity: number; evaluate: (...a: boolean[]) => boolean; js: (...a: string[]) => string }
> = new Map([
  ['and', { arity: 2, evaluate: (a: boolean, b: boolean) => a && b, js: (a: string, b: string) => `(${a} && ${b})` }],
  ['or', { arity: 2, evaluate: (a: boolean, b: boolean) => a || b, js: (a: string, b: string) => `(${a} || ${b})` }],
  ['not', { arity: 1, evaluate: (a: boolean) => !a, js: (a: string) => `(!${a})` }],
] as const)

/** Resolves operation names: built-ins first, then the registry's pure primitives. */
export class OpTable {
  private readonly derived = new Map<string, ScalarOp>()
  constructor(readonly registry?: Registry) {}

  /** The operation `name`, or undefined. */
  find(name: string): ScalarOp | undefined {
    const b = BUILTIN_OPS.get(name) ?? this.derived.get(name)
    if (b) return b
    const spec = this.registry?.findPrimitive(name)
    if (!spec || spec.kind !== 'pure') return undefined
    const op = this.fromRegistry(spec)
    this.derived.set(name, op)
    return op
  }

  /** The operation `name`; an error naming the known ones when there is none. */
  get(name: string): ScalarOp {
    const o = this.find(name)
    if (!o) {
      const known = [...BUILTIN_OPS.keys(), ...(this.registry?.names('pure') ?? [])]
      throw new UnfError('unf/unknown-op', `unknown operation \`${name}\` (known: ${known.join(', ')})`)
    }
    return o
  }

  private fromRegistry(spec: PurePrimitiveSpec): ScalarOp {
    const name = spec.name
    const evaluate = spec.evaluate
    const partials = (args: Term[]): Term[] => {
      if (spec.partialExprs) {
        const placeholders: Expr[] = args.map((_, i) => ({ kind: 'var', name: `$arg${i}` }))
        return spec.partialExprs(placeholders).map((e, k) => {
          if (!('evaluate' in e)) return exprToTerm(e, args, this)
          // a piecewise partial (a function, not an expression): an operation of its own
          const dname = `∂${k}${name}`
          if (!this.derived.has(dname))
            this.derived.set(dname, { name: dname, arity: spec.arity, result: R, cost: 'nlop', evaluate: e.evaluate })
          return { k: 'op', op: dname, args } as Term
        })
      }
      if (spec.partials) {
        const numeric = spec.partials
        return args.map((_, k) => {
          const dname = `∂${k}${name}`
          if (!this.derived.has(dname)) {
            this.derived.set(dname, {
              name: dname,
              arity: spec.arity,
              result: R,
              cost: 'nlop',
              evaluate: (...a: number[]) => numeric(...a)[k]!,
            })
          }
          return { k: 'op', op: dname, args } as Term
        })
      }
      throw new UnfError(
        'unf/no-derivative',
        `the primitive \`${name}\` has no derivative: register it with \`partials\` or \`partialExprs\``,
      )
    }
    const cpu = spec.emit?.cpu
    return {
      name,
      arity: spec.arity,
      result: R,
      cost: 'nlop',
      evaluate,
      partials,
      ...(cpu ? { js: (...a: string[]) => `(${cpu(...a)})` } : {}),
    }
  }
}

/** Translates a Tenet IR expression (a primitive's partial) to a term; `$argI` stands for argument I. */
export function exprToTerm(e: Expr, args: Term[], ops: OpTable): Term {
  const go = (x: Expr): Term => {
    switch (x.kind) {
      case 'num':
        return { k: 'const', value: x.value }
      case 'var': {
        const m = /^\$arg(\d+)$/.exec(x.name)
        if (!m)
          throw new UnfError(
            'unf/unsupported',
            `a partial derivative expression reads \`${x.name}\`, which is not an argument`,
          )
        return args[Number(m[1])]!
      }
      case 'unary':
        if (x.op === '-') return { k: 'op', op: 'neg', args: [go(x.arg)] }
        break
      case 'binary':
        if (['+', '-', '*', '/', '<', '<=', '>', '>=', '==', '!='].includes(x.op))
          return { k: 'op', op: x.op, args: [go(x.left), go(x.right)] }
        if (x.op === '**' && x.right.kind === 'num' && x.right.value === 2)
          return { k: 'op', op: 'square', args: [go(x.left)] }
        break
      case 'call':
        if (x.callee === 'f64') return go(x.args[0]!)
        ops.get(x.callee)
        return { k: 'op', op: x.callee, args: x.args.map(go) }
      default:
        break
    }
    throw new UnfError('unf/unsupported', `cannot translate the partial derivative expression (${x.kind}) to a term`)
  }
  return go(e)
}
