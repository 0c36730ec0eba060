/**
 * The built-in worker module for the common case: the gradient of one Tenet function on each
 * shard. `init` = `{ source, entry, loss, backend?, checks? }`; a task is the function's
 * argument list for one shard; its output is the loss followed by the gradient of every float
 * argument, flattened in argument order (scalars one number, arrays their elements) — see
 * `gradientLayout`.
 */
import { createRegistry, grad, rev, type GradientFunction } from 'tenet'
import type { TaskFunction } from './pool.js'

/** What `tenetGradientPool` sends each worker. */
export interface TenetGradientInit {
  source: string
  entry: string
  loss: number
  backend?: 'cpu' | 'wasm' | 'interpreter'
  checks?: boolean
}

/** Compiles the function and returns the task: one gradient per shard, flattened into `out`. */
export async function setup(init: TenetGradientInit): Promise<TaskFunction> {
  const registry = createRegistry()
  if (init.backend === 'wasm') registry.registerBackend((await import('@tenet/backend-wasm' as string)).wasmBackend)
  const m = rev.with({ registry, backend: init.backend ?? 'cpu', checks: init.checks ?? true })([
    init.source,
  ] as unknown as TemplateStringsArray)
  const f = m[init.entry]
  if (!f) throw new Error(`no function \`${init.entry}\` in the source (it has: ${Object.keys(m).join(', ')})`)
  const g: GradientFunction = grad(f, { loss: init.loss })
  // which arguments have a gradient (a number or an array; null for integers, booleans): read
  // from the first call's result, then every call uses the allocation-free `run`
  let kinds: Array<'scalar' | 'array' | null> | undefined
  return (task, out) => {
    const args = task as unknown[]
    if (!kinds) kinds = g(...args).map((v) => (v === null ? null : typeof v === 'number' ? 'scalar' : 'array'))
    else g.run(...args)
    out[0] = g.lastLoss
    let o = 1
    for (let i = 0; i < args.length; i++) {
      if (kinds[i] === 'array') {
        const b = g.buffers[i]!
        out.set(b, o)
        o += b.length
      } else if (kinds[i] === 'scalar') out[o++] = g.scalars[i]!
    }
  }
}
