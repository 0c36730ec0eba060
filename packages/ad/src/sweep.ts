/**
 * `Sweep`: one compiled adjoint driven step by step (load, forward, clear, seed, backward, read):
 * the building block of the Jacobian, Hessian and vjp functions, which seed many directions.
 * (`grad` uses the generated drivers of `driver.ts` instead, which allocate nothing per call.)
 */
import type { CompiledFunction } from '@tenet/ir'
import {
  arityError,
  checkArgument,
  hostParams,
  overlapGuard,
  type HostParam,
  type OverlapGuard,
} from '@tenet/reversible'
import type { CompiledAdjoint } from './compile.js'
import { argError, copyIn, CTORS, hostConversions, scalarReadBack, type TypedArray } from './arguments.js'

/** Drives one compiled adjoint: owns copies of the arguments and the gradient buffers, reused. */
export class Sweep {
  readonly fwd: unknown[]
  private readonly adj: unknown[]
  private readonly bufs: Array<TypedArray | undefined>
  private readonly gbufs: Array<Float64Array | Float32Array | undefined>
  private readonly readBack: Array<'bool' | 'int' | 'float' | null>
  private readonly fromHost: Array<((x: number) => number) | undefined>
  private readonly toHost: Array<((x: number) => number) | undefined>
  private readonly sink: number
  private readonly adjointCore: CompiledFunction
  private readonly hps: HostParam[]
  /** The aliasing rule of the function (see \`overlapGuard\` of \`@tenet/reversible\`). */
  readonly overlap: OverlapGuard | undefined

  constructor(readonly c: CompiledAdjoint) {
    const n = c.params.length
    this.fwd = new Array<unknown>(n).fill(0)
    this.sink = n + c.slots.filter((s) => s).length
    this.adj = new Array<unknown>(this.sink + 1).fill(0)
    this.bufs = new Array(n).fill(undefined)
    this.gbufs = new Array(n).fill(undefined)
    this.readBack = c.params.map((_, i) => scalarReadBack(c, i))
    this.fromHost = c.params.map((_, i) => hostConversions(c, i).fromHost)
    this.toHost = c.params.map((_, i) => hostConversions(c, i).toHost)
    this.adjointCore = c.adjoint.core
    this.hps = hostParams(c.info.registry, c.params)
    this.overlap = overlapGuard(
      `${c.info.name}${c.info.inverse ? '.inverse' : ''}`,
      c.params,
      c.info.program.writes.get(c.info.name) ?? [],
    )
  }

  get name(): string {
    return this.c.info.name
  }

  /** Copies the caller's arguments (arrays into owned buffers, so the caller's are left as passed). */
  load(args: ArrayLike<unknown>): void {
    const params = this.c.params
    if (args.length !== params.length) arityError(this.name, params, args.length)
    for (let i = 0; i < params.length; i++) {
      const p = params[i]!,
        a = args[i]
      checkArgument(this.name, params, this.hps[i]!, i, a)
      if (p.type.kind === 'scalar') {
        const fh = this.fromHost[i]
        this.fwd[i] = fh ? fh(a as number) : a
      } else if (p.type.kind === 'array') {
        const ctor = CTORS[this.c.info.registry.numberSystem(p.type.elem).arrayType]
        let b = this.bufs[i]
        if (!b || b.length !== (a as TypedArray).length) b = this.bufs[i] = new ctor((a as TypedArray).length)
        copyIn(b, a as TypedArray, this.fromHost[i])
        this.fwd[i] = b
      } else this.fwd[i] = (a as unknown[]).slice()
    }
    this.overlap?.check(args)
  }

  /** Runs the function forwards on the loaded values (scalars take their new values). */
  forward(): void {
    const core = this.c.forward
    core.apply(undefined, this.fwd)
    this.takeScalars(core.results)
  }

  private takeScalars(res: Float64Array): void {
    for (let i = 0; i < this.readBack.length; i++) {
      const how = this.readBack[i]
      // integers as small integers, as the generated code was compiled for (see `scalarReadBack`)
      if (how !== null) this.fwd[i] = how === 'bool' ? res[i] !== 0 : how === 'int' ? res[i]! | 0 : res[i]
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
    if (!s || s.kind === 'stack')
      argError(`argument ${param + 1} of \`${this.name}\` has no gradient to seed (it is not a float scalar or array)`)
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
