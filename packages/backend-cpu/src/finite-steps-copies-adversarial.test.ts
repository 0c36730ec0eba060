/**
 * Adversarial review (round 15, c): `finite-steps`, the zeroing deallocation check of small
 * pooled arrays, and four copies per pass, against the reference interpreter (checks on).
 */
import { describe, expect, it } from 'vitest'
import { disabledPasses, type PassName } from '@tenet/ir/backend'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { cpuBackend } from './index.js'

const reference = referenceBackend({ checks: true })
const cpu = backendUnderTest(cpuBackend, { checks: true })
const cpuOff = backendUnderTest(cpuBackend, { checks: false })
const referenceOff = referenceBackend({ checks: false })

function withoutPass<T>(pass: PassName, f: () => T): T {
  disabledPasses.add(pass)
  try {
    return f()
  } finally {
    disabledPasses.delete(pass)
  }
}

function outcome(run: () => unknown): unknown {
  try {
    const v = run()
    return JSON.stringify(v, (_k, x) => (typeof x === 'number' ? (Object.is(x, -0) ? '-0' : String(x)) : x))
  } catch {
    return raisedError(run)
  }
}

const code = (engine: typeof cpu, text: string, name: string): string =>
  (
    engine.compile(text)[name]![TENET_FUNCTION] as {
      compiled: { sourceOf(n: string, i: boolean): string }
    }
  ).compiled.sourceOf(name, false)

type Args = () => unknown[]
function same(src: string, name: string, cases: Args[], opts: { inverse?: boolean; off?: boolean } = {}) {
  const ref = opts.off ? referenceOff : reference
  const eng = opts.off ? cpuOff : cpu
  for (const a of cases)
    for (const inverse of opts.inverse ? [false, true] : [false]) {
      type M = ReturnType<typeof reference.compile>
      const call = (m: M) => (inverse ? m[name]!.inverse : m[name]!)(...a())
      const want = outcome(() => call(ref.compile(src)))
      expect(
        outcome(() => call(eng.compile(src))),
        `${inverse} ${a()}`,
      ).toEqual(want)
    }
}

describe('finite-steps', () => {
  it('len of a stack pushed between the loop and its inverse', () => {
    const src = `
fn f(out: f64[], x: f64[], s: stack<f64>, y: f64) {
  A: f64[] <- zeros(len(x) + 8)
  for t in 0..len(x) {
    q <- x[t] * 2.0
    A[t + len(s)] += q
    q -> x[t] * 2.0
  }
  push(s, y)
  for t in reverse 0..len(x) {
    q <- x[t] * 2.0
    A[t + len(s)] -= q
    q -> x[t] * 2.0
  }
  A -> zeros(len(x) + 8)
}`
    same(src, 'f', [
      () => [new Float64Array(3), Float64Array.of(1, 2, 3), [], 1.5],
      () => [new Float64Array(3), Float64Array.of(0, 0, 0), [], 1.5],
    ])
  })
})

const pad = Array.from({ length: 60 }, (_, i) => `  p += ${i + 1}.5 * 0.25`).join('\n')

describe('finite-steps: writes before the loop', () => {
  it('a write before the loop whose index wraps (65536 * 65536 + 1 is element 1)', () => {
    const src = `
fn f(out: f64, x: f64[], y: f64) {
  A: f64[] <- zeros(41)
  A[65536 * 65536 + 1] += y
  for t in 0..40 {
    q <- x[t] * 2.0
    A[t] += q
    q -> x[t] * 2.0
  }
  out += A[1]
  for t in reverse 0..40 {
    q <- x[t] * 2.0
    A[t] -= q
    q -> x[t] * 2.0
  }
  A[65536 * 65536 + 1] -= y
  A -> zeros(41)
}`
    same(src, 'f', [() => [0, Float64Array.from({ length: 40 }, (_, i) => i + 1), 1.5]], { inverse: true })
  })
})

describe('four copies per pass (checks off)', () => {
  const bodies = [
    'y[i] += y[i - 1] * c',
    'y[i + 1] += y[i] * c',
    'y[i] += y[i - 1] * c\n    y[i - 1] += y[i] * 0.5',
    'y[i - 1] -= y[i] * c',
    'y[i] += y[i - 2] + y[i - 1]',
    'k[i] += k[i - 1] * 3 + 1',
    'z[i] += z[i - 1] * z[1]',
  ]
  const ranges = ['2..n', 'reverse 2..n', '2..=n', 'reverse 2..=n', 'n..2 by -1', 'n..=2 by -1']
  it('recurrences and carried elements, every range form, trip counts 0..10: the interpreter’s bits', () => {
    for (const body of bodies)
      for (const range of ranges) {
        const src = `
fn f(y: f64[], k: i32[], z: f32[], c: f64, n: i32, p: f64) {
  for i in ${range} {
    ${body}
  }
${pad}
}`
        const c = code(cpuOff, src, 'f')
        expect(c, src).toMatch(/[+-]= 4\) \{/)
        for (let n = 1; n <= 12; n++) {
          const a = () => [
            Float64Array.from({ length: 16 }, (_, i) => Math.sin(i + 1)),
            Int32Array.from({ length: 16 }, (_, i) => i * 1000003),
            Float32Array.from({ length: 16 }, (_, i) => Math.fround(Math.cos(i))),
            1.25,
            n,
            0.5,
          ]
          same(src, 'f', [a], { inverse: true, off: true })
        }
      }
  })
  it('ranges at the i32 limits', () => {
    const src = `
fn f(y: f64[], a: i32, b: i32, p: f64) {
  for i in a..=b {
    y[i - a] += y[i - a + 1] * 0.5 + 1.0
  }
  for i in reverse a..=b {
    y[b - i + 1] += y[b - i] * 3.0 + 2.0
  }
${pad}
}`
    expect(code(cpuOff, src, 'f')).toMatch(/[+-]= 4\) \{/)
    const M = 2147483647
    const m = -2147483648
    for (const [a, b] of [
      [M - 5, M],
      [M, M],
      [M - 3, M],
      [m, m + 5],
      [m, m],
      [m, m + 3],
      [M - 1, M - 2],
    ])
      same(src, 'f', [() => [new Float64Array(9), a, b, 0.5]], { inverse: true, off: true })
  })
})

describe('four copies: Horner with dead carried stores (checks off)', () => {
  const horner = (range: string, inv: string, w: string, r: string, last: string, first: string) => `
fn f(e: f64, c: f64[], x: f64, y: f64, n: i32, p: f64) {
  acc: f64[] <- zeros(n + 1)
  acc[${first}] += c[${first}]
  for k in ${range} { acc[${w}] += acc[${r}] * x + c[${w}] }
  e += acc[${last}] - y
  for k in ${inv} { acc[${w}] -= acc[${r}] * x + c[${w}] }
  acc[${first}] -= c[${first}]
  acc -> zeros(n + 1)
${pad}
}`
  const programs = [
    horner('n - 1..=0 by -1', 'reverse n - 1..=0 by -1', 'k', 'k + 1', '0', 'n'),
    horner('reverse 0..n', '0..n', 'k', 'k + 1', '0', 'n'),
    horner('1..=n', 'reverse 1..=n', 'k', 'k - 1', 'n', '0'),
    horner('0..n', 'reverse 0..n', 'k + 1', 'k', 'n', '0'),
  ]
  it('every trip count 0..10: the interpreter’s bits, forwards and backwards', () => {
    for (const src of programs) {
      expect(code(cpuOff, src, 'f'), src).toMatch(/[+-]= 4\) \{/)
      for (let n = 0; n <= 10; n++)
        for (const x of [0.5, -1.25, Number.NaN, 1e200])
          same(
            src,
            'f',
            [() => [0.25, Float64Array.from({ length: 11 }, (_, i) => Math.sin(i + 1)), x, 0.125, n, 0.5]],
            { inverse: true, off: true },
          )
    }
  })
})

describe('finite-steps: strides, offsets and bases at the i32 limits (checks on)', () => {
  it('the reference’s values and errors, forwards and backwards (the pass rewrites most of them)', () => {
    let rewritten = 0
    for (const [a, step, d1, rd] of [
      [2, 1, 1, -2],
      [-2, 1, 1, 2],
      [1024, 1, 1, -1024],
      [2, -1, 1, 2],
      [2, 1, 1, -1],
      [2, 1, 1, 1],
    ] as const) {
      const range = step > 0 ? `s..s + n by ${step}` : `s + n..s by ${step}`
      const src = `
fn f(out: f64, x: f64[], k: f64, s: i32, n: i32, c: i32) {
  A: f64[] <- zeros(64)
  for t in ${range} {
    q <- A[${a} * t + c + ${rd}] * k + x[0]
    A[${a} * t + c] += q
    A[${a} * t + c + ${d1}] += q * k
    q -> A[${a} * t + c + ${rd}] * k + x[0]
  }
  out += A[5]
  for t in reverse ${range} {
    q <- A[${a} * t + c + ${rd}] * k + x[0]
    A[${a} * t + c] -= q
    A[${a} * t + c + ${d1}] -= q * k
    q -> A[${a} * t + c + ${rd}] * k + x[0]
  }
  A -> zeros(64)
}`
      if (/(v\d+)\[(\w+)\] = \(\1\[\2\] - \1\[\2\]\)/.test(code(cpu, src, 'f'))) rewritten++
      const cases: Args[] = []
      for (const s of [0, 5, -1073741824, 1073741823, -2147483648, 2147483640, 2097152, -2097152])
        for (const c of [0, 30, -2147483644, 2147483644, 4, -4, 2147483647, -2147483648])
          for (const n of [0, 1, 5]) cases.push(() => [0, Float64Array.of(0.5), 1.5, s, n, c])
      same(src, 'f', cases, { inverse: true })
      withoutPass('finite-steps', () => same(`${src}\n`, 'f', cases, { inverse: true }))
    }
    expect(rewritten).toBeGreaterThanOrEqual(4)
  })
})
