/**
 * Number-system plugins for Tenet: complex (lowered to pairs of f64), fixed-point, logarithmic
 * (`ulog`) and tropical (max-plus) numbers. Each is a `NumberSystemSpec`, registered with
 * `registry.registerNumberSystem(...)`; `registerNumbers(registry)` registers them all (the
 * umbrella `tenet`'s `createRegistry()` does it for you).
 */
import type { NumberSystemSpec, Registry } from '@tenet/ir'
import { complex } from './complex.js'
import { fixed } from './fixed.js'
import { tropical } from './tropical.js'
import { ulog } from './ulog.js'

export { complex, complexNumbers } from './complex.js'
export { fixed, fixedPoint, fixedRound, fixedRounder, type FixedPointFormat } from './fixed.js'
export { ulog, logarithmic, logarithmicOps, type LogarithmicFormat, type LogarithmicOps } from './ulog.js'
export { tropical, tropicalNumbers, type TropicalFormat } from './tropical.js'

/** The number systems of this package: complex, fixed, ulog, tropical. */
export const numberSystems: NumberSystemSpec[] = [complex, fixed, ulog, tropical]

/** Registers every number system of this package into `registry` (returns the registry). */
export function registerNumbers(registry: Registry): Registry {
  for (const n of numberSystems) registry.registerNumberSystem(n)
  return registry
}
export { spinGlassSource, spinGlassBuffers, bruteForceGroundState } from './examples/spin-glass.js'
