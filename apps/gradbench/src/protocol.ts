/**
 * GradBench's protocol: one JSON message per line from the eval, one JSON response per line
 * back, in order and with the same `id`. `start` and `analysis` are acknowledged, `define`
 * succeeds only for an implemented module, `evaluate` prepares the input (not timed), runs the
 * function until both `min_runs` and `min_seconds` are met (one `evaluate` timing per run) and
 * returns the output of the last run.
 */
import type { EvalModule } from './evals/types.js'

/** A response line's value. */
export type Response = Record<string, unknown>

/** A timing entry of an `evaluate` response. */
export interface Timing {
  name: string
  nanoseconds: number
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Options of an `evaluate`: at least `minRuns` runs and at least `minSeconds` of run time. */
export interface Runs {
  minRuns: number
  minSeconds: number
}

/**
 * `min_runs` / `min_seconds` from an input object (hello's bare number has none: one run). Older
 * GradBench evals send `runs` instead of `min_runs`; it is read the same way.
 */
export function runsOf(input: unknown): Runs {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return { minRuns: 1, minSeconds: 0 }
  const o = input as Record<string, unknown>
  const runs = o.min_runs ?? o.runs
  const minRuns = typeof runs === 'number' && runs >= 1 ? Math.floor(runs) : 1
  const minSeconds = typeof o.min_seconds === 'number' && o.min_seconds > 0 ? o.min_seconds : 0
  return { minRuns, minSeconds }
}

/** The tool's state across messages: the modules it implements and those defined so far. */
export class Tool {
  private readonly defined = new Set<string>()

  constructor(
    private readonly modules: Readonly<Record<string, EvalModule>>,
    private readonly name = 'tenet',
  ) {}

  /** The response to one parsed message. Never throws: failures become `success: false`. */
  handle(msg: unknown): Response {
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg))
      return { success: false, error: 'a message must be a JSON object' }
    const m = msg as Record<string, unknown>
    const id = m.id
    switch (m.kind) {
      case 'start':
        return { id, tool: this.name }
      case 'define': {
        const name = String(m.module)
        if (!Object.hasOwn(this.modules, name)) {
          return {
            id,
            success: false,
            error: `module \`${name}\` is not implemented (available: ${Object.keys(this.modules).join(', ')})`,
          }
        }
        this.defined.add(name)
        return { id, success: true }
      }
      case 'evaluate':
        return { id, ...this.evaluate(m) }
      case 'analysis':
        return { id }
      default:
        return { id, success: false, error: `unknown message kind \`${String(m.kind)}\`` }
    }
  }

  private evaluate(m: Record<string, unknown>): Response {
    const name = String(m.module)
    const mod = Object.hasOwn(this.modules, name) ? this.modules[name] : undefined
    if (!mod) return { success: false, error: `module \`${name}\` is not implemented` }
    const fname = String(m.function)
    const f = Object.hasOwn(mod, fname) ? mod[fname] : undefined
    if (!f)
      return {
        success: false,
        error: `module \`${name}\` has no function \`${fname}\` (available: ${Object.keys(mod).join(', ')})`,
      }
    try {
      const t0 = process.hrtime.bigint()
      const prepared = f(m.input)
      const timings: Timing[] = [{ name: 'prepare', nanoseconds: Number(process.hrtime.bigint() - t0) }]
      const { minRuns, minSeconds } = runsOf(m.input)
      const minNs = minSeconds * 1e9
      let total = 0
      for (let runs = 0; runs < minRuns || total < minNs; runs++) {
        const s = process.hrtime.bigint()
        prepared.run()
        const ns = Number(process.hrtime.bigint() - s)
        total += ns
        timings.push({ name: 'evaluate', nanoseconds: ns })
      }
      return { success: true, output: prepared.output(), timings }
    } catch (e) {
      return { success: false, error: message(e) }
    }
  }
}
