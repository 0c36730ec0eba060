import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import {
  backendUnderTest,
  conformanceProblems,
  programProblems,
  randomProgram,
  referenceBackend,
  runConformance,
  sameBits,
  type BackendUnderTest,
} from '@tenet/testing'

/** Random programs in this file (the round-trip file runs as many others in parallel). */
const PROGRAMS = 2000
const BATCH = 250

// the cpu backend twice: with run-time checks, and without (its optimisations that need the
// checks off, such as keeping array elements of a loop in locals, run only there)
const backends: BackendUnderTest[] = [referenceBackend(), backendUnderTest(cpuBackend)]
const randomBackends: BackendUnderTest[] = [
  ...backends,
  { ...backendUnderTest(cpuBackend, { checks: false }), name: 'cpu (checks off)' },
]

describe(`${PROGRAMS} random programs: inverse(forward(x)) === x on every backend, backends agree bit for bit`, () => {
  for (let first = 0; first < PROGRAMS; first += BATCH) {
    it(`seeds ${first}..${first + BATCH - 1}`, () => {
      const failures: string[] = []
      for (let seed = first; seed < first + BATCH; seed++) {
        const p = randomProgram(seed)
        const problems = programProblems(p, randomBackends, { argSets: 2 })
        if (problems.length) failures.push(`seed ${seed}:\n${p.source}\n${problems.join('\n')}`)
      }
      expect(failures.slice(0, 3).join('\n\n')).toBe('')
    })
  }
})

describe('runConformance', () => {
  const program = { source: 'fn f(y: i32, x: i32, a: i32[]) { y += x * x; a[0] -= y }', entry: 'f' }

  it('reports forward and inverse results per backend', () => {
    const results = runConformance(program, [1, 3, new Int32Array([5, 6])], backends)
    expect(results.map((r) => r.backend)).toEqual(['interpreter', 'cpu'])
    for (const r of results) {
      expect(r.error).toBeUndefined()
      expect(r.forward).toEqual([10, 3, new Int32Array([-5, 6])])
      expect(r.inverse).toEqual([1, 3, new Int32Array([5, 6])])
      expect(r.roundTrip).toBe(true)
    }
    expect(conformanceProblems(results)).toEqual([])
  })

  it('does not modify the arguments it is given', () => {
    const a = new Int32Array([5, 6])
    runConformance(program, [1, 3, a], backends)
    expect(a).toEqual(new Int32Array([5, 6]))
  })

  it('catches a backend whose inverse is wrong and one that disagrees', () => {
    const cpu = backendUnderTest(cpuBackend)
    const broken: BackendUnderTest = {
      name: 'broken',
      compile(source) {
        const m = cpu.compile(source)
        const f = m.f!
        const wrong = Object.assign(
          (...args: unknown[]) => f(...args).map((v) => (typeof v === 'number' ? v + 1 : v)),
          { inverse: f.inverse },
        )
        return { f: wrong as unknown as typeof f }
      },
    }
    const problems = conformanceProblems(
      runConformance(program, [1, 3, new Int32Array([5, 6])], [backends[0]!, broken]),
    )
    expect(problems.some((p) => p.includes('broken: inverse(forward(x)) != x'))).toBe(true)
    expect(problems.some((p) => p.includes('broken and interpreter disagree'))).toBe(true)
  })

  it('reports compile errors instead of throwing', () => {
    const results = runConformance({ source: 'fn f(y: i32) { y += y }', entry: 'f' }, [1], backends)
    expect(results.every((r) => r.error !== undefined && !r.roundTrip)).toBe(true)
    expect(conformanceProblems(results)[0]).toMatch(/interpreter: threw TenetStaticError/)
  })

  it('sameBits: numbers by Object.is, typed arrays byte for byte (NaN payloads count there)', () => {
    expect(sameBits(Number.NaN, 0 / 0)).toBe(true)
    expect(sameBits(-0, 0)).toBe(false)
    const a = new Float64Array([Number.NaN]),
      b = new Float64Array(1)
    new DataView(b.buffer).setBigUint64(0, 0x7ff8000000000001n, true)
    expect(Number.isNaN(b[0])).toBe(true)
    expect(sameBits(a, b)).toBe(false)
    expect(sameBits([1, a], [1, a.slice()])).toBe(true)
    expect(sameBits(new Int32Array(1), new Uint32Array(1))).toBe(false)
  })

  it('compares -0 and 0 as different bits', () => {
    const m = { source: 'fn f(y: f64, x: f64) { y += x }', entry: 'f' }
    const [r] = runConformance(m, [-0, 0], [backends[0]!])
    // -0 + 0 = 0, and 0 - 0 = 0: the round trip loses the sign of zero, which bit-identity sees
    expect(r!.roundTrip).toBe(false)
  })
})
