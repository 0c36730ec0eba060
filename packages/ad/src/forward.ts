/**
 * Forward mode and second order: `jvp` (a tangent sweep), `jacobian` (forward columns or reverse
 * rows, whichever is cheaper), and the exact `hvp` and `hessian` by forward-over-reverse: the
 * tangent transform applied to the adjoint, which is ordinary reversible IR.
 */
import type { Registry } from '@tenet/ir'
import type { TenetFunction } from '@tenet/reversible'
import { Sweep, argError, checkLoss, floatParams, type Gradient, type LossOptions } from './api.js'
import { compileAdjoint, compileTangent, infoOf, type CompiledTangent } from './compile.js'
import { isDiffType, isFloatType } from './expr.js'

const elemName = (t: { kind: string; name?: string; elem?: string }): string => (t.kind === 'scalar' ? t.name! : t.elem!)

type TypedArray = Float64Array | Float32Array | Int32Array | Uint8Array
const CTORS = { Float64Array, Float32Array, Int32Array, Uint8Array } as const

/** Default number of directions per tangent sweep (Hessian and forward Jacobian columns). */
export const DEFAULT_WIDTH = 8

/** Checks and converts the caller's arguments (arrays and stacks copied), like a call of `f`. */
function loadArgs(f: TenetFunction, args: ArrayLike<unknown>): unknown[] {
  const info = infoOf(f)
  const params = f.ir.params
  const name = info.name
  if (args.length !== params.length) argError(`\`${name}\` takes ${params.length} arguments (${params.map((p) => p.name).join(', ')}), got ${args.length}`)
  return params.map((p, i) => {
    const a = args[i]
    if (p.type.kind === 'scalar') {
      if (p.type.name === 'bool') return typeof a === 'boolean' ? a : argError(`argument ${i + 1} (\`${p.name}\`) of \`${name}\` must be a boolean`)
      if (typeof a !== 'number') argError(`argument ${i + 1} (\`${p.name}\`) of \`${name}\` must be a number`)
      const fh = info.registry.findNumberSystem(p.type.name)?.fromHost
      return fh ? fh(a as number) : a
    }
    if (p.type.kind === 'array') {
      const ctor = CTORS[info.registry.numberSystem(p.type.elem).arrayType]
      if (!(a instanceof ctor)) argError(`argument ${i + 1} (\`${p.name}\`) of \`${name}\` must be a ${ctor.name}`)
      return (a as TypedArray).slice()
    }
    if (!Array.isArray(a)) argError(`argument ${i + 1} (\`${p.name}\`) of \`${name}\` must be a JS array (a stack)`)
    return (a as unknown[]).slice()
  })
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

  /** The value of parameter p (element e of an array). */
  value(p: number, e: number): number {
    const v = this.argv[p]
    return typeof v === 'number' ? v : (v as Float64Array)[e]!
  }

  /** Copies the tangents of parameter p of `other` (same width and layout) into parameter q here. */
  copyTangent(other: TangentRun, p: number, q: number): void {
    const a = other.ct.slots[p]!, b = this.ct.slots[q]!
    if (a.kind === 'scalar') for (let k = 0; k < this.w; k++) this.argv[b.index + k] = other.argv[a.index + k]
    else if (a.kind === 'array') (this.argv[b.index] as Float64Array).set(other.argv[a.index] as Float64Array)
    else this.argv[b.index] = (other.argv[a.index] as unknown[]).slice()
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

function isFloatParam(registry: Registry, t: { kind: string; name?: string; elem?: string }): boolean {
  return isFloatType(registry, t.kind === 'scalar' ? t.name : t.elem)
}

/**
 * The Jacobian-vector product (forward mode): one run of the tangent of `f`, which carries the
 * directional derivative along `v` beside every float value.
 * ```ts
 * jvp(m.f, [0, 3], { v: [0, 1] })  // for y += x * x: { value: [9, 3], tangent: [6, 1] }
 * ```
 */
export function jvp(f: TenetFunction, args: unknown[], options: JvpOptions): JvpResult {
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
    if (p.type.kind !== 'scalar' || typeof v !== 'number') return v
    const th = info.registry.findNumberSystem(p.type.name)?.toHost
    return th ? th(v) : v
  })
  const tangent: Gradient = ct.params.map((p, i) => {
    const s = ct.slots[i]
    if (!s || s.kind === 'stack' || !isFloatParam(info.registry, p.type)) return null
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
   * `width` rows each (one forward run plus one run of `f$adj<w>` carrying w output seeds; ulog
   * arguments allowed); `'auto'` (default): the cheaper by counts (see `jacobianCost`).
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
  const info = infoOf(f)
  const params = f.ir.params
  const written = info.program.writes.get(info.name)!
  // reverse mode differentiates every differentiable type (ulog included); forward mode floats only
  const isFloat = (i: number) => params[i]!.type.kind !== 'stack' && (options.mode === 'reverse' ? isDiffType(info.registry, elemName(params[i]!.type)) : isFloatParam(info.registry, params[i]!.type))
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

/**
 * Forward-over-reverse: the tangent of `f` (values and w tangent directions to the outputs), then
 * the tangent of f's adjoint seeded with the loss gradient 1: the tangents of the gradients are
 * Hessian columns. `seed(run, k)` sets the input tangents of direction k; `read(adj)` collects.
 */
class SecondOrder {
  readonly c
  readonly t1: TangentRun
  readonly t2: TangentRun
  private readonly values: unknown[]

  constructor(f: TenetFunction, args: unknown[], readonly loss: number, readonly w: number) {
    this.c = compileAdjoint(f)
    checkLoss(this.c, loss)
    this.t1 = new TangentRun(compileTangent(f, w))
    this.t2 = new TangentRun(compileTangent(this.c.adjoint, w))
    const sweep = new Sweep(this.c)
    sweep.load(args)
    this.values = sweep.fwd.slice()
  }

  private readonly zeroBufs: Array<Float64Array | undefined> = []
  /** A zero array like v (shared; only read: the tangent run copies its arguments). */
  private zeros(i: number, v: Float64Array): Float64Array {
    let z = this.zeroBufs[i]
    if (!z || z.length !== v.length || z.constructor !== v.constructor) z = this.zeroBufs[i] = new (v.constructor as Float64ArrayConstructor)(v.length)
    return z
  }

  /** Loads the inputs with zero tangents (seed them on `t1`, then call `sweep`). */
  start(): void { this.t1.load(this.values) }

  /** Runs both tangent sweeps; afterwards `gradTangent(p, e, k)` is (H·direction k) at (p, e). */
  sweep(): void {
    const { c, t1, t2 } = this
    t1.run()
    const n = c.params.length
    const adjVals = new Array<unknown>(t2.ct.params.length)
    for (let i = 0; i < n; i++) adjVals[i] = t1.argv[i]
    c.slots.forEach((s, i) => {
      if (!s) return
      const v = t1.argv[i]
      adjVals[s.index] = s.kind === 'scalar' ? (i === this.loss ? 1 : 0)
        : s.kind === 'array' ? this.zeros(i, v as Float64Array) : new Array<number>((v as unknown[]).length).fill(0)
    })
    adjVals[adjVals.length - 1] = 0
    t2.load(adjVals)
    for (let i = 0; i < n; i++) if (c.slots[i]) t2.copyTangent(t1, i, i)
    t2.run()
  }

  /** The tangent (direction k) of the gradient of parameter p, element e. */
  gradTangent(p: number, e: number, k: number): number { return this.t2.tangent(this.c.slots[p]!.index, e, k) }
  /** The gradient of parameter p, element e (of the last sweep). */
  gradient(p: number, e: number): number { return this.t2.value(this.c.slots[p]!.index, e) }
}

/** Options of `hessian`. */
export interface HessianOptions extends LossOptions {
  /** Indices of the float arguments the Hessian is taken over (default: all float arguments but the loss). */
  wrt?: number[]
  /** Hessian columns per forward-over-reverse sweep (default 8, at most the number of wrt scalars). */
  width?: number
}

/**
 * The dense symmetric Hessian of the loss over the scalars of `wrt` (arrays flattened), row-major,
 * exact: forward-over-reverse, i.e. the tangent transform of the adjoint at width w computes w
 * Hessian columns per sweep (⌈n / w⌉ sweeps of the forward tangent plus the adjoint's tangent).
 * The result is symmetrised ((H + Hᵀ) / 2, which only evens out rounding).
 */
export function hessian(f: TenetFunction, args: unknown[], options: HessianOptions): Float64Array {
  const c = compileAdjoint(f)
  checkLoss(c, options.loss)
  const wrt = options.wrt ?? floatParams(c).filter((i) => i !== options.loss)
  for (const i of wrt) if (!c.slots[i] || c.params[i]!.type.kind === 'stack') argError(`argument ${i} of \`${c.info.name}\` is not a float scalar or float array, so it has no Hessian`)
  const sweep = new Sweep(c)
  sweep.load(args)
  const pos = positions(sweep.fwd, wrt)
  const n = pos.length
  const H = new Float64Array(n * n)
  if (n === 0) return H
  const w = Math.max(1, Math.min(options.width ?? DEFAULT_WIDTH, n))
  const so = new SecondOrder(f, args, options.loss, w)
  for (let c0 = 0; c0 < n; c0 += w) {
    so.start()
    for (let k = 0; k < w && c0 + k < n; k++) { const [p, e] = pos[c0 + k]!; so.t1.seed(p, e, k, 1) }
    so.sweep()
    pos.forEach(([p, e], i) => {
      for (let k = 0; k < w && c0 + k < n; k++) H[i * n + c0 + k] = so.gradTangent(p, e, k)
    })
  }
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const s = (H[i * n + j]! + H[j * n + i]!) / 2
      H[i * n + j] = s; H[j * n + i] = s
    }
  }
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
  const so = new SecondOrder(f, args, options.loss, 1)
  const c = so.c
  so.start()
  for (const p of floatParams(c)) {
    const d = options.v[p]
    if (d === null || d === undefined) continue
    if (typeof d === 'number') so.t1.seed(p, 0, 0, d)
    else for (let e = 0; e < (so.t1.argv[p] as ArrayLike<number>).length; e++) so.t1.seed(p, e, 0, d[e] ?? 0)
  }
  so.sweep()
  return c.params.map((p, i) => {
    const s = c.slots[i]
    if (!s || s.kind === 'stack') return null
    if (s.kind === 'scalar') return so.gradTangent(i, 0, 0)
    const len = (so.t1.argv[i] as ArrayLike<number>).length
    const out = new ((so.t1.argv[i] as Float64Array).constructor as Float64ArrayConstructor)(len)
    for (let e = 0; e < len; e++) out[e] = so.gradTangent(i, e, 0)
    return out
  })
}

