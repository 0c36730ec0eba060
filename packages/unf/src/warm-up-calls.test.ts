/**
 * The feedback warm-up of generated functions (\`withFeedbackWarmUp\` in codegen.ts): a first call
 * whose arguments hold an array longer than 17 elements first runs the function 12 times on them
 * cut to 17. Where no array is longer (scalar programs, every \`unfPrimitive\`'s value and partials,
 * short arrays) there is no warm-up: the program's primitives are called as often on the first
 * call as on the next (review 18e: 13 times as often). The rows of an \`R[][]\` argument given as
 * plain arrays of numbers are cut too (review 18e: left whole, a first call took 7× as long). What
 * else holds: the caller's arrays (nested, in tuples) are not written by the short runs, a first
 * call whose primitive throws a non-error reports that value and a second call is fine, blocked
 * scans give the same value and gradient on the first call as on later ones, and gradients after
 * the warm-up match finite differences.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import { compileText } from './compile.js'
import { finiteDifferences, maxScaledError } from './test-util.js'

/** A registry with `counted(x) = 2x`, which counts its calls in `calls.n`. */
function counting() {
  const calls = { n: 0 }
  const registry = createRegistry().registerPrimitive({
    specificationVersion: 'v1',
    name: 'counted',
    kind: 'pure',
    arity: 1,
    description: '2x, counting its calls',
    evaluate: (x: number) => {
      calls.n++
      return 2 * x
    },
    partials: () => [2],
  })
  return { registry, calls }
}

describe('the feedback warm-up (review 18e)', () => {
  it('a registry primitive mapped over 5 elements is called 5 times by the first call (not 65)', () => {
    const { registry, calls } = counting()
    const c = compileText('(A: R[]) => sum(map((x) => counted(x), A))', { registry })
    const A = Float64Array.of(0, 1, 2, 3, 4)
    expect(c.value(A)).toBe(20)
    const first = calls.n
    calls.n = 0
    c.value(A)
    expect(calls.n).toBe(5)
    expect(first).toBe(5)
  })

  it('a scalar program calls its registry primitive once on its first call (not 13)', () => {
    const { registry, calls } = counting()
    const c = compileText('(x: R) => counted(x) * 3', { registry })
    expect(c.value(1.5)).toBe(9)
    expect(calls.n).toBe(1)
  })

  it.each([
    ['Float64Array rows', (r: number[]) => Float64Array.from(r)],
    ['plain-array rows (accepted: only the outer array is checked)', (r: number[]) => r],
  ])('%s of an R[][] argument are cut short: the short runs cost at most 12 × 17 elements a row', (_, row) => {
    const { registry, calls } = counting()
    const c = compileText('(M: R[][]) => sum(map((row) => sum(map((x) => counted(x), row)), M))', { registry })
    const M = [0, 1].map((k) => row(Array.from({ length: 1000 }, (_, i) => k + i / 1000)))
    const v = c.value(M)
    // the real call: 2000; the short runs: 12 × 2 × 17 (not 12 × 2000: a first call 13× as long)
    expect(calls.n).toBeLessThanOrEqual(2000 + 12 * 2 * 17)
    expect(c.value(M)).toBe(v)
  })

  it("the short runs do not write the caller's arrays (nested, in tuples); the value is the later calls'", () => {
    const c = compileText(
      '(A: R[], M: R[][], T: (R[], R)) => logsumexp(map((x, y) => x * y * T.2, A, T.1)) + sum(map((row) => prod(row), M))',
    )
    const A = Float64Array.from({ length: 40 }, (_, i) => Math.sin(i))
    const M = Array.from({ length: 30 }, (_, r) =>
      Float64Array.from({ length: 40 }, (_, i) => 1 + 0.01 * Math.cos(r + i)),
    )
    const T = [Float64Array.from({ length: 40 }, (_, i) => i / 40), 2]
    const copies = () => [A.slice(), M.map((r) => r.slice()), [(T[0] as Float64Array).slice(), T[1]]]
    const before = JSON.stringify(copies(), (_, v) => (v instanceof Float64Array ? Array.from(v) : v))
    const args = [A, M, T]
    const g1 = c.gradient(...args)
    const v1 = c.value(...args)
    expect(JSON.stringify(copies(), (_, v) => (v instanceof Float64Array ? Array.from(v) : v))).toBe(before)
    expect(c.value(...args)).toBe(v1)
    const g2 = c.gradient(...args)
    expect(g2[0]).toBe(g1[0])
    expect(Array.from(g2[1][0] as Float64Array)).toEqual(Array.from(g1[1][0] as Float64Array))
  })

  it('a first call whose primitive throws a non-error reports it; the next call is fine', () => {
    const registry = createRegistry().registerPrimitive({
      specificationVersion: 'v1',
      name: 'boom',
      kind: 'pure',
      arity: 1,
      description: 'throws a string above 100',
      evaluate: (x: number) => {
        if (x > 100) throw 'above 100'
        return x
      },
      partials: () => [1],
    })
    const c = compileText('(A: R[]) => sum(map((x) => boom(x), A))', { registry })
    let thrown: unknown
    try {
      c.value(Float64Array.of(1, 200))
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBe('above 100')
    expect(c.value(Float64Array.of(1, 2))).toBe(3)
  })

  it('blocked scans: first calls as later calls, and gradients after the warm-up match finite differences', () => {
    const texts = [
      '(A: R[]) => sum(scanl((a, x) => a + x, 0, A))',
      '(A: R[]) => sum(map((s, x) => s * x, shift1R(scanl((a, x) => a * x, 1, A)), A))',
      '(A: R[]) => sum(map((s, x) => s * x, shift1L(scanr((a, x) => a + x, 0, A)), A))',
      '(A: R[]) => prod(A)',
    ]
    for (const text of texts) {
      for (const n of [0, 4, 17, 18, 4097]) {
        const A = Float64Array.from({ length: n }, (_, i) => 1 + 0.01 * Math.sin(i + 1))
        const c = compileText(text)
        const [v, g] = c.gradient(A.slice())
        const [w, h] = c.gradient(A.slice())
        expect(v, `${text} ${n}`).toBe(w)
        expect(Array.from(g[0] as Float64Array)).toEqual(Array.from(h[0] as Float64Array))
        if (n > 0 && n <= 20) {
          const fd = finiteDifferences((x: unknown) => c.value(x) as number, [A])
          expect(maxScaledError(Array.from(g[0] as Float64Array), fd), `${text} ${n}`).toBeLessThan(1e-6)
        }
      }
    }
  })
})
