/**
 * The public AD functions: `gradient`, `grad`, `jacobian`, `hessian`, `hvp`, `checkGrad`. Each
 * gradient is one forward run of the function and one run of its compiled adjoint: the values go
 * back to the inputs while the gradients accumulate. No tape, no per-scalar objects.
 */
import { TenetError, type CompiledFunction, type Registry, type ResidentArray, type Type } from '@tenet/ir'
import { hostConversionsOf, isDetached, type TenetFunction } from '@tenet/reversible'
import { compileAdjoint, compileForwardGradient, compileFused, compileTangent, hasForwardGradientShape, type CompiledAdjoint, type CompiledForwardGradient } from './compile.js'
import { gradientScalar } from './expr.js'
import { evalAllowed, interpretedDriver } from './driver-interpreted.js'
import { argsOf, optionsOf, positiveNumber } from './options.js'

/** A gradient per argument: a number for a float scalar, a typed array for a float array, null otherwise. */
export type Gradient = Array<number | Float64Array | Float32Array | null>

/**
 * The gradient of a complex value in the surface view: `re` = ∂L/∂Re z, `im` = ∂L/∂Im z, i.e.
 * the complex number ḡ_z = ∂L/∂x + i·∂L/∂y for z = x + iy (see "Complex numbers" in the README).
 */
export interface ComplexGradient { re: number; im: number }

/**
 * A gradient per argument of the function *as written* (before complex numbers are lowered to
 * pairs of f64): like `Gradient`, plus `{ re, im }` for a complex scalar and an array of them for
 * a complex array.
 */
export type SurfaceGradient = Array<number | Float64Array | Float32Array | ComplexGradient | ComplexGradient[] | null>

/** Which argument holds the loss. */
export interface LossOptions {
  /**
   * Index of the float scalar argument that holds the loss (NiLang's `Val(i)`, 0-based). With
   * arguments in the surface view of a function with complex parameters, the index of a
   * parameter as written; a complex loss parameter means its real part (see `lossPart`).
   */
  loss: number
  /** For a complex loss parameter in the surface view: which part is the loss (default `'re'`). */
  lossPart?: 're' | 'im'
}

type TypedArray = Float64Array | Float32Array | Int32Array | Uint8Array
const CTORS = { Float64Array, Float32Array, Int32Array, Uint8Array } as const

export const argError = (msg: string): never => { throw new TenetError('ad/argument', msg) }

/** The host conversions of parameter i of a compiled adjoint (see `hostConversionsOf`). */
export function hostConversions(c: CompiledAdjoint, i: number): { fromHost?: (x: number) => number; toHost?: (x: number) => number } {
  return hostConversionsOf(c.info.registry, c.params[i]!.type)
}

/**
 * Per parameter: whether the driver may run `f` and its adjoint on the caller's own array (no
 * copy): `f` never writes it (nor do its adjoint and fused programs, which write only what `f`
 * writes, and gradients) and its elements need no conversion.
 */
export function sharedArrays(c: CompiledAdjoint): boolean[] {
  const written = c.info.program.writes.get(c.info.name)
  return c.params.map((p, i) => p.type.kind === 'array' && written !== undefined && written[i] === false && !hostConversions(c, i).fromHost)
}

/** Copies host values into an internal array, converting each with `fromHost` when given. */
function copyIn(dst: TypedArray, src: TypedArray, fromHost: ((x: number) => number) | undefined): void {
  if (!fromHost) { dst.set(src as never); return }
  for (let j = 0; j < src.length; j++) dst[j] = fromHost(src[j]!)
}

/** Drives one compiled adjoint: owns copies of the arguments and the gradient buffers, reused. */
export class Sweep {
  readonly fwd: unknown[]
  private readonly adj: unknown[]
  private readonly bufs: Array<TypedArray | undefined>
  private readonly gbufs: Array<Float64Array | Float32Array | undefined>
  private readonly isBool: boolean[]
  private readonly fromHost: Array<((x: number) => number) | undefined>
  private readonly toHost: Array<((x: number) => number) | undefined>
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
    this.fromHost = c.params.map((_, i) => hostConversions(c, i).fromHost)
    this.toHost = c.params.map((_, i) => hostConversions(c, i).toHost)
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
        if ((a as TypedArray).length === 0 && isDetached(a as TypedArray)) argError(`argument ${i + 1} (\`${p.name}\`) of \`${this.name}\` is a view of a detached ArrayBuffer; pass an array with live memory`)
        let b = this.bufs[i]
        if (!b || b.length !== (a as TypedArray).length) b = this.bufs[i] = new ctor((a as TypedArray).length)
        copyIn(b, a as TypedArray, this.fromHost[i])
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

  /**
   * Reads a float scalar of the current values (a scalar parameter, or an element of an array
   * one), as a host number (the real value of a fixed-point or ulog value).
   */
  value(param: number, index: number): number {
    const v = this.fwd[param]
    const x = typeof v === 'number' ? v : (v as Float64Array)[index]!
    const th = this.toHost[param]
    return th ? th(x) : x
  }
}

export function checkLoss(c: CompiledAdjoint, loss: number): void {
  const p = c.params[loss]
  if (!Number.isInteger(loss) || !p) argError(`\`loss\` must be the index of an argument of \`${c.info.name}\` (0..${c.params.length - 1}), got ${loss}`)
  if (p!.type.kind !== 'scalar' || !c.slots[loss]) argError(`\`loss\` must be a float scalar argument, but argument ${loss} (\`${p!.name}\`) of \`${c.info.name}\` is ${p!.type.kind === 'scalar' ? p!.type.name : p!.type.kind}`)
}

/** A reusable gradient function made by `grad`. */
export interface GradientFunction {
  /**
   * Runs `f` forwards on copies of `args` (arrays that `f` only reads are used as they are),
   * seeds the loss gradient with 1 and runs the adjoint (in forward mode, see `GradOptions.mode`:
   * one run of `f`'s tangent seeded along its input).
   * Returns one gradient per argument, fresh on every call: a later call never changes what an
   * earlier one returned (on the wasm backend the arrays are copies out of the module's memory).
   * This allocates the result; `run` is the allocation-free form for hot loops.
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
  /**
   * The inverse of the whole gradient program (`f` then its adjoint): given the arguments and a
   * gradient as a call left them, runs the adjoint's inverse (the gradients go back to the seed
   * while the values are recomputed to f's outputs) and then `f`'s inverse (the values return to
   * the inputs). On copies; returns the arguments, the cleared gradient (1 for the loss, 0
   * elsewhere) and the sink.
   *
   * Ancilla caveat: the adjoint drops the gradient of each ancilla where the forward allocates
   * it (its value is a gradient with respect to a constant, moved into the sink without checks);
   * the inverse cannot restore that information, so the gradients are cleared exactly only for
   * programs whose dropped ancilla gradients are zero (pass the sink that the forward call
   * accumulated, `sink`, to undo its additions; the default is 0).
   */
  readonly inverse: (args: unknown[], gradient: Gradient, sink?: number) => { args: unknown[]; gradient: Gradient; sink: number }
  /**
   * On a backend with its own memory (wasm): gives back the memory that the work arrays and
   * gradients of the last calls hold there, for a gradient function no longer needed (a later
   * call allocates again). The buffers of earlier results are then no longer valid. Nothing to
   * do on the cpu backend.
   */
  readonly release: () => void
  /**
   * Releases the memory like \`release\`, for good: a later call throws a \`TenetError\` with code
   * \`ad/disposed\`. A gradient function that is dropped without either is freed when the garbage
   * collector finds it, its \`run\` and every gradient array it returned unreachable (a
   * \`FinalizationRegistry\`); \`dispose\` frees it at once.
   */
  readonly dispose: () => void
}

/** Support object of a generated gradient driver. */
export interface DriverContext {
  fwd: CompiledFunction
  adj: CompiledFunction
  fromHost: Array<((x: number) => number) | undefined>
  toHost: Array<((x: number) => number) | undefined>
  scalars: Float64Array
  loss: Float64Array
  buffers: Array<Float64Array | Float32Array | undefined>
  values: Array<TypedArray | undefined>
  bad(i: number, a: unknown): never
  array(i: number, a: unknown): TypedArray
  gradBuffer(i: number, v: TypedArray): Float64Array | Float32Array
  stack(i: number, a: unknown): unknown[]
  /** Per array parameter on a backend with resident memory (`CompiledFunction.resident`): its values there. */
  res: Array<ResidentArray | undefined>
  /**
   * The gradients of the array parameters on such a backend: one resident block (so that one
   * \`fill\` zeroes them all), its byte view \`gz\`, the lengths it was laid out for, and the
   * current view of each gradient in it (\`gv[i]\`).
   */
  gblock: ResidentArray | undefined
  gz: Uint8Array | undefined
  glens: number[]
  gv: Array<Float64Array | Float32Array | undefined>
  /**
   * Lays the gradient block out for these lengths (one per parameter, −1 for none), reusing it
   * when they are those of the last call, and takes fresh views of it, all zero.
   */
  gradients(lens: number[]): void
  /** The byte offset of each gradient in the block. */
  gat: number[]
  /** Takes fresh views of the block (after a call that grew the memory), keeping the contents. */
  gviews(): void
  /** Replaces \`res[i]\` with a zero array of n elements; returns its view. */
  resize(i: number, n: number): TypedArray
  /** Whether `resize` allocated since the driver last took its views (the memory may have grown). */
  moved: boolean
  /** Releases every resident array of the driver (see `GradientFunction.release`). */
  release(): void
  /** Set by \`dispose\`: later calls throw. */
  disposed: boolean
  /**
   * The resident arrays the driver holds, in an object of their own: what the finalizer frees
   * when the gradient function is collected (it must not reach the function, or it never is).
   */
  held: HeldMemory
  /** The object whose collection frees \`held\`: referenced by the driver and by every gradient view it hands out. */
  token: object
  /**
   * Checks that array i came back to the caller's values \`a\` after the adjoint sweep (see
   * \`GradOptions.uncompute\`); the generated driver inlines the same loop.
   */
  checkArray(i: number, v: ArrayLike<number>, a: ArrayLike<number>): void
  /** Raises (or warns about) argument i, element e (−1 for a scalar), which came back as \`got\`, not \`want\`. */
  uncomputed(i: number, e: number, got: number, want: number): void
  /** The relative tolerance of the uncompute check. */
  tol: number
}

/**
 * Generates a fixed-arity driver for one adjoint: arguments stay in locals and both cores are
 * called positionally, so a gradient sweep allocates nothing (no argument arrays, no boxing).
 * Identifiers are generated here; no user text reaches the generated source.
 */
function makeDriver(c: CompiledAdjoint, loss: number, fused: CompiledFunction | null = null, forward: CompiledForwardGradient | null = null, check: UncomputeCheck = { policy: 'off', tolerance: 0 }): { run: (...a: unknown[]) => void; ctx: DriverContext } {
  const params = c.params
  const n = params.length
  const registry = c.info.registry
  const shared = sharedArrays(c)
  // which array parameters have f32 gradients (the rest f64), for the gradient block
  const gradF32 = params.map((p) => p.type.kind === 'array' && gradientScalar(p.type.elem) === 'f32')
  const ctx: DriverContext = {
    fwd: c.forward,
    adj: forward?.core ?? fused ?? c.adjoint.core,
    fromHost: params.map((_, i) => hostConversions(c, i).fromHost),
    toHost: params.map((_, i) => hostConversions(c, i).toHost),
    scalars: new Float64Array(n),
    loss: new Float64Array(1),
    buffers: new Array(n).fill(undefined),
    values: new Array(n).fill(undefined),
    bad(i, a) {
      if (i === -2) throw new TenetError('ad/disposed', `this gradient function of \`${c.info.name}\` was disposed; make a new one with \`grad\``)
      if (i < 0) return argError(`\`${c.info.name}\` takes ${n} arguments (${params.map((q) => q.name).join(', ')}), got ${a}`)
      const p = params[i]!
      if (ArrayBuffer.isView(a) && isDetached(a)) argError(`argument ${i + 1} (\`${p.name}\`) of \`${c.info.name}\` is a view of a detached ArrayBuffer (transferred, or of a wasm memory that grew); pass an array with live memory`)
      const want = p.type.kind === 'scalar' ? (p.type.name === 'bool' ? 'a boolean' : 'a number') : p.type.kind === 'array' ? `a ${registry.numberSystem(p.type.elem).arrayType}` : 'a JS array (a stack)'
      return argError(`argument ${i + 1} (\`${p.name}\`) of \`${c.info.name}\` must be ${want}, got ${a === null ? 'null' : (a as object)?.constructor?.name ?? typeof a}`)
    },
    array(i, a) {
      const p = params[i]!
      const ctor = CTORS[registry.numberSystem((p.type as { elem: string }).elem).arrayType]
      if (!(a instanceof ctor)) ctx.bad(i, a)
      let b = ctx.values[i]
      if (!b || b.length !== (a as TypedArray).length) b = ctx.values[i] = new ctor((a as TypedArray).length)
      copyIn(b, a as TypedArray, ctx.fromHost[i])
      return b
    },
    gradBuffer(i, v) {
      // a new zero buffer (the driver zeroes a reused one itself)
      return (ctx.buffers[i] = v instanceof Float32Array ? new Float32Array(v.length) : new Float64Array(v.length))
    },
    stack(i, a) {
      if (!Array.isArray(a)) ctx.bad(i, a)
      return (a as unknown[]).slice()
    },
    moved: false,
    res: new Array(n).fill(undefined),
    gblock: undefined,
    gz: undefined,
    glens: [],
    gv: new Array(n).fill(undefined),
    gradients(lens) {
      // 16-byte aligned places, as the backend gives separate arrays
      const at: number[] = []
      let bytes = 0
      lens.forEach((len, i) => { at[i] = bytes; if (len >= 0) bytes += Math.ceil((len * (gradF32[i] ? 4 : 8)) / 16) * 16 })
      if (!ctx.gblock || lens.some((len, i) => len !== ctx.glens[i])) {
        ctx.gblock?.release()
        // never empty, so that a detached view shows in its length (0) even when every gradient is
        ctx.gblock = ctx.held.gblock = memory!.allocate('bool', Math.max(bytes, 16))
        ctx.glens = lens.slice()
        ctx.moved = true
      }
      ctx.gat = at
      ctx.gviews()
      ctx.gz!.fill(0)
    },
    gat: [],
    gviews() {
      const z = ctx.gz = ctx.gblock!.array as Uint8Array
      ctx.glens.forEach((len, i) => {
        const at = z.byteOffset + ctx.gat[i]!
        if (len < 0) return
        const v = ctx.gv[i] = gradF32[i] ? new Float32Array(z.buffer, at, len) : new Float64Array(z.buffer, at, len)
        // a gradient handed out keeps its driver's memory alive (see \`GradientFunction.dispose\`)
        Object.defineProperty(v, KEEP, { value: ctx.token })
      })
    },
    release() {
      for (const r of ctx.res) r?.release()
      ctx.res.fill(undefined)
      ctx.gblock?.release()
      ctx.gblock = ctx.held.gblock = ctx.gz = undefined
      ctx.gv.fill(undefined)
      ctx.buffers.fill(undefined)
    },
    disposed: false,
    held: { res: [], gblock: undefined },
    token: {},
    tol: check.tolerance,
    checkArray(i, v, a) {
      const th = ctx.toHost[i], tol = ctx.tol
      for (let j = 0; j < a.length; j++) {
        const got = th ? th(v[j]!) : v[j]!, want = a[j]!
        if (got !== want && !(Math.abs(got - want) <= tol * Math.max(1, Math.abs(want)))) ctx.uncomputed(i, j, got, want)
      }
    },
    uncomputed(i, e, got, want) {
      const p = params[i]!
      const what = `argument ${i + 1} (\`${p.name}\`)${e >= 0 ? `, element ${e},` : ''}`
      const message = `the adjoint sweep of \`${c.info.name}\` did not bring ${what} back to its input: it recomputed ${got} where the input was ${want} ` +
        `(tolerance ${ctx.tol} relative to max(1, |input|)). Uncomputing \`${c.info.name}\` is numerically unstable at these arguments, so the ` +
        `gradient was taken at other values and may be wrong. Options: reformulate the program (store the value instead of recomputing it), ` +
        `or \`grad(f, { uncompute: 'warn' | 'off', uncomputeTolerance })\``
      if (check.policy === 'error') throw new TenetError('ad/uncompute', message)
      if (!warned) { warned = true; console.warn(`[tenet] ${message} (warned once per gradient function)`) }
    },
    resize(i, len) {
      ctx.res[i]?.release()
      const r = ctx.res[i] = memory!.allocate((params[i]!.type as { elem: string }).elem, len)
      ctx.moved = true
      return r.array
    },
  }
  let warned = false
  ctx.held.res = ctx.res
  // On a backend with its own memory (wasm), the values and gradients live there: the adjoint
  // reads and writes them in place, and nothing is copied back after a call.
  const memory = ctx.adj.resident
  const args = params.map((_, i) => `a${i}`)
  const lines: string[] = []
  lines.push(`if (arguments.length !== ${n}) ctx.bad(-1, arguments.length);`)
  // (\`token\`: the driver's memory is freed only once this function is unreachable)
  lines.push('if (ctx.disposed) ctx.bad(-2, token);')
  const vals: string[] = []
  params.forEach((p, i) => {
    const v = `v${i}`
    vals.push(v)
    if (p.type.kind === 'scalar') {
      if (p.type.name === 'bool') lines.push(`if (typeof a${i} !== 'boolean') ctx.bad(${i}, a${i}); let ${v} = a${i};`)
      else lines.push(`if (typeof a${i} !== 'number') ctx.bad(${i}, a${i}); let ${v} = ${ctx.fromHost[i] ? `ctx.fromHost[${i}](a${i})` : `a${i}`};`)
    } else if (p.type.kind === 'array') {
      // specialised per parameter, so that every check, copy and fill below sees one array type
      const ctor = `C${i}`
      lines.push(`if (!(a${i} instanceof ${ctor}) || a${i}.length === 0 && isDetached(a${i})) ctx.bad(${i}, a${i});`)
      if (memory) {
        lines.push(`let ${v} = ctx.res[${i}]?.array;`)
        lines.push(`if (${v} === undefined || ${v}.length !== a${i}.length) ${v} = ctx.resize(${i}, a${i}.length);`)
        lines.push(ctx.fromHost[i] ? `for (let j = 0; j < a${i}.length; j++) ${v}[j] = ctx.fromHost[${i}](a${i}[j]);` : `${v}.set(a${i});`)
      } else if (shared[i]) lines.push(`const ${v} = a${i};`)
      else if (ctx.fromHost[i]) lines.push(`const ${v} = ctx.array(${i}, a${i});`)
      else {
        lines.push(`let ${v} = ctx.values[${i}];`)
        lines.push(`if (${v} === undefined || ${v}.length !== a${i}.length) ${v} = ctx.values[${i}] = new ${ctor}(a${i}.length);`)
        // a loop: cheaper than the \`set\` builtin for the short arrays of scalar code, as fast for long ones
        lines.push(`for (let j = 0; j < a${i}.length; j++) ${v}[j] = a${i}[j];`)
      }
    } else lines.push(`const ${v} = ctx.stack(${i}, a${i});`)
  })
  // an allocation may have grown the memory, which detaches the views taken before it (their
  // contents stay in the memory): the current ones
  const arrays = params.flatMap((p, i) => (p.type.kind === 'array' ? [i] : []))
  const current = (withGradients: boolean) => {
    if (!memory) return
    const refs = arrays.map((i) => `v${i} = ctx.res[${i}].array;${withGradients && c.slots[i]?.kind === 'array' ? ` g${i} = ctx.gv[${i}];` : ''}`)
    lines.push(`if (ctx.moved) { ctx.moved = false; ${refs.join(' ')} }`)
  }
  if (forward) {
    // one run of the tangent seeded along the input (see compileForwardGradient): every
    // parameter is a scalar, so there is nothing else to set up
    const argv = [...vals, ...params.flatMap((_, i) => (forward.tangentAt[i]! >= 0 ? [i === forward.input ? '1' : '0'] : []))]
    lines.push(`A(${argv.join(', ')});`)
    lines.push(`ctx.loss[0] = ${ctx.toHost[loss] ? `ctx.toHost[${loss}](Q[${loss}])` : `Q[${loss}]`};`)
    lines.push(`S[${loss}] = 1;`)
    // the gradient of an f32 input is an f32 value, as in reverse mode
    const f32 = gradientScalar((params[forward.input]!.type as { name: string }).name) === 'f32'
    lines.push(`S[${forward.input}] = ${f32 ? `Math.fround(Q[${forward.tangentAt[loss]}])` : `Q[${forward.tangentAt[loss]}]`};`)
  } else {
    if (!fused) {
      current(false)
      lines.push(`F(${vals.join(', ')});`)
      params.forEach((p, i) => {
        if (p.type.kind === 'scalar') lines.push(`v${i} = ${p.type.name === 'bool' ? `R[${i}] !== 0` : `R[${i}]`};`)
      })
      lines.push(`ctx.loss[0] = ${ctx.toHost[loss] ? `ctx.toHost[${loss}](v${loss})` : `v${loss}`};`)
    }
    const grads: string[] = []
    // the gradients of arrays in resident memory: one block, zeroed by one \`fill\` (all its views
    // have their lengths unless the memory grew, which detaches them all and zeroes their lengths;
    // the block's own view is never empty, so its length shows that even for empty gradients)
    const inBlock = memory ? params.flatMap((_, i) => (c.slots[i]?.kind === 'array' ? [i] : [])) : []
    if (inBlock.length) {
      lines.push(`let ${inBlock.map((i) => `g${i} = ctx.gv[${i}]`).join(', ')};`)
      lines.push(`if (ctx.gz === undefined || ctx.gz.length === 0${inBlock.map((i) => ` || g${i}.length !== a${i}.length`).join('')}) {`)
      lines.push(`  ctx.gradients([${params.map((_, i) => (inBlock.includes(i) ? `a${i}.length` : '-1')).join(', ')}]);`)
      lines.push(`  ${inBlock.map((i) => `g${i} = ctx.gv[${i}];`).join(' ')}`)
      lines.push(`} else ctx.gz.fill(0);`)
    }
    params.forEach((p, i) => {
      const s = c.slots[i]
      if (!s) return
      if (s.kind === 'scalar') grads.push(i === loss ? '1' : '0')
      else if (s.kind === 'array' && memory) grads.push(`g${i}`)
      else if (s.kind === 'array') {
        lines.push(`let g${i} = ctx.buffers[${i}];`)
        lines.push(`if (g${i} === undefined || g${i}.length !== v${i}.length) g${i} = ctx.gradBuffer(${i}, v${i}); else for (let j = 0; j < g${i}.length; j++) g${i}[j] = 0;`)
        grads.push(`g${i}`)
      }
      else grads.push(`new Array(v${i}.length).fill(0)`)
    })
    current(true)
    if (fused) {
      // one run of the fused gradient program: forward part, then the adjoint (see compileFused)
      const lossSlot = c.params.length + c.slots.filter((x) => x).length + 1
      lines.push(`A(${[...vals, ...grads, '0', '0'].join(', ')});`)
      lines.push(`ctx.loss[0] = ${ctx.toHost[loss] ? `ctx.toHost[${loss}](Q[${lossSlot}])` : `Q[${lossSlot}]`};`)
    } else lines.push(`A(${[...vals, ...grads, '0'].join(', ')});`)
    // a call that grew the memory detached the views (the block's byte view then has length 0)
    if (inBlock.length) lines.push(`if (ctx.gz.length !== ctx.gblock.length) { ctx.gviews(); ${inBlock.map((i) => `g${i} = ctx.gv[${i}];`).join(' ')} }`)
    if (check.policy !== 'off') {
      // the sweep recomputed the inputs of every argument that f writes: compare them with the
      // caller's values (which the driver never changes), one pass over the written arguments
      const written = c.info.program.writes.get(c.info.name)!
      params.forEach((p, i) => {
        if (!written[i]) return
        if (p.type.kind === 'scalar' && p.type.name !== 'bool') {
          const got = ctx.toHost[i] ? `ctx.toHost[${i}](Q[${i}])` : `Q[${i}]`
          lines.push(`{ const r = ${got}; if (!(r === a${i} || Math.abs(r - a${i}) <= ctx.tol * Math.max(1, Math.abs(a${i})))) ctx.uncomputed(${i}, -1, r, a${i}); }`)
        } else if (p.type.kind === 'array' && !shared[i]) {
          // inline, so that each loop sees one array type (an equal element costs one comparison)
          const got = ctx.toHost[i] ? `ctx.toHost[${i}](w[j])` : 'w[j]'
          lines.push(`{ const w = ${memory ? `ctx.res[${i}].array` : `v${i}`}, t = ctx.tol; for (let j = 0; j < a${i}.length; j++) { const r = ${got}, x = a${i}[j]; if (r !== x && !(Math.abs(r - x) <= t * Math.max(1, Math.abs(x)))) ctx.uncomputed(${i}, j, r, x); } }`)
        }
      })
    }
    params.forEach((_, i) => {
      const s = c.slots[i]
      if (s?.kind === 'scalar') lines.push(`S[${i}] = Q[${s.index}];`)
      // the current views: a call that grew the memory detached the earlier ones
      else if (s?.kind === 'array' && memory) lines.push(`ctx.buffers[${i}] = g${i};`)
    })
  }
  const ctors = params.map((p, i) => (p.type.kind === 'array' ? `, C${i} = ${registry.numberSystem(p.type.elem).arrayType}` : '')).join('')
  const body = `"use strict";\nconst F = ctx.fwd, R = F.results, A = ctx.adj, Q = A.results, S = ctx.scalars${ctors};\nreturn function run(${args.join(', ')}) {\n  ${lines.join('\n  ')}\n};`
  const run = evalAllowed()
    ? new Function('ctx', 'token', 'isDetached', body)(ctx, ctx.token, isDetached) as (...a: unknown[]) => void
    : interpretedDriver({
      ctx, params, slots: c.slots, loss, fused: fused !== null, lossSlot: c.params.length + c.slots.filter((x) => x).length + 1, forward, shared,
      ctors: params.map((p) => (p.type.kind === 'array' ? CTORS[registry.numberSystem(p.type.elem).arrayType] : undefined)),
      forwardF32: forward !== null && gradientScalar((params[forward.input]!.type as { name: string }).name) === 'f32',
      resident: memory !== undefined,
      checkWritten: check.policy === 'off' ? null : c.info.program.writes.get(c.info.name)!,
    })
  return { run, ctx }
}

/** The resident arrays of a driver (see \`DriverContext.held\`). */
interface HeldMemory { res: Array<ResidentArray | undefined>; gblock: ResidentArray | undefined }

/** A hidden property of a gradient view that keeps its driver's memory from being freed. */
const KEEP = Symbol('tenet.gradient.keep')

/**
 * Frees the resident memory of gradient functions that were dropped without \`release\` or
 * \`dispose\` (wasm): when the function, its \`run\` and every gradient view it handed out
 * are unreachable, their blocks go back to the module's free list.
 */
const collected = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry<HeldMemory>((held) => {
    for (const r of held.res) r?.release()
    held.res.fill(undefined)
    held.gblock?.release()
    held.gblock = undefined
  })
  : undefined

// Every gradient function has the same properties with the same getter, so V8 gives them one
// shape with fast properties: a getter made per function (a closure over its driver) gave each
// later gradient function slow (dictionary) properties, and a hot `g.run(…)`, `g.scalars[i]`
// then went through a generic property lookup (about 10 ns per call on the Bessel gradient).
const DRIVER = Symbol('tenet.gradient.driver')
function lastLoss(this: { [DRIVER]: DriverContext }): number { return this[DRIVER].loss[0]! }

/** Options of `grad`. */
export interface GradOptions extends LossOptions {
  /**
   * Whether to use a fused gradient program when one applies (default true): the one-pass
   * program for a loss accumulated from values `f` never writes, or the program that skips the
   * uncompute–recompute pair of a top-level routine (see `compileFused`). With false, every call
   * runs `f` forwards and then its adjoint (the two sweeps of the paper). The gradients agree up
   * to the order in which floating-point sums are added.
   */
  fuse?: boolean
  /**
   * Which mode computes the gradient (default `'auto'`). `'reverse'`: `f` and its adjoint (or a
   * fused gradient program). `'forward'`: one tangent run of `f` seeded along its input; it applies
   * only to a function whose parameters are all scalars, with exactly one float scalar besides the
   * loss (f64 or f32), and which only accumulates into the loss (`loss += e`, `loss -= e`, e not
   * reading it) — a scalar function of one variable, such as the Bessel example; otherwise `grad`
   * throws. There a tangent run costs about one run of `f`, where reverse mode runs `f` and then
   * its adjoint. `'auto'` takes forward mode where it applies (and `fuse` is not false), reverse
   * mode elsewhere. Both give the same gradient up to rounding; `inverse` and `adjoint` are
   * always the reverse-mode ones.
   */
  mode?: 'auto' | 'forward' | 'reverse'
  /**
   * What to do when the adjoint sweep does not bring the arguments back to their inputs
   * (default \`'error'\`). Reverse mode recomputes values by uncomputing \`f\` instead of storing
   * them; where that is numerically unstable (a division by a small number, a cancellation),
   * the recomputed values drift and the gradient is taken at the wrong point, silently. After
   * every sweep the driver compares the recomputed value of each argument \`f\` writes with the
   * caller's (one comparison per scalar; forward mode, which does not uncompute, has nothing to
   * check). \`'error'\` throws a \`TenetError\` with code \`ad/uncompute\`, \`'warn'\` writes one
   * \`console.warn\` per gradient function and returns the gradient, \`'off'\` skips the check.
   * The check sees drift at the boundary only: an intermediate value that is recomputed wrongly
   * and then cancels out is not seen.
   */
  uncompute?: 'error' | 'warn' | 'off'
  /**
   * The tolerance of that check, relative to max(1, |input|) (default 1e-6: far above the
   * rounding of a stable uncompute, about 1e-16 to 1e-12 relative, far below a useless gradient).
   */
  uncomputeTolerance?: number
  /**
   * Indices of float arguments held constant (default none): no gradient is computed for them
   * (null in the result) and nothing is accumulated into them, as for data a loss only reads.
   * Only arguments that `f` never writes can be constants (others pass their gradients on:
   * an `ad/argument` error). With constants the gradient runs `f` and then its adjoint (no fused
   * program, no forward mode).
   */
  constants?: number[]
}

/** The uncompute check of a driver (see \`GradOptions.uncompute\`). */
interface UncomputeCheck { policy: 'error' | 'warn' | 'off'; tolerance: number }

/**
 * Compiles the gradient of `f` with respect to all its float arguments, once; the result is
 * callable many times. `loss` is the index of the scalar argument that holds the loss.
 * ```ts
 * const g = grad(m.norm, { loss: 0 })
 * g(0, 0, x)  // [1, dnorm/dy, Float64Array dnorm/dx] (fresh arrays; g.run(...) allocates nothing)
 * ```
 */
export function grad(f: TenetFunction, options: GradOptions): GradientFunction {
  optionsOf('grad', options, true)
  const constants = options.constants ?? []
  if (!Array.isArray(constants)) argError(`\`constants\` must be an array of argument indices, got ${typeof constants}`)
  if (constants.includes(options.loss)) argError(`the loss (argument ${options.loss}) cannot be held constant`)
  const c = compileAdjoint(f, 1, constants)
  checkLoss(c, options.loss)
  const held = constants.length > 0
  const mode = options.mode ?? 'auto'
  if (mode !== 'auto' && mode !== 'forward' && mode !== 'reverse') argError(`\`mode\` must be 'auto', 'forward' or 'reverse', got ${String(mode)}`)
  if (held && mode === 'forward') argError('`constants` need reverse mode: use mode \'reverse\' or \'auto\'')
  const forward = !held && (mode === 'forward' || (mode === 'auto' && options.fuse !== false)) ? compileForwardGradient(f, options.loss) : null
  if (mode === 'forward' && !forward) {
    // a function of the right shape whose tangent cannot be built: the tangent's own error says why
    if (hasForwardGradientShape(f, options.loss)) compileTangent(f, 1)
    argError(`forward mode needs a function of scalars with one float argument besides the loss, which it only accumulates into (\`loss += e\`); \`${c.info.name}\` is not one: use mode 'reverse' or 'auto'`)
  }
  const fused = forward || held || options.fuse === false ? null : compileFused(f, options.loss)
  const policy = options.uncompute ?? 'error'
  if (policy !== 'error' && policy !== 'warn' && policy !== 'off') argError(`\`uncompute\` must be 'error', 'warn' or 'off', got ${String(policy)}`)
  const tolerance = positiveNumber('grad', 'uncomputeTolerance', options.uncomputeTolerance, true) ?? 1e-6
  // what the sweep leaves in the values: the inputs after f and its adjoint, and after the
  // routine-fused program with checks on; the one-pass program never uncomputes (nothing to
  // check), and without checks the fused programs drop the restores nobody reads
  const recomputes = !forward && (!fused || (!fused.name.endsWith('$onepass') && c.info.options.checks))
  const { run, ctx } = makeDriver(c, options.loss, fused?.core ?? null, forward, { policy: recomputes ? policy : 'off', tolerance })
  const slots = c.slots
  // fresh results every call (a = g(...); b = g(...) must not alias); `run` is the allocation-free form
  const g = (...args: unknown[]): Gradient => {
    run(...args)
    const out: Gradient = new Array(slots.length)
    for (let i = 0; i < out.length; i++) {
      const s = slots[i]
      out[i] = !s || s.kind === 'stack' ? null : s.kind === 'scalar' ? ctx.scalars[i]! : ctx.buffers[i]!.slice()
    }
    return out
  }
  Object.defineProperties(g, {
    run: { value: run },
    scalars: { value: ctx.scalars },
    buffers: { value: ctx.buffers },
    adjoint: { value: c.adjoint },
    [DRIVER]: { value: ctx },
    lastLoss: { get: lastLoss },
    inverse: { value: (args: unknown[], gr: Gradient, sink = 0) => inverseGradient(c, args, gr, sink) },
    release: { value: () => ctx.release() },
    dispose: { value: () => { ctx.release(); ctx.disposed = true; collected?.unregister(ctx.token) } },
  })
  if (ctx.adj.resident || ctx.fwd.resident) collected?.register(ctx.token, ctx.held, ctx.token)
  return g as unknown as GradientFunction
}

/** Runs the adjoint's inverse and then f's inverse on copies: see `GradientFunction.inverse`. */
function inverseGradient(c: CompiledAdjoint, args: unknown[], gr: Gradient, sink: number): { args: unknown[]; gradient: Gradient; sink: number } {
  const sweep = new Sweep(c)
  sweep.load(args)
  const n = c.params.length
  const inv = c.adjoint.inverse.core
  const adjArgs = new Array<unknown>(n + c.slots.filter((s) => s).length + 1)
  for (let i = 0; i < n; i++) adjArgs[i] = sweep.fwd[i]
  c.slots.forEach((s, i) => {
    if (!s) return
    const x = gr[i]
    if (s.kind === 'scalar') adjArgs[s.index] = typeof x === 'number' ? x : argError(`the gradient of argument ${i} must be a number`)
    else if (s.kind === 'array') adjArgs[s.index] = ArrayBuffer.isView(x) ? (x as Float64Array).slice() : argError(`the gradient of argument ${i} must be a typed array`)
    else adjArgs[s.index] = new Array<number>((sweep.fwd[i] as unknown[]).length).fill(0)
  })
  adjArgs[adjArgs.length - 1] = sink
  inv.apply(undefined, adjArgs)
  const res = inv.results
  const isBool = (i: number) => { const p = c.params[i]!; return p.type.kind === 'scalar' && p.type.name === 'bool' }
  const vals: unknown[] = adjArgs.slice(0, n).map((v, i) => (c.params[i]!.type.kind === 'scalar' ? (isBool(i) ? res[i] !== 0 : res[i]) : v))
  const finv = c.inverse
  finv.apply(undefined, vals)
  const out = vals.map((v, i) => {
    const th = hostConversions(c, i).toHost
    if (c.params[i]!.type.kind === 'scalar') return isBool(i) ? finv.results[i] !== 0 : th ? th(finv.results[i]!) : finv.results[i]
    if (th && ArrayBuffer.isView(v)) return (v as Float64Array).map(th)
    return v
  })
  const gradientOut: Gradient = c.slots.map((s) => (!s || s.kind === 'stack' ? null : s.kind === 'scalar' ? res[s.index]! : (adjArgs[s.index] as Float64Array)))
  return { args: out, gradient: gradientOut, sink: res[adjArgs.length - 1]! }
}

export function copyGradient(g: Gradient): Gradient {
  return g.map((x) => (x === null || typeof x === 'number' ? x : x.slice()))
}

/**
 * The view of a function with lowered parameters (complex → pairs of f64) as written: maps
 * surface arguments to the lowered ones and lowered gradients back. Null when no parameter of
 * `f` is lowered.
 */
export interface SurfaceView {
  /** The surface arguments → the positional arguments of the lowered function. */
  toLowered(args: unknown[]): unknown[]
  /** A surface loss (parameter index and part) → the index of the lowered loss argument. */
  lossIndex(loss: number, part?: 're' | 'im'): number
  /** Lowered gradients → one per surface parameter (`{ re, im }` for complex scalars). */
  fromLowered(g: Gradient): SurfaceGradient
  /** Number of surface parameters. */
  readonly arity: number
}

/** The surface view of `f` (see `SurfaceView`), or null when none of its parameters is lowered. */
export function surfaceView(f: TenetFunction): SurfaceView | null {
  const info = compileAdjoint(f).info
  const surface = info.surface
  const hooks = surface.params.map((p) => info.registry.findNumberSystem(p.type.kind === 'scalar' ? p.type.name : p.type.elem)?.lowering)
  if (!hooks.some(Boolean)) return null
  const widths = surface.params.map((p, i) => hooks[i]?.arity(p.type) ?? 1)
  const starts: number[] = []
  widths.reduce((k, w, i) => { starts[i] = k; return k + w }, 0)
  return {
    arity: surface.params.length,
    toLowered(args) {
      if (args.length !== surface.params.length) argError(`\`${surface.name}\` takes ${surface.params.length} arguments (${surface.params.map((p) => p.name).join(', ')}), got ${args.length}`)
      return args.flatMap((a, i) => {
        const h = hooks[i]
        return h ? h.toArgs(a, surface.params[i]!.type, `argument ${i + 1} (\`${surface.params[i]!.name}\`) of \`${surface.name}\``) : [a]
      })
    },
    lossIndex(loss, part = 're') {
      const p = surface.params[loss]
      if (!Number.isInteger(loss) || !p) return argError(`\`loss\` must be the index of a parameter of \`${surface.name}\` (0..${surface.params.length - 1}), got ${loss}`)
      return starts[loss]! + (hooks[loss] && p.type.kind === 'scalar' && part === 'im' ? 1 : 0)
    },
    fromLowered(g) {
      return surface.params.map((p, i) => {
        const k = starts[i]!
        if (!hooks[i]) return g[k]!
        if (p.type.kind === 'scalar') {
          const re = g[k], im = g[k + 1]
          return typeof re === 'number' && typeof im === 'number' ? { re, im } : null
        }
        const a = g[k]
        if (!a || typeof a === 'number') return null
        const out: ComplexGradient[] = []
        for (let j = 0; j + 1 < a.length; j += 2) out.push({ re: a[j]!, im: a[j + 1]! })
        return out
      })
    },
  }
}

/** Whether `args` are surface arguments of a function with lowered (complex) parameters. */
function surfaceArgs(f: TenetFunction, args: unknown[]): SurfaceView | null {
  const view = surfaceView(f)
  return view && args.length === view.arity ? view : null
}

/**
 * The gradient of the loss argument with respect to every argument of `f` at `args`: a number
 * for each float scalar, a `Float64Array` (`Float32Array` for f32) for each float array, null for
 * integer, bool and stack arguments. The caller's arrays are left as passed. Fixed-point and
 * ulog arguments are passed as real values and get f64 gradients w.r.t. them.
 *
 * For a function with complex parameters, `args` may be given as written (`{ re, im }` per
 * complex scalar, an interleaved `Float64Array` per complex array, `loss` the index of a
 * parameter as written, a complex one standing for its real part unless `lossPart: 'im'`): then
 * the gradient of a complex scalar is `{ re: ∂L/∂Re z, im: ∂L/∂Im z }` and that of a complex
 * array an array of them. Given the lowered arguments (`z$re, z$im, …`) instead, the result is
 * per lowered argument.
 * ```ts
 * gradient(m.f, [0, 3], { loss: 0 })  // for y += x * x: [1, 6]
 * gradient(m.clog, [{ re: 0, im: 0 }, { re: 0.6, im: -1.3 }], { loss: 0 })  // y += log(x): x̄ = conj(1/x)
 * ```
 */
export function gradient(f: TenetFunction, args: unknown[], options: LossOptions & Pick<GradOptions, 'mode' | 'uncompute' | 'uncomputeTolerance' | 'constants'>): SurfaceGradient {
  optionsOf('gradient', options, true)
  argsOf('gradient', args)
  const view = surfaceArgs(f, args)
  if (view) {
    if (options.constants?.length) argError('`constants` are not supported for functions with complex parameters yet')
    const { lossPart: _, ...rest } = options
    return view.fromLowered(onceGradient(f, { ...rest, loss: view.lossIndex(options.loss, options.lossPart) }, view.toLowered(args)))
  }
  return onceGradient(f, options, args)
}

/** One call of a fresh \`grad(f)\`: a copy of its gradient, its wasm memory given back. */
function onceGradient(f: TenetFunction, options: GradOptions, args: unknown[]): Gradient {
  const g = grad(f, options)
  try { return copyGradient(g(...args)) } finally { g.release() }
}

/** The float scalar and float array parameters of `f` (those with a gradient), by index. */
export function floatParams(c: CompiledAdjoint): number[] {
  return c.params.flatMap((p, i) => (c.slots[i] && p.type.kind !== 'stack' ? [i] : []))
}

/** Copies of the arguments (typed arrays and stacks copied, scalars as they are). */
export function cloneArgs(args: unknown[]): unknown[] {
  return args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : Array.isArray(a) ? a.slice() : a))
}

/** Options of `checkGrad`. */
export interface CheckGradOptions extends LossOptions, Pick<GradOptions, 'uncompute' | 'uncomputeTolerance'> {
  /** Absolute tolerance (default 1e-6). */
  atol?: number
  /** Relative tolerance, times |finite difference| (default 1e-6). */
  rtol?: number
  /** Relative finite-difference step (default 1e-6). */
  step?: number
  /**
   * Which gradients are checked (default `'both'`): the reverse-mode one and, for a function that
   * `grad` differentiates in forward mode (see `GradOptions.mode`), the forward-mode one too;
   * `'reverse'` or `'forward'` for one of them.
   */
  mode?: 'both' | 'forward' | 'reverse'
}

/** What `checkGrad` found. */
export interface CheckGradResult {
  ok: boolean
  /** The largest |ad − fd| over all float input scalars. */
  maxError: number
  /** Where the largest error is: argument index, element index (0 for a scalar), both values, and the mode whose gradient it is. */
  worst: { arg: number; index: number; ad: number; fd: number; mode: 'forward' | 'reverse' } | null
}

/**
 * Compares the gradient with central finite differences of the loss, for every float scalar of
 * every float argument: the adjoint's and, where `grad` uses forward mode, the tangent's too
 * (`mode`). Each finite-difference run goes forwards on a perturbed copy
 * and is undone with the inverse, so the copy returns to the inputs between runs. Fixed-point
 * and ulog arguments are perturbed in their real values (use a `step` well above their grid,
 * e.g. 1e-4 for the default `fixed`). A function with complex parameters may be given its
 * arguments as written (as for `gradient`); `worst.arg` then indexes the lowered arguments.
 */
export function checkGrad(f: TenetFunction, args: unknown[], options: CheckGradOptions): CheckGradResult {
  optionsOf('checkGrad', options, true)
  argsOf('checkGrad', args)
  positiveNumber('checkGrad', 'step', options.step)
  positiveNumber('checkGrad', 'atol', options.atol, true)
  positiveNumber('checkGrad', 'rtol', options.rtol, true)
  const view = surfaceArgs(f, args)
  if (view) {
    const { lossPart: _, ...rest } = options
    return checkGrad(f, view.toLowered(args), { ...rest, loss: view.lossIndex(options.loss, options.lossPart) })
  }
  const c = compileAdjoint(f)
  checkLoss(c, options.loss)
  const atol = options.atol ?? 1e-6, rtol = options.rtol ?? 1e-6, rel = options.step ?? 1e-6
  const mode = options.mode ?? 'both'
  if (mode !== 'both' && mode !== 'forward' && mode !== 'reverse') argError(`\`mode\` must be 'both', 'forward' or 'reverse', got ${String(mode)}`)
  const ads: Array<['forward' | 'reverse', Gradient]> = []
  const check = { ...(options.uncompute ? { uncompute: options.uncompute } : {}), ...(options.uncomputeTolerance !== undefined ? { uncomputeTolerance: options.uncomputeTolerance } : {}) }
  if (mode !== 'forward') ads.push(['reverse', onceGradient(f, { loss: options.loss, mode: 'reverse', ...check }, args)])
  if (mode === 'forward' || (mode === 'both' && compileForwardGradient(f, options.loss))) ads.push(['forward', onceGradient(f, { loss: options.loss, mode: 'forward' }, args)])
  const work = cloneArgs(args)
  const fwd = c.forward, inv = c.inverse
  const conv = c.params.map((_, i) => hostConversions(c, i))
  const converts = conv.some((h) => h.fromHost)
  // number systems with a host encoding (fixed, ulog) run on converted copies of the host values
  const inner = converts ? work.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a)) : work
  const invArgs = work.slice()
  const run = (): number => {
    if (converts) {
      for (let i = 0; i < work.length; i++) {
        const a = work[i], fh = conv[i]!.fromHost
        if (ArrayBuffer.isView(a)) copyIn(inner[i] as TypedArray, a as TypedArray, fh)
        else inner[i] = typeof a === 'number' && fh ? fh(a) : a
      }
    }
    fwd.apply(undefined, inner)
    const raw = fwd.results[options.loss]!
    const lossValue = conv[options.loss]!.toHost ? conv[options.loss]!.toHost!(raw) : raw
    for (let i = 0; i < work.length; i++) {
      const p = c.params[i]!
      invArgs[i] = p.type.kind === 'scalar' ? (p.type.name === 'bool' ? fwd.results[i] !== 0 : fwd.results[i]) : inner[i]
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
      for (const [m, ad] of ads) {
        const g = ad[p]!
        const adv = typeof g === 'number' ? g : g[e]!
        const err = Math.abs(adv - fd)
        if (!(err <= atol + rtol * Math.abs(fd))) ok = false
        if (!(err <= maxError) || worst === null) { maxError = Number.isNaN(err) ? Infinity : Math.max(maxError, err); worst = { arg: p, index: e, ad: adv, fd, mode: m } }
      }
    }
  }
  return { ok, maxError, worst }
}
