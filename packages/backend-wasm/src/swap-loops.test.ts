/**
 * The random swap loops of `@tenet/testing` (`swapLoopProgram`) on the wasm backend, checks on
 * and off (pass `unroll-swaps` runs with checks off): the bits must be the interpreter's, forwards
 * and backwards, the round trip to 1e-9 (`columnProblems`), for one call and for a batch that
 * calls the loop at every element of arrays (the shape the backend runs in pairs of lanes, where
 * the lanes stop after different numbers of iterations, and where the loop runs rolled again). The pass's printed IR and the loops it
 * must leave are checked in `@tenet/ir`, the count of loops it unrolls in `@tenet/backend-cpu`.
 */
import { describe, expect, it } from 'vitest'
import { backendUnderTest, columnProblems, referenceBackend, runConformance, swapLoopProgram } from '@tenet/testing'
import { wasmBackend } from './index.js'
import { compile, lastMapLanes } from './test-util.js'

const backends = [
  referenceBackend(),
  backendUnderTest(wasmBackend),
  { ...backendUnderTest(wasmBackend, { checks: false }), name: 'wasm (checks off)' },
]

/** The ancilla form `g` at every element (inlined, its ancillas locals of the batch's loop). */
const batch = `fn batch(out: f64[], k: i32[], a: f64[], b: f64[], c: f64[], d: f64[], m: i32[], n: i32[]) {
  for i in 0..len(out) { g(out[i], k[i], a[i], b[i], c[i], d[i], m[i], n[i]) }
}`
const LANES = 5

describe('random swap loops: the wasm backend, checks on and off, agrees with the interpreter', () => {
  it('seeds 0..39, one call: the bits agree', () => {
    const failures: string[] = []
    for (let seed = 0; seed < 40; seed++) {
      const p = swapLoopProgram(seed)
      const found = [
        ...columnProblems(runConformance({ source: p.source, entry: 'f' }, p.args, backends)),
        ...columnProblems(runConformance({ source: p.source, entry: 'g' }, p.ancillaArgs, backends)),
      ]
      if (found.length) failures.push(`seed ${seed}:\n${p.source}\n${found.join('\n')}`)
    }
    expect(failures.slice(0, 2).join('\n\n')).toBe('')
  })

  it('seeds 0..19, a batch of 5 (the arguments of 5 seeds): the bits agree', () => {
    const failures: string[] = []
    for (let seed = 0; seed < 20; seed++) {
      const p = swapLoopProgram(seed)
      const sets = Array.from({ length: LANES }, (_, k) => swapLoopProgram(1000 + seed * LANES + k).ancillaArgs)
      const ints = new Set([1, 6, 7])
      const args = p.ancillaArgs.map((_, j) =>
        ints.has(j) ? Int32Array.from(sets, (s) => s[j]!) : Float64Array.from(sets, (s) => s[j]!),
      )
      // (in pairs of lanes, where the loop runs as it was: see \`rolled\` in \`map-lanes.ts\`)
      compile(`${p.source}\n${batch}`, 'wasm')
      if (lastMapLanes < 1) failures.push(`seed ${seed}: the batch did not run in lanes`)
      const found = columnProblems(runConformance({ source: `${p.source}\n${batch}`, entry: 'batch' }, args, backends))
      if (found.length) failures.push(`seed ${seed}:\n${p.source}\n${found.join('\n')}`)
    }
    expect(failures.slice(0, 2).join('\n\n')).toBe('')
  })
})
