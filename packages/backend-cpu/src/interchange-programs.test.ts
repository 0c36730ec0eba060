/**
 * Random column programs (the shape of paper 000's unitary multiply and of its adjoint): a loop
 * over columns l around a nest over (j, i) with a counter k stepped once per rotation. Without
 * checks, `interchange` moves the column loop innermost where its dependence test proves the
 * columns independent and a cosine the columns share is to be computed once per rotation, which
 * `hoist-calls` then does. The
 * programs must compute the same bits as the reference interpreter (checks on), forwards and
 * backwards, on the cpu backend with checks on and off (where the same passes run,
 * `CHECKED_PASSES`), whether or not the passes apply (a float
 * rotation is not exactly invertible: the round trip is checked to 1e-9, the bits of the inverse
 * against the interpreter's); each
 * program also states whether the loop must move, and the optimised IR is checked for it, and
 * for `jam` running pairs of rotations per pass over the columns.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import {
  backendUnderTest,
  columnArgs,
  columnProblems,
  columnProgram,
  optimisedIr,
  referenceBackend,
  runConformance,
} from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = createRegistry()
const backends = [
  referenceBackend(),
  backendUnderTest(cpuBackend, { registry }),
  { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
]
/**
 * The optimised IR the cpu backend compiles (checks off, or on), without the loops as written that
 * the alias tests of the passes keep (\`if (… && $apart(a, b), ~) { moved } else { as written }\`, see
 * \`apart.ts\` of \`@tenet/ir\`): the \`else\` branch of each such \`if\` left out.
 */
const optimised = (source: string, checks = false): string => {
  const lines = optimisedIr(cpuBackend, source, { name: 'columns', checks }).split('\n')
  const out: string[] = []
  for (let i = 0; i < lines.length; i++) {
    out.push(lines[i]!)
    if (!/\$apart\(.*, ~\) \{$/.test(lines[i]!)) continue
    const indent = lines[i]!.length - lines[i]!.trimStart().length
    const pad = ' '.repeat(indent)
    let j = i + 1
    while (lines[j] !== `${pad}} else {` && lines[j] !== `${pad}}`) out.push(lines[j++]!)
    if (lines[j] === `${pad}} else {`) while (lines[j] !== `${pad}}`) j++
    out.push(lines[j]!)
    i = j
  }
  return out.join('\n')
}

/** Whether a printed function calls cos inside the body of a loop over l. */
function cosInColumnLoop(ir: string): boolean {
  let depth: number | undefined
  for (const line of ir.split('\n')) {
    const indent = line.length - line.trimStart().length
    if (depth !== undefined && indent <= depth) depth = undefined
    if (depth === undefined && /^ *for l in/.test(line)) depth = indent
    else if (depth !== undefined && /\bcos\(/.test(line)) return true
  }
  return false
}

/** How many of the programs `jam` ran in pairs (counted over all seeds). */
let jammed = 0

describe('random column programs: the cpu backend, checks on and off, agrees with the interpreter', () => {
  for (let first = 0; first < 48; first += 16) {
    it(`seeds ${first}..${first + 15}: the bits agree, and the column loop moves exactly where it is legal and pays`, () => {
      const failures: string[] = []
      let moved = 0
      for (let seed = first; seed < first + 16; seed++) {
        const c = columnProgram(seed)
        for (let k = 0; k < 2; k++) {
          const found = columnProblems(
            runConformance({ source: c.source, entry: 'f' }, columnArgs(c, seed * 3 + k), backends),
          )
          if (found.length) failures.push(`seed ${seed}:\n${c.source}\n${found.join('\n')}`)
        }
        const ir = optimised(c.source)
        // moved: the column loop sits inside the loop over i
        const inside = ir.indexOf('for l in') > ir.indexOf('for i in')
        if (inside) moved++
        // jammed (pass `jam`): the loop over i runs pairs of rotations, only around a moved column loop
        if (/for i in .* by -?2 \{/.test(ir)) {
          jammed++
          if (!inside) failures.push(`seed ${seed}: jammed, not moved\n${ir}`)
        }
        if (inside !== (c.legal && c.pays))
          failures.push(`seed ${seed}: moved ${inside}, legal ${c.legal}, pays ${c.pays}\n${c.source}\n${ir}`)
        // with checks on, the same passes move and jam the same loops (`CHECKED_PASSES`)
        const checkedIr = optimised(c.source, true)
        if (checkedIr.indexOf('for l in') > checkedIr.indexOf('for i in') !== inside)
          failures.push(`seed ${seed}: moved ${inside} without checks, not so with checks\n${checkedIr}`)
        if (/for i in .* by -?2 \{/.test(checkedIr) !== /for i in .* by -?2 \{/.test(ir))
          failures.push(`seed ${seed}: jammed differently with checks\n${checkedIr}`)
        // moved, the rotation's cos θ is computed once per rotation, outside the column loops
        if (inside && cosInColumnLoop(ir)) failures.push(`seed ${seed}: cos inside a column loop\n${ir}`)
      }
      expect(failures.slice(0, 2).join('\n\n')).toBe('')
      expect(moved).toBeGreaterThan(0)
    })
  }
  it('some of them (those above) run in pairs of rotations (pass `jam`)', () => {
    expect(jammed).toBeGreaterThan(3)
  })
})
