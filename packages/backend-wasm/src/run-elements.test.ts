/**
 * Elements a straight-line run keeps in locals (`runElements` of `@tenet/ir/backend`, the wasm
 * code generator's `runHeld`): random accumulator-shaped runs — elements at offsets of one base
 * updated several times and read back, other elements of the same arrays (distinct, neighbouring,
 * or at an index the run cannot tell apart), index variables that the run writes, bijection calls,
 * reads under `&&` — compute the same bits as the reference interpreter on cpu and wasm,
 * forwards and backwards, with checks on and off; and a targeted program's generated code keeps
 * its accumulators in locals (fewer loads and stores) with the bits of the cpu backend.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printExpr, type Stmt } from '@tenet/ir'
import { runElements } from '@tenet/ir/backend'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, conformanceProblems, referenceBackend, runConformance } from '@tenet/testing'
import { wasmBackend } from './index.js'
import { compile, expectSameRuns, lastRunElements } from './test-util.js'

/** A small deterministic generator. */
function rng(seed: number): () => number {
  let s = seed * 2654435761 + 11
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    return ((s >>> 8) & 0xffff) / 0x10000
  }
}

/**
 * A loop whose body is one run: an offset ancilla `o`, then updates of g and h at `o + c` (the
 * accumulators), reads of them and of x, writes at an index the run cannot tell apart (`k`), of
 * `k` itself, a SWAP, and `&&` reading an element that may be out of range.
 */
function runProgram(seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const off = () => pick(['0', '1', '2'])
  // a value that reads the other array (an update may not read the one it writes)
  const val = (other: string) =>
    pick([
      () => `x[i] * ${pick(['0.5', '1.25', `${other}[o + ${off()}]`])}`,
      () => `${other}[o + ${off()}] - x[${pick(['i', 'k'])}]`,
      () => `${other}[o + ${off()}] * 0.5`,
      () => `x[k] + 0.75`,
    ])()
  const update = () => {
    const [a, b] = pick([
      ['g', 'h'],
      ['g', 'h'],
      ['h', 'g'],
    ] as const)
    return `${a}[o + ${off()}] ${pick(['+=', '-='])} ${val(b)}`
  }
  const stmt = () =>
    pick([
      update,
      update,
      update,
      () => `s += ${pick(['g', 'h'])}[o + ${off()}] * ${pick(['x[i]', '2.0'])}`,
      () =>
        pick([
          '',
          '',
          'g[k] += x[i]',
          `h[o + 3] += g[o + ${off()}]`,
          'k += 1',
          'SWAP(g[o + 1], h[o + 1])',
          's += h[o + 2]',
        ]),
      () => (r() < 0.3 ? 'if (k < len(g) && g[k] > 0.0, ~) { s += 1.0 }' : ''),
    ])()
  const body = Array.from({ length: 5 + Math.floor(r() * 6) }, stmt).filter(Boolean)
  return `fn f(s: f64, k: i32, g: f64[], h: f64[], x: f64[], m: i32) {
  for i in 0..m {
    o: i32 <- i * 2
    ${body.join('\n    ')}
    o -> i * 2
  }
}`
}

function runArgs(seed: number): unknown[] {
  const r = rng(seed + 500)
  const m = 1 + Math.floor(r() * 3)
  // (room for k to move on: the cpu backend without checks does not guard its accesses)
  const n = 2 * m + 40
  // (multiples of 1/8: the sums and products are exact, so every run round-trips to the bit)
  const f = (len: number) => Float64Array.from({ length: len }, () => Math.floor(r() * 64 - 32) / 8)
  return [0.5, Math.floor(r() * 8), f(n), f(n), f(n), m]
}

/** Whether a loop body of f's keeps an element of a run in a local. */
function holds(text: string): boolean {
  const m = parse(text)
  const f = check(m.functions, m.hosts, createRegistry()).functions.get('f')!
  const loop = f.body.find((s) => s.kind === 'for') as Extract<Stmt, { kind: 'for' }>
  return runElements(loop.body).length > 0
}

describe('run elements on compiled programs', () => {
  it('random accumulator-shaped runs agree with the interpreter on cpu and wasm, checks on and off', () => {
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
    const backends = [
      referenceBackend(),
      backendUnderTest(cpuBackend, { registry }),
      { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
      backendUnderTest(wasmBackend, { registry }),
      { ...backendUnderTest(wasmBackend, { registry, checks: false }), name: 'wasm (checks off)' },
    ]
    const failures: string[] = []
    let held = 0
    for (let seed = 0; seed < 50; seed++) {
      const text = runProgram(seed)
      if (holds(text)) held++
      for (let k = 0; k < 2; k++) {
        const problems = conformanceProblems(
          runConformance({ source: text, entry: 'f' }, runArgs(seed * 2 + k), backends),
        )
        if (problems.length) failures.push(`seed ${seed}:\n${text}\n${problems.join('\n')}`)
      }
    }
    expect(failures.slice(0, 3).join('\n\n')).toBe('')
    // most programs keep an element in a local (the rest refuse: an index the run cannot tell apart, a call)
    expect(held).toBeGreaterThan(20)
  })

  it("keeps an adjoint's accumulators in locals: fewer loads and stores, the bits of the cpu backend", () => {
    // each gx[o + c] is added into once per term, as the adjoint of a triangular product does
    const text = `fn f(gx: f64[], gq: f64[], q: f64[], x: f64[], gy: f64[], n: i32) {
  for i in 0..n {
    o: i32 <- i * 3
    gx[o + 0] += gy[o + 0] * q[0]
    gq[0] += gy[o + 0] * x[o + 0]
    gx[o + 0] += gy[o + 1] * q[1]
    gx[o + 1] += gy[o + 1] * q[2]
    gq[1] += gy[o + 1] * x[o + 0]
    gx[o + 0] += gy[o + 2] * q[3]
    gx[o + 1] += gy[o + 2] * q[4]
    gx[o + 2] += gy[o + 2] * q[5]
    gq[2] += gy[o + 2] * x[o + 1] * gx[o + 1]
    o -> i * 3
  }
}`
    const wasm = compile(text, 'wasm')
    // f holds gx[o + 0], gx[o + 1], gy[o + 0…2], x[o + 0] (below); so does its inverse
    expect(lastRunElements).toBe(12)
    compile(text, 'wasm', true)
    expect(lastRunElements).toBe(0)
    const cpu = compile(text, 'cpu'),
      scalar = compile(text, 'wasm', false, false)
    const g = (n: number, s: number) =>
      Float64Array.from({ length: n }, (_, i) => Math.sin(s * (i + 1)) * 10 ** ((i % 5) - 2))
    for (const n of [0, 1, 2, 5])
      expectSameRuns([wasm, scalar, cpu], () => [g(15, 1.1), g(3, 2.3), g(6, 0.7), g(15, 1.9), g(15, 0.3), n])
    // what the loop body keeps: the accumulators gx[o + 0], gx[o + 1] (stored after their last
    // update), the reloaded gy and x elements (read only); gx[o + 2] and gq are touched once
    const held = (src: string) => {
      const m = parse(src)
      const f = check(m.functions, m.hosts, createRegistry()).functions.get('f')!
      const loop = f.body[0] as Extract<Stmt, { kind: 'for' }>
      return runElements(loop.body).map((e) => `${e.array}[${printExpr(e.element.index)}] ${e.first}..${e.lastWrite}`)
    }
    expect(held(text)).toEqual([
      'gx[o + 0] 1..6',
      'gy[o + 0] 1..-1',
      'x[o + 0] 2..-1',
      'gy[o + 1] 3..-1',
      'gx[o + 1] 4..7',
      'gy[o + 2] 6..-1',
    ])
    // an access the run cannot tell apart from them (gx[n]), or a call that takes gx, leaves gx alone
    expect(held(text.replace('gq[1] += gy[o + 1] * x[o + 0]', 'gq[1] += gy[o + 1] * gx[n]'))).not.toContain(
      'gx[o + 0] 1..6',
    )
    expect(held(text.replace('gq[1] += gy[o + 1] * x[o + 0]', 'SWAP(gq[1], gx[o + 2])')).join()).not.toContain('gx[')
    // so does a read under && (it may not be made)
    expect(
      held(text.replace('gq[1] += gy[o + 1] * x[o + 0]', 'if (n > 0 && gx[o + 0] > 0.0, ~) { gq[1] += 1.0 }')).join(),
    ).not.toContain('gx[')
  })

  it('keeps a running maximum that an unrolled loop writes and reads back (`rm[pk + c - 1]`) in locals', () => {
    // a log-sum-exp's running maximum over K = 5 components per point; unroll writes the copies'
    // indices as pk + 1, pk + 2, … (not pk + 2 - 1), so the run sees one element where one is
    const text = `fn f(s: f64, rm: f64[], main: f64[], n: i32) {
  for p in 0..n {
    pk: i32 <- p * 5
    rm[pk] += main[pk]
    for c in 1..5 {
      rm[pk + c] += max(rm[pk + c - 1], main[pk + c])
    }
    s += rm[pk + 4]
    pk -> p * 5
  }
}`
    const wasm = compile(text, 'wasm')
    // rm[pk … pk + 4] (main's elements are read once each), forwards and backwards
    expect(lastRunElements).toBe(10)
    const cpu = compile(text, 'cpu'),
      scalar = compile(text, 'wasm', false, false),
      checked = compile(text, 'wasm', true)
    const g = (n: number, s: number) => Float64Array.from({ length: n }, (_, i) => Math.sin(s * (i + 1)) * 10)
    for (const n of [0, 1, 3])
      expectSameRuns([wasm, scalar, checked, cpu], () => [0.25, new Float64Array(15), g(15, 1.3), n])
  })
})
