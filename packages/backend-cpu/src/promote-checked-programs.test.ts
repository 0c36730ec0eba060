/**
 * `promote-checked`: with run-time checks on, the cpu backend keeps the elements a loop accumulates
 * at indices it never changes in locals (`promotableElements` of `@tenet/ir/backend` with asserts
 * and branches), as it did with checks off only; each bounds assert of such an element becomes a
 * load of its own (`a[i] ?? rt.fail(…)`). Programs shaped like the leapfrog's accelerations (pairs
 * `i != j`, the accumulation only in the branch), a routine whose ancilla a check finds wrong in
 * the middle of the loop, f64 and f32, arrays too short, loops that never take the branch or run
 * zero times: the interpreter's values bit for bit forwards and backwards, and every failure the
 * error (code, message, location) it is without the pass and in the interpreter.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

afterEach(() => disabledPasses.delete('promote-checked'))

/** Pair accumulation as in the leapfrog's `accel`: `a[2i]`, `a[2i + 1]` only under `i != j`. */
const pairs = (T: string) => `fn f(a: ${T}[], x: ${T}[], n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (i != j, ~) {
        routine {
          d: ${T} <- 0.0
          d += x[j] - x[i]
        }
        a[2 * i] += d * d
        a[2 * i + 1] += d / (x[j] + 2.0)
        ~routine
      }
    }
  }
}`

/** The same accumulation in a loop that touches no other array: what \`.core\` cannot alias. */
const branchOnly = (T: string) => `fn f(a: ${T}[], s: ${T}, n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (i != j, ~) {
        a[2 * i] += s * 0.25
        a[2 * i + 1] -= s / (a[2 * i] + 3.0)
      }
    }
  }
}`

/** An accumulation outside any branch, with an ancilla whose deallocation fails where x[j] != 1. */
const strict = `fn f(a: f64[], x: f64[], n: i32) {
  for i in 0..n {
    for j in 0..n {
      t: f64 <- 0.0
      t += x[j]
      a[i] += t * 0.5
      t -> 1.0
    }
  }
}`

const compile = (source: string, backend: 'cpu' | 'interpreter', checks = true) =>
  compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks }).f!

const text = (v: unknown): string =>
  JSON.stringify(
    (v as unknown[]).map((x) =>
      ArrayBuffer.isView(x) ? Array.from(x as Float64Array, (e) => (Object.is(e, -0) ? '-0' : e)) : x,
    ),
  )

/** What a call gives: its results as exact text, or its error (code, message, location). */
function outcome(f: (...a: unknown[]) => unknown, args: () => unknown[], inverse = false): string {
  let got = ''
  const e = raisedError(() => {
    got = text((inverse ? (f as unknown as { inverse: (...a: unknown[]) => unknown }).inverse : f)(...args()))
  })
  return e === 'no error' ? got : e
}

describe('promote-checked (cpu backend, checks on)', () => {
  it('keeps the accumulated elements in locals, each bounds assert a load of its own', () => {
    const code = generatedCode(compile(branchOnly('f64'), 'cpu'))!
    // loaded before the inner loop, stored after it
    expect(code).toMatch(/let r\d+ = p0\[x\d+\] \?\? 0;/)
    expect(code).toMatch(/\n\s*p0\[x\d+\] = r\d+;/)
    // the bounds assert of the element, where it was: a load whose value is dropped
    expect(code).toMatch(/\n\s*p0\[c\d+\] \?\? rt\.fail\(\d+, /)
    expect(code).toMatch(/r\d+ = \(r\d+ \+ /)
    expect(code).not.toMatch(/p0\[c\d+\] = /)
    // switched off: the loop loads and stores the element
    disabledPasses.add('promote-checked')
    const off = generatedCode(compile(branchOnly('f64'), 'cpu'))!
    expect(off).not.toMatch(/let r\d+ = p0\[x\d+\] \?\? 0;/)
    expect(off).toMatch(/p0\[c\d+\] = \(\(p0\[c\d+\] \?\? rt\.fail/)
  })

  /** A typed array type: `from` a list of numbers. */
  type Typed = { from(a: ArrayLike<number>): Float64Array | Float32Array }
  const list = (n: number, f: (k: number) => number): number[] => Array.from({ length: n }, (_, k) => f(k))

  const cases: Array<[string, string, (A: Typed) => () => unknown[]]> = []
  for (const T of ['f64', 'f32'])
    for (const [la, n] of [
      [8, 4],
      [7, 4], // a[7] out of range: the last i's second element
      [3, 4], // a[4] out of range at i = 2
      [0, 1], // one body: the branch never runs, nothing is read
      [0, 0], // the loop runs zero times
      [2, 1],
      [6, 3],
    ] as const)
      cases.push([
        `${T} pairs, len(a) = ${la}, n = ${n}`,
        pairs(T),
        (A) => () => [A.from(list(la, (k) => k / 8)), A.from(list(Math.max(n, 1), (k) => 1 + k / 3 + (k % 2) / 7)), n],
      ])
  for (const T of ['f64', 'f32'])
    for (const [la, n] of [
      [8, 4],
      [7, 4],
      [3, 4],
      [0, 1],
      [0, 0],
    ] as const)
      cases.push([
        `${T} branch only, len(a) = ${la}, n = ${n}`,
        branchOnly(T),
        (A) => () => [A.from(list(la, (k) => k / 8)), 1.5, n],
      ])
  for (const [la, x] of [
    [3, [1, 1, 1]],
    [3, [1, 1, 2]], // the ancilla fails at j = 2 of i = 0
    [2, [1, 1, 1]], // a[2] out of range at i = 2
    [3, [1, 2, 1]],
  ] as const)
    cases.push([
      `strict, len(a) = ${la}, x = ${x.join(' ')}`,
      strict,
      (A) => () => [A.from(list(la, (k) => k)), A.from(x), x.length],
    ])

  for (const [label, source, args] of cases)
    it(`${label}: the interpreter's values and failures, forwards and backwards, as without the pass`, () => {
      const A = label.startsWith('f32') ? Float32Array : Float64Array
      const on = compile(source, 'cpu')
      const ref = compile(source, 'interpreter')
      disabledPasses.add('promote-checked')
      const off = compile(source, 'cpu')
      disabledPasses.delete('promote-checked')
      const mk = args(A)
      for (const inverse of [false, true]) {
        const got = outcome(on, mk, inverse)
        expect(got, `inverse: ${inverse}`).toBe(outcome(off, mk, inverse))
        expect(got, `inverse: ${inverse}`).toBe(outcome(ref, mk, inverse))
      }
    })

  it("through `.core`, one array for two parameters: the interpreter's values", () => {
    // (the unchecked entry lets a host pass one memory twice: a parameter's elements stay in
    // memory where another array parameter of the loop could alias them)
    const sum = `fn f(y: f64[], v: f64[], n: i32) {
  for i in 0..n {
    for k in 0..n { y[k] += v[i] * 0.5 }
  }
}`
    const own = `fn f(a: f64[], n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (i != j, ~) { a[2 * i] += 0.25 }
    }
  }
}`
    const runs: Array<[string, () => unknown[]]> = [
      [
        pairs('f64'),
        () => {
          const a = Float64Array.from(list(8, (k) => 1 + k / 8))
          return [a, a, 4]
        },
      ],
      [
        sum,
        () => {
          const y = Float64Array.from(list(4, (k) => 1 + k))
          return [y, y, 4]
        },
      ],
      [own, () => [Float64Array.from(list(8, (k) => k)), 4]],
    ]
    for (const [source, args] of runs) {
      const core = (backend: 'cpu' | 'interpreter', off = false) => {
        if (off) disabledPasses.add('promote-checked')
        const f = compile(source, backend) as unknown as { core: (...x: unknown[]) => void }
        disabledPasses.delete('promote-checked')
        const a = args()
        const e = raisedError(() => f.core(...a))
        // (a failed call leaves its arrays part-updated: the error is what is compared)
        return e === 'no error' ? text(a) : e
      }
      expect(core('cpu'), source).toBe(core('cpu', true))
      // (\`pairs\` through one memory: \`finite-uncompute\` makes \`d −= x[j] − x[i]\` \`d − d\`
      // whatever \`a\` wrote, with or without this pass, where the interpreter's check fails)
      if (source !== runs[0]![0]) expect(core('cpu'), source).toBe(core('interpreter'))
    }
    // (the loop that touches no other array parameter keeps its elements in locals)
    expect(generatedCode(compile(own, 'cpu'))!).toMatch(/let r\d+ = p0\[x\d+\] \?\? 0;/)
    expect(generatedCode(compile(pairs('f64'), 'cpu'))!).not.toMatch(/let r\d+ = p0\[x\d+\] \?\? 0;/)
  })

  it('the failures above include out-of-range elements and a failed deallocation', () => {
    const A = Float64Array
    const f = compile(pairs('f64'), 'cpu')
    expect(outcome(f, () => [new A(7), A.from([1, 2, 3, 4]), 4])).toMatch(
      /^runtime\/out-of-bounds \| index 7 is out of bounds for `a`.* \| 10:9$/s,
    )
    const g = compile(strict, 'cpu')
    expect(outcome(g, () => [new A(3), A.from([1, 1, 2]), 3])).toMatch(/^runtime\/dealloc \| .* \| 7:7$/s)
  })
})
