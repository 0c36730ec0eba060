/**
 * Pass `carried-stores` end to end on the cpu backend: a history array read after its loop only
 * at the element the last iteration wrote keeps its carried element in the local only (the loop
 * stores nothing; the read after it takes the local where the loop ran). Each program of
 * `CARRIED_STORE_SOURCES`, forwards and backwards, checks on and off, gives the interpreter's
 * doubles bit for bit (signs of zero and NaN included), for lengths whose loops run no iteration
 * too, one module called with changing lengths (its pooled arrays hold stale values).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import { CARRIED_STORE_SOURCES as sources, carriedStoreArgs } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const compile = (source: string, backend: string, checks: boolean) =>
  compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks }).f!

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

/** The statements of the generated code's innermost loop (the last `for` of the function). */
const lastLoop = (code: string) => {
  const at = code.lastIndexOf('for (')
  return code.slice(at, code.indexOf('\n    }', at))
}

describe('pass `carried-stores` (cpu backend)', () => {
  it('Horner’s accumulator: the loop stores nothing, the read after it takes the local where the loop ran', () => {
    const code = generatedCode(compile(sources.horner!, 'cpu', false))!
    const loop = lastLoop(code)
    expect(loop).toMatch(/(w\d+) = \(\(\(r\d+ \* p2\) \+ p1\[i\d+\]\)\);\n\s*r\d+ = \1;/)
    expect(loop).not.toMatch(/v\d+\[i\d+\] =/)
    // (+0 where the store would have added it to a −0)
    expect(code).toMatch(/\(a\d+ >= b\d+ \? \(0 \+ r\d+\) : v\d+\[0\]\)/)
    // switched off, or with checks on (the deallocation's check reads every element), the stores stay
    disabledPasses.add('carried-stores')
    expect(lastLoop(generatedCode(compile(sources.horner!, 'cpu', false))!)).toMatch(/v\d+\[i\d+\] = \(0 \+ w\d+\);/)
    disabledPasses.delete('carried-stores')
    expect(generatedCode(compile(sources.horner!, 'cpu', true))!).not.toMatch(/\? \(0 \+ r\d+\) :/)
  })

  it('keeps the stores where another element is read after the loop, or a later loop reads the array', () => {
    for (const name of ['otherElement', 'twoLoops']) {
      const code = generatedCode(compile(sources[name]!, 'cpu', false))!
      expect(code, name).not.toMatch(/\? (\(0 \+ )?r\d+\)? :/)
    }
  })

  for (const checks of [false, true])
    for (const [name, source] of Object.entries(sources))
      it(`${name}: the interpreter's values bit for bit, forwards and backwards, changing lengths (checks ${checks ? 'on' : 'off'})`, () => {
        const cpu = compile(source, 'cpu', checks)
        const ref = compile(source, 'interpreter', checks)
        for (const n of [1, 2, 3, 9, 1, 5, 2].filter((k) => name !== 'gap' || k >= 2))
          for (const a of carriedStoreArgs(n)) {
            const copy = () => a.map((v) => (v instanceof Float64Array ? v.slice() : v))
            const got = outcome(() => cpu(...copy()))
            const want = outcome(() => ref(...copy()))
            expect(got.text, `n = ${n}: ${text(a)}`).toBe(want.text)
            if (got.values && want.values)
              expect(outcome(() => cpu.inverse(...got.values!)).text, `inverse, n = ${n}: ${text(a)}`).toBe(
                outcome(() => ref.inverse(...want.values!)).text,
              )
          }
      })

  it('applies to every program meant for it (the generated code reads a local after the loop)', () => {
    for (const name of ['horner', 'runningMax', 'sweep', 'prefix', 'gap'])
      expect(generatedCode(compile(sources[name]!, 'cpu', false))!, name).toMatch(/\? (\(0 \+ )?r\d+\)? :/)
  })
})
