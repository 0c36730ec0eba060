/**
 * `replay-bound` (cpu code generator, checks on, see `replay-bound.ts`): the replayed uncall of a
 * fresh f64 array ancilla, followed by its deallocation check, is left out where the round-off
 * bound proves the check passes (the ancilla zeroed, the terms popped); elsewhere it runs. The
 * printed code with and without it, and the interpreter's values and errors (code, message,
 * location), forwards and backwards: round-off within the tolerance, a residual past it (the
 * check fails in both), a tolerance of 0, non-finite terms, shapes it must not take.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

afterEach(() => disabledPasses.delete('replay-bound'))

/** Pair terms added to a fresh ancilla in a routine (the leapfrog's accelerations), used, uncomputed. */
const pairs = (T: string) => `
fn acc(a: ${T}[], x: ${T}[], m: ${T}[], n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (i != j, ~) {
        routine {
          dx: ${T}[] <- zeros(3)
          for c in 0..3 { dx[c] += x[3 * j + c] - x[3 * i + c] }
          r2: ${T} <- 0.0
          r2 += dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
          r: ${T} <- 0.0
          r += sqrt(r2)
          s: ${T} <- 0.0
          s += m[j] / (r2 * r)
        }
        for c in 0..3 { a[3 * i + c] += s * dx[c] }
        ~routine
      }
    }
  }
}
fn f(y: ${T}[], x: ${T}[], m: ${T}[], n: i32) {
  for t in 0..2 {
    routine {
      a: ${T}[] <- zeros(3 * n)
      acc(a, x, m, n)
    }
    for i in 0..3 * n { y[i] += a[i] * 0.5 }
    ~routine
  }
}`

/** Terms summed into the elements of one ancilla (too many statements to inline): 1 then 1e20 leaves −1 in a[0] after the replay (its check fails). */
const sums = (between = '', T = 'f64') => `
fn acc(a: ${T}[], x: ${T}[], n: i32) {
  for j in 0..n {
${Array.from({ length: 17 }, (_, k) => `    a[${k}] += x[j] * ${k === 0 ? '1.0' : `${1 + k / 4}`}`).join('\n')}
  }
}
fn f(y: ${T}[], x: ${T}[], n: i32) {
  a: ${T}[] <- zeros(17)
  acc(a, x, n)
  y[0] += a[0]
${between}
  ~acc(a, x, n)
  a -> zeros(17)
}`

/** The ancilla written between the call and its uncall: not left out. */
const writtenBetween = sums('  a[0] += 1.0\n  a[0] -= 1.0')

type Options = { checks?: boolean; tolerance?: number }

/** The JavaScript of the recording copy \`acc$replay\` of \`f\`'s module. */
function replaySource(f: unknown): string {
  const info = (f as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string | undefined }
  }
  return info.compiled.sourceOf('acc$replay', false) ?? ''
}
const compile = (source: string, backend: 'cpu' | 'interpreter', options: Options = {}) =>
  compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks: true, ...options }).f!

/** The arrays after a call as exact text (−0 and NaN told apart), or its error. */
function outcome(
  f: ReturnType<typeof compile>,
  mk: () => Array<Float64Array | Float32Array>,
  inverse: boolean,
  n: number,
): string {
  const args = mk()
  const g = (inverse ? (f as unknown as { inverse: typeof f }).inverse : f) as unknown as (...a: unknown[]) => unknown
  const e = raisedError(() => g(...args, n))
  const text = args
    .map((a) => Array.from(a, (v: number) => (Object.is(v, -0) ? '-0' : String(v))).join(' '))
    .join(' / ')
  return `${e} | ${text}`
}

describe('replay-bound (cpu, checks on)', () => {
  it('the printed code: the recording sums the magnitudes (f64: of the terms; f32: of the partial sums), the uncall is left out where the bound passes', () => {
    const f64 = '5 \\* \\(\\$tp - m\\d+\\) \\* 1\\.1102230246251565e-16'
    const f32 = '3 \\* 5\\.960464477539063e-8'
    for (const [source, bound, partial] of [
      [pairs('f64'), f64, false],
      [sums(), f64, false],
      [pairs('f32'), f32, true],
      [sums('', 'f32'), f32, true],
    ] as const) {
      const code = generatedCode(compile(source, 'cpu'))!
      // the tape's top kept before the recording call, the uncall left out where the bound passes
      expect(code).toMatch(/const (m\d+) = \$tp;\n\s*FI\d+\(v\d+, /)
      expect(code).toMatch(
        new RegExp(
          `if \\(\\(\\$tp - m\\d+\\) <= 1048576 && \\$tol >= 1e-300 && mv\\d+ <= (?:8\\.98846567431158e\\+307|1\\.7014118346046923e\\+38) && ${bound} \\* mv\\d+ <= \\$tol\\) \\{ \\$tp = m\\d+; v\\d+\\.fill\\(0\\); \\} else BI\\d+\\(v\\d+, `,
        ),
      )
      // the recording function sums the magnitude of each term (f64), or of the value each recorded
      // update leaves in its element (f32)
      const recording = replaySource(compile(source, 'cpu'))
      const sumsElement = /p0\[[^\]]+\] = \((term\d+) = [^\n]*, (sum\d+) \+= Math\.abs\(\1\), \1\);/
      const sumsTerm = /\((term\d+) = \(\(top\d+ < [^\n]*, (sum\d+) \+= Math\.abs\(\1\), \1\)\);/
      expect(recording).toMatch(partial ? sumsElement : sumsTerm)
      expect(recording).not.toMatch(partial ? sumsTerm : sumsElement)
      expect(recording).toMatch(/\$tv = sum\d+;/)
      disabledPasses.add('replay-bound')
      const off = generatedCode(compile(source, 'cpu'))!
      disabledPasses.delete('replay-bound')
      expect(off).not.toMatch(/\$tv/)
      expect(off).toMatch(/\n\s*BI\d+\(v\d+, [^\n]*\);\n\s*if \(!\(\$allNearZ/)
    }
    // an ancilla written between the call and its uncall: not taken
    expect(generatedCode(compile(writtenBetween, 'cpu'))!).not.toMatch(/\$tv <=/)
  })

  const cases: Array<[string, string, () => Array<Float64Array | Float32Array>, number, Options]> = []
  for (const n of [0, 1, 2, 5, 9])
    cases.push([
      `pairs, n = ${n}`,
      pairs('f64'),
      () => [
        Float64Array.from({ length: 3 * n }, (_, k) => k / 3),
        Float64Array.from({ length: 3 * n }, (_, k) => 0.3 + k * 0.77 + (k % 3) * (k % 5) * 0.13),
        Float64Array.from({ length: n }, (_, k) => 1 / (k + 1)),
      ],
      n,
      {},
    ])
  for (const n of [0, 2, 5, 9])
    cases.push([
      `pairs, f32, n = ${n}`,
      pairs('f32'),
      () => [
        Float32Array.from({ length: 3 * n }, (_, k) => k / 3),
        Float32Array.from({ length: 3 * n }, (_, k) => 0.3 + k * 0.77 + (k % 3) * (k % 5) * 0.13),
        Float32Array.from({ length: n }, (_, k) => 1 / (k + 1)),
      ],
      n,
      {},
    ])
  // (f32: terms near 1 leave round-off of ~1e-7 after the replay: past the tolerance, the check fails;
  // terms of ~1e-4, a residual of ~1e-11, within it)
  for (const scale of [1, 1e-4, 3e-38])
    cases.push([
      `pairs, f32, masses ×${scale}`,
      pairs('f32'),
      () => [
        new Float32Array(9),
        Float32Array.from([0.1, 0.2, 0.3, 1.7, -2.1, 0.9, -0.4, 3.3, 1.25]),
        Float32Array.from([1, 2.5, 0.75], (v) => v * scale),
      ],
      3,
      {},
    ])
  cases.push([
    'pairs, f32, a NaN position',
    pairs('f32'),
    () => [new Float32Array(6), Float32Array.from([1, 2, 3, 1.5, Number.NaN, 3.5]), Float32Array.from([1e-4, 2e-4])],
    2,
    {},
  ])
  cases.push([
    'pairs, f32, an infinite mass',
    pairs('f32'),
    () => [new Float32Array(6), Float32Array.from([1, 2, 3, 1.5, 2, 3.5]), Float32Array.from([Infinity, 2e-4])],
    2,
    {},
  ])
  cases.push([
    'pairs, f32, masses overflowing f32 in the terms',
    pairs('f32'),
    () => [new Float32Array(6), Float32Array.from([1, 2, 3, 1.000001, 2, 3]), Float32Array.from([3e38, 3e38])],
    2,
    {},
  ])
  cases.push([
    'pairs, huge terms (the bound fails, the replay runs)',
    pairs('f64'),
    () => [new Float64Array(6), Float64Array.from([1, 2, 3, 1.5, 2, 3.5]), Float64Array.from([1e20, 3e25])],
    2,
    {},
  ])
  cases.push([
    'pairs, a NaN term',
    pairs('f64'),
    () => [new Float64Array(6), Float64Array.from([1, 2, 3, 1.5, Number.NaN, 3.5]), Float64Array.from([1, 2])],
    2,
    {},
  ])
  cases.push([
    'pairs, an infinite term',
    pairs('f64'),
    () => [new Float64Array(6), Float64Array.from([1, 2, 3, 1.5, 2, 3.5]), Float64Array.from([Infinity, 2])],
    2,
    {},
  ])
  cases.push([
    'sums, 1 then 1e20: the replay leaves −1',
    sums(),
    () => [new Float64Array(1), Float64Array.from([1, 1e20])],
    2,
    {},
  ])
  cases.push(['sums, small terms', sums(), () => [new Float64Array(1), Float64Array.from([0.1, 0.2, 0.3])], 3, {}])
  cases.push([
    'sums, f32, 1 then 1e20: the replay leaves −1',
    sums('', 'f32'),
    () => [new Float32Array(1), Float32Array.from([1, 1e20])],
    2,
    {},
  ])
  cases.push([
    'sums, f32, terms near 1 (the bound fails, the replay runs)',
    sums('', 'f32'),
    () => [new Float32Array(1), Float32Array.from([0.1, 0.2, 0.3])],
    3,
    {},
  ])
  cases.push([
    'sums, f32, small terms',
    sums('', 'f32'),
    () => [new Float32Array(1), Float32Array.from([1e-7, -2e-7, 3e-7, 1e-45, -0])],
    5,
    {},
  ])
  cases.push([
    'sums, f32, tolerance 0',
    sums('', 'f32'),
    () => [new Float32Array(1), Float32Array.from([1e-7, 2e-7, 3e-7])],
    3,
    { tolerance: 0 },
  ])
  // (0.1 + 0.2 + 0.3 − 0.3 − 0.2 − 0.1 is 2.8e-17, not 0: with tolerance 0 the check fails)
  cases.push([
    'sums, tolerance 0',
    sums(),
    () => [new Float64Array(1), Float64Array.from([0.1, 0.2, 0.3])],
    3,
    { tolerance: 0 },
  ])
  cases.push([
    'sums, tolerance 1e-320',
    sums(),
    () => [new Float64Array(1), Float64Array.from([0.1, 0.2, 0.3])],
    3,
    { tolerance: 1e-320 },
  ])
  cases.push([
    'written between',
    writtenBetween,
    () => [new Float64Array(1), Float64Array.from([0.1, 0.2, 0.3])],
    3,
    {},
  ])

  for (const [label, source, mk, n, options] of cases)
    it(`${label}: the interpreter's values and errors, forwards and backwards, as without it`, () => {
      const on = compile(source, 'cpu', options)
      const ref = compile(source, 'interpreter', options)
      disabledPasses.add('replay-bound')
      const off = compile(source, 'cpu', options)
      disabledPasses.delete('replay-bound')
      for (const inverse of [false, true]) {
        const got = outcome(on, mk, inverse, n)
        expect(got, `inverse ${inverse}`).toBe(outcome(ref, mk, inverse, n))
        expect(got, `inverse ${inverse}`).toBe(outcome(off, mk, inverse, n))
      }
    })

  it('the failing replay of 1 then 1e20 is the deallocation error, the arrays restored', () => {
    const f = compile(sums(), 'cpu')
    const y = new Float64Array(1),
      x = Float64Array.from([1, 1e20])
    expect(raisedError(() => f(y, x, 2))).toMatch(/^runtime\/dealloc/)
    expect(Array.from(y)).toEqual([0])
    // (its bound fails: the replay ran; on small terms it passes, and the call returns)
    expect(raisedError(() => f(y, Float64Array.from([0.1, 0.2, 0.3]), 3))).toBe('no error')
  })
})
