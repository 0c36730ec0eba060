/**
 * Pass `proven-bounds` of `@tenet/ir` on compiled programs, cpu and wasm, with run-time checks on:
 * random loops of step 1 or −1 over ends made of literals, `len(a)` and an i32 parameter `n`,
 * reading elements of a parameter array and of an ancilla `zeros(…)` at indices affine in the
 * loop variable, run on arrays and `n` that put each index inside and outside its array (and
 * ranges that run no iteration, or whose ends wrap). Each backend gives the reference
 * interpreter's value or fails with its error code, and gives exactly what it gives with the
 * pass switched off — the same value, or the same error, message and location: the checks it
 * leaves out are those that cannot fail. (The printed IR
 * before and after is in `proven-bounds.test.ts` of `@tenet/ir`.)
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { check, createRegistry, parse, printStmts } from '@tenet/ir'
import { disabledPasses, insertChecks, provenBounds } from '@tenet/ir/backend'
import { backendUnderTest, mulberry32 as rng, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!

const ENDS = ['0', '1', '2', '-1', 'len(a)', 'len(a) - 1', 'len(a) - 2', 'n', 'n - 1', 'n + 1', 'len(a) + 1']
const LENGTHS = ['len(a)', 'n', 'len(a) - 1', 'n + 1', 'n - 2', '3']
const INDICES = (v: string) => [
  v,
  `${v} + 1`,
  `${v} - 1`,
  `${v} - 2`,
  `len(a) - 1 - ${v}`,
  `n - 1 - ${v}`,
  `2 * ${v}`,
  `${v} + n`,
  'n - 1',
  'len(a) - 1',
  '0',
]

/**
 * A random program: an ancilla \`t\` of a random length, one or two nested loops reading \`a\` and
 * \`t\`; half of them loops over the indices of \`t\` (its length L, \`0..L\`, \`1..L\` or
 * \`L - 1..=0 by -1\`), as a program that uses a history array writes them.
 */
function program(seed: number): { text: string; len: string } {
  const r = rng(seed)
  const friendly = r() < 0.5
  const len = friendly ? pick(r, ['len(a)', 'n']) : pick(r, LENGTHS)
  const loop = (v: string) => {
    if (friendly && r() < 0.8)
      return pick(r, [`for ${v} in 0..${len}`, `for ${v} in 1..${len}`, `for ${v} in ${len} - 1..=0 by -1`])
    const step = r() < 0.5 ? '' : ' by -1'
    return `for ${v} in ${pick(r, ENDS)}${r() < 0.5 ? '..' : '..='}${pick(r, ENDS)}${step}`
  }
  const reads = (v: string) => `s += a[${pick(r, INDICES(v))}] * 2.0 + t[${pick(r, INDICES(v))}]`
  const body =
    r() < 0.6
      ? `  ${loop('i')} { ${reads('i')} }`
      : `  ${loop('i')} {\n    ${reads('i')}\n    ${loop('j')} { ${reads('j')} }\n  }`
  return {
    text: `fn f(s: f64, a: f64[], n: i32) {\n  t: f64[] <- zeros(${len})\n${body}\n  t -> zeros(${len})\n}\n`,
    len,
  }
}

const backends = [backendUnderTest(cpuBackend, { checks: true }), backendUnderTest(wasmBackend, { checks: true })]
const reference = referenceBackend({ checks: true })

/** How many asserts of \`kind\` pass \`proven-bounds\` leaves out of \`f\` of \`text\`. */
function leftOut(text: string, kind = 'outOfBounds'): number {
  const options = { checks: true, tolerance: 1e-8, backend: 'cpu' }
  const asserted = insertChecks(check(parse(text).functions, [], createRegistry()), new Map(), options)
  const proved = provenBounds(asserted.program, asserted.inverses, options)
  const count = (p: typeof asserted.program) =>
    printStmts(p.functions.get('f')!.body, 0).split(`assert ${kind}`).length - 1
  return count(asserted.program) - count(proved.program)
}

/** What a run gives: the value of `s`, or the error raised. */
function outcome(b: typeof reference, text: string, len: number, n: number): string {
  let v = ''
  const e = raisedError(() => {
    const out = b.compile(text).f!(
      0,
      Float64Array.from({ length: len }, (_, i) => i + 1),
      n,
    ) as unknown[]
    v = String(out[0])
  })
  return e === 'no error' ? `value ${v}` : e
}

describe('pass `proven-bounds` on compiled programs (checks on)', () => {
  it('random loops fail as the reference does, or give its value, with the pass and without', () => {
    let failing = 0
    let passing = 0
    let proved = 0
    for (let seed = 1; seed <= 60; seed++) {
      const { text, len: tLength } = program(seed)
      if (leftOut(text) > 0) proved++
      for (const len of [0, 1, 2, 3, 6]) {
        // (n = 2³¹ − 1: ends that wrap; not as the ancilla's length, which no engine can allocate)
        for (const n of [-1, 0, 1, 2, 4, 7, ...(tLength.includes('n') ? [] : [2147483647])]) {
          const want = outcome(reference, text, len, n)
          if (want.startsWith('value')) passing++
          else failing++
          for (const b of backends) {
            const got = outcome(b, text, len, n)
            const where = `${b.name} on\n${text}with len(a) = ${len}, n = ${n}`
            // the reference's value, or its error code (pass \`hoist-bounds\` may report another
            // index of the loop first: see its module comment)
            if (want.startsWith('value')) expect(got, where).toBe(want)
            else expect(got.split(' | ')[0], where).toBe(want.split(' | ')[0])
            disabledPasses.add('proven-bounds')
            try {
              // without the pass, the very same outcome (a fresh module: another source text)
              expect(outcome(b, `${text}\n`, len, n), where).toBe(got)
            } finally {
              disabledPasses.delete('proven-bounds')
            }
          }
        }
      }
    }
    // (the pass leaves checks out of many of the programs; both kinds of run occur often)
    expect(proved).toBeGreaterThan(15)
    expect(failing).toBeGreaterThan(300)
    expect(passing).toBeGreaterThan(300)
  }, 240_000)

  it('random updates t[p] += a[q] + t[r]: the alias check p != r fails as the reference does, or cannot fail', () => {
    const r = rng(7)
    const K = ['0', '1', '2', '-1', '-2']
    // (heat-stencil rows t·n + i and (t + 1)·n + i, a shift by n, a shift by a literal, anything)
    const pair = (): [string, string] => {
      const [k1, k2] = [pick(r, K), pick(r, K)]
      return pick(r, [
        [`(i + 1) * n + ${k1}`, `i * n + ${k2}`],
        [`n + i`, `i + ${k2}`],
        [`i + ${k1}`, `i - 1 + ${k2}`],
        [pick(r, ['i + 1', 'n - 1', '3', 'i * n']), pick(r, ['2 - i', '1', 'i + n', 'i - 1'])],
      ] as Array<[string, string]>)
    }
    const E = ['0..n', '1..n - 1', '0..=n', 'n..3', '2..n + 1', 'n - 1..=0 by -1', '0..m', '1..n - 2']
    let proved = 0
    let failing = 0
    for (let k = 0; k < 60; k++) {
      const [p, q] = pair()
      const text = `fn f(s: f64, a: f64[], n: i32, m: i32) {
  t: f64[] <- zeros(len(a))
  for i in ${pick(r, E)} {
    t[${p}] += a[i + 1] * 2.0 + t[${q}]
    s += t[${p}]
    t[${p}] -= a[i + 1] * 2.0 + t[${q}]
  }
  t -> zeros(len(a))
}
`
      // (p and r the same index, as written: a static error)
      if (raisedError(() => reference.compile(text)).startsWith('static/')) continue
      if (leftOut(text, 'alias') > 0) proved++
      for (const n of [-3, -2, -1, 0, 1, 2, 3, 4, 2147483647, -2147483648]) {
        const x = Float64Array.from({ length: 64 }, (_, i) => i + 1)
        const run = (b: typeof reference, t: string) => {
          let v = ''
          const e = raisedError(() => {
            v = String((b.compile(t).f!(0, x, n, 3) as unknown[])[0])
          })
          return e === 'no error' ? `value ${v}` : e
        }
        const want = run(reference, text)
        if (want.startsWith('runtime/alias')) failing++
        for (const b of backends) {
          const got = run(b, text)
          const where = `${b.name} on\n${text}with n = ${n}`
          // (an error: the reference's, or a bounds error that pass \`hoist-bounds\` reports before the loop)
          if (want.startsWith('value')) expect(got, where).toBe(want)
          else expect(got, where).toMatch(new RegExp(`^(${want.split(' | ')[0]}|runtime/out-of-bounds) \\| `))
          disabledPasses.add('proven-bounds')
          try {
            expect(run(b, `${text}\n`), where).toBe(got)
          } finally {
            disabledPasses.delete('proven-bounds')
          }
        }
      }
    }
    expect(proved).toBeGreaterThan(15)
    expect(failing).toBeGreaterThan(8)
  }, 240_000)
})
