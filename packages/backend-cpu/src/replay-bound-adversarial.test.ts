/**
 * Adversarial programs for \`replay-bound\` (cpu, checks on): an infinite tolerance with an
 * infinite term, and plugin JS between the recording call and its uncall that runs the module
 * again (the sum of magnitudes is read as the call returns). The interpreter's errors.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

afterEach(() => disabledPasses.delete('replay-bound'))

type Options = { checks?: boolean; tolerance?: number }
type Fn = ((...a: unknown[]) => unknown) & { inverse: (...a: unknown[]) => unknown }
const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const compile = (source: string, backend: string, options: Options = {}, name = 'f') =>
  (
    compileModule(parse({ text: source, name: 'p' }), {
      registry: registry(),
      backend,
      checks: true,
      ...options,
    }) as unknown as Record<string, Fn>
  )[name]!
const show = (v: number) => (Object.is(v, -0) ? '-0' : String(v))
/** The error code (first line) and the arrays after the call, as exact text. */
function outcome(f: Fn, mk: () => unknown[], inverse: boolean): string {
  const args = mk()
  const e = raisedError(() => (inverse ? f.inverse : f)(...args)).split('\n')[0]
  const text = args
    .map((a) => (ArrayBuffer.isView(a) ? Array.from(a as Float64Array, show).join(' ') : String(a)))
    .join(' / ')
  return `${e} | ${text}`
}

/** Terms summed into the 17 elements of an ancilla (too many statements to inline), used, uncomputed. */
const acc = `
fn acc(a: f64[], x: f64[], n: i32) {
  for j in 0..n {
${Array.from({ length: 17 }, (_, k) => `    a[${k}] += x[j] * ${k === 0 ? '1.0' : `${1 + k / 4}`}`).join('\n')}
  }
}`
const sums = (use = 'y[0] += a[0]') => `${acc}
fn f(y: f64[], x: f64[], n: i32) {
  a: f64[] <- zeros(17)
  acc(a, x, n)
  ${use}
  ~acc(a, x, n)
  a -> zeros(17)
}`

describe('replay-bound', () => {
  it('tolerance Infinity, an infinite term: the replay leaves NaN, the deallocation check must fail', () => {
    // the interpreter (and the cpu without the pass): a[k] = 0 + Inf, then Inf − Inf = NaN, and
    // |NaN| <= Infinity is false: runtime/dealloc. The bound test 5·N·u·Inf <= Infinity passes,
    // so the replay is left out, the ancilla zeroed and no error raised.
    const mk = () => [new Float64Array(1), Float64Array.from([Infinity]), 1]
    const options = { tolerance: Infinity }
    const ref = compile(sums(), 'interpreter', options)
    const on = compile(sums(), 'cpu', options)
    for (const inverse of [false, true]) {
      expect(outcome(ref, mk, inverse)).toMatch(/^runtime\/dealloc/)
      expect(outcome(on, mk, inverse), `inverse ${inverse}`).toBe(outcome(ref, mk, inverse))
    }
  })

  /** `f` with a plugin primitive between the call and its uncall: its JS calls the module again. */
  const reentrant = `${sums('y[0] += cb(a[0])')}
fn g(y: f64[], x: f64[], n: i32) {
  a: f64[] <- zeros(17)
  acc(a, x, n)
  y[0] += a[0]
  ~acc(a, x, n)
  a -> zeros(17)
}`
  function runReentrant(backend: string, reenter: boolean): string {
    let m: Record<string, Fn> = {}
    let depth = reenter ? 0 : 1
    const reg = registry()
    reg.registerPrimitive({
      specificationVersion: 'v1',
      name: 'cb',
      kind: 'pure',
      arity: 1,
      // (the first call runs g, whose recording call records one tiny term per element)
      evaluate: (v: number) => {
        if (depth++ === 0) m.g!(new Float64Array(1), Float64Array.from([1e-30]), 1)
        return v
      },
    })
    m = compileModule(parse({ text: reentrant, name: 'p' }), {
      registry: reg,
      backend,
      checks: true,
    }) as unknown as Record<string, Fn>
    const y = new Float64Array(1)
    // 1 then 1e20 into a[0]: the replay leaves −1 there (see replay-bound.test.ts)
    const e = raisedError(() => m.f!(y, Float64Array.from([1, 1e20]), 2)).split('\n')[0]
    return `${e} | ${show(y[0]!)}`
  }
  it('a plugin primitive between the call and the uncall calls the module again: the check must still fire', () => {
    // the reentrant call's recording call overwrites `$tv` (the sum of the magnitudes) with its
    // own tiny one; the outer uncall then tests its own N against that sum, leaves the replay out
    // and zeroes the ancilla: the deallocation check that fails in the interpreter passes
    const ref = runReentrant('interpreter', true)
    expect(ref).toMatch(/^runtime\/dealloc/)
    // (without the reentrant call, the cpu fails as the interpreter does)
    expect(runReentrant('cpu', false)).toBe(ref)
    expect(runReentrant('cpu', true)).toBe(ref)
  })

  it('a plugin bijection between the call and the uncall calls the module again: the check must still fire', () => {
    // (\`callsOut\` of replay-bound.ts counts no bijection call as calling out; the code
    // generator's own \`callsOut\` does count \`rt.bijections[…]\`)
    const source = reentrant.replace('y[0] += cb(a[0])', 'HOOK(y[0])')
    const run = (backend: string) => {
      let m: Record<string, Fn> = {}
      let depth = 0
      const reg = registry()
      reg.registerPrimitive({
        specificationVersion: 'v1',
        name: 'HOOK',
        kind: 'bijection',
        roles: ['inout'],
        inverse: 'self',
        apply: (v: number) => {
          if (depth++ === 0) m.g!(new Float64Array(1), Float64Array.from([1e-30]), 1)
          return [v]
        },
      })
      m = compileModule(parse({ text: source, name: 'p' }), {
        registry: reg,
        backend,
        checks: true,
      }) as unknown as Record<string, Fn>
      const y = new Float64Array(1)
      return raisedError(() => m.f!(y, Float64Array.from([1, 1e20]), 2)).split('\n')[0]
    }
    const ref = run('interpreter')
    expect(ref).toMatch(/^runtime\/dealloc/)
    expect(run('cpu')).toBe(ref)
  })
})
