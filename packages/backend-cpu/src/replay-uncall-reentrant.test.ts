/**
 * The tape of pass `replay-uncall` (see `@tenet/ir`) when a term of a recording call calls plugin
 * code that calls the module again (found by review 16b): the inner call records and replays its
 * own terms above the outer call's, so the outer call's uncall still replays its own. A recording
 * function that calls out therefore works on the module's tape and top, not on copies in locals: a
 * local top had the inner call push from the outer call's entry top, over the terms the outer call
 * had recorded (a false deallocation error with tolerance 0), and a local array missed the inner
 * call's growth of the tape.
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

/** `acc` adds `terms` terms per element of `x` to `a`, each through the plugin primitive `cb`. */
const source = (terms: number) => `
fn acc(a: f64[], x: f64[], n: i32) {
  for j in 0..n {
${Array.from({ length: terms }, (_, k) => `    a[${k}] += cb(x[j] + ${k}.0) * ${k === 0 ? '1.0' : `${1 + k / 4}`}`).join('\n')}
  }
}
fn f(y: f64[], x: f64[], n: i32) {
  a: f64[] <- zeros(${terms})
  acc(a, x, n)
  y[0] += a[0]
  ~acc(a, x, n)
  a -> zeros(${terms})
}`

/**
 * Runs `f(y, x, n)` with checks on and tolerance 0, where `cb`'s `at`-th evaluation (one of the
 * outer call's terms) calls `f` again on `inner` elements; the error code (or "no error") and
 * `y[0]` after the outer call.
 */
function run(
  backend: string,
  { terms, outer, inner, at }: { terms: number; outer: number; inner: number; at: number },
  off: Array<'replay-bound' | 'replay-uncall'> = [],
): string {
  let m: Record<string, Fn> = {}
  let count = 0
  let depth = 0
  const reg = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
  reg.registerPrimitive({
    specificationVersion: 'v1',
    name: 'cb',
    kind: 'pure',
    arity: 1,
    evaluate: (v: number) => {
      if (++count === at && depth++ === 0) {
        const x = Float64Array.from({ length: inner }, (_, i) => 0.375 + i / 8)
        m.f!(new Float64Array(1), x, inner)
      }
      return v
    },
  })
  for (const p of off) disabledPasses.add(p)
  try {
    m = compileModule(parse({ text: source(terms), name: 'p' }), {
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
  if (depth !== 1) throw new Error(`${backend}, off [${off}]: cb re-entered ${depth} times in ${count} calls (${e})`)
  return `${e} | ${show(y[0]!)}`
}

describe('replay-uncall: a plugin primitive in a recorded term calls the module again', () => {
  it('the inner call records above the outer call’s terms (review 16b’s reproduction)', () => {
    const c = { terms: 17, outer: 2, inner: 1, at: 20 }
    const ref = run('interpreter', c)
    expect(ref).toBe('no error | 3')
    expect(run('cpu', c, ['replay-bound', 'replay-uncall'])).toBe(ref)
    expect(run('cpu', c, ['replay-bound'])).toBe(ref)
    expect(run('cpu', c)).toBe(ref)
  })

  it('the inner call grows the tape while the outer call records', () => {
    // 40 terms per element: the inner call's 64 elements push 2560 terms, past the first 1024
    // slots of the tape, while the outer call holds 45 of its own
    const c = { terms: 40, outer: 3, inner: 64, at: 45 }
    const ref = run('interpreter', c)
    expect(ref).toBe('no error | 6')
    expect(run('cpu', c, ['replay-bound', 'replay-uncall'])).toBe(ref)
    expect(run('cpu', c, ['replay-bound'])).toBe(ref)
    expect(run('cpu', c)).toBe(ref)
  })
})
