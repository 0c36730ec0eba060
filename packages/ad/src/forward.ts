/**
 * Forward mode and second order: `jvp` (a tangent sweep), `jacobian` (forward columns or reverse
 * rows, whichever is cheaper), and the exact `hvp` and `hessian` by forward-over-reverse: the
 * tangent transform applied to the adjoint, which is ordinary reversible IR.
 */
import type { Registry, ResidentArray, ResidentMemory } from '@tenet/ir'
import { hostConversionsOf, type TenetFunction } from '@tenet/reversible'
import { Sweep, argError, checkLoss, floatParams, type Gradient, type LossOptions } from './api.js'
import { compileAdjoint, compileSecondOrder, compileTangent, infoOf, type CompiledSecondOrder, type CompiledTangent } from './compile.js'
import { hasGradient } from './transform.js'
import { evalAllowed } from './driver-interpreted.js'
import { argsOf, indexList, optionsOf, positiveInteger } from './options.js'

type TypedArray = Float64Array | Float32Array | Int32Array | Uint8Array
const CTORS = { Float64Array, Float32Array, Int32Array, Uint8Array } as const

/** Default number of directions per tangent sweep (Hessian and forward Jacobian columns). */
export const DEFAULT_WIDTH = 8

/** How to check and convert one argument of f (see `loadArgs`). */
type ArgLoader = (a: unknown, into: unknown) => unknown

/** Per function: one loader per parameter (the registry lookups done once). */
const loaders = new WeakMap<TenetFunction, ArgLoader[]>()

function loadersOf(f: TenetFunction): ArgLoader[] {
  let ls = loaders.get(f)
  if (ls) return ls
  const info = infoOf(f)
  const name = info.name
  ls = f.ir.params.map((p, i): ArgLoader => {
    const bad = (what: string): never => argError(`argument ${i + 1} (\`${p.name}\`) of \`${name}\` must be ${what}`)
    if (p.type.kind === 'scalar') {
      if (p.type.name === 'bool') return (a) => (typeof a === 'boolean' ? a : bad('a boolean'))
      const fh = hostConversionsOf(info.registry, p.type).fromHost
      return (a) => (typeof a !== 'number' ? bad('a number') : fh ? fh(a) : a)
    }
    if (p.type.kind === 'array') {
      const ctor = CTORS[info.registry.numberSystem(p.type.elem).arrayType]
      // host values into the representation (fixed rounds to its grid, ulog encodes)
      const fh = hostConversionsOf(info.registry, p.type).fromHost
      return (a, into) => {
        if (!(a instanceof ctor)) bad(`a ${ctor.name}`)
        const src = a as TypedArray
        const copy = into instanceof ctor && (into as TypedArray).length === src.length && into !== a ? into as TypedArray : new ctor(src.length)
        if (fh) for (let j = 0; j < src.length; j++) copy[j] = fh(src[j]!)
        else copy.set(src as never)
        return copy
      }
    }
    return (a) => (Array.isArray(a) ? a.slice() : bad('a JS array (a stack)'))
  })
  loaders.set(f, ls)
  return ls
}

/**
 * Checks and converts the caller's arguments (arrays and stacks copied), like a call of `f`.
 * With `into` (an earlier result), an array is copied into the one there when it has the same
 * type and length, and the result is written there.
 */
function loadArgs(f: TenetFunction, args: ArrayLike<unknown>, into?: unknown[]): unknown[] {
  const ls = loadersOf(f)
  if (args.length !== ls.length) {
    const params = f.ir.params
    argError(`\`${infoOf(f).name}\` takes ${params.length} arguments (${params.map((p) => p.name).join(', ')}), got ${args.length}`)
  }
  const out = into ?? new Array<unknown>(ls.length)
  for (let i = 0; i < ls.length; i++) out[i] = ls[i]!(args[i], out[i])
  return out
}

/**
 * Drives one compiled tangent: a positional argument array (values, then tangents in the layout
 * of `tangentSlots`) reused between sweeps.
 */
class TangentRun {
  readonly argv: unknown[]
  readonly w: number
  private readonly scalarAt: number[] = []
  private readonly boolAt = new Set<number>()

  constructor(readonly ct: CompiledTangent) {
    this.w = ct.width
    let total = ct.params.length
    for (const s of ct.slots) if (s) total += s.kind === 'scalar' ? ct.width : 1
    this.argv = new Array<unknown>(total).fill(0)
    ct.params.forEach((p, i) => {
      if (p.type.kind !== 'scalar') return
      this.scalarAt.push(i)
      if (p.type.name === 'bool') this.boolAt.add(i)
    })
    ct.slots.forEach((s) => { if (s?.kind === 'scalar') for (let k = 0; k < ct.width; k++) this.scalarAt.push(s.index + k) })
  }

  /** Sets the values (arrays and stacks copied into reused buffers) and zeroes every tangent. */
  load(values: unknown[]): void {
    const { params, slots } = this.ct
    for (let i = 0; i < params.length; i++) {
      const v = values[i]
      const s = slots[i]
      if (ArrayBuffer.isView(v)) {
        const src = v as Float64Array
        let b = this.argv[i] as Float64Array
        if (!ArrayBuffer.isView(b) || b.length !== src.length || b.constructor !== src.constructor) b = new (src.constructor as Float64ArrayConstructor)(src.length)
        b.set(src)
        this.argv[i] = b
        if (s) {
          let t = this.argv[s.index] as Float64Array
          if (!ArrayBuffer.isView(t) || t.length !== src.length * this.w) t = new (src.constructor as Float64ArrayConstructor)(src.length * this.w)
          else t.fill(0)
          this.argv[s.index] = t
        }
        continue
      }
      this.argv[i] = Array.isArray(v) ? v.slice() : v
      if (!s) continue
      if (s.kind === 'scalar') for (let k = 0; k < this.w; k++) this.argv[s.index + k] = 0
      else this.argv[s.index] = new Array<number>((v as unknown[]).length * this.w).fill(0)
    }
  }

  /** Sets the tangent of parameter p (element e of an array) in direction k. */
  seed(p: number, e: number, k: number, value: number): void {
    const s = this.ct.slots[p]!
    if (s.kind === 'scalar') this.argv[s.index + k] = value
    else (this.argv[s.index] as Float64Array)[e * this.w + k] = value
  }

  /** The tangent of parameter p (element e) in direction k after `run`. */
  tangent(p: number, e: number, k: number): number {
    const s = this.ct.slots[p]!
    return s.kind === 'scalar' ? (this.argv[s.index + k] as number) : (this.argv[s.index] as Float64Array)[e * this.w + k]!
  }

  run(): void {
    const core = this.ct.tangent.core
    core.apply(undefined, this.argv)
    const r = core.results
    for (const i of this.scalarAt) this.argv[i] = this.boolAt.has(i) ? r[i] !== 0 : r[i]
  }
}

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
 */
export function jvp(f: TenetFunction, args: unknown[], options: JvpOptions): JvpResult {
  optionsOf('jvp', options, false)
  argsOf('jvp', args)
  if (!Array.isArray(options.v)) argError(`\`jvp\` needs \`v\`, the direction: an array shaped like the arguments, got ${typeof options.v}`)
  indexList('jvp', 'inputs', options.inputs)
  const ct = compileTangent(f, 1)
  const info = infoOf(f)
  const run = new TangentRun(ct)
  run.load(loadArgs(f, args))
  const inputs = options.inputs ?? ct.params.map((_, i) => i)
  for (const p of inputs) {
    const s = ct.slots[p], d = options.v[p]
    if (!s || d === null || d === undefined) continue
    if (s.kind === 'stack') argError(`argument ${p} of \`${info.name}\` is a stack: forward mode does not seed stacks`)
    if (s.kind === 'scalar') run.seed(p, 0, 0, d as number)
    else for (let e = 0; e < (run.argv[p] as Float64Array).length; e++) run.seed(p, e, 0, (d as ArrayLike<number>)[e] ?? 0)
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
    return ArrayBuffer.isView(v) ? (v as Float64Array).map((r, j) => back(r, (given as ArrayLike<number> | undefined)?.[j])) : v
  })
  const tangent: Gradient = ct.params.map((p, i) => {
    const s = ct.slots[i]
    if (!s || s.kind === 'stack' || !hasGradient(p.type, info.registry)) return null
    return s.kind === 'scalar' ? (run.argv[s.index] as number) : (run.argv[s.index] as Float64Array)
  })
  return { value, tangent }
}

/** Which arguments a Jacobian relates, and how it is computed. */
export interface JacobianOptions {
  /** Indices of the float arguments differentiated with respect to (default: all float arguments). */
  inputs?: number[]
  /** Indices of the float arguments whose final values are differentiated (default: all written float arguments). */
  outputs?: number[]
  /**
   * `'forward'`: tangent sweeps, `width` columns each; `'reverse'`: vector-mode adjoint sweeps,
   * `width` rows each (one forward run plus one run of `f$adj<w>` carrying w output seeds); both
   * take f64, f32, fixed and ulog arguments; `'auto'` (default): the cheaper by counts (see `jacobianCost`).
   */
  mode?: 'reverse' | 'forward' | 'auto'
  /** Directions per sweep, columns (forward) or rows (reverse); default 8, capped by their count. */
  width?: number
}

/** Flat (parameter, element) positions of the float scalars of `params` in `values`. */
function positions(values: unknown[], params: number[]): Array<[number, number]> {
  const out: Array<[number, number]> = []
  for (const p of params) {
    const v = values[p]
    if (typeof v === 'number') out.push([p, 0])
    else for (let e = 0; e < (v as ArrayLike<number>).length; e++) out.push([p, e])
  }
  return out
}

/**
 * The Jacobian of the final values of `outputs` with respect to the initial values of `inputs`,
 * as a row-major `Float64Array`: one row per output scalar (arrays flattened in order), one column
 * per input scalar. Forward mode computes `width` columns per tangent sweep; reverse mode `width`
 * rows per sweep of the vector-mode adjoint; `mode: 'auto'` (the default) picks the cheaper by
 * counts (`jacobianCost`).
 */
export function jacobian(f: TenetFunction, args: unknown[], options: JacobianOptions = {}): Float64Array {
  optionsOf('jacobian', options, false)
  argsOf('jacobian', args)
  indexList('jacobian', 'inputs', options.inputs)
  indexList('jacobian', 'outputs', options.outputs)
  positiveInteger('jacobian', 'width', options.width)
  const info = infoOf(f)
  const params = f.ir.params
  const written = info.program.writes.get(info.name)!
  // both modes differentiate every differentiable type (f64, f32, fixed point, ulog)
  const isFloat = (i: number) => params[i]!.type.kind !== 'stack' && hasGradient(params[i]!.type, info.registry)
  const floats = params.flatMap((_, i) => (isFloat(i) ? [i] : []))
  const inputs = options.inputs ?? floats
  const outputs = options.outputs ?? floats.filter((i) => written[i])
  for (const i of [...inputs, ...outputs]) if (!params[i] || !isFloat(i)) argError(`argument ${i} of \`${info.name}\` is not a float scalar or float array, so it has no derivative`)
  const values = loadArgs(f, args)
  const cols = positions(values, inputs), rows = positions(values, outputs)
  const mode = options.mode ?? 'auto'
  if (mode !== 'auto' && mode !== 'forward' && mode !== 'reverse') argError(`\`mode\` must be 'reverse', 'forward' or 'auto', got ${String(mode)}`)
  const forward = mode === 'forward' || (mode === 'auto' && jacobianCost(cols.length, rows.length, options.width) === 'forward')
  return forward ? jacobianForward(f, values, cols, rows, options.width) : jacobianReverse(f, args, inputs, rows, cols.length, options.width)
}

/**
 * Which Jacobian mode is cheaper by counts: forward takes ⌈nc/w⌉ tangent sweeps of cost ≈ 1 + w
 * (values plus w tangents), reverse ⌈nr/w⌉ sweeps of cost ≈ 2 + w (a forward run, the adjoint's
 * uncomputation and w gradient directions), w the width capped by the column or row count.
 */
export function jacobianCost(nc: number, nr: number, width = DEFAULT_WIDTH): 'forward' | 'reverse' {
  const wf = Math.max(1, Math.min(width, nc)), wr = Math.max(1, Math.min(width, nr))
  const f = Math.ceil(nc / wf) * (1 + wf), r = Math.ceil(nr / wr) * (2 + wr)
  return f <= r ? 'forward' : 'reverse'
}

function jacobianForward(f: TenetFunction, values: unknown[], cols: Array<[number, number]>, rows: Array<[number, number]>, width?: number): Float64Array {
  const nc = cols.length, nr = rows.length
  const J = new Float64Array(nr * nc)
  if (nc === 0) return J
  const w = Math.max(1, Math.min(width ?? DEFAULT_WIDTH, nc))
  const run = new TangentRun(compileTangent(f, w))
  for (let c0 = 0; c0 < nc; c0 += w) {
    run.load(values)
    for (let k = 0; k < w && c0 + k < nc; k++) { const [p, e] = cols[c0 + k]!; run.seed(p, e, k, 1) }
    run.run()
    rows.forEach(([p, e], r) => {
      for (let k = 0; k < w && c0 + k < nc; k++) J[r * nc + c0 + k] = run.tangent(p, e, k)
    })
  }
  return J
}

/**
 * Reverse-mode Jacobian by the vector-mode adjoint `f$adj<w>`: each sweep runs f forwards, then
 * one adjoint run carrying w output seeds (w rows) at once.
 */
function jacobianReverse(f: TenetFunction, args: unknown[], inputs: number[], rows: Array<[number, number]>, nc: number, width?: number): Float64Array {
  const nr = rows.length
  const J = new Float64Array(nr * nc)
  if (nr === 0 || nc === 0) return J
  const w = Math.max(1, Math.min(width ?? DEFAULT_WIDTH, nr))
  const c = compileAdjoint(f, w)
  const sweep = new Sweep(c) // loads (host conversions included) and runs f forwards
  const n = c.params.length
  let total = n + 1
  for (const s of c.slots) if (s) total += s.kind === 'scalar' ? w : 1
  const argv = new Array<unknown>(total).fill(0)
  const core = c.adjoint.core
  for (let r0 = 0; r0 < nr; r0 += w) {
    sweep.load(args)
    sweep.forward()
    for (let i = 0; i < n; i++) {
      argv[i] = sweep.fwd[i]
      const s = c.slots[i]
      if (!s) continue
      if (s.kind === 'scalar') for (let k = 0; k < w; k++) argv[s.index + k] = 0
      else if (s.kind === 'array') {
        const len = (sweep.fwd[i] as ArrayLike<number>).length * w
        const elem = (s.type as { elem: string }).elem
        argv[s.index] = elem === 'f32' ? new Float32Array(len) : new Float64Array(len)
      } else argv[s.index] = new Array<number>((sweep.fwd[i] as unknown[]).length * w).fill(0)
    }
    argv[total - 1] = 0
    for (let k = 0; k < w && r0 + k < nr; k++) {
      const [p, e] = rows[r0 + k]!
      const s = c.slots[p]!
      if (s.kind === 'scalar') argv[s.index + k] = 1
      else (argv[s.index] as Float64Array)[e * w + k] = 1
    }
    core.apply(undefined, argv)
    for (let k = 0; k < w && r0 + k < nr; k++) {
      let col = 0
      const row = (r0 + k) * nc
      for (const inp of inputs) {
        const s = c.slots[inp]!
        if (s.kind === 'scalar') J[row + col++] = core.results[s.index + k]!
        else {
          const g = argv[s.index] as Float64Array
          for (let e = 0; e * w < g.length; e++) J[row + col++] = g[e * w + k]!
        }
      }
    }
  }
  return J
}

/** See `SecondOrderRun.planStart`: (destination, source) pairs, arrays, (argument, value) pairs. */
interface StartPlan { copies: TypedArray[]; zeros: TypedArray[]; scalars: unknown[] }

/**
 * Drives one compiled second-order program (`compileSecondOrder`): owns copies of the inputs, the
 * gradient and tangent buffers and the positional argument array, all reused between sweeps and
 * (through `secondOrderRun`) between calls.
 */
class SecondOrderRun {
  readonly w: number
  /** The loaded inputs, per parameter of f (own copies of arrays; stacks copied per sweep). */
  readonly values: unknown[] = []
  private readonly argv: unknown[]
  /** Per argument of the program: whether it writes it (an array it only reads needs no reset). */
  private readonly written: boolean[]
  private readonly n: number
  private readonly sink: number
  /** Seeded elements of arrays the program does not write: (argument, element), reset by `start`. */
  private readonly seeded: number[] = []
  /** Calls the program with `argv` positionally (no `apply` of a long argument list). */
  private readonly call: () => void
  /**
   * On a backend with its own memory (wasm): the arrays of `argv` live there, so that a sweep
   * copies nothing in or out (see `CompiledFunction.resident`).
   */
  private readonly memory: ResidentMemory | undefined
  /** Per argument in resident mode: its array there. */
  private readonly handles: Array<ResidentArray | undefined>
  busy = false

  constructor(readonly so: CompiledSecondOrder, private readonly f: TenetFunction, private readonly loss: number) {
    this.w = so.width
    this.n = so.params.length
    this.sink = this.n + so.gradientSlots.filter((s) => s).length
    let total = so.programParams.length
    for (const s of so.slots) if (s) total += s.kind === 'scalar' ? this.w : 1
    this.argv = new Array<unknown>(total).fill(0)
    const info = infoOf(so.program)
    const writes = info.program.writes.get(info.name)
    this.written = this.argv.map((_, j) => writes?.[j] !== false)
    // identifiers only: no user text reaches the generated source
    const core = so.program.core, argv = this.argv
    this.call = evalAllowed()
      ? new Function('F', 'a', `return function call() { F(${this.argv.map((_, j) => `a[${j}]`).join(', ')}) }`)(core, argv) as () => void
      : () => core(...argv) // no generated code where it is forbidden (strict CSP)
    this.memory = so.program.core.resident
    this.handles = this.argv.map(() => undefined)
  }

  /**
   * In resident mode: puts at argv[j] the resident array of argument j with `len` elements (its
   * contents as they were when reused, zero when new) and returns it.
   */
  private place(j: number, len: number): TypedArray {
    let h = this.handles[j]
    if (!h || h.length !== len) {
      h?.release()
      const t = this.so.program.ir.params[j]!.type as { elem: string }
      h = this.handles[j] = this.memory!.allocate(t.elem, len)
    }
    return (this.argv[j] = h.array)
  }

  /** The memory's buffer when `views` last took the views (a grown memory has a new one). */
  private viewsOf: ArrayBufferLike | undefined

  /** In resident mode: the current views of the resident arrays (a call may have grown the memory). */
  private views(): void {
    const { handles, argv } = this
    let first: ResidentArray | undefined
    for (let j = 0; j < handles.length && !first; j++) first = handles[j]
    if (!first) return
    const buffer = first.array.buffer
    if (buffer === this.viewsOf) return
    for (let j = 0; j < handles.length; j++) { const h = handles[j]; if (h) argv[j] = h.array }
    this.viewsOf = buffer
    // the plan holds the old views
    this.plan = undefined
  }

  /** In resident mode: whether the loaded values still have to be copied to their resident arrays. */
  private unplaced = true

  /** Checks and copies the caller's arguments (they stay as passed). */
  load(args: ArrayLike<unknown>): void {
    // (into the arrays of the last call; a failed check leaves the run to be loaded again)
    loadArgs(this.f, args, this.values)
    this.unplaced = true
  }

  /** A buffer at argv[j] like `proto` with `len` elements, all zero (reused when it fits). */
  private zeros(j: number, proto: unknown, len: number): void {
    if (this.memory) {
      // a new resident array is zero; one the program only reads has only its seeds reset
      const h = this.handles[j]
      if (!h || h.length !== len) this.place(j, len)
      else if (this.written[j]) (this.argv[j] = h.array).fill(0)
      return
    }
    const b = this.argv[j] as Float64Array
    if (ArrayBuffer.isView(b) && b.length === len && b.constructor === (proto as object).constructor) {
      if (this.written[j]) b.fill(0)
    } else this.argv[j] = new ((proto as Float64Array).constructor as Float64ArrayConstructor)(len)
  }

  /** Sets the values to the inputs, the loss gradient to 1 and every other gradient and every tangent to 0. */
  start(): void {
    const { so, argv, values, w, seeded } = this
    // (the last call may have grown the memory and thrown before taking the new views)
    if (this.memory) this.views()
    for (let i = 0; i < seeded.length; i += 2) {
      const b = argv[seeded[i]!] as Float64Array
      if (ArrayBuffer.isView(b)) b[seeded[i + 1]!] = 0
    }
    seeded.length = 0
    const plan = this.plan
    if (plan && !this.unplaced) {
      for (let i = 0; i < plan.copies.length; i += 2) plan.copies[i]!.set(plan.copies[i + 1] as never)
      for (const z of plan.zeros) z.fill(0)
      const sc = plan.scalars
      for (let i = 0; i < sc.length; i += 2) argv[sc[i] as number] = sc[i + 1]
      return
    }
    for (let i = 0; i < this.n; i++) {
      const v = values[i]
      if (ArrayBuffer.isView(v)) {
        if (this.memory) {
          // the arrays the program only reads keep their values from one sweep to the next
          const h = this.handles[i]
          if (this.unplaced || this.written[i] || !h || h.length !== (v as TypedArray).length) this.place(i, (v as TypedArray).length).set(v as Float64Array)
          continue
        }
        if (!this.written[i]) { argv[i] = v; continue }
        const src = v as Float64Array
        let b = argv[i] as Float64Array
        if (!ArrayBuffer.isView(b) || b === src || b.length !== src.length || b.constructor !== src.constructor) b = argv[i] = new (src.constructor as Float64ArrayConstructor)(src.length)
        for (let j = 0; j < src.length; j++) b[j] = src[j]!
      } else argv[i] = Array.isArray(v) ? v.slice() : v
    }
    so.gradientSlots.forEach((s, i) => {
      if (!s) return
      const v = values[i]
      if (s.kind === 'scalar') argv[s.index] = i === this.loss ? 1 : 0
      else if (s.kind === 'array') this.zeros(s.index, v, (v as Float64Array).length)
      else argv[s.index] = new Array<number>((v as unknown[]).length).fill(0)
    })
    argv[this.sink] = 0
    argv[this.sink + 1] = 0
    so.slots.forEach((t, j) => {
      if (!t) return
      const v = argv[j]
      if (t.kind === 'scalar') for (let k = 0; k < w; k++) argv[t.index + k] = 0
      // (in resident mode a later allocation may have detached v: its handle knows the length)
      else if (t.kind === 'array') this.zeros(t.index, v, (this.handles[j]?.length ?? (v as Float64Array).length) * w)
      else argv[t.index] = new Array<number>((v as unknown[]).length * w).fill(0)
    })
    // seed() writes into these views
    if (this.memory) this.views()
    this.unplaced = false
    this.plan = this.planStart()
  }

  /**
   * What `start` does, once the buffers are in place: the written arrays to refill from the
   * values, the written gradient and tangent arrays to zero, and the scalars to set. Undefined
   * when f has stacks (fresh JS arrays per sweep).
   */
  private planStart(): StartPlan | undefined {
    const { so, argv, values } = this
    const plan: StartPlan = { copies: [], zeros: [], scalars: [] }
    for (let i = 0; i < this.n; i++) {
      const v = values[i]
      if (Array.isArray(v)) return undefined
      if (!ArrayBuffer.isView(v)) plan.scalars.push(i, v)
      else if (this.written[i]) plan.copies.push(argv[i] as TypedArray, v as TypedArray)
    }
    const gradientArrays = so.gradientSlots.filter((s) => s?.kind === 'array').map((s) => s!.index)
    const tangentArrays = so.slots.filter((t) => t?.kind === 'array').map((t) => t!.index)
    if (so.gradientSlots.some((s) => s?.kind === 'stack') || so.slots.some((t) => t?.kind === 'stack')) return undefined
    for (const j of [...gradientArrays, ...tangentArrays]) if (this.written[j]) plan.zeros.push(argv[j] as TypedArray)
    so.gradientSlots.forEach((s, i) => { if (s?.kind === 'scalar') plan.scalars.push(s.index, i === this.loss ? 1 : 0) })
    plan.scalars.push(this.sink, 0, this.sink + 1, 0)
    so.slots.forEach((t) => { if (t?.kind === 'scalar') for (let k = 0; k < this.w; k++) plan.scalars.push(t.index + k, 0) })
    return plan
  }

  /** The last `planStart`, while its buffers are the ones in `argv`. */
  private plan: StartPlan | undefined

  /** Sets the tangent of parameter p of f (element e of an array) in direction k. */
  seed(p: number, e: number, k: number, value: number): void {
    const t = this.so.slots[p]
    if (!t) argError(`argument ${p} of \`${infoOf(this.f).name}\` is not a float scalar or float array: second derivatives need values of a differentiable number system (f64, f32, fixed point, ulog)`)
    else if (t.kind === 'scalar') this.argv[t.index + k] = value
    else {
      (this.argv[t.index] as Float64Array)[e * this.w + k] = value
      if (!this.written[t.index]) this.seeded.push(t.index, e * this.w + k)
    }
  }

  run(): void {
    if (!this.memory) { this.call(); return }
    this.views()
    try { this.call() } finally { this.views() }
  }

  /** After `run`: the tangent (direction k) of the gradient of parameter p of f, element e, i.e. (H·vₖ) there. */
  gradTangent(p: number, e: number, k: number): number {
    const t = this.so.slots[this.so.gradientSlots[p]!.index]!
    return t.kind === 'scalar' ? this.so.program.core.results[t.index + k]! : (this.argv[t.index] as Float64Array)[e * this.w + k]!
  }

  /**
   * After `run`: puts directions 0…count−1 of the gradient tangents of the parameters `wrt` (their
   * scalars in order) into columns c0… of the row-major n×n matrix H, as computed (`hessian`
   * symmetrises once all columns are in).
   */
  columns(wrt: number[], H: Float64Array, n: number, c0: number, count: number): void {
    const { so, w } = this
    const res = so.program.core.results
    let row = 0
    for (const p of wrt) {
      const t = so.slots[so.gradientSlots[p]!.index]!
      if (t.kind === 'scalar') {
        for (let k = 0; k < count; k++) H[row * n + c0 + k] = res[t.index + k]!
        row++
        continue
      }
      const b = this.argv[t.index] as Float64Array
      const len = b.length / w
      if (count === w) rowCopier(w)(H, b, len, row * n + c0, n)
      else for (let e = 0; e < len; e++) for (let k = 0; k < count; k++) H[(row + e) * n + c0 + k] = b[e * w + k]!
      row += len
    }
  }
}

type RowCopy = (H: Float64Array, b: ArrayLike<number>, len: number, at: number, n: number) => void
const rowCopiers = new Map<number, RowCopy>()

/**
 * A function that copies `len` rows of w values, b[e·w…e·w+w−1] to H[at+e·n…], with the w copies
 * of a row written out (a loop of 8 or 16 turns per row costs V8 about twice as much).
 */
function rowCopier(w: number): RowCopy {
  let f = rowCopiers.get(w)
  if (!f) {
    if (w > 64 || !evalAllowed()) {
      f = (H, b, len, at, n) => { for (let e = 0; e < len; e++) for (let k = 0; k < w; k++) H[at + e * n + k] = b[e * w + k]! }
    } else {
      const body = Array.from({ length: w }, (_, k) => `H[d + ${k}] = b[s + ${k}];`).join(' ')
      // numbers only: no user text reaches the generated source
      f = new Function('H', 'b', 'len', 'at', 'n', `for (let e = 0, s = 0, d = at; e < len; e++, s += ${w}, d += n) { ${body} }`) as RowCopy
    }
    rowCopiers.set(w, f)
  }
  return f
}

/** Makes the row-major n×n matrix H symmetric: each pair of mirrored elements becomes their mean. */
function symmetrise(H: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const a = i * n + j, b = j * n + i
      const s = (H[a]! + H[b]!) / 2
      H[a] = s; H[b] = s
    }
  }
}

const runs = new WeakMap<CompiledSecondOrder, SecondOrderRun>()

/** The driver of f's second-order program at width w, loaded with `args` (reused between calls when free). */
function secondOrderRun(f: TenetFunction, args: unknown[], loss: number, w: number): SecondOrderRun {
  const so = compileSecondOrder(f, loss, w)
  let run = runs.get(so)
  if (!run || run.busy) { run = new SecondOrderRun(so, f, loss); if (!runs.has(so)) runs.set(so, run) }
  run.load(args)
  return run
}

/** Options of `hessian`. */
export interface HessianOptions extends LossOptions {
  /** Indices of the float arguments the Hessian is taken over (default: all float arguments but the loss). */
  wrt?: number[]
  /** Hessian columns per forward-over-reverse sweep (default 8, at most the number of wrt scalars). */
  width?: number
  /**
   * Where to write the Hessian (n·n elements for n wrt scalars) instead of a new array, for calls
   * in a loop; it is returned. After an error its contents are unspecified.
   */
  out?: Float64Array
}

/**
 * The dense symmetric Hessian of the loss over the scalars of `wrt` (arrays flattened), row-major,
 * exact: forward-over-reverse, i.e. the tangent transform of the adjoint at width w computes w
 * Hessian columns per sweep (⌈n / w⌉ sweeps of the forward tangent plus the adjoint's tangent).
 * The result is symmetrised ((H + Hᵀ) / 2, which only evens out rounding).
 */
export function hessian(f: TenetFunction, args: unknown[], options: HessianOptions): Float64Array {
  optionsOf('hessian', options, true)
  argsOf('hessian', args)
  indexList('hessian', 'wrt', options.wrt)
  positiveInteger('hessian', 'width', options.width)
  const c = compileAdjoint(f)
  checkLoss(c, options.loss)
  const wrt = options.wrt ?? floatParams(c).filter((i) => i !== options.loss)
  for (const i of wrt) if (!c.slots[i] || c.params[i]!.type.kind === 'stack') argError(`argument ${i} of \`${c.info.name}\` is not a float scalar or float array, so it has no Hessian`)
  // no wider than the number of directions, as the arguments give it (so that a small Hessian
  // compiles and loads one program, not the requested width's first)
  const directions = wrt.reduce((s, i) => s + (ArrayBuffer.isView(args[i]) ? (args[i] as Float64Array).length : 1), 0)
  const run = secondOrderRun(f, args, options.loss, Math.max(1, Math.min(options.width ?? DEFAULT_WIDTH, directions)))
  const pos = positions(run.values, wrt)
  const n = pos.length
  const out = options.out
  if (out !== undefined && !(out instanceof Float64Array && out.length === n * n)) {
    argError(`\`out\` must be a Float64Array of ${n * n} elements (${n}×${n}), got ${out instanceof Float64Array ? `one of ${out.length}` : ArrayBuffer.isView(out) ? `a ${(out as object).constructor.name}` : out === null ? 'null' : Array.isArray(out) ? 'an array' : typeof out}`)
  }
  // (every element is written: no zeroing of \`out\`)
  const H = out ?? new Float64Array(n * n)
  if (n === 0) return H
  const w = Math.min(run.w, n)
  const r = w === run.w ? run : secondOrderRun(f, args, options.loss, w)
  r.busy = true
  try {
    for (let c0 = 0; c0 < n; c0 += w) {
      r.start()
      const count = Math.min(w, n - c0)
      for (let k = 0; k < count; k++) { const [p, e] = pos[c0 + k]!; r.seed(p, e, k, 1) }
      r.run()
      r.columns(wrt, H, n, c0, count)
    }
  } finally { r.busy = false }
  symmetrise(H, n)
  return H
}

/** Options of `hvp`. */
export interface HvpOptions extends LossOptions {
  /** The direction, shaped like the arguments: a number per float scalar, an array per float array, null elsewhere. */
  v: Direction
}

/**
 * The Hessian-vector product H·v of the loss, shaped like `gradient`'s result, exact: one
 * forward-over-reverse sweep (the tangent of f along v, then the tangent of its adjoint); no
 * Hessian is formed.
 */
export function hvp(f: TenetFunction, args: unknown[], options: HvpOptions): Gradient {
  optionsOf('hvp', options, true)
  argsOf('hvp', args)
  if (!Array.isArray(options.v)) argError(`\`hvp\` needs \`v\`, the direction: an array shaped like the arguments, got ${typeof options.v}`)
  const c = compileAdjoint(f)
  checkLoss(c, options.loss)
  const r = secondOrderRun(f, args, options.loss, 1)
  r.busy = true
  try {
    r.start()
    for (const p of floatParams(c)) {
      const d = options.v[p]
      if (d === null || d === undefined) continue
      if (typeof d === 'number') r.seed(p, 0, 0, d)
      else for (let e = 0; e < (r.values[p] as ArrayLike<number>).length; e++) r.seed(p, e, 0, d[e] ?? 0)
    }
    r.run()
    return c.params.map((p, i) => {
      const s = c.slots[i]
      if (!s || s.kind === 'stack') return null
      if (s.kind === 'scalar') return r.gradTangent(i, 0, 0)
      const v = r.values[i] as Float64Array
      const out = new (v.constructor as Float64ArrayConstructor)(v.length)
      for (let e = 0; e < v.length; e++) out[e] = r.gradTangent(i, e, 0)
      return out
    })
  } finally { r.busy = false }
}

