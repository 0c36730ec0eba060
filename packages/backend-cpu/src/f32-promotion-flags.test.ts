/**
 * f32 elements a loop keeps in locals where not every iteration writes them (cpu code generator,
 * `forStmt`): each write of the local sets a flag, and the store after the loop is made only where
 * the flag is set, so an element no iteration wrote keeps its bits (a float32 loaded as a double
 * and stored back would quiet a signalling NaN). With checks on (`promote-checked`) such elements
 * used to stay in memory, and with checks off those written only under a branch. The printed code
 * before and after, and the interpreter's bits (NaN payloads included) forwards and backwards,
 * checks on and off, branches taken never, sometimes and always, failures part-way included.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

afterEach(() => disabledPasses.delete('promote-checked'))

/** The leapfrog's pair accumulation in f32: `a[2i]`, `a[2i + 1]` written only under `j == k`. */
const picked = `fn f(a: f32[], x: f32[], k: i32, n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (j == k, ~) {
        routine {
          d: f32 <- 0.0
          d += x[j] - x[i]
        }
        a[2 * i] += d * d
        a[2 * i + 1] -= d / (x[j] + 2.5)
        ~routine
      }
    }
  }
}`

/** Only the one array parameter (what `.core` cannot alias), written under `i != j`. */
const pairs = `fn f(a: f32[], s: f32, n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (i != j, ~) {
        a[2 * i] += s * 0.25
        a[2 * i + 1] -= s / (a[2 * i] + 3.0)
      }
    }
  }
}`

/** The accumulation into an ancilla (fresh memory: kept in a local with checks on), then undone. */
const ancilla = `fn f(y: f32[], x: f32[], k: i32, n: i32) {
  routine {
    t: f32[] <- zeros(2 * n)
    for i in 0..n {
      for j in 0..n {
        if (j != k, ~) {
          t[2 * i] += x[j] * x[i]
          t[2 * i + 1] -= x[j] / (x[i] + 1.5)
        }
      }
    }
  }
  for i in 0..2 * n { y[i] += t[i] }
  ~routine
}`

/** An element read on every iteration, written only in a branch (checks off keeps it in a local). */
const readEvery = `fn f(a: f32[], s: f32, n: i32) {
  for i in 0..n {
    a[1] += a[0] + s
    if (i > 2, ~) { a[0] += s * 0.25 }
  }
}`

const compile = (source: string, backend: 'cpu' | 'interpreter', checks: boolean) =>
  compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks }).f!

const SNAN = 0x7f800001
const bitsOf = (a: Float32Array): string => Array.from(new Uint32Array(a.buffer), (x) => x.toString(16)).join(' ')

/** `a`'s bits after a call, or the error (code, message, location) and `a`'s bits then. */
function outcome(
  f: ReturnType<typeof compile>,
  mk: () => [Float32Array, ...unknown[]],
  inverse: boolean,
  core = false,
): { error: string; bits: string } {
  const args = mk()
  const g = (inverse ? (f as unknown as { inverse: typeof f }).inverse : f) as unknown as {
    (...a: unknown[]): unknown
    core: (...a: unknown[]) => unknown
  }
  const error = raisedError(() => (core ? g.core : g)(...args))
  return { error, bits: bitsOf(args[0]) }
}

/** Float32Array of `n` elements, `f(k)`, the listed ones signalling NaNs. */
function f32(n: number, f: (k: number) => number, snans: readonly number[] = []): Float32Array {
  const a = Float32Array.from({ length: n }, (_, k) => f(k))
  for (const k of snans) if (k < n) new Uint32Array(a.buffer)[k] = SNAN
  return a
}

describe('f32 elements kept in locals, stored back where written (cpu)', () => {
  it('the printed code: a flag set by each write, the store after the loop only where it is set', () => {
    // (a loop that writes one array parameter and reads another keeps the elements in memory:
    // \`.core\` may pass one memory for both with checks on; with checks off, elements that only a
    // branch accesses stay in memory)
    for (const checks of [true, false])
      expect(generatedCode(compile(picked, 'cpu', checks))!).toMatch(/p0\[c\d+\] = Math\.fround/)
    const on = generatedCode(compile(pairs, 'cpu', true))!
    expect(on).toMatch(/let r\d+ = p0\[x\d+\] \?\? 0;\n\s*let w\d+ = false;/)
    expect(on).toMatch(/\n\s*r\d+ = Math\.fround\(\(r\d+ \+ [^\n]*\n\s*w\d+ = true;/)
    expect(on).toMatch(/\n\s*if \(w\d+\) p0\[x\d+\] = r\d+;/)
    expect(on).not.toMatch(/p0\[c\d+\] = /)
    // switched off: the checked loop loads and stores the element, as it did for every f32 element
    disabledPasses.add('promote-checked')
    const off = generatedCode(compile(pairs, 'cpu', true))!
    expect(off).not.toMatch(/let w\d+ = false;/)
    expect(off).toMatch(/p0\[c\d+\] = Math\.fround\(\(\(p0\[c\d+\] \?\? rt\.fail/)
    disabledPasses.delete('promote-checked')
    const anc = generatedCode(compile(ancilla, 'cpu', true))!
    expect(anc).toMatch(/\n\s*if \(w\d+\) v\d+\[x\d+\] = r\d+;/)
    // checks off: an element read on every iteration and written under a branch, flagged
    const every = generatedCode(compile(readEvery, 'cpu', false))!
    expect(every).toMatch(/let w\d+ = false;/)
    expect(every).toMatch(/\n\s*if \(w\d+\) p0\[x\d+\] = r\d+;/)
  })

  const cases: Array<[string, string, () => [Float32Array, ...unknown[]]]> = []
  for (const [k, n, la] of [
    [-1, 3, 6], // the branch never taken: every element keeps its signalling NaN
    [1, 3, 6], // taken once per i
    [5, 3, 6], // k past the loop: never
    [1, 3, 4], // a[4] out of range at i = 2, after a[0..3] were written
    [0, 0, 6], // the loop runs zero times
    [2, 4, 8],
  ] as const)
    cases.push([
      `picked, k = ${k}, n = ${n}, len(a) = ${la}`,
      picked,
      () => [f32(la, (q) => q / 8 - 0.3, [0, 3, 5]), f32(Math.max(n, 1), (q) => 1 + q / 3 + (q % 2) / 7), k, n],
    ])
  for (const [n, la] of [
    [1, 2], // one body: the branch never runs
    [3, 6],
    [3, 5], // a[5] out of range at i = 2
    [0, 2],
    [4, 8],
  ] as const)
    cases.push([`pairs, n = ${n}, len(a) = ${la}`, pairs, () => [f32(la, (q) => q / 4, [0, 1, 3]), 1.5, n]])
  for (const [k, n, ly] of [
    [-1, 3, 6],
    [0, 3, 6],
    [1, 1, 2], // n = 1, k = 1: the branch taken once
    [0, 1, 2], // never taken
    [2, 3, 5], // y[5] out of range, after the ancilla was built
    [0, 0, 0],
  ] as const)
    cases.push([
      `ancilla, k = ${k}, n = ${n}, len(y) = ${ly}`,
      ancilla,
      () => [f32(ly, (q) => q / 8, [1, 4]), f32(Math.max(n, 1), (q) => 0.5 + q / 3 + (q % 2) / 7), k, n],
    ])
  for (const n of [0, 2, 3, 6])
    cases.push([`read every iteration, n = ${n}`, readEvery, () => [f32(2, (q) => q + 0.5, [0]), 0.75, n]])

  for (const [label, source, mk] of cases)
    it(`${label}: the interpreter's bits and errors, forwards and backwards, checks on and off`, () => {
      for (const checks of [true, false]) {
        const cpu = compile(source, 'cpu', checks)
        const ref = compile(source, 'interpreter', checks)
        for (const inverse of [false, true]) {
          const got = outcome(cpu, mk, inverse)
          const want = outcome(ref, mk, inverse)
          // (checks off: an index out of range is the caller's error, not compared)
          if (!checks && (got.error !== 'no error' || want.error !== 'no error')) continue
          expect(got, `checks ${checks}, inverse ${inverse}`).toEqual(want)
          if (checks) {
            // the unchecked entry: the same error where it fails (the arrays then part-updated,
            // its message without the note that they were restored), else the same bits
            const core = outcome(cpu, mk, inverse, true)
            const head = (e: string) => e.split('\n')[0]!.replace(/ \| \d+:\d+$/, '')
            expect(head(core.error)).toBe(head(got.error))
            expect(core.error.match(/ \| (\d+:\d+)$/)?.[1]).toBe(got.error.match(/ \| (\d+:\d+)$/)?.[1])
            if (core.error === 'no error') expect(core.bits).toBe(got.bits)
          }
        }
      }
    })

  it('a failure part-way leaves the arrays as they were before the call (checks on)', () => {
    const cpu = compile(pairs, 'cpu', true)
    const a = f32(5, (q) => q / 4, [0, 3])
    const before = bitsOf(a)
    expect(raisedError(() => cpu(a, 1.5, 3))).toMatch(/^runtime\/out-of-bounds \| index 5 is out of bounds for `a`/)
    expect(bitsOf(a)).toBe(before)
  })
})
