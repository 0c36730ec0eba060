/**
 * Taylor mode: compiles the Taylor function of a Tenet function (see `taylor.ts`) with the
 * function's own backend, and `taylor`, which runs it along a direction and returns the Taylor
 * coefficients of every f64 argument's final value: higher-order directional derivatives (and
 * the k-th derivative of a function of one variable) from one sweep.
 */
import type { FunctionDef, Param } from '@tenet/ir'
import {
  arityError,
  checkArgument,
  hostParams,
  overlapGuard,
  type TenetFunction,
  type TenetFunctionInfo,
} from '@tenet/reversible'
import { argError, type Gradient } from './arguments.js'
import { compileGenerated, compileTangent, infoOf } from './compile.js'
import type { Direction } from './jvp.js'
import { TaylorBuilder, taylorSlots, type TaylorSlot } from './taylor.js'
import { argsOf, indexList, optionsOf } from './options.js'

/** A compiled Taylor function and what is needed to drive it. */
export interface CompiledTaylor {
  /** The differentiated function's parameters. */
  params: Param[]
  /** Per parameter: where its coefficients go (null: none); coefficient j at `index + j − 1`. */
  slots: Array<TaylorSlot | null>
  /** The number of coefficients carried beside each value (k). */
  order: number
  /** The compiled Taylor function: parameters (values…, coefficients 1…k of each f64 parameter…). */
  taylor: TenetFunction
  /** Every generated function (callees' Taylor functions included), as core IR. */
  functions: FunctionDef[]
  info: TenetFunctionInfo
}

const cache = new WeakMap<TenetFunction, Map<number, CompiledTaylor>>()

/**
 * The order-k Taylor function of `f` (for `m.f.inverse`, of the inverse), generated once and
 * compiled with the same backend, checks and tolerance as `f`. A primitive without a Taylor rule
 * is a `TenetStaticError` with code `ad/taylor-rule` naming it.
 */
export function compileTaylor(f: TenetFunction, order: number): CompiledTaylor {
  if (!Number.isInteger(order) || order < 1)
    throw new RangeError(`the Taylor order must be a positive integer, got ${order}`)
  let byOrder = cache.get(f)
  const hit = byOrder?.get(order)
  if (hit) return hit
  const info = infoOf(f)
  const registry = info.registry.clone()
  const builder = new TaylorBuilder(info.program, info.inverses, registry, order)
  const name = builder.request(info.name, info.inverse)
  const functions = builder.build()
  // callees without f64 parameters are called as they are: compiled beside the Taylor functions
  const taken = new Set(functions.map((g) => g.name))
  const module = compileGenerated(info, registry, [
    ...functions,
    ...[...info.program.functions.values()].filter((g) => !taken.has(g.name)),
  ])
  const params = f.ir.params
  const out: CompiledTaylor = {
    params,
    slots: taylorSlots(params, info.registry, order),
    order,
    taylor: module[name]!,
    functions,
    info,
  }
  if (!byOrder) cache.set(f, (byOrder = new Map()))
  byOrder.set(order, out)
  return out
}

/** Options of `taylor`. */
export interface TaylorOptions {
  /** The direction v of the line t ↦ args + t·v, shaped like the arguments (a number per f64 scalar, an array per f64 array). */
  direction: Direction
  /** How many coefficients to compute after the value (k ≥ 1). */
  order: number
  /** Only these arguments move along `direction` (default: every f64 argument); the others stay fixed. */
  wrt?: number[]
}

/** What `taylor` returns. */
export interface TaylorResult {
  /** The final values of the arguments (what `f(...args)` returns; arrays are copies). */
  value: unknown[]
  /**
   * `coefficients[j]` (j = 0…k): coefficient j of the final value of each f64 argument as a
   * function of t, a number per scalar and an array per array (null elsewhere); j = 0 is the value.
   */
  coefficients: Gradient[]
  /** `derivatives[j] = j! · coefficients[j]`: the j-th directional derivative dʲ/dtʲ at t = 0. */
  derivatives: Gradient[]
}

/**
 * Univariate Taylor propagation (like JAX's `jet`): the first k Taylor coefficients of
 * t ↦ f(args + t·v) for every f64 argument's final value, from one run of f's Taylor function.
 * Coefficient j is (1/j!)·dʲ/dtʲ; for a function of one variable z and v = 1 it is f⁽ʲ⁾(z)/j!.
 * ```ts
 * taylor(m.ibesselj, [0, 2, 1.0], { direction: [0, 0, 1], order: 8 }).derivatives  // J₂, J₂′ … J₂⁽⁸⁾ at 1 (in slot 0)
 * ```
 * The cost grows like k² (products are convolutions of k + 1 coefficients), against 2^k for k
 * nested first-order transforms.
 */
export function taylor(f: TenetFunction, args: unknown[], options: TaylorOptions): TaylorResult {
  optionsOf('taylor', options, false)
  argsOf('taylor', args)
  if (!Array.isArray(options.direction))
    argError(`\`taylor\` needs \`direction\`, an array shaped like the arguments, got ${typeof options.direction}`)
  indexList('taylor', 'wrt', options.wrt)
  const { order } = options
  const c = compileTaylor(f, order)
  const { params, slots } = c
  const name = c.info.name
  // the host boundary's checks (the Taylor function converts number systems' values itself)
  if (args.length !== params.length) arityError(name, params, args.length)
  const hps = hostParams(c.info.registry, params)
  const wrt = new Set(options.wrt ?? params.map((_, i) => i))
  let total = params.length
  for (const s of slots) if (s) total += order
  const argv = new Array<unknown>(total)
  params.forEach((p, i) => {
    const a = args[i]
    checkArgument(name, params, hps[i]!, i, a)
    argv[i] = ArrayBuffer.isView(a) ? (a as Float64Array).slice() : Array.isArray(a) ? a.slice() : a
    const s = slots[i]
    if (!s) return
    const d = wrt.has(i) ? options.direction[i] : undefined
    for (let j = 1; j <= order; j++) {
      const at = s.index + j - 1
      if (s.kind === 'scalar') argv[at] = j === 1 && typeof d === 'number' ? d : 0
      else if (s.kind === 'array') {
        const len = (a as Float64Array).length
        const buf = new Float64Array(len)
        if (j === 1 && d !== null && d !== undefined) {
          if (typeof d === 'number' || (d as ArrayLike<number>).length !== len)
            argError(`direction ${i} of \`${name}\` must be an array of ${len} numbers`)
          for (let e = 0; e < len; e++) buf[e] = (d as ArrayLike<number>)[e]!
        }
        argv[at] = buf
      } else argv[at] = new Array<number>((a as unknown[]).length).fill(0)
    }
  })
  // the aliasing rule (see \`overlapGuard\` of \`@tenet/reversible\`)
  overlapGuard(
    `${name}${c.info.inverse ? '.inverse' : ''}`,
    params,
    c.info.program.writes.get(c.info.name) ?? [],
  )?.check(args)
  const out = c.taylor(...argv)
  const value = out.slice(0, params.length)
  const coefficients: Gradient[] = []
  const derivatives: Gradient[] = []
  let factorial = 1
  for (let j = 0; j <= order; j++) {
    if (j > 0) factorial *= j
    const fj = factorial
    const cj: Gradient = params.map((_, i) => {
      const s = slots[i]
      if (!s || s.kind === 'stack') return null
      const v = j === 0 ? out[i] : out[s.index + j - 1]
      return typeof v === 'number' ? v : (v as Float64Array).slice()
    })
    coefficients.push(cj)
    derivatives.push(
      cj.map((v) => (v === null ? null : typeof v === 'number' ? v * fj : (v as Float64Array).map((x) => x * fj))),
    )
  }
  return { value, coefficients, derivatives }
}

/**
 * The k-th directional derivative of every f64 argument's final value along `direction` by
 * nesting the tangent (forward-mode) transform k times: the reference that Taylor mode replaces.
 * Level ℓ doubles the program (each value x gets the tangent of every level-(ℓ−1) slot), so the
 * work grows like 2^k; only the pure k-th derivative is read back (the seeds: each level's
 * tangent of an input is the direction, every mixed tangent is zero). Shaped like `gradient`'s
 * result (a number per f64 scalar, an array per f64 array, null elsewhere).
 */
export function nestedTangentDerivative(f: TenetFunction, args: unknown[], options: TaylorOptions): Gradient {
  optionsOf('nestedTangentDerivative', options, false)
  argsOf('nestedTangentDerivative', args)
  if (!Array.isArray(options.direction))
    argError(
      `\`nestedTangentDerivative\` needs \`direction\`, an array shaped like the arguments, got ${typeof options.direction}`,
    )
  indexList('nestedTangentDerivative', 'wrt', options.wrt)
  const { order } = options
  if (!Number.isInteger(order) || order < 1) throw new RangeError(`the order must be a positive integer, got ${order}`)
  const program = nestedTangent(f, order)
  const params = f.ir.params
  const wrt = new Set(options.wrt ?? params.map((_, i) => i))
  const argv = program.layout.map(([i, levels]) => {
    const a = args[i]
    const copy = (x: unknown) =>
      ArrayBuffer.isView(x) ? (x as Float64Array).slice() : Array.isArray(x) ? x.slice() : x
    if (levels === 0) return copy(a)
    const d = wrt.has(i) && popcount(levels) === 1 ? options.direction[i] : undefined
    if (typeof a === 'number') return typeof d === 'number' ? d : 0
    if (ArrayBuffer.isView(a)) {
      const buf = new Float64Array((a as Float64Array).length)
      if (d !== null && d !== undefined && typeof d !== 'number') buf.set(d as ArrayLike<number>)
      return buf
    }
    return new Array<number>((a as unknown[]).length).fill(0)
  })
  const out = program.fn(...argv)
  const all = (1 << order) - 1
  return params.map((_, i) => {
    const at = program.layout.findIndex(([p, levels]) => p === i && levels === all)
    if (at < 0) return null
    const v = out[at]
    return typeof v === 'number' ? v : ArrayBuffer.isView(v) ? (v as Float64Array).slice() : null
  })
}

function popcount(n: number): number {
  let c = 0
  for (; n; n &= n - 1) c++
  return c
}

const nestedCache = new WeakMap<TenetFunction, Map<number, { fn: TenetFunction; layout: Array<[number, number]> }>>()

/**
 * f's tangent nested `order` times (see `nestedTangentDerivative`), compiled with f's backend:
 * `layout[j]` is (the parameter of f, the bit set of the levels of which parameter j is the
 * tangent); level bit set 0 is f's own parameter. For benchmarks that drive the core directly.
 */
export function compileNestedTangent(
  f: TenetFunction,
  order: number,
): { fn: TenetFunction; layout: Array<[number, number]> } {
  if (!Number.isInteger(order) || order < 1) throw new RangeError(`the order must be a positive integer, got ${order}`)
  return nestedTangent(f, order)
}

function nestedTangent(f: TenetFunction, order: number): { fn: TenetFunction; layout: Array<[number, number]> } {
  let byOrder = nestedCache.get(f)
  const hit = byOrder?.get(order)
  if (hit) return hit
  let fn = f
  let layout: Array<[number, number]> = f.ir.params.map((_, i) => [i, 0])
  for (let level = 0; level < order; level++) {
    const ct = compileTangent(fn, 1)
    const next = layout.slice()
    ct.slots.forEach((s, j) => {
      if (s) next[s.index] = [layout[j]![0], layout[j]![1] | (1 << level)]
    })
    fn = ct.tangent
    layout = next
  }
  const out = { fn, layout }
  if (!byOrder) nestedCache.set(f, (byOrder = new Map()))
  byOrder.set(order, out)
  return out
}
