/**
 * Pass `hoist-invariants` (see @tenet/ir's passes) on the compiled programs: the cpu and wasm
 * backends, checks on and off, give the reference interpreter's results bit for bit, forwards
 * and backwards, on random programs the pass changes and on float loops written for it; a
 * hoisted read that the loop would not have made (zero trips) neither fails nor traps, and a
 * hoisted NaN does not trip a deallocation check.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction } from '@tenet/ir'
import { hoistInvariants } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, preprocess } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import {
  backendUnderTest,
  optimisedIr,
  programProblems,
  raisedError,
  randomProgram,
  referenceBackend,
} from '@tenet/testing'
import { wasmBackend } from './index.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)

/** Whether the pass changes a function of the program's source. */
function changed(source: string): boolean {
  const m = parse({ text: source, name: 'p' })
  const p = check(m.functions.map(preprocess), m.hosts, createRegistry())
  return [...p.functions.values()].some((f) => printFunction(hoistInvariants(f)) !== printFunction(f))
}

describe('hoist-invariants on compiled programs', () => {
  it('random programs it changes agree with the interpreter on cpu and wasm, checks on and off, and round-trip', () => {
    const backends = [
      referenceBackend(),
      backendUnderTest(cpuBackend),
      { ...backendUnderTest(cpuBackend, { checks: false }), name: 'cpu (checks off)' },
      backendUnderTest(wasmBackend),
      { ...backendUnderTest(wasmBackend, { checks: false }), name: 'wasm (checks off)' },
    ]
    const failures: string[] = []
    let tried = 0
    for (let seed = 0; tried < 10 && seed < 2000; seed++) {
      const p = randomProgram(seed, { features: { stack: false } })
      if (!changed(p.source)) continue
      tried++
      const problems = programProblems(p, backends, { argSets: 2 })
      if (problems.length) failures.push(`seed ${seed}:\n${p.source}\n${problems.join('\n')}`)
    }
    expect(tried).toBe(10)
    expect(failures.slice(0, 3).join('\n\n')).toBe('')
  })

  const floats = `
fn f(y: f64[], x: f64[], theta: f64[], j: i32, n: i32, a: f64) {
  for i in 0..n {
    y[i] += x[i] * cos(theta[j]) - sin(a) * x[i]
    for k in 0..n { x[k] += y[i] * exp(a / 4.0) * theta[j] }
    if (x[i] > 0.0, ~) { y[i] -= sqrt(abs(a)) }
  }
}`
  const args = (n: number, j: number, a: number) => [
    Float64Array.from({ length: 4 }, (_, i) => Math.sin(i + 1)),
    Float64Array.from({ length: 4 }, (_, i) => Math.cos(2 * i + 1) * 0.1),
    Float64Array.from([0.3, -1.2, 2.5]),
    j,
    n,
    a,
  ]
  const run = (backend: string, checks: boolean, a: unknown[]) => {
    const m = compileModule(parse({ text: floats, name: 'floats' }), { registry: registry(), backend, checks })
    const f = m.f as ((...x: unknown[]) => unknown) & { inverse: (...x: unknown[]) => unknown }
    const fwd = a.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v))
    f(...fwd)
    const back = fwd.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v))
    f.inverse(...back)
    const arrays = (xs: unknown[]) => xs.filter((v) => ArrayBuffer.isView(v)).map((v) => Array.from(v as Float64Array))
    return { forward: arrays(fwd), back: arrays(back) }
  }

  it('float loops: the same doubles as the interpreter, forwards and backwards, on cpu and wasm, checks on and off', () => {
    for (const a of [args(4, 1, 0.7), args(3, 2, -2.0)]) {
      const want = run('interpreter', true, a)
      expect(want.back).toEqual(run('interpreter', true, a).back)
      for (const backend of ['cpu', 'wasm'])
        for (const checks of [true, false]) expect(run(backend, checks, a), `${backend} checks ${checks}`).toEqual(want)
    }
  })

  it('a loop that does not run reads nothing out of bounds; a NaN invariant trips no check', () => {
    // theta[9] is out of bounds, but the loop runs zero times; cos(∞) is NaN
    for (const backend of ['interpreter', 'cpu', 'wasm'])
      for (const checks of [true, false]) {
        expect(() => run(backend, checks, args(0, 9, 0.5)), `${backend} checks ${checks}`).not.toThrow()
        const nan = run(backend, checks, args(2, 1, Number.POSITIVE_INFINITY))
        expect(Number.isNaN(nan.forward[0]![0]), `${backend} checks ${checks}`).toBe(true)
      }
  })
})

describe('hoist-invariants with checks on: the check that fails first is the reference one', () => {
  // (review 11, D4: an invariant read out of bounds was hoisted before the zero factor of the
  // first iteration's earlier statement, and before the bounds check of its own statement's target)
  const refC = referenceBackend({ checks: true })
  const engines = [
    ['cpu', backendUnderTest(cpuBackend, { checks: true })],
    ['wasm', backendUnderTest(wasmBackend, { checks: true })],
  ] as const
  const cases: Array<[string, string, boolean]> = [
    ['a zero factor of an earlier statement', 'y[j] *= z[j]\n    y[j] += x[idx[k]]', true],
    [
      'an earlier statement that writes, then the invariant read fails',
      'y[j] += z[j]\n    y[j] += sin(x[k + 5])',
      false,
    ],
    ['a dealloc check of the first iteration', 't <- z[j] * 2.0\n    y[j] += t * cos(x[idx[k]])\n    t -> z[j]', false],
    ['the target of its own statement out of bounds', 'w[j] += x[idx[k]] * 2.0', true],
    // (not a call of it: \`hoist-calls\` may reorder two failing checks, see its module comment)
    ['an earlier read of its own statement out of bounds', 'y[j] += w[j] * x[idx[k]]', true],
    ['an earlier statement reads out of bounds', 's += w[j]\n    y[j] += x[idx[k]]', true],
    ['only the invariant read fails', 's += 1.5\n    s += x[idx[k]]', true],
  ]
  // (the third: whether the loop runs to its end with every read in range)
  for (const [label, loop, runs] of cases)
    it(`${label}: the reference error (code, message, place) on cpu and wasm`, () => {
      const src = `fn f(y: f64[], z: f64[], x: f64[], w: f64[], idx: i32[], k: i32, n: i32, s: f64) {
  for j in 0..n {
    ${loop}
  }
}`
      const args = () => [
        Float64Array.of(1, 2, 3),
        Float64Array.of(0, 2, 3),
        Float64Array.of(1, 2, 3),
        new Float64Array(0),
        Int32Array.of(7, 0),
        0,
        3,
        0.5,
      ]
      const want = raisedError(() => refC.compile(src).f!(...args()))
      expect(want).not.toBe('no error')
      for (const [name, b] of engines)
        expect(`${name}: ${raisedError(() => b.compile(src).f!(...args()))}`).toBe(`${name}: ${want}`)
      // in range, where the loop runs with the read hoisted: the reference's values
      const inRange = () => [
        Float64Array.of(1, 2, 3),
        Float64Array.of(0.5, 2, 3),
        Float64Array.of(1, 2, 3),
        Float64Array.of(4, 5, 6),
        Int32Array.of(1, 0),
        0,
        3,
        0.5,
      ]
      const values = (b: typeof refC) => {
        const a = inRange()
        const r = raisedError(() => b.compile(src).f!(...a))
        return `${r} ${JSON.stringify(a.filter((x) => ArrayBuffer.isView(x)).map((x) => Array.from(x as Float64Array)))}`
      }
      const ok = values(refC)
      if (runs) expect(ok).toMatch(/^no error/)
      for (const [name, b] of engines) expect(`${name}: ${values(b)}`).toBe(`${name}: ${ok}`)
      // the pass applies: as it is where nothing before the read may fail (the last case), else in
      // a second version of the loop where the read is in range
      const ir = optimisedIr(cpuBackend, src, { checks: true })
      if (loop.startsWith('s += 1.5')) expect(ir).toContain('$inv0 += x[idx[k]]')
      else if (loop.includes('x[idx[k]]')) expect(ir).toMatch(/\$inv\d+: f64 <- [^\n]*x\[idx\[k\]\][\s\S]*\} else \{/)
    })
})
