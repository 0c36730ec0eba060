/**
 * The random column programs of `@tenet/testing` (`columnProgram`) on the wasm backend, checks on
 * and off: without checks, `interchange` moves the loop over columns innermost where it proves
 * the columns independent, `hoist-calls` gives ROT its cos θ and sin θ in locals, and the loop
 * keeps a rotation's sum in a local (bijection calls in a promoted loop); the bits must be the
 * interpreter's, forwards and backwards (the passes' printed IR and the cases where the loop
 * must stay are checked in `@tenet/ir` and `@tenet/backend-cpu`).
 */
import { describe, expect, it } from 'vitest'
import {
  backendUnderTest,
  columnArgs,
  columnProblems,
  columnProgram,
  referenceBackend,
  runConformance,
} from '@tenet/testing'
import { wasmBackend } from './index.js'

const backends = [
  referenceBackend(),
  backendUnderTest(wasmBackend),
  { ...backendUnderTest(wasmBackend, { checks: false }), name: 'wasm (checks off)' },
]

describe('random column programs: the wasm backend, checks on and off, agrees with the interpreter', () => {
  it('seeds 0..31: the bits agree', () => {
    const failures: string[] = []
    for (let seed = 0; seed < 32; seed++) {
      const c = columnProgram(seed)
      for (let k = 0; k < 2; k++) {
        const found = columnProblems(
          runConformance({ source: c.source, entry: 'f' }, columnArgs(c, seed * 3 + k), backends),
        )
        if (found.length) failures.push(`seed ${seed}:\n${c.source}\n${found.join('\n')}`)
      }
    }
    expect(failures.slice(0, 2).join('\n\n')).toBe('')
  })
})
