/**
 * Checking one response of the tool against the recorded reference response, as GradBench's
 * evals do: `start` and `analysis` by id, `define` by success, `evaluate` by success, output
 * (GradBench's comparison; hello by numpy.isclose against x² or 2x) and one integer `evaluate`
 * timing per required run.
 */
import { compareOutputs } from './compare.js'

/** ba's integer fields (JSON integers in the reference output). */
const EXACT = new Set(['rows', 'cols', 'repeated'])

/** A description of what is wrong with `response`, or null when it passes. */
export function checkResponse(
  evalName: string,
  message: Record<string, unknown>,
  expected: Record<string, unknown>,
  response: Record<string, unknown>,
): string | null {
  if (response.id !== message.id) return `response id ${String(response.id)} for message id ${String(message.id)}`
  switch (message.kind) {
    case 'start':
    case 'analysis':
      return null
    case 'define':
      return response.success === true ? null : `define failed: ${String(response.error)}`
    case 'evaluate': {
      if (response.success !== true) return `evaluate failed: ${String(response.error)}`
      const input = message.input as Record<string, unknown> | number
      const minRuns = typeof input === 'object' && typeof input.min_runs === 'number' ? input.min_runs : 1
      const timings = Array.isArray(response.timings) ? (response.timings as Array<Record<string, unknown>>) : []
      const runs = timings.filter((t) => t.name === 'evaluate' && Number.isInteger(t.nanoseconds))
      if (runs.length < minRuns) return `${runs.length} evaluate timings, at least ${minRuns} required`
      if (evalName === 'hello') {
        const x = input as number
        const want = message.function === 'square' ? x * x : 2 * x
        const out = response.output
        return typeof out === 'number' && Math.abs(out - want) <= 1e-8 + 1e-5 * Math.abs(want)
          ? null
          : `hello ${String(message.function)}(${x}) = ${String(out)}, want ${want}`
      }
      const m = compareOutputs(response.output, expected.output, 1e-4, EXACT)
      return m ? `${m.path}: ${m.reason}` : null
    }
    default:
      return `unknown message kind ${String(message.kind)}`
  }
}
