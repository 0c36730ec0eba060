/**
 * The generated derivatives of a Tenet function as rules that another AD system can consume, in
 * the shapes of ChainRules' `rrule`/`frule` and JAX's `custom_vjp`/`jvp`:
 *
 * - `vjp(f, spec)` → a rule that runs `f` forwards and returns the outputs plus a pullback
 *   (cotangents of the outputs → cotangents of the inputs). The pullback runs the compiled
 *   adjoint of `f` from the final values: no tape, the forward run's residuals are only the
 *   final values of the arguments.
 * - `jvp(f, spec)` → the forward-mode twin: (inputs, tangents of the inputs) → outputs plus the
 *   tangents of the outputs, by one run of the tangent of `f`.
 *
 * A Tenet function updates its arguments in place, so "inputs" and "outputs" are arguments:
 * an input is the initial value of an argument (`wrt`), an output the final value of one
 * (`outputs`); one argument may be both.
 */
import { TenetError, type Param } from '@tenet/ir'
import { hostConversionsOf, MAX_ARRAY_LENGTH, type TenetFunction } from '@tenet/reversible'
import { argError, sharedArrays } from './arguments.js'
import { Sweep } from './sweep.js'
import { compileAdjoint, compileTangent, infoOf } from './compile.js'
import { gradientScalar } from './expr.js'
import { TangentRun, loadArgs } from './tangent-run.js'
import { hasGradient } from './transform.js'

/** Which arguments of `f` a rule relates (indices into `f`'s parameters, 0-based). */
export interface RuleSpec {
  /**
   * The inputs: float scalar or float array arguments whose initial values the derivative is
   * taken with respect to (default: every float argument), in the order the cotangents (vjp) are
   * returned and the tangents (jvp) are given.
   */
  wrt?: number[]
  /**
   * The outputs: float scalar or float array arguments whose final values are the function's
   * result (default: every float argument that `f` writes), in the order they are returned and
   * their cotangents (vjp) are given.
   */
  outputs?: number[]
  /**
   * Whether the arrays that `f` only reads (and that need no conversion) are used as passed
   * instead of copied (default false). The caller must then leave them unchanged until the last
   * pullback of that forward run. For adapters that own the arrays they pass (e.g. converted from
   * tensors): it saves one copy per such array and call.
   */
  borrow?: boolean
}

/** The value of a float output, or the (co)tangent of a float argument: a number or an array. */
export type RuleValue = number | Float64Array | Float32Array

/**
 * A (co)tangent as given by the caller: a number for a scalar argument, an array-like of the
 * argument's length for an array argument; `null`/`undefined` means zero.
 */
export type RuleSeed = number | ArrayLike<number> | null | undefined

/** What a `vjp` rule returns for one forward run. */
export interface VjpResult {
  /** The final values of the `outputs` arguments, in `spec.outputs` order (arrays are own copies). */
  outputs: RuleValue[]
  /**
   * The final values of every argument, as a call of `f` returns them (arrays are own copies,
   * made on first access).
   */
  readonly values: unknown[]
  /**
   * Cotangents of the outputs (one per output, in `spec.outputs` order) → cotangents of the
   * inputs (one per `wrt` argument, in that order: a number per scalar, a fresh `Float64Array`
   * per array, `Float32Array` for f32 arrays). Runs the adjoint of `f` once; may be called any
   * number of times (each call starts from the final values of this forward run).
   */
  pullback(cotangents: ReadonlyArray<RuleSeed>): RuleValue[]
}

/** A reverse rule made by `vjp`: runs `f` forwards on the arguments (left as passed). */
export interface VjpRule {
  (...args: unknown[]): VjpResult
  /** The resolved input argument indices. */
  readonly wrt: readonly number[]
  /** The resolved output argument indices. */
  readonly outputs: readonly number[]
}

/** What a `jvp` rule returns. */
export interface JvpRuleResult {
  /** The final values of the `outputs` arguments, in `spec.outputs` order. */
  outputs: RuleValue[]
  /** The final values of every argument, as a call of `f` returns them. */
  values: unknown[]
  /** The tangents of the outputs, in `spec.outputs` order (fresh arrays). */
  tangents: RuleValue[]
}

/** A forward rule made by `jvp(f, spec)`: (arguments, tangents of the `wrt` inputs) → outputs and their tangents. */
export interface JvpRule {
  (args: unknown[], tangents: ReadonlyArray<RuleSeed>): JvpRuleResult
  /** The resolved input argument indices. */
  readonly wrt: readonly number[]
  /** The resolved output argument indices. */
  readonly outputs: readonly number[]
}

const shapeError = (msg: string): never => {
  throw new TenetError('ad/shape', msg)
}

/** Resolves and checks `spec` against the parameters of `f`. */
function resolveSpec(
  f: TenetFunction,
  spec: RuleSpec | undefined,
  what: string,
): { wrt: number[]; outputs: number[]; params: Param[]; name: string } {
  const info = infoOf(f)
  const params = f.ir.params
  const name = info.name
  if (spec !== undefined && (typeof spec !== 'object' || spec === null || Array.isArray(spec)))
    argError(
      `${what}(f, spec): \`spec\` must be an object { wrt?, outputs? }, got ${Array.isArray(spec) ? 'an array' : String(spec)}`,
    )
  const isFloat = (i: number) => params[i]!.type.kind !== 'stack' && hasGradient(params[i]!.type, info.registry)
  const describe = (i: number) => {
    const p = params[i]!
    return `argument ${i} (\`${p.name}\`: ${p.type.kind === 'scalar' ? p.type.name : p.type.kind === 'array' ? `${p.type.elem}[]` : 'stack'})`
  }
  const floats = params.flatMap((_, i) => (isFloat(i) ? [i] : []))
  const written = info.program.writes.get(name)!
  const check = (key: 'wrt' | 'outputs', list: unknown): number[] => {
    if (!Array.isArray(list))
      return argError(
        `${what}(f, spec): \`spec.${key}\` must be an array of argument indices of \`${name}\`, got ${String(list)}`,
      )
    const seen = new Set<number>()
    for (const i of list) {
      if (!Number.isInteger(i) || i < 0 || i >= params.length)
        argError(
          `${what}(f, spec): \`spec.${key}\` has ${String(i)}, which is not an argument index of \`${name}\` (0..${params.length - 1}: ${params.map((p) => p.name).join(', ')})`,
        )
      if (!isFloat(i))
        argError(
          `${what}(f, spec): \`spec.${key}\` names ${describe(i)} of \`${name}\`, which has no derivative (float arguments: ${floats.map((k) => `${k} \`${params[k]!.name}\``).join(', ') || 'none'})`,
        )
      if (seen.has(i)) argError(`${what}(f, spec): \`spec.${key}\` names argument ${i} twice`)
      seen.add(i)
    }
    return (list as number[]).slice()
  }
  const wrt = check('wrt', spec?.wrt ?? floats)
  const outputs = check('outputs', spec?.outputs ?? floats.filter((i) => written[i]))
  return { wrt, outputs, params, name }
}

/** Reads seed k (for argument p, whose current value is `value`) as a number or an array of the right length. */
function readSeed(seed: RuleSeed, value: unknown, what: string, p: Param): number | ArrayLike<number> | null {
  if (seed === null || seed === undefined) return null
  if (typeof value === 'number') {
    if (typeof seed !== 'number')
      shapeError(`${what} for scalar \`${p.name}\` must be a number, got ${describeValue(seed)}`)
    return seed as number
  }
  const len = (value as ArrayLike<number>).length
  if (typeof seed === 'number' || typeof (seed as ArrayLike<number>).length !== 'number')
    shapeError(
      `${what} for array \`${p.name}\` must be an array of ${len} numbers (its length), got ${describeValue(seed)}`,
    )
  if ((seed as ArrayLike<number>).length !== len)
    shapeError(
      `${what} for array \`${p.name}\` must have ${len} elements (the length of \`${p.name}\`), got ${(seed as ArrayLike<number>).length}`,
    )
  return seed as ArrayLike<number>
}

function describeValue(v: unknown): string {
  if (v === null) return 'null'
  if (typeof v === 'number') return `the number ${v}`
  if (ArrayBuffer.isView(v) || Array.isArray(v)) return `an array of ${(v as ArrayLike<unknown>).length}`
  return typeof v === 'object' ? `an object (${(v as object).constructor?.name ?? 'Object'})` : `a ${typeof v}`
}

function checkCount(seeds: unknown, n: number, what: string, names: string): void {
  if (
    !Array.isArray(seeds) &&
    !(
      typeof seeds === 'object' &&
      seeds !== null &&
      typeof (seeds as ArrayLike<unknown>).length === 'number' &&
      !ArrayBuffer.isView(seeds)
    )
  )
    shapeError(`${what} must be an array with one entry per ${names}, got ${describeValue(seeds)}`)
  if ((seeds as ArrayLike<unknown>).length !== n)
    shapeError(`${what} must have ${n} entries (one per ${names}), got ${(seeds as ArrayLike<unknown>).length}`)
}

/** The host value of parameter i's current value (decoded for fixed/ulog; arrays copied). */
function hostValue(f: TenetFunction, i: number, v: unknown): unknown {
  const p = f.ir.params[i]!
  if (p.type.kind === 'stack') return Array.isArray(v) ? v.slice() : v
  const th = hostConversionsOf(infoOf(f).registry, p.type).toHost
  if (typeof v === 'number') return th ? th(v) : v
  if (typeof v === 'boolean') return v
  if (ArrayBuffer.isView(v)) return th ? (v as Float64Array).map(th) : (v as Float64Array).slice()
  return v
}

/**
 * A reverse-mode rule for `f` (ChainRules' `rrule`, JAX's `vjp` / `custom_vjp` fwd+bwd): the
 * returned function takes the arguments of `f`, runs `f` forwards on copies and returns the
 * outputs (the final values of `spec.outputs`) with a pullback that maps their cotangents to the
 * cotangents of the inputs (the initial values of `spec.wrt`). The pullback is one run of the
 * adjoint that Tenet generated for `f`, started from the final values (no tape). Wrong numbers or
 * shapes of cotangents throw a `TenetError` with code `'ad/shape'` that says what is expected.
 * ```ts
 * const rule = vjp(m.norm, { wrt: [1], outputs: [0] })   // fn norm(out: f64, x: f64[])
 * const { outputs, pullback } = rule(0, x)
 * const [dx] = pullback([1])                                // d norm / dx
 * ```
 * Arguments of other types (i32 indices and sizes, bools, stacks) are passed as to `f` and get no
 * cotangent. Complex parameters are seen lowered (`z$re`, `z$im` as two f64 arguments).
 */
export function vjp(f: TenetFunction, spec?: RuleSpec): VjpRule {
  const { wrt, outputs, params, name } = resolveSpec(f, spec, 'vjp')
  const c = compileAdjoint(f)
  const n = params.length
  const written = c.info.program.writes.get(name)!
  const core = c.adjoint.core
  // arrays f only reads, which a borrowing rule takes as passed: (parameter, its array type)
  const borrowed = spec?.borrow === true ? sharedArrays(c).flatMap((shared, i) => (shared ? [i] : [])) : []
  const ctorOf = (i: number) =>
    ({ Float64Array, Float32Array, Int32Array, Uint8Array })[
      c.info.registry.numberSystem((params[i]!.type as { elem: string }).elem).arrayType
    ]
  const rule = (...args: unknown[]): VjpResult => {
    const sweep = new Sweep(c)
    let load: unknown[] = args
    const lent: number[] = []
    if (borrowed.length && args.length === n) {
      load = args.slice()
      for (const i of borrowed) {
        const ctor = ctorOf(i)
        // (an argument of the wrong type, or longer than the host boundary allows, is loaded as
        // given, and rejected there)
        if (args[i] instanceof ctor && (args[i] as ArrayLike<number>).length <= MAX_ARRAY_LENGTH) {
          load[i] = new ctor(0)
          lent.push(i)
        }
      }
    }
    sweep.load(load)
    // (the arrays lent were loaded as empty ones: the aliasing rule on those passed)
    if (lent.length) sweep.overlap?.check(args)
    for (const i of lent) sweep.fwd[i] = args[i]
    sweep.forward()
    // the residuals: the final values, in the representation of f (own buffers of this sweep)
    const final = sweep.fwd.slice()
    let values: unknown[] | undefined
    const outs = outputs.map((i) => hostValue(f, i, final[i]) as RuleValue)
    const pullback = (cotangents: ReadonlyArray<RuleSeed>): RuleValue[] => {
      checkCount(
        cotangents,
        outputs.length,
        `the cotangents of \`${name}\`'s outputs`,
        `output (arguments ${outputs.join(', ')})`,
      )
      const seeds = outputs.map((p, k) =>
        readSeed(cotangents[k], final[p], `cotangent ${k} (argument ${p})`, params[p]!),
      )
      const argv = new Array<unknown>(n + c.slots.filter((s) => s).length + 1)
      for (let i = 0; i < n; i++) {
        const v = final[i]
        // the adjoint uncomputes what f wrote back to the inputs: work on copies of those
        argv[i] = ArrayBuffer.isView(v) && written[i] ? (v as Float64Array).slice() : Array.isArray(v) ? v.slice() : v
        const s = c.slots[i]
        if (!s) continue
        if (s.kind === 'scalar') argv[s.index] = 0
        else if (s.kind === 'array') {
          const len = (v as ArrayLike<number>).length
          argv[s.index] =
            gradientScalar((params[i]!.type as { elem: 'f32' }).elem) === 'f32'
              ? new Float32Array(len)
              : new Float64Array(len)
        } else argv[s.index] = new Array<number>((v as unknown[]).length).fill(0)
      }
      argv[argv.length - 1] = 0
      outputs.forEach((p, k) => {
        const sd = seeds[k]
        if (sd === null) return
        const s = c.slots[p]!
        if (typeof sd === 'number') argv[s.index] = sd
        else {
          const g = argv[s.index] as Float64Array
          for (let e = 0; e < g.length; e++) g[e] = sd[e]!
        }
      })
      core.apply(undefined, argv)
      return wrt.map((p) => {
        const s = c.slots[p]!
        return s.kind === 'scalar' ? core.results[s.index]! : (argv[s.index] as Float64Array)
      })
    }
    return {
      outputs: outs,
      get values() {
        return (values ??= final.map((v, i) => hostValue(f, i, v)))
      },
      pullback,
    }
  }
  Object.defineProperties(rule, {
    wrt: { value: Object.freeze(wrt.slice()) },
    outputs: { value: Object.freeze(outputs.slice()) },
  })
  return rule as VjpRule
}

/**
 * A forward-mode rule for `f` (ChainRules' `frule`, JAX's `jvp`): the returned function takes
 * the arguments of `f` and one tangent per `spec.wrt` input, runs the tangent of `f` once and
 * returns the outputs (final values of `spec.outputs`) with their tangents. Wrong numbers or
 * shapes of tangents throw a `TenetError` with code `'ad/shape'`. (Reached as `jvp(f, spec)`.)
 */
export function jvpRule(f: TenetFunction, spec?: RuleSpec): JvpRule {
  const { wrt, outputs, params, name } = resolveSpec(f, spec, 'jvp')
  const ct = compileTangent(f, 1)
  const rule = (args: unknown[], tangents: ReadonlyArray<RuleSeed>): JvpRuleResult => {
    if (!Array.isArray(args))
      argError(
        `a jvp rule of \`${name}\` takes (args, tangents): \`args\` must be an array of the ${params.length} arguments, got ${describeValue(args)}`,
      )
    checkCount(tangents, wrt.length, `the tangents of \`${name}\`'s inputs`, `input (arguments ${wrt.join(', ')})`)
    const run = new TangentRun(ct)
    const loaded = loadArgs(f, args)
    run.load(loaded)
    wrt.forEach((p, k) => {
      const sd = readSeed(tangents[k], loaded[p], `tangent ${k} (argument ${p})`, params[p]!)
      if (sd === null) return
      if (typeof sd === 'number') run.seed(p, 0, 0, sd)
      else for (let e = 0; e < sd.length; e++) run.seed(p, e, 0, sd[e]!)
    })
    run.run()
    const values = params.map((_, i) => hostValue(f, i, run.argv[i]))
    const outs = outputs.map((i) => values[i] as RuleValue)
    const tans = outputs.map((p): RuleValue => {
      const s = ct.slots[p]!
      if (s.kind === 'scalar') return run.argv[s.index] as number
      return (run.argv[s.index] as Float64Array).slice()
    })
    return { outputs: outs, values, tangents: tans }
  }
  Object.defineProperties(rule, {
    wrt: { value: Object.freeze(wrt.slice()) },
    outputs: { value: Object.freeze(outputs.slice()) },
  })
  return rule as JvpRule
}
