/** Test helpers: a registry with both backends and a `rev`-like tag (the umbrella is not a dependency). */
import { createRegistry, parse, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
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
 * depth)` over the names in `vars`, with `rnd` (uniform in [0, 1)) and `pick` from the same stream.
 */
export function randomExpressions(seed: number) {
  let s = seed >>> 0
  const rnd = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const coef = () => (rnd() * 1.6 - 0.8).toFixed(3)
  function expr(vars: string[], depth: number): string {
    if (depth <= 0 || rnd() < 0.25) return rnd() < 0.2 ? coef() : pick(vars)
    const l = () => `(${expr(vars, depth - 1)})`
    switch (Math.floor(rnd() * 12)) {
      case 0:
        return `${l()} + ${l()}`
      case 1:
        return `${l()} - ${l()}`
      case 2:
        return `${l()} * ${l()}`
      case 3:
        return `${l()} / (1.5 + ${l()} ** 2)`
      case 4:
        return `sin(${l()})`
      case 5:
        return `cos(${l()})`
      case 6:
        return `tanh(${l()})`
      case 7:
        return `exp(0.3 * tanh(${l()}))`
      case 8:
        return `atan(${l()})`
      case 9: {
        const u = l()
        return `sqrt(1.0 + ${u} * ${u})`
      }
      case 10:
        return `log(2.0 + sin(${l()}))`
      default:
        return `${coef()} * ${l()}`
    }
  }
  return { rnd, pick, coef, expr }
}
