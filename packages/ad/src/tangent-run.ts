/**
 * `TangentRun`: the compiled tangent of a function driven on loaded arguments (values and w
 * tangent directions at once), and the argument loaders it shares with the Jacobian and Hessian.
 */
import {
  arityError,
  checkArgument,
  copyToRepresentation,
  hostParams,
  overlapGuard,
  type HostArray,
  type OverlapGuard,
  type TenetFunction,
} from '@tenet/reversible'
import { infoOf, type CompiledTangent } from './compile.js'

/** Default number of directions per tangent sweep (Hessian and forward Jacobian columns). */
export const DEFAULT_WIDTH = 8

/** How to check and convert one argument of f (see `loadArgs`). */
type ArgLoader = (a: unknown, into: unknown) => unknown

/** Per function: one loader per parameter (the registry lookups done once). */
const loaders = new WeakMap<TenetFunction, ArgLoader[]>()
/** Per function: the aliasing rule's guard (see \`overlapGuard\` of \`@tenet/reversible\`; null: nothing to test). */
const guards = new WeakMap<TenetFunction, OverlapGuard | null>()

function guardOf(f: TenetFunction): OverlapGuard | null {
  let g = guards.get(f)
  if (g === undefined) {
    const info = infoOf(f)
    g =
      overlapGuard(
        `${info.name}${info.inverse ? '.inverse' : ''}`,
        f.ir.params,
        info.program.writes.get(info.name) ?? [],
      ) ?? null
    guards.set(f, g)
  }
  return g
}

function loadersOf(f: TenetFunction): ArgLoader[] {
  let ls = loaders.get(f)
  if (ls) return ls
  const info = infoOf(f)
  const name = info.name
  const params = f.ir.params
  const hps = hostParams(info.registry, params)
  ls = params.map((_, i): ArgLoader => {
    const hp = hps[i]!
    return (a, into) => {
      checkArgument(name, params, hp, i, a)
      // host values into the representation (fixed rounds to its grid, ulog encodes); arrays and stacks copied
      if (hp.kind === 'number') return hp.fromHost ? hp.fromHost(a as number) : a
      if (hp.kind === 'array') return copyToRepresentation(a as HostArray, hp, into)
      if (hp.kind === 'stack') return (a as unknown[]).slice()
      return a
    }
  })
  loaders.set(f, ls)
  return ls
}

/**
 * Checks and converts the caller's arguments (arrays and stacks copied), like a call of `f`.
 * With `into` (an earlier result), an array is copied into the one there when it has the same
 * type and length, and the result is written there.
 */
export function loadArgs(f: TenetFunction, args: ArrayLike<unknown>, into?: unknown[]): unknown[] {
  // (calls in a loop load the same function: its loaders and guard without the WeakMap lookups)
  if (f !== lastLoaded) {
    lastLoaders = loadersOf(f)
    lastGuard = guardOf(f)
    lastLoaded = f
  }
  const ls = lastLoaders!
  const guard = lastGuard
  if (args.length !== ls.length) arityError(infoOf(f).name, f.ir.params, args.length)
  const out = into ?? new Array<unknown>(ls.length)
  for (let i = 0; i < ls.length; i++) out[i] = ls[i]!(args[i], out[i])
  guard?.check(args)
  return out
}

/**
 * The function `loadArgs` loaded last, with its loaders and guard (held strongly, like the call
 * plan of `hessian`: the function used last stays alive until another one is loaded).
 */
let lastLoaded: TenetFunction | undefined
let lastLoaders: ArgLoader[] | undefined
let lastGuard: OverlapGuard | null = null

/**
 * Drives one compiled tangent: a positional argument array (values, then tangents in the layout
 * of `tangentSlots`) reused between sweeps.
 */
export class TangentRun {
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
    ct.slots.forEach((s) => {
      if (s?.kind === 'scalar') for (let k = 0; k < ct.width; k++) this.scalarAt.push(s.index + k)
    })
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
        if (!ArrayBuffer.isView(b) || b.length !== src.length || b.constructor !== src.constructor)
          b = new (src.constructor as Float64ArrayConstructor)(src.length)
        b.set(src)
        this.argv[i] = b
        if (s) {
          let t = this.argv[s.index] as Float64Array
          if (!ArrayBuffer.isView(t) || t.length !== src.length * this.w)
            t = new (src.constructor as Float64ArrayConstructor)(src.length * this.w)
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
    return s.kind === 'scalar'
      ? (this.argv[s.index + k] as number)
      : (this.argv[s.index] as Float64Array)[e * this.w + k]!
  }

  run(): void {
    const core = this.ct.tangent.core
    core.apply(undefined, this.argv)
    const r = core.results
    for (const i of this.scalarAt) this.argv[i] = this.boolAt.has(i) ? r[i] !== 0 : r[i]
  }
}
