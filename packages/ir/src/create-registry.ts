import { Registry } from './registry.js'
import { standardNumberSystems, standardPrimitives } from './stdlib/index.js'

/**
 * A new registry holding the standard instruction set and the number systems f64, f32, i32
 * and bool, registered through the public `register*` calls. Backends are added by the packages
 * that provide them (the umbrella `tenet` does it for you).
 */
export function createRegistry(): Registry {
  const r = new Registry()
  for (const n of standardNumberSystems) r.registerNumberSystem(n)
  for (const p of standardPrimitives) r.registerPrimitive(p)
  return r
}
