/**
 * The public AD functions: `gradient`, `grad`, `jacobian`, `hessian`, `hvp`, `checkGrad`. Each
 * gradient is one forward run of the function and one run of its compiled adjoint: the values go
 * back to the inputs while the gradients accumulate. No tape, no per-scalar objects.
 */
import { TenetError, type CompiledFunction } from '@tenet/ir'
import type { TenetFunction } from '@tenet/reversible'
import { compileAdjoint, type CompiledAdjoint } from './compile.js'

/** A gradient per argument: a number for a float scalar, a typed array for a float array, null otherwise. */
export type Gradient = Array<number | Float64Array | Float32Array | null>

/** Which argument holds the loss. */
export interface LossOptions {
  /** Index of the float scalar argument that holds the loss (NiLang's `Val(i)`, 0-based). */
  loss: number
}

type TypedArray = Float64Array | Float32Array | Int32Array | Uint8Array
const CTORS = { Float64Array, Float32Array, Int32Array, Uint8Array } as const

const argError = (msg: string): never => { throw new TenetError('ad/argument', msg) }

/** Drives one compiled adjoint: owns copies of the arguments and the gradient buffers, reused. */
class Sweep {
  readonly fwd: unknown[]
  private readonly adj: unknown[]
  private readonly bufs: Array<TypedArray | undefined>
  private readonly gbufs: Array<Float64Array | Float32Array | undefined>
  private readonly isBool: boolean[]
  private readonly fromHost: Array<((x: number) => number) | undefined>
  private readonly sink: number
  private readonly adjointCore: CompiledFunction

  constructor(readonly c: CompiledAdjoint) {
    const n = c.params.length
    this.fwd = new Array<unknown>(n).fill(0)
    this.sink = n + c.slots.filter((s) => s).length
    this.adj = new Array<unknown>(this.sink + 1).fill(0)
    this.bufs = new Array(n).fill(undefined)
    this.gbufs = new Array(n).fill(undefined)
    this.isBool = c.params.map((p) => p.type.kind === 'scalar' && p.type.name === 'bool')
    this.fromHost = c.params.map((p) => (p.type.kind === 'scalar' ? c.info.registry.findNumberSystem(p.type.name)?.fromHost : undefined))
    this.adjointCore = c.adjoint.core
  }

  get name(): string { return this.c.info.name }

  /** Copies the caller's arguments (arrays into owned buffers, so the caller's are left as passed). */
  load(args: ArrayLike<unknown>): void {
    const params = this.c.params
    if (args.length !== params.length) argError(`\`${this.name}\` takes ${params.length} arguments (${params.map((p) => p.name).join(', ')}), got ${args.length}`)
    for (let i = 0; i < params.length; i++) {
      const p = params[i]!, a = args[i]
      if (p.type.kind === 'scalar') {
        if (this.isBool[i]) {
          if (typeof a !== 'boolean') argError(`argument ${i + 1} (\`${p.name}\`) of \`${this.name}\` must be a boolean`)
          this.fwd[i] = a
        } else {
          if (typeof a !== 'number') argError(`argument ${i + 1} (\`${p.name}\`) of \`${this.name}\` must be a number`)
          const fh = this.fromHost[i]
          this.fwd[i] = fh ? fh(a as number) : a
        }
      } else if (p.type.kind === 'array') {
        const ctor = CTORS[this.c.info.registry.numberSystem(p.type.elem).arrayType]
        if (!(a instanceof ctor)) argError(`argument ${i + 1} (\`${p.name}\`) of \`${this.name}\` must be a ${ctor.name}`)
        let b = this.bufs[i]
        if (!b || b.length !== (a as TypedArray).length) b = this.bufs[i] = new ctor((a as TypedArray).length)
        b.set(a as never)
        this.fwd[i] = b
      } else {
        if (!Array.isArray(a)) argError(`argument ${i + 1} (\`${p.name}\`) of \`${this.name}\` must be a JS array (a stack)`)
        this.fwd[i] = (a as unknown[]).slice()
      }
    }
  }

  /** Runs the function forwards on the loaded values (scalars take their new values). */
  forward(): void {
    const core = this.c.forward
    core.apply(undefined, this.fwd)
    this.takeScalars(core.results)
  }

  private takeScalars(res: Float64Array): void {
    const params = this.c.params
    for (let i = 0; i < params.length; i++) {
      if (params[i]!.type.kind !== 'scalar') continue
      this.fwd[i] = this.isBool[i] ? res[i] !== 0 : res[i]
    }
  }

  /** Sets up the adjoint's arguments: the current values and all gradients zero. */
  clear(): void {
    const { slots, params } = this.c
    for (let i = 0; i < params.length; i++) {
      this.adj[i] = this.fwd[i]
      const s = slots[i]
      if (!s) continue
      if (s.kind === 'scalar') this.adj[s.index] = 0
      else if (s.kind === 'array') {
        const v = this.fwd[i] as Float64Array | Float32Array
        let g = this.gbufs[i]
        if (!g || g.length !== v.length) g = this.gbufs[i] = new (v.constructor as Float64ArrayConstructor)(v.length)
        else g.fill(0)
        this.adj[s.index] = g
      } else this.adj[s.index] = new Array<number>((this.fwd[i] as unknown[]).length).fill(0)
    }
    this.adj[this.sink] = 0
  }

  /** Seeds the gradient of parameter `param` (element `index` of an array) with `value`. */
  seed(param: number, index: number, value: number): void {
    const s = this.c.slots[param]
    if (!s || s.kind === 'stack') argError(`argument ${param + 1} of \`${this.name}\` has no gradient to seed (it is not a float scalar or array)`)
    if (s!.kind === 'scalar') this.adj[s!.index] = value
    else (this.adj[s!.index] as Float64Array)[index] = value
  }

  /** Runs the adjoint: values return to the inputs, gradients accumulate. */
  backward(): void {
    const core = this.adjointCore
    core.apply(undefined, this.adj)
    this.takeScalars(core.results)
  }

  /** The gradient of parameter i after `backward` (scalar or the reused buffer); null if none. */
  gradientOf(i: number): number | Float64Array | Float32Array | null {
    const s = this.c.slots[i]
    if (!s || s.kind === 'stack') return null
    if (s.kind === 'scalar') return this.adjointCore.results[s.index]!
    return this.gbufs[i]!
  }

  /** Reads a float scalar of the current values (a scalar parameter, or an element of an array one). */
  value(param: number, index: number): number {
    const v = this.fwd[param]
    return typeof v === 'number' ? v : (v as Float64Array)[index]!
  }
}

function checkLoss(c: CompiledAdjoint, loss: number): void {
  const p = c.params[loss]
  if (!Number.isInteger(loss) || !p) argError(`\`loss\` must be the index of an argument of \`${c.info.name}\` (0..${c.params.length - 1}), got ${loss}`)
  if (p!.type.kind !== 'scalar' || !c.slots[loss]) argError(`\`loss\` must be a float scalar argument, but argument ${loss} (\`${p!.name}\`) of \`${c.info.name}\` is ${p!.type.kind === 'scalar' ? p!.type.name : p!.type.kind}`)
}

/** A reusable gradient function made by `grad`. */
export interface GradientFunction {
  /**
   * Runs `f` forwards on copies of `args`, seeds the loss gradient with 1 and runs the adjoint.
   * Returns one gradient per argument. The returned array and its typed arrays are reused by
   * the next call (copy them to keep them). Scalar gradients are JS numbers, which V8 may box
   * (a few bytes per call); `run` is the strictly allocation-free form.
   */
  (...args: unknown[]): Gradient
  /**
   * The same sweep without building the result: scalar gradients go to `scalars[i]`, array
   * gradients to `buffers[i]`, the loss value to `lastLoss`. Allocates nothing in steady state.
   */
  readonly run: (...args: unknown[]) => void
  /** Scalar gradients of the last call, by argument index (0 for arguments without one). */
  readonly scalars: Float64Array
  /** Array gradients of the last call, by argument index (undefined for non-array arguments); reused. */
  readonly buffers: ReadonlyArray<Float64Array | Float32Array | undefined>
  /** The compiled adjoint (parameters: values…, gradients…, `g$sink`). */
  readonly adjoint: TenetFunction
  /** The loss value of the last call (the loss argument after the forward run). */
  readonly lastLoss: number
}

/** Support object of a generated gradient driver. */
interface DriverContext {
  fwd: CompiledFunction
  adj: CompiledFunction
  fromHost: Array<((x: number) => number) | undefined>
  scalars: Float64Array
  loss: Float64Array
  buffers: Array<Float64Array | Float32Array | undefined>
  values: Array<TypedArray | undefined>
  bad(i: number, a: unknown): never
  array(i: number, a: unknown): TypedArray
  gradBuffer(i: number, v: TypedArray): Float64Array | Float32Array
  stack(i: number, a: unknown): unknown[]
}

/**
 * Generates a fixed-arity driver for one adjoint: arguments stay in locals and both cores are
 * called positionally, so a gradient sweep allocates nothing (no argument arrays, no boxing).
 * Identifiers are generated here; no user text reaches the generated source.
 */
function makeDriver(c: CompiledAdjoint, loss: number): { run: (...a: unknown[]) => void; ctx: DriverContext } {
  const params = c.params
  const n = params.length
  const registry = c.info.registry
  const ctx: DriverContext = {
    fwd: c.forward,
    adj: c.adjoint.core,
    fromHost: params.map((p) => (p.type.kind === 'scalar' ? registry.findNumberSystem(p.type.name)?.fromHost : undefined)),
    scalars: new Float64Array(n),
    loss: new Float64Array(1),
    buffers: new Array(n).fill(undefined),
    values: new Array(n).fill(undefined),
    bad(i, a) {
      if (i < 0) return argError(`\`${c.info.name}\` takes ${n} arguments (${params.map((q) => q.name).join(', ')}), got ${a}`)
      const p = params[i]!
      const want = p.type.kind === 'scalar' ? (p.type.name === 'bool' ? 'a boolean' : 'a number') : p.type.kind === 'array' ? `a ${registry.numberSystem(p.type.elem).arrayType}` : 'a JS array (a stack)'
      return argError(`argument ${i + 1} (\`${p.name}\`) of \`${c.info.name}\` must be ${want}, got ${a === null ? 'null' : (a as object)?.constructor?.name ?? typeof a}`)
    },
    array(i, a) {
      const p = params[i]!
      const ctor = CTORS[registry.numberSystem((p.type as { elem: string }).elem).arrayType]
      if (!(a instanceof ctor)) ctx.bad(i, a)
      let b = ctx.values[i]
      if (!b || b.length !== (a as TypedArray).length) b = ctx.values[i] = new ctor((a as TypedArray).length)
      b.set(a as never)
      return b
    },
    gradBuffer(i, v) {
      let g = ctx.buffers[i]
      if (!g || g.length !== v.length) g = ctx.buffers[i] = new (v.constructor as Float64ArrayConstructor)(v.length)
      else g.fill(0)
      return g
    },
    stack(i, a) {
      if (!Array.isArray(a)) ctx.bad(i, a)
      return (a as unknown[]).slice()
    },
  }
  const args = params.map((_, i) => `a${i}`)
  const lines: string[] = []
  lines.push(`if (arguments.length !== ${n}) ctx.bad(-1, arguments.length);`)
  const vals: string[] = []
  params.forEach((p, i) => {
    const v = `v${i}`
    vals.push(v)
    if (p.type.kind === 'scalar') {
      if (p.type.name === 'bool') lines.push(`if (typeof a${i} !== 'boolean') ctx.bad(${i}, a${i}); let ${v} = a${i};`)
      else lines.push(`if (typeof a${i} !== 'number') ctx.bad(${i}, a${i}); let ${v} = ${ctx.fromHost[i] ? `ctx.fromHost[${i}](a${i})` : `a${i}`};`)
    } else if (p.type.kind === 'array') lines.push(`const ${v} = ctx.array(${i}, a${i});`)
    else lines.push(`const ${v} = ctx.stack(${i}, a${i});`)
  })
  lines.push(`F(${vals.join(', ')});`)
  params.forEach((p, i) => {
    if (p.type.kind === 'scalar') lines.push(`v${i} = ${p.type.name === 'bool' ? `R[${i}] !== 0` : `R[${i}]`};`)
  })
  lines.push(`ctx.loss[0] = v${loss};`)
  const grads: string[] = []
  params.forEach((p, i) => {
    const s = c.slots[i]
    if (!s) return
    if (s.kind === 'scalar') grads.push(i === loss ? '1' : '0')
    else if (s.kind === 'array') grads.push(`ctx.gradBuffer(${i}, v${i})`)
    else grads.push(`new Array(v${i}.length).fill(0)`)
  })
  lines.push(`A(${[...vals, ...grads, '0'].join(', ')});`)
  params.forEach((_, i) => {
    const s = c.slots[i]
    if (s?.kind === 'scalar') lines.push(`S[${i}] = Q[${s.index}];`)
  })
  const body = `const F = ctx.fwd, R = F.results, A = ctx.adj, Q = A.results, S = ctx.scalars;\nreturn function run(${args.join(', ')}) {\n  ${lines.join('\n  ')}\n};`
  const run = new Function('ctx', body)(ctx) as (...a: unknown[]) => void
  return { run, ctx }
}

/**
 * Compiles the gradient of `f` with respect to all its float arguments, once; the result is
 * callable many times. `loss` is the index of the scalar argument that holds the loss.
 * ```ts
 * const g = grad(m.norm, { loss: 0 })
 * g(0, 0, x)  // [1, dnorm/dy, Float64Array dnorm/dx] (buffers reused between calls)
 * ```
 */
export function grad(f: TenetFunction, options: LossOptions): GradientFunction {
  const c = compileAdjoint(f)
  checkLoss(c, options.loss)
  const { run, ctx } = makeDriver(c, options.loss)
  const out: Gradient = new Array(c.params.length).fill(null)
  const slots = c.slots
  const g = (...args: unknown[]): Gradient => {
    run(...args)
    for (let i = 0; i < out.length; i++) {
      const s = slots[i]
      out[i] = !s || s.kind === 'stack' ? null : s.kind === 'scalar' ? ctx.scalars[i]! : ctx.buffers[i]!
    }
    return out
  }
  Object.defineProperties(g, {
    run: { value: run },
    scalars: { value: ctx.scalars },
    buffers: { value: ctx.buffers },
    adjoint: { value: c.adjoint },
    lastLoss: { get: () => ctx.loss[0] },
  })
  return g as unknown as GradientFunction
}

function copyGradient(g: Gradient): Gradient {
  return g.map((x) => (x === null || typeof x === 'number' ? x : x.slice()))
}

/**
 * The gradient of the loss argument with respect to every argument of `f` at `args`: a number
 * for each float scalar, a `Float64Array` (`Float32Array` for f32) for each float array, null for
 * integer, bool and stack arguments. The caller's arrays are left as passed.
 * ```ts
 * gradient(m.f, [0, 3], { loss: 0 })  // for y += x * x: [1, 6]
 * ```
 */
export function gradient(f: TenetFunction, args: unknown[], options: LossOptions): Gradient {
  return copyGradient(grad(f, options)(...args))
}

/** Which arguments a Jacobian relates. */
export interface JacobianOptions {
  /** Indices of the float arguments differentiated with respect to (default: all float arguments). */
  inputs?: number[]
  /** Indices of the float arguments whose final values are differentiated (default: all written float arguments). */
  outputs?: number[]
}

function floatParams(c: CompiledAdjoint): number[] {
  return c.params.flatMap((p, i) => (c.slots[i] && p.type.kind !== 'stack' ? [i] : []))
}

function sizes(sweep: Sweep, params: number[]): number[] {
  return params.map((i) => { const v = sweep.fwd[i]; return typeof v === 'number' ? 1 : (v as Float64Array).length })
}

/**
 * The Jacobian of the final values of `outputs` with respect to the initial values of `inputs`,
 * as a row-major `Float64Array`: one row per output scalar (arrays flattened in order), one column
 * per input scalar. One reverse sweep per row.
 */
export function jacobian(f: TenetFunction, args: unknown[], options: JacobianOptions = {}): Float64Array {
  const c = compileAdjoint(f)
  const written = c.info.program.writes.get(c.info.name)!
  const inputs = options.inputs ?? floatParams(c)
  const outputs = options.outputs ?? floatParams(c).filter((i) => written[i])
  for (const i of [...inputs, ...outputs]) {
    if (!c.slots[i] || c.params[i]!.type.kind === 'stack') argError(`argument ${i} of \`${c.info.name}\` is not a float scalar or float array, so it has no derivative`)
  }
  const sweep = new Sweep(c)
  sweep.load(args)
  const inSizes = sizes(sweep, inputs), outSizes = sizes(sweep, outputs)
  const cols = inSizes.reduce((a, b) => a + b, 0), rows = outSizes.reduce((a, b) => a + b, 0)
  const J = new Float64Array(rows * cols)
  let r = 0
  outputs.forEach((o, oi) => {
    for (let e = 0; e < outSizes[oi]!; e++, r++) {
      sweep.load(args)
      sweep.forward()
      sweep.clear()
      sweep.seed(o, e, 1)
      sweep.backward()
      let col = 0
      inputs.forEach((inp) => {
        const g = sweep.gradientOf(inp)!
        if (typeof g === 'number') J[r * cols + col++] = g
        else for (let k = 0; k < g.length; k++) J[r * cols + col++] = g[k]!
      })
    }
  })
  return J
}

/** Options of `hessian`. */
export interface HessianOptions extends LossOptions {
  /** Indices of the float arguments the Hessian is taken over (default: all float arguments but the loss). */
  wrt?: number[]
  /** Relative step of the central differences of the gradient (default 1e-3, with Richardson extrapolation). */
  step?: number
}

function cloneArgs(args: unknown[]): unknown[] {
  return args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : Array.isArray(a) ? a.slice() : a))
}

/** The float scalars of `params` in `args`, flattened: read and write access by flat position. */
function flatAccess(args: unknown[], params: number[]): { n: number; get(k: number): number; set(k: number, v: number): void } {
  const where: Array<[number, number]> = []
  for (const p of params) {
    const a = args[p]
    if (typeof a === 'number') where.push([p, -1])
    else for (let e = 0; e < (a as Float64Array).length; e++) where.push([p, e])
  }
  return {
    n: where.length,
    get: (k) => { const [p, e] = where[k]!; return e < 0 ? (args[p] as number) : (args[p] as Float64Array)[e]! },
    set: (k, v) => { const [p, e] = where[k]!; if (e < 0) args[p] = v; else (args[p] as Float64Array)[e] = v },
  }
}

function flatGradient(g: Gradient, params: number[], out: Float64Array, offset = 0): void {
  let k = offset
  for (const p of params) {
    const x = g[p]
    if (typeof x === 'number') out[k++] = x
    else if (x) for (let e = 0; e < x.length; e++) out[k++] = x[e]!
  }
}

/**
 * Richardson extrapolation of a central difference: (4·D(h/2) − D(h)) / 3, accurate to O(h⁴), so
 * a large step (little cancellation) still gives about 1e-10 relative accuracy on smooth programs.
 */
function richardson(h: number, out: Float64Array, central: (h: number, out: Float64Array) => void): void {
  const coarse = new Float64Array(out.length)
  central(h, coarse)
  central(h / 2, out)
  for (let i = 0; i < out.length; i++) out[i] = (4 * out[i]! - coarse[i]!) / 3
}

/**
 * The dense symmetric Hessian of the loss over the scalars of `wrt` (arrays flattened), row-major.
 * Computed by central differences of the exact (adjoint) gradient with Richardson extrapolation
 * (four gradient sweeps per column), then symmetrised: accurate to about 1e-9 relative for smooth
 * programs, not exact.
 * (Forward-over-reverse through a tangent transform of the adjoint is the exact alternative.)
 */
export function hessian(f: TenetFunction, args: unknown[], options: HessianOptions): Float64Array {
  const c = compileAdjoint(f)
  checkLoss(c, options.loss)
  const wrt = options.wrt ?? floatParams(c).filter((i) => i !== options.loss)
  const g = grad(f, options)
  const work = cloneArgs(args)
  const x = flatAccess(work, wrt)
  const n = x.n
  const H = new Float64Array(n * n)
  const gp = new Float64Array(n), gm = new Float64Array(n), col = new Float64Array(n)
  const rel = options.step ?? 1e-3
  for (let j = 0; j < n; j++) {
    const x0 = x.get(j)
    const h = rel * Math.max(1, Math.abs(x0))
    richardson(h, col, (t, out) => {
      x.set(j, x0 + t); flatGradient(g(...work), wrt, gp)
      x.set(j, x0 - t); flatGradient(g(...work), wrt, gm)
      for (let i = 0; i < n; i++) out[i] = (gp[i]! - gm[i]!) / (2 * t)
    })
    x.set(j, x0)
    for (let i = 0; i < n; i++) H[i * n + j] = col[i]!
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
  v: Array<number | ArrayLike<number> | null | undefined>
  /** Relative step of the central difference of the gradient (default 1e-3, with Richardson extrapolation). */
  step?: number
}

/**
 * The Hessian-vector product H·v of the loss, shaped like `gradient`'s result: the central
 * difference of the exact gradient along v with Richardson extrapolation (four gradient sweeps,
 * no Hessian formed; accurate to about 1e-9 relative, not exact).
 */
export function hvp(f: TenetFunction, args: unknown[], options: HvpOptions): Gradient {
  const c = compileAdjoint(f)
  checkLoss(c, options.loss)
  const g = grad(f, options)
  const params = floatParams(c)
  let xmax = 0, vmax = 0
  for (const p of params) {
    const a = args[p], v = options.v[p]
    if (typeof a === 'number') xmax = Math.max(xmax, Math.abs(a))
    else for (const e of a as Float64Array) xmax = Math.max(xmax, Math.abs(e))
    if (typeof v === 'number') vmax = Math.max(vmax, Math.abs(v))
    else if (v) for (let k = 0; k < v.length; k++) vmax = Math.max(vmax, Math.abs(v[k]!))
  }
  const out: Gradient = copyGradient(g(...args)).map((x) => (x === null ? null : typeof x === 'number' ? 0 : x.fill(0)))
  if (vmax === 0) return out
  const h = (options.step ?? 1e-3) * Math.max(1, xmax) / vmax
  const shifted = (t: number): unknown[] => cloneArgs(args).map((a, p) => {
    const v = options.v[p]
    if (!params.includes(p) || v === null || v === undefined) return a
    if (typeof a === 'number') return a + t * (v as number)
    const arr = a as Float64Array
    for (let k = 0; k < arr.length; k++) arr[k] = arr[k]! + t * (v as ArrayLike<number>)[k]!
    return arr
  })
  const flat = new Float64Array(out.reduce<number>((n, o) => n + (o === null ? 0 : typeof o === "number" ? 1 : o.length), 0))
  const gp = new Float64Array(flat.length), gm = new Float64Array(flat.length)
  richardson(h, flat, (t, res) => {
    flatGradient(g(...shifted(t)), params, gp)
    flatGradient(g(...shifted(-t)), params, gm)
    for (let i = 0; i < res.length; i++) res[i] = (gp[i]! - gm[i]!) / (2 * t)
  })
  let k = 0
  return out.map((o, p) => {
    if (o === null || !params.includes(p)) return null
    if (typeof o === 'number') return flat[k++]!
    for (let e = 0; e < o.length; e++) o[e] = flat[k++]!
    return o
  })
}

/** Options of `checkGrad`. */
export interface CheckGradOptions extends LossOptions {
  /** Absolute tolerance (default 1e-6). */
  atol?: number
  /** Relative tolerance, times |finite difference| (default 1e-6). */
  rtol?: number
  /** Relative finite-difference step (default 1e-6). */
  step?: number
}

/** What `checkGrad` found. */
export interface CheckGradResult {
  ok: boolean
  /** The largest |ad − fd| over all float input scalars. */
  maxError: number
  /** Where the largest error is: argument index, element index (0 for a scalar), both values. */
  worst: { arg: number; index: number; ad: number; fd: number } | null
}

/**
 * Compares the adjoint gradient with central finite differences of the loss, for every float
 * scalar of every float argument. Each finite-difference run goes forwards on a perturbed copy
 * and is undone with the inverse, so the copy returns to the inputs between runs.
 */
export function checkGrad(f: TenetFunction, args: unknown[], options: CheckGradOptions): CheckGradResult {
  const c = compileAdjoint(f)
  checkLoss(c, options.loss)
  const atol = options.atol ?? 1e-6, rtol = options.rtol ?? 1e-6, rel = options.step ?? 1e-6
  const ad = gradient(f, args, options)
  const work = cloneArgs(args)
  const fwd = c.forward, inv = c.inverse
  const invArgs = work.slice()
  const run = (): number => {
    fwd.apply(undefined, work)
    const lossValue = fwd.results[options.loss]!
    for (let i = 0; i < work.length; i++) {
      const p = c.params[i]!
      invArgs[i] = p.type.kind === 'scalar' ? (p.type.name === 'bool' ? fwd.results[i] !== 0 : fwd.results[i]) : work[i]
    }
    inv.apply(undefined, invArgs)
    return lossValue
  }
  let ok = true, maxError = 0
  let worst: CheckGradResult['worst'] = null
  for (const p of floatParams(c)) {
    const a = work[p]
    const count = typeof a === 'number' ? 1 : (a as Float64Array).length
    for (let e = 0; e < count; e++) {
      const get = () => (typeof a === 'number' ? (work[p] as number) : (a as Float64Array)[e]!)
      const set = (v: number) => { if (typeof a === 'number') work[p] = v; else (a as Float64Array)[e] = v }
      const x0 = get()
      const h = rel * Math.max(1, Math.abs(x0))
      set(x0 + h); const up = run()
      set(x0 - h); const down = run()
      set(x0)
      const fd = (up - down) / (2 * h)
      const g = ad[p]!
      const adv = typeof g === 'number' ? g : g[e]!
      const err = Math.abs(adv - fd)
      if (!(err <= atol + rtol * Math.abs(fd))) ok = false
      if (!(err <= maxError) || worst === null) { maxError = Number.isNaN(err) ? Infinity : Math.max(maxError, err); worst = { arg: p, index: e, ad: adv, fd } }
    }
  }
  return { ok, maxError, worst }
}
