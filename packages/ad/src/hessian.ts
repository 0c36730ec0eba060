/**
 * The exact `hessian` and `hvp` by forward-over-reverse: the tangent transform applied to the
 * adjoint, which is ordinary reversible IR (`compileSecondOrder`), driven by `SecondOrderRun`.
 */
import type { ResidentArray, ResidentMemory } from '@tenet/ir'
import type { TenetFunction } from '@tenet/reversible'
import { argError, checkLoss, floatParams, type Gradient, type LossOptions } from './arguments.js'
import { type CompiledAdjoint, compileSecondOrder, infoOf, type CompiledSecondOrder } from './compile.js'
import { hessianReverseOverForward } from './second-order.js'
import { gradientSlots } from './transform.js'
import { evalAllowed } from './driver-interpreted.js'
import type { TypedArray } from './arguments.js'
import { DEFAULT_WIDTH, loadArgs } from './tangent-run.js'
import type { Direction } from './jvp.js'
import { argsOf, indexList, optionsOf, positiveInteger } from './options.js'

/** See `SecondOrderRun.planStart`: (destination, source) pairs, arrays, argument positions. */
interface StartPlan {
  copies: TypedArray[]
  /**
   * On a backend with its own memory: (resident array, value) pairs of the arrays the program
   * only reads, copied after a load (they keep their contents from one sweep to the next).
   */
  reloads: TypedArray[]
  zeros: TypedArray[]
  /** The scalar parameters of f: their values are read from the loaded values at the first start after a load. */
  params: number[]
  /** The loaded values the plan was made for: a load that keeps every array (as it does for equal shapes) keeps the plan. */
  loaded: unknown[]
}

/** Per Hessian row and column: the parameter of f and the element in it (0 for a scalar). */
interface SeedPositions {
  params: Int32Array
  elements: Int32Array
  /** Per parameter of f: the row of its element 0 (−1 where it is not among them). */
  starts: Int32Array
}

/**
 * The width to run n directions at, given the largest wanted: as many sweeps as that width needs,
 * with the directions spread evenly over them (100 at most 16 wide: 7 sweeps of 15, not 6 of 16
 * and one of 4), at least 1.
 */
function balancedWidth(most: number, n: number): number {
  if (n <= 0) return 1
  const sweeps = Math.ceil(n / Math.min(most, n))
  return Math.ceil(n / sweeps)
}

/** The default Hessian width on f's backend: its `hessianWidth` capability, else `DEFAULT_WIDTH`. */
function defaultWidth(f: TenetFunction): number {
  const info = infoOf(f)
  const w = info.registry.backend(info.options.backend).capabilities.hessianWidth
  return w !== undefined && Number.isInteger(w) && w >= 1 ? w : DEFAULT_WIDTH
}

/**
 * What `hessian` and `hvp` look up once per function rather than per call: the gradient slots (for
 * the argument checks), the default width (a registry lookup), and per loss argument the default
 * `wrt` and the second-order programs and their drivers by width (instead of `compileSecondOrder`'s
 * string-keyed cache and the `runs` map).
 */
interface CallPlan {
  /**
   * f's parameters and where their gradients go (as in its adjoint, which is not compiled for
   * this: the second-order program is made from f's gradient program directly).
   */
  readonly c: Pick<CompiledAdjoint, 'params' | 'slots' | 'info'>
  /** `floatParams(c)`: the arguments with a gradient. */
  readonly floats: readonly number[]
  readonly width: number
  readonly byLoss: Map<number, LossPlan>
}

/**
 * Per loss argument: the float arguments but the loss, and per width its program and free driver;
 * per width and unit-seeded arguments (`hessian`'s programs) the same.
 */
interface LossPlan {
  readonly wrt: readonly number[]
  readonly drivers: Array<SecondOrderRun | undefined>
  readonly unitDrivers: Map<string, SecondOrderRun>
}

const callPlans = new WeakMap<TenetFunction, CallPlan>()
/**
 * The function of the last `callPlanOf` and its plan (calls in a loop skip the WeakMap lookup).
 * Held strongly (a `WeakRef`'s deref per call cost more than the lookup it saves): the one
 * function used last, and its module, stay alive until another one is used.
 */
let lastPlanned: TenetFunction | undefined
let lastPlan: CallPlan | undefined

/** f's `CallPlan` (made on the first call). */
function callPlanOf(f: TenetFunction): CallPlan {
  if (f === lastPlanned) return lastPlan!
  let p = callPlans.get(f)
  if (!p) {
    const info = infoOf(f)
    const c = { params: f.ir.params, slots: gradientSlots(f.ir.params, info.registry), info }
    p = { c, floats: floatParams(c), width: defaultWidth(f), byLoss: new Map() }
    callPlans.set(f, p)
  }
  lastPlanned = f
  lastPlan = p
  return p
}

/** The `LossPlan` of a checked `loss` of f. */
function lossPlanOf(p: CallPlan, loss: number): LossPlan {
  let l = p.byLoss.get(loss)
  if (!l) {
    l = { wrt: p.floats.filter((i) => i !== loss), drivers: [], unitDrivers: new Map() }
    p.byLoss.set(loss, l)
  }
  return l
}

/** Whether every array among the loaded values `b` is the one at the same place in `a` (scalars may differ). */
function sameArrays(a: readonly unknown[], b: readonly unknown[]): boolean {
  for (let i = 0; i < b.length; i++) {
    const v = b[i]
    if (typeof v === 'object' && v !== a[i]) return false
  }
  return true
}

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
  /** How many entries of `seeded` are in use (the array is reused, not truncated). */
  private nSeeded = 0
  /**
   * The argument positions of seeded scalar tangents, reset to 0 by `start` (the other scalars of
   * `argv` keep what the last full start, or load, put there: the program does not write `argv`).
   */
  private readonly seededScalars: number[] = []
  private nSeededScalars = 0
  /**
   * Whether rows above a sweep's first column are skipped (a unit-seeded parameter with a row
   * offset): then the lower triangle is all there is, and `columns` mirrors it.
   */
  readonly mirror: boolean
  /** Calls the program with `argv` positionally (no `apply` of a long argument list). */
  private readonly call: () => void
  /**
   * On a backend with its own memory (wasm): the arrays of `argv` live there, so that a sweep
   * copies nothing in or out (see `CompiledFunction.resident`). Not for a run made while a call of
   * that memory is under way (`resident` false: see `secondOrderRun`), which could not allocate them.
   */
  private readonly memory: ResidentMemory | undefined
  /** Per argument in resident mode: its array there. */
  private readonly handles: Array<ResidentArray | undefined>
  busy = false

  constructor(
    readonly so: CompiledSecondOrder,
    private readonly f: TenetFunction,
    private readonly loss: number,
    resident = true,
  ) {
    this.w = so.width
    this.n = so.params.length
    this.mirror = so.units.some((u) => u.from !== undefined)
    this.sink = this.n + so.gradientSlots.filter((s) => s).length
    let total = so.programParams.length
    for (const s of so.slots) if (s) total += s.kind === 'scalar' ? this.w : 1
    for (const u of so.units) total += u.from === undefined ? 1 : 2
    this.argv = new Array<unknown>(total).fill(0)
    const info = infoOf(so.program)
    const writes = info.program.writes.get(info.name)
    this.written = this.argv.map((_, j) => writes?.[j] !== false)
    // identifiers only: no user text reaches the generated source
    const core = so.program.core,
      argv = this.argv
    this.call = evalAllowed()
      ? (new Function('F', 'a', `return function call() { F(${this.argv.map((_, j) => `a[${j}]`).join(', ')}) }`)(
          core,
          argv,
        ) as () => void)
      : () => core(...argv) // no generated code where it is forbidden (strict CSP)
    this.memory = resident ? so.program.core.resident : undefined
    this.handles = this.argv.map(() => undefined)
  }

  /**
   * In resident mode: puts at argv[j] the resident array of argument j with `len` elements (its
   * contents as they were when reused, zero when new) and returns it.
   */
  private place(j: number, len: number): TypedArray {
    let h = this.handles[j]
    if (!h || h.length !== len) {
      // (the new array first: an allocation that throws leaves the old one in place)
      const t = this.so.program.ir.params[j]!.type as { elem: string }
      const fresh = this.memory!.allocate(t.elem, len)
      h?.release()
      h = this.handles[j] = fresh
      this.anyHandle = h
    }
    return (this.argv[j] = h.array)
  }

  /** In resident mode: the last array `place` allocated (all share the memory's buffer), if any. */
  private anyHandle: ResidentArray | undefined

  /** The memory's buffer when `views` last took the views (a grown memory has a new one). */
  private viewsOf: ArrayBufferLike | undefined

  /** In resident mode: the current views of the resident arrays (a call may have grown the memory). */
  private views(): void {
    const { handles, argv } = this
    // (a program with scalars only has none: nothing to take)
    const first = this.anyHandle
    if (!first) return
    const buffer = first.array.buffer
    if (buffer === this.viewsOf) return
    for (let j = 0; j < handles.length; j++) {
      const h = handles[j]
      if (h) argv[j] = h.array
    }
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
    for (let i = 0; i < this.nSeeded; i += 2) {
      const b = argv[seeded[i]!] as Float64Array
      if (ArrayBuffer.isView(b)) b[seeded[i + 1]!] = 0
    }
    this.nSeeded = 0
    const ss = this.seededScalars
    for (let i = 0; i < this.nSeededScalars; i++) argv[ss[i]!] = 0
    this.nSeededScalars = 0
    const plan = this.plan
    // a load of new values into the same arrays keeps the plan (in resident memory, the arrays the
    // program only reads are copied into the module's arrays again: \`reloads\`)
    if (plan && (!this.unplaced || sameArrays(plan.loaded, values))) {
      if (this.unplaced) {
        for (let i = 0; i < plan.reloads.length; i += 2) plan.reloads[i]!.set(plan.reloads[i + 1] as never)
        // (a scalar parameter's value changes with a load only)
        for (const i of plan.params) argv[i] = values[i]
      }
      for (let i = 0; i < plan.copies.length; i += 2) plan.copies[i]!.set(plan.copies[i + 1] as never)
      for (const z of plan.zeros) z.fill(0)
      // (the gradient, sink and tangent scalars are as the full start set them, seeds reset above)
      this.unplaced = false
      return
    }
    for (let i = 0; i < this.n; i++) {
      const v = values[i]
      if (ArrayBuffer.isView(v)) {
        if (this.memory) {
          // the arrays the program only reads keep their values from one sweep to the next
          const h = this.handles[i]
          if (this.unplaced || this.written[i] || !h || h.length !== (v as TypedArray).length)
            this.place(i, (v as TypedArray).length).set(v as Float64Array)
          continue
        }
        if (!this.written[i]) {
          argv[i] = v
          continue
        }
        const src = v as Float64Array
        let b = argv[i] as Float64Array
        if (!ArrayBuffer.isView(b) || b === src || b.length !== src.length || b.constructor !== src.constructor)
          b = argv[i] = new (src.constructor as Float64ArrayConstructor)(src.length)
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
   * values, the written gradient and tangent arrays to zero, and after a load the scalar
   * parameters to set (the other scalars stay as this full start set them). Undefined when f has
   * stacks (fresh JS arrays per sweep).
   */
  private planStart(): StartPlan | undefined {
    const { so, argv, values } = this
    const plan: StartPlan = { copies: [], reloads: [], zeros: [], params: [], loaded: values.slice() }
    for (let i = 0; i < this.n; i++) {
      const v = values[i]
      if (Array.isArray(v)) return undefined
      if (!ArrayBuffer.isView(v)) plan.params.push(i)
      else if (this.written[i]) plan.copies.push(argv[i] as TypedArray, v as TypedArray)
      else if (this.memory) plan.reloads.push(argv[i] as TypedArray, v as TypedArray)
    }
    const gradientArrays = so.gradientSlots.filter((s) => s?.kind === 'array').map((s) => s!.index)
    const tangentArrays = so.slots.filter((t) => t?.kind === 'array').map((t) => t!.index)
    if (so.gradientSlots.some((s) => s?.kind === 'stack') || so.slots.some((t) => t?.kind === 'stack')) return undefined
    for (const j of [...gradientArrays, ...tangentArrays]) if (this.written[j]) plan.zeros.push(argv[j] as TypedArray)
    return plan
  }

  /** The last `planStart`, while its buffers are the ones in `argv`. */
  private plan: StartPlan | undefined

  /** The last `positionsOf`: its `wrt`, the lengths of those values then, and the result. */
  private seedsFor: { wrt: number[]; lengths: number[]; positions: SeedPositions } | undefined

  /**
   * The (parameter, element) of every scalar of the parameters `wrt` of the loaded values, in
   * order (arrays flattened): the Hessian's rows and columns. Kept between calls while `wrt` and
   * the lengths are the same, so that a call in a loop allocates nothing here.
   */
  positionsOf(wrt: readonly number[]): SeedPositions {
    const { values } = this
    const last = this.seedsFor
    if (last && last.wrt.length === wrt.length) {
      let same = true
      for (let i = 0; i < wrt.length && same; i++) {
        const v = values[wrt[i]!]
        same =
          last.wrt[i] === wrt[i] && last.lengths[i] === (typeof v === 'number' ? -1 : (v as ArrayLike<number>).length)
      }
      if (same) return last.positions
    }
    const lengths = wrt.map((p) => {
      const v = values[p]
      return typeof v === 'number' ? -1 : (v as ArrayLike<number>).length
    })
    const n = lengths.reduce((s, l) => s + (l < 0 ? 1 : l), 0)
    const positions: SeedPositions = {
      params: new Int32Array(n),
      elements: new Int32Array(n),
      starts: new Int32Array(values.length).fill(-1),
    }
    let at = 0
    wrt.forEach((p, i) => {
      const l = lengths[i]!
      if (positions.starts[p] === -1) positions.starts[p] = at
      for (let e = 0; e < (l < 0 ? 1 : l); e++, at++) {
        positions.params[at] = p
        positions.elements[at] = e
      }
    })
    this.seedsFor = { wrt: wrt.slice(), lengths, positions }
    return positions
  }

  /** Sets the tangent of parameter p of f (element e of an array) in direction k. */
  seed(p: number, e: number, k: number, value: number): void {
    const t = this.so.slots[p]
    if (!t)
      argError(
        `argument ${p} of \`${infoOf(this.f).name}\` is not a float scalar or float array: second derivatives need values of a differentiable number system (f64, f32, fixed point, ulog)`,
      )
    else if (t.kind === 'scalar') {
      this.argv[t.index + k] = value
      this.seededScalars[this.nSeededScalars++] = t.index + k
    } else {
      ;(this.argv[t.index] as Float64Array)[e * this.w + k] = value
      if (!this.written[t.index]) {
        this.seeded[this.nSeeded++] = t.index
        this.seeded[this.nSeeded++] = e * this.w + k
      }
    }
  }

  /**
   * Sets the offsets of the unit-seeded parameters (`CompiledSecondOrder.units`) for a sweep whose
   * direction 0 is row c0: parameter p's element e is seeded in direction starts[p] + e − c0.
   */
  unitOffsets(c0: number, starts: Int32Array): void {
    const u = this.so.units
    for (let i = 0; i < u.length; i++) {
      const o = c0 - starts[u[i]!.param]!
      this.argv[u[i]!.index] = o
      if (u[i]!.from !== undefined) this.argv[u[i]!.from!] = o
    }
  }

  run(): void {
    if (!this.memory) {
      this.call()
      return
    }
    this.views()
    try {
      this.call()
    } finally {
      this.views()
    }
  }

  /** After `run`: the tangent (direction k) of the gradient of parameter p of f, element e, i.e. (H·vₖ) there. */
  gradTangent(p: number, e: number, k: number): number {
    const t = this.so.slots[this.so.gradientSlots[p]!.index]!
    return t.kind === 'scalar'
      ? this.so.program.core.results[t.index + k]!
      : (this.argv[t.index] as Float64Array)[e * this.w + k]!
  }

  /**
   * After `run`: puts directions 0…count−1 of the gradient tangents of the parameters `wrt` (their
   * scalars in order) into columns c0… of the row-major n×n matrix H, as computed (`hessian`
   * symmetrises once all columns are in). With `mirror`, only the rows from c0 on are read (the
   * rows above may have been skipped), and each value below the diagonal is written to its mirror
   * image above it too, so that H is symmetric once all columns are in, the upper triangle the
   * lower's image (without a pass over H after the sweeps).
   */
  columns(wrt: number[], H: Float64Array, n: number, c0: number, count: number, mirror = false): void {
    const { so, w } = this
    const res = so.program.core.results
    let row = 0
    for (const p of wrt) {
      const t = so.slots[so.gradientSlots[p]!.index]!
      const scalar = t.kind === 'scalar'
      const b = scalar ? res : (this.argv[t.index] as Float64Array)
      // (a scalar's w directions are at t.index… of the results)
      const base = scalar ? t.index : 0
      const len = scalar ? 1 : b.length / w
      if (!mirror) {
        if (count === w && !scalar) rowCopier(w)(H, b, len, row * n + c0, n, 0)
        else
          for (let e = 0; e < len; e++) for (let k = 0; k < count; k++) H[(row + e) * n + c0 + k] = b[base + e * w + k]!
        row += len
        continue
      }
      // the rows from c0 on, as computed
      const e0 = Math.max(0, c0 - row)
      if (e0 >= len) {
        row += len
        continue
      }
      if (count === w && !scalar) {
        // both in one pass over the rows (each value read once)
        mirrorCopier(w)(H, b, len, e0, row, c0, n)
        row += len
        continue
      }
      for (let e = e0; e < len; e++) for (let k = 0; k < count; k++) H[(row + e) * n + c0 + k] = b[base + e * w + k]!
      // and below the diagonal, mirrored: row c of H takes column c's values of the rows r > c
      for (let k = 0; k < count; k++) {
        const c = c0 + k
        const from = Math.max(e0, c + 1 - row)
        for (let e = from, at = c * n + row + from, s = base + from * w + k; e < len; e++, at++, s += w) H[at] = b[s]!
      }
      row += len
    }
  }
}

/**
 * Copies the rows e0…len−1 of one array's gradient tangents (w directions each, b[e·w + k]) to
 * H[(row + e)·n + c0 + k] and, below the diagonal (c0 + k < row + e), to the mirror image
 * H[(c0 + k)·n + row + e]: `columns`' mirrored copy, each value read once. (See `mirrorCopier`.)
 */
export type MirrorCopy = (
  H: Float64Array,
  b: ArrayLike<number>,
  len: number,
  e0: number,
  row: number,
  c0: number,
  n: number,
) => void
const mirrorCopiers = new Map<number, MirrorCopy>()

/**
 * The `MirrorCopy` at width w: per row, the w values are read once and written to the row and
 * (below the diagonal) to the column, the w copies written out (numbers only in the generated
 * source); in the first w rows of a sweep (the diagonal block) the column's part takes a loop.
 * Wider than 64, or where generated code is forbidden, a loop. (Exported for its test; not part of
 * the package's API.)
 */
export function mirrorCopier(w: number): MirrorCopy {
  let f = mirrorCopiers.get(w)
  if (f) return f
  if (w > 64 || !evalAllowed()) {
    f = (H, b, len, e0, row, c0, n) => {
      for (let e = e0, s = e0 * w, d = (row + e0) * n + c0, t = c0 * n + row + e0; e < len; e++, s += w, d += n, t++) {
        const m = Math.min(w, row + e - c0)
        for (let k = 0; k < w; k++) H[d + k] = b[s + k]!
        for (let k = 0, u = t; k < m; k++, u += n) H[u] = b[s + k]!
      }
    }
  } else {
    const both = Array.from({ length: w }, (_, k) => `v = b[s + ${k}]; H[d + ${k}] = v; H[t + ${k} * n] = v;`).join(' ')
    const rowOnly = Array.from({ length: w }, (_, k) => `H[d + ${k}] = b[s + ${k}];`).join(' ')
    // numbers only: no user text reaches the generated source
    f = new Function(
      `return function mirrorCopy(H, b, len, e0, row, c0, n) {
  let v = 0
  for (let e = e0, s = e0 * ${w}, d = (row + e0) * n + c0, t = c0 * n + row + e0; e < len; e++, s += ${w}, d += n, t++) {
    const m = row + e - c0
    if (m >= ${w}) { ${both} } else {
      ${rowOnly}
      for (let k = 0, u = t; k < m; k++, u += n) H[u] = b[s + k]
    }
  }
}`,
    )() as MirrorCopy
  }
  mirrorCopiers.set(w, f)
  return f
}

type RowCopy = (H: Float64Array, b: ArrayLike<number>, len: number, at: number, n: number, from?: number) => void
const rowCopiers = new Map<number, RowCopy>()

/**
 * A function that copies `len` rows of w values, b[from + e·w…from + e·w + w−1] to H[at + e·n…]
 * (`from` 0 unless given), with the w copies of a row written out (a loop of 8 or 16 turns per
 * row costs V8 about twice as much).
 */
function rowCopier(w: number): RowCopy {
  let f = rowCopiers.get(w)
  if (!f) {
    if (w > 64 || !evalAllowed()) {
      f = (H, b, len, at, n, from = 0) => {
        for (let e = 0; e < len; e++) for (let k = 0; k < w; k++) H[at + e * n + k] = b[from + e * w + k]!
      }
    } else {
      const body = Array.from({ length: w }, (_, k) => `H[d + ${k}] = b[s + ${k}];`).join(' ')
      // numbers only: no user text reaches the generated source
      f = new Function(
        'H',
        'b',
        'len',
        'at',
        'n',
        'from',
        `for (let e = 0, s = from | 0, d = at; e < len; e++, s += ${w}, d += n) { ${body} }`,
      ) as RowCopy
    }
    rowCopiers.set(w, f)
  }
  return f
}

/**
 * Makes the row-major n×n matrix H symmetric: each pair of mirrored elements becomes their mean
 * (where the upper triangle was computed too; without it, `columns` mirrors the lower one).
 */
function symmetrise(H: Float64Array, n: number): void {
  // in tiles of T×T, so that the column-wise half of each pair stays in cache
  const T = 16
  for (let i0 = 0; i0 < n; i0 += T) {
    const i1 = Math.min(i0 + T, n)
    for (let j0 = i0; j0 < n; j0 += T) {
      const j1 = Math.min(j0 + T, n)
      for (let i = i0; i < i1; i++) {
        const j = j0 > i ? j0 : i + 1
        const e = i * n + j1
        for (let a = i * n + j, b = j * n + i; a < e; a++, b += n) {
          const s = (H[a]! + H[b]!) * 0.5
          H[a] = s
          H[b] = s
        }
      }
    }
  }
}

const runs = new WeakMap<CompiledSecondOrder, SecondOrderRun>()

/** Whether a call of the memory `so`'s program lives in is under way (see `ResidentMemory.busy`). */
function underWay(so: CompiledSecondOrder): boolean {
  return so.program.core.resident?.busy?.() === true
}

/**
 * The driver of f's second-order program at width w, loaded with `args` (reused between calls when
 * free). With `lp`, f's `LossPlan` for `loss`, the program and driver are kept there by width (and
 * unit-seeded parameters). `units`: the parameters whose tangents the caller seeds with unit
 * vectors only (see `compileSecondOrder`).
 *
 * Reentrancy: a host function of f may call `hessian` or `hvp` of f again while a sweep runs. The
 * kept driver is then busy (its buffers hold the outer call's sweep), and the inner call gets a
 * driver of its own, which is not kept; on a backend with its own memory, which refuses to
 * allocate while a call is under way (\`ResidentMemory.busy\`), one that passes host arrays.
 */
function secondOrderRun(
  f: TenetFunction,
  args: unknown[],
  loss: number,
  w: number,
  lp?: LossPlan,
  units: readonly number[] = [],
): SecondOrderRun {
  const key = units.length === 0 ? undefined : `${w}/${units.join('_')}`
  let run = key === undefined ? lp?.drivers[w] : lp?.unitDrivers.get(key)
  if (run && !run.busy && underWay(run.so)) run = new SecondOrderRun(run.so, f, loss, false)
  else if (!run || run.busy) {
    const so = run?.so ?? compileSecondOrder(f, loss, w, units)
    if (underWay(so)) {
      // (not kept: a later call outside the host function takes the resident driver)
      run = new SecondOrderRun(so, f, loss, false)
      run.load(args)
      return run
    }
    run = runs.get(so)
    if (!run) {
      run = new SecondOrderRun(so, f, loss)
      runs.set(so, run)
    } else if (run.busy) {
      // (the kept driver is busy: a call from its user code, a direction's getter say; this one
      // is not kept, so it holds host arrays, nothing resident that no one would release)
      run = new SecondOrderRun(so, f, loss, false)
      run.load(args)
      return run
    }
    if (lp && key === undefined && !lp.drivers[w]) lp.drivers[w] = run
    else if (lp && key !== undefined && !lp.unitDrivers.has(key)) lp.unitDrivers.set(key, run)
  }
  run.load(args)
  return run
}

/** Options of `hessian`. */
export interface HessianOptions extends LossOptions {
  /** Indices of the float arguments the Hessian is taken over (default: all float arguments but the loss). */
  wrt?: number[]
  /**
   * The most Hessian columns per forward-over-reverse sweep (default: the backend's
   * `hessianWidth` capability, else 8; cpu 25, wasm 20). The directions are spread
   * evenly over the sweeps this width needs (20 columns at most 8 wide: three sweeps of 7).
   */
  width?: number
  /**
   * Where to write the Hessian (n·n elements for n wrt scalars) instead of a new array, for calls
   * in a loop; it is returned. After an error its contents are unspecified.
   */
  out?: Float64Array
  /**
   * How the columns are computed: `'forward-over-reverse'` (default; the tangent of the adjoint,
   * `width` columns per sweep) or `'reverse-over-forward'` (the second-order adjoint of seed 002
   * §III.B, see `secondOrderAdjoint`: one reverse sweep of the tangent program per column, slower
   * on the graph embedding; `width` is ignored).
   */
  method?: 'forward-over-reverse' | 'reverse-over-forward'
}

/**
 * The dense symmetric Hessian of the loss over the scalars of `wrt` (arrays flattened), row-major,
 * exact: forward-over-reverse, i.e. the tangent transform of the adjoint at width w computes w
 * Hessian columns per sweep (⌈n / w⌉ sweeps of the forward tangent plus the adjoint's tangent).
 * The result is symmetrised ((H + Hᵀ) / 2, which only evens out rounding). The wrt arrays'
 * tangents are unit seeds, and the program is compiled for that (`compileSecondOrder`'s `units`):
 * a seed read costs one update, not w; without run-time checks the rows above a sweep's first
 * column are skipped where the gradient is only accumulated into, and the lower triangle is
 * mirrored instead.
 */
export function hessian(f: TenetFunction, args: unknown[], options: HessianOptions): Float64Array {
  optionsOf('hessian', options, true)
  argsOf('hessian', args)
  indexList('hessian', 'wrt', options.wrt)
  positiveInteger('hessian', 'width', options.width)
  const method = options.method ?? 'forward-over-reverse'
  if (method === 'reverse-over-forward') return hessianReverseOverForward(f, args, options)
  if (method !== 'forward-over-reverse')
    argError(`\`method\` must be 'forward-over-reverse' or 'reverse-over-forward', got ${String(method)}`)
  const plan = callPlanOf(f)
  const c = plan.c
  checkLoss(c, options.loss)
  const lp = lossPlanOf(plan, options.loss)
  const wrt = (options.wrt ?? lp.wrt) as number[]
  let directions = 0
  // the float arrays among them: their tangents get unit seeds only (see `compileSecondOrder`)
  const units: number[] = []
  for (let j = 0; j < wrt.length; j++) {
    const i = wrt[j]!
    if (!c.slots[i] || c.params[i]!.type.kind === 'stack')
      argError(`argument ${i} of \`${c.info.name}\` is not a float scalar or float array, so it has no Hessian`)
    // no wider than the number of directions, as the arguments give it (so that a small Hessian
    // compiles and loads one program, not the requested width's first)
    const a = args[i]
    directions += ArrayBuffer.isView(a) ? (a as Float64Array).length : 1
    // (an argument listed twice is seeded twice: not unit vectors)
    if (ArrayBuffer.isView(a) && wrt.indexOf(i) === j && wrt.lastIndexOf(i) === j) units.push(i)
  }
  const run = secondOrderRun(f, args, options.loss, balancedWidth(options.width ?? plan.width, directions), lp, units)
  const pos = run.positionsOf(wrt)
  const n = pos.params.length
  const out = options.out
  if (out !== undefined && !(out instanceof Float64Array && out.length === n * n)) {
    argError(
      `\`out\` must be a Float64Array of ${n * n} elements (${n}×${n}), got ${out instanceof Float64Array ? `one of ${out.length}` : ArrayBuffer.isView(out) ? `a ${(out as object).constructor.name}` : out === null ? 'null' : Array.isArray(out) ? 'an array' : typeof out}`,
    )
  }
  // (every element is written: no zeroing of \`out\`)
  const H = out ?? new Float64Array(n * n)
  if (n === 0) return H
  const w = Math.min(run.w, n)
  const r = w === run.w ? run : secondOrderRun(f, args, options.loss, w, lp, units)
  // where rows above a sweep's first column are skipped, the lower triangle is all there is:
  // `columns` mirrors it as it goes
  const mirror = r.mirror
  r.busy = true
  try {
    for (let c0 = 0; c0 < n; c0 += w) {
      r.start()
      r.unitOffsets(c0, pos.starts)
      const count = Math.min(w, n - c0)
      for (let k = 0; k < count; k++) r.seed(pos.params[c0 + k]!, pos.elements[c0 + k]!, k, 1)
      r.run()
      r.columns(wrt, H, n, c0, count, mirror)
    }
  } finally {
    r.busy = false
  }
  if (!mirror) symmetrise(H, n)
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
  if (!Array.isArray(options.v))
    argError(`\`hvp\` needs \`v\`, the direction: an array shaped like the arguments, got ${typeof options.v}`)
  const plan = callPlanOf(f)
  const c = plan.c
  checkLoss(c, options.loss)
  const r = secondOrderRun(f, args, options.loss, 1, lossPlanOf(plan, options.loss))
  r.busy = true
  try {
    // the direction read before the start where reading it may run user code (a getter of \`v\` or
    // of a plain array may run another driver, whose allocation can grow wasm memory under the
    // views \`start\` takes); a typed array's elements are read after it, as they are
    const dirs = plan.floats.map((p) => {
      const d = options.v[p]
      if (d === null || d === undefined || typeof d === 'number' || ArrayBuffer.isView(d)) return d
      const n = (r.values[p] as ArrayLike<number>).length
      const copy = new Float64Array(n)
      for (let e = 0; e < n; e++) copy[e] = d[e] ?? 0
      return copy
    })
    r.start()
    plan.floats.forEach((p, j) => {
      const d = dirs[j]
      if (d === null || d === undefined) return
      if (typeof d === 'number') r.seed(p, 0, 0, d)
      else for (let e = 0; e < (r.values[p] as ArrayLike<number>).length; e++) r.seed(p, e, 0, d[e] ?? 0)
    })
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
  } finally {
    r.busy = false
  }
}
