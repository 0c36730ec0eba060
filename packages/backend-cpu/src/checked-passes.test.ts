/**
 * The passes that run with run-time checks on (`CHECKED_PASSES` of `@tenet/ir`) keep every check:
 * the same errors (code, message, source location) as the reference interpreter, where it raises
 * them and only there (`describeCheckedPasses` of `@tenet/testing/vitest`), and the generated code
 * shows that they applied.
 *
 * - `scalar-arrays`: a small array ancilla used at literal positions becomes scalars, and its
 *   deallocation check stays the array's (`deallocArray`, one check over every element);
 * - `tabulate`: a table of cos θ and sin θ replaces the rotations' evaluations, and the bounds
 *   check of each angle read stays the angle array's.
 */
import { describe, expect, it } from 'vitest'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, pairScratchProgram, unitaryMultiplySource } from '@tenet/testing'
import { describeCheckedPasses } from '@tenet/testing/vitest'
import { cpuBackend } from './index.js'

const cpu = backendUnderTest(cpuBackend, { checks: true })

describeCheckedPasses(cpu)

describe('the generated code with checks on', () => {
  it('replaces the array by scalars and keeps one deallocArray check over its elements (generated code)', () => {
    const src = pairScratchProgram('f64', 'x[3 * j + c] - x[3 * i + c]')
    const code = (
      cpu.compile(src).f![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }
    ).compiled.sourceOf('f', false)
    expect(code).not.toMatch(/Float64Array|fill\(|\$allNear|rt\.near/)
    // (each element is undone by the value it was computed from: +0 or NaN, compared with zero)
    expect(code).toMatch(/if \(!\(\(\(v\d+ === 0\) && \(v\d+ === 0\)\) && \(v\d+ === 0\)\)\) rt\.fail/)
  })

  it('builds the tables (generated code)', () => {
    const code = (name: string) =>
      (
        cpu.compile(unitaryMultiplySource)[name]![TENET_FUNCTION] as {
          compiled: { sourceOf(n: string, i: boolean): string }
        }
      ).compiled.sourceOf(name, false)
    // the tables, and the loops reading them (no cos in the column loop)
    for (const name of ['f', 'g']) {
      expect(code(name)).toMatch(/Float64Array/)
      expect(code(name)).toMatch(/Math\.cos\(p\d\[i\d+\]\)/)
    }
  })
})
