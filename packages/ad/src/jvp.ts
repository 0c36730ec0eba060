/**
 * `jvp`: forward mode, one tangent sweep carrying w directions at once (and, with a rule spec,
 * the jvp rule of a function for `@tenet/dual`).
 */
import { hostConversionsOf, type TenetFunction } from '@tenet/reversible'
import { argError, type Gradient } from './arguments.js'
import { compileTangent, infoOf } from './compile.js'
import { hasGradient } from './transform.js'
import { jvpRule, type JvpRule, type RuleSpec } from './vjp.js'
import { loadArgs, TangentRun } from './tangent-run.js'
import { argsOf, indexList, optionsOf } from './options.js'

/** A direction shaped like the arguments: a number per float scalar, an array per float array, null elsewhere. */
export type Direction = Array<number | ArrayLike<number> | null | undefined>

/** Options of `jvp`. */
export interface JvpOptions {
  /** The tangent direction, shaped like the arguments. */
  v: Direction
  /** Only these arguments get the tangents of `v` (default: every float argument); the others get 0. */
  inputs?: number[]
}

/** What `jvp` returns. */
export interface JvpResult {
  /** The final values of the arguments (what `f(...args)` returns; arrays are copies). */
  value: unknown[]
  /** The directional derivative of each argument's final value: a number per float scalar, an array per float array, null elsewhere. */
  tangent: Gradient
}

/**
 * The Jacobian-vector product (forward mode): one run of the tangent of `f`, which carries the
 * directional derivative along `v` beside every float value.
 * ```ts
 * jvp(m.f, [0, 3], { v: [0, 1] })  // for y += x * x: { value: [9, 3], tangent: [6, 1] }
 * ```
 * Called as `jvp(f, spec)` (no arguments array), it returns instead the forward rule of `f`
 * (ChainRules' `frule`), the twin of `vjp`: see `jvpRule` in `vjp.ts`.
 * ```ts
 * const rule = jvp(m.f, { wrt: [1], outputs: [0] })
 * rule([0, 3], [1])  // { outputs: [9], tangents: [6], values: [9, 3] }
 * ```
 */
export function jvp(f: TenetFunction, args: unknown[], options: JvpOptions): JvpResult
export function jvp(f: TenetFunction, spec?: RuleSpec): JvpRule
export function jvp(f: TenetFunction, args?: unknown[] | RuleSpec, options?: JvpOptions): JvpResult | JvpRule {
  if (!Array.isArray(args)) {
    if (options !== undefined)
      argError(
        'jvp: call it as jvp(f, args, { v }) for a directional derivative, or jvp(f, { wrt, outputs }) for a rule',
      )
    return jvpRule(f, args)
  }
  return jvpAt(f, args, options as JvpOptions)
}

function jvpAt(f: TenetFunction, args: unknown[], options: JvpOptions): JvpResult {
  optionsOf('jvp', options, false)
  argsOf('jvp', args)
  if (!Array.isArray(options.v))
    argError(`\`jvp\` needs \`v\`, the direction: an array shaped like the arguments, got ${typeof options.v}`)
  indexList('jvp', 'inputs', options.inputs)
  const ct = compileTangent(f, 1)
  const info = infoOf(f)
  const run = new TangentRun(ct)
  run.load(loadArgs(f, args))
  const inputs = options.inputs ?? ct.params.map((_, i) => i)
  for (const p of inputs) {
    const s = ct.slots[p],
      d = options.v[p]
    if (!s || d === null || d === undefined) continue
    if (s.kind === 'stack') argError(`argument ${p} of \`${info.name}\` is a stack: forward mode does not seed stacks`)
    if (s.kind === 'scalar') run.seed(p, 0, 0, d as number)
    else
      for (let e = 0; e < (run.argv[p] as Float64Array).length; e++) run.seed(p, e, 0, (d as ArrayLike<number>)[e] ?? 0)
  }
  run.run()
  const value = ct.params.map((p, i) => {
    const v = run.argv[i]
    if (p.type.kind === 'stack') return v
    const { fromHost: fh, toHost: th } = hostConversionsOf(info.registry, p.type)
    if (!th) return v
    // as \`f(...args)\` returns them: a value whose representation the run did not change is the
    // argument as passed, the others decoded
    const given = args[i]
    const back = (r: number, x: unknown) => (fh && typeof x === 'number' && Object.is(r, fh(x)) ? x : th(r))
    if (typeof v === 'number') return back(v, given)
    // an array of a number system whose representation is not its value (ulog): decoded copy
    return ArrayBuffer.isView(v)
      ? (v as Float64Array).map((r, j) => back(r, (given as ArrayLike<number> | undefined)?.[j]))
      : v
  })
  const tangent: Gradient = ct.params.map((p, i) => {
    const s = ct.slots[i]
    if (!s || s.kind === 'stack' || !hasGradient(p.type, info.registry)) return null
    return s.kind === 'scalar' ? (run.argv[s.index] as number) : (run.argv[s.index] as Float64Array)
  })
  return { value, tangent }
}
