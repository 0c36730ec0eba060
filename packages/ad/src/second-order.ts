/**
 * The second-order adjoint (seed 002 §III.B) as reverse-over-forward: the adjoint of f's tangent
 * program. Eq. 3 pulls the Hessian back through each instruction,
 * H_{i−1} = Jᵀ H_i J + (∂L/∂y_i)·∇²y_i; contracted with a direction v it reads
 * (H v)_{i−1} = Jᵀ (H v)_i + ḡ_i · ∇²y_i · ẏ_{i−1}, a reverse sweep that carries, beside the
 * gradient ḡ, the Hessian-vector product H v, with the tangents ẏ = J v of the forward sweep.
 * That is exactly what reverse mode computes on the tangent program of f: there the adjoint of a
 * value x is ∂L̇/∂x = (H v)_x and the adjoint of its tangent ẋ is ∂L̇/∂ẋ = (∇L)_x, so one reverse
 * sweep of the tangent program from the seed L̇ gives both. The rules are the existing ones (the
 * adjoint transform applied to tangent IR): no new per-primitive rules.
 *
 * `hessian` (forward-over-reverse, the tangent of the adjoint) stays the default: on the graph
 * embedding it is several times faster (see the package README), because it carries w Hessian
 * columns per sweep, while this sweep carries one H v (a vector-mode adjoint of a width-w tangent
 * would carry w² adjoint pairs of which only w are nonzero).
 */
import type { TenetFunction } from '@tenet/reversible'
import { argError, type Gradient, type LossOptions } from './arguments.js'
import { grad, type GradientFunction } from './grad.js'
import { compileTangent, infoOf } from './compile.js'
import type { Direction } from './jvp.js'
import { hasGradient } from './transform.js'
import { argsOf, indexList, optionsOf } from './options.js'

/** What one second-order adjoint sweep returns. */
export interface SecondOrderAdjointResult {
  /** H·v, shaped like `gradient`'s result (a number per float scalar, an array per float array, null elsewhere). */
  hvp: Gradient
  /** The gradient ∇L, from the same sweep. */
  gradient: Gradient
}

/** The compiled second-order adjoint: the gradient (reverse mode) of the loss's tangent in f's tangent program. */
interface SecondOrderAdjoint {
  /** The gradient function of the tangent program T of f, whose loss is the tangent of f's loss. */
  g: GradientFunction
  /** Per parameter of f: the index of its tangent among T's parameters (−1: none). */
  tangentAt: number[]
  n: number
  /** f's tangent program and the index of its loss there (what \`g\` differentiates). */
  tangent: TenetFunction
  loss: number
  /** Whether a call uses \`g\` now (see \`withGradient\`). */
  busy: boolean
}

/**
 * Runs \`use\` with \`so.g\`, or, while a call uses it (a host function of f that calls
 * \`secondOrderAdjoint\` or this Hessian of f again) or a call of the module is under way, with a
 * gradient function of its own, given back after: \`so.g\` would refuse the inner call (\`ad/reentrant\`), its buffers being the outer
 * call's.
 */
function withGradient<T>(so: SecondOrderAdjoint, use: (g: GradientFunction) => T): T {
  // (also while a call of the module is under way: \`so.g\`'s resident arrays could not change
  // length then; a gradient function made during the call passes host arrays)
  if (so.busy || so.tangent.core.resident?.busy?.() === true) {
    const g = grad(so.tangent, { loss: so.loss })
    try {
      return use(g)
    } finally {
      g.release()
    }
  }
  so.busy = true
  try {
    return use(so.g)
  } finally {
    so.busy = false
  }
}

const cache = new WeakMap<TenetFunction, Map<number, SecondOrderAdjoint>>()

function compileSecondOrderAdjoint(f: TenetFunction, loss: number): SecondOrderAdjoint {
  let byLoss = cache.get(f)
  const hit = byLoss?.get(loss)
  if (hit) return hit
  const info = infoOf(f)
  const params = f.ir.params
  const lp = params[loss]
  if (!lp || lp.type.kind !== 'scalar' || !hasGradient(lp.type, info.registry))
    argError(`the loss (argument ${loss}) of \`${info.name}\` must be a float scalar`)
  const ct = compileTangent(f, 1)
  const tangentAt = ct.slots.map((s) => s?.index ?? -1)
  const out: SecondOrderAdjoint = {
    g: grad(ct.tangent, { loss: tangentAt[loss]! }),
    tangentAt,
    n: params.length,
    tangent: ct.tangent,
    loss: tangentAt[loss]!,
    busy: false,
  }
  if (!byLoss) cache.set(f, (byLoss = new Map()))
  byLoss.set(loss, out)
  return out
}

/** The arguments of f's tangent program: f's arguments, then the tangents (v where given, else zeros). */
function tangentArgs(
  so: SecondOrderAdjoint,
  args: unknown[],
  v: (i: number) => number | ArrayLike<number> | null | undefined,
): unknown[] {
  const argv = new Array<unknown>(so.tangentAt.reduce((m, t) => Math.max(m, t + 1), so.n))
  for (let i = 0; i < so.n; i++) {
    const a = args[i]
    argv[i] = a
    const t = so.tangentAt[i]!
    if (t < 0) continue
    const d = v(i)
    if (typeof a === 'number') argv[t] = typeof d === 'number' ? d : 0
    else if (ArrayBuffer.isView(a)) {
      const buf = new ((a as Float64Array).constructor as Float64ArrayConstructor)((a as Float64Array).length)
      if (d !== null && d !== undefined && typeof d !== 'number') buf.set(d as ArrayLike<number>)
      argv[t] = buf
    } else argv[t] = new Array<number>((a as unknown[]).length).fill(0)
  }
  return argv
}

/**
 * One second-order adjoint sweep: H·v and ∇L together, by reverse mode on f's tangent program
 * along v (reverse-over-forward). Agrees with `hvp` (forward-over-reverse) up to rounding.
 * ```ts
 * secondOrderAdjoint(m.f, [0, 3], { loss: 0, v: [0, 1] })  // for loss += x³: { hvp: [·, 18], gradient: [1, 27] }
 * ```
 */
export function secondOrderAdjoint(
  f: TenetFunction,
  args: unknown[],
  options: LossOptions & { v: Direction },
): SecondOrderAdjointResult {
  optionsOf('secondOrderAdjoint', options, true)
  argsOf('secondOrderAdjoint', args)
  if (!Array.isArray(options.v))
    argError(
      `\`secondOrderAdjoint\` needs \`v\`, the direction: an array shaped like the arguments, got ${typeof options.v}`,
    )
  const so = compileSecondOrderAdjoint(f, options.loss)
  if (args.length !== so.n) argError(`\`${infoOf(f).name}\` takes ${so.n} arguments, got ${args.length}`)
  const g = withGradient(so, (gf) => gf(...tangentArgs(so, args, (i) => options.v[i])))
  const copy = (x: unknown) =>
    x === null || x === undefined ? null : typeof x === 'number' ? x : (x as Float64Array).slice()
  const hvp: Gradient = [],
    gradient: Gradient = []
  for (let i = 0; i < so.n; i++) {
    const t = so.tangentAt[i]!
    hvp.push(t < 0 ? null : (copy(g[i]) as Gradient[number]))
    gradient.push(t < 0 ? null : (copy(g[t]) as Gradient[number]))
  }
  return { hvp, gradient }
}

/**
 * The dense Hessian over the scalars of `wrt` (row-major, symmetrised like `hessian`'s) by the
 * second-order adjoint: one reverse-over-forward sweep per column.
 */
export function hessianReverseOverForward(
  f: TenetFunction,
  args: unknown[],
  options: LossOptions & { wrt?: number[]; out?: Float64Array },
): Float64Array {
  optionsOf('hessian', options, true)
  argsOf('hessian', args)
  indexList('hessian', 'wrt', options.wrt)
  const so = compileSecondOrderAdjoint(f, options.loss)
  const info = infoOf(f)
  const wrt =
    options.wrt ??
    so.tangentAt.flatMap((t, i) => (t >= 0 && i !== options.loss && f.ir.params[i]!.type.kind !== 'stack' ? [i] : []))
  for (const i of wrt)
    if (so.tangentAt[i]! < 0 || f.ir.params[i]!.type.kind === 'stack')
      argError(`argument ${i} of \`${info.name}\` is not a float scalar or float array, so it has no Hessian`)
  const pos: Array<[number, number]> = []
  for (const p of wrt) {
    const a = args[p]
    if (typeof a === 'number') pos.push([p, 0])
    else for (let e = 0; e < (a as ArrayLike<number>).length; e++) pos.push([p, e])
  }
  const n = pos.length
  if (options.out !== undefined && !(options.out instanceof Float64Array && options.out.length === n * n))
    argError(`\`out\` must be a Float64Array of ${n * n} elements (${n}×${n})`)
  const H = options.out ?? new Float64Array(n * n)
  // one argument list, its tangents rewritten per column (the gradient function copies its inputs)
  const argv = tangentArgs(so, args, () => null)
  withGradient(so, (gf) => {
    for (let c = 0; c < n; c++) {
      const [p, e] = pos[c]!
      const t = so.tangentAt[p]!
      if (c > 0) {
        const [pp, ee] = pos[c - 1]!
        const tp = so.tangentAt[pp]!
        if (typeof argv[tp] === 'number') argv[tp] = 0
        else (argv[tp] as Float64Array)[ee] = 0
      }
      if (typeof argv[t] === 'number') argv[t] = 1
      else (argv[t] as Float64Array)[e] = 1
      const g = gf(...argv) as Gradient
      let row = 0
      for (const q of wrt) {
        const gq = g[q]
        if (typeof gq === 'number') H[row++ * n + c] = gq
        else {
          const b = gq as Float64Array
          for (let i = 0; i < b.length; i++) H[row++ * n + c] = b[i]!
        }
      }
    }
  })
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const s = (H[i * n + j]! + H[j * n + i]!) / 2
      H[i * n + j] = s
      H[j * n + i] = s
    }
  }
  return H
}
