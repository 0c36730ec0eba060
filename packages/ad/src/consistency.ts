/**
 * Learning by consistency (seed 002 §IV, Algorithm 2): training without gradients, by the
 * reversibility of the program alone. A reversible f maps (x, g_x) to (y, g_y), where x is the
 * input, y the output and g_x, g_y the rest of the memory on either side (its "garbage"; the
 * parameters to learn live in g_x). Run f forwards from the input x*; overwrite the output with
 * the target y*; run f backwards; put the input x* back; repeat. A fixed point of this map is a
 * g_x with f(x*, g_x) = (y*, g_y): parameters that produce the target.
 *
 * When it can work (Theorem 1, in our words): the inverse run can only move g_x if the output
 * garbage g_y does not already pin it down. If g_y determines y (no uncertainty about y left
 * once g_y is known), it also determines g_x — f is a bijection, so (x, g_x) is a function of
 * (y, g_y) = (a function of g_y) — and then setting y to the target changes nothing the inverse
 * can propagate into g_x: training stands still. A program trains only when it uncomputes what
 * would otherwise leave copies of the parameters (or of the input) in its output garbage.
 */
import { TenetError } from '@tenet/ir'
import type { TenetFunction } from '@tenet/reversible'
import { infoOf } from './compile.js'
import { argsOf, optionsOf, positiveNumber } from './options.js'

/** Values to put at argument positions: index → number, boolean or typed array. */
export type Assignment = Record<number, number | boolean | ArrayLike<number>>

/** Options of `learnByConsistency`. */
export interface ConsistencyOptions {
  /** The training input x*: written into these arguments before every forward run. */
  input: Assignment
  /** The target y*: written into these arguments before every inverse run (the output side). */
  target: Assignment
  /** At most this many forward/inverse rounds (default 200). */
  maxSteps?: number
  /** Stop once every output is within this distance of its target after a forward run (default 0: run every step). */
  tolerance?: number
}

/** What `learnByConsistency` returns. */
export interface ConsistencyResult {
  /** The arguments after the last inverse run with the input put back: the trained garbage g_x (parameters) beside x*. */
  parameters: unknown[]
  /** The arguments after the last forward run: the output y and the output garbage g_y. */
  outputs: unknown[]
  /** Per forward run (the first is before any training): the largest distance of an output from its target. */
  distance: number[]
  /** The number of inverse runs done. */
  steps: number
  /** Whether the last forward run met the tolerance. */
  converged: boolean
}

const argError = (msg: string): never => {
  throw new TenetError('ad/argument', msg)
}

function copy(v: unknown): unknown {
  return ArrayBuffer.isView(v) ? (v as Float64Array).slice() : Array.isArray(v) ? v.slice() : v
}

function assign(state: unknown[], what: Assignment, name: string, which: string): void {
  for (const [key, value] of Object.entries(what)) {
    const i = Number(key)
    if (!Number.isInteger(i) || i < 0 || i >= state.length)
      argError(`\`${which}\` names argument ${key}, but \`${name}\` takes ${state.length}`)
    const cur = state[i]
    if (ArrayBuffer.isView(cur)) {
      const src = value as ArrayLike<number>
      if (typeof value !== 'object' || src.length !== (cur as Float64Array).length)
        argError(`\`${which}[${i}]\` must be an array of ${(cur as Float64Array).length} numbers`)
      ;(cur as Float64Array).set(src)
    } else if (typeof cur !== typeof value) argError(`\`${which}[${i}]\` must be a ${typeof cur}`)
    else state[i] = value
  }
}

function distance(state: unknown[], target: Assignment): number {
  let worst = 0
  for (const [key, want] of Object.entries(target)) {
    const got = state[Number(key)]
    if (typeof want === 'boolean') worst = Math.max(worst, got === want ? 0 : 1)
    else if (typeof want === 'number') worst = Math.max(worst, Math.abs((got as number) - want))
    else
      for (let j = 0; j < want.length; j++) worst = Math.max(worst, Math.abs((got as ArrayLike<number>)[j]! - want[j]!))
    if (Number.isNaN(worst)) return NaN
  }
  return worst
}

/**
 * Algorithm 2 of seed 002 on a Tenet function: starting from `args` (the initial garbage, i.e.
 * the initial parameters, in the positions that are neither input nor output), alternate a
 * forward run from the input with an inverse run from the target until the outputs are within
 * `tolerance` of the target or `maxSteps` inverse runs are done. No gradient is taken: it works on
 * integer, boolean and fixed-point programs as on f64 ones, but only where the program does not
 * keep a copy of what determines its output in the output garbage (see the module comment).
 * ```ts
 * // f2(out, x, y) of the paper: learn y so that out = e^(x+y) − e^x = 1 at x = 0.3
 * learnByConsistency(m.f2, [0, 0.3, 1.6], { input: { 0: 0, 1: 0.3 }, target: { 0: 1 }, tolerance: 0 })
 * ```
 */
export function learnByConsistency(f: TenetFunction, args: unknown[], options: ConsistencyOptions): ConsistencyResult {
  optionsOf('learnByConsistency', options, false)
  argsOf('learnByConsistency', args)
  for (const key of ['input', 'target'] as const) {
    const v = options[key]
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      argError(`\`learnByConsistency\` needs \`${key}\`, an object from argument index to value (e.g. \`{ 0: 1 }\`)`)
  }
  positiveNumber('learnByConsistency', 'tolerance', options.tolerance, true)
  const info = infoOf(f)
  const n = f.ir.params.length
  if (args.length !== n) argError(`\`${info.name}\` takes ${n} arguments, got ${args.length}`)
  const maxSteps = options.maxSteps ?? 200
  const tolerance = options.tolerance ?? 0
  if (!Number.isInteger(maxSteps) || maxSteps < 0)
    throw new RangeError(`maxSteps must be a non-negative integer, got ${maxSteps}`)
  let state = args.map(copy)
  assign(state, options.input, info.name, 'input')
  const forward = (s: unknown[]) => f(...s).map(copy)
  state = forward(state)
  const history = [distance(state, options.target)]
  let parameters = args.map(copy)
  let steps = 0
  const met = () => history[history.length - 1]! <= tolerance
  while (steps < maxSteps && !met()) {
    assign(state, options.target, info.name, 'target')
    parameters = f.inverse(...state).map(copy)
    assign(parameters, options.input, info.name, 'input')
    steps++
    state = forward(parameters.map(copy))
    history.push(distance(state, options.target))
  }
  return { parameters, outputs: state, distance: history, steps, converged: met() }
}
