/**
 * The user-facing transformations: `grad`, `valueAndGrad`, `vjp`, `jacobian`. Each takes a
 * function `(d, ...args) => result` written against the engine object `d` and returns a function
 * of plain values. Arguments are trees of numbers and `Float64Array`s (see `structure.ts`).
 */
import type { Registry } from '@tenet/ir'
import { Dual } from './dual.js'
import { DualError } from './errors.js'
import type { StagedProgram } from './compile.js'
import { flatEntry, Stage, type StageInfo } from './staged.js'
import {
  build,
  checkHandle,
  describe,
  flattenCotangent,
  gather,
  hasStatic,
  load,
  matches,
  mirror,
  outputsOf,
  store,
  type Cotangent,
  type OutputCotangent,
  type Plain,
  type Shape,
  type Valued,
} from './structure.js'
import { HANDLE_BASE, type Real } from './tape.js'
import { Tracer } from './trace.js'

/**
 * A function written against the dual API: `d` first, then its parameters as handle trees (`Real`,
 * `Real[]`, records and arrays of them, and static values). `P` is the parameter list.
 */
export type DualFunction<P extends unknown[], R> = (d: Dual, ...args: P) => R

/** The plain arguments of a dual-engine function with handle parameters `P`. */
export type PlainArgs<P extends unknown[]> = { [K in keyof P]: Plain<P[K]> }

/** The gradient of every argument: the argument's own tree for one argument, an array of them for several. */
export type Gradients<P extends unknown[]> = P extends [infer X] ? Cotangent<X> : { [K in keyof P]: Cotangent<P[K]> }

/** Options of every transformation. */
export interface DualOptions {
  /** The registry `d.apply(name, …)` reads primitives from (default: a standard registry). */
  registry?: Registry
  /**
   * `grad` and `valueAndGrad` only: stage the function (seed 003's staging, at run time). The first
   * call for an input shape runs `f` on a tracing engine; the recorded computation is compiled to JS
   * (loops rerolled) and later calls of that shape run the compiled forward and reverse code without
   * calling `f`. Sound when `f`'s computation depends only on its arguments and on the outcomes of
   * `d.sign` / `d.compare` (recorded as guards: a call whose outcomes differ re-traces): constants
   * captured from closures are frozen at tracing time. A function that reads values with `d.value`,
   * applies registry primitives or custom rules, or takes static leaves, is interpreted as usual (see
   * `.stage` on the result); so is every call where code generation from strings is disallowed.
   */
  stage?: boolean
}

// One arena per nesting depth: a dual-engine function may itself call grad (of another function),
// and that inner call must not reset the outer call's arena.
const pool: Array<Dual | undefined> = []
let depth = 0

function acquire(): Dual {
  const d = pool[depth] ?? (pool[depth] = new Dual())
  depth++
  return d
}

// the tracing engines of staged sites, one per nesting depth as well
const tracers: Array<Tracer | undefined> = []

function acquireTracer(): Tracer {
  const d = tracers[depth] ?? (tracers[depth] = new Tracer())
  depth++
  return d
}

function release(): void {
  depth--
}

/** The cached input shape and handle structure of one transformed function. */
class Site {
  shape: Shape | undefined
  mirror: unknown[] = []
  inputs = 0
  readonly box: unknown[] = [undefined]

  /** Records `args` as the input nodes of a fresh call on `d` and returns the handle arguments. */
  enter(d: Dual, args: unknown[], registry: Registry | undefined): unknown[] {
    if (this.shape === undefined || !matches(this.shape, args)) {
      const { shape, next } = describe(args, 0, 'arguments')
      this.shape = shape
      this.mirror = mirror(shape) as unknown[]
      this.inputs = next
    }
    d.reset()
    d.registry = registry
    load(this.shape, args, this.mirror, d)
    d.floor = d.top // the inputs: nothing below them to sweep
    return this.mirror
  }
}

function invoke(f: Function, d: Dual, m: unknown[]): unknown {
  switch (m.length) {
    case 0:
      return f(d)
    case 1:
      return f(d, m[0])
    case 2:
      return f(d, m[0], m[1])
    case 3:
      return f(d, m[0], m[1], m[2])
    default:
      return f(d, ...m)
  }
}

/**
 * Sweeps once from a scalar result; returns its node index (an integer, so that no double crosses
 * a call boundary: V8 boxes a returned double unless the call is inlined).
 */
function sweepScalar(d: Dual, result: unknown): number {
  if (typeof result !== 'number')
    throw new DualError(
      'dual/not-scalar',
      `the function must return one handle (\`Real\`) to be differentiated with grad; got ${result === null ? 'null' : Array.isArray(result) ? 'an array (use vjp or jacobian)' : typeof result}`,
    )
  checkHandle(result, d.top, 'result')
  d.clearAdjoints()
  d.adj[result - HANDLE_BASE] = 1
  d.sweep()
  return result - HANDLE_BASE
}

/**
 * Runs a staged program on arguments that match its shape: one flat `Float64Array` argument is read
 * in place, other trees are gathered into the program's input buffer. False if a guard failed.
 */
function runStaged(p: StagedProgram, shape: Shape, args: unknown[], gx: Float64Array): boolean {
  const items = (shape as Extract<Shape, { kind: 'array' }>).items
  if (items.length === 1 && items[0]!.kind === 'vector') return p.run(args[0] as Float64Array, gx)
  gather(shape, args, p.xin)
  return p.run(p.xin, gx)
}

function gradientsOf(site: Site, args: unknown[], flat: ArrayLike<number>): unknown {
  const shape = site.shape as Extract<Shape, { kind: 'array' }>
  return args.length === 1 ? build(shape.items[0]!, args[0], flat) : build(shape, args, flat)
}

/** A gradient function: call it on plain values; `into` writes into an existing tree. */
export interface GradFunction<A extends unknown[]> {
  (...args: PlainArgs<A>): Gradients<A>
  /**
   * For a function of one argument: writes the gradient into `out` (a tree of the argument's shape
   * whose containers are reused: `Float64Array`s are filled, numbers in arrays and records are
   * assigned) and the function's value into `value`. Allocates nothing in steady state when the
   * argument's differentiable leaves are `Float64Array`s (inside any records and arrays): a plain
   * number inside a record is read and written through a keyed property access, which boxes it.
   * It returns nothing: V8 boxes a returned double whenever it does not inline the call.
   */
  into(out: Cotangent<A[0]>, x: Plain<A[0]>): void
  /** The function's value at the last `into` (or call). */
  readonly value: number
  /** With `{ stage: true }`: whether calls run compiled code, and why not (absent otherwise). */
  readonly stage?: StageInfo
}

/** `valueAndGrad(f)`: both at once. */
export interface ValueAndGradFunction<A extends unknown[]> {
  (...args: PlainArgs<A>): { value: number; grad: Gradients<A> }
}

/**
 * The gradient of a scalar-valued dual-engine function with respect to every differentiable leaf of
 * its arguments: one forward run recording the arena, one reverse sweep.
 *
 * ```ts
 * const g = grad((d, p: { x: Real; y: Real }) => d.add(d.mul(p.x, p.y), d.sin(p.x)))
 * g({ x: 1, y: 2 }) // { x: 2 + cos 1, y: 1 }
 * ```
 */
export function grad<A extends unknown[]>(f: DualFunction<A, Real>, options: DualOptions = {}): GradFunction<A> {
  const site = new Site()
  const registry = options.registry
  const stage = options.stage ? new Stage() : undefined
  // the value lives in a typed array: storing a double into a property may box it
  const last = new Float64Array(1)
  const g = ((...args: unknown[]) => {
    if (stage) {
      const p = stage.program
      if (p && matches(site.shape!, args)) {
        if (runStaged(p, site.shape!, args, p.gin)) {
          last[0] = p.v[p.out]!
          return gradientsOf(site, args, p.gin)
        }
        stage.invalidate()
      }
    }
    const tracing = stage !== undefined && stage.tracing
    const d = tracing ? acquireTracer() : acquire()
    try {
      const at = sweepScalar(d, invoke(f, d, site.enter(d, args, registry))) // (before reading d.val: the call may grow the arena)
      last[0] = d.val[at]!
      if (tracing) stage.learn(d as Tracer, at, site.shape!)
      return gradientsOf(site, args, d.adj)
    } finally {
      release()
    }
  }) as GradFunction<A>
  Object.defineProperty(g, 'value', { get: () => last[0]!, enumerable: true })
  if (stage) Object.defineProperty(g, 'stage', { get: () => stage.info(), enumerable: true })
  g.into = (out: unknown, x: unknown): void => {
    const box = site.box
    if (stage !== undefined) {
      const p = stage.program
      // one flat Float64Array argument (the common case): no tree walk
      if (p !== undefined && stage.flat && x instanceof Float64Array && x.length === p.inputs) {
        const direct = out instanceof Float64Array && out.length === p.inputs
        if (p.run(x, direct ? out : p.gin)) {
          last[0] = p.v[p.out]!
          if (!direct) store((site.shape as Extract<Shape, { kind: 'array' }>).items[0]!, out, p.gin)
          return
        }
        stage.invalidate()
      }
    }
    box[0] = x
    if (stage !== undefined && !stage.flat) {
      const p = stage.program
      if (p && matches(site.shape!, box)) {
        const leaf = (site.shape as Extract<Shape, { kind: 'array' }>).items[0]!
        const direct = leaf.kind === 'vector' && out instanceof Float64Array && out.length === leaf.length
        const ok = runStaged(p, site.shape!, box, direct ? out : p.gin)
        box[0] = undefined
        if (ok) {
          last[0] = p.v[p.out]!
          if (!direct) store(leaf, out, p.gin)
          return
        }
        stage.invalidate()
        box[0] = x
      }
    }
    const tracing = stage !== undefined && stage.tracing
    const d = tracing ? acquireTracer() : acquire()
    try {
      const result = invoke(f, d, site.enter(d, box, registry))
      box[0] = undefined
      const at = sweepScalar(d, result)
      last[0] = d.val[at]!
      if (tracing) stage.learn(d as Tracer, at, site.shape!)
      store((site.shape as Extract<Shape, { kind: 'array' }>).items[0]!, out, d.adj)
    } finally {
      release()
    }
  }
  if (stage) {
    // an entry of its own for this gradient (fresh code, so V8's feedback at its call of the compiled
    // program sees this function's programs only and can inline them); the generic one otherwise
    const own = flatEntry(stage, last, g.into as (out: unknown, x: unknown) => void)
    if (own) g.into = own
  }
  return g
}

/** The value and the gradient of a scalar-valued dual-engine function (see `grad`). */
export function valueAndGrad<A extends unknown[]>(
  f: DualFunction<A, Real>,
  options: DualOptions = {},
): ValueAndGradFunction<A> {
  if (options.stage) {
    const g = grad(f, options)
    return ((...args: PlainArgs<A>) => {
      const gr = g(...args)
      return { value: g.value, grad: gr }
    }) as ValueAndGradFunction<A>
  }
  const site = new Site()
  return ((...args: unknown[]) => {
    const d = acquire()
    try {
      const at = sweepScalar(d, invoke(f, d, site.enter(d, args, options.registry))) // (before reading d.val: the call may grow the arena)
      const value = d.val[at]!
      return { value, grad: gradientsOf(site, args, d.adj) }
    } finally {
      release()
    }
  }) as ValueAndGradFunction<A>
}

/** What `vjp(f)(...args)` returns. */
export interface VjpResult<A extends unknown[], R> {
  /** The function's result, handles replaced by their values. */
  value: Valued<R>
  /**
   * The cotangent of the arguments for a cotangent of the result (a tree of the result's shape;
   * arrays of handles take arrays or `Float64Array`s). May be called any number of times.
   */
  pullback(cotangent: OutputCotangent<R>): Gradients<A>
}

/**
 * The vector–Jacobian product of a dual-engine function with any tree of handles as its result:
 * one forward run, then one reverse sweep per `pullback` call. The pullback keeps the call's arena
 * alive (the next call of any transformation gets a fresh one), so it stays valid after later calls.
 */
export function vjp<A extends unknown[], R>(
  f: DualFunction<A, R>,
  options: DualOptions = {},
): (...args: PlainArgs<A>) => VjpResult<A, R> {
  const site = new Site()
  return ((...args: unknown[]) => {
    const d = acquire()
    try {
      const result = invoke(f, d, site.enter(d, args, options.registry))
      const { handles, rebuild } = outputsOf(result, d.top)
      const value = rebuild((k) => d.val[handles[k]! - HANDLE_BASE]!)
      // the pullback owns this arena from now on
      pool[depth - 1] = undefined
      const shape = site.shape!
      const own = args.slice()
      const gen = d.generation
      const cot: number[] = []
      return {
        value,
        pullback: (cotangent: unknown) => {
          if (d.generation !== gen)
            throw new DualError('dual/stale-pullback', 'this pullback belongs to a call whose arena was reused')
          cot.length = 0
          flattenCotangent(cotangent, result, cot)
          d.clearAdjoints()
          for (let k = 0; k < handles.length; k++) d.adj[handles[k]! - HANDLE_BASE] += cot[k]!
          d.sweep()
          const s = shape as Extract<Shape, { kind: 'array' }>
          return own.length === 1 ? build(s.items[0]!, own[0], d.adj) : build(s, own, d.adj)
        },
      }
    } finally {
      release()
    }
  }) as (...args: PlainArgs<A>) => VjpResult<A, R>
}

/** The Jacobian: the result's tree with each output scalar replaced by its gradient tree. */
export type Jacobian<A extends unknown[], R> = R extends Real
  ? Gradients<A>
  : R extends readonly unknown[]
    ? { -readonly [K in keyof R]: Jacobian<A, R[K]> }
    : R extends object
      ? { -readonly [K in keyof R]: Jacobian<A, R[K]> }
      : never

/**
 * The Jacobian of a dual-engine function by repeated reverse sweeps over one recorded forward run:
 * one sweep per output scalar. Returns the result's tree with every output scalar replaced by the
 * gradient of that output (with respect to the arguments, as `grad` returns it), and the value.
 */
export function jacobian<A extends unknown[], R>(
  f: DualFunction<A, R>,
  options: DualOptions = {},
): (...args: PlainArgs<A>) => { value: Valued<R>; jacobian: Jacobian<A, R> } {
  const site = new Site()
  return ((...args: unknown[]) => {
    const d = acquire()
    try {
      const result = invoke(f, d, site.enter(d, args, options.registry))
      const { handles, rebuild } = outputsOf(result, d.top)
      const value = rebuild((k) => d.val[handles[k]! - HANDLE_BASE]!)
      const rows = handles.map((h) => {
        d.clearAdjoints()
        d.adj[h - HANDLE_BASE] = 1
        d.sweep()
        return gradientsOf(site, args, d.adj)
      })
      return { value, jacobian: rebuild((k) => rows[k]) }
    } finally {
      release()
    }
  }) as (...args: PlainArgs<A>) => { value: Valued<R>; jacobian: Jacobian<A, R> }
}

/**
 * Evaluates a dual-engine function on plain values (recording its arena, without a sweep) and
 * returns its result with handles replaced by values.
 */
export function evaluate<A extends unknown[], R>(
  f: DualFunction<A, R>,
  options: DualOptions = {},
): (...args: PlainArgs<A>) => Valued<R> {
  const site = new Site()
  return ((...args: unknown[]) => {
    const d = acquire()
    try {
      const result = invoke(f, d, site.enter(d, args, options.registry))
      if (typeof result === 'number') {
        checkHandle(result, d.top, 'result')
        return d.val[result - HANDLE_BASE]!
      }
      const { handles, rebuild } = outputsOf(result, d.top)
      return rebuild((k) => d.val[handles[k]! - HANDLE_BASE]!)
    } finally {
      release()
    }
  }) as (...args: PlainArgs<A>) => Valued<R>
}
