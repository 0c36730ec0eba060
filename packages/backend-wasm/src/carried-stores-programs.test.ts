/**
 * Pass `carried-stores` end to end on the wasm backend: a history array read after its loop only
 * at the element the last iteration wrote keeps its carried element in the local only (the loop
 * stores nothing; the read after it takes the local where the loop ran, the flag the carried
 * element already has telling). Each program of `CARRIED_STORE_SOURCES`, forwards and
 * backwards, checks on and off, gives the interpreter's doubles bit for bit (signs of zero and
 * NaN included), for lengths whose loops run no iteration too, one module called with changing
 * lengths; the diagnostic counts the loops that drop their stores.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { disabledPasses } from '@tenet/ir/backend'
import { CARRIED_STORE_SOURCES as sources, carriedStoreArgs } from '@tenet/testing'
import { compile, lastCarriedStores } from './test-util.js'

afterEach(() => disabledPasses.delete('carried-stores'))

/** A double as text that tells −0 from 0 and keeps NaN. */
const exact = (v: unknown) => (typeof v !== 'number' ? v : Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : v)
/** Values (scalars and \`Float64Array\`s) as text: equal text, equal doubles. */
const text = (xs: unknown[]) =>
  JSON.stringify(xs.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v))))

/** A call's results as text, or the error it raised (with checks on, a NaN fails an uncompute's check). */
function outcome(call: () => unknown): { text: string; values?: unknown[] } {
  try {
    const values = call() as unknown[]
    return { text: text(values), values }
  } catch (e) {
    return { text: String(e) }
  }
}

describe('pass `carried-stores` (wasm backend)', () => {
  it('applies to the programs meant for it (function and inverse), not to the others, nor with checks on or switched off', () => {
    for (const name of ['horner', 'runningMax', 'sweep', 'prefix', 'gap']) {
      compile(sources[name]!, 'wasm')
      expect(lastCarriedStores, name).toBe(2)
      compile(sources[name]!, 'wasm', true)
      expect(lastCarriedStores, `${name}, checks on`).toBe(0)
    }
    for (const name of ['otherElement', 'twoLoops']) {
      compile(sources[name]!, 'wasm')
      expect(lastCarriedStores, name).toBe(0)
    }
    disabledPasses.add('carried-stores')
    compile(sources.horner!, 'wasm')
    expect(lastCarriedStores).toBe(0)
  })

  for (const checks of [false, true])
    for (const [name, source] of Object.entries(sources))
      it(`${name}: the interpreter's values bit for bit, forwards and backwards, changing lengths (checks ${checks ? 'on' : 'off'})`, () => {
        const wasm = compile(source, 'wasm', checks).f!
        const ref = compile(source, 'interpreter', checks).f!
        for (const n of [1, 2, 3, 9, 1, 5, 2].filter((k) => name !== 'gap' || k >= 2))
          for (const a of carriedStoreArgs(n)) {
            const copy = () => a.map((v) => (v instanceof Float64Array ? v.slice() : v))
            const got = outcome(() => wasm(...copy()))
            const want = outcome(() => ref(...copy()))
            expect(got.text, `n = ${n}: ${text(a)}`).toBe(want.text)
            if (got.values && want.values)
              expect(outcome(() => wasm.inverse(...got.values!)).text, `inverse, n = ${n}: ${text(a)}`).toBe(
                outcome(() => ref.inverse(...want.values!)).text,
              )
          }
      })
})
