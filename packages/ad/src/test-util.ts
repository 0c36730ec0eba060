/** Test helpers: a registry with both backends and a `rev`-like tag (the umbrella is not a dependency). */
import { createRegistry, parse, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { randomRealExpressions } from '@tenet/testing'
import { expect } from 'vitest'

export function testRegistry(): Registry {
  return createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
}

export interface TagOptions {
  backend?: string
  checks?: boolean
  registry?: Registry
}

export function tag(options: TagOptions = {}) {
  const registry = options.registry ?? testRegistry()
  return (strings: TemplateStringsArray | string, ...values: unknown[]): TenetModule => {
    let text: string
    if (typeof strings === 'string') text = strings
    else {
      text = strings[0]!
      for (let i = 0; i < values.length; i++) text += '${' + i + '}' + strings[i + 1]!
    }
    return compileModule(parse({ text, name: 'test' }, values), {
      registry,
      ...(options.backend ? { backend: options.backend } : {}),
      ...(options.checks !== undefined ? { checks: options.checks } : {}),
    })
  }
}

export const rev = tag()

/** Every element of `a` within `tol` of `b`, relative to 1 + |b| (names the worst element). */
export function expectClose(a: ArrayLike<number>, b: ArrayLike<number>, tol: number, what = '') {
  expect(a.length).toBe(b.length)
  let worst = 0,
    where = -1
  for (let i = 0; i < a.length; i++) {
    const err = Math.abs(a[i]! - b[i]!) / (1 + Math.abs(b[i]!))
    if (!(err <= worst)) {
      worst = err
      where = i
    }
  }
  expect(worst, `${what} worst at ${where}: ${a[where]} vs ${b[where]}`).toBeLessThanOrEqual(tol)
}

/**
 * A seeded source of random smooth f64 expressions for generated test programs: `expr(vars,
 * depth)` over the names in `vars`, with `rnd` (uniform in [0, 1)) and `pick` from the same
 * stream. The expressions come from the one generator of `@tenet/testing`.
 */
export const randomExpressions = (seed: number) => randomRealExpressions(seed)
