/**
 * The feedback warm-up of generated functions (`withFeedbackWarmUp` in codegen.ts): the first call
 * first runs the function on its arguments cut short, so that a long first call does not optimise
 * its first loop on the stack before the code after the loop has type feedback, code which then
 * deoptimised on every later call (the `unf` workload's prod and logsumexp, 5–15× slower in some
 * processes). The long calls run in a child process with V8's deoptimisation trace, whose
 * bailouts of the generated function are counted; optimisation is synchronous there
 * (`--no-concurrent-recompilation --no-concurrent-osr`) so that the loop code is compiled in the
 * first call, as a loaded machine's background compiler may or may not do.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { compileText } from './compile.js'
import { UnfError } from './errors.js'
import { finiteDifferences, maxScaledError } from './test-util.js'

const child = fileURLToPath(new URL('./feedback-warm-up/long-first-call.child.mjs', import.meta.url))

/** Deoptimisations of generated code in `calls` value and `calls` gradient calls on n elements. */
function bailouts(text: string, n: number, calls: number): { count: number; result: Record<string, number> } {
  const r = spawnSync(
    process.execPath,
    ['--trace-deopt', '--no-concurrent-recompilation', '--no-concurrent-osr', child, text, String(n), String(calls)],
    { encoding: 'utf8', timeout: 60000, maxBuffer: 64 * 1024 * 1024 },
  )
  expect(r.status, r.stderr).toBe(0)
  const lines = r.stdout.trim().split('\n')
  const count = lines.filter((l) => l.startsWith('[bailout') && l.includes('unfGenerated')).length
  return { count, result: JSON.parse(lines[lines.length - 1]!) as Record<string, number> }
}

describe('feedback warm-up of generated functions', () => {
  test.each([['(A: R[]) => prod(A)'], ['(A: R[]) => logsumexp(A)'], ['(A: R[]) => sum(map((x) => x * x, A))']])(
    '%s: long calls after a long first call do not deoptimise (the value and gradient of the child agree)',
    (text) => {
      const n = 100000
      const { count, result } = bailouts(text, n, 30)
      // without the warm-up: a bailout per call (90 to 160 in 60 calls)
      expect(count).toBeLessThan(4)
      const c = compileText(text)
      const a = Float64Array.from({ length: n }, (_, i) => 1 + 0.001 * Math.sin(i))
      expect(result.value).toBe(c.value(a))
      const [v, g] = c.gradient(a)
      expect(result.gradientValue).toBe(v)
      expect(result.first).toBe((g[0] as Float64Array)[0])
    },
    60000,
  )

  test('a first call with arguments of the wrong kind or shape reports its error (the warm-up swallows only its own)', () => {
    const c = compileText('(A: R[], B: R[]) => dot(A, B)')
    expect(() => c.gradient([1, 2], new Float64Array(2))).toThrow(UnfError)
    expect(() => c.gradient([1, 2], new Float64Array(2))).toThrow(/argument 1: expected a Float64Array/)
    const d = compileText('(A: R[], B: R[]) => dot(A, B)')
    expect(() => d.value(new Float64Array(3), new Float64Array(4))).toThrow(/different lengths/)
  })

  test('reused results: the first call returns arrays of its own length, not the short calls’ buffers', () => {
    const text = '(A: R[], M: R[][]) => prod(A) + sum(map((row) => dot(row, A), M))'
    const fresh = compileText(text)
    const reused = compileText(text, { reuseResults: true })
    for (const n of [40, 3, 0, 25]) {
      const A = Float64Array.from({ length: n }, (_, i) => 1 + 0.01 * Math.cos(i))
      const M = Array.from({ length: 30 }, (_, r) => Float64Array.from({ length: n }, (_, i) => Math.sin(r + i)))
      const [v, g] = reused.gradient(A, M)
      const [w, h] = fresh.gradient(A, M)
      expect(v).toBe(w)
      expect((g[0] as Float64Array).length).toBe(n)
      expect(g[0]).toEqual(h[0])
      expect(g[1]).toEqual(h[1])
      if (n > 0) {
        const fd = finiteDifferences((x: unknown) => fresh.value(x, M) as number, [A])
        expect(maxScaledError(Array.from(g[0] as Float64Array), fd)).toBeLessThan(1e-6)
      }
    }
  })
})
