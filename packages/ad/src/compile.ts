/**
 * Compiles the adjoint of a Tenet function: generate the adjoint IR (and that of every callee),
 * then check, invert and compile it with the backend and options of the original function.
 * One compilation per (function, direction), cached.
 */
import {
  TenetError,
  TenetStaticError,
  type BackendSpec,
  type CompiledFunction,
  type FunctionDef,
  type Param,
  type Registry,
  type Stmt,
} from '@tenet/ir'
import {
  TENET_FUNCTION,
  compileModule,
  isTenetFunction,
  type TenetFunction,
  type TenetFunctionInfo,
  type TenetModule,
} from '@tenet/reversible'
import { inlineTopLevelCalls, pureValueKeys, walk } from '@tenet/ir/backend'
import { registryPartials } from './expr.js'
import { AdjointBuilder, SINK, gradientSlots, hasGradient, type GradientSlot } from './transform.js'
import { dropDeadUpdatesIn, onlyAccumulates } from './dead.js'
import { ref } from './expr.js'
import { TangentBuilder, tangentSlots, unitVariant, type TangentSlot } from './tangent.js'
import { accumulatesOnly } from './accumulate-only.js'

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

/** The `TenetFunctionInfo` of a Tenet function, or a clear error for anything else. */
export function infoOf(f: TenetFunction): TenetFunctionInfo {
  const info = (f as Partial<TenetFunction> | undefined)?.[TENET_FUNCTION as never] as TenetFunctionInfo | undefined
  if (typeof f !== 'function' || !info)
    throw new TypeError('expected a Tenet function (from `rev` or `compileModule`), e.g. `m.f`')
  return info
}

/**
 * Compiles generated core IR functions with the backend, checks and tolerance of the function
 * they were generated from. The program's functions are already linked, so interpolated Tenet
 * functions are hidden from the linker.
 */
export function compileGenerated(info: TenetFunctionInfo, registry: Registry, functions: FunctionDef[]): TenetModule {
  const hosts = info.program.hosts.map((h) => (isTenetFunction(h) ? null : h))
  return compileModule(
    { kind: 'module', functions, hosts },
    {
      registry,
      backend: info.options.backend,
      checks: info.options.checks,
      tolerance: info.options.tolerance,
    },
  )
}

/**
 * A backend that compiles nothing: the functions of a program it "compiles" throw when called.
 * For a generated program that is only read as checked IR (see `checkGenerated`).
 */
const CHECKED_IR_ONLY: BackendSpec = {
  specificationVersion: 'v1',
  name: 'ad_checked_ir',
  priority: Number.NEGATIVE_INFINITY,
  capabilities: { f64: true, recursion: true, exceptions: true },
  description: 'checks and inverts a generated program without compiling it (internal to @tenet/ad)',
  isAvailable: () => false,
  doCompile: (program) => ({
    get(name) {
      const fn = (() => {
        throw new TenetError(
          'ad/internal',
          `\`${name}\` was checked as IR for a transform, not compiled: it cannot run`,
        )
      }) as unknown as CompiledFunction
      Object.defineProperty(fn, 'results', { value: new Float64Array(program.functions.get(name)!.params.length) })
      return fn
    },
  }),
}

/**
 * Like `compileGenerated`, but the program is only checked and inverted, not compiled: its
 * functions carry the checked IR and inverses that a transform reads (`infoOf`), and throw
 * when called. Their options are f's but the backend (`ad_checked_ir`): a program made from
 * theirs is compiled with f's options (`compileGenerated(info, …)`).
 */
export function checkGenerated(info: TenetFunctionInfo, registry: Registry, functions: FunctionDef[]): TenetModule {
  const r = registry.clone().registerBackend(CHECKED_IR_ONLY)
  const hosts = info.program.hosts.map((h) => (isTenetFunction(h) ? null : h))
  return compileModule(
    { kind: 'module', functions, hosts },
    { registry: r, backend: CHECKED_IR_ONLY.name, checks: info.options.checks, tolerance: info.options.tolerance },
  )
}

/** The functions of `functions` that `entry` reaches by calls and uncalls, in their order. */
export function reachableFrom(functions: FunctionDef[], entry: string): FunctionDef[] {
  const byName = new Map(functions.map((g) => [g.name, g]))
  const seen = new Set([entry])
  const queue = [entry]
  while (queue.length) {
    const g = byName.get(queue.pop()!)
    if (!g) continue
    walk(g.body, (s) => {
      if (s.kind === 'callstmt' && byName.has(s.callee) && !seen.has(s.callee)) {
        seen.add(s.callee)
        queue.push(s.callee)
      }
    })
  }
  return functions.filter((g) => seen.has(g.name))
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
export function compileAdjoint(f: TenetFunction, width = 1, constants: readonly number[] = []): CompiledAdjoint {
  if (!Number.isInteger(width) || width < 1)
    throw new RangeError(`the adjoint width must be a positive integer, got ${width}`)
  if (constants.length) return compileConstantAdjoint(f, constants)
  let byWidth = cache.get(f)
  const hit = byWidth?.get(width)
  if (hit) return hit
  const info = infoOf(f)
  const registry = info.registry.clone()
  const builder = new AdjointBuilder(
    info.program,
    info.inverses,
    registry,
    registryPartials(registry, info.program.hosts),
    width,
  )
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

const constantCache = new WeakMap<TenetFunction, Map<string, CompiledAdjoint>>()

/**
 * The adjoint of `f` with the arguments `constants` (indices) held constant: no gradient
 * parameters for them, nothing accumulated into them (see `AdjointBuilder.withConstants`). Only
 * float arguments that `f` never writes can be held constant (else an `ad/argument` error): a
 * written one passes its gradient on to others.
 */
function compileConstantAdjoint(f: TenetFunction, constants: readonly number[]): CompiledAdjoint {
  const info = infoOf(f)
  const params = f.ir.params
  const set = heldArguments(f, constants)
  const key = [...set].sort((a, b) => a - b).join(',')
  let byKey = constantCache.get(f)
  const hit = byKey?.get(key)
  if (hit) return hit
  const registry = info.registry.clone()
  const builder = new AdjointBuilder(
    info.program,
    info.inverses,
    registry,
    registryPartials(registry, info.program.hosts),
    1,
  )
  const name = builder.withConstants(info.name, new Set([...set].map((i) => params[i]!.name)))
  const functions = builder.build()
  const module = compileGenerated(info, registry, functions)
  const out: CompiledAdjoint = {
    params,
    slots: gradientSlots(params, info.registry, 1, set),
    width: 1,
    adjoint: module[name]!,
    functions,
    forward: f.core,
    inverse: f.inverse.core,
    info,
  }
  if (!byKey) constantCache.set(f, (byKey = new Map()))
  byKey.set(key, out)
  return out
}

/**
 * The arguments `constants` (indices) of `f`, checked: each a float scalar or array that `f`
 * (a forward function) never writes, else an `ad/argument` error (a written one passes its
 * gradient on to others).
 */
function heldArguments(f: TenetFunction, constants: readonly number[]): Set<number> {
  const info = infoOf(f)
  const params = f.ir.params
  const set = new Set<number>()
  for (const i of constants) {
    const p = params[i]
    if (!Number.isInteger(i) || !p)
      throw new TenetError(
        'ad/argument',
        `\`constants\` lists argument ${String(i)}, but \`${info.name}\` has arguments 0..${params.length - 1}`,
      )
    if (!hasGradient(p.type, info.registry) || p.type.kind === 'stack')
      throw new TenetError(
        'ad/argument',
        `\`constants\` lists argument ${i} (\`${p.name}\`), which is not a float scalar or array: it has no gradient anyway`,
      )
    if (info.inverse || info.program.writes.get(info.name)![i])
      throw new TenetError(
        'ad/argument',
        `argument ${i} (\`${p.name}\`) is written by \`${info.name}\`${info.inverse ? ' (an inverse)' : ''}, so it cannot be held constant: only arguments the function only reads can`,
      )
    set.add(i)
  }
  return set
}

const fusedCache = new WeakMap<TenetFunction, Map<string, TenetFunction | null>>()

/** A gradient program as IR: the entry, every function it may call, and the registry to compile them with. */
interface GradientProgramIR {
  entry: FunctionDef
  functions: FunctionDef[]
  registry: Registry
}

/**
 * The gradient program of `f` (forward direction) for the loss parameter `loss`, as IR: the
 * one-pass program, else (without `plain`) the adjoint-only one, else the routine-fused one (see
 * `compileFused`); with `plain`, else `f` then its adjoint in one function. Parameters: the
 * adjoint's, then `$loss`. Null when none applies.
 */
function gradientProgram(
  f: TenetFunction,
  loss: number,
  plain: boolean,
  constants: ReadonlySet<string> = new Set(),
): GradientProgramIR | null {
  const info = infoOf(f)
  if (info.inverse) return null
  // (the plain program, f then its adjoint, is built for second order only: no constants there)
  if (plain && constants.size) return null
  const registry = info.registry.clone()
  const builder = new AdjointBuilder(
    info.program,
    info.inverses,
    registry,
    registryPartials(registry, info.program.hosts),
    1,
  )
  // without run-time checks, a first-order program's adjoints keep the stages of loops whose
  // inverse follows in the same block instead of recomputing them (see stage-history.ts)
  builder.stageHistories = !plain && info.options.checks === false
  builder.checked = info.options.checks !== false
  const lossParam = f.ir.params[loss]
  const lossName = lossParam?.name
  const onePass = builder.onePass(info.name, lossName, constants)
  // (first order only: the second-order programs keep the ones their passes were tuned on)
  const adjointOnly = onePass || plain ? undefined : builder.adjointOnly(info.name, lossName, constants)
  const adj = onePass || adjointOnly ? undefined : builder.request(info.name, false)
  let entry = onePass ?? adjointOnly ?? builder.fused(info.name, lossName, constants)
  const generated = builder.build()
  if (!entry) {
    if (!plain || !lossParam || lossParam.type.kind !== 'scalar') return null
    // f, the loss value, then the adjoint
    const adjoint = generated.find((g) => g.name === adj)!
    const call = (callee: string, params: Param[]): Stmt =>
      ({ kind: 'callstmt', callee, args: params.map((p) => ref(p.name)), inverse: false }) as Stmt
    entry = {
      kind: 'fn',
      name: `${adj}$grad`,
      params: [...adjoint.params, { name: '$loss', type: { kind: 'scalar', name: 'f64' } }],
      body: [
        call(info.name, f.ir.params),
        {
          kind: 'update',
          op: '+=',
          target: ref('$loss'),
          value:
            lossParam.type.name === 'f64'
              ? ref(lossParam.name)
              : { kind: 'call', callee: 'f64', args: [ref(lossParam.name)] },
        } as Stmt,
        call(adj!, adjoint.params),
      ],
    }
  }
  // the forward part calls f's callees (and the plain program f itself): compiled beside the adjoints
  const taken = new Set(generated.map((g) => g.name))
  return {
    entry,
    functions: [...generated, ...[...info.program.functions.values()].filter((g) => !taken.has(g.name)), entry],
    registry,
  }
}

/**
 * The fused gradient program of `f` for the loss parameter `loss`, compiled like the adjoint:
 * the one-pass program when f only accumulates the loss from values it never writes (see
 * `FunctionAdjoint.buildOnePass`), else the adjoint-only program when f only accumulates the loss
 * and writes no other argument (see `FunctionAdjoint.buildAdjointOnly`), else the program that
 * skips the cancelling uncompute and recompute of a top-level routine (with run-time checks off;
 * with them on it keeps them, as the uncompute may fail a check: see `FunctionAdjoint.buildFused`); null when none applies (then the driver runs `f` and its adjoint). When `f` was compiled without run-time
 * checks, updates whose results neither the gradients nor the loss value need are dropped (see
 * `dropDeadUpdatesIn`), and the values are left unspecified. Its
 * parameters are the adjoint's plus `$loss`; started with the inputs and seeded gradients it
 * returns the gradients, leaves the values at the inputs (with checks) and reports the loss value.
 *
 * The one-pass and adjoint-only programs of an f64 loss take the loss's gradient to be 1, the
 * seed `grad` passes (the derivative of the loss with respect to itself): the parameter stays in
 * the layout, but another value there is not read.
 *
 * `constants` (indices of arguments held constant, see `GradOptions.constants`; checked as for
 * `compileAdjoint`): the programs of the constant adjoint (`AdjointBuilder.withConstants`): no
 * gradient parameter for them, nothing zeroed, accumulated or propagated into them; their values
 * are read-only inputs. The parameters are then those of `compileAdjoint(f, 1, constants)` plus `$loss`.
 *
 * `scratch` (indices of array arguments, see `GradOptions.scratch`): with run-time checks off, the
 * program's parameters for their values and gradients are marked `scratch` (see `Param.scratch`):
 * the caller passes zeros there and reads nothing back, so that pass `contract-arrays` may keep
 * their elements in scalars. The caller must then do so (the \`grad\` drivers do).
 */
export function compileFused(
  f: TenetFunction,
  loss: number,
  constants: readonly number[] = [],
  scratch: readonly number[] = [],
): TenetFunction | null {
  const held = heldArguments(f, constants)
  const info = infoOf(f)
  // (the hint is read with run-time checks off only: one program either way with them on)
  const marked = info.options.checks === false ? [...new Set(scratch)].sort((a, b) => a - b) : []
  const key = `${loss}/${[...held].sort((a, b) => a - b).join(',')}/${marked.join(',')}`
  let byLoss = fusedCache.get(f)
  if (byLoss?.has(key)) return byLoss.get(key)!
  let out: TenetFunction | null = null
  // a stack parameter: its gradient stack must have one entry per value the forward run leaves on
  // it, known only after that run, so the driver runs f and then its adjoint (NiLang's "AD over
  // pop": pushing onto a stack parameter a value the loss reads)
  const stacks = f.ir.params.some((p) => p.type.kind === 'stack')
  const gp = stacks ? null : gradientProgram(f, loss, false, new Set([...held].map((i) => f.ir.params[i]!.name)))
  if (gp) {
    let { entry, functions } = gp
    if (info.options.checks === false) {
      // only the gradients and the loss value are read back: drop the updates nothing reads
      const observed = new Set(
        entry.params
          .slice(f.ir.params.length)
          .map((p) => p.name)
          .filter((n) => n !== SINK),
      )
      ;({ entry, functions } = dropDeadUpdatesIn(functions, entry, observed, gp.registry))
      if (marked.length) {
        const marks = scratchParams(f, entry.params, marked, held, gp.registry)
        const params = entry.params.map((p) => (marks.has(p.name) ? { ...p, scratch: true } : p))
        const named = { ...entry, params }
        functions = functions.map((g) => (g === entry ? named : g))
        entry = named
      }
    }
    out = compileGenerated(info, gp.registry, functions)[entry.name]!
  }
  if (!byLoss) fusedCache.set(f, (byLoss = new Map()))
  byLoss.set(key, out)
  return out
}

/**
 * The names of the gradient program's parameters that the driver passes as zeros and reads
 * nothing back from, for scratch arguments `scratch` of `f` (see `GradOptions.scratch`): each
 * scratch argument's values (the driver's zero arrays; with run-time checks off a fused program
 * leaves the values unspecified) and its gradient (zeroed before every call, never handed out).
 */
function scratchParams(
  f: TenetFunction,
  programParams: readonly Param[],
  scratch: readonly number[],
  held: ReadonlySet<number>,
  registry: Registry,
): Set<string> {
  const params = f.ir.params
  const slots = gradientSlots(params, registry, 1, held)
  const out = new Set<string>()
  for (const i of scratch) {
    const p = params[i]
    if (p?.type.kind !== 'array' || programParams[i]?.name !== p.name) continue
    out.add(p.name)
    const g = slots[i] && programParams[slots[i].index]
    if (g?.type.kind === 'array') out.add(g.name)
  }
  return out
}

const twoSweepCache = new WeakMap<TenetFunction, Map<number, TenetFunction | null>>()

/**
 * The two-sweep gradient program of `f` for the loss parameter `loss` as one function (`f`, the
 * loss value, then f's adjoint), with the calls each sweep makes once per run inlined into it (see
 * `inlineTopLevelCalls`), so that the backend's passes see both sweeps in one body: the values of
 * an expensive pure primitive that both apply to an array neither writes (ROT's cos θ and sin θ)
 * are then computed once, into a table (pass `tabulate-sweeps`). Its parameters and results are
 * those of the fused programs (see `compileFused`); started with the inputs and seeded gradients,
 * it leaves the values at the inputs, as f and its adjoint do. Built only where it can share
 * something: `f` compiled without run-time checks (the pass runs only then), a scalar loss, no
 * stack parameter, and a forward sweep that applies such a primitive to such an array (see
 * `pureValueKeys`; the adjoint's rule applies it again); null otherwise (the driver then calls f
 * and its adjoint).
 */
export function compileTwoSweep(f: TenetFunction, loss: number): TenetFunction | null {
  let byLoss = twoSweepCache.get(f)
  if (byLoss?.has(loss)) return byLoss.get(loss)!
  const info = infoOf(f)
  let out: TenetFunction | null = null
  const stacks = f.ir.params.some((p) => p.type.kind === 'stack')
  const def = info.program.functions.get(info.name)
  // f's sweep (its body, the calls it makes once inlined) applies a primitive worth a table to an
  // array it never writes: its adjoint, which writes the values f writes and no other, applies it
  // again (ROT's rule, sincos's); asked first, so that no program is generated in vain
  const shares =
    !stacks &&
    !info.inverse &&
    info.options.checks === false &&
    def !== undefined &&
    pureValueKeys(inlineTopLevelCalls(def, info.program.functions), info.registry, new Set(), info.program.writes).some(
      (k) => k.size > 0,
    )
  const gp = shares ? gradientProgram(f, loss, true) : null
  if (gp?.entry.name.endsWith('$grad')) {
    const byName = new Map(gp.functions.map((g) => [g.name, g]))
    const entry = inlineTopLevelCalls(gp.entry, byName)
    const functions = gp.functions.map((g) => (g === gp.entry ? entry : g))
    out = compileGenerated(info, gp.registry, functions)[entry.name]!
  }
  if (!byLoss) twoSweepCache.set(f, (byLoss = new Map()))
  byLoss.set(loss, out)
  return out
}

/**
 * The forward-mode gradient program of a function of one float scalar (besides the loss): its
 * tangent, seeded along that scalar, carries the derivative of the loss. See
 * `compileForwardGradient`.
 */
export interface CompiledForwardGradient {
  /** The compiled tangent (width 1): parameters (values…, tangents…), as `tangentSlots` lays them out. */
  core: CompiledFunction
  /** The same tangent as a Tenet function (for `generatedCode`, through `GradientFunction.program`). */
  fn: TenetFunction
  /** The index of the one float parameter besides the loss (the input whose tangent is seeded with 1). */
  input: number
  /** Per parameter: the index of its tangent among the core's parameters (−1: none). */
  tangentAt: number[]
}

const forwardCache = new WeakMap<TenetFunction, Map<number, CompiledForwardGradient | null>>()

/**
 * The forward-mode gradient program of `f` for the loss parameter `loss`, when it applies: every
 * parameter of `f` is a scalar, the float ones are f64 or f32, there are exactly two of them (the
 * loss and one input x), and `f` only accumulates into the loss (`loss += e`, `loss -= e` with e
 * not reading it; see `onlyAccumulates`). Then the gradient is (1, ∂loss/∂x): one run of the
 * tangent of `f` seeded with ẋ = 1 gives the second, and the first is exact. This costs about one
 * run of `f` where reverse mode costs a run and an adjoint run (the paper's remark on the Bessel
 * function, whose forward-mode gradients beat its reverse-mode ones). When `f` was compiled without
 * run-time checks, the updates that neither the loss nor its tangent need are dropped (see
 * `dropDeadUpdatesIn`): a routine's uncompute goes. Null when it does not apply.
 */
export function compileForwardGradient(f: TenetFunction, loss: number): CompiledForwardGradient | null {
  let byLoss = forwardCache.get(f)
  if (byLoss?.has(loss)) return byLoss.get(loss)!
  const input = forwardGradientInput(f, loss)
  const out = input === null ? null : buildForwardGradient(f, loss, input)
  if (!byLoss) forwardCache.set(f, (byLoss = new Map()))
  byLoss.set(loss, out)
  return out
}

/**
 * Whether `f` has the shape that forward-mode gradients need (see `compileForwardGradient`):
 * scalar parameters, two float ones (f64 or f32) of which `loss` is one, the loss only
 * accumulated into. (Its tangent may still be impossible to build.)
 */
export function hasForwardGradientShape(f: TenetFunction, loss: number): boolean {
  return forwardGradientInput(f, loss) !== null
}

/** The index of the input x when `f` has the forward-gradient shape, else null. */
function forwardGradientInput(f: TenetFunction, loss: number): number | null {
  const info = infoOf(f)
  const params = f.ir.params
  const floats = params.flatMap((p, i) => (hasGradient(p.type, info.registry) ? [i] : []))
  const lossParam = params[loss]
  const def = info.program.functions.get(info.name)
  const ok =
    !info.inverse &&
    !!def &&
    !!lossParam &&
    floats.length === 2 &&
    floats.includes(loss) &&
    params.every(
      (p, i) => p.type.kind === 'scalar' && (!floats.includes(i) || p.type.name === 'f64' || p.type.name === 'f32'),
    ) &&
    onlyAccumulates(def.body, lossParam.name)
  return ok ? floats.find((i) => i !== loss)! : null
}

/** The forward-mode gradient program of an eligible `f`; null when forward mode cannot differentiate it (a bijection without a tangent rule). */
function buildForwardGradient(f: TenetFunction, loss: number, input: number): CompiledForwardGradient | null {
  const info = infoOf(f)
  let generated: ReturnType<typeof tangentFunctions>
  try {
    generated = tangentFunctions(f, 1)
  } catch (e) {
    // reverse mode may still apply (a bijection with an adjoint snippet but no tangent rule)
    if (TenetStaticError.isInstance(e) && e.code.startsWith('ad/')) return null
    throw e
  }
  const { registry, name, functions } = generated
  const tangentAt = tangentSlots(f.ir.params, info.registry, 1).map((s) => s?.index ?? -1)
  let entry = functions.find((g) => g.name === name)!
  let all = functions
  if (info.options.checks === false) {
    // only the loss and its tangent are read back
    const observed = new Set([entry.params[loss]!.name, entry.params[tangentAt[loss]!]!.name])
    ;({ entry, functions: all } = dropDeadUpdatesIn(functions, entry, observed, registry))
  }
  const fn = compileGenerated(info, registry, all)[entry.name]!
  return { core: fn.core, fn, input, tangentAt }
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
  const { info, registry, name, functions } = tangentFunctions(f, width)
  const module = compileGenerated(info, registry, functions)
  const params = f.ir.params
  const out: CompiledTangent = {
    params,
    slots: tangentSlots(params, info.registry, width),
    width,
    tangent: module[name]!,
    functions,
    info,
  }
  if (!byWidth) tangentCache.set(f, (byWidth = new Map()))
  byWidth.set(width, out)
  return out
}

/** The tangent IR of `f` at width `width` (its callees' included), not compiled yet, and the registry to compile it with. */
function tangentFunctions(
  f: TenetFunction,
  width: number,
  units: readonly number[] = [],
  rows: readonly number[] = [],
): { info: TenetFunctionInfo; registry: Registry; name: string; functions: FunctionDef[] } {
  const info = infoOf(f)
  const registry = info.registry.clone()
  const builder = new TangentBuilder(
    info.program,
    info.inverses,
    registry,
    registryPartials(registry, info.program.hosts),
    width,
  )
  const name = builder.request(info.name, info.inverse, unitVariant(units, rows))
  return { info, registry, name, functions: builder.build() }
}

/** A compiled second-order program (the tangent of a gradient program) and what is needed to drive it. */
export interface CompiledSecondOrder {
  /** The differentiated function's parameters. */
  params: Param[]
  /** Per parameter of f: where its gradient is among the gradient program's parameters (as in the adjoint). */
  gradientSlots: Array<GradientSlot | null>
  /** The gradient program's parameters: the adjoint's (values…, gradients…, sink), then `$loss`. */
  programParams: Param[]
  /** Per parameter of the gradient program: where its tangent goes in `program` (see `tangentSlots`). */
  slots: Array<TangentSlot | null>
  /** Directions carried at once. */
  width: number
  /**
   * The tangent of the gradient program: parameters (gradient-program parameters…, tangents…).
   * Started with the inputs, seeded gradients and input tangents v₁…v_w, the tangents of the
   * gradients are H·v₁ … H·v_w. Without run-time checks everything else it leaves is unspecified.
   */
  program: TenetFunction
  /** Every function of `program`'s module, as core IR. */
  functions: FunctionDef[]
  /**
   * The unit-seeded parameters of f (see `unitVariant`), in order: `param`, f's parameter, and
   * `index`, the position of its i32 offset parameter in `program` (after the tangents). A run
   * seeds the tangent of such an array with unit vectors only (element o + k in direction k, o
   * the offset), as `hessian` does; empty unless `compileSecondOrder` was asked for some. `from`,
   * where present: the position of the offset below which the program skips the rows of the
   * parameter's gradient tangent (set to the same o: the rows above the sweep's first column,
   * which the symmetry of the Hessian gives).
   */
  units: Array<{ param: number; index: number; from?: number }>
}

const secondOrderCache = new WeakMap<TenetFunction, Map<string, CompiledSecondOrder>>()

/**
 * The forward-over-reverse program of `f` for the loss parameter `loss` at width `width`: the
 * tangent transform of f's gradient program (the fused or one-pass program where one applies,
 * else f followed by its adjoint), so that one run carries w Hessian-vector products. Compiled
 * with the backend, checks and tolerance of `f`; without checks, the updates that the gradient
 * tangents do not need (the loss, the gradients themselves, the uncomputation of values) are
 * dropped (see `dropDeadUpdatesIn`).
 *
 * `units` (parameter indices of f) asks for the unit-seed variant (see `unitVariant` in
 * tangent.ts) for those of them that are f64 arrays the gradient program does not write: their
 * tangents must then hold unit seeds at the offsets the program takes (`CompiledSecondOrder.units`).
 */
export function compileSecondOrder(
  f: TenetFunction,
  loss: number,
  width: number,
  units: readonly number[] = [],
): CompiledSecondOrder {
  if (!Number.isInteger(width) || width < 1)
    throw new RangeError(`the tangent width must be a positive integer, got ${width}`)
  const key = `${loss}/${width}/${unitVariant(units)}`
  let byKey = secondOrderCache.get(f)
  const hit = byKey?.get(key)
  if (hit) return hit
  const info = infoOf(f)
  const gp = gradientProgram(f, loss, true)
  if (!gp)
    throw new TypeError(
      `no gradient program for \`${info.name}\` (an inverse function, or a loss that is not a scalar)`,
    )
  // the gradient program is checked and inverted so that the tangent transform can read it (not
  // compiled: only the program's tangent runs)
  const g = checkGenerated(info, gp.registry, gp.functions)[gp.entry.name]!
  const programParams = gp.entry.params
  const gWrites = infoOf(g).program.writes.get(gp.entry.name)
  // (the rule `FunctionTangent` applies: f64 arrays with a tangent that the program never writes)
  const accepted = [...new Set(units)]
    .sort((a, b) => a - b)
    .filter((i) => {
      const t = programParams[i]?.type
      return i < f.ir.params.length && t?.kind === 'array' && t.elem === 'f64' && gWrites?.[i] === false
    })
  const gradSlots = gradientSlots(f.ir.params, info.registry)
  // the gradients of unit-seeded arrays that the program only accumulates into: their rows above
  // a sweep's first column are skipped (only when checks are off: the skipped rows are not zero)
  const gFunctions = infoOf(g).program.functions
  const rows = new Map<number, number>()
  if (info.options.checks === false)
    for (const i of accepted) {
      const s = gradSlots[i]
      if (s?.kind === 'array' && accumulatesOnly(gFunctions, gp.entry.name, s.index)) rows.set(i, s.index)
    }
  const { info: gInfo, registry, name, functions: tangents } = tangentFunctions(g, width, accepted, [...rows.values()])
  let functions = tangents
  const slots = tangentSlots(programParams, gInfo.registry, width)
  let offsets = programParams.length
  for (const t of slots) if (t) offsets += t.kind === 'scalar' ? width : 1
  // the row offsets follow the unit offsets, in the order of their parameters
  const rowOrder = [...rows.entries()].sort((a, b) => a[1] - b[1]).map(([i]) => i)
  if (info.options.checks === false) {
    // only the tangents of the gradients are read back
    const entry = functions.find((x) => x.name === name)!
    const observed = new Set<string>()
    gradSlots.forEach((s) => {
      const t = s && slots[s.index]
      if (!t) return
      for (let k = 0; k < (t.kind === 'scalar' ? width : 1); k++) observed.add(entry.params[t.index + k]!.name)
    })
    functions = dropDeadUpdatesIn(functions, entry, observed, registry).functions
  }
  // (with f's backend: \`gInfo\`'s compiles nothing; only what the entry calls, as the specialised
  // copies of \`dropDeadUpdatesIn\` leave the functions they were made from uncalled)
  functions = reachableFrom(functions, name)
  const program = compileGenerated(info, registry, functions)[name]!
  const out: CompiledSecondOrder = {
    params: f.ir.params,
    gradientSlots: gradSlots,
    programParams,
    slots,
    width,
    program,
    functions,
    units: accepted.map((param, j) =>
      rows.has(param)
        ? { param, index: offsets + j, from: offsets + accepted.length + rowOrder.indexOf(param) }
        : { param, index: offsets + j },
    ),
  }
  if (!byKey) secondOrderCache.set(f, (byKey = new Map()))
  byKey.set(key, out)
  return out
}
