/**
 * Pass `finite-steps` of `@tenet/ir` on compiled programs, cpu and wasm, with run-time checks on:
 * loops of steps (scalars computed and uncomputed per step, one or more elements of a history
 * array written per step) and their inverse loops (`~routine`), generated at random (strides 1 to
 * 3, upward, downward and mirrored indices, reads of the previous step's elements, of the step's
 * own or the next step's (which the pass leaves), two updates of one element (left too), f64 and
 * f32, values that overflow, divide by zero, take the square root of a negative number or fail a
 * conversion), compute the reference interpreter's values bit for bit and raise its errors (code,
 * message, source location), with the pass and without; the RK4 kernel's uncompute no longer
 * evaluates its stages again. (The printed IR before and after is in `finite-steps.test.ts` of
 * `@tenet/ir`.)
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, lvSource, raisedError, referenceBackend, rk4LossSource } from '@tenet/testing'
import { wasmBackend } from './index.js'

const reference = referenceBackend({ checks: true })
const engines = [
  { name: 'cpu', engine: backendUnderTest(cpuBackend, { checks: true }) },
  { name: 'wasm', engine: backendUnderTest(wasmBackend, { checks: true }) },
]

/** Runs `f` with pass `finite-steps` switched off. */
function withoutPass<T>(f: () => T): T {
  disabledPasses.add('finite-steps')
  try {
    return f()
  } finally {
    disabledPasses.delete('finite-steps')
  }
}

// the kernels' RK4 (Lotka–Volterra) listing, the same text as the bench's
const rk4 = `\n${lvSource}\n${rk4LossSource}`

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

/**
 * The shapes of a loop of steps with stride S: range, the first element a step writes (`W`), the
 * first it reads (`R`: the previous step's), the first written before the loop, the length.
 */
const shapes = [
  { range: '0..T', W: 'S * t + S', R: 'S * t', first: '0', n: 'S * T + S' },
  { range: 'T - 1..=0 by -1', W: 'S * t', R: 'S * t + S', first: 'S * T', n: 'S * T + S' },
  { range: '0..T', W: 'S * T - S * t - S', R: 'S * T - S * t', first: 'S * T', n: 'S * T + S' },
] as const

/** A random program: a loop of steps over T steps of S elements, the first block before it, `~routine`. */
function program(r: ReturnType<typeof rng>, elem: 'f64' | 'f32'): { src: string; leftAlone: boolean } {
  const S = r.pick([1, 2, 2, 3])
  const shape = r.pick(shapes)
  const lit = (x: string) => (elem === 'f32' ? `f32(${x})` : x)
  const sub = (x: string) => x.replaceAll('S', String(S))
  const W = sub(shape.W)
  // (the previous step's block; or the step's own, or the next step's: left by the pass)
  const which = r.next()
  const own = which < 0.12
  const next = !own && which < 0.24
  const R = own ? W : next ? `${W} + ${W} - (${sub(shape.R)})` : sub(shape.R)
  const m = 1 + Math.floor(r.next() * S)
  // (elements the updates write: a read of the step's own or the next step's block reads one)
  const a = (o: number) => `A[${R} + ${o % m}]`
  // (the updates read the previous step's block: a read of the written element itself is a static error)
  const b = (o: number) => `A[${sub(shape.R)} + ${o % S}]`
  const e0 = r.pick([
    `p * ${a(0)} * ${a(1)}`,
    `sqrt(${a(0)} + p)`,
    `p / ${a(0)}`,
    `exp(${a(1)} * p) - ${lit('1.0')}`,
    `tanh(${a(0)}) * p`,
    // (a check inside the value: a conversion that fails on NaN and out of range)
    `${a(0)} + ${elem}(i32(${a(1)} * ${lit('0.0')}))`,
  ])
  const e1 = r.pick([
    `k0 * ${a(0)} - p`,
    `sqrt(k0)`,
    `k0 * k0 * ${lit(elem === 'f32' ? '1.0e30' : '1.0e200')}`,
    `k0 + p`,
  ])
  const updates = Array.from({ length: m }, (_, j) => {
    const e = r.pick([`${b(j)} + p * (k0 + ${lit('2.0')} * k1)`, `${b(j)} * k1`, `k0 - ${b(j + 1)}`, `k1`])
    return { target: `A[${W} + ${j}]`, e }
  })
  // (two updates of one element per step: left by the pass)
  const twice = r.next() < 0.1
  if (twice) updates.push({ target: updates[0]!.target, e: `k0 * p` })
  const z = lit('0.0')
  const P = `
    k0 <- ${z}
    k1 <- ${z}
    k0 += ${e0}
    k1 += ${e1}`
  // (a step that reads its own or the next step's elements in P only: its uncompute reads the
  // zero they held in the loop, so the loop's checks pass and only the inverse's would see them)
  const e0Q = (own || next) && r.next() < 0.6 ? e0.replace(/A\[[^\]]*\]/g, z) : e0
  const e1Q = e0Q === e0 ? e1 : e1.replace(/A\[[^\]]*\]/g, z)
  const Q = `
    k1 -= ${e1Q}
    k0 -= ${e0Q}
    k1 -> ${z}
    k0 -> ${z}`
  const first = sub(shape.first)
  const n = sub(shape.n)
  const pad = next ? ` + ${S}` : ''
  const pre = Array.from({ length: S }, (_, j) => `A[${first} + ${j}] += x0 + ${lit(`${j}.0`)}`)
  const q = r.pick(['0', '1', `${S}`, `${S} * T`, `${S} * T - 1`])
  const probe = r.next() < 0.5 ? `\n  if (A[${q}] != A[${q}], ~) { loss += A[${n} + 9] }` : ''
  const src = `
fn f(loss: ${elem}, x0: ${elem}, p: ${elem}, T: i32) {
  A: ${elem}[] <- zeros(${n}${pad})
  ${pre.join('\n  ')}
  for t in ${sub(shape.range)} {${P}
    ${updates.map((u) => `${u.target} += ${u.e}`).join('\n    ')}${Q}
  }
  loss += A[${r.pick(['0', `${S} * T`, `div(${S} * T, 2)`])}]
  for t in reverse ${sub(shape.range)} {${P}
    ${[...updates]
      .reverse()
      .map((u) => `${u.target} -= ${u.e}`)
      .join('\n    ')}${Q}
  }${probe}
  ${[...pre]
    .reverse()
    .map((s) => s.replace('+=', '-='))
    .join('\n  ')}
  A -> zeros(${n}${pad})
}`
  return { src, leftAlone: own || next || twice }
}

const special = [0, -0, 1, -1, 0.5, 2, -3.5, 1e300, -1e300, 1e-300, Number.NaN, Number.POSITIVE_INFINITY, 40, 1e30]

function args(r: ReturnType<typeof rng>, elem: 'f64' | 'f32'): () => unknown[] {
  const round = elem === 'f32' ? Math.fround : (x: number) => x
  const value = () => round(r.next() < 0.25 ? r.pick(special) : Math.round((r.next() * 4 - 1) * 64) / 64)
  const x0 = value()
  const p = value()
  const T = Math.floor(r.next() * 6)
  return () => [0, x0, p, T]
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

describe('pass `finite-steps` on compiled programs (checks on)', () => {
  it('leaves the stages out of RK4’s uncompute (cpu generated code)', () => {
    // (a source of its own without the pass: the compile caches key on it)
    const on = code(rk4, 'rk4_loss')
    const off = withoutPass(() => code(`${rk4}\n`, 'rk4_loss'))
    expect(on).toMatch(/(v\d+)\[(c\d+)\] = \(\1\[\2\] - \1\[\2\]\)/)
    expect(off).not.toMatch(/(v\d+)\[(c\d+)\] = \(\1\[\2\] - \1\[\2\]\)/)
    // (the stages once per step, in the forward loop's versions, not again in the uncompute)
    const stages = (c: string) => (c.match(/ \* /g) ?? []).length
    expect(stages(on)).toBeLessThan(0.6 * stages(off))
  })

  it('RK4: the same values and errors, cpu and wasm, with the pass and without', () => {
    const cases = [
      [0, Float64Array.of(1.2, 0.8), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.01, 50],
      [0, Float64Array.of(1.2, 0.8), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.01, 0],
      [0, Float64Array.of(1e200, 1e200), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.5, 5],
      [0, Float64Array.of(Number.NaN, 1), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.01, 3],
      [0, Float64Array.of(1.2, 0.8), Float64Array.of(1.1, 0.4, 0.4), 0.01, 3],
      [0, Float64Array.of(1.2), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.01, 3],
    ] as const
    for (const c of cases) {
      const a = () => c.map((x) => (ArrayBuffer.isView(x) ? (x as Float64Array).slice() : x))
      for (const inverse of [false, true]) {
        type M = ReturnType<typeof reference.compile>
        const call = (m: M) => (inverse ? m.rk4_loss!.inverse : m.rk4_loss!)(...a())
        const want = outcome(() => call(reference.compile(rk4)))
        for (const { name, engine } of engines) {
          expect(
            outcome(() => call(engine.compile(rk4))),
            `${name} ${inverse} ${c}`,
          ).toEqual(want)
          expect(
            withoutPass(() => outcome(() => call(engine.compile(`${rk4}\n`)))),
            `${name} ${inverse} without the pass`,
          ).toEqual(want)
        }
      }
    }
  })

  it('random loops of steps: the reference’s values and errors, cpu and wasm, with the pass and without', {
    timeout: 600_000,
  }, () => {
    let rewritten = 0
    let wrongShapeRewritten = 0
    let failures = 0
    for (let seed = 1; seed <= 80; seed++) {
      const r = rng(seed * 2654435761 + 11)
      const elem = seed % 4 === 0 ? 'f32' : 'f64'
      const { src, leftAlone } = program(r, elem)
      const cases = Array.from({ length: 6 }, () => args(r, elem))
      const changed = code(src, 'f') !== withoutPass(() => code(`${src}\n`, 'f'))
      if (changed) rewritten++
      if (changed && leftAlone) wrongShapeRewritten++
      for (const a of cases) {
        // (the function and its inverse: the pass rewrites both)
        for (const inverse of [false, true]) {
          type M = ReturnType<typeof reference.compile>
          const call = (m: M) => (inverse ? m.f!.inverse : m.f!)(...a())
          const want = outcome(() => call(reference.compile(src)))
          if (typeof want === 'string' && want.startsWith('runtime/')) failures++
          for (const { name, engine } of engines) {
            expect(
              outcome(() => call(engine.compile(src))),
              `${name} ${inverse}\n${src}\n${a()}`,
            ).toEqual(want)
            expect(
              withoutPass(() => outcome(() => call(engine.compile(`${src}\n`)))),
              `${name} ${inverse} without the pass`,
            ).toEqual(want)
          }
        }
      }
    }
    // (the generator reaches both: programs the pass rewrites, and failing checks; and the pass
    // leaves the loops whose steps read their own or the next step's elements, or write one twice)
    expect(rewritten).toBeGreaterThan(30)
    expect(wrongShapeRewritten).toBe(0)
    expect(failures).toBeGreaterThan(20)
  })
})
