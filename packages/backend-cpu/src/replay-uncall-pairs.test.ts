/**
 * Pass `replay-uncall` (see `@tenet/ir`) with run-time checks on, on programs with several
 * call–uncall pairs, or calls between a call and its uncall: the recording calls and their replays
 * must pop exactly the terms they pushed. Nested pairs replay; crossing pairs
 * (`f(a…) f(b…) ~f(a…) ~f(b…)`) keep one plain uncall; a function called between a recording call
 * and its uncall (one the host calls too) leaves the tape as it was. Every program computes the
 * reference interpreter's values and errors bit for bit.
 */
import { describe, expect, it } from 'vitest'
import { TENET_FUNCTION } from '@tenet/reversible'
import { accelSource, backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { cpuBackend } from './index.js'

const cpu = backendUnderTest(cpuBackend, { checks: true })
const reference = referenceBackend({ checks: true })

const run = (b: typeof cpu, src: string, entry: string, args: () => unknown[]) => {
  const a = args()
  let err: string | undefined
  let out: unknown
  try {
    out = b.compile(src)[entry]!(...a)
  } catch (e) {
    err = raisedError(() => {
      throw e
    })
  }
  return { out, err, args: a }
}

/** The reference's and the cpu backend's runs of `entry` agree: values, arrays and errors. */
const same = (src: string, entry: string, args: () => unknown[], fails = false) => {
  const want = run(reference, src, entry, args)
  const got = run(cpu, src, entry, args)
  if (fails) expect(want.err).toBeDefined()
  else expect(want.err).toBeUndefined()
  expect(got.err).toBe(want.err)
  expect(got.args).toEqual(want.args)
  expect(got.out).toEqual(want.out)
}

/** A term pushed on the tape, and one popped (the generated code of `$record` and `$replayed`). */
const RECORDS = /tape\d+\[top\d+\+\+\] = /
const REPLAYS = /tape\d+\[--top\d+\]/

const generated = (src: string, entry: string, name: string, inverse = false): string =>
  (
    cpu.compile(src)[entry]![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string | undefined } }
  ).compiled.sourceOf(name, inverse) ?? ''

/** A body over inlineSmallCalls' 16 statements (the call stays a call), adding terms of `x` to `a`. */
const big = (a = 'a', scalar = '') =>
  Array.from({ length: 9 }, (_, k) => `  for i in 0..len(x) { ${a}[i] += x[i] * ${k + 1}.0${scalar} * x[i] }`).join(
    '\n',
  )

/** `f` with a read-only scalar (its callers call the internal copy) or without (the host's entry copy). */
const f = (name: string, scalar: boolean) =>
  scalar
    ? `fn ${name}(a: f64[], x: f64[], s: f64) {\n${big('a', ' * s')}\n}`
    : `fn ${name}(a: f64[], x: f64[]) {\n${big()}\n}`
const call = (scalar: boolean, inv: string, name: string, a: string, x: string) =>
  `  ${inv}${name}(${a}, ${x}${scalar ? ', 1.0' : ''})`

const two = () => [new Float64Array(2), new Float64Array(2), Float64Array.from([1, 2]), Float64Array.from([3, 5])]

describe('replay-uncall: pairs nest (cpu, checks on)', () => {
  for (const scalar of [true, false]) {
    const tag = scalar ? 'with a scalar parameter' : 'arrays only'

    it(`a single pair (${tag})`, () => {
      const src = `${f('f', scalar)}\nfn g(a: f64[], x: f64[]) {\n${call(scalar, '', 'f', 'a', 'x')}\n${call(scalar, '~', 'f', 'a', 'x')}\n}`
      same(src, 'g', () => [Float64Array.from([0.5, -1]), Float64Array.from([1, 2])])
      expect(generated(src, 'g', 'f$replay')).toMatch(RECORDS)
      expect(generated(src, 'g', 'f$replay', true)).toMatch(REPLAYS)
    })

    it(`crossing pairs of one function (${tag})`, () => {
      const src = `${f('f', scalar)}\nfn g(a: f64[], b: f64[], x: f64[], y: f64[]) {\n${[
        call(scalar, '', 'f', 'a', 'x'),
        call(scalar, '', 'f', 'b', 'y'),
        call(scalar, '~', 'f', 'a', 'x'),
        call(scalar, '~', 'f', 'b', 'y'),
      ].join('\n')}\n}`
      same(src, 'g', two)
    })

    it(`crossing pairs of two functions (${tag})`, () => {
      const src = `${f('f', scalar)}\n${f('h', scalar)}\nfn g(a: f64[], b: f64[], x: f64[], y: f64[]) {\n${[
        call(scalar, '', 'f', 'a', 'x'),
        call(scalar, '', 'h', 'b', 'y'),
        call(scalar, '~', 'f', 'a', 'x'),
        call(scalar, '~', 'h', 'b', 'y'),
      ].join('\n')}\n}`
      same(src, 'g', two)
    })

    it(`nested pairs replay (${tag})`, () => {
      for (const h of ['f', 'h']) {
        const src = `${f('f', scalar)}\n${f('h', scalar)}\nfn g(a: f64[], b: f64[], x: f64[], y: f64[]) {\n${[
          call(scalar, '', 'f', 'a', 'x'),
          call(scalar, '', h, 'b', 'y'),
          call(scalar, '~', h, 'b', 'y'),
          call(scalar, '~', 'f', 'a', 'x'),
        ].join('\n')}\n}`
        same(src, 'g', two)
        expect(generated(src, 'g', 'f$replay')).toMatch(RECORDS)
        expect(generated(src, 'g', `${h}$replay`, true)).toMatch(REPLAYS)
      }
    })

    it(`a function the host calls too, called between a call and its uncall (${tag})`, () => {
      // h: an entry copy that the host calls as well as g; it must not empty the tape
      const src = `${f('f', scalar)}\nfn h(b: f64[], x: f64[]) {\n${big('b')}\n}\nfn g(a: f64[], b: f64[], x: f64[]) {\n${call(scalar, '', 'f', 'a', 'x')}\n  h(b, x)\n${call(scalar, '~', 'f', 'a', 'x')}\n}`
      same(src, 'g', () => [new Float64Array(2), new Float64Array(2), Float64Array.from([1, 2])])
      same(src, 'h', () => [new Float64Array(2), Float64Array.from([1, 2])])
      // and a function that records itself, called between
      const rec = `${f('f', scalar)}\n${f('k', scalar)}\nfn h(b: f64[], x: f64[]) {\n${call(scalar, '', 'k', 'b', 'x')}\n  b[0] += 1.0\n${call(scalar, '~', 'k', 'b', 'x')}\n}\nfn g(a: f64[], b: f64[], x: f64[]) {\n${call(scalar, '', 'f', 'a', 'x')}\n  h(b, x)\n  ~h(b, x)\n  h(b, x)\n${call(scalar, '~', 'f', 'a', 'x')}\n}`
      same(rec, 'g', () => [new Float64Array(2), new Float64Array(2), Float64Array.from([1, 2])])
    })

    it(`a check failing between a call and its uncall, then a call that passes (${tag})`, () => {
      const src = `${f('f', scalar)}\nfn g(a: f64[], x: f64[], y: f64[]) {\n${call(scalar, '', 'f', 'a', 'x')}\n  y[0] += x[2]\n${call(scalar, '~', 'f', 'a', 'x')}\n}`
      const fn = cpu.compile(src).g!
      for (let k = 0; k < 3; k++) {
        const bad = [new Float64Array(2), Float64Array.from([1, 2]), new Float64Array(1)]
        const want = run(reference, src, 'g', () => bad.map((v) => v.slice()))
        expect(want.err).toBeDefined()
        expect(raisedError(() => fn(...bad))).toBe(want.err)
      }
      same(src, 'g', () => [new Float64Array(3), Float64Array.from([1, 2, 3]), new Float64Array(1)])
    })
  }

  it('a scalar argument read from the recorded array', () => {
    const src = `${f('f', true)}\nfn g(a: f64[], x: f64[]) {\n  f(a, x, a[0])\n  ~f(a, x, a[0])\n}`
    same(src, 'g', () => [Float64Array.from([1, 0]), Float64Array.from([1, 2])], true)
  })

  it('host-aliased arrays (call/overlap)', () => {
    const src = `${f('f', true)}\nfn g(a: f64[], x: f64[], y: f64[]) {\n  f(a, x, 1.0)\n  y[0] += 1.0\n  ~f(a, x, 1.0)\n}`
    same(
      src,
      'g',
      () => {
        const x = Float64Array.from([1, 2])
        return [new Float64Array(2), x, x]
      },
      true,
    )
  })

  it('the leapfrog with accel(a, x, m) (arrays only) replays its accelerations', () => {
    const src = `
${accelSource()}fn leapfrog(x: f64[], v: f64[], m: f64[], dt: f64, steps: i32) {
  for t in 0..steps {
    for i in 0..len(x) { x[i] += v[i] * dt }
    routine {
      a: f64[] <- zeros(len(x))
      accel(a, x, m)
    }
    for i in 0..len(x) { v[i] += a[i] * dt }
    ~routine
  }
}`
    same(src, 'leapfrog', () => [
      Float64Array.from([0, 0, 0, 1, 0, 0.1, -0.5, 2, 0]),
      Float64Array.from([0, 0, 0, 0, 0.3, 0, 0.2, 0, 0.05]),
      Float64Array.from([1, 1e-3, 2e-3]),
      0.01,
      3,
    ])
    expect(generated(src, 'leapfrog', 'accel$replay')).toMatch(RECORDS)
    const replay = generated(src, 'leapfrog', 'accel$replay', true)
    expect(replay).toMatch(REPLAYS)
    expect(replay).not.toMatch(/Math\.sqrt|\//)
  })
})
