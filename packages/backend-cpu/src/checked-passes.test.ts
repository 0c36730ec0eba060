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
 * - `unroll-swaps`: a swap loop runs two iterations per pass, each with its post-condition check;
 * - `pair-series`: a map loop of series runs three elements at a time, each with its checks (where
 *   two elements fail it may reach the later one's failing check first: the shared tests).
 * - `interchange`, `jam`, `hoist-calls`: the unitary multiply's column loop runs innermost, two
 *   rotations per pass, their cos θ and sin θ computed before it, and (`hoist-bounds`, a symbolic
 *   stride) the column loop's bounds checks of the matrix hoisted before it too: no check, no cos
 *   left in the column loop.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, TENET_FUNCTION } from '@tenet/reversible'
import {
  backendUnderTest,
  leafCallBatchProgram,
  pairScratchProgram,
  raisedError,
  swapPostBatchProgram,
  swapPostProgram,
  unitaryMultiplySource,
} from '@tenet/testing'
import { describeCheckedPasses } from '@tenet/testing/vitest'
import { cpuBackend } from './index.js'

const cpu = backendUnderTest(cpuBackend, { checks: true })

describeCheckedPasses(cpu)

/** The generated JavaScript of function \`name\` of a compiled module (its inverse's with \`inverse\`). */
function generated(module: Record<string, unknown>, name: string, inverse = false): string {
  const f = module[name] as Record<symbol, { compiled: { sourceOf(n: string, i: boolean): string } }>
  return f[TENET_FUNCTION]!.compiled.sourceOf(name, inverse)
}

/** The generated code of a moved loop: the branch its \`$apart\` test leads to (the \`else\` holds the loop as written). */
function movedBranch(code: string): string {
  const lines = code.split('\n')
  const at = lines.findIndex((l) => l.includes('$apart('))
  const head = lines.findIndex((l, i) => i > at && /^\s*if \(c\d+\) \{$/.test(l))
  const indent = lines[head]!.length - lines[head]!.trimStart().length
  const end = lines.findIndex((l, i) => i > head && l === `${' '.repeat(indent)}} else {`)
  expect(end).toBeGreaterThan(head)
  return lines.slice(head, end).join('\n')
}

/**
 * \`code\` without the loops as written of pass \`hoist-bounds\` (the \`else\` arm of an \`if\` on a
 * test \`!runs || …\` of a loop's bounds: the version that checks each access, which runs only where
 * one is out of range).
 */
function withoutCheckedVersions(code: string): string {
  const lines = code.split('\n')
  const out: string[] = []
  for (let k = 0; k < lines.length; k++) {
    const l = lines[k]!
    out.push(l)
    const test = /^(\s*)const (c\d+) = \(\(!\(/.exec(l)
    if (!test || lines[k + 1] !== `${test[1]}if (${test[2]}) {`) continue
    // (the then arm as it is, the else arm left out)
    const indent = test[1]!
    const elseAt = lines.findIndex((x, i) => i > k && x === `${indent}} else {`)
    const end = lines.findIndex((x, i) => i > elseAt && x === `${indent}}`)
    out.push(...lines.slice(k + 1, elseAt), `${indent}}`)
    k = end
  }
  return out.join('\n')
}

describe('the generated code with checks on', () => {
  it('replaces the array by scalars and keeps one deallocArray check over its elements (generated code)', () => {
    const src = pairScratchProgram('f64', 'x[3 * j + c] - x[3 * i + c]')
    // (pass \`implied-checks\` leaves this check out where the check of the length decides it: off here)
    disabledPasses.add('implied-checks')
    let code: string
    try {
      code = generated(cpu.compile(src), 'f')
    } finally {
      disabledPasses.delete('implied-checks')
    }
    expect(code).not.toMatch(/Float64Array|fill\(|\$allNear|rt\.near/)
    // (a float's check against zero is written inline: the same test as `$near`, no call; after
    // \`y -= y\` of pass \`finite-uncompute\`, y is +0 or NaN, and the test a comparison with zero)
    expect(code).toMatch(/if \(!\(\(\(v(\d+) === 0\) && \(v(\d+) === 0\)\) && \(v(\d+) === 0\)\)\) rt\.fail/)
  })

  it('moves the column loop innermost, with neither a check nor a cos in it (generated code)', () => {
    const code = (name: string) => generated(cpu.compile(unitaryMultiplySource), name)
    // the moved loop runs where x and θ are apart (`$apart`), the loop as written elsewhere
    expect(code('f')).toMatch(/const (c\d+) = \(\(0 < p3\) && \$apart\(AP0, p1, p0\)\);\n\s*if \(\1\) \{/)
    // (once: where the arrays lie never changes, so the \`if\`'s \`~\` post-condition is not checked)
    expect(code('f').match(/\$apart\(/g)).toHaveLength(1)
    // (the loops of hoist-bounds' versions without checks: those with them run only where an
    // index is out of range)
    const f = withoutCheckedVersions(movedBranch(code('f')))
    // the innermost loops (those with no loop inside): the column loops, one of a jammed pair of
    // rotations, one of the leftover rotation, one of the rotation loop as written (where its
    // range does not fit the pairs: \`range-guard.ts\`)
    // (the first copy of a body that runs two iterations per pass, see \`copiesPerPass\`)
    const innermost = [...f.matchAll(/for \(let [^{]*\{\n\s*\{([^{}]*)\}\n[^{}]*break;\n\s*\{[^{}]*\}\n\s*\}/g)].map(
      (m) => m[1]!,
    )
    expect(innermost).toHaveLength(3)
    for (const body of innermost) {
      expect(body).toMatch(/p0\[[^\]]*\] = /)
      expect(body).not.toMatch(/rt\.fail|Math\.(cos|sin)/)
    }
    // (the pair's three rows: the row they share is stored once, by the second rotation)
    expect(innermost[0]!.match(/p0\[[^\]]*\] = /g)).toHaveLength(3)
    // one cos per rotation (two for the pair, one for the leftover, one for the loop as written),
    // no uncompute, no table
    expect(f.match(/Math\.cos/g)).toHaveLength(4)
    expect(f).not.toMatch(/Float64Array/)
  })

  it('unrolls the swap loops by two, each copy with its post-condition check (generated code)', () => {
    const code = (inverse: boolean) => generated(cpu.compile(swapPostProgram), 'f', inverse)
    for (const inverse of [false, true]) {
      // two loops (the routine's and its uncompute's), each left by the `else` arm of its copy
      expect(code(inverse).match(/break;/g)).toHaveLength(2)
      // the loops' post-conditions: one check per copy (four), and the routine's entry check (its
      // uncompute's, which the routine's exit decided, is left out: pass \`implied-checks\`)
      expect(code(inverse).match(/rt\.fail\(\d+\);/g)).toHaveLength(5)
    }
  })

  it('pairs the map loop of series, each lane with its checks (generated code)', () => {
    const code = generated(cpu.compile(swapPostBatchProgram), 'batch')
    // the joint loop of three lanes, then each lane's own loop (unrolled by two: left by `break`)
    expect(code).toMatch(/while \(\(\(\(v\d+ < p2\[i\d+\]\) && \(v\d+ < p2\[\(\(i\d+ \+ 1\) \| 0\)\]\)\) && /)
    expect(code.match(/break;/g)).toHaveLength(4)
    // the lanes' leaf calls inlined (the leaf is the module's function 0; \`f\` is 1, called by the
    // loop of the iterations left)
    const leafCalls = generated(cpu.compile(leafCallBatchProgram), 'batch')
    expect(leafCalls).not.toMatch(/\b[FB]I?0\(/)
    expect(leafCalls).toMatch(/\bFI1\(/)
    // every lane's post-condition check, in the joint loop's two copies and in its own loop's
    expect(code.match(/rt\.fail\(\d+\);/g)!.length).toBeGreaterThanOrEqual(3 * 2 + 3 * 2)
  })

  it('checks a float against zero inline, as the reference does: at the tolerance, -0, NaN, ±Infinity, any tolerance', () => {
    const src = 'fn f(y: f64, x: f64) {\n  t <- 0.0\n  t += x\n  y += t\n  t -> 0.0\n}'
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
    const compiled = (backend: string, tolerance: number) =>
      compileModule(parse({ text: src, name: 'near' }), { registry, backend, checks: true, tolerance }).f!
    expect(generated({ f: compiled('cpu', 1e-8) }, 'f')).toMatch(
      /if \(!\(v(\d+) === 0 \|\| Math\.abs\(v\1\) <= \$tol\)\) rt\.fail/,
    )
    const xs = [
      0,
      -0,
      5e-9,
      -1e-8,
      1e-8,
      1.0000001e-8,
      -3e-8,
      1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
    ]
    let failures = 0
    for (const tolerance of [1e-8, 0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      for (const x of xs) {
        const want = raisedError(() => compiled('interpreter', tolerance)(0, x))
        if (want !== 'no error') failures++
        expect([tolerance, x, raisedError(() => compiled('cpu', tolerance)(0, x))]).toEqual([tolerance, x, want])
      }
    }
    expect(failures).toBeGreaterThan(10)
  })
})
