/**
 * Compiles the adjoint of a Tenet function: generate the adjoint IR (and that of every callee),
 * then check, invert and compile it with the backend and options of the original function.
 * One compilation per (function, direction), cached.
 */
import { standardPrimitives, type CompiledFunction, type FunctionDef, type Param, type Registry } from '@tenet/ir'
import { TENET_FUNCTION, compileModule, type TenetFunction, type TenetFunctionInfo, type TenetModule } from '@tenet/reversible'
import { registryPartials } from './expr.js'
import { AdjointBuilder, SINK, gradientSlots, type GradientSlot } from './transform.js'
import { dropDeadUpdates } from './dead.js'
import { TangentBuilder, tangentSlots, type TangentSlot } from './tangent.js'

/** A compiled adjoint and what is needed to drive it. */
export interface CompiledAdjoint {
  /** The differentiated function's parameters. */
  params: Param[]
  /** Per parameter: where its gradient goes in the adjoint (null: no gradient). */
  slots: Array<GradientSlot | null>
  /** Directions carried by one reverse sweep (1, or w for the vector-mode adjoint). */
  width: number
  /** The compiled adjoint: parameters (values…, gradients…, sink). */
  adjoint: TenetFunction
  /** Every generated function (adjoints of callees and snippet helpers included), as core IR. */
  functions: FunctionDef[]
  /** The forward core of the differentiated function. */
  forward: CompiledFunction
  /** The inverse core of the differentiated function. */
  inverse: CompiledFunction
  info: TenetFunctionInfo
}

const cache = new WeakMap<TenetFunction, Map<number, CompiledAdjoint>>()
/** The standard pure primitives by name (their built-in derivative rules apply only to these specs). */
export const standard = new Map<string, unknown>(standardPrimitives.map((p) => [p.name, p]))

/** The `TenetFunctionInfo` of a Tenet function, or a clear error for anything else. */
export function infoOf(f: TenetFunction): TenetFunctionInfo {
  const info = (f as Partial<TenetFunction> | undefined)?.[TENET_FUNCTION as never] as TenetFunctionInfo | undefined
  if (typeof f !== 'function' || !info) throw new TypeError('expected a Tenet function (from `rev` or `compileModule`), e.g. `m.f`')
  return info
}

/**
 * Compiles generated core IR functions with the backend, checks and tolerance of the function
 * they were generated from. The program's functions are already linked, so interpolated Tenet
 * functions are hidden from the linker.
 */
function compileGenerated(info: TenetFunctionInfo, registry: Registry, functions: FunctionDef[]): TenetModule {
  const hosts = info.program.hosts.map((h) => (typeof h === 'function' && (h as Partial<TenetFunction>)[TENET_FUNCTION as never] ? null : h))
  return compileModule({ kind: 'module', functions, hosts }, {
    registry, backend: info.options.backend, checks: info.options.checks, tolerance: info.options.tolerance,
  })
}

/**
 * The adjoint of `f` (for `m.f.inverse`, the adjoint of the inverse), generated once and compiled
 * with the same backend, checks and tolerance as `f`. Its parameters are f's parameters, then one
 * gradient per float parameter (`g_<name>`: f64 → f64, f64[] → f64[], stack<f64> → stack<f64>),
 * then the scalar sink `g$sink` that collects gradients with respect to constants.
 *
 * With `width` w > 1 it is the vector-mode adjoint `f$adj<w>`: one reverse sweep carries w
 * gradient directions (w output seeds at once), each float scalar having w gradient parameters
 * and each float array of length n one gradient array of length n·w, element-major (see
 * `GradientSlot`). `jacobian`'s reverse mode uses it for w rows per sweep.
 */
export function compileAdjoint(f: TenetFunction, width = 1): CompiledAdjoint {
  if (!Number.isInteger(width) || width < 1) throw new RangeError(`the adjoint width must be a positive integer, got ${width}`)
  let byWidth = cache.get(f)
  const hit = byWidth?.get(width)
  if (hit) return hit
  const info = infoOf(f)
  const registry = info.registry.clone()
  const builder = new AdjointBuilder(info.program, info.inverses, registry, registryPartials(registry, standard), width)
  const name = builder.request(info.name, info.inverse)
  const functions = builder.build()
  const module = compileGenerated(info, registry, functions)
  const params = f.ir.params
  const out: CompiledAdjoint = {
    params,
    slots: gradientSlots(params, info.registry, width),
    width,
    adjoint: module[name]!,
    functions,
    forward: f.core,
    inverse: f.inverse.core,
    info,
  }
  if (!byWidth) cache.set(f, (byWidth = new Map()))
  byWidth.set(width, out)
  return out
}

const fusedCache = new WeakMap<TenetFunction, Map<number, TenetFunction | null>>()

/**
 * The fused gradient program of `f` for the loss parameter `loss`, compiled like the adjoint:
 * the one-pass program when f only accumulates the loss from values it never writes (see
 * `FunctionAdjoint.buildOnePass`), else the program that skips the cancelling uncompute and
 * recompute of a top-level routine (see `FunctionAdjoint.buildFused`); null when neither
 * applies (then the driver runs `f` and its adjoint). When `f` was compiled without run-time
 * checks, updates whose results neither the gradients nor the loss value need are dropped (see
 * `dropDeadUpdates`), and the values are left unspecified. Its
 * parameters are the adjoint's plus `$loss`; started with the inputs and seeded gradients it
 * returns the gradients, leaves the values at the inputs (with checks) and reports the loss value.
 */
export function compileFused(f: TenetFunction, loss: number): TenetFunction | null {
  let byLoss = fusedCache.get(f)
  if (byLoss?.has(loss)) return byLoss.get(loss)!
  const info = infoOf(f)
  let out: TenetFunction | null = null
  if (!info.inverse) {
    const registry = info.registry.clone()
    const builder = new AdjointBuilder(info.program, info.inverses, registry, registryPartials(registry, standard), 1)
    const lossName = f.ir.params[loss]?.name
    const onePass = builder.onePass(info.name, lossName)
    if (!onePass) builder.request(info.name, false)
    let fused = onePass ?? builder.fused(info.name, lossName)
    if (fused && info.options.checks === false) {
      // only the gradients and the loss value are read back: drop the updates nothing reads
      const observed = new Set(fused.params.slice(f.ir.params.length).map((p) => p.name).filter((n) => n !== SINK))
      fused = dropDeadUpdates(fused, observed)
    }
    if (fused) {
      // the forward part calls f's callees: compile them beside the adjoints
      const generated = builder.build()
      const taken = new Set(generated.map((g) => g.name))
      const functions = [...generated, ...[...info.program.functions.values()].filter((g) => !taken.has(g.name)), fused]
      const module = compileGenerated(info, registry, functions)
      out = module[fused.name]!
    }
  }
  if (!byLoss) fusedCache.set(f, (byLoss = new Map()))
  byLoss.set(loss, out)
  return out
}

/** A compiled tangent (forward-mode) function and what is needed to drive it. */
export interface CompiledTangent {
  /** The differentiated function's parameters. */
  params: Param[]
  /** Per parameter: where its tangent goes in the tangent function (null: no tangent). */
  slots: Array<TangentSlot | null>
  /** Directions carried at once. */
  width: number
  /** The compiled tangent: parameters (values…, tangents…), see `tangentSlots` for the layout. */
  tangent: TenetFunction
  /** Every generated function (tangents of callees included), as core IR. */
  functions: FunctionDef[]
  info: TenetFunctionInfo
}

const tangentCache = new WeakMap<TenetFunction, Map<number, CompiledTangent>>()

/**
 * The tangent of `f` at width `width` (w directions at once), generated once and compiled with
 * the same backend, checks and tolerance as `f`. `f` may itself be generated: the tangent of
 * `compileAdjoint(f).adjoint` is the forward-over-reverse (Hessian-vector) program.
 */
export function compileTangent(f: TenetFunction, width = 1): CompiledTangent {
  let byWidth = tangentCache.get(f)
  const hit = byWidth?.get(width)
  if (hit) return hit
  const info = infoOf(f)
  const registry = info.registry.clone()
  const builder = new TangentBuilder(info.program, info.inverses, registry, registryPartials(registry, standard), width)
  const name = builder.request(info.name, info.inverse)
  const functions = builder.build()
  const module = compileGenerated(info, registry, functions)
  const params = f.ir.params
  const out: CompiledTangent = { params, slots: tangentSlots(params, info.registry, width), width, tangent: module[name]!, functions, info }
  if (!byWidth) tangentCache.set(f, (byWidth = new Map()))
  byWidth.set(width, out)
  return out
}
