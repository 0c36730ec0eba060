/**
 * The wasm code generator's \`hoist-pools\` (see \`hoistAllocs\` in \`codegen.ts\`): the memory of
 * a loop's leading array allocations of a loop-invariant length taken once before the loop and
 * given back after it. The programs of \`describeHoistPools\` (\`@tenet/testing\`) against the
 * interpreter, checks on and off, with and without the hoist; Horner's least squares, whose two
 * arrays per point (the gradient's) are hoisted, called many times in a row without the heap
 * growing, and its gradient against central differences are in \`@tenet/ad\`'s tests.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { hornerLossSource } from '@tenet/testing/programs'
import { describeHoistPools, hoistPoolsSource, withoutHoistPools } from '@tenet/testing/vitest'
import type { WasmProgram } from './backend.js'
import { wasmBackend } from './index.js'

describeHoistPools(wasmBackend)

describe('hoist-pools (wasm): Horner’s least squares', () => {
  it('hoists the allocations of f and down (two each, forwards and backwards), of g backwards only, none of h, k (a step of 2), r', () => {
    let hoisted = 0
    const spec = {
      ...wasmBackend,
      doCompile: (...a: Parameters<typeof wasmBackend.doCompile>) => {
        const p = wasmBackend.doCompile(...a) as WasmProgram
        hoisted = p.hoistedAllocs
        return p
      },
    }
    const registry = createRegistry().registerBackend(spec)
    const count = (text: string) => {
      compileModule(parse({ text, name: 'h' }), { registry, backend: 'wasm', checks: false })
      return hoisted
    }
    const fn = (name: string) => {
      const at = hoistPoolsSource.indexOf(`fn ${name}(`)
      const end = hoistPoolsSource.indexOf('\nfn ', at + 1)
      return hoistPoolsSource.slice(at, end < 0 ? undefined : end)
    }
    expect(count(fn('f'))).toBe(4)
    expect(count(fn('down'))).toBe(4)
    // (g's inverse begins its body with the allocation; h's with \`n -= 1\`, its length's name)
    expect(count(fn('g'))).toBe(1)
    for (const name of ['h', 'k', 'r']) expect([name, count(fn(name))]).toEqual([name, 0])
    // (the loop as written; \`jam-iterations\` runs it in groups of points: three loops, each with its own)
    disabledPasses.add('jam-iterations')
    try {
      expect(count(hornerLossSource)).toBe(2)
    } finally {
      disabledPasses.delete('jam-iterations')
    }
    expect(withoutHoistPools(() => count(fn('f')))).toBe(0)
  })

  it('the interpreter’s loss, call after call, with and without the hoist, checks on and off', () => {
    const registry = createRegistry().registerBackend(wasmBackend).registerBackend(interpreterBackend)
    const c = Float64Array.of(0.5, -0.25, 0.125, 2, -1)
    const xs = Float64Array.from({ length: 37 }, (_, i) => Math.sin(i) * 1.3)
    const ys = Float64Array.from(xs, (x) => Math.cos(3 * x))
    for (const checks of [false, true]) {
      const make = (backend: string) =>
        compileModule(parse({ text: hornerLossSource, name: 'horner' }), { registry, backend, checks })
      const want = make('interpreter').horner_loss!(0.25, c, xs, ys)
      for (const m of [make('wasm'), withoutHoistPools(() => make('wasm'))]) {
        for (let call = 0; call < 50; call++) expect(m.horner_loss!(0.25, c, xs, ys)).toEqual(want)
        // (no points: the loop does not run, nothing is allocated)
        expect(m.horner_loss!(0.25, c, new Float64Array(0), new Float64Array(0))).toEqual([
          0.25,
          c,
          new Float64Array(0),
          new Float64Array(0),
        ])
      }
    }
  })
})
