/**
 * The passes that run with run-time checks on (`CHECKED_PASSES` of `@tenet/ir`) keep every check:
 * the same errors (code, message, source location) as the reference interpreter, where it raises
 * them and only there (`describeCheckedPasses` of `@tenet/testing/vitest`), and the generated code
 * shows that they applied.
 *
 * - `scalar-arrays`: a small array ancilla used at literal positions becomes scalars, and its
 *   deallocation check stays the array's (`deallocArray`, one check over every element);
 * - `tabulate`: a table of cos θ and sin θ replaces the rotations' evaluations, and the bounds
 *   check of each angle read stays the angle array's;
 * - `interchange`, `jam`, `hoist-calls`: the unitary multiply's column loop runs innermost, two
 *   rotations per pass, their cos θ and sin θ computed before it, and (`hoist-bounds`, a symbolic
 *   stride) the column loop's bounds checks of the matrix hoisted before it too: no check, no cos
 *   left in the column loop.
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
    expect(code).toMatch(/if \(!\(\(\$near\(v\d+, 0\) && \$near\(v\d+, 0\)\) && \$near\(v\d+, 0\)\)\) rt\.fail/)
  })

  it('moves the column loop innermost, with neither a check nor a cos in it (generated code)', () => {
    const code = (name: string) =>
      (
        cpu.compile(unitaryMultiplySource)[name]![TENET_FUNCTION] as {
          compiled: { sourceOf(n: string, i: boolean): string }
        }
      ).compiled.sourceOf(name, false)
    const f = code('f')
    // the innermost loops (those with no loop inside): the column loops, one of a jammed pair of
    // rotations, one of the leftover rotation
    const innermost = [...f.matchAll(/for \(let [^{]*\{([^{}]*)\}/g)].map((m) => m[1]!)
    expect(innermost).toHaveLength(2)
    for (const body of innermost) {
      expect(body).toMatch(/p0\[[^\]]*\] = /)
      expect(body).not.toMatch(/rt\.fail|Math\.(cos|sin)/)
    }
    // (the pair's three rows: the row they share is stored once, by the second rotation)
    expect(innermost[0]!.match(/p0\[[^\]]*\] = /g)).toHaveLength(3)
    // one cos per rotation (two for the pair, one for the leftover), no uncompute, no table
    expect(f.match(/Math\.cos/g)).toHaveLength(3)
    expect(f).not.toMatch(/Float64Array/)
  })
})
