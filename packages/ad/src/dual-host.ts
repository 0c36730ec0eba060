/**
 * Host functions written against the dual-numbers API (`hostFunction` of `@tenet/dual`) inside a
 * Tenet program: `y += ${h}(a, b)` is differentiated through the dual engine. The adjoint reads
 * each partial ∂h/∂argₖ from a generated helper primitive that asks the host for its gradient at
 * the call's arguments (one reverse sweep of the dual engine per point: the host remembers the
 * last one). Any other host function read by a derivative is a static error, arrays included (an
 * array argument used to get a silent zero gradient).
 */
import { TenetError, TenetStaticError, type Expr, type PurePrimitiveSpec } from '@tenet/ir'
import { dualHostInfo } from '@tenet/dual'

/** The element type of an array-typed host argument (set by the checker), or undefined. */
export function arrayElementType(e: Expr): string | undefined {
  const t = (e as { type?: unknown }).type
  if (t && typeof t === 'object' && (t as { kind: string }).kind === 'array') return (t as { elem: string }).elem
  return undefined
}

/** A host call's contribution to an array's gradient, emitted by the adjoint as `@safe $pb(seed, args…, g_array)`. */
export interface HostPullback {
  /** The generated host function (`$hostN`) that adds seed · ∂h/∂array into the gradient array. */
  callee: string
  seed: Expr
  /** Copies of the call's argument expressions. */
  args: Expr[]
  /** The array argument whose gradient array receives the contribution. */
  target: Expr
}

// generated helper hosts per (program hosts array, host index, role): created once, appended once
const generated = new WeakMap<unknown[], Map<string, string>>()

function appendHost(hosts: unknown[], key: string, fn: (...a: unknown[]) => unknown): string {
  let byKey = generated.get(hosts)
  if (!byKey) generated.set(hosts, (byKey = new Map()))
  let name = byKey.get(key)
  if (name === undefined) {
    hosts.push(fn)
    name = `$host${hosts.length - 1}`
    byKey.set(key, name)
  }
  return name
}

/** Marks the generated pullback hosts: they accumulate into gradient arrays and have no derivative or inverse of their own. */
const PULLBACK = Symbol.for('tenet.ad.hostPullback')

/**
 * Throws for a `@safe` call of a generated pullback host (`hosts` of the program being transformed):
 * differentiating an adjoint again (Hessians, forward over reverse) through a host function with
 * array arguments is not supported; its statement would run unchanged and give a wrong result.
 */
export function rejectHostPullback(s: { expr: Expr; loc?: Expr['loc'] }, hosts: readonly unknown[]): void {
  const e = s.expr
  if (e.kind !== 'call' || !e.callee.startsWith('$host')) return
  const h = hosts[Number(e.callee.slice(5))]
  if (typeof h === 'function' && (h as unknown as Record<symbol, unknown>)[PULLBACK] === true) {
    throw new TenetStaticError(
      'ad/host-array',
      'a host function with array arguments is differentiated once (gradients), not twice: second-order derivatives through it are not supported',
      s.loc ?? e.loc,
    )
  }
}

const asArgs = (a: unknown[]): Array<number | Float64Array> =>
  a.map((v) => (typeof v === 'number' || v instanceof Float64Array ? v : Float64Array.from(v as ArrayLike<number>)))

/**
 * The partial derivatives of the call `callee(args)` of an interpolated host function, seeded by
 * `seed`, for `differentiate`: the coefficient expression of each scalar argument (null for array
 * arguments, whose contributions go to `collect` as `HostPullback`s for the adjoint to emit). A
 * host function with only scalar arguments gets its partials from generated helper primitives
 * (`register`); one with arrays from generated host functions appended to `hosts`. Anything but a
 * dual host function is a static error, as is an array argument where nothing collects (forward
 * mode).
 */
export function dualHostPartials(
  hosts: unknown[],
  callee: string,
  args: Expr[],
  seed: Expr,
  loc: Expr['loc'],
  register: (k: number, evaluate: (...a: number[]) => number) => string,
  clone: (e: Expr) => Expr,
  collect: HostPullback[] | undefined,
): Array<Expr | null> {
  const index = Number(callee.slice(5))
  const info = dualHostInfo(hosts[index])
  if (!info) {
    throw new TenetStaticError(
      'ad/no-derivative',
      'an interpolated host function has no derivative; write it against the dual-numbers API and wrap it with `hostFunction` (@tenet/dual), or register it as a pure primitive with `partials` (registry.registerPrimitive), to differentiate through it',
      loc,
    )
  }
  const isArray = args.map((a) => arrayElementType(a) !== undefined)
  const call = (name: string, ...xs: Expr[]): Expr => ({ kind: 'call', callee: name, args: xs }) as Expr
  if (!isArray.some(Boolean)) {
    return args.map((_, k) =>
      call(
        register(k, (...a: number[]): number => info.gradientAt(a)[k] as number),
        ...args.map(clone),
      ),
    )
  }
  if (!collect) {
    throw new TenetStaticError(
      'ad/host-array',
      `the dual host function \`${info.name}\` takes an array: its derivative is taken in reverse mode only (gradients, reverse Jacobians), not in forward mode`,
      loc,
    )
  }
  const n = args.length
  return args.map((a, k) => {
    if (!isArray[k]) {
      const name = appendHost(
        hosts,
        `${index}:partial:${k}`,
        (...v: unknown[]) => info.gradientAt(asArgs(v))[k] as number,
      )
      return call(name, ...args.map(clone))
    }
    const pullback = (...v: unknown[]): number => {
      // (seed, args…, gradient array[, direction, width]): a vector-mode gradient holds w directions per element
      const s = v[0] as number,
        g = v[n + 1] as Float64Array,
        dir = (v[n + 2] as number | undefined) ?? 0,
        w = (v[n + 3] as number | undefined) ?? 1
      if (s === 0) return 0
      const gk = info.gradientAt(asArgs(v.slice(1, n + 1)))[k] as Float64Array
      for (let i = 0; i < gk.length; i++) g[i * w + dir] += s * gk[i]!
      return 0
    }
    Object.defineProperty(pullback, PULLBACK, { value: true })
    const name = appendHost(hosts, `${index}:pullback:${k}`, pullback)
    collect.push({ callee: name, seed: clone(seed), args: args.map(clone), target: clone(a) })
    return null
  })
}

/**
 * The partial derivatives of a call of a registered pure primitive with array arguments
 * (`argKinds`, e.g. `det(A)`), seeded by `seed`, for `differentiate`: the coefficient expression
 * of each scalar argument (a call of a generated host function evaluating `partials(...)[k]`), and
 * null for each array argument, whose whole contribution `seed · ∂f/∂A` goes to `collect` as a
 * `HostPullback` (one call of `partials` per array and adjoint step). Reverse mode only: with
 * nothing collecting (forward mode) it is a static error naming the primitive.
 */
export function arrayPrimitivePartials(
  hosts: unknown[],
  spec: PurePrimitiveSpec,
  args: Expr[],
  seed: Expr,
  loc: Expr['loc'],
  clone: (e: Expr) => Expr,
  collect: HostPullback[] | undefined,
): Array<Expr | null> {
  const partials = spec.partials as unknown as ((...a: unknown[]) => ArrayLike<unknown>) | undefined
  if (!partials) {
    throw new TenetStaticError(
      'ad/no-derivative',
      `the pure primitive \`${spec.name}\` has no derivative: register it with \`partials\` (arrayPrimitive) to differentiate through it`,
      loc,
    )
  }
  if (!collect) {
    throw new TenetStaticError(
      'ad/array-primitive',
      `the primitive \`${spec.name}\` takes an array: its derivative is taken in reverse mode only (gradients, reverse Jacobians, vjp), not in forward mode (jvp, forward Jacobians, Hessians)`,
      loc,
    )
  }
  const call = (name: string, ...xs: Expr[]): Expr => ({ kind: 'call', callee: name, args: xs }) as Expr
  const n = args.length
  return args.map((a, k) => {
    if (spec.argKinds![k] !== 'array') {
      return call(
        appendHost(hosts, `prim:${spec.name}:partial:${k}`, (...v: unknown[]) => partials(...v)[k] as number),
        ...args.map(clone),
      )
    }
    const pullback = (...v: unknown[]): number => {
      // (seed, args…, gradient array[, direction, width]): a vector-mode gradient holds w directions per element
      const s = v[0] as number,
        g = v[n + 1] as Float64Array,
        dir = (v[n + 2] as number | undefined) ?? 0,
        w = (v[n + 3] as number | undefined) ?? 1
      if (s === 0) return 0
      const p = partials(...v.slice(1, n + 1))[k] as ArrayLike<number>
      const len = (v[k + 1] as ArrayLike<number>).length
      if (!p || p.length !== len) {
        throw new TenetError(
          'ad/partials',
          `\`partials\` of \`${spec.name}\` must return, for array argument ${k + 1}, an array of ${len} partial derivatives (one per element)`,
        )
      }
      for (let i = 0; i < len; i++) g[i * w + dir] += s * p[i]!
      return 0
    }
    Object.defineProperty(pullback, PULLBACK, { value: true })
    const name = appendHost(hosts, `prim:${spec.name}:pullback:${k}`, pullback)
    collect.push({ callee: name, seed: clone(seed), args: args.map(clone), target: clone(a) })
    return null
  })
}
