/**
 * Standard bijections whose `apply` needs sine and cosine (ROT, IROT, sincos, sincos_inverse),
 * computed in the module from the `sin` and `cos` routines with the arithmetic of the cpu
 * backend's expressions (so the same doubles), instead of a call out to `apply` (which also
 * allocates its result array). HADAMARD, which needs neither, comes along (same reason).
 */
import { standardPrimitives } from '@tenet/ir'
import { add, f, mul, sub, type Ex } from './builder.js'
import { inModule, type MathChoice } from './index.js'

/** How one bijection's outputs (its inout arguments, in order) are computed. */
export interface MathBijection {
  /** Whether the outputs need sin and cos of the third argument. */
  readonly angle: boolean
  /** The new values of the inout arguments from the arguments (as f64) and sin, cos of the angle. */
  outputs(args: Ex[], sin: Ex, cos: Ex): Ex[]
}

const LOWERED: Record<string, MathBijection> = {
  ROT: { angle: true, outputs: ([a, b], s, c) => [sub(mul(c, a!), mul(s, b!)), add(mul(s, a!), mul(c, b!))] },
  // (−sin θ)·a + cos θ·b is cos θ·b − sin θ·a exactly
  IROT: { angle: true, outputs: ([a, b], s, c) => [add(mul(c, a!), mul(s, b!)), sub(mul(c, b!), mul(s, a!))] },
  sincos: { angle: true, outputs: ([s0, c0], s, c) => [add(s0!, s), add(c0!, c)] },
  sincos_inverse: { angle: true, outputs: ([s0, c0], s, c) => [sub(s0!, s), sub(c0!, c)] },
  HADAMARD: {
    angle: false,
    outputs: ([a, b]) => [mul(add(a!, b!), f(Math.SQRT1_2)), mul(sub(a!, b!), f(Math.SQRT1_2))],
  },
}

const STANDARD = new Map(standardPrimitives.map((p) => [p.name, p]))

/**
 * The in-module lowering of the bijection `spec`, or undefined: only for the standard bijection
 * of its name, and (for those with an angle) where `choice` computes sin and cos in the module.
 */
export function mathBijection(spec: { name: string }, choice: MathChoice): MathBijection | undefined {
  const lowered = Object.hasOwn(LOWERED, spec.name) ? LOWERED[spec.name] : undefined
  if (!lowered || STANDARD.get(spec.name) !== spec) return undefined
  if (lowered.angle && !(inModule(STANDARD.get('sin'), 'sin', choice) && inModule(STANDARD.get('cos'), 'cos', choice)))
    return undefined
  if (choice === 'import') return undefined
  return lowered
}
