/**
 * Pass `finite-history` of `@tenet/ir` on compiled programs, cpu and wasm, with run-time checks
 * on: history loops into `zeros` arrays and their inverse loops (`~routine`), generated at random
 * (directions, write indices `k` and `len(c) - 1 - k`, reads of earlier elements, of later ones
 * (which the pass leaves), f64 and f32, values that overflow, divide by zero or take the square
 * root of a negative number), compute the reference interpreter's values bit for bit and raise its
 * errors (code, message, source location), with the pass and without; the Horner kernel's
 * uncompute no longer evaluates its values again; and gradients with checks on are unchanged and
 * match central differences. (The printed IR before and after is in `finite-history.test.ts` of
 * `@tenet/ir`.)
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, hornerLossSource, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const reference = referenceBackend({ checks: true })
const engines = [
  { name: 'cpu', engine: backendUnderTest(cpuBackend, { checks: true }) },
  { name: 'wasm', engine: backendUnderTest(wasmBackend, { checks: true }) },
]

/** Runs `f` with pass `finite-history` switched off. */
function withoutPass<T>(f: () => T): T {
  disabledPasses.add('finite-history')
  try {
    return f()
  } finally {
    disabledPasses.delete('finite-history')
  }
}

const horner = `
${hornerLossSource}`

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

/** The shapes of history loop: range, write index, the element of the previous iteration, of the next, the first write. */
/**
 * The shapes of history loop: range, write index, the first write (outside the loop's elements),
 * the direction of the previous iteration's element from the written one, the array's length, and
 * the element the loop's first iteration writes.
 */
const shapes = [
  { range: 'len(c) - 2..=0 by -1', w: 'k', first: 'len(c) - 1', d: 1, n: 'len(c)', w0: 'len(c) - 2' },
  { range: '1..len(c)', w: 'k', first: '0', d: -1, n: 'len(c)', w0: '1' },
  { range: '1..len(c)', w: 'len(c) - 1 - k', first: 'len(c) - 1', d: 1, n: 'len(c)', w0: 'len(c) - 2' },
  // (with room around the written elements: reads of later elements stay in bounds)
  { range: 'len(c) - 2..=0 by -1', w: 'k + 2', first: 'len(c) + 3', d: 1, n: 'len(c) + 4', w0: 'len(c)' },
  { range: '1..len(c)', w: 'k + 2', first: '0', d: -1, n: 'len(c) + 4', w0: '3' },
  { range: '1..len(c)', w: 'len(c) + 1 - k', first: 'len(c) + 3', d: 1, n: 'len(c) + 4', w0: 'len(c)' },
  { range: 'len(c) - 1..0 by -1', w: 'k + 2', first: '0', d: 1, n: 'len(c) + 4', w0: 'len(c) + 1' },
  { range: '2..len(c) by 2', w: 'k + 2', first: '0', d: -1, n: 'len(c) + 4', w0: '4' },
  { range: 'len(c) - 1..=1 by -1', w: 'k + 1', first: 'len(c) + 3', d: 1, n: 'len(c) + 4', w0: 'len(c)' },
] as const

/** `w + o` as source. */
const plus = (w: string, o: number): string => (o > 0 ? `${w} + ${o}` : `${w} - ${-o}`)

/** A random program: a batch of routines, each a history loop (its first write before it), read, and `~routine`. */
function program(r: ReturnType<typeof rng>, elem: 'f64' | 'f32'): { src: string; later: boolean } {
  const s = r.pick(shapes)
  // reads of an earlier element (the previous iteration's, two back), or a later one (left by the pass)
  const later = r.next() < 0.35
  const dir = later ? -s.d : s.d
  const prev = plus(s.w, dir)
  const prev2 = plus(s.w, 2 * dir)
  const a = (i: string) => `acc[${i}]`
  const e = r.pick([
    `${a(prev)} * x[j] + c[k]`,
    `tanh(${a(prev)}) + c[k] / x[j]`,
    `sqrt(${a(prev)} + c[k])`,
    `${a(prev)} * ${a(prev)} - c[k] * x[j]`,
    `exp(${a(prev)} * x[j]) - 1.0`,
    `c[k]`,
    `${a(prev)} + ${a(prev2)} * x[j]`,
    `${a(s.first)} * c[k]`,
    // (a check inside the value that reads the array: a conversion that fails on NaN)
    `c[k] + ${elem}(i32(${a(prev)} * 0.0))`,
  ])
  // (a probe after the uncompute that tells NaN from zero: a read out of bounds fails its check)
  const q = r.pick(['1', '2', '3', 'div(len(c), 2) + 1', s.w0, s.w0, s.w0])
  const probe = r.next() < 0.5 ? `\n    if (acc[${q}] != acc[${q}], ~) { out[j] += acc[len(c) + 9] }` : ''
  // (the copy into a scalar; or into an array parameter, after which the pass leaves the loop)
  const copy = r.next() < 0.8 ? 'loss' : 'out[j]'
  const src = `
fn f(loss: ${elem}, out: ${elem}[], c: ${elem}[], x: ${elem}[]) {
  for j in 0..len(x) {
    acc: ${elem}[] <- zeros(${s.n})
    acc[${s.first}] += c[0] + x[j]
    for k in ${s.range} { acc[${s.w}] += ${e} }
    ${copy} += acc[${r.pick(['0', 'len(c) - 1', 'div(len(c), 2)'])}]
    for k in reverse ${s.range} { acc[${s.w}] -= ${e} }${probe}
    acc[${s.first}] -= c[0] + x[j]
    acc -> zeros(${s.n})
  }
}`
  return { src, later }
}

/** A random nest: a history over T steps of n elements (a stencil), its first row before it. */
function nest(r: ReturnType<typeof rng>, elem: 'f64' | 'f32'): string {
  const down = r.next() < 0.3
  // (the previous step's row: t below the written row going up, above it going down)
  const prevRow = down ? '(t + 2) * n' : 't * n'
  const nextRow = down ? 't * n' : '(t + 2) * n'
  const row = r.next() < 0.2 ? nextRow : prevRow
  const u = (i: string) => `u[${i}]`
  const e = r.pick([
    `${u(`${row} + i`)} + c[0] * (${u(`${row} + i - 1`)} - 2.0 * ${u(`${row} + i`)} + ${u(`${row} + i + 1`)})`,
    `tanh(${u(`${row} + i`)}) * c[i]`,
    `sqrt(${u(`${row} + i + 1`)}) + c[i]`,
    `${u(`(t + 1) * n + i - 1`)} * c[0] + ${u(`${row} + i`)}`,
    `${u(`(t + 1) * n + i + 1`)} * c[0] + c[i]`,
    `c[i] / ${u(`${row} + i - 1`)}`,
    // (a row that grows past the f64 range, and a read of the next step's row, left by the pass)
    `${u(`${prevRow} + i`)} * 1.0e200 + c[0] * ${u(`${r.next() < 0.5 ? nextRow : prevRow} + i`)}`,
  ])
  const first = down ? '(T + 1) * n' : '0'
  const range = down ? 'T - 1..=0 by -1' : '0..T'
  const q = r.pick(['n + 1', 'T * n + 1', '2 * n - 2', 'n + div(n, 2)'])
  const probe = r.next() < 0.5 ? `\n  if (u[${q}] != u[${q}], ~) { loss += u[(T + 2) * n + 9] }` : ''
  return `
fn g(loss: ${elem}, u0: ${elem}[], c: ${elem}[], n: i32, T: i32) {
  u: ${elem}[] <- zeros((T + 2) * n)
  for i in 0..n { u[${first} + i] += u0[i] }
  for t in ${range} { for i in 1..n - 1 { u[(t + 1) * n + i] += ${e} } }
  loss += u[T * n + div(n, 2)]
  for t in reverse ${range} { for i in reverse 1..n - 1 { u[(t + 1) * n + i] -= ${e} } }${probe}
  for i in reverse 0..n { u[${first} + i] -= u0[i] }
  u -> zeros((T + 2) * n)
}`
}

const special = [
  0,
  -0,
  1,
  -1,
  0.5,
  2,
  -3.5,
  1e300,
  -1e300,
  1e-300,
  Number.NaN,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  40,
]

function args(r: ReturnType<typeof rng>, elem: 'f64' | 'f32'): () => unknown[] {
  const Arr = (elem === 'f64' ? Float64Array : Float32Array) as typeof Float64Array
  const n = 2 + Math.floor(r.next() * 5)
  const m = 1 + Math.floor(r.next() * 3)
  const value = () => (r.next() < 0.2 ? r.pick(special) : Math.round((r.next() * 4 - 2) * 64) / 64)
  const c = Arr.from({ length: n }, value)
  // (one value that is not finite, or overflows, somewhere after the first)
  if (r.next() < 0.4)
    c[1 + Math.floor(r.next() * (n - 1))] = r.pick([Number.NaN, Number.POSITIVE_INFINITY, -1e300, 1e300])
  const x = Arr.from({ length: m }, value)
  const out = Arr.from({ length: m + (r.next() < 0.1 ? -1 : 0) }, () => 0)
  return () => [0, out.slice(), c.slice(), x.slice()]
}

function nestArgs(r: ReturnType<typeof rng>, elem: 'f64' | 'f32'): () => unknown[] {
  const Arr = (elem === 'f64' ? Float64Array : Float32Array) as typeof Float64Array
  const n = 2 + Math.floor(r.next() * 5)
  const T = Math.floor(r.next() * 5)
  const value = () => (r.next() < 0.15 ? r.pick(special) : Math.round((r.next() * 4 - 1) * 64) / 64)
  const u0 = Arr.from({ length: n }, value)
  const c = Arr.from({ length: n }, value)
  for (const a of [u0, c])
    if (r.next() < 0.4) a[Math.floor(r.next() * n)] = r.pick([Number.NaN, Number.POSITIVE_INFINITY, -1e300, 1e300])
  return () => [0, u0.slice(), c.slice(), n, T]
}

/** The result or the error, comparable bit for bit (NaN payloads aside). */
function outcome(run: () => unknown): unknown {
  try {
    const v = run()
    return JSON.stringify(v, (_k, x) =>
      ArrayBuffer.isView(x)
        ? Array.from(x as Float64Array, (y) => (Object.is(y, -0) ? '-0' : String(y)))
        : typeof x === 'number'
          ? Object.is(x, -0)
            ? '-0'
            : String(x)
          : x,
    )
  } catch {
    return raisedError(run)
  }
}

describe('pass `finite-history` on compiled programs (checks on)', () => {
  it('leaves the values out of Horner’s uncompute (cpu generated code)', () => {
    // (a source of its own without the pass: the compile caches key on it)
    const code = (text: string): string =>
      (
        engines[0]!.engine.compile(text).horner_loss![TENET_FUNCTION] as {
          compiled: { sourceOf(n: string, i: boolean): string }
        }
      ).compiled.sourceOf('horner_loss', false)
    const on = code(horner)
    const off = withoutPass(() => code(`${horner}\n`))
    expect(on).toMatch(/(v\d+)\[(i\d+)\] = \(\1\[\2\] - \1\[\2\]\)/)
    expect(off).not.toMatch(/(v\d+)\[(i\d+)\] = \(\1\[\2\] - \1\[\2\]\)/)
    // (the multiply-add chain once per loop, not twice: the forward's two versions of the loop)
    expect((on.match(/ \* /g) ?? []).length).toBeLessThan((off.match(/ \* /g) ?? []).length)
  })

  it('random history loops: the reference’s values and errors, cpu and wasm, with the pass and without', () => {
    let rewritten = 0
    let failures = 0
    for (let seed = 1; seed <= 80; seed++) {
      const r = rng(seed * 2654435761)
      const elem = seed % 3 === 0 ? 'f32' : 'f64'
      const { src } = program(r, elem)
      const cases = Array.from({ length: 6 }, () => args(r, elem))
      const code = (e: (typeof engines)[0]['engine'], text: string) =>
        (
          e.compile(text).f![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }
        ).compiled.sourceOf('f', false)
      if (code(engines[0]!.engine, src) !== withoutPass(() => code(engines[0]!.engine, `${src}\n`))) {
        rewritten++
      }
      for (const a of cases) {
        const want = outcome(() => reference.compile(src).f!(...a()))
        if (typeof want === 'string' && want.startsWith('runtime/')) failures++
        for (const { name, engine } of engines) {
          expect(
            outcome(() => engine.compile(src).f!(...a())),
            `${name}\n${src}\n${a()}`,
          ).toEqual(want)
          expect(
            withoutPass(() => outcome(() => engine.compile(`${src}\n`).f!(...a()))),
            `${name} without the pass`,
          ).toEqual(want)
        }
      }
    }
    // (the generator reaches both: programs the pass rewrites, and failing checks)
    expect(rewritten).toBeGreaterThan(20)
    expect(failures).toBeGreaterThan(10)
  })

  it('random history nests (stencils): the reference’s values and errors, cpu and wasm, with the pass and without', () => {
    let rewritten = 0
    let failures = 0
    for (let seed = 1; seed <= 60; seed++) {
      const r = rng(seed * 40503 + 7)
      const elem = seed % 4 === 0 ? 'f32' : 'f64'
      const src = nest(r, elem)
      const cases = Array.from({ length: 6 }, () => nestArgs(r, elem))
      const code = (text: string) =>
        (
          engines[0]!.engine.compile(text).g![TENET_FUNCTION] as {
            compiled: { sourceOf(n: string, i: boolean): string }
          }
        ).compiled.sourceOf('g', false)
      if (code(src) !== withoutPass(() => code(`${src}\n`))) rewritten++
      for (const a of cases) {
        const want = outcome(() => reference.compile(src).g!(...a()))
        if (typeof want === 'string' && want.startsWith('runtime/')) failures++
        for (const { name, engine } of engines) {
          expect(
            outcome(() => engine.compile(src).g!(...a())),
            `${name}\n${src}\n${a()}`,
          ).toEqual(want)
          expect(
            withoutPass(() => outcome(() => engine.compile(`${src}\n`).g!(...a()))),
            `${name} without the pass`,
          ).toEqual(want)
        }
      }
    }
    console.log(`nests: rewritten ${rewritten} failures ${failures}`)
    expect(rewritten).toBeGreaterThan(20)
    expect(failures).toBeGreaterThan(10)
  })
})
