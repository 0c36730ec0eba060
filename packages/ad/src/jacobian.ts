/**
 * `jacobian`: forward columns (tangent sweeps) or reverse rows (adjoint sweeps), whichever is
 * cheaper by `jacobianCost`.
 */
import type { TenetFunction } from '@tenet/reversible'
import { argError } from './arguments.js'
import { Sweep } from './sweep.js'
import { compileAdjoint, compileTangent, infoOf } from './compile.js'
import { hasGradient } from './transform.js'
import { DEFAULT_WIDTH, loadArgs, TangentRun } from './tangent-run.js'
import { argsOf, indexList, optionsOf, positiveInteger } from './options.js'

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
export function positions(values: unknown[], params: number[]): Array<[number, number]> {
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
  for (const i of [...inputs, ...outputs])
    if (!params[i] || !isFloat(i))
      argError(`argument ${i} of \`${info.name}\` is not a float scalar or float array, so it has no derivative`)
  const values = loadArgs(f, args)
  const cols = positions(values, inputs),
    rows = positions(values, outputs)
  const mode = options.mode ?? 'auto'
  if (mode !== 'auto' && mode !== 'forward' && mode !== 'reverse')
    argError(`\`mode\` must be 'reverse', 'forward' or 'auto', got ${String(mode)}`)
  const forward =
    mode === 'forward' || (mode === 'auto' && jacobianCost(cols.length, rows.length, options.width) === 'forward')
  return forward
    ? jacobianForward(f, values, cols, rows, options.width)
    : jacobianReverse(f, args, inputs, rows, cols.length, options.width)
}

/**
 * Which Jacobian mode is cheaper by counts: forward takes ⌈nc/w⌉ tangent sweeps of cost ≈ 1 + w
 * (values plus w tangents), reverse ⌈nr/w⌉ sweeps of cost ≈ 2 + w (a forward run, the adjoint's
 * uncomputation and w gradient directions), w the width capped by the column or row count.
 */
export function jacobianCost(nc: number, nr: number, width = DEFAULT_WIDTH): 'forward' | 'reverse' {
  const wf = Math.max(1, Math.min(width, nc)),
    wr = Math.max(1, Math.min(width, nr))
  const f = Math.ceil(nc / wf) * (1 + wf),
    r = Math.ceil(nr / wr) * (2 + wr)
  return f <= r ? 'forward' : 'reverse'
}

function jacobianForward(
  f: TenetFunction,
  values: unknown[],
  cols: Array<[number, number]>,
  rows: Array<[number, number]>,
  width?: number,
): Float64Array {
  const nc = cols.length,
    nr = rows.length
  const J = new Float64Array(nr * nc)
  if (nc === 0) return J
  const w = Math.max(1, Math.min(width ?? DEFAULT_WIDTH, nc))
  const run = new TangentRun(compileTangent(f, w))
  for (let c0 = 0; c0 < nc; c0 += w) {
    run.load(values)
    for (let k = 0; k < w && c0 + k < nc; k++) {
      const [p, e] = cols[c0 + k]!
      run.seed(p, e, k, 1)
    }
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
function jacobianReverse(
  f: TenetFunction,
  args: unknown[],
  inputs: number[],
  rows: Array<[number, number]>,
  nc: number,
  width?: number,
): Float64Array {
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
