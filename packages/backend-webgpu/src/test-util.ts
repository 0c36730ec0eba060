/**
 * Test helpers: a WebGPU device in Node (Dawn from the `webgpu` package, on SwiftShader when the
 * machine has no GPU), compiling Tenet source with the cpu backend (the reference), and the
 * adjoint of a function built with @tenet/ad (a dev dependency: the backend never imports it).
 */
import { existsSync } from 'node:fs'
import { createRegistry, parse, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetFunction, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { compileAdjoint } from '@tenet/ad'
import { requestGpu, type GpuContext } from './index.js'

/** Where Debian's chromium package puts the SwiftShader Vulkan driver. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json'

let pending: Promise<GpuContext | undefined> | undefined

/**
 * A device for tests, or undefined (after printing one line) when there is none here. Under
 * `CI=true` a missing adapter throws: CI installs what it needs, so a skip would hide a failure.
 */
export function testGpu(): Promise<GpuContext | undefined> {
  pending ??= (async () => {
    if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD
    try {
      const { create } = await import('webgpu')
      return await requestGpu(create([]) as unknown as GPU)
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e)
      if (process.env.CI === 'true' || process.env.CI === '1')
        throw new Error(`webgpu tests need an adapter under CI: ${why}`)
      console.log(
        `[backend-webgpu] skipping GPU tests: no WebGPU adapter here (${why}); install Debian's chromium and libvulkan1 for SwiftShader`,
      )
      return undefined
    }
  })()
  return pending
}

/** A registry with the cpu and interpreter backends. */
export function testRegistry(): Registry {
  const r = createRegistry()
  r.registerBackend(cpuBackend)
  r.registerBackend(interpreterBackend)
  return r
}

/** Compiles Tenet source with the cpu backend. */
export function cpu(source: string, registry: Registry = testRegistry(), checks = true): TenetModule {
  return compileModule(parse({ text: source, name: 'test program' }), { registry, backend: 'cpu', checks })
}

/** The adjoint of `f` as a Tenet function, as the umbrella's `gpuMap` (tenet/webgpu) builds it. */
export function adjointOf(f: TenetFunction): TenetFunction {
  return compileAdjoint(f).adjoint
}
