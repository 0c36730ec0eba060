/**
 * An integrator's stages with run-time checks on, cpu and wasm, against the reference interpreter:
 * pass `zero-sums` splits each stage's first update (checks on too), `finite-uncompute` writes the
 * uncompute of a stage that reads the history's current elements `y -= y` although the step writes
 * the history's next elements in between, and `implied-checks` then leaves out the checks that a
 * later stage's passed check decides. A midpoint (RK2) integrator of the Lorenz system (three
 * coordinates a step, a program of no benchmark) and the RK4 kernel compute the reference's bits,
 * forwards and backwards, with checks on and off; inputs that make a stage ±∞ or NaN, and a
 * variant whose step writes an element its stages read, fail with the reference's error, with the
 * passes and without. (The printed IR is in `@tenet/ir`'s `zero-sums.test.ts`,
 * `finite-uncompute.test.ts` and `implied-checks.test.ts`.)
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses, type PassName } from '@tenet/ir/backend'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, lvSource, raisedError, referenceBackend, rk4LossSource } from '@tenet/testing'
import { wasmBackend } from './index.js'

/** The Lorenz right-hand side, and `mid_loss`: x + y·z of the state after `steps` midpoint steps. */
const lorenz = (next = 'xs[3 * t + 3]') => `
fn lorenz(d0: f64, d1: f64, d2: f64, x: f64, y: f64, z: f64, q: f64[]) {
  d0 += q[0] * (y - x)
  d1 += x * (q[1] - z) - y
  d2 += x * y - q[2] * z
}
fn mid_loss(loss: f64, x0: f64[], q: f64[], h: f64, steps: i32) {
  routine {
    xs: f64[] <- zeros(3 * steps + 3)
    xs[0] += x0[0]
    xs[1] += x0[1]
    xs[2] += x0[2]
    for t in 0..steps {
      routine {
        k0, k1, k2, m0, m1, m2 <- 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        u0, u1, u2 <- 0.0, 0.0, 0.0
        lorenz(k0, k1, k2, xs[3 * t], xs[3 * t + 1], xs[3 * t + 2], q)
        u0 += xs[3 * t] + h / 2.0 * k0
        u1 += xs[3 * t + 1] + h / 2.0 * k1
        u2 += xs[3 * t + 2] + h / 2.0 * k2
        lorenz(m0, m1, m2, u0, u1, u2, q)
      }
      ${next} += xs[3 * t] + h * m0
      xs[3 * t + 4] += xs[3 * t + 1] + h * m1
      xs[3 * t + 5] += xs[3 * t + 2] + h * m2
      ~routine
    }
  }
  loss += xs[3 * steps] + xs[3 * steps + 1] * xs[3 * steps + 2]
  ~routine
}`

const rk4 = `\n${lvSource}\n${rk4LossSource}`

const PASSES: PassName[] = ['zero-sums', 'finite-uncompute', 'implied-checks']

/** Runs `f` with `passes` switched off. */
function without<T>(passes: PassName[], f: () => T): T {
  for (const p of passes) disabledPasses.add(p)
  try {
    return f()
  } finally {
    for (const p of passes) disabledPasses.delete(p)
  }
}

/** Values, the sign of a zero kept apart. */
const bits = (v: unknown): string =>
  JSON.stringify(v, (_k, x) => (typeof x === 'number' ? (Object.is(x, -0) ? '-0' : String(x)) : x))

/** What a call gives: its results' bits, or its error (code, message, location). */
function outcome(run: () => unknown): string {
  try {
    return bits(run())
  } catch {
    return raisedError(run)
  }
}

const engines = (checks: boolean) => [
  { name: 'cpu', engine: backendUnderTest(cpuBackend, { checks }) },
  { name: 'wasm', engine: backendUnderTest(wasmBackend, { checks }) },
]

/** `name`'s outcome on the reference and on each engine, with the passes and without, forwards (and backwards from there). */
function agree(src: string, name: string, args: () => unknown[], checks: boolean) {
  const run = (m: Record<string, unknown>) => {
    const f = m[name] as ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }
    const forward = f(...args())
    return [forward, f.inverse(...forward)]
  }
  const want = outcome(() => run(referenceBackend({ checks }).compile(src)))
  for (const { name: n, engine } of engines(checks)) {
    expect(
      outcome(() => run(engine.compile(src))),
      `${n}, checks ${checks}`,
    ).toBe(want)
    expect(
      without(PASSES, () => outcome(() => run(engine.compile(`${src}\n`)))),
      `${n} without the passes, checks ${checks}`,
    ).toBe(want)
  }
  return want
}

/** The checked cpu code of `name`'s forward function. */
const checkedCode = (src: string, name: string): string =>
  (
    engines(true)[0]!.engine.compile(src)[name]![TENET_FUNCTION] as {
      compiled: { sourceOf(n: string, i: boolean): string }
    }
  ).compiled.sourceOf(name, false)

const midArgs = (x0: number[], q: number[], h: number, steps: number) => () => [
  0,
  Float64Array.from(x0),
  Float64Array.from(q),
  h,
  steps,
]

describe('an integrator’s stages with checks on (zero-sums, finite-uncompute, implied-checks)', () => {
  it('the midpoint Lorenz steps: stages split, uncomputed as y -= y, most of their checks decided by later ones', () => {
    const on = checkedCode(lorenz(), 'mid_loss')
    const off = without(PASSES, () => checkedCode(`${lorenz()}\n`, 'mid_loss'))
    // (a stage's first update starts from its first term, with checks on too)
    const split = /(v\d+) = \(0 \+ \([^()]*\)\);\n(?:.*\n)?\s*\1 = \(\1 [-+] /
    expect(on).toMatch(split)
    expect(off).not.toMatch(split)
    // every stage's uncompute is y -= y: none evaluates its stage again, though the step writes
    // the history's next elements in between (off: the stages that read xs[3t…] evaluate them again)
    // (the uncomputes: the updates right after the step's last store to the history)
    const uncomputes = (code: string) =>
      [...code.matchAll(/v0\[c\d+\] = w\d+;\n((?:\s*v\d+ = \([^;]*\);\n)+)/g)].flatMap((m) =>
        m[1]!.trim().split(/\n\s*/),
      )
    const self = (u: string) => /^(v\d+) = \(\1 - \1\);$/.test(u)
    expect(uncomputes(on).length).toBeGreaterThanOrEqual(9)
    expect(uncomputes(on).every(self)).toBe(true)
    expect(uncomputes(off).length).toBe(uncomputes(on).length)
    expect(uncomputes(off).filter((u) => !self(u)).length).toBeGreaterThanOrEqual(3)
    // fewer deallocation checks per step: the second stage's decide the first's
    const deallocs = (code: string) => (code.match(/if \(!\(v\d+ === 0/g) ?? []).length
    expect(deallocs(on)).toBeLessThan(deallocs(off))
  })

  it('the midpoint Lorenz steps and RK4: the reference’s bits, forwards and backwards, checks on and off', () => {
    for (const checks of [true, false]) {
      const want = agree(lorenz(), 'mid_loss', midArgs([1, 1.5, 20], [10, 28, 8 / 3], 0.01, 40), checks)
      expect(want).not.toMatch(/runtime\//)
      agree(lorenz(), 'mid_loss', midArgs([-0, 0, -0], [10, -0, 8 / 3], -0, 3), checks)
      agree(lorenz(), 'mid_loss', midArgs([1, 1.5, 20], [10, 28, 8 / 3], 0.01, 0), checks)
      const rk4Args = (h: number, x: number) => () => [
        0,
        Float64Array.of(x, 0.8),
        Float64Array.of(1.1, 0.4, 0.4, 0.1),
        h,
        30,
      ]
      agree(rk4, 'rk4_loss', rk4Args(0.01, 1.2), checks)
      agree(rk4, 'rk4_loss', rk4Args(-0, -0), checks)
    }
  })

  it('fails as the reference does where a stage is ±∞ or NaN, with the passes and without', () => {
    const cases: Array<[number[], number[], number]> = [
      [[1, 1.5, Number.NaN], [10, 28, 8 / 3], 0.01],
      [[1, 1.5, 20], [10, 28, 8 / 3], Number.POSITIVE_INFINITY],
      [[1e200, 1e200, 1e200], [10, 28, 8 / 3], 0.01],
      [[1, 1.5, 20], [Number.NEGATIVE_INFINITY, 28, 8 / 3], 0.01],
    ]
    for (const [x0, q, h] of cases) {
      const want = agree(lorenz(), 'mid_loss', midArgs(x0, q, h, 5), true)
      expect(want).toMatch(/^runtime\/dealloc/)
    }
    const rk4Bad = () => [0, Float64Array.of(1e300, 1e300), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.5, 5]
    expect(agree(rk4, 'rk4_loss', rk4Bad, true)).toMatch(/^runtime\/dealloc/)
  })

  it('keeps the uncompute of a stage whose element the step writes (the same element), and fails as the reference does', () => {
    // the step adds to xs[3t + 1], which the first stage read: that stage must be evaluated again
    const src = lorenz('xs[3 * t + 1]')
    const on = checkedCode(src, 'mid_loss')
    expect(on).toMatch(/(v\d+) = \(\1 - \(\(?v\d+ \* /)
    // (the step changes what k was computed from: k's uncompute leaves a residue)
    const want = agree(src, 'mid_loss', midArgs([1, 1.5, 20], [10, 28, 8 / 3], 0.01, 3), true)
    expect(want).toMatch(/^runtime\/dealloc/)
  })
})
