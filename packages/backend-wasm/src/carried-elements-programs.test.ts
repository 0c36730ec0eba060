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
import {
  CARRIED_ARGS as args,
  CARRIED_SOURCES as sources,
  carriedOutOfRange,
  doublesText,
  exactText as text,
  SIGNED_ZERO_SOURCES,
  signedZeroArgs,
} from '@tenet/testing'
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

  it("keeps the value before a first write's `0 +` in the local where every read allows it: the interpreter's signs of zero", () => {
    for (const [name, source] of Object.entries(SIGNED_ZERO_SOURCES)) {
      const compile = (backend: string) =>
        compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks: false }).f!
      const m = compile('wasm')
      const ref = compile('interpreter')
      for (const a of signedZeroArgs()) {
        const copy = () => a.map((v) => (v instanceof Float64Array ? v.slice() : v))
        expect(doublesText(m(...copy()) as unknown[]), `${name} ${doublesText(a)}`).toBe(
          doublesText(ref(...copy()) as unknown[]),
        )
      }
    }
  })

  it('with checks on, a carried read out of range fails as it does without the locals', () => {
    const compile = (source: string) =>
      compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend: 'wasm', checks: true }).f!
    const { runs, first } = carriedOutOfRange(compile, (off) => {
      if (off) disabledPasses.add('carried-elements')
      else disabledPasses.delete('carried-elements')
    })
    for (const { label, on, off } of runs) {
      expect(on, label).toBe(off)
      expect(on).toMatch(/^no error$|^InvertibilityError: index -?\d+ is out of bounds for `a`/)
    }
    // (each case fails somewhere, and the error names the array and the source line)
    expect(first).toMatch(/-1/)
    expect(first).toMatch(/1:/)
  })
})
