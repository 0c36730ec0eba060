/** Test helpers: a registry with both backends and a `rev`-like tag (the umbrella is not a dependency). */
import { createRegistry, parse, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetFunction, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { finiteDifference, randomRealExpressions } from '@tenet/testing'
import { expect } from 'vitest'
import { gradient } from './index.js'

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

/** Central differences of the loss (argument 0 after a forward run) in the float inputs `wrt`. */
export function centralDifferences(f: TenetFunction, args: unknown[], wrt: number[]): number[] {
  const loss = (a: unknown[]) =>
    (f(...a.map((x) => (x instanceof Float64Array ? x.slice() : x))) as unknown[])[0] as number
  const out: number[] = []
  for (const k of wrt) {
    const a = args[k]
    const n = a instanceof Float64Array ? a.length : 1
    for (let e = 0; e < n; e++) {
      const at = (d: number) => {
        const copy = [...args]
        if (a instanceof Float64Array) {
          const v = a.slice()
          v[e]! += d
          copy[k] = v
        } else copy[k] = (a as number) + d
        return loss(copy)
      }
      const h = 1e-6 * Math.max(1, Math.abs(a instanceof Float64Array ? a[e]! : (a as number)))
      out.push((at(h) - at(-h)) / (2 * h))
    }
  }
  return out
}

/** The entries of the results `r` at the argument positions `wrt`, arrays flattened in order. */
export const flatWrt = (r: unknown[], wrt: number[]): number[] =>
  wrt.flatMap((k) => (r[k] instanceof Float64Array ? Array.from(r[k] as Float64Array) : [r[k] as number]))

/**
 * The Hessian of `f`'s loss (argument `loss` after a forward run) over the scalars of `wrt`, in
 * that order (a float argument, or each element of a float array), by central differences of the
 * exact gradient (`finiteDifference` of @tenet/testing with step `h`): the oracle of the Hessian
 * tests. Row-major, n × n.
 */
export function fdHessian(f: TenetFunction, args: unknown[], wrt: number[], loss = 0, h = 1e-5): Float64Array {
  const at: Array<[number, number]> = []
  for (const p of wrt) {
    const a = args[p]
    if (typeof a === 'number') at.push([p, -1])
    else for (let e = 0; e < (a as Float64Array).length; e++) at.push([p, e])
  }
  const flat = (g: unknown[]) => at.map(([p, e]) => (e < 0 ? (g[p] as number) : (g[p] as Float64Array)[e]!))
  const withValues = (v: number[]) => {
    const a = args.map((x) => (ArrayBuffer.isView(x) ? (x as Float64Array).slice() : x))
    at.forEach(([p, e], k) => {
      if (e < 0) a[p] = v[k]
      else (a[p] as Float64Array)[e] = v[k]!
    })
    return a
  }
  const J = finiteDifference((v) => flat(gradient(f, withValues(v), { loss })), flat(args), h)
  return Float64Array.from(J.flat())
}
