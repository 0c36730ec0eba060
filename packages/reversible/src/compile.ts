/**
 * The front door: surface module → preprocess → check → invert → a registered backend, wrapped
 * in callables with the public API (`m.f(...)`, `m.f.inverse(...)`, `.source`, `.ir`, `.core`).
 */
import {
  InvertibilityError,
  TenetError,
  check,
  printFunction,
  typeToString,
  type CompileOptions,
  type CompiledFunction,
  type CompiledProgram,
  type FunctionDef,
  type Module,
  type Program,
  type Registry,
  type Stmt,
  type Type,
} from '@tenet/ir'
import { invert, invertSurfaceBody } from './invert.js'
import { annotateDeallocs, preprocess } from './preprocess.js'
import {
  arityError,
  checkArgument,
  describeArgument,
  hostConversionsOf,
  hostParams,
  overlapError,
  overlapGuard,
  sharesMemory,
} from './host-boundary.js'
import { TYPED_SET, fastCall, putStack } from './fast-call.js'
import { RUNNING, checkNested, type CallShape } from './running-calls.js'

/** Marks a Tenet function object; its value describes the compiled program it belongs to. */
export const TENET_FUNCTION = Symbol.for('tenet.function')

/** True for a Tenet function, i.e. one made by `rev` / `compileModule` (it carries {@link TENET_FUNCTION}). */
export function isTenetFunction(x: unknown): x is TenetFunction {
  return typeof x === 'function' && (x as unknown as Record<symbol, unknown>)[TENET_FUNCTION] !== undefined
}

/** Options of `compileModule` (and of `rev.with(...)`). */
export interface TenetOptions {
  registry: Registry
  /** Backend name; the registry's highest-priority backend when omitted. */
  backend?: string
  /** Run-time reversibility checks (default true). */
  checks?: boolean
  /** Float tolerance of deallocation checks (default 1e-8). */
  tolerance?: number
}

/** What a Tenet function object knows about itself (used by AD and checkpointing). */
export interface TenetFunctionInfo {
  name: string
  program: Program
  inverses: Map<string, FunctionDef>
  compiled: CompiledProgram
  options: CompileOptions & { backend: string }
  registry: Registry
  /** The function as written (before routine expansion). */
  surface: FunctionDef
  inverse: boolean
}

/**
 * A compiled reversible function. Calling it runs it forwards; `.inverse` runs it backwards.
 * `P` and `R` type its arguments and results where they are known (see `rev.typed` in `tenet`);
 * by default any arguments are accepted (they are checked at run time).
 */
// biome-ignore lint/suspicious/noExplicitAny: the untyped default must accept every typed function
export interface TenetFunction<P extends unknown[] = any[], R extends unknown[] = unknown[]> {
  /** Runs the function; returns the new values of all arguments, in order (arrays updated in place). */
  (...args: P): R
  /** The inverse function (its `.inverse` is this function again). */
  readonly inverse: TenetFunction<P, R>
  /** The function printed in Tenet syntax. */
  readonly source: string
  /** The core IR (routines expanded, typed). */
  readonly ir: FunctionDef
  /**
   * The zero-allocation compiled core: positional arguments, scalar results in `core.results`. It
   * checks nothing of the host boundary (argument types, detached arrays, the aliasing rule of
   * `overlapGuard`): its caller keeps to the rules.
   */
  readonly core: CompiledFunction
  readonly [TENET_FUNCTION]: TenetFunctionInfo
}

/**
 * A compiled module: one `TenetFunction` per function name. It also has a non-enumerable
 * `dispose()` (when no function is named `dispose`) and `[Symbol.dispose]()`: they give back what
 * the backend holds (wasm: the instance and its linear memory), after which every function of the
 * module throws a `TenetError` with code `call/disposed`.
 */
export type TenetModule = Record<string, TenetFunction>

/** Renames callees; a target marked `inverse` (an interpolated `f.inverse`) flips the direction of the call. */
function renameCalls(body: Stmt[], rename: Map<string, { name: string; inverse: boolean }>): Stmt[] {
  return body.map((s): Stmt => {
    switch (s.kind) {
      case 'callstmt': {
        const r = rename.get(s.callee)
        return r ? { ...s, callee: r.name, inverse: s.inverse !== r.inverse } : s
      }
      case 'if':
        return { ...s, then: renameCalls(s.then, rename), else: renameCalls(s.else, rename) }
      case 'while':
      case 'for':
      case 'unchecked':
      case 'routine':
      case 'invblock':
        return { ...s, body: renameCalls(s.body, rename) } as Stmt
      default:
        return s
    }
  })
}

/**
 * Pulls interpolated Tenet functions (`${g}` used as a callee) into this module under private names,
 * with the host values of g's module appended to this module's (the references `$hostK` of g's
 * functions renumbered to them: g calls its own module's host functions, not this one's).
 */
function link(functions: FunctionDef[], hosts: unknown[]): { functions: FunctionDef[]; hosts: unknown[] } {
  const extra: FunctionDef[] = []
  const all = [...hosts]
  const hostRename = new Map<string, { name: string; inverse: boolean }>()
  hosts.forEach((h, n) => {
    if (!isTenetFunction(h)) return
    const info = h[TENET_FUNCTION as never] as TenetFunctionInfo
    const prefix = `$ext${n}$`
    const rename = new Map<string, { name: string; inverse: boolean }>()
    for (const name of info.program.functions.keys()) rename.set(name, { name: prefix + name, inverse: false })
    const offset = all.length
    all.push(...info.program.hosts)
    for (const f of info.program.functions.values()) {
      const g = offset ? shiftHosts(f, offset) : f
      extra.push({ ...g, name: prefix + f.name, body: renameCalls(g.body, rename) })
    }
    // `${f.inverse}(…)` calls f backwards; `~${f.inverse}(…)` forwards
    hostRename.set(`$host${n}`, { name: prefix + info.name, inverse: info.inverse })
  })
  if (!hostRename.size) return { functions, hosts }
  return {
    functions: [...functions.map((f) => ({ ...f, body: renameCalls(f.body, hostRename) })), ...extra],
    hosts: all,
  }
}

/**
 * `x` (a function's IR: plain objects and arrays) with every host reference `$hostK` (a callee or
 * a name) made `$host(K + offset)`; anything that is not a plain object or array is kept as is.
 */
function shiftHosts<T>(x: T, offset: number): T {
  if (Array.isArray(x)) return x.map((v) => shiftHosts(v, offset)) as T
  if (x === null || typeof x !== 'object' || Object.getPrototypeOf(x) !== Object.prototype) return x
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(x as Record<string, unknown>))
    out[k] =
      (k === 'callee' || k === 'name') && typeof v === 'string' && /^\$host\d+$/.test(v)
        ? `$host${Number(v.slice(5)) + offset}`
        : shiftHosts(v, offset)
  return out as T
}

/**
 * Compiles a surface module (from `parse` or the builder) with the given registry and backend.
 * Throws `TenetStaticError` for programs that break the rules of reversible programming.
 */
export function compileModule(mod: Module, options: TenetOptions): TenetModule {
  const registry = options.registry
  const backend = options.backend ? registry.backend(options.backend) : registry.defaultBackend()
  const compileOptions = { checks: options.checks ?? true, tolerance: options.tolerance ?? 1e-8, backend: backend.name }
  const surface = new Map(mod.functions.map((f) => [f.name, f]))
  const linked = link(mod.functions.map(preprocess), mod.hosts)
  const core = lower(linked.functions, registry)
  const program = check(core, linked.hosts, registry)
  const inverses = new Map([...program.functions.values()].map((f) => [f.name, invert(f)]))
  const compiled = backend.doCompile(program, inverses, compileOptions)
  const out: TenetModule = {}
  const life = { disposed: false }
  for (const f of mod.functions) {
    const info = (inverse: boolean): TenetFunctionInfo => ({
      name: f.name,
      program,
      inverses,
      compiled,
      options: compileOptions,
      registry,
      surface: surface.get(f.name)!,
      inverse,
    })
    const fwd = hostBoundary(makeFunction(info(false), program.functions.get(f.name)!, life), f, registry)
    const inv = hostBoundary(makeFunction(info(true), inverses.get(f.name)!, life), f, registry)
    Object.defineProperty(fwd, 'inverse', { value: inv })
    Object.defineProperty(inv, 'inverse', { value: fwd })
    // an own data property even for a name such as `__proto__` (an assignment would set the prototype)
    Object.defineProperty(out, f.name, { value: fwd, enumerable: true, writable: true, configurable: true })
  }
  // \`m.dispose()\` (unless the module has a function of that name) and \`m[Symbol.dispose]()\`
  const dispose = (): void => {
    if (life.disposed) return
    life.disposed = true
    compiled.dispose?.()
  }
  if (!('dispose' in out)) Object.defineProperty(out, 'dispose', { value: dispose })
  const symbol = (Symbol as { dispose?: symbol }).dispose
  if (symbol) Object.defineProperty(out, symbol, { value: dispose })
  return out
}

/** Runs the lowering hooks of the registered number systems (complex → pairs of f64). */
function lower(functions: FunctionDef[], registry: Registry): FunctionDef[] {
  for (const name of registry.names('number')) {
    const l = registry.numberSystem(name).lowering
    if (l) functions = l.lower(functions, registry)
  }
  return functions
}

/**
 * Wraps a function whose parameters were lowered so that it takes and returns host values of
 * the surface types (`{ re, im }` for complex), using the number systems' lowering hooks.
 */
function hostBoundary(inner: TenetFunction, surface: FunctionDef, registry: Registry): TenetFunction {
  const hooks = surface.params.map(
    (p) => registry.findNumberSystem(p.type.kind === 'scalar' ? p.type.name : p.type.elem)?.lowering,
  )
  if (!hooks.some(Boolean)) return inner
  const arities = surface.params.map((p, i) => hooks[i]?.arity(p.type) ?? 1)
  const n = surface.params.length
  const types = surface.params.map((p) => p.type)
  // (what each argument is called in an error: the same text every call, made once; made per call,
  // it was most of the ~2 µs a call of a one-line complex function took)
  const described = surface.params.map((_, i) => describeArgument(surface.name, surface.params, i))
  const realHost = surface.params.map((p, i) => (hooks[i] ? undefined : hostParams(registry, [p])[0]))
  // the lowered function called with its arguments listed: a spread call (\`inner(...flat)\`) costs
  // about 100 ns on Node 20, whatever the callee
  const width = arities.reduce((a, b) => a + b, 0)
  let callFlat = (f: TenetFunction, a: unknown[]): unknown[] => f(...a)
  try {
    callFlat = new Function(
      'f',
      'a',
      `return f(${Array.from({ length: width }, (_, k) => `a[${k}]`).join(', ')})`,
    ) as typeof callFlat
  } catch {
    // (no code generation allowed here: the spread call)
  }
  // (named at creation, as \`makeFunction\`'s function is: a redefined \`name\` made a dictionary-mode object)
  const call = {
    [inner.name]: (...args: unknown[]): unknown[] => {
      if (args.length !== n) {
        throw new TenetError(
          'call/arity',
          `\`${surface.name}\` takes ${n} argument${n === 1 ? '' : 's'} (${surface.params.map((p) => p.name).join(', ')}), got ${args.length}`,
        )
      }
      const flat: unknown[] = []
      for (let i = 0; i < n; i++) {
        const h = hooks[i]
        if (!h) {
          // (checked here, by its position as written: the lowered function would name it by its
          // lowered position, after the parts of the complex parameters before it)
          checkArgument(surface.name, surface.params, realHost[i]!, i, args[i])
          flat.push(args[i])
          continue
        }
        const parts = h.toArgs(args[i], types[i]!, described[i]!)
        for (let k = 0; k < parts.length; k++) flat.push(parts[k])
      }
      const res = callFlat(inner, flat)
      const out = new Array<unknown>(n)
      for (let i = 0, k = 0; i < n; i++) {
        const h = hooks[i]
        const w = arities[i]!
        out[i] = h ? h.fromResults(res.slice(k, k + w), types[i]!) : res[k]
        k += w
      }
      return out
    },
  }[inner.name]!
  for (const key of ['source', 'ir', 'core', TENET_FUNCTION] as const) {
    Object.defineProperty(call, key, { value: (inner as unknown as Record<string | symbol, unknown>)[key] })
  }
  return call as unknown as TenetFunction
}

/**
 * Whether \`e\` is V8's "Maximum call stack size exceeded": without a regular expression, which
 * may itself need the stack that has just run out (review 19a), and where even this fails (the
 * stack still nearly full), false.
 */
function stackOverflow(e: unknown): boolean {
  try {
    return e instanceof RangeError && e.message.indexOf('call stack') >= 0
  } catch {
    return false
  }
}

/** The notes a failed call's error gets about the caller's arrays. */
const RESTORED_NOTE = '\n(the array arguments were restored to their values before the call)'
const PARTIAL_NOTE = '\n(array arguments may be partially updated: run-time checks are off, so no snapshot was taken)'

/** Adds \`text\` to the message of error \`e\` where it can (a frozen error or a \`DOMException\` keeps its own). */
function addNote(e: unknown, text: string): void {
  if (!(e instanceof Error)) return
  try {
    e.message += text
  } catch {
    // (a message that cannot be set: the error goes on as it is)
  }
}

type Snapshot = (ArrayLike<number> & { set(a: ArrayLike<number>): void }) | unknown[] | undefined

/**
 * What one call (at one depth of reentrancy) keeps to undo itself: the restore snapshot of
 * each written array and an exact copy of the host values of each array that is converted in
 * place (fixed, ulog, tropical). Reused by every call at that depth, so the non-reentrant
 * path allocates nothing in steady state.
 */
interface CallFrame {
  snapshots: Snapshot[]
  host: Array<Float64Array | undefined>
  /**
   * Where the call may grow the backend's memory (see \`ResidentMemory.buffer\`): the memory's
   * buffer at the call's start (undefined where not noted), and per array parameter the byte
   * offset and length of an argument that is a view of it (−1 for any other).
   */
  memory: ArrayBufferLike | undefined
  at: number[]
  length: number[]
}

/** The printed source of each compiled function, made on first use (see \`sourceOf\`). */
const printedSources = new WeakMap<TenetFunctionInfo, string>()

/**
 * The \`source\` getter of every compiled function: one function for all of them, so that they
 * share their maps (a getter closure per function gave every function after the first its own
 * dictionary of properties). Printed on first use: a large module is not printed twice (both
 * directions) while it compiles.
 */
function sourceOf(this: { [TENET_FUNCTION]: TenetFunctionInfo }): string {
  const info = this[TENET_FUNCTION]
  let printed = printedSources.get(info)
  if (printed === undefined) {
    printed = info.inverse
      ? printFunction({
          ...info.surface,
          name: `${info.name}_inverse`,
          body: invertSurfaceBody(annotateDeallocs(info.surface.body, new Map())),
        })
      : printFunction(info.surface)
    printedSources.set(info, printed)
  }
  return printed
}

function makeFunction(info: TenetFunctionInfo, ir: FunctionDef, life: { disposed: boolean }): TenetFunction {
  const core = info.compiled.get(info.name, info.inverse)
  const params = ir.params
  const writes = info.program.writes.get(info.name)!
  const checks = info.options.checks
  // one frame per depth of reentrancy: a host function called by the program (\`@safe\`, an
  // interpolated function) may call this same function again, and that call must not overwrite
  // the snapshot the outer call restores from
  const frames: CallFrame[] = []
  let depth = 0
  const systems = params.map(
    (p) => info.registry.findNumberSystem(p.type.kind === 'scalar' ? p.type.name : p.type.elem)!,
  )
  const hps = hostParams(info.registry, params)
  // the aliasing rule (see \`overlapGuard\`): a written array shares no memory with another array argument
  const overlap = overlapGuard(`${info.name}${info.inverse ? '.inverse' : ''}`, params, writes)
  // (its fast path inline: a call into \`check\` cost ~5 ns on a small call, Node 20)
  const ovArrays = overlap?.arrays
  const ovSeen = overlap?.seen
  // arrays of number systems with a host conversion are converted in place: on entry where host
  // values need it (fixed and tropical round to their grid, ulog encodes), and back on exit where
  // the representation is not the value (ulog), so the host always sees real values. An exact
  // copy of the host values is kept: an element whose representation the call did not change is
  // given back exactly as passed, and a failed call with checks on puts the host values back
  const entry = params.map((p) =>
    p.type.kind === 'array' ? hostConversionsOf(info.registry, p.type).fromHost : undefined,
  )
  const exit = params.map((p) =>
    p.type.kind === 'array' ? hostConversionsOf(info.registry, p.type).toHost : undefined,
  )
  const anyEntry = entry.some(Boolean)
  const typeKeys = params.map((p) => typeToString(p.type))
  const exitOnly = exit.map((t, i) => (t && !entry[i] ? t : undefined))
  const anyExitOnly = exitOnly.some(Boolean)
  const writesArrays = params.some((p, i) => writes[i] && p.type.kind !== 'scalar')
  // the aliasing rule across nested calls (see \`running-calls.ts\`): every call is tested while
  // a call that can call out runs; a call of this function is noted as running where its module
  // interpolates a plain JS function (one that may call Tenet again)
  const shape: CallShape = {
    name: `${info.name}${info.inverse ? '.inverse' : ''}`,
    params,
    arrays: params.flatMap((p, i) => (p.type.kind === 'scalar' ? [] : [i])),
    changes: params.map((p, i) => p.type.kind !== 'scalar' && (writes[i] === true || entry[i] !== undefined)),
  }
  const callsOut = info.program.hosts.some((h) => typeof h === 'function' && !isTenetFunction(h))
  // a call that grows the backend's memory (an array ancilla on wasm) detaches every view of it,
  // the array arguments that live there included: the arrays written back after the call (the
  // restore of a failed checked call, the conversions back to host values) are then views of the
  // memory's new buffer at the same places (see \`revive\`). Noted only where the memory can grow
  // during the call (a module that calls the caller's code may grow it from a nested call).
  const resident = core.resident
  const grows = resident?.buffer !== undefined && (core.direct === undefined || core.direct.grows)
  /** The array parameters written back after a call: written (restored with checks on) or converted. */
  const revived = params.flatMap((p, i) =>
    p.type.kind !== 'scalar' && ((checks && writes[i]) || entry[i] || exit[i]) ? [i] : [],
  )
  const noteMemory = grows && revived.length > 0
  /** Notes which arguments to revive are views of the backend's memory, and where (see \`CallFrame.memory\`). */
  const note = (vals: unknown[], fr: CallFrame): void => {
    const buf = resident!.buffer!()
    fr.memory = buf
    for (const i of revived) {
      const a = vals[i] as ArrayBufferView & { length: number }
      const inMemory = !Array.isArray(a) && a.buffer === buf
      fr.at[i] = inMemory ? a.byteOffset : -1
      fr.length[i] = inMemory ? a.length : -1
    }
  }
  /**
   * Where the memory grew during the call: replaces each argument that was a view of it (now
   * detached) by a view of the new buffer at the same place (the same array passed for two
   * parameters stays one array).
   */
  const revive = (args: unknown[], vals: unknown[], fr: CallFrame): void => {
    const buf = resident!.buffer!()
    if (buf === fr.memory) return
    fr.memory = undefined
    for (const i of revived) {
      if (fr.at[i]! < 0) continue
      let k = 0
      while (k < i && args[k] !== args[i]) k++
      const a = vals[i] as unknown as { constructor: new (b: ArrayBufferLike, at: number, n: number) => unknown }
      vals[i] = k < i && vals[k] !== args[k] ? vals[k] : new a.constructor(buf, fr.at[i]!, fr.length[i]!)
    }
  }
  /** The first parameter holding the same array as parameter i (itself if none): converted once. */
  const firstOf = (vals: unknown[], i: number): number => {
    for (let k = 0; k < i; k++) if (vals[k] === vals[i]) return k
    return i
  }
  /**
   * Converts the host arrays to their representations, keeping exact copies in \`fr.host\`. An array
   * converted in place is changed by the call even where the function only reads it: it may be
   * passed again for another parameter as the very same array (converted once), but it must share
   * no memory with any other array argument (the aliasing rule, as for a written array: a view
   * overlapping it would be converted twice, or read in the representation).
   */
  const enter = (vals: unknown[], fr: CallFrame): void => {
    for (let i = 0; i < params.length; i++) {
      if (!entry[i]) continue
      for (let k = 0; k < params.length; k++)
        if (
          k !== i &&
          params[k]!.type.kind !== 'scalar' &&
          // (the very same array for two parameters of one type: converted once, see \`firstOf\`)
          !(vals[k] === vals[i] && typeKeys[k] === typeKeys[i]) &&
          sharesMemory(vals[i], vals[k])
        )
          throw overlapError(`${info.name}${info.inverse ? '.inverse' : ''}`, params, i, k, true)
    }
    for (let i = 0; i < params.length; i++) {
      if (!entry[i] || firstOf(vals, i) !== i) continue
      const a = vals[i] as Float64Array
      let h = fr.host[i]
      if (!h || h.length !== a.length) h = fr.host[i] = new Float64Array(a.length)
      h.set(a)
    }
    try {
      for (let i = 0; i < params.length; i++) {
        const f = entry[i]
        if (!f || firstOf(vals, i) !== i) continue
        const a = vals[i] as Float64Array
        for (let j = 0; j < a.length; j++) a[j] = f(a[j]!)
      }
    } catch (e) {
      // a value that cannot be converted (out of range): every array gets its host values back
      putBack(vals, fr)
      throw e
    }
  }
  const putBack = (vals: unknown[], fr: CallFrame): void => {
    for (let i = 0; i < params.length; i++)
      if (entry[i] && firstOf(vals, i) === i) (vals[i] as Float64Array).set(fr.host[i]!)
  }
  /**
   * Converts the arrays back to host values: an element whose representation is the one its host
   * value had on entry gets that host value (so untouched elements never drift), the others the
   * real value of their new representation.
   */
  const leave = (vals: unknown[], fr: CallFrame): void => {
    for (let i = 0; i < params.length; i++) {
      const f = entry[i]
      if (!f || firstOf(vals, i) !== i) continue
      const a = vals[i] as Float64Array,
        h = fr.host[i]!
      if (!writes[i]) {
        a.set(h)
        continue
      }
      const back = exit[i]
      for (let j = 0; j < a.length; j++) {
        const r = a[j]!,
          x = h[j]!
        a[j] = Object.is(r, f(x)) ? x : back ? back(r) : r
      }
    }
    if (anyExitOnly) {
      for (let i = 0; i < params.length; i++) {
        const back = exitOnly[i]
        if (!back) continue
        const a = vals[i] as Float64Array
        for (let j = 0; j < a.length; j++) a[j] = back(a[j]!)
      }
    }
  }
  // (created under its final name, a computed key naming the arrow, and its properties defined one
  // by one: redefining \`name\` afterwards, or defining several properties in one
  // \`Object.defineProperties\`, turned the function into a dictionary-mode object, on which every
  // load of \`f.core\`, \`f.inverse\` or \`f.inverse.core\` in a caller's loop was a dictionary lookup)
  const fname = info.inverse ? `${info.name}_inverse` : info.name
  // the generated call where the general wrapper would only check arguments and snapshot written
  // arrays (see `fast-call.ts`)
  const simple = !anyEntry && !anyExitOnly && !noteMemory && !callsOut
  /** What the generated call throws for what the core threw: as the general wrapper's catch. */
  const failedSimply = (e: unknown): unknown => {
    if (stackOverflow(e))
      e = new TenetError(
        'runtime/stack-overflow',
        `\`${shape.name}\`: the recursion is too deep for the JavaScript stack (${(e as Error).message})`,
      )
    if (checks) {
      if (InvertibilityError.isInstance(e)) e.restored = true
      if (writesArrays) addNote(e, RESTORED_NOTE)
    } else if (writesArrays) addNote(e, PARTIAL_NOTE)
    return e
  }
  const disposed = (): never => {
    throw new TenetError('call/disposed', `\`${info.name}\` belongs to a disposed module: compile it again to call it`)
  }
  const call = simple
    ? (fastCall({
        name: fname,
        label: shape.name,
        irName: ir.name,
        params,
        hps,
        back: params.map((p, i) => {
          const ns = systems[i]!
          if (p.type.kind !== 'scalar' || p.type.name === 'bool' || !ns.toHost) return undefined
          const toHost = ns.toHost
          // (as the general wrapper: an unchanged representation gives back the argument passed)
          return (r: number, v: unknown, a: unknown) => (Object.is(r, v) ? a : toHost(r))
        }),
        core,
        life,
        overlap,
        shape,
        snapshot: checks ? params.flatMap((p, i) => (writes[i] && p.type.kind !== 'scalar' ? [i] : [])) : [],
        disposed,
        failed: (e: unknown) => failedSimply(e),
      }) ?? general(fname))
    : general(fname)
  Object.defineProperty(call, 'source', { get: sourceOf })
  Object.defineProperty(call, 'ir', { value: ir })
  Object.defineProperty(call, 'core', { value: core })
  Object.defineProperty(call, TENET_FUNCTION, { value: info })
  return call as unknown as TenetFunction

  /** The general wrapper: every case (see `fast-call.ts` for the cases it is not needed for). */
  function general(fname: string): (...args: unknown[]) => unknown[] {
    return {
      [fname]: (...args: unknown[]): unknown[] => {
        if (life.disposed) disposed()
        if (args.length !== params.length)
          arityError(`${info.name}${info.inverse ? '.inverse' : ''}`, params, args.length)
        const vals = new Array<unknown>(params.length)
        for (let i = 0; i < params.length; i++) {
          const hp = hps[i]!,
            a = args[i]
          checkArgument(ir.name, params, hp, i, a)
          vals[i] = hp.kind === 'number' && hp.fromHost ? hp.fromHost(a as number) : a
        }
        if (ovArrays !== undefined) {
          for (let k = 0; k < ovArrays.length; k++) {
            // (\`vals\`, which holds the same arrays: passing the rest array \`args\` on, even on this
            // path, made V8 allocate it on every call, ~15 ns)
            if (vals[ovArrays[k]!] !== ovSeen![k]) {
              overlap!.check(vals)
              break
            }
          }
        }
        if (RUNNING.count > 0) checkNested(shape, vals)
        // (the depth raised before anything of the caller's is read, and put back by a store only
        // after the restore: a call from a getter of an argument, or from a primitive's JavaScript,
        // uses the next frame)
        const d = depth
        const fr = frames[d] ?? (frames[d] = { snapshots: [], host: [], memory: undefined, at: [], length: [] })
        depth = d + 1
        try {
          if (noteMemory) note(vals, fr)
          if (anyEntry) enter(vals, fr)
          if (checks) {
            const snapshots = fr.snapshots
            for (let i = 0; i < params.length; i++) {
              // (converted arrays are restored from their exact host copy)
              if (!writes[i] || params[i]!.type.kind === 'scalar' || entry[i]) continue
              const a = vals[i] as ArrayLike<number>
              if (Array.isArray(a)) {
                snapshots[i] = a.slice()
                continue
              }
              // (of the parameter's typed array type, which the argument passed its check as: a
              // subclass's constructor may take other arguments)
              const n = a.length
              let s = snapshots[i] as Float64Array | undefined
              if (!s || s.length !== n) s = snapshots[i] = new (hps[i]!.ctor as unknown as Float64ArrayConstructor)(n)
              s.set(a as unknown as Float64Array)
            }
          }
        } catch (e) {
          depth = d
          throw e
        }
        // (the running calls as they were, put back by a store as the call ends: see \`RUNNING\`)
        const running = RUNNING.count
        if (callsOut) {
          RUNNING.shapes[running] = shape
          RUNNING.values[running] = vals
          RUNNING.count = running + 1
        }
        try {
          core(...vals)
        } catch (e) {
          RUNNING.count = running
          if (callsOut) RUNNING.values[running] = undefined
          if (stackOverflow(e))
            e = new TenetError(
              'runtime/stack-overflow',
              `\`${info.name}${info.inverse ? '.inverse' : ''}\`: the recursion is too deep for the JavaScript stack (${(e as Error).message})`,
            )
          try {
            if (noteMemory) revive(args, vals, fr)
            if (checks) {
              const snapshots = fr.snapshots
              for (let i = 0; i < params.length; i++) {
                if (!writes[i] || params[i]!.type.kind === 'scalar' || entry[i]) continue
                const a = vals[i]
                // (element by element: a spread of a long stack as arguments overflows the JS
                // stack; the typed arrays' own \`set\`, not one a subclass redefines)
                if (Array.isArray(a)) putStack(a, snapshots[i] as unknown[])
                else TYPED_SET.call(a, snapshots[i] as Float64Array)
              }
              if (anyEntry) putBack(vals, fr)
            } else if (anyEntry || anyExitOnly) leave(vals, fr)
          } finally {
            depth = d
          }
          if (checks) {
            if (InvertibilityError.isInstance(e)) e.restored = true
            if (writesArrays) addNote(e, RESTORED_NOTE)
          } else if (writesArrays) addNote(e, PARTIAL_NOTE)
          throw e
        }
        RUNNING.count = running
        if (callsOut) RUNNING.values[running] = undefined
        depth = d
        if (anyEntry || anyExitOnly) {
          if (noteMemory) revive(args, vals, fr)
          leave(vals, fr)
        }
        const res = core.results
        const out = new Array<unknown>(params.length)
        for (let i = 0; i < params.length; i++) {
          const p = params[i]!
          // (the array passed, even where the memory grew and \`vals\` holds a view of its new buffer)
          if (p.type.kind !== 'scalar') out[i] = args[i]
          else if (p.type.name === 'bool') out[i] = res[i] !== 0
          else {
            const ns = systems[i]!
            // an encoded scalar (ulog) whose representation did not change comes back exactly as
            // passed, not decoded (which may differ in the last bits)
            out[i] = ns.toHost ? (Object.is(res[i], vals[i]) ? args[i] : ns.toHost(res[i]!)) : res[i]
          }
        }
        return out
      },
    }[fname]!
  }
}
