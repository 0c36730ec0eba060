/**
 * The backend capabilities the conformance suite reads (`BackendSpec.capabilities` of
 * `@tenet/ir`), and the reasons it gives for what it leaves out.
 */
import type { BackendCapabilities, BackendSpec } from '@tenet/ir'

/** One capability a backend declares. */
export type Capability = keyof BackendCapabilities

/** Every capability the suite reads; a backend should declare each (true or false). */
export const SUITE_CAPABILITIES: readonly Capability[] = [
  'synchronous',
  'f64',
  'f32',
  'recursion',
  'exceptions',
  'stacks',
  'checks',
  'gradient',
  'hessian',
]

/** The capabilities the suite reads that `backend` leaves undeclared (not a boolean). */
export function undeclaredCapabilities(backend: BackendSpec): Capability[] {
  const caps = backend.capabilities as unknown as Record<string, unknown>
  return SUITE_CAPABILITIES.filter((c) => typeof caps[c] !== 'boolean')
}

/**
 * Why a part of the suite that needs `needs` does not apply to `backend`, or undefined when it
 * does: "not applicable: capability `stacks` is false" (an undeclared capability counts as
 * false, and says so).
 */
export function notApplicable(backend: BackendSpec, needs: readonly Capability[]): string | undefined {
  const caps = backend.capabilities as unknown as Record<string, unknown>
  const missing = needs.filter((c) => caps[c] !== true)
  if (!missing.length) return undefined
  return `not applicable: ${missing
    .map((c) => `capability \`${c}\` is ${caps[c] === false ? 'false' : 'not declared'}`)
    .join(', ')}`
}
