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
  /const (c\d+) = \(\(\(\+\(p2\)\) - \(\+\(0\)\)\) <= 1048576 && \$tol >= 1e-300 && (v\d+) <= 8\.98846567431158e\+307 && 5 \* \(\(\+\(p2\)\) - \(\+\(0\)\)\) \* 1\.1102230246251565e-16 \* \2 <= \$tol\);\n\s*if \(\1\) \{\n\s*\2 = \(\2 - \2\);\n\s*\} else \{/

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
    // (review 17a: tolerances the test must refuse, subnormal terms and residues at the edge)
    ['tolerance +Infinity, a NaN term', lse(), [0.1, Number.NaN], { tolerance: Number.POSITIVE_INFINITY }],
    ['tolerance +Infinity, an overflowing sum', lse(), [709, 709, 709], { tolerance: Number.POSITIVE_INFINITY }],
    ['tolerance +Infinity, a residue', lse(), [0, 40], { tolerance: Number.POSITIVE_INFINITY }],
    ['tolerance NaN', lse(), [0.1, 0.2], { tolerance: Number.NaN }],
    ['tolerance −1', lse(), [0.1, 0.2], { tolerance: -1 }],
    ['tolerance 1e-300, subnormal terms', lse('x[i] * x[i]'), [1e-160, 3e-161, 1e-170], { tolerance: 1e-300 }],
    [
      'tolerance 1e-300, a residue just past it',
      lse('abs(x[i])'),
      [2 ** -1000, 2 ** -1053, 2 ** -1053],
      { tolerance: 1e-300 },
    ],
    ['x ** 2 of negatives and −0', lse('x[i] ** 2'), [-3, -1e200, -0], {}],
    ['x ** -2 of −0', lse('x[i] ** -2'), [-0, 2], {}],
    ['a range from −2^31', lse('abs(x[i + 2147483647 + 1])', '-2147483647 - 1..-2147483647 - 1 + n'), [1, 2], {}],
    ['a residue at 2^53, tolerance 10', lse('abs(x[i])'), [1, 2 ** 53], { tolerance: 10 }],
    ['a residue at 2^53, tolerance 1.5', lse('abs(x[i])'), [1, 2 ** 53], { tolerance: 1.5 }],
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

/**
 * Programs in which something the uncompute would do, or what its terms read, is not what the
 * comparison of the terms sees (review 17a and the same class of defect elsewhere in the pass):
 * the cpu backend with the pass must raise the interpreter's error, as it does without the pass.
 * `plug` (a plugin primitive run as JavaScript), `ZAP` (a plugin bijection) and host 0 each set
 * x[0] to 0.75 when called.
 */
describe('sum-bound: what the uncompute does and what changes its terms', () => {
  let X = new Float64Array(0)
  const effect = () => {
    X[0] = 0.75
  }
  const plugins = () => {
    const reg = registry()
    reg.registerPrimitive({
      specificationVersion: 'v1',
      name: 'plug',
      kind: 'pure',
      arity: 1,
      evaluate: (v: number) => {
        effect()
        return v
      },
    })
    reg.registerPrimitive({
      specificationVersion: 'v1',
      name: 'ZAP',
      kind: 'bijection',
      roles: ['inout'],
      inverse: 'self',
      apply: (v: number) => {
        effect()
        return [v]
      },
    })
    return reg
  }
  const host = () => {
    effect()
    return 1
  }
  /** The error, the results and `x` after a call of `f(0, x, n, ...rest)` (x = [0.5, 1] unless given). */
  const run = (src: string, backend: 'cpu' | 'interpreter', off: boolean, x = [0.5, 1], rest: number[] = []) => {
    if (off) disabledPasses.add('sum-bound')
    const m = compileModule(parse(src, [host] as never), { registry: plugins(), backend, checks: true })
    disabledPasses.delete('sum-bound')
    const f = m.f! as unknown as (...a: unknown[]) => unknown
    X = Float64Array.from(x)
    let r: unknown
    const e = raisedError(() => {
      r = f(0, X, x.length, ...rest)
    })
    return { code: generatedCode(m.f!) ?? '', outcome: `${e} | ${JSON.stringify(r)} | ${Array.from(X)}` }
  }
  /** The interpreter's outcome (matching `error`), the same with the pass off and on. */
  const agrees = (src: string, error: RegExp, x?: number[], rest?: number[]) => {
    const ref = run(src, 'interpreter', false, x, rest).outcome
    expect(ref).toMatch(error)
    expect(run(src, 'cpu', true, x, rest).outcome).toBe(ref)
    expect(run(src, 'cpu', false, x, rest).outcome).toBe(ref)
  }

  it('an array allocation in a version branch of the uncompute that fails (zeros(-1)) is not left out', () => {
    const src = `
fn f(loss: f64, x: f64[], n: i32, k: i32) {
  s: f64 <- 0.0
  for i in 0..n { s += x[i] * x[i] }
  loss += s
  if (n > 0, ~) {
    h: f64[] <- zeros(k)
    for i in reverse 0..n { s -= x[i] * x[i] }
    @unchecked { h -> zeros(k) }
  } else {
    for i in reverse 0..n { s -= x[i] * x[i] }
  }
  s -> 0.0
}`
    agrees(src, /^runtime\/array-length/, [1, 1, 1, 1], [-1])
    expect(run(src, 'cpu', false, [1, 1], [-1]).code).not.toMatch(/1048576/)
  })

  it('a scalar allocation in a version branch of the uncompute: taken where it calls nothing, not where it calls the host', () => {
    const src = (value: string) => `
fn f(loss: f64, x: f64[], n: i32) {
  s: f64 <- 0.0
  for i in 0..n { s += x[i] * x[i] }
  loss += s
  if (n > 0, ~) {
    h: f64 <- ${value}
    for i in reverse 0..n { s -= x[i] * x[i] }
    @unchecked { h -> ${value} }
  } else {
    for i in reverse 0..n { s -= x[i] * x[i] }
  }
  s -> 0.0
}`
    expect(run(src('n + len(x)').replace('h: f64', 'h: i32'), 'cpu', false).code).toMatch(/1048576/)
    // (the host call sets x[0] and the uncompute then leaves a residue; plug likewise)
    expect(run(src('${0}(1.0)'), 'cpu', false).code).not.toMatch(/1048576/)
    agrees(src('${0}(1.0)'), /^runtime\/dealloc/)
    agrees(src('plug(1.0)'), /^runtime\/dealloc/)
  })

  // a scalar `g` allocated from x[0] before the sum's loop, then something that sets x[0]: F's
  // term exp(g * x[i]) is not U's exp(x[0] * x[i]) (U leaves a residue of about −0.77)
  const stale = (change: string, where: 'before' | 'between' = 'before') => `
fn f(loss: f64, x: f64[], n: i32) {
  s: f64 <- 0.0
  g: f64 <- x[0]
  t: f64 <- 0.0
${where === 'before' ? change : ''}
  for i in 0..n { s += exp(g * x[i]) }
${where === 'between' ? change : ''}
  loss += s
  for i in reverse 0..n { s -= exp(x[0] * x[i]) }
  s -> 0.0
  @unchecked {
    g -> 0.0
    t -> 0.0
  }
}`
  const effectful = `
fn h(t: f64) {
  t += \${0}(1.0)
}`
  const changes: Array<[string, string, string?]> = [
    ['a host call in an allocation before the loops', '  u: f64 <- ${0}(1.0)\n  @unchecked { u -> 0.0 }'],
    ['a host call in an update before the loops', '  t += ${0}(1.0)'],
    ['a call of a function with a host effect before the loops', '  h(t)', effectful],
    // (a bijection call: also refused as a statement that may mention the sum, see \`mentions\`)
    ['a plugin bijection before the loops', '  ZAP(t)'],
    ['a plugin primitive before the loops', '  t += plug(1.0)'],
    ['a host call in an `if` condition before the loops', '  if (${0}(1.0) > 0.0, ~) { t += 1.0 } else { t += 2.0 }'],
  ]
  for (const [label, change, extra] of changes)
    it(`a scalar's value not substituted across ${label}`, () => {
      const src = stale(change) + (extra ?? '')
      agrees(src, /^runtime\/dealloc/)
      expect(run(src, 'cpu', false).code).not.toMatch(/1048576/)
    })

  it("a scalar's value not substituted across the host call that allocates the next scalar (review 17a)", () => {
    const src = stale('').replace('t: f64 <- 0.0', 't: f64 <- ${0}(1.0)')
    agrees(src, /^runtime\/dealloc/)
    expect(run(src, 'cpu', false).code).not.toMatch(/1048576/)
  })

  it('without the change, the same program is taken (the scalar substituted by its value)', () => {
    expect(run(stale('  t += 1.0'), 'cpu', false).code).toMatch(/1048576/)
    agrees(stale('  t += 1.0'), /^no error/)
  })

  it('a loop range that reads the sum: not taken (the range check after the uncompute reads the sum)', () => {
    // F's range reads s as 0 where it starts and as the sum where it ends (both 0..n); U's range
    // reads the sum, then the residue −2⁻⁵³, where 1e20 · (r − |r|) changes it: the interpreter's
    // range check after U fails, and U is not left out
    const src = `
fn f(loss: f64, x: f64[], n: i32) {
  routine {
    s: f64 <- 0.0
    for i in 0..n + i32(1e20 * (s - abs(s))) { s += abs(x[i]) }
  }
  loss += s
  ~routine
}`
    agrees(src, /^runtime\/loop-range/, [2 ** -53, 1])
  })

  it('a plugin primitive between the loops (it sets x[0], which the terms read): not taken', () => {
    const src = stale('  t += plug(1.0)', 'between').replace('exp(g * x[i])', 'exp(x[0] * x[i])')
    agrees(src, /^runtime\/dealloc/)
  })

  it("a host call in the post-condition of the sum's version `if` (after the sum, before the uncompute): not taken", () => {
    const src = `
fn f(loss: f64, x: f64[], n: i32) {
  s: f64 <- 0.0
  if (n > 0, \${0}(1.0) > 0.0) {
    for i in 0..n { s += exp(x[0] * x[i]) }
  } else {
    for i in 0..n { s += exp(x[0] * x[i]) }
  }
  loss += s
  for i in reverse 0..n { s -= exp(x[0] * x[i]) }
  s -> 0.0
}`
    agrees(src, /^runtime\/dealloc/)
  })

  it("the post-condition of the uncompute's version `if` that fails: not left out", () => {
    const src = `
fn f(loss: f64, x: f64[], n: i32, k: i32) {
  s: f64 <- 0.0
  for i in 0..n { s += x[i] * x[i] }
  loss += s
  if (n > 0, k > 0) {
    for i in reverse 0..n { s -= x[i] * x[i] }
  } else {
    for i in reverse 0..n { s -= x[i] * x[i] }
  }
  s -> 0.0
}`
    // (the post-condition's check ends the branch, so the branch is not of the shape: kept)
    agrees(src, /^runtime\/post-condition/, [1, 1], [-1])
  })

  it("a host call in an allocation of the sum's version branch: a scalar's value not substituted", () => {
    const src = `
fn f(loss: f64, x: f64[], n: i32) {
  s: f64 <- 0.0
  g: f64 <- x[0]
  if (n > 0, ~) {
    u: f64 <- \${0}(1.0)
    for i in 0..n { s += exp(g * x[i]) }
    @unchecked { u -> 0.0 }
  } else {
    for i in 0..n { s += exp(g * x[i]) }
  }
  loss += s
  for i in reverse 0..n { s -= exp(x[0] * x[i]) }
  s -> 0.0
  @unchecked { g -> 0.0 }
}`
    agrees(src, /^runtime\/dealloc/)
  })
})
