import { describe, expect, it } from 'vitest'
import { gpuMap } from './index.js'
import { cpu, testGpu } from './test-util.js'

const gpu = await testGpu()

describe.skipIf(!gpu)('gpuMap: forward and inverse', () => {
  it('runs an f32 function over a batch and undoes it', async () => {
    const m = cpu(`fn f(y: f32, x: f32, a: f32) { y += x * a + sin(x); a -= 1.5 }`)
    const n = 100
    const y = new Float32Array(n), x = Float32Array.from({ length: n }, (_, i) => i * 0.01), a = Float32Array.from({ length: n }, (_, i) => i)
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
  })
})
