/**
 * Element loads reused across the statements of a block (`reusedLoads` of `@tenet/ir/backend`):
 * the generated code of paper 000's branch-keeper merge reads each row index once per iteration,
 * and random merge-shaped programs — conditions that read elements under `&&` and `||`, some of
 * them out of range exactly where a guard is false, with writes of the arrays, of the indices and
 * calls between them — compute the same bits as the reference interpreter, forwards and
 * backwards, with checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { backendUnderTest, conformanceProblems, referenceBackend, runConformance } from '@tenet/testing'
import { sparseDotSource } from '../../ad/src/examples/papers.js'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend)

function source(text: string, name: string, checks: boolean): string {
  const m = compileModule(parse({ text, name: 'loads' }), { registry, backend: 'cpu', checks })
  const info = (m[name] as unknown as Record<symbol, { compiled: { sourceOf(n: string, inv: boolean): string } }>)[
    Symbol.for('tenet.function')
  ]!
  return info.compiled.sourceOf(name, false)
}

describe('element loads reused across statements (cpu backend)', () => {
  it('reads the row indices of the branch-keeper merge once per iteration, behind flags', () => {
    const code = source(sparseDotSource, 'sparse_dot', false)
    // p4 = arowval, p7 = browval: each loaded in the first condition (under &&) and reused in
    // the keeper's decision through its flag (the second load there runs only when the flag is not set)
    expect(code.match(/p4\[/g)).toHaveLength(2)
    expect(code.match(/p7\[/g)).toHaveLength(2)
    expect(code).toMatch(/\(h\d+ = true, l\d+ = p4\[v\d+\]\)/)
    expect(code).toMatch(
      /\(h\d+ \? l\d+ : \(h\d+ = true, l\d+ = p7\[v\d+\]\)\) < \(h\d+ \? l\d+ : \(h\d+ = true, l\d+ = p4\[v\d+\]\)\)/,
    )
  })

  it('reads an element again after a write to its array or its index', () => {
    const text = `fn f(y: f64, x: f64[], i: i32, n: i32) {
  for k in 0..n {
    y += x[i] * 2.0
    if (y > 0.0, ~) { x[0] += 1.0 }
    y += x[i]
    i += 1
    y -= x[i] * 0.5
  }
}`
    const code = source(text, 'f', false)
    // once before the branch (reused by nothing: the branch may write x), once after, once after i changes
    expect(code.match(/p1\[p2\]/g)).toHaveLength(3)
    expect(code).not.toMatch(/let l\d+/)
  })
})

/** A small deterministic generator. */
function rng(seed: number): () => number {
  let s = seed * 2654435761 + 7
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    return ((s >>> 8) & 0xffff) / 0x10000
  }
}

/**
 * A merge-shaped program: a loop whose conditions compare the elements of two index lists at
 * cursors `ia` and `ib` that run past the lists' ends (each such read guarded by `ia < len(av)`,
 * under `&&`, or by `ia >= len(av) ||`), with statements between them that may write the lists,
 * the cursors, or call a function that writes one.
 */
function mergeProgram(seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const cmp = () => pick(['<', '==', '!=', '<=', '>'])
  const ga = 'ia < len(av)',
    gb = 'ib < len(bv)'
  const guardedA = () =>
    pick([`${ga} && av[ia] ${cmp()} ${pick(['0', '2', 'bv[i]'])}`, `ia >= len(av) || av[ia] ${cmp()} 1`])
  const guardedB = () =>
    pick([`${gb} && bv[ib] ${cmp()} ${pick(['1', 'av[i]'])}`, `ib >= len(bv) || bv[ib] ${cmp()} 2`])
  const both = () => `${ga} && ${gb} && av[ia] ${cmp()} bv[ib]`
  const cond = () => pick([guardedA, guardedB, both, () => `(${guardedA()}) ${pick(['&&', '||'])} (${guardedB()})`])()
  const stmt = () =>
    pick([
      () => `if (${cond()}, ~) { r += ${pick(['0.5', 'x[i]', 'f64(av[i])'])} }`,
      () => `if (${cond()}, ~) { s += bv[i] } else { t += 1 }`,
      () => `r += f64(av[i] * bv[i]) * ${pick(['0.25', 'x[i]'])}`,
      () => `t += av[i] - bv[i]`,
    ])()
  const mid = () =>
    pick([
      '',
      '',
      `av[${pick(['i', 'k'])}] += ${pick(['1', 't'])}`,
      'bv[k] -= 1',
      `g(${pick(['av', 'bv'])}, k)`,
      `if (t > 0, ~) { av[i] += 1 }`,
      'ia += 1',
      'ib += 2',
    ])
  const body = Array.from({ length: 3 + Math.floor(r() * 3) }, () => [stmt(), mid()].filter(Boolean).join('\n    '))
  return `fn g(a: i32[], k: i32) { a[k] += 2 }
fn f(r: f64, s: i32, t: i32, ia: i32, ib: i32, k: i32, av: i32[], bv: i32[], x: f64[], m: i32) {
  for i in 0..m {
    ${body.join('\n    ')}
    ia += ${pick(['1', '2'])}
    ib += 1
  }
}`
}

function mergeArgs(seed: number): unknown[] {
  const r = rng(seed + 1000)
  const n = 4 + Math.floor(r() * 4)
  const ints = () => Int32Array.from({ length: n }, () => Math.floor(r() * 5) - 1)
  // the cursors start anywhere in the lists and run past their ends
  return [
    0.25,
    1,
    0,
    Math.floor(r() * n),
    Math.floor(r() * n),
    Math.floor(r() * n),
    ints(),
    ints(),
    Float64Array.from({ length: n }, () => r() - 0.5),
    n,
  ]
}

describe('random merge-shaped programs: the cpu backend agrees with the interpreter, checks on and off', () => {
  const backends = [
    referenceBackend(),
    backendUnderTest(cpuBackend),
    { ...backendUnderTest(cpuBackend, { checks: false }), name: 'cpu (checks off)' },
  ]
  it('150 programs, two argument sets each', () => {
    const failures: string[] = []
    let reused = 0
    for (let seed = 0; seed < 150; seed++) {
      const text = mergeProgram(seed)
      if (/let l\d+ = 0, h\d+ = false/.test(source(text, 'f', false))) reused++
      for (let k = 0; k < 2; k++) {
        const problems = conformanceProblems(
          runConformance({ source: text, entry: 'f' }, mergeArgs(seed * 2 + k), backends),
        )
        if (problems.length) failures.push(`seed ${seed}:\n${text}\n${problems.join('\n')}`)
      }
    }
    expect(failures.slice(0, 4).join('\n\n')).toBe('')
    // most programs reuse a guarded load somewhere (the test exercises the flags)
    expect(reused).toBeGreaterThan(75)
  })
})
