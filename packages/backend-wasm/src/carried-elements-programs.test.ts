/**
 * Loop-carried elements kept in locals (`carriedElements` of `@tenet/ir/backend`) end to end on
 * the wasm backend (the first iteration loads the element, the later ones read a local): a Horner recurrence, a prefix sum, a running maximum, an integrator history of
 * stride 2, loops that run zero times, and loops the analysis must leave alone, called forwards and
 * backwards with run-time checks on and off, give the interpreter's doubles bit for bit; with
 * checks on, a carried read out of range fails with the error (message and source location) it
 * fails with when the generator keeps nothing in locals.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { CARRIED_ARGS as args, CARRIED_SOURCES as sources, exactText as text } from '@tenet/testing'
import { wasmBackend } from './index.js'

const registry = () => createRegistry().registerBackend(wasmBackend).registerBackend(interpreterBackend)

afterEach(() => disabledPasses.delete('carried-elements'))

describe('loop-carried elements in locals (wasm backend)', () => {
  for (const checks of [false, true])
    for (const [name, source] of Object.entries(sources))
      it(`${name}: the interpreter's values, forwards and backwards, zero trips included (checks ${checks ? 'on' : 'off'})`, () => {
        const m = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend: 'wasm', checks })
        const ref = compileModule(parse({ text: source, name: 'p' }), {
          registry: registry(),
          backend: 'interpreter',
          checks,
        })
        for (const n of [1, 2, 3, 8]) {
          const got = m.f!(...args[name]!(n)) as unknown[]
          const want = ref.f!(...args[name]!(n)) as unknown[]
          expect(text(got), `n = ${n}`).toBe(text(want))
          expect(text(m.f!.inverse(...got) as unknown[])).toBe(text(ref.f!.inverse(...want) as unknown[]))
        }
      })

  it('with checks on, a carried read out of range fails as it does without the locals', () => {
    // the first iteration reads a[-1] (the loop starts at 0); then one where only a later read would
    // leave the array, which the write of the iteration before fails first
    const cases = [
      `fn f(a: f64[], x: f64[], y: f64) { for i in 0..len(x) { a[i] += a[i - 1] + x[i] * y } }`,
      `fn f(a: f64[], x: f64[], y: f64) { for i in 1..len(x) + 1 { a[i] += a[i - 1] + x[i - 1] * y } }`,
      `fn f(a: f64[], x: f64[], y: f64) { for i in len(x) - 2..=0 by -1 { a[i] += a[i + 1] * x[i] * y } }`,
      // a read under a condition, whose check stays in the loop
      `fn f(a: f64[], x: f64[], y: f64) { for i in 0..len(x) { a[i] += a[i - 1] + x[i]\n if (x[i] > 0.5, ~) { y += a[i - 1] * x[i] } } }`,
    ]
    const failure = (source: string, a: Float64Array, x: Float64Array): string => {
      const m = compileModule(parse({ text: source, name: 'p' }), {
        registry: registry(),
        backend: 'wasm',
        checks: true,
      })
      try {
        m.f!(a, x, 0.25)
        return 'no error'
      } catch (e) {
        return String(e)
      }
    }
    for (const source of cases)
      for (const [la, lx] of [
        [4, 4],
        [3, 4],
        [5, 4],
        [2, 3],
      ] as const) {
        const a = () => Float64Array.from({ length: la }, (_, k) => k / 4)
        const x = () => Float64Array.from({ length: lx }, (_, k) => 1 - k / 5)
        const on = failure(source, a(), x())
        disabledPasses.add('carried-elements')
        const off = failure(source, a(), x())
        disabledPasses.delete('carried-elements')
        expect(on, `${source} ${la} ${lx}`).toBe(off)
        expect(on).toMatch(/^no error$|^InvertibilityError: index -?\d+ is out of bounds for `a`/)
      }
    // (each case fails somewhere, and the error names the array and the source line)
    const e = failure(cases[0]!, new Float64Array(4), new Float64Array(4))
    expect(e).toMatch(/-1/)
    expect(e).toMatch(/1:/)
  })
})
