/**
 * Loop-carried elements kept in locals (`carriedElements` of `@tenet/ir/backend`) end to end on
 * the cpu backend: a Horner recurrence, a prefix sum, a running maximum, an integrator history of
 * stride 2, loops that run zero times, and loops the analysis must leave alone, called forwards and
 * backwards with run-time checks on and off, give the interpreter's doubles bit for bit; with
 * checks on, a carried read out of range fails with the error (message and source location) it
 * fails with when the generator keeps nothing in locals.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import {
  CARRIED_ARGS as args,
  CARRIED_SOURCES as sources,
  carriedOutOfRange,
  doublesText,
  exactText as text,
  hornerSource as horner,
  SIGNED_ZERO_SOURCES,
  signedZeroArgs,
} from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

afterEach(() => {
  disabledPasses.delete('carried-elements')
  disabledPasses.delete('carried-stores')
})

describe('loop-carried elements in locals (cpu backend)', () => {
  it('the Horner recurrence reads the element the previous iteration wrote from a local', () => {
    // (the stores as they are without pass \`carried-stores\`, which drops them: see carried-stores-programs.test.ts)
    disabledPasses.add('carried-stores')
    const m = compileModule(parse({ text: horner, name: 'p' }), { registry: registry(), backend: 'cpu', checks: false })
    const code = generatedCode(m.f!)!
    // the first iteration's element, loaded before the loop; the loop stores and keeps its value
    expect(code).toMatch(/let (r\d+) = v\d+\[\(\(f\d+ \+ 1\) \| 0\)\], (w\d+) = 0;/)
    const loop = code.slice(code.lastIndexOf('for ('))
    expect(loop).not.toMatch(/v\d+\[\(\(i\d+ \+ 1\) \| 0\)\]/)
    // (the local keeps the value before the first write's \`0 +\`, which only the store adds:
    // every read of the element is in that value, under +, − and ×, see \`signFreeReads\`)
    expect(loop).toMatch(
      /(w\d+) = \(\(\(r\d+ \* v\d+\) \+ p1\[i\d+\]\)\);\n\s*v\d+\[i\d+\] = \(0 \+ \1\);\n\s*r\d+ = \1;/,
    )
    // switched off, the loop loads it
    disabledPasses.add('carried-elements')
    const off = compileModule(parse({ text: horner, name: 'p' }), {
      registry: registry(),
      backend: 'cpu',
      checks: false,
    })
    expect(generatedCode(off.f!)!).toMatch(/v\d+\[\(\(i\d+ \+ 1\) \| 0\)\]/)
  })

  it("keeps the value before a first write's `0 +` in the local: the stored elements keep their signs of zero", () => {
    const compile = (source: string, backend: string) =>
      compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks: false }).f!
    for (const [name, source] of Object.entries(SIGNED_ZERO_SOURCES)) {
      const cpu = compile(source, 'cpu')
      const ref = compile(source, 'interpreter')
      for (const a of signedZeroArgs()) {
        const copy = () => a.map((v) => (v instanceof Float64Array ? v.slice() : v))
        expect(doublesText(cpu(...copy()) as unknown[]), `${name} ${doublesText(a)}`).toBe(
          doublesText(ref(...copy()) as unknown[]),
        )
      }
    }
    // every read in the write's value: the local takes the value, the store adds \`0 +\`
    expect(generatedCode(compile(SIGNED_ZERO_SOURCES.free, 'cpu'))!).toMatch(
      /(w\d+) = \(\(\(r\d+ \* p2\) \+ p1\[i\d+\]\)\);\n\s*v\d+\[i\d+\] = \(0 \+ \1\);/,
    )
    // a read elsewhere (a divisor): the local takes the value with its \`0 +\`
    const mixed = generatedCode(compile(SIGNED_ZERO_SOURCES.mixed, 'cpu'))!
    expect(mixed).toMatch(/w\d+ = \(0 \+ \(\(c\d+ \* p2\) \+ p1\[i\d+\]\)\);/)
    expect(mixed).not.toMatch(/\] = \(0 \+ w\d+\);/)
  })

  it('leaves a loop whose next iteration writes what this one reads alone', () => {
    const m = compileModule(parse({ text: sources.anti!, name: 'p' }), {
      registry: registry(),
      backend: 'cpu',
      checks: false,
    })
    expect(generatedCode(m.f!)!).not.toMatch(/let r\d+ = .*, w\d+ = 0;/)
  })

  for (const checks of [false, true])
    for (const [name, source] of Object.entries(sources))
      it(`${name}: the interpreter's values, forwards and backwards, zero trips included (checks ${checks ? 'on' : 'off'})`, () => {
        const cpu = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend: 'cpu', checks })
        const ref = compileModule(parse({ text: source, name: 'p' }), {
          registry: registry(),
          backend: 'interpreter',
          checks,
        })
        if (name !== 'anti') expect(generatedCode(cpu.f!)!).toMatch(/let r\d+ = .*, w\d+ = 0;/)
        for (const n of [1, 2, 3, 8]) {
          const got = cpu.f!(...args[name]!(n)) as unknown[]
          const want = ref.f!(...args[name]!(n)) as unknown[]
          expect(text(got), `n = ${n}`).toBe(text(want))
          expect(text(cpu.f!.inverse(...got) as unknown[])).toBe(text(ref.f!.inverse(...want) as unknown[]))
        }
      })

  it('with checks on, a carried read out of range fails as it does without the locals', () => {
    const compile = (source: string) =>
      compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend: 'cpu', checks: true }).f!
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
