/**
 * `sum-bound` (cpu code generator, checks on, see `sum-bound.ts`): the uncompute loop of a scalar
 * sum of non-negative terms, followed by its deallocation check, is left out where the round-off
 * bound proves the check passes (the sum taken to +0 by `y -= y`); elsewhere it runs. The printed
 * code with it and without it, and the interpreter's values and errors (code, message, location),
 * forwards and backwards: sums within the tolerance, a residue past it (the check fails in both),
 * tolerances 0 and 1e-320, NaN, infinite and overflowing terms, empty and inclusive ranges, and
 * shapes it must not take (terms of either sign, a term's input written in between).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { softmaxCeLossSource } from '@tenet/testing/programs'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

afterEach(() => disabledPasses.delete('sum-bound'))

/** A log-sum-exp in a routine (`term` summed over `range`), its log added to the loss, uncomputed. */
const lse = (term = 'exp(x[i])', range = '0..n', between = '') => `
fn f(loss: f64, x: f64[], n: i32) {
  routine {
    s: f64 <- 0.0
    for i in ${range} { s += ${term} }
${between}
    l: f64 <- 0.0
    l += log(s)
  }
  loss += l
  ~routine
}`

/** The kernels' softmax cross-entropy, under the name `f`. */
const softmax = softmaxCeLossSource.replace('fn softmax_ce_loss(', 'fn f(')

type Options = { tolerance?: number }
const compile = (source: string, backend: 'cpu' | 'interpreter', options: Options = {}) =>
  compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks: true, ...options }).f!

const TEST =
  /const (c\d+) = \(\(\(\+\(p2\)\) - \(\+\(0\)\)\) <= 1048576 && \$tol >= 1e-300 && (v\d+) < Infinity && 5 \* \(\(\+\(p2\)\) - \(\+\(0\)\)\) \* 1\.1102230246251565e-16 \* \2 <= \$tol\);\n\s*if \(\1\) \{\n\s*\2 = \(\2 - \2\);\n\s*\} else \{/

/** The scalar result and the array after a call as exact text, or its error. */
function outcome(f: ReturnType<typeof compile>, x: number[], n: number, inverse: boolean): string {
  const a = Float64Array.from(x)
  const g = (inverse ? (f as unknown as { inverse: typeof f }).inverse : f) as unknown as (...a: unknown[]) => unknown
  let r: unknown
  const e = raisedError(() => {
    r = g(0.25, a, n)
  })
  const show = (v: number) => (Object.is(v, -0) ? '-0' : String(v))
  return `${e} | ${JSON.stringify(r, (_k, v) => (typeof v === 'number' ? show(v) : v))} | ${Array.from(a, show).join(' ')}`
}

describe('sum-bound (cpu, checks on)', () => {
  it('the printed code: the uncompute under the test of the bound, the check after it as before', () => {
    const code = generatedCode(compile(lse(), 'cpu'))!
    console.log(code)
    expect(code).toMatch(TEST)
    // the uncompute loop itself, in the else branch, and the deallocation check after it
    expect(code).toMatch(
      /\} else \{\n[\s\S]*v\d+ = \(v\d+ - \(Math\.exp\(p1\[i\d+\]\)\)\);[\s\S]*\n\s*if \(!\(v\d+ === 0 \|\| Math\.abs\(v\d+\) <= \$tol\)\) rt\.fail/,
    )
    disabledPasses.add('sum-bound')
    const off = generatedCode(compile(lse(), 'cpu'))!
    disabledPasses.delete('sum-bound')
    expect(off).not.toMatch(/1048576/)
    // the other term forms it takes: squares, abs, sqrt of a square; an inclusive range (N = b − a + 1)
    for (const term of ['x[i] * x[i]', 'abs(x[i]) + 2.0', 'sqrt(x[i] * x[i]) * exp(x[i])'])
      expect(generatedCode(compile(lse(term), 'cpu'))!).toMatch(TEST)
    expect(generatedCode(compile(lse('exp(x[i])', '0..=n - 1'), 'cpu'))!).toMatch(
      /\(\(\+\(\(\(p2 - 1\) \| 0\)\)\) - \(\+\(0\)\) \+ 1\) <= 1048576/,
    )
    // the softmax cross-entropy: both versions of the row loop (the bounds guard's and the checked one)
    expect(generatedCode(compile(softmax, 'cpu'))!.match(/<= 1048576 && \$tol >= 1e-300/g)?.length).toBe(2)
  })

  it('not taken: terms of either sign, a term reading what is written in between', () => {
    for (const source of [
      lse('x[i]'),
      lse('exp(x[i]) - 1.0'),
      lse('x[i] * x[0]'),
      lse('exp(x[i])', '0..n', '    x[0] += 1.0'),
    ])
      expect(generatedCode(compile(source, 'cpu'))!).not.toMatch(/1048576/)
  })

  const cases: Array<[string, string, number[], Options]> = [
    ['small terms', lse(), [0.1, -0.5, 0.3, 2], {}],
    ['one term', lse(), [0.7], {}],
    ['no terms (n = 0)', lse(), [], {}],
    ['terms of mixed sizes: 1 then exp(40) (the uncompute leaves −1)', lse(), [0, 40, 0.5], {}],
    ['exp(40) then 1 (the uncompute leaves 0)', lse(), [40, 0], {}],
    ['a NaN term', lse(), [0.1, Number.NaN, 0.3], {}],
    ['an infinite term', lse(), [0.1, Number.POSITIVE_INFINITY, 0.3], {}],
    ['terms that underflow to 0', lse(), [-800, -900], {}],
    ['an overflowing sum', lse(), [709, 709, 709], {}],
    ['huge terms within range', lse(), [300, 301, 302], {}],
    ['tolerance 0', lse(), [0.1, 0.2, 0.3], { tolerance: 0 }],
    ['tolerance 1e-320', lse(), [0.1, 0.2, 0.3], { tolerance: 1e-320 }],
    ['tolerance 1e-3', lse(), [20, 0.2, 0.3], { tolerance: 1e-3 }],
    ['squares', lse('x[i] * x[i]'), [1e8, 3, -2, 1e-3], {}],
    ['squares, within the tolerance', lse('x[i] * x[i]'), [0.5, 3, -2, 1e-3], {}],
    ['an inclusive range', lse('exp(x[i])', '0..=n - 1'), [0.1, 0.2, 0.4], {}],
  ]
  for (const [label, source, x, options] of cases)
    it(`${label}: the interpreter's values and errors, forwards and backwards, as without it`, () => {
      const on = compile(source, 'cpu', options)
      const ref = compile(source, 'interpreter', options)
      disabledPasses.add('sum-bound')
      const off = compile(source, 'cpu', options)
      disabledPasses.delete('sum-bound')
      expect(generatedCode(on)).toMatch(/1048576/)
      for (const inverse of [false, true]) {
        const got = outcome(on, x, x.length, inverse)
        expect(got, `inverse ${inverse}`).toBe(outcome(ref, x, x.length, inverse))
        expect(got, `inverse ${inverse}`).toBe(outcome(off, x, x.length, inverse))
      }
    })

  it('a residue past the tolerance fails the deallocation check of the sum, as without the pass', () => {
    const f = compile(lse(), 'cpu')
    // (1 + exp(40) rounds to exp(40); the uncompute subtracts exp(40), then 1: −1 is left)
    const e = raisedError(() => f(0, Float64Array.from([0, 40]), 2))
    expect(e).toMatch(/^runtime\/dealloc/)
    expect(e).toMatch(/`s`/)
    expect(raisedError(() => f(0, Float64Array.from([0.1, 0.2]), 2))).toBe('no error')
  })

  it('the softmax cross-entropy: the interpreter’s loss and errors (large logits, NaN, a label out of range)', () => {
    const on = compile(softmax, 'cpu')
    const ref = compile(softmax, 'interpreter')
    const run = (f: ReturnType<typeof compile>, z: number[], label: number[], C: number) => {
      let r: unknown
      const e = raisedError(() => {
        r = (f as unknown as (...a: unknown[]) => unknown)(0.5, Float64Array.from(z), Int32Array.from(label), C)
      })
      return `${e} | ${JSON.stringify(r)}`
    }
    const z = Array.from({ length: 12 }, (_, k) => Math.sin(k * 1.7) * 3)
    for (const [zz, label] of [
      [z, [0, 2, 1]],
      [z.map((v, k) => (k === 5 ? v + 1e6 : v)), [0, 2, 1]],
      [z.map((v, k) => (k === 7 ? Number.NaN : v)), [0, 2, 1]],
      [z, [0, 9, 1]],
    ] as Array<[number[], number[]]>)
      expect(run(on, zz, label, 4)).toBe(run(ref, zz, label, 4))
  })
})
