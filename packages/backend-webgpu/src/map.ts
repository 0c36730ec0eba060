/**
 * `gpuMap`: a Tenet function mapped over a batch of n items, as WebGPU compute pipelines for its
 * forward run, its inverse and (given its adjoint) its gradient. See the package README.
 */
import {
  InvertibilityError,
  TenetError,
  TenetStaticError,
  suggest,
  type FunctionDef,
  type Program,
  type Registry,
  type ScalarTypeName,
  type Type,
} from '@tenet/ir'
import {
  generateKernel,
  type Kernel,
  type KernelParam,
  type KernelStep,
  type ParamRole,
  type Reduction,
} from './codegen.js'
import { MAP_READ, Usage, requestGpu, type GpuContext } from './device.js'
import { encodeTreeReduction } from './reduce.js'
import { fixedToInt, gpuScalar, type GpuScalar } from './scalars.js'

/** What `@tenet/reversible` attaches to a Tenet function (read structurally: no import of it). */
interface FunctionInfo {
  name: string
  program: Program
  inverses: Map<string, FunctionDef>
  registry: Registry
  inverse: boolean
  options: { checks: boolean; tolerance: number }
}

/** A Tenet function as made by `rev` or `compileModule` (any backend). */
export interface MappableFunction {
  (...args: never[]): unknown
  readonly ir: FunctionDef
}

const INFO = Symbol.for('tenet.function')

function infoOf(f: MappableFunction, what: string): FunctionInfo {
  const info = (f as unknown as Record<symbol, FunctionInfo | undefined>)?.[INFO]
  if (typeof f !== 'function' || !info)
    throw new TypeError(`${what}: expected a Tenet function (from \`rev\` or \`compileModule\`), e.g. \`m.f\``)
  return info
}

/** Options of `gpuMap`. */
export interface GpuMapOptions {
  /** Number of items. */
  batch: number
  /** Parameters sliced by the item index (default: those the function writes). */
  perItem?: string[]
  /** Parameters read by every item (default: those it only reads and that are not `perItem`). */
  shared?: string[]
  /** The device (default: a device from `navigator.gpu`). */
  gpu?: GpuContext
  /**
   * The adjoint of the function, as a Tenet function whose parameters are the function's, one
   * gradient per float parameter, then the sink (`compileAdjoint(f).adjoint` of `@tenet/ad`; the
   * umbrella's `tenet/webgpu` passes it), or a function that builds it on first use. Needed for
   * `gradient` and `jacobian`.
   */
  adjoint?: MappableFunction | (() => MappableFunction)
  /** How gradients of shared parameters are summed over items (default `'tree'`). */
  reduction?: Reduction
  /** Run-time reversibility checks (default: as the function was compiled). */
  checks?: boolean
  /** Invocations per workgroup (default 64). */
  workgroupSize?: number
  /**
   * f32 transcendentals, `/` and `sqrt` within one ulp of the correctly rounded result, by this
   * package's own routines (default `true`); `false` uses the device's built-ins (faster, with
   * WGSL's loose error bounds: several ulp, or 2⁻¹¹ absolute for `sin`).
   */
  precise?: boolean
}

/** Device buffers that stay on the GPU between calls (see `MappedKernel.resident`). */
export interface GpuResident {
  /** The current values, copied back to the host (typed arrays and numbers, as a call returns). */
  read(): Promise<unknown[]>
  /** Frees the device buffers. */
  release(): void
}

/** A gradient of a mapped kernel, and which reduction ran for the shared parameters. */
export interface GpuGradient {
  /**
   * Per parameter: per-item parameters get per-item gradients (a Float32Array shaped like the
   * argument), shared ones the gradient summed over items (a number or a Float32Array), and
   * parameters without a gradient (integers, bool) null.
   */
  gradient: Array<Float32Array | number | null>
  /** The reduction that summed the shared gradients. */
  reduction: Reduction
}

/** A Jacobian of a mapped kernel (per item for per-item inputs, summed over items for shared ones). */
export interface GpuJacobian {
  /** Output components per item, in the order of `outputs` (array outputs element by element). */
  rows: number
  /**
   * Per parameter: per-item inputs a Float32Array of n·rows·size (item-major, then row, then
   * element), shared inputs rows·size summed over items, null without a gradient.
   */
  jacobian: Array<Float32Array | null>
  reduction: Reduction
}

/** One direction of a mapped kernel, callable like a Tenet function but asynchronous. */
export interface MappedDirection {
  /** Runs on host arrays: uploads, runs, reads back; returns the new values of all arguments. */
  (...args: unknown[]): Promise<unknown[]>
  /** Runs on resident buffers without copying anything in or out. */
  run(resident: GpuResident): Promise<void>
  /** The generated WGSL. */
  readonly wgsl: string
}

/** A mapped kernel: forward (calling it), `inverse`, `gradient`, `jacobian`, resident buffers. */
export interface MappedKernel extends MappedDirection {
  readonly inverse: MappedDirection
  /** The role of each parameter. */
  readonly roles: Record<string, 'item' | 'shared'>
  readonly batch: number
  readonly gpu: GpuContext
  /** Uploads the arguments once; pass the result to `run`/`inverse.run` to skip transfers. */
  resident(...args: unknown[]): GpuResident
  /** Gradient of the sum over items of the per-item scalar `loss` (needs `adjoint`). */
  gradient(args: unknown[], options: { loss: string; reduction?: Reduction }): Promise<GpuGradient>
  /** Jacobian of the per-item `outputs` w.r.t. every float parameter (needs `adjoint`). */
  jacobian(args: unknown[], options: { outputs: string[]; reduction?: Reduction }): Promise<GpuJacobian>
  /** The WGSL of the gradient kernel for a reduction (needs `adjoint`). */
  gradientWgsl(reduction?: Reduction): string
}

interface Layout {
  params: KernelParam[]
  scalars: Array<GpuScalar | undefined>
}

interface Compiled {
  kernel: Kernel
  pipeline: GPUComputePipeline
  bindGroupLayout: GPUBindGroupLayout
}

/** The scalar type of a parameter's values. */
const elemOf = (t: Type): ScalarTypeName => (t.kind === 'scalar' ? t.name : t.elem)

async function compile(gpu: GpuContext, kernel: Kernel): Promise<Compiled> {
  const device = gpu.device
  device.pushErrorScope('validation')
  // errors come through the error scope (getCompilationInfo crashes Dawn's Node binding on some shaders)
  const module = device.createShaderModule({ code: kernel.code })
  // an explicit layout: 'auto' would leave out the bindings a shader does not use
  const COMPUTE = 0x4
  const entries: GPUBindGroupLayoutEntry[] = [
    { binding: 0, visibility: COMPUTE, buffer: { type: 'uniform' } },
    { binding: 1, visibility: COMPUTE, buffer: { type: 'storage' } },
  ]
  kernel.groups.forEach((g, i) => {
    entries.push({
      binding: i + 2,
      visibility: COMPUTE,
      buffer: { type: g.readOnly ? 'read-only-storage' : 'storage' },
    })
  })
  const bindGroupLayout = device.createBindGroupLayout({ entries })
  const layout = device.createPipelineLayout({ bindGroupLayouts: [bindGroupLayout] })
  const pipeline = device.createComputePipeline({ layout, compute: { module, entryPoint: 'main' } }) // (the async variant crashes Dawn's Node binding)
  const err = await device.popErrorScope()
  if (err) throw new TenetError('webgpu/wgsl', `the generated WGSL does not compile: ${err.message}`)
  return { kernel, pipeline, bindGroupLayout }
}

/**
 * Maps Tenet function `f` over a batch: `await gpuMap(m.f, { batch: n, perItem: ['out', 'z'],
 * shared: ['nu'] })` compiles its forward and inverse to WGSL compute pipelines; `await k(out, nu,
 * z)` runs every item. Per-item parameters are typed arrays of n scalars, or n arrays of one
 * length L back to back; shared ones are numbers or typed arrays read by all. A parameter the
 * function writes must be per item.
 */
export async function gpuMap(f: MappableFunction, options: GpuMapOptions): Promise<MappedKernel> {
  const info = infoOf(f, 'gpuMap')
  const fn = f.ir
  const n = options.batch
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`gpuMap: \`batch\` must be a positive integer, got ${n}`)
  const registry = info.registry
  const writes = info.program.writes.get(info.name) ?? fn.params.map(() => true)
  const names = fn.params.map((p) => p.name)
  for (const list of [options.perItem ?? [], options.shared ?? []]) {
    for (const name of list) {
      if (!names.includes(name))
        throw new TenetError(
          'webgpu/unknown-parameter',
          `\`${info.name}\` has no parameter \`${name}\`${suggest(name, names)} (its parameters: ${names.join(', ')})`,
        )
    }
  }
  const roles: Record<string, 'item' | 'shared'> = {}
  fn.params.forEach((p, i) => {
    const item = options.perItem?.includes(p.name),
      shared = options.shared?.includes(p.name)
    if (item && shared)
      throw new TenetError('webgpu/parameter-role', `\`${p.name}\` is declared both per item and shared`)
    if (shared && writes[i])
      throw new TenetError(
        'webgpu/parameter-role',
        `\`${p.name}\` cannot be shared: \`${info.name}\` writes it, and every item would write the same memory (declare it per item)`,
      )
    if (p.type.kind === 'stack')
      throw new TenetStaticError(
        'webgpu/unsupported',
        `\`${p.name}\` is a stack: stacks are not supported on webgpu`,
        p.loc,
      )
    roles[p.name] = item ? 'item' : shared ? 'shared' : writes[i] ? 'item' : 'shared'
  })
  const scalars = fn.params.map((p) => gpuScalar(registry, elemOf(p.type), p.loc))
  const gpu = options.gpu ?? (await requestGpu())
  const checks = options.checks ?? info.options.checks
  const wg = options.workgroupSize ?? 64
  const precise = options.precise ?? true
  const baseParams: KernelParam[] = fn.params.map((p, i) => ({
    name: p.name,
    role: roles[p.name]!,
    shape: p.type.kind === 'array' ? 'array' : 'scalar',
    elem: elemOf(p.type),
    written: writes[i]!,
  }))
  const functions = info.program.functions,
    inverses = info.inverses,
    progWrites = info.program.writes
  const kernelFor = (
    step: KernelStep,
    params: KernelParam[],
    funcs: Map<string, FunctionDef>,
    invs: Map<string, FunctionDef>,
    w: Map<string, boolean[]>,
    reduction: Reduction,
  ): Kernel =>
    generateKernel({
      registry,
      functions: funcs,
      inverses: invs,
      writes: w,
      params,
      steps: [step],
      checks,
      tolerance: info.options.tolerance,
      reduction,
      workgroupSize: wg,
      precise,
    })
  const inverseIr = info.inverse ? functions.get(info.name)! : inverses.get(info.name)!
  const forwardIr = info.inverse ? inverses.get(info.name)! : functions.get(info.name)!
  const args = fn.params.map((p) => p.name)
  const fwd = await compile(
    gpu,
    kernelFor({ fn: forwardIr, args }, baseParams, functions, inverses, progWrites, 'tree'),
  )
  const inv = await compile(
    gpu,
    kernelFor({ fn: inverseIr, args }, baseParams, functions, inverses, progWrites, 'tree'),
  )
  const layout: Layout = { params: baseParams, scalars }
  const runner = new Runner(gpu, n, wg, info.name)

  // ---------- the gradient kernel: f, then its adjoint, in one invocation ----------
  let adjointFn: MappableFunction | undefined
  const adjoint = (): MappableFunction | undefined => {
    if (!adjointFn && options.adjoint)
      adjointFn = 'ir' in options.adjoint ? options.adjoint : (options.adjoint as () => MappableFunction)()
    return adjointFn
  }
  let gradLayout: { params: KernelParam[]; scalars: Array<GpuScalar | undefined>; gradOf: number[] } | undefined
  const gradKernels = new Map<Reduction, Promise<Compiled>>()
  const gradientLayout = () => {
    if (gradLayout) return gradLayout
    if (!adjoint())
      throw new TenetError(
        'webgpu/no-adjoint',
        `\`${info.name}\` was mapped without its adjoint: pass \`adjoint\` to gpuMap (the umbrella's \`gpuMap\` from 'tenet/webgpu' builds it with @tenet/ad)`,
      )
    const adj = adjoint()!.ir
    const params: KernelParam[] = [...baseParams]
    const sc: Array<GpuScalar | undefined> = [...scalars]
    const gradOf: number[] = fn.params.map(() => -1)
    let k = fn.params.length
    fn.params.forEach((p, i) => {
      const ns = registry.findNumberSystem(elemOf(p.type))
      if (!ns?.float) return
      const g = adj.params[k]
      if (!g)
        throw new TenetError(
          'webgpu/adjoint',
          `the adjoint \`${adj.name}\` has no gradient parameter for \`${p.name}\``,
        )
      const gt = elemOf(g.type)
      if (gt !== 'f32')
        throw new TenetStaticError(
          'webgpu/f64',
          `the gradient of \`${p.name}\` (${ns.name}) is ${gt}, and the webgpu backend has no f64: WGSL has no 64-bit floats (declare \`${p.name}\` f32)`,
          p.loc,
        )
      gradOf[i] = params.length
      params.push({
        name: g.name,
        role: roles[p.name] === 'item' ? 'item' : 'shared-gradient',
        shape: p.type.kind === 'array' ? 'array' : 'scalar',
        elem: 'f32',
        written: true,
      })
      sc.push({ kind: 'f32' })
      k++
    })
    for (; k < adj.params.length; k++) {
      params.push({ name: adj.params[k]!.name, role: 'discard', shape: 'scalar', elem: 'f32', written: true })
      sc.push(undefined)
    }
    gradLayout = { params, scalars: sc, gradOf }
    return gradLayout
  }
  const gradKernelSource = (reduction: Reduction): Kernel => {
    const gl = gradientLayout()
    const ainfo = infoOf(adjoint()!, 'gpuMap adjoint')
    const funcs = new Map(ainfo.program.functions)
    for (const [name, g] of functions) if (!funcs.has(name)) funcs.set(name, g)
    const invs = new Map(ainfo.inverses)
    for (const [name, g] of inverses) if (!invs.has(name)) invs.set(name, g)
    const w = new Map(ainfo.program.writes)
    for (const [name, g] of progWrites) if (!w.has(name)) w.set(name, g)
    const adjIr = ainfo.program.functions.get(ainfo.name)!
    return generateKernel({
      // the adjoint's registry: it holds the derivative primitives the adjoint transform added
      registry: ainfo.registry,
      functions: funcs,
      inverses: invs,
      writes: w,
      params: gl.params,
      steps: [
        { fn: forwardIr, args },
        { fn: adjIr, args: gl.params.map((p) => p.name) },
      ],
      checks,
      tolerance: info.options.tolerance,
      reduction,
      workgroupSize: wg,
      precise,
    })
  }
  const gradKernel = (reduction: Reduction): Promise<Compiled> => {
    let c = gradKernels.get(reduction)
    if (!c) {
      c = compile(gpu, gradKernelSource(reduction))
      gradKernels.set(reduction, c)
    }
    return c
  }

  /** Runs the gradient kernel once with the given per-item seeds of each output. */
  const gradientRun = async (
    hostArgs: unknown[],
    seeds: Map<number, Float32Array>,
    reduction: Reduction,
  ): Promise<Array<Float32Array | number | null>> => {
    const gl = gradientLayout()
    const c = await gradKernel(reduction)
    const full: unknown[] = [...hostArgs]
    gl.params.slice(hostArgs.length).forEach((p, j) => {
      const i = hostArgs.length + j
      if (p.role === 'discard') {
        full[i] = 0
        return
      }
      const of = gl.gradOf.indexOf(i)
      const size = argumentSize(hostArgs[of], baseParams[of]!)
      if (p.role === 'item') full[i] = seeds.get(of) ?? new Float32Array(size)
      else full[i] = p.shape === 'scalar' ? 0 : new Float32Array(size)
    })
    const out = await runner.call(c, { params: gl.params, scalars: gl.scalars }, full, reduction, false)
    return fn.params.map((_, i) => {
      const g = gl.gradOf[i]!
      if (g < 0) return null
      return out[g] as Float32Array | number
    })
  }

  const direction = (c: Compiled): MappedDirection => {
    const call = (...a: unknown[]) => runner.call(c, layout, a, 'tree', true)
    return Object.assign(call, {
      run: (r: GpuResident) => runner.runResident(c, r as ResidentImpl),
      wgsl: c.kernel.code,
    })
  }
  const k = direction(fwd) as MappedKernel
  const extra = {
    inverse: direction(inv),
    roles,
    batch: n,
    gpu,
    resident: (...a: unknown[]) => runner.resident(fwd, layout, a),
    async gradient(a: unknown[], o: { loss: string; reduction?: Reduction }): Promise<GpuGradient> {
      const reduction = o.reduction ?? options.reduction ?? 'tree'
      const li = names.indexOf(o.loss)
      if (li < 0)
        throw new TenetError(
          'webgpu/unknown-parameter',
          `\`${info.name}\` has no parameter \`${o.loss}\`${suggest(o.loss, names)}`,
        )
      const lp = fn.params[li]!
      if (roles[o.loss] !== 'item' || lp.type.kind !== 'scalar' || scalars[li]!.kind !== 'f32') {
        throw new TenetError(
          'webgpu/loss',
          `the loss \`${o.loss}\` must be a per-item f32 scalar (the gradient is that of the sum of the items' losses)`,
        )
      }
      checkArgs(info.name, layout, n, a)
      const gradient = await gradientRun(a, new Map([[li, new Float32Array(n).fill(1)]]), reduction)
      return { gradient, reduction }
    },
    async jacobian(a: unknown[], o: { outputs: string[]; reduction?: Reduction }): Promise<GpuJacobian> {
      const reduction = o.reduction ?? options.reduction ?? 'tree'
      checkArgs(info.name, layout, n, a)
      const outs = o.outputs.map((name) => {
        const i = names.indexOf(name)
        if (i < 0)
          throw new TenetError(
            'webgpu/unknown-parameter',
            `\`${info.name}\` has no parameter \`${name}\`${suggest(name, names)}`,
          )
        if (roles[name] !== 'item' || scalars[i]!.kind !== 'f32')
          throw new TenetError('webgpu/loss', `the output \`${name}\` must be a per-item f32 parameter`)
        return { i, size: argumentSize(a[i], baseParams[i]!) / n }
      })
      const rows = outs.reduce((s, x) => s + x.size, 0)
      const jac: Array<Float32Array | null> = fn.params.map((p, i) => {
        if (!registry.findNumberSystem(elemOf(p.type))?.float) return null
        return new Float32Array(argumentSize(a[i], baseParams[i]!) * rows)
      })
      let r = 0
      for (const out of outs) {
        for (let e = 0; e < out.size; e++, r++) {
          const seed = new Float32Array(n * out.size)
          for (let item = 0; item < n; item++) seed[item * out.size + e] = 1
          const g = await gradientRun(
            a.map((x) => (ArrayBuffer.isView(x) ? (x as Float32Array).slice() : x)),
            new Map([[out.i, seed]]),
            reduction,
          )
          g.forEach((gi, i) => {
            const J = jac[i]
            if (!J || gi === null) return
            if (roles[fn.params[i]!.name] === 'item') {
              const per = (gi as Float32Array).length / n
              for (let item = 0; item < n; item++)
                J.set((gi as Float32Array).subarray(item * per, (item + 1) * per), (item * rows + r) * per)
            } else if (typeof gi === 'number') J[r] = gi
            else J.set(gi, r * gi.length)
          })
        }
      }
      return { rows, jacobian: jac, reduction }
    },
    gradientWgsl: (reduction: Reduction = options.reduction ?? 'tree') => gradKernelSource(reduction).code,
  }
  Object.assign(k, extra)
  return k
}

/** Elements of an argument (1 for a scalar). */
function argumentSize(a: unknown, p: KernelParam): number {
  if (p.shape === 'scalar') return p.role === 'item' ? (a as ArrayLike<number>).length : 1
  return (a as ArrayLike<number>).length
}

const HOST_ARRAY: Record<string, string> = {
  f32: 'Float32Array',
  i32: 'Int32Array',
  bool: 'Uint8Array',
  fixed: 'Float64Array',
}

/** Checks the host arguments of a call against the layout (clear errors, before anything runs). */
function checkArgs(name: string, layout: Layout, n: number, args: unknown[]): void {
  const ps = layout.params.filter((p) => p.role === 'item' || p.role === 'shared')
  if (args.length !== ps.length)
    throw new TenetError(
      'call/arity',
      `the mapped \`${name}\` takes ${ps.length} arguments (${ps.map((p) => p.name).join(', ')}), got ${args.length}`,
    )
  ps.forEach((p, i) => {
    const a = args[i]
    const s = layout.scalars[i]!
    const want = HOST_ARRAY[s.kind]!
    if (p.role === 'shared' && p.shape === 'scalar') {
      if (s.kind === 'bool' ? typeof a !== 'boolean' : typeof a !== 'number')
        throw new TenetError(
          'call/type',
          `the shared \`${p.name}\` must be a ${s.kind === 'bool' ? 'boolean' : 'number'}, got ${typeof a}`,
        )
      return
    }
    if (!ArrayBuffer.isView(a) || a.constructor.name !== want) {
      throw new TenetError(
        'call/type',
        `${p.role === 'item' ? 'the per-item' : 'the shared'} \`${p.name}\` must be a ${want}${p.role === 'item' && p.shape === 'scalar' ? ` of ${n} values (one per item)` : ''}, got ${(a as object | undefined)?.constructor?.name ?? typeof a}`,
      )
    }
    const len = (a as unknown as ArrayLike<number>).length
    if (p.role === 'item' && (p.shape === 'scalar' ? len !== n : len % n !== 0)) {
      throw new TenetError(
        'call/length',
        `the per-item \`${p.name}\` has ${len} elements; it needs ${p.shape === 'scalar' ? `${n} (one per item)` : `n·L = ${n}·L (n arrays of one length L, back to back)`}`,
      )
    }
  })
  // the aliasing rule of the language (see \`overlapGuard\` of \`@tenet/reversible\`): an array the
  // function writes shares no memory with any other array argument
  ps.forEach((p, i) => {
    if (!p.written) return
    ps.forEach((q, j) => {
      if (j === i || (q.written && j < i)) return
      const a = args[i],
        b = args[j]
      if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b) && overlaps(a, b)) {
        const [x, y] = i < j ? [p, q] : [q, p]
        throw new TenetError(
          'call/overlap',
          `the mapped \`${name}\`'s arguments \`${x.name}\` and \`${y.name}\` share memory, and \`${name}\` writes \`${p.name}\`: an array a function writes must not overlap any other array argument (pass a copy, e.g. \`${q.name}.slice()\`)`,
        )
      }
    })
  })
}

/** Two non-empty views whose byte ranges in one buffer intersect (one view twice included). */
function overlaps(a: ArrayBufferView, b: ArrayBufferView): boolean {
  if (a.byteLength === 0 || b.byteLength === 0 || a.buffer !== b.buffer) return false
  return a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength
}

interface ResidentImpl extends GpuResident {
  layout: Layout
  buffers: Buffers
  host: unknown[]
}

/** The device buffers of a call: one per buffer group, each parameter a slice of one. */
interface Buffers {
  groups: GPUBuffer[]
  /** Per parameter: offset in elements in its group's buffer, and length (elements per item for per-item arrays). */
  offsets: number[]
  lengths: number[]
  /** Per parameter: elements it occupies. */
  sizes: number[]
}

/** Buffers, dispatch, errors, readback. */
class Runner {
  constructor(
    private readonly gpu: GpuContext,
    private readonly n: number,
    private readonly wg: number,
    private readonly name: string,
  ) {}

  private toDevice(s: GpuScalar, a: unknown, name: string): ArrayBufferView {
    if (typeof a === 'number' || typeof a === 'boolean')
      return this.toDevice(
        s,
        s.kind === 'f32'
          ? new Float32Array([a as number])
          : s.kind === 'i32'
            ? new Int32Array([a as number])
            : s.kind === 'bool'
              ? new Uint8Array([a ? 1 : 0])
              : new Float64Array([a as number]),
        name,
      )
    if (s.kind === 'bool') return Uint32Array.from(a as Uint8Array, (x) => (x ? 1 : 0))
    if (s.kind === 'fixed') {
      const x = a as Float64Array
      const out = new Int32Array(x.length)
      for (let i = 0; i < x.length; i++) {
        const k = fixedToInt(x[i]!, s)
        if (k === undefined)
          throw new InvertibilityError(
            'runtime/fixed-overflow',
            `${s.name} overflow: ${x[i]} (\`${name}\`[${i}]) is outside the range (−2^${s.integerBits}, 2^${s.integerBits}) of ${s.name}`,
          )
        out[i] = k
      }
      return out
    }
    return a as ArrayBufferView
  }

  private fromDevice(s: GpuScalar, bytes: ArrayBuffer, into: unknown): unknown {
    switch (s.kind) {
      case 'f32': {
        const v = new Float32Array(bytes)
        if (typeof into === 'number') return v[0]
        ;(into as Float32Array).set(v.subarray(0, (into as Float32Array).length))
        return into
      }
      case 'i32': {
        const v = new Int32Array(bytes)
        if (typeof into === 'number') return v[0]
        ;(into as Int32Array).set(v.subarray(0, (into as Int32Array).length))
        return into
      }
      case 'bool': {
        const v = new Uint32Array(bytes)
        if (typeof into === 'boolean') return v[0] !== 0
        const t = into as Uint8Array
        for (let i = 0; i < t.length; i++) t[i] = v[i] ? 1 : 0
        return into
      }
      case 'fixed': {
        const v = new Int32Array(bytes),
          scale = 2 ** -s.fractionBits
        if (typeof into === 'number') return v[0]! * scale
        const t = into as Float64Array
        for (let i = 0; i < t.length; i++) t[i] = v[i]! * scale
        return into
      }
    }
  }

  /** Creates and fills the buffers of a call (shared gradients zeroed: rows per item for the tree). */
  private upload(kernel: Kernel, layout: Layout, args: unknown[], reduction: Reduction): Buffers {
    const device = this.gpu.device
    const sizes: number[] = [],
      lengths: number[] = [],
      offsets: number[] = []
    const data: Array<ArrayBufferView | undefined> = []
    const groupSize = kernel.groups.map(() => 0)
    layout.params.forEach((p, i) => {
      const g = kernel.paramGroup[i]!
      if (g < 0) {
        sizes.push(0)
        lengths.push(0)
        offsets.push(0)
        data.push(undefined)
        return
      }
      const a = args[i]
      const elems = typeof a === 'number' || typeof a === 'boolean' ? 1 : (a as ArrayLike<number>).length
      lengths.push(p.shape === 'array' ? (p.role === 'item' ? elems / this.n : elems) : elems)
      const size = p.role === 'shared-gradient' ? (reduction === 'tree' ? this.n * elems : elems) : elems
      data.push(p.role === 'shared-gradient' ? undefined : this.toDevice(layout.scalars[i]!, a, p.name))
      sizes.push(size)
      offsets.push(groupSize[g]!)
      groupSize[g]! += size
    })
    const groups = groupSize.map((elems) =>
      device.createBuffer({ size: Math.max(16, elems * 4), usage: Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST }),
    )
    data.forEach((d, i) => {
      if (d && d.byteLength)
        device.queue.writeBuffer(groups[kernel.paramGroup[i]!]!, offsets[i]! * 4, d.buffer, d.byteOffset, d.byteLength)
    })
    return { groups, offsets, lengths, sizes }
  }

  private meta(c: Compiled, b: Buffers): GPUBuffer {
    const m = new Uint32Array(Math.max(4, Math.ceil(c.kernel.metaSize / 4) * 4))
    m[0] = this.n
    c.kernel.lengthSlot.forEach((slot, i) => {
      if (slot >= 0) m[slot] = b.lengths[i]!
    })
    c.kernel.offsetSlot.forEach((slot, i) => {
      if (slot >= 0) m[slot] = b.offsets[i]!
    })
    const buf = this.gpu.device.createBuffer({ size: m.byteLength, usage: Usage.UNIFORM | Usage.COPY_DST })
    this.gpu.device.queue.writeBuffer(buf, 0, m)
    return buf
  }

  /** Encodes the kernel dispatch; returns the error buffer and the temporaries. */
  private dispatch(encoder: GPUCommandEncoder, c: Compiled, b: Buffers): { err: GPUBuffer; temps: GPUBuffer[] } {
    const device = this.gpu.device
    const meta = this.meta(c, b)
    const err = device.createBuffer({ size: 16, usage: Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST })
    const entries: GPUBindGroupEntry[] = [
      { binding: 0, resource: { buffer: meta } },
      { binding: 1, resource: { buffer: err } },
    ]
    b.groups.forEach((g, i) => entries.push({ binding: i + 2, resource: { buffer: g } }))
    const bind = device.createBindGroup({ layout: c.bindGroupLayout, entries })
    const pass = encoder.beginComputePass()
    pass.setPipeline(c.pipeline)
    pass.setBindGroup(0, bind)
    const groups = Math.ceil(this.n / this.wg)
    const x = Math.min(groups, 65535)
    pass.dispatchWorkgroups(x, Math.ceil(groups / x))
    pass.end()
    return { err, temps: [meta, err] }
  }

  /** Submits the encoder with copies of the given ranges into staging buffers; returns their bytes. */
  private async readBack(
    encoder: GPUCommandEncoder,
    sources: Array<{ buffer: GPUBuffer; offset: number; bytes: number }>,
  ): Promise<ArrayBuffer[]> {
    const device = this.gpu.device
    const staging = sources.map((s) => {
      const b = device.createBuffer({ size: Math.max(16, s.bytes), usage: MAP_READ | Usage.COPY_DST })
      if (s.bytes > 0) encoder.copyBufferToBuffer(s.buffer, s.offset, b, 0, s.bytes)
      return b
    })
    device.queue.submit([encoder.finish()])
    return Promise.all(
      staging.map(async (b, i) => {
        await b.mapAsync(MAP_READ)
        const copy = b.getMappedRange().slice(0, sources[i]!.bytes)
        b.unmap()
        b.destroy()
        return copy
      }),
    )
  }

  private throwIfFailed(c: Compiled, errBytes: ArrayBuffer, resident: boolean): void {
    const e = new Uint32Array(errBytes)
    if (e[0] === 0) return
    const site = c.kernel.sites[e[1]!]
    const value = new Int32Array(errBytes)[3]!
    const item = e[2]!
    const more = e[0]! > 1 ? `; ${e[0]! - 1} more item${e[0] === 2 ? '' : 's'} failed a check` : ''
    const msg = `${site ? site.message(value) : 'a run-time check failed'} (item ${item} of ${this.n}${more}; ${resident ? 'the resident buffers may be partly updated' : 'nothing was copied back'})`
    throw new InvertibilityError(site?.code ?? 'runtime/unknown', msg, site?.loc)
  }

  /** One call on host values; `copyBack` writes per-item results into the caller's arrays. */
  async call(
    c: Compiled,
    layout: Layout,
    args: unknown[],
    reduction: Reduction,
    copyBack: boolean,
  ): Promise<unknown[]> {
    if (copyBack) checkArgs(this.name, layout, this.n, args)
    const device = this.gpu.device
    const b = this.upload(c.kernel, layout, args, reduction)
    const encoder = device.createCommandEncoder()
    const { err, temps } = this.dispatch(encoder, c, b)
    const reads: Array<{ buffer: GPUBuffer; offset: number; bytes: number }> = [{ buffer: err, offset: 0, bytes: 16 }]
    const which: number[] = []
    layout.params.forEach((p, i) => {
      if (p.role === 'discard' || p.role === 'shared') return
      if (p.role === 'item' && !p.written) return
      const g = b.groups[c.kernel.paramGroup[i]!]!
      if (p.role === 'shared-gradient' && reduction === 'tree') {
        // the items' partial rows, summed by the fixed-order tree
        const width = b.lengths[i]!
        const rows = device.createBuffer({
          size: Math.max(16, this.n * width * 4),
          usage: Usage.STORAGE | Usage.COPY_DST,
        })
        encoder.copyBufferToBuffer(g, b.offsets[i]! * 4, rows, 0, this.n * width * 4)
        const out = device.createBuffer({ size: Math.max(16, width * 4), usage: Usage.STORAGE | Usage.COPY_SRC })
        temps.push(rows, out, ...encodeTreeReduction(device, encoder, rows, this.n, width, out))
        reads.push({ buffer: out, offset: 0, bytes: width * 4 })
      } else {
        reads.push({ buffer: g, offset: b.offsets[i]! * 4, bytes: b.sizes[i]! * 4 })
      }
      which.push(i)
    })
    try {
      const bytes = await this.readBack(encoder, reads)
      this.throwIfFailed(c, bytes[0]!, false)
      const out = [...args]
      which.forEach((i, j) => {
        const p = layout.params[i]!
        if (p.role === 'shared-gradient') {
          const v = new Float32Array(bytes[j + 1]!)
          out[i] = p.shape === 'scalar' ? v[0]! : v.slice()
        } else
          out[i] = this.fromDevice(
            layout.scalars[i]!,
            bytes[j + 1]!,
            copyBack ? args[i] : (args[i] as Float32Array).slice(),
          )
      })
      return copyBack ? out.slice(0, layout.params.length) : out
    } finally {
      for (const g of b.groups) g.destroy()
      for (const t of temps) t.destroy()
    }
  }

  resident(c: Compiled, layout: Layout, args: unknown[]): ResidentImpl {
    checkArgs(this.name, layout, this.n, args)
    const buffers = this.upload(c.kernel, layout, args, 'tree')
    const host = args.map((a) => (ArrayBuffer.isView(a) ? (a as Float32Array).slice() : a))
    return {
      layout,
      buffers,
      host,
      read: async () => {
        const encoder = this.gpu.device.createCommandEncoder()
        const idx = layout.params.map((_, i) => i).filter((i) => ArrayBuffer.isView(host[i]))
        const bytes = await this.readBack(
          encoder,
          idx.map((i) => ({
            buffer: buffers.groups[c.kernel.paramGroup[i]!]!,
            offset: buffers.offsets[i]! * 4,
            bytes: buffers.sizes[i]! * 4,
          })),
        )
        const out = [...host]
        idx.forEach((i, j) => {
          out[i] = this.fromDevice(layout.scalars[i]!, bytes[j]!, (host[i] as Float32Array).slice())
        })
        return out
      },
      release: () => {
        for (const g of buffers.groups) g.destroy()
      },
    }
  }

  async runResident(c: Compiled, r: ResidentImpl): Promise<void> {
    if (c.kernel.groups.length !== r.buffers.groups.length)
      throw new TenetError('webgpu/resident', 'these resident buffers belong to another kernel')
    const encoder = this.gpu.device.createCommandEncoder()
    const { err, temps } = this.dispatch(encoder, c, r.buffers)
    try {
      const [bytes] = await this.readBack(encoder, [{ buffer: err, offset: 0, bytes: 16 }])
      this.throwIfFailed(c, bytes!, true)
    } finally {
      for (const t of temps) t.destroy()
    }
  }
}

export type { ParamRole }
