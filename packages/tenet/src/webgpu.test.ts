import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { rev } from './index.js'
import { gpuMap, requestGpu, type GpuContext } from './webgpu.js'

/** A device through Dawn (SwiftShader without a GPU); under CI a missing adapter fails. */
async function device(): Promise<GpuContext | undefined> {
  try {
    const { create } = await import('webgpu')
    return await requestGpu(create([]) as unknown as GPU)
  } catch (e) {
    if (process.env.CI === 'true' || process.env.CI === '1') throw e
    console.log(
      `[tenet] skipping tenet/webgpu tests: no WebGPU adapter (${e instanceof Error ? e.message : String(e)})${existsSync('/usr/lib/chromium/vk_swiftshader_icd.json') ? '' : '; install chromium and libvulkan1'}`,
    )
    return undefined
  }
}
const gpu = await device()

describe.skipIf(!gpu)('tenet/webgpu: gpuMap with the adjoint built by @tenet/ad', () => {
  // (3 digits: SwiftShader's f32 sin is within WGSL's absolute bound 2^-11, not correctly rounded)
  it('forward, inverse and gradient of a mapped function', async () => {
    const m = rev`fn f(y: f32, x: f32, a: f32) { y += a * sin(x) }`
    const k = await gpuMap(m.f!, { batch: 3, perItem: ['x'], gpu })
    const x = Float32Array.from([0.5, 1, 2]),
      y = new Float32Array(3)
    await k(y, x, 2)
    for (let i = 0; i < 3; i++) expect(y[i]).toBeCloseTo(2 * Math.sin(x[i]!), 3)
    await k.inverse(y, x, 2)
    for (let i = 0; i < 3; i++) expect(Math.abs(y[i]!)).toBeLessThan(1e-6)
    const g = await k.gradient([new Float32Array(3), x, 2], { loss: 'y' })
    for (let i = 0; i < 3; i++) expect((g.gradient[1] as Float32Array)[i]).toBeCloseTo(2 * Math.cos(x[i]!), 3)
    expect(g.gradient[2]).toBeCloseTo(Math.sin(0.5) + Math.sin(1) + Math.sin(2), 3)
    expect(g.reduction).toBe('tree')
  })
})
