import { describe, expect, it } from 'vitest'
import { gpuMap } from './index.js'
import { cpu, testGpu } from './test-util.js'

const gpu = await testGpu()

describe.skipIf(!gpu)('gpuMap: forward and inverse', () => {
  it('runs an f32 function over a batch and undoes it', async () => {
    const m = cpu(`fn f(y: f32, x: f32, a: f32) { y += x * a + sin(x); a -= 1.5 }`)
    const n = 100
    const y = new Float32Array(n),
      x = Float32Array.from({ length: n }, (_, i) => i * 0.01),
      a = Float32Array.from({ length: n }, (_, i) => i)
    const k = await gpuMap(m.f!, { batch: n, perItem: ['x'], gpu })
    expect(k.roles).toEqual({ y: 'item', x: 'item', a: 'item' })
    const [yy] = await k(y, x, a)
    expect(yy).toBe(y)
    for (let i = 0; i < n; i++) {
      expect(y[i]).toBeCloseTo(Math.fround(x[i]! * i + Math.sin(x[i]!)), 4)
      expect(a[i]).toBe(i - 1.5)
    }
    await k.inverse(y, x, a)
    for (let i = 0; i < n; i++) expect(Math.abs(y[i]!)).toBeLessThan(1e-5)
    expect(Array.from(a)).toEqual(Array.from({ length: n }, (_, i) => i))
  })

  it('maps the inverse of a function: its forward run is the inverse kernel', async () => {
    const m = cpu('fn f(y: i32, x: i32) { y += x * x; NEG(x) }')
    const k = await gpuMap(m.f!.inverse, { batch: 3, gpu })
    const y = Int32Array.from([10, 20, 30]),
      x = Int32Array.from([1, 2, 3])
    await k(y, x)
    expect([y, x]).toEqual([Int32Array.from([9, 16, 21]), Int32Array.from([-1, -2, -3])])
    await k.inverse(y, x)
    expect([y, x]).toEqual([Int32Array.from([10, 20, 30]), Int32Array.from([1, 2, 3])])
  })

  it('rejects an array the function writes that shares memory with another argument (call/overlap)', async () => {
    const m = cpu('fn f(y: f32, x: f32) { y += x * x }')
    const k = await gpuMap(m.f!, { batch: 4, perItem: ['x'], gpu })
    const y = Float32Array.from([1, 2, 3, 4])
    const err = async (...a: unknown[]) => {
      try {
        await (k as unknown as (...b: unknown[]) => Promise<unknown>)(...a)
      } catch (e) {
        return `${(e as { code?: string }).code}: ${(e as Error).message}`
      }
      return 'no error'
    }
    const want =
      "call/overlap: the mapped `f`'s arguments `y` and `x` share memory, and `f` writes `y`: an array a function writes must not overlap any other array argument (pass a copy, e.g. `x.slice()`)"
    expect(await err(y, y)).toBe(want)
    const b = new Float32Array(5)
    expect(await err(b.subarray(0, 4), b.subarray(1))).toBe(want)
    expect(Array.from(y)).toEqual([1, 2, 3, 4])
    expect(await err(b.subarray(0, 4), y)).toBe('no error')
  })
})
