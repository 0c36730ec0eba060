/**
 * `hoist-bounds` (`@tenet/ir`) and i32 wraparound: an index whose i32 arithmetic wraps back into
 * range passes where the reference interpreter (which checks each access) passes, and one that
 * leaves the range between the two ends of its loop (the ends both in range) still fails. The cpu
 * and wasm backends with checks on, and the wasm backend without checks but with its hoisted
 * bounds asserts (`hoistBounds: true`: the accesses those asserts cover are not guarded, so a
 * hoisted assert that passed wrongly would read and write outside the array), against the
 * reference: the same error code and location, or no error and the same arrays.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { createWasmBackend, wasmBackend } from './index.js'

const backends = {
  ref: referenceBackend({ checks: true }),
  cpu: backendUnderTest(cpuBackend, { checks: true }),
  wasm: backendUnderTest(wasmBackend, { checks: true }),
  wasmHoisted: backendUnderTest(createWasmBackend({ hoistBounds: true }), { checks: false }),
}

/** `error || arrays after the call` of each backend. */
function runAll(src: string, args: () => unknown[]): Record<keyof typeof backends, string> {
  const out = {} as Record<keyof typeof backends, string>
  for (const [k, b] of Object.entries(backends) as Array<[keyof typeof backends, (typeof backends)['ref']]>) {
    const a = args()
    const err = raisedError(() => b.compile(src).f!(...a))
    // each array's non-zero elements, `index:value`
    const arrays = a
      .filter((x) => ArrayBuffer.isView(x))
      .map(
        (x) =>
          `[${Array.from(x as Float64Array)
            .flatMap((v, i) => (v ? [`${i}:${v}`] : []))
            .join(',')}]`,
      )
    out[k] = `${err} || ${arrays.join(' ')}`
  }
  return out
}

/** The error's code and location (`code | message | line:column`), or the whole result where none is raised. */
const codeAndPlace = (r: string): string => {
  const [err] = r.split(' || ')
  if (err === 'no error') return r
  const parts = err!.split(' | ')
  return `${parts[0]} @ ${parts[parts.length - 1]}`
}

function expectLikeReference(src: string, args: () => unknown[]): string {
  const r = runAll(src, args)
  // checks on: the same error code and location (a hoisted check fails before the loop and names
  // an end of its range), or no error and the same values
  expect(codeAndPlace(r.cpu), src).toBe(codeAndPlace(r.ref))
  expect(codeAndPlace(r.wasm), src).toBe(codeAndPlace(r.ref))
  // checks off: no error where the reference has none; out of bounds where it has one
  if (r.ref.startsWith('no error')) expect(r.wasmHoisted, src).toBe(r.ref)
  else expect(r.wasmHoisted, src).toMatch(/^runtime\/out-of-bounds/)
  return r.ref
}

describe('hoist-bounds: indices whose i32 arithmetic wraps', () => {
  it('a symbolic stride whose constant part wraps to 0 (D = −s·m = −2³²)', () => {
    const src = `fn f(x: f64[], s: i32, m: i32) {
  for l in s..s + 2 {
    x[(l - s) * m] += 1.0
  }
}`
    const r = runAll(src, () => [new Float64Array(4097), 2 ** 21, 2048])
    expect(r.ref).toBe('no error || [0:1,2048:1]')
    expect(r.cpu).toBe(r.ref)
    expect(r.wasm).toBe(r.ref)
    expect(r.wasmHoisted).toBe(r.ref)
  })

  for (const index of ['l * m', 'l * 4'])
    it(`an index that wraps into range at both ends: x[${index}] from l = 2³⁰`, () => {
      const src = `fn f(x: f64[], s: i32, m: i32) {
  for l in s..s + 2 {
    x[${index}] += 1.0
  }
}`
      const r = runAll(src, () => [new Float64Array(5), 2 ** 30, 4])
      expect(r.ref).toBe('no error || [0:1,4:1]')
      expect(r.cpu).toBe(r.ref)
      expect(r.wasm).toBe(r.ref)
      expect(r.wasmHoisted).toBe(r.ref)
    })

  it('fails where the index leaves the range between two ends that are in range (it wraps once around)', () => {
    // x[4l] for l in 0..=2^30: 0 and 2^32 ≡ 0 at the ends, x[8] at l = 2 (without the check of
    // what lies between, the loop would run 2^30 iterations unchecked)
    const src = `fn f(x: f64[], n: i32) {
  for l in 0..=n {
    x[l * 4] += 1.0
  }
}`
    const ref = expectLikeReference(src, () => [new Float64Array(5), 2 ** 30])
    expect(ref).toMatch(/^runtime\/out-of-bounds \| index 8 is out of bounds for `x`/)
    // and with a symbolic stride, in reverse
    const sym = `fn f(x: f64[], n: i32, m: i32) {
  for l in reverse 0..=n {
    x[l * m + 1] += 1.0
  }
}`
    expect(expectLikeReference(sym, () => [new Float64Array(5), 2 ** 30, 4])).toMatch(/^runtime\/out-of-bounds/)
  })

  it('random affine indices near the wrap, literal and symbolic strides, both directions: as the reference', () => {
    let seed = 12345
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      return (seed >>> 8) % n
    }
    const pick = <T>(xs: T[]): T => xs[rand(xs.length)]!
    let passed = 0
    for (let t = 0; t < 60; t++) {
      const stride = pick(['1', '3', '-4', '64', '1048576', 'm', '-m', '2 * m'])
      const shape = pick([`l * ${stride}`, `(l - s) * ${stride} + k`, `k - l * ${stride}`, `${stride} * l + 2 * k`])
      const range = pick(['s..s + n', 's..=s + n', 'reverse s..s + n', 'reverse s..=s + n'])
      const src = `fn f(x: f64[], s: i32, n: i32, m: i32, k: i32) {
  for l in ${range} {
    x[${shape}] += 1.0
  }
}`
      // s near where c·s wraps (c up to 2^20), a few iterations
      const c = pick([1, 3, 4, 64, 2 ** 20, 2 ** 12, 2 ** 21])
      const wraps = pick([0, 1, -1, 2])
      const s = (Math.round((wraps * 2 ** 32) / c) + rand(5) - 2) | 0
      const m = pick([c, -c, 2 ** 12, 2 ** 21, 1])
      const k = pick([0, 1, 3, 2 ** 31 - 1, -(2 ** 31), (-s * c) | 0])
      const n = rand(4)
      const ref = expectLikeReference(src, () => [new Float64Array(8), s, n, m, k])
      if (ref.startsWith('no error')) passed++
    }
    // some of the programs run without error
    expect(passed).toBeGreaterThan(5)
  })
})

describe('an index the loop does not change, written with the loop variable', () => {
  // `x[l * 0]` (or an inlined `x[l * s]` called with s = 0): its bounds assert is checked once
  // before the loop, at the loop's first value (the variable is not bound there)
  for (const index of ['l * 0', 'k + (l - l)', '0 * l + 2 * k'])
    it(`x[${index}]: the reference's values and errors (cpu, wasm, checks on)`, () => {
      const src = `fn f(x: f64[], k: i32, n: i32) {
  for l in 0..n {
    x[${index}] += 1.0
  }
}`
      for (const [k, n] of [
        [1, 3],
        [9, 2],
        [9, 0],
        [-1, 1],
      ]) {
        const r = runAll(src, () => [new Float64Array(8), k, n])
        expect([r.cpu, r.wasm]).toEqual([r.ref, r.ref])
        // (checks off: the arrays are not restored on failure, so the code and place only)
        expect(codeAndPlace(r.wasmHoisted)).toBe(codeAndPlace(r.ref))
      }
    })
})
