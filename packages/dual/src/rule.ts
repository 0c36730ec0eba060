/**
 * Primitives given by their own reverse rule: a black box (a Tenet function, a library call, a
 * hand-derived kernel) that is one node in the arena, whose reverse step is its pullback.
 */
import { DualError } from './errors.js'
import type { DualRule, Pullback } from './tape.js'

/** What `defineRule` takes (see `DualRule`). */
export interface RuleSpec {
  name: string
  inputs: number
  outputs: number
  /**
   * Writes the outputs for the inputs `x` into `y`. The buffers are the rule's own and are reused
   * by every call: a returned pullback must copy what it needs from them.
   */
  forward(x: Float64Array, y: Float64Array): Pullback | void
  /** The reverse rule, when `forward` returns no pullback: adds the inputs' cotangents into `xbar`. */
  pullback?(x: Float64Array, y: Float64Array, ybar: Float64Array, xbar: Float64Array): void
}

/**
 * A primitive with a custom reverse rule, for `d.call(rule, xs)`: the forward map gives the
 * outputs, and either `forward` returns a pullback for that call or the static `pullback` recomputes
 * what it needs from the inputs and outputs (which the arena keeps). With a static `pullback` a
 * call allocates nothing.
 *
 * ```ts
 * const norm = defineRule({
 *   name: 'norm', inputs: 2, outputs: 1,
 *   forward: (x, y) => { y[0] = Math.hypot(x[0], x[1]) },
 *   pullback: (x, y, ybar, xbar) => { xbar[0] += ybar[0] * x[0] / y[0]; xbar[1] += ybar[0] * x[1] / y[0] },
 * })
 * ```
 */
export function defineRule(spec: RuleSpec): DualRule {
  if (!Number.isInteger(spec.inputs) || spec.inputs < 0)
    throw new DualError('dual/rule', `rule \`${spec.name}\`: inputs must be a non-negative integer, got ${spec.inputs}`)
  if (!Number.isInteger(spec.outputs) || spec.outputs < 1)
    throw new DualError('dual/rule', `rule \`${spec.name}\`: outputs must be a positive integer, got ${spec.outputs}`)
  if (typeof spec.forward !== 'function')
    throw new DualError('dual/rule', `rule \`${spec.name}\` has no forward function`)
  return {
    name: spec.name,
    inputs: spec.inputs,
    outputs: spec.outputs,
    forward: spec.forward,
    ...(spec.pullback ? { pullback: spec.pullback } : {}),
  }
}
