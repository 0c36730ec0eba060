/**
 * `split-tails.ts`: the printed IR before and after (a log-sum-exp per row, whose `ll += log(…)`
 * goes into a loop of its own), the loops it must leave alone (an accumulated value reading an
 * element another iteration writes, the accumulator read in the body, a call statement, no costly
 * call, checks on), and the wasm module with and without the split against the cpu backend and the
 * interpreter: the same bits forwards and backwards, and the same error, with the arrays left the
 * same, when an index in the body is out of range part-way.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type ForStmt } from '@tenet/ir'
import { preprocess } from '@tenet/reversible'
import { splitLoopTails, splitTail } from './split-tails.js'
import { compile, exact, lastSplitTails } from './test-util.js'

/** A log-sum-exp per row of four (a softmax cross-entropy's normaliser), summed over the rows. */
const rows = `fn f(ll: f64, n: i32, a: f64[], m: f64[], s: f64[]) {
  for i in 0..n {
    r: i32 <- i * 4
    m[i] += max(max(a[r], a[r + 1]), max(a[r + 2], a[r + 3]))
    for c in 0..4 {
      s[i] += exp(a[r + c] - m[i])
    }
    ll += log(s[i]) + m[i]
    r -> i * 4
  }
}`

/** The GMM data term (d = 2, K = 5) as `examples.gmmPointsSource` of \`tenet\` writes it. */
const gmm = `fn f(slse: f64, i0: i32, i1: i32, alphas: f64[], means: f64[], icf: f64[], x: f64[], qdiag: f64[], sumq: f64[], xc: f64[], y: f64[], main: f64[], rm: f64[], t: f64[], s: f64[]) {
  for i in i0..i1 {
    p: i32 <- i - i0
    pk: i32 <- p * 5
    xo: i32 <- i * 2
    for c in 0..5 {
      o: i32 <- (pk + c) * 2
      cd: i32 <- c * 2
      ci: i32 <- c * 3
      xc[o + 0] += x[xo + 0] - means[cd + 0]
      xc[o + 1] += x[xo + 1] - means[cd + 1]
      y[o + 0] += qdiag[cd + 0] * xc[o + 0]
      y[o + 1] += qdiag[cd + 1] * xc[o + 1] + icf[ci + 2] * xc[o + 0]
      main[pk + c] += alphas[c] + sumq[c] - 0.5 * (y[o + 0] * y[o + 0] + y[o + 1] * y[o + 1])
      ci -> c * 3
      cd -> c * 2
      o -> (pk + c) * 2
    }
    rm[pk] += main[pk]
    for c in 1..5 {
      rm[pk + c] += max(rm[pk + c - 1], main[pk + c])
    }
    for c in 0..5 {
      t[pk + c] += main[pk + c] - rm[pk + 4]
      s[p] += exp(t[pk + c])
    }
    slse += log(s[p]) + rm[pk + 4]
    xo -> i * 2
    pk -> p * 5
    p -> i - i0
  }
}`

/** The checked program of \`text\` (function \`f\`). */
const checked = (text: string) => {
  const m = parse({ text, name: 'p' })
  return check(m.functions.map(preprocess), m.hosts, createRegistry())
}
const loopOf = (text: string) =>
  checked(text)
    .functions.get('f')!
    .body.find((s) => s.kind === 'for') as ForStmt

/** Seeded uniform numbers in [lo, hi). */
function random(seed: number): (lo: number, hi: number) => number {
  let s = seed >>> 0
  return (lo, hi) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return lo + ((hi - lo) * s) / 2 ** 32
  }
}

/** Every result of \`f\` forwards, then of its inverse on them, as exact numbers. */
function run(m: ReturnType<typeof compile>, args: unknown[]): string {
  const fwd = m.f!(...args) as unknown[]
  const back = m.f!.inverse(...fwd) as unknown[]
  return JSON.stringify(
    [fwd, back].map((r) => r.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v)))),
  )
}

/** Compiles on wasm (checks off unless asked), with or without the split; \`lastSplitTails\` counts the loops split. */
const wasm = (text: string, splitTails: boolean, checks = false) =>
  compile(text, 'wasm', checks, true, undefined, { splitTails })

describe('split tails', () => {
  it('puts the costly accumulation ending a loop body in a loop of its own (printed IR)', () => {
    const p = checked(rows)
    const before = printFunction(p.functions.get('f')!)
    expect(before).toBe(rows)
    const out = splitLoopTails(p, new Map())
    expect(out.count).toBe(1)
    expect(printFunction(out.program.functions.get('f')!)).toBe(`fn f(ll: f64, n: i32, a: f64[], m: f64[], s: f64[]) {
  for i in 0..n {
    r: i32 <- i * 4
    m[i] += max(max(a[r], a[r + 1]), max(a[r + 2], a[r + 3]))
    for c in 0..4 {
      s[i] += exp(a[r + c] - m[i])
    }
    r -> i * 4
  }
  for i in 0..n {
    ll += log(s[i]) + m[i]
  }
}`)
  })

  it('keeps the ancillas the accumulation reads, and splits the GMM data term', () => {
    const out = splitLoopTails(checked(gmm), new Map())
    expect(out.count).toBe(1)
    const text = printFunction(out.program.functions.get('f')!)
    expect(text).toContain(`  for i in i0..i1 {
    p: i32 <- i - i0
    pk: i32 <- p * 5
    slse += log(s[p]) + rm[pk + 4]
    pk -> p * 5
    p -> i - i0
  }
}`)
  })

  it('leaves alone the loops where the split could change a value or an error', () => {
    const variants: Record<string, string> = {
      // another iteration writes the element the accumulation reads
      'writes a neighbour': rows.replace('s[i] += exp(a[r + c] - m[i])', 's[i + 1] += exp(a[r + c] - m[i])'),
      // the body reads the accumulator
      'reads the accumulator': rows.replace('s[i] += exp(a[r + c] - m[i])', 's[i] += exp(a[r + c] - m[i] + ll)'),
      // an element the body does not access on every run of the iteration
      'reads an element the body may not': rows.replace('ll += log(s[i]) + m[i]', 'll += log(s[i]) + a[r + 4]'),
      // no costly call: nothing to gain
      'no call': rows.replace('ll += log(s[i]) + m[i]', 'll += s[i] + m[i]'),
      // an index not affine in the loop variable
      'not affine': rows.replace('ll += log(s[i]) + m[i]', 'll += log(s[i * i]) + m[i]'),
    }
    for (const [why, text] of Object.entries(variants)) expect(splitTail(loopOf(text)), why).toBeNull()
    expect(splitTail(loopOf(rows))).not.toBeNull()
    // a call statement in the body
    const withCall = `fn g(v: f64) { v += 1.0 }\n${rows.replace('    r -> i * 4', '    g(m[i])\n    r -> i * 4')}`
    expect(splitTail(loopOf(withCall))).toBeNull()
  })

  it('gives the same bits as the cpu backend, the interpreter and the unsplit loop, forwards and backwards', () => {
    const next = random(29)
    const n = 37
    const args = () => [
      0.25,
      n,
      Float64Array.from({ length: 4 * n + 4 }, () => next(-30, 30)),
      new Float64Array(n + 1),
      new Float64Array(n + 1),
    ]
    const engines = [
      wasm(rows, true),
      wasm(rows, false),
      compile(rows, 'cpu'),
      compile(rows, 'interpreter'),
      wasm(rows, true, true),
    ]
    const seed = args()
    const fresh = () => seed.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v))
    const results = engines.map((m) => run(m, fresh()))
    for (const r of results.slice(1)) expect(r).toBe(results[0])
  })

  it('computes the GMM data term bit for bit as before', () => {
    const next = random(5)
    const n = 23,
      d = 2,
      k = 5
    const data = [
      Float64Array.from({ length: k }, () => next(-1, 1)),
      Float64Array.from({ length: k * d }, () => next(-2, 2)),
      Float64Array.from({ length: k * 3 }, () => next(-1, 1)),
      Float64Array.from({ length: n * d }, () => next(-3, 3)),
      Float64Array.from({ length: k * d }, () => next(0.5, 2)),
      Float64Array.from({ length: k }, () => next(-1, 1)),
    ]
    const work = [n * k * d, n * k * d, n * k, n * k, n * k, n]
    const fresh = () => [1.5, 0, n, ...data.map((a) => a.slice()), ...work.map((w) => new Float64Array(w))]
    const results = [wasm(gmm, true), wasm(gmm, false), compile(gmm, 'cpu')].map((m) => run(m, fresh()))
    for (const r of results.slice(1)) expect(r).toBe(results[0])
  })

  it('fails at the same access, leaving the same arrays, when the body reads out of range part-way', () => {
    const next = random(3)
    const n = 9
    // a[] holds 6 rows: rows 6 to 8 read past its end, in the body (max of a[r…r + 3])
    const a = Float64Array.from({ length: 24 }, () => next(-5, 5))
    const outcome = (m: ReturnType<typeof compile>) => {
      const args = [0.5, n, a.slice(), new Float64Array(n), new Float64Array(n)] as const
      let error = ''
      try {
        m.f!(...args)
      } catch (e) {
        error = `${(e as { code?: string }).code}: ${(e as Error).message}`
      }
      return JSON.stringify([error, Array.from(args[3], exact), Array.from(args[4], exact)])
    }
    const split = outcome(wasm(rows, true))
    expect(split).toContain('out-of-bounds')
    expect(split).toBe(outcome(wasm(rows, false)))
  })

  it('random loops with tails: the same results and errors as the unsplit loop and the interpreter', () => {
    const next = random(2029)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next(0, xs.length))]!
    // element indices: a row's own (W = 3), the loop variable, and some that other iterations touch
    const own = ['r', 'r + 1', 'r + 2', 'i']
    const stray = ['r + 3', 'i + 1', '2']
    const index = () => (next(0, 1) < 0.8 ? pick(own) : pick(stray))
    const term = () =>
      pick([`a[${index()}]`, `b[${index()}]`, 'z', `exp(a[${index()}] * 0.25)`, `max(b[${index()}], z)`, 'f64(i)'])
    let split = 0
    for (let k = 0; k < 60; k++) {
      const body: string[] = []
      for (let j = 0, n = 1 + Math.floor(next(0, 4)); j < n; j++) {
        const target = pick(['a', 'b'])
        const stmt = `${target}[${index()}] ${pick(['+=', '-='])} ${term()} * ${term()}`
        // (no update may read the element it writes: such statements are left out)
        if (next(0, 1) < 0.3) body.push(`for c in 0..3 { ${target}[r + c] += 0.5 * z + ${pick(['z', 'f64(c)'])} }`)
        else if (!stmt.slice(stmt.indexOf('=')).includes(stmt.slice(0, stmt.indexOf(' ')))) body.push(stmt)
      }
      const tail = `acc += log(1.0 + abs(${pick([`b[${index()}]`, `a[${index()}]`])})) * ${pick(['z', `b[${index()}]`, '1.5'])}`
      const text = `fn f(acc: f64, n: i32, z: f64, a: f64[], b: f64[]) {
  for i in 0..n {
    r: i32 <- i * 3
    ${body.join('\n    ')}
    ${tail}
    r -> i * 3
  }
}`
      let ms: Array<ReturnType<typeof compile>>
      try {
        ms = [wasm(text, true), wasm(text, false), compile(text, 'interpreter')]
      } catch {
        continue // (a statement the checker refuses, such as one reading what it writes)
      }
      wasm(text, true)
      split += lastSplitTails
      const n = pick([5, 7, 9])
      const a = Float64Array.from({ length: 22 }, () => next(-2, 2))
      const b = Float64Array.from({ length: 22 }, () => next(-2, 2))
      const outcomes = ms.map((m) => {
        const args = [0.25, n, 0.75, a.slice(), b.slice()]
        try {
          const r = m.f!(...args) as unknown[]
          return JSON.stringify(r.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v))))
        } catch (e) {
          // (a failed call copies nothing back on wasm, and the interpreter's arrays are its own)
          return `${(e as { code?: string }).code}: ${(e as Error).message}`
        }
      })
      // (split and unsplit: the same results or the same error; the interpreter: the same results,
      // or an error of the same code: within one statement, wasm without checks guards the
      // written element before the value's reads, the interpreter the other way round)
      expect(outcomes[0], text).toBe(outcomes[1])
      if (outcomes[2]!.startsWith('runtime/')) expect(outcomes[0]!.split(':')[0], text).toBe(outcomes[2]!.split(':')[0])
      else expect(outcomes[0], text).toBe(outcomes[2])
    }
    expect(split).toBeGreaterThan(5)
  })

  it('counts the loops it split, and splits none with run-time checks on', () => {
    wasm(rows, true)
    expect(lastSplitTails).toBe(1)
    wasm(rows, false)
    expect(lastSplitTails).toBe(0)
    wasm(rows, true, true)
    expect(lastSplitTails).toBe(0)
  })
})
