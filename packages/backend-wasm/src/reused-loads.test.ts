/**
 * Element loads reused across the statements of a block (`reusedLoads` of `@tenet/ir/backend`),
 * on both code generators: random merge-shaped programs — conditions that read elements under
 * `&&` and `||`, some of them out of range exactly where a guard is false, with writes of the
 * arrays, of the indices and calls between them — compute the same bits as the reference
 * interpreter on cpu and wasm, forwards and backwards, with checks on and off. (The cpu code of
 * the merge itself: backend-cpu's `reused-loads.test.ts`.)
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, type Stmt } from '@tenet/ir'
import { reusedLoads } from '@tenet/ir/backend'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, conformanceProblems, referenceBackend, runConformance } from '@tenet/testing'
import { wasmBackend } from './index.js'

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

/** Whether the loop of \`f\` reuses a load that its first statement reads conditionally. */
function reusesThroughFlag(text: string): boolean {
  const m = parse(text)
  const f = check(m.functions, m.hosts, createRegistry()).functions.get('f')!
  const loop = f.body[0] as Extract<Stmt, { kind: 'for' }>
  return reusedLoads(loop.body).some((occurrences) =>
    [...occurrences.values()].some((o) => !o.define && o.load.conditional),
  )
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

describe('random merge-shaped programs: cpu and wasm agree with the interpreter, checks on and off', () => {
  const registry = createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
  const backends = [
    referenceBackend(),
    backendUnderTest(cpuBackend, { registry }),
    { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
    backendUnderTest(wasmBackend, { registry }),
    { ...backendUnderTest(wasmBackend, { registry, checks: false }), name: 'wasm (checks off)' },
  ]
  it('60 programs, two argument sets each', () => {
    const failures: string[] = []
    let flagged = 0
    for (let seed = 0; seed < 60; seed++) {
      const text = mergeProgram(seed)
      if (reusesThroughFlag(text)) flagged++
      for (let k = 0; k < 2; k++) {
        const problems = conformanceProblems(
          runConformance({ source: text, entry: 'f' }, mergeArgs(seed * 2 + k), backends),
        )
        if (problems.length) failures.push(`seed ${seed}:\n${text}\n${problems.join('\n')}`)
      }
    }
    expect(failures.slice(0, 4).join('\n\n')).toBe('')
    // most programs reuse a load that their first statement reads under && or || (the flags are exercised)
    expect(flagged).toBeGreaterThan(30)
  })
})

describe('a reused load made only when its flag is clear computes no shared value there', () => {
  // `a1[i0 - 2]` is loaded in one run and reused in the next (across the `if`); in that run
  // `i0 - 2` is a common subexpression that the reuse would be the first to compute, inside the
  // branch that makes the load when the flag is clear: the flag is set, the branch does not run,
  // and `a0[i0 - 2]` read the unset local (index 0). The fuzzer found it (i32 seed 159911138).
  const text = `fn f(a1: i32[], x0: i32, a0: i32[], x1: i32, x2: i32, x3: i32) {
  for i0 in 3..len(a1) {
    t1: i32 <- 0
    t2: i32 <- x1 - a0[i0 - 2]
    a0[1] ^= a1[i0]
    t1 += a1[i0 - 2]
    t4: i32 <- 0
    if (x2 == -4, t4 == 1) { t4 += 1 }
    t4 -> 0
    t1 -= a1[i0 - 2]
    a0[1] ^= a1[i0]
    x3 += a0[i0 - 2]
    t2 -> x1 - a0[i0 - 2]
    t1 -> 0
  }
}`
  it('wasm with checks on and off agrees with the interpreter', () => {
    const registry = createRegistry().registerBackend(wasmBackend)
    const backends = [
      referenceBackend(),
      backendUnderTest(wasmBackend, { registry }),
      { ...backendUnderTest(wasmBackend, { registry, checks: false }), name: 'wasm (checks off)' },
    ]
    const args = [Int32Array.of(4, 416, -589, -431086865, 1), 7, Int32Array.of(-4, 65536, -789), 2, -3, -560]
    expect(conformanceProblems(runConformance({ source: text, entry: 'f' }, args, backends))).toEqual([])
  })
})
