/**
 * Pass `finite-cells` of `@tenet/ir` on compiled programs, cpu and wasm, with run-time checks on:
 * the kernels' tanh RNN, and loops and nests generated at random whose body computes cells of its
 * own iteration (accumulated over an inner loop) and then a history element from them, with their
 * inverse loops (`~routine`) — values reading the iteration's own cell, an earlier one or a later
 * one (which the pass leaves), f64 and f32, values that overflow, divide by zero, take the square
 * root of a negative number, and arrays too short — compute the reference interpreter's values bit
 * for bit and raise its errors (code, message, source location), with the pass and without. (The
 * printed IR before and after is in `finite-cells.test.ts` of `@tenet/ir`.)
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, raisedError, referenceBackend, rnnLossSource } from '@tenet/testing'
import { wasmBackend } from './index.js'

const reference = referenceBackend({ checks: true })
const engines = [
  { name: 'cpu', engine: backendUnderTest(cpuBackend, { checks: true }) },
  { name: 'wasm', engine: backendUnderTest(wasmBackend, { checks: true }) },
]

/** Runs `f` with pass `finite-cells` switched off. */
function withoutPass<T>(f: () => T): T {
  disabledPasses.add('finite-cells')
  try {
    return f()
  } finally {
    disabledPasses.delete('finite-cells')
  }
}

/** A small deterministic generator (xorshift). */
function rng(seed: number) {
  let s = seed >>> 0 || 1
  const next = () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 4294967296
  }
  return { next, pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! }
}

/** The result or the error, comparable bit for bit (NaN payloads aside). */
function outcome(run: () => unknown): unknown {
  try {
    const v = run()
    return JSON.stringify(v, (_k, x) => (typeof x === 'number' ? (Object.is(x, -0) ? '-0' : String(x)) : x))
  } catch {
    return raisedError(run)
  }
}

const code = (text: string, name: string): string =>
  (
    engines[0]!.engine.compile(text)[name]![TENET_FUNCTION] as {
      compiled: { sourceOf(n: string, i: boolean): string }
    }
  ).compiled.sourceOf(name, false)

type M = ReturnType<typeof reference.compile>

/** `f`'s (or its inverse's) outcome on every engine, with the pass and without, against the reference's. */
function agree(src: string, name: string, args: () => unknown[], label: string): unknown {
  let want: unknown
  for (const inverse of [false, true]) {
    const call = (m: M) => (inverse ? m[name]!.inverse : m[name]!)(...args())
    want = outcome(() => call(reference.compile(src)))
    for (const { name: engine, engine: e } of engines) {
      expect(
        outcome(() => call(e.compile(src))),
        `${engine} ${inverse} ${label}`,
      ).toEqual(want)
      expect(
        withoutPass(() => outcome(() => call(e.compile(`${src}\n`)))),
        `${engine} ${inverse} ${label} without the pass`,
      ).toEqual(want)
    }
  }
  return want
}

describe('pass `finite-cells` on compiled programs (checks on)', () => {
  const rnn = `\n${rnnLossSource}`

  it('leaves tanh out of the RNN’s uncompute (cpu generated code)', () => {
    const tanh = (c: string) => (c.match(/Math\.tanh\(/g) ?? []).length
    const on = code(rnn, 'rnn_loss')
    const off = withoutPass(() => code(`${rnn}\n`, 'rnn_loss'))
    // (the forward loop's versions evaluate it; without the pass the uncompute's versions too)
    expect(tanh(on)).toBeGreaterThan(0)
    expect(tanh(off)).toBe(2 * tanh(on))
  })

  it('the RNN: the same values and errors, cpu and wasm, with the pass and without', () => {
    const H = 3
    const D = 2
    const T = 4
    const fill = (n: number, f: (k: number) => number) => Float64Array.from({ length: n }, (_, k) => f(k))
    const W = fill(H * H, (k) => Math.sin(k + 1) / 2)
    const U = fill(H * D, (k) => Math.cos(k) / 2)
    const b = fill(H, (k) => k / 8 - 0.1)
    const xs = fill(T * D, (k) => Math.sin(3 * k))
    const big = fill(H * H, (k) => (k % 2 ? 1e200 : -1e200))
    const nan = W.slice()
    nan[4] = Number.NaN
    const inf = W.slice()
    inf[1] = Number.POSITIVE_INFINITY
    const cases: unknown[][] = [
      [0, W, U, b, xs, H, D, T],
      [0, W, U, b, xs, H, D, 0],
      [0, big, U, b, xs, H, D, T],
      [0, nan, U, b, xs, H, D, T],
      [0, inf, U, b, xs, H, D, T],
      [0, W, U, b.subarray(0, 2), xs, H, D, T],
      [0, W, U, b, xs.subarray(0, 5), H, D, T],
    ]
    const outcomes = cases.map((c) =>
      agree(rnn, 'rnn_loss', () => c.map((x) => (ArrayBuffer.isView(x) ? (x as Float64Array).slice() : x)), String(c)),
    )
    // (values, and failing checks among them)
    expect(outcomes.some((o) => typeof o === 'string' && o.startsWith('runtime/'))).toBe(true)
    expect(outcomes.some((o) => typeof o === 'string' && !o.startsWith('runtime/'))).toBe(true)
  })

  it('a value that reads a later cell is left: the residue the inverse left there fails the check of A', () => {
    // (B[t] is computed in two terms, so its uncompute leaves a rounding residue, which the value
    // scales: the reference's uncompute of A then fails; an `A[w] -= A[w]` would pass)
    const src = `
fn f(loss: f64, x: f64[], T: i32) {
  A: f64[] <- zeros(T + 2)
  B: f64[] <- zeros(T + 2)
  for t in 0..T {
    B[t] += x[t]
    B[t] += 0.1
    A[t + 1] += B[t] + B[t + 1] * 1.0e300
  }
  loss += A[T]
  for t in reverse 0..T {
    A[t + 1] -= B[t] + B[t + 1] * 1.0e300
    B[t] -= 0.1
    B[t] -= x[t]
  }
  A -> zeros(T + 2)
  B -> zeros(T + 2)
}`
    expect(code(src, 'f')).toBe(withoutPass(() => code(`${src}\n`, 'f')))
    const third = 1 / 3
    expect((third + 0.1 - 0.1 - third) * 1e300).not.toBe(0)
    const want = agree(src, 'f', () => [0, Float64Array.of(third, third, third, 0), 3], 'later cell')
    expect(String(want)).toMatch(/^runtime\//)
  })

  /** A random loop (or nest) of cells and its inverse; `leftAlone` where the value reads a later iteration's cell. */
  function program(r: ReturnType<typeof rng>, elem: 'f64' | 'f32'): { src: string; leftAlone: boolean } {
    const lit = (x: string) => (elem === 'f32' ? `f32(${x})` : x)
    const nest = r.next() < 0.6
    const read = r.pick(['own', 'own', 'earlier', 'later'] as const)
    // cells B[c], history A[w], the history's previous element A[q] (the steps read it)
    const shape = nest
      ? { loops: ['t in 1..T', 'i in 0..n'], c: 't * n + i', w: '(t + 1) * n + i', q: 't * n + i', size: '(T + 2) * n' }
      : r.next() < 0.5
        ? { loops: ['t in 1..T'], c: 't', w: 't + 1', q: 't', size: 'T + 2' }
        : { loops: ['t in T..=1 by -1'], c: 't', w: 't - 1', q: 't', size: 'T + 2' }
    const down = !nest && shape.w === 't - 1'
    const other =
      read === 'own'
        ? shape.c
        : read === 'earlier'
          ? nest
            ? '(t - 1) * n + i'
            : down
              ? 't + 1'
              : 't - 1'
          : nest
            ? '(t + 1) * n + i'
            : down
              ? 't - 1'
              : 't + 1'
    const e = r.pick([
      `tanh(B[${shape.c}]) * p`,
      `sqrt(B[${shape.c}] + B[${other}])`,
      `p / B[${other}]`,
      `exp(B[${other}] * p) - ${lit('1.0')}`,
      `B[${shape.c}] * B[${other}] * ${lit(elem === 'f32' ? '1.0e30' : '1.0e200')}`,
      `B[${shape.c}] + ${elem}(i32(B[${other}] * ${lit('0.0')}))`,
    ])
    const two = r.next() < 0.5
    const steps = [
      `B[${shape.c}] += x[0] * p`,
      ...(two ? [`for j in 0..len(x) {\n  B[${shape.c}] += x[j] * A[${shape.q}]\n}`] : []),
    ]
    const stepsInverse = [...steps]
      .reverse()
      .map((s) => s.replaceAll('+=', '-=').replace('0..len(x)', 'reverse 0..len(x)'))
    const indent = (s: string, k: number) => s.replaceAll('\n', `\n${' '.repeat(k)}`)
    const open = (L: string[], rev: boolean) => L.map((l) => (rev ? l.replace(' in ', ' in reverse ') : l))
    const wrap = (L: string[], lines: string[]): string => {
      const k = 2 + 2 * L.length
      let s = lines.map((x) => ' '.repeat(k) + indent(x, k)).join('\n')
      for (let d = L.length - 1; d >= 0; d--)
        s = `${' '.repeat(2 + 2 * d)}for ${L[d]} {\n${s}\n${' '.repeat(2 + 2 * d)}}`
      return s
    }
    const first = nest ? `for i in 0..n {\n    A[n + i] += x[0] + p\n  }` : `A[${down ? 'T + 1' : '1'}] += x[0] + p`
    const firstInverse = nest
      ? `for i in reverse 0..n {\n    A[n + i] -= x[0] + p\n  }`
      : `A[${down ? 'T + 1' : '1'}] -= x[0] + p`
    // (either order: with A's first, a value that reads a later cell, which the inverse has
    // uncomputed to a residue or NaN, would change the check of A that fails first)
    const frees = [`B -> zeros(${shape.size})`, `A -> zeros(${shape.size})`]
    if (r.next() < 0.5) frees.reverse()
    const src = `
fn f(loss: ${elem}, x: ${elem}[], p: ${elem}, T: i32, n: i32) {
  A: ${elem}[] <- zeros(${shape.size})
  B: ${elem}[] <- zeros(${shape.size})
  ${first}
${wrap(shape.loops, [...steps, `A[${shape.w}] += ${e}`])}
  loss += A[${r.pick(['0', '1', 'n', 'T'])}]
${wrap(open(shape.loops, true), [`A[${shape.w}] -= ${e}`, ...stepsInverse])}
  ${firstInverse}
  ${frees.join('\n  ')}
}`
    return { src, leftAlone: read === 'later' && e.includes(`B[${other}]`) }
  }

  const special = [0, -0, 1, -1, 0.5, 2, -3.5, 1e300, -1e300, 1e-300, Number.NaN, Number.POSITIVE_INFINITY, 40, 1e30]

  function args(r: ReturnType<typeof rng>, elem: 'f64' | 'f32'): () => unknown[] {
    const round = elem === 'f32' ? Math.fround : (x: number) => x
    const value = () => round(r.next() < 0.25 ? r.pick(special) : Math.round((r.next() * 4 - 1) * 64) / 64)
    const x = Array.from({ length: Math.floor(r.next() * 3) + (r.next() < 0.9 ? 1 : 0) }, value)
    const p = value()
    const T = Math.floor(r.next() * 5)
    const n = 1 + Math.floor(r.next() * 3)
    const make = elem === 'f32' ? Float32Array : Float64Array
    return () => [0, make.from(x), p, T, n]
  }

  it('random loops of cells: the reference’s values and errors, cpu and wasm, with the pass and without', {
    timeout: 600_000,
  }, () => {
    let rewritten = 0
    let wrongShapeRewritten = 0
    let failures = 0
    for (let seed = 1; seed <= 60; seed++) {
      const r = rng(seed * 2654435761 + 7)
      const elem = seed % 4 === 0 ? 'f32' : 'f64'
      const { src, leftAlone } = program(r, elem)
      const changed = code(src, 'f') !== withoutPass(() => code(`${src}\n`, 'f'))
      if (changed) rewritten++
      if (changed && leftAlone) wrongShapeRewritten++
      for (let k = 0; k < 6; k++) {
        const want = agree(src, 'f', args(r, elem), `\n${src}`)
        if (typeof want === 'string' && want.startsWith('runtime/')) failures++
      }
    }
    // (the generator reaches both: programs the pass rewrites, and failing checks; and the pass
    // leaves the loops whose value reads a later iteration's cell)
    expect(rewritten).toBeGreaterThan(25)
    expect(wrongShapeRewritten).toBe(0)
    expect(failures).toBeGreaterThan(20)
  })
})
