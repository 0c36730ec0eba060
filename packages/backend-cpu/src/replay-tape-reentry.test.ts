/**
 * Pass replay-uncall's tape (found by review 17b to hold) when a recorded term's plugin primitive calls the module
 * again and the inner call fails (caught by the plugin), on cpu against the interpreter.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

type Fn = (...a: unknown[]) => unknown
const show = (v: number) => (Object.is(v, -0) ? '-0' : String(v))

afterEach(() => {
  disabledPasses.delete('replay-bound')
  disabledPasses.delete('replay-uncall')
})

const source = (terms: number, cond: boolean) => `
fn acc(a: f64[], x: f64[], n: i32) {
  for j in 0..n {
${cond ? '   if (cb(x[j]) > -1.0, ~) {' : ''}
${Array.from({ length: terms }, (_, k) => `    a[${k}] += cb(x[j] + ${k}.0) * ${k === 0 ? '1.0' : `${1 + k / 4}`}`).join('\n')}
${cond ? '   }' : ''}
  }
}
fn f(y: f64[], x: f64[], n: i32) {
  a: f64[] <- zeros(${terms})
  acc(a, x, n)
  y[0] += a[0]
  ~acc(a, x, n)
  a -> zeros(${terms})
}`

type Mode = 'nan' | 'throw' | 'ok'
/**
 * `cb`'s `at`-th evaluation calls `f` on `inner` elements; with mode 'nan' an inner element is NaN
 * (the inner call's deallocation fails), with 'throw' the inner call's `throwAt`-th cb throws; the
 * plugin catches the inner call's error. Returns the outer call's result and what the inner raised.
 */
function run(
  backend: string,
  {
    terms,
    outer,
    inner,
    at,
    mode,
    cond,
    throwAt = 3,
  }: { terms: number; outer: number; inner: number; at: number; mode: Mode; cond: boolean; throwAt?: number },
  off: Array<'replay-bound' | 'replay-uncall'> = [],
): string {
  let m: Record<string, Fn> = {}
  let count = 0
  let depth = 0
  let innerCount = 0
  let innerError = ''
  const reg = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
  reg.registerPrimitive({
    specificationVersion: 'v1',
    name: 'cb',
    kind: 'pure',
    arity: 1,
    evaluate: (v: number) => {
      if (depth === 1) {
        if (mode === 'throw' && ++innerCount === throwAt) throw new Error('plugin failure')
        return v
      }
      if (++count === at && depth === 0) {
        depth++
        const x = Float64Array.from({ length: inner }, (_, i) =>
          mode === 'nan' && i === inner - 1 ? Number.NaN : 0.375 + i / 8,
        )
        innerError = raisedError(() => m.f!(new Float64Array(1), x, inner)).split('\n')[0]!
        depth--
      }
      return v
    },
  })
  for (const p of off) disabledPasses.add(p)
  try {
    m = compileModule(parse({ text: source(terms, cond), name: 'p' }), {
      registry: reg,
      backend,
      checks: true,
      tolerance: 0,
    }) as unknown as Record<string, Fn>
  } finally {
    for (const p of off) disabledPasses.delete(p)
  }
  const y = new Float64Array(1)
  const x = Float64Array.from({ length: outer }, (_, i) => 1 + i)
  const e = raisedError(() => m.f!(y, x, outer)).split('\n')[0]
  // a second call after it: the tape as it should be
  const y2 = new Float64Array(1)
  const e2 = raisedError(() => m.f!(y2, x, outer)).split('\n')[0]
  return `${e} | ${show(y[0]!)} | inner: ${innerError.replace(/\(at [^)]*\)/, '')} | again: ${e2} ${show(y2[0]!)}`
}

describe('replay-uncall: a failing inner call caught by the plugin', () => {
  for (const mode of ['nan', 'throw', 'ok'] as const)
    for (const cond of [false, true])
      for (const c of [
        { terms: 17, outer: 2, inner: 1, at: 20 },
        { terms: 40, outer: 3, inner: 64, at: 45 },
        { terms: 3, outer: 4, inner: 2, at: 5 },
        { terms: 3, outer: 4, inner: 2, at: 11 },
        // (the outer call's 1024 terms fill the tape's first block as the inner call starts)
        { terms: 40, outer: 30, inner: 64, at: 1025 },
        { terms: 40, outer: 30, inner: 1, at: 1025 },
      ])
        it(`${mode} ${cond ? '(a condition calls cb) ' : ''}${JSON.stringify(c)}`, () => {
          const cc = { ...c, mode, cond }
          const ref = run('interpreter', cc)
          expect(run('cpu', cc, ['replay-bound', 'replay-uncall'])).toBe(ref)
          expect(run('cpu', cc, ['replay-bound'])).toBe(ref)
          expect(run('cpu', cc)).toBe(ref)
        })
  // re-entry from the replay's own condition (the uncall evaluates cb there too): at 17 and on, the
  // forward run's 16 evaluations done (40 terms: 3 × 41 forwards)
  for (const mode of ['nan', 'throw', 'ok'] as const)
    for (const c of [
      { terms: 3, outer: 4, inner: 2, at: 17 },
      { terms: 3, outer: 4, inner: 40, at: 18 },
      { terms: 40, outer: 3, inner: 64, at: 124 },
    ])
      it(`${mode}, in the replay ${JSON.stringify(c)}`, () => {
        const cc = { ...c, mode, cond: true }
        const ref = run('interpreter', cc)
        expect(run('cpu', cc, ['replay-bound', 'replay-uncall'])).toBe(ref)
        expect(run('cpu', cc, ['replay-bound'])).toBe(ref)
        expect(run('cpu', cc)).toBe(ref)
      })
})
