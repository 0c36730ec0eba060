/**
 * Pass `zero-sums` of `@tenet/ir` on compiled programs, cpu and wasm (checks off; and on, at the end):
 * the first update of a float scalar ancilla by a random sum of terms (products, quotients, calls
 * of the inputs, literals, nested sums), f64 (rewritten) and f32 (left), on signed zeros, infinities, NaN, huge and
 * tiny values, gives the reference interpreter's value bit for bit (the sign of a zero included),
 * with the pass and without; and the RK4 kernel. (The printed IR before
 * and after is in `zero-sums.test.ts` of `@tenet/ir`.)
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, lvSource, raisedError, referenceBackend, rk4LossSource } from '@tenet/testing'
import { wasmBackend } from './index.js'

const reference = referenceBackend({ checks: false })
const engines = [
  { name: 'cpu', engine: backendUnderTest(cpuBackend, { checks: false }) },
  { name: 'wasm', engine: backendUnderTest(wasmBackend, { checks: false }) },
]

/** Runs `f` with pass `zero-sums` switched off. */
function withoutPass<T>(f: () => T): T {
  disabledPasses.add('zero-sums')
  try {
    return f()
  } finally {
    disabledPasses.delete('zero-sums')
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

/** Values, the sign of a zero kept apart. */
const bits = (v: unknown): string =>
  JSON.stringify(v, (_k, x) => (typeof x === 'number' ? (Object.is(x, -0) ? '-0' : String(x)) : x))

const code = (text: string, name: string): string =>
  (
    engines[0]!.engine.compile(text)[name]![TENET_FUNCTION] as {
      compiled: { sourceOf(n: string, i: boolean): string }
    }
  ).compiled.sourceOf(name, false)

/** A random float expression over a, b, c, d of depth at most `depth`, with a sum at the top. */
function sum(r: ReturnType<typeof rng>, elem: 'f64' | 'f32', depth: number): string {
  const lit = (x: string) => (elem === 'f32' ? `f32(${x})` : x)
  const atom = () => r.pick(['a', 'b', 'c', 'd', 'a', 'b', lit('0.0'), lit('1.5'), lit('-2.0')])
  const term = (k: number): string => {
    if (k <= 0) return atom()
    switch (r.pick(['atom', 'mul', 'div', 'sum', 'neg', 'sqrt', 'mul'])) {
      case 'mul':
        return `${term(k - 1)} * ${term(k - 1)}`
      case 'div':
        return `${term(k - 1)} / (${term(k - 1)})`
      case 'sum':
        return `(${sum(r, elem, k - 1)})`
      case 'neg':
        return `-(${term(k - 1)})`
      case 'sqrt':
        return `sqrt(${term(k - 1)})`
      default:
        return atom()
    }
  }
  const n = 2 + Math.floor(r.next() * 3)
  let e = term(depth)
  for (let i = 1; i < n; i++) e += ` ${r.pick(['+', '-'])} ${term(depth)}`
  return e
}

const special = [0, -0, 0, -0, 1, -1, 0.5, 2, -3.5, 1e300, -1e300, 1e-300, -1e-320, Number.NaN, Infinity, -Infinity]

describe('pass `zero-sums` on compiled programs (checks off)', () => {
  it('random first updates of zero scalars: the reference’s bits, cpu and wasm, with the pass and without', {
    timeout: 600_000,
  }, () => {
    let rewritten = 0
    let negativeZeros = 0
    for (let seed = 1; seed <= 60; seed++) {
      const r = rng(seed * 2654435761 + 3)
      const elem = seed % 3 === 0 ? 'f32' : 'f64'
      const e1 = sum(r, elem, 2)
      const e2 = sum(r, elem, 1)
      const op = r.pick(['+=', '-='])
      const flip = op === '+=' ? '-=' : '+='
      // (a −= 0 leaves a as it is, bit for bit, and makes it a value just computed, so the sums
      // that read it are split; out[k] starts as −0, so out[k] += y is y itself, bit for bit; after the uncompute, with
      // checks off, y holds the rounding residue of a second update, which the pass must leave)
      const src = `
fn f(out: ${elem}[], a: ${elem}, b: ${elem}, c: ${elem}, d: ${elem}) {
  a -= ${elem === 'f32' ? 'f32(0.0)' : '0.0'}
  y: ${elem} <- 0.0
  z: ${elem} <- 0.0
  y ${op} ${e1}
  z += y + ${e2}
  out[0] += y
  out[1] += z
  z -= y + ${e2}
  y ${flip} ${e1}
  out[2] += y
  out[3] += z
  z -> 0.0
  y -> 0.0
}`
      if (code(src, 'f') !== withoutPass(() => code(`${src}\n`, 'f'))) rewritten++
      for (let k = 0; k < 12; k++) {
        const round = elem === 'f32' ? Math.fround : (x: number) => x
        const v = [0, 1, 2, 3].map(() => round(r.next() < 0.5 ? r.pick(special) : (r.next() - 0.5) * 8))
        const args = () => [elem === 'f32' ? Float32Array.of(-0, -0, -0, -0) : Float64Array.of(-0, -0, -0, -0), ...v]
        const call = (m: ReturnType<typeof reference.compile>) => bits(m.f!(...args()))
        const want = call(reference.compile(src))
        if (want.includes('"-0"')) negativeZeros++
        for (const { name, engine } of engines) {
          expect(call(engine.compile(src)), `${name}\n${src}\n${v}`).toBe(want)
          expect(
            withoutPass(() => call(engine.compile(`${src}\n`))),
            `${name} without the pass`,
          ).toBe(want)
        }
      }
    }
    // (most f64 programs are rewritten, and results that are −0 occur)
    expect(rewritten).toBeGreaterThan(25)
    expect(negativeZeros).toBeGreaterThan(10)
  })

  it('RK4: the stages split (cpu generated code), the reference’s values bit for bit', () => {
    const rk4 = `\n${lvSource}\n${rk4LossSource}`
    const on = code(rk4, 'rk4_loss')
    const off = withoutPass(() => code(`${rk4}\n`, 'rk4_loss'))
    // (a stage's first update starts from its first term: `v = (0 + (p * x))`, then `v = (v - …)`)
    expect(on).toMatch(/(v\d+) = \(0 \+ \([^()]*\)\);\n(?:.*\n)?\s*\1 = \(\1 - /)
    expect(off).not.toMatch(/(v\d+) = \(0 \+ \([^()]*\)\);\n(?:.*\n)?\s*\1 = \(\1 - /)
    const cases = [
      [0, Float64Array.of(1.2, 0.8), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.01, 50],
      [0, Float64Array.of(-0, 0.8), Float64Array.of(1.1, -0, 0.4, 0.1), -0, 3],
      [0, Float64Array.of(1e200, 1e200), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.5, 5],
    ] as const
    for (const c of cases) {
      const a = () => c.map((x) => (ArrayBuffer.isView(x) ? (x as Float64Array).slice() : x))
      const want = bits(reference.compile(rk4).rk4_loss!(...a()))
      for (const { name, engine } of engines) {
        expect(bits(engine.compile(rk4).rk4_loss!(...a())), name).toBe(want)
      }
    }
  })
})

describe('pass `zero-sums` on compiled programs (checks on)', () => {
  const checked = [
    { name: 'cpu', engine: backendUnderTest(cpuBackend, { checks: true }) },
    { name: 'wasm', engine: backendUnderTest(wasmBackend, { checks: true }) },
  ]
  const checkedReference = referenceBackend({ checks: true })
  /** The results' bits, or the error (code, message, location). */
  const outcome = (run: () => unknown): string => {
    try {
      return bits(run())
    } catch {
      return raisedError(run)
    }
  }

  it('random first updates that read elements, some out of range: the reference’s bits or its error, with the pass and without', {
    timeout: 600_000,
  }, () => {
    let failed = 0
    let passed = 0
    let rewritten = 0
    for (let seed = 1; seed <= 40; seed++) {
      const r = rng(seed * 2246822519 + 7)
      // (x has 3 elements: indices 3 and -1 are out of range; the terms read them in turn)
      const el = () => `x[${r.pick(['0', '1', '2', 'i', 'j', 'i + 1', 'j - 1'])}]`
      const term = () => r.pick([`${el()} * b`, el(), `b * ${el()} * ${el()}`, 'b', `sqrt(${el()})`, `${el()} / b`])
      const n = 2 + Math.floor(r.next() * 3)
      let e = term()
      for (let k = 1; k < n; k++) e += ` ${r.pick(['+', '-'])} ${term()}`
      const op = r.pick(['+=', '-='])
      const src = `
fn f(out: f64[], x: f64[], b: f64, i: i32, j: i32) {
  b -= 0.0
  y <- 0.0
  y ${op} ${e}
  out[0] += y
  y ${op === '+=' ? '-=' : '+='} ${e}
  y -> 0.0
}`
      const code = (t: string) =>
        (
          checked[0]!.engine.compile(t).f![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }
        ).compiled.sourceOf('f', false)
      if (code(src) !== withoutPass(() => code(`${src}\n`))) rewritten++
      for (let k = 0; k < 8; k++) {
        const v = [0, 1, 2].map(() => (r.next() < 0.3 ? r.pick(special) : (r.next() - 0.5) * 8))
        const b = r.next() < 0.3 ? r.pick(special) : r.next() * 4
        const i = r.pick([0, 1, 2, 3, -1])
        const j = r.pick([0, 1, 2, 3])
        const args = () => [Float64Array.of(-0), Float64Array.from(v), b, i, j]
        const call = (m: ReturnType<typeof checkedReference.compile>) => outcome(() => m.f!(...args()))
        const want = call(checkedReference.compile(src))
        if (want.startsWith('runtime/')) failed++
        else passed++
        for (const { name, engine } of checked) {
          expect(call(engine.compile(src)), `${name}\n${src}\n${v} ${b} ${i} ${j}`).toBe(want)
          expect(
            withoutPass(() => call(engine.compile(`${src}\n`))),
            `${name} without the pass`,
          ).toBe(want)
        }
      }
    }
    // (most programs are rewritten with checks on; some runs fail a check: a bounds check of a
    // later term, or the deallocation of a value that is not finite; others pass)
    expect(rewritten).toBeGreaterThan(20)
    expect(failed).toBeGreaterThan(40)
    expect(passed).toBeGreaterThan(40)
  })

  it('RK4 with checks on: the stages split (cpu generated code), the reference’s values bit for bit', () => {
    const rk4 = `\n${lvSource}\n${rk4LossSource}`
    const code = (t: string) =>
      (
        checked[0]!.engine.compile(t).rk4_loss![TENET_FUNCTION] as {
          compiled: { sourceOf(n: string, i: boolean): string }
        }
      ).compiled.sourceOf('rk4_loss', false)
    const split = /(v\d+) = \(0 \+ \([^()]*\)\);\n(?:.*\n)?\s*\1 = \(\1 - /
    expect(code(rk4)).toMatch(split)
    expect(withoutPass(() => code(`${rk4}\n`))).not.toMatch(split)
    const cases = [
      [0, Float64Array.of(1.2, 0.8), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.01, 50],
      [0, Float64Array.of(-0, 0.8), Float64Array.of(1.1, -0, 0.4, 0.1), -0, 3],
      [0, Float64Array.of(1e200, 1e200), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.5, 5],
    ] as const
    for (const c of cases) {
      const a = () => c.map((x) => (ArrayBuffer.isView(x) ? (x as Float64Array).slice() : x))
      const want = outcome(() => checkedReference.compile(rk4).rk4_loss!(...a()))
      for (const { name, engine } of checked)
        expect(
          outcome(() => engine.compile(rk4).rk4_loss!(...a())),
          name,
        ).toBe(want)
    }
  })
})
