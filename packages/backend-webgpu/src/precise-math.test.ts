/**
 * The precise f32 math routines on the device, against the cpu backend's reference
 * `Math.fround(Math.f(x))`: at most one ulp (adjacent f32 values) on random inputs over each
 * function's whole f32 domain, the hard cases (arguments next to multiples of π/2, log near 1,
 * asin/acos near ±1, exp near overflow and underflow), subnormals and the special values.
 * `TENET_MATH_N` sets the random inputs per function (default 2^15; the README's figures come
 * from a run with 2^20).
 */
import { describe, expect, it } from 'vitest'
import { twoOverPiWords } from './precise-math.js'
import { accuracyCases, flushesSubnormals, measureAccuracy } from './device-checks.js'
import { testGpu } from './test-util.js'

const gpu = await testGpu()
const N = Number(process.env.TENET_MATH_N ?? 2 ** 15)
const ftz = gpu ? await flushesSubnormals(gpu) : false

describe('the 2/π table', () => {
  it('holds the bits of 2/π (0.a2f9836e4e441529fc2757d1f534ddc0db62…)', () => {
    const w = twoOverPiWords(8)
    expect(w[0]).toBe(0)
    expect(
      w
        .slice(1, 5)
        .map((x) => x.toString(16).padStart(8, '0'))
        .join(''),
    ).toBe('a2f9836e4e441529fc2757d1f534ddc0')
  })
})

describe.skipIf(!gpu)('precise f32 math on webgpu: within one ulp of Math.fround(Math.f(x))', () => {
  it('reports whether the device flushes subnormals', () => {
    console.log(
      `[precise-math] this device ${ftz ? 'flushes subnormal f32 values to zero (compared as such)' : 'keeps subnormal f32 values'}`,
    )
    expect(typeof ftz).toBe('boolean')
  })
  for (const c of accuracyCases(N)) {
    it(c.name, async () => {
      const r = await measureAccuracy(gpu!, c, ftz)
      console.log(
        `[precise-math] ${r.name}: ${r.inputs} inputs, max ${r.maxUlp} ulp${r.at ? ` at ${r.at}` : ''}, ${r.ones} at 1 ulp, ${r.flushed} with subnormals flushed`,
      )
      expect(r.bad).toEqual([])
    }, 120_000)
  }
})
