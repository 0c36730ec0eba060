/**
 * Test helpers: a WebGPU device in Node (Dawn from the `webgpu` package, on SwiftShader when the
 * machine has no GPU), compiling Tenet source with the cpu backend (the reference), and the
 * adjoint of a function built with @tenet/ad (a dev dependency: the backend never imports it).
 */
import { existsSync } from 'node:fs'
import { createRegistry, parse, standardPrimitives, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetFunction, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { AdjointBuilder, registryPartials } from '@tenet/ad'
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
      if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`webgpu tests need an adapter under CI: ${why}`)
      console.log(`[backend-webgpu] skipping GPU tests: no WebGPU adapter here (${why}); install Debian's chromium and libvulkan1 for SwiftShader`)
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

/** The adjoint of `f` as a Tenet function (checked IR), the way the umbrella's `gpuMap` builds it. */
export function adjointOf(f: TenetFunction): TenetFunction {
  const info = f[Symbol.for('tenet.function') as never] as unknown as { registry: Registry; program: never; inverses: never; name: string; program_: never }
  const registry = info.registry.clone()
  if (!registry.names('backend').includes('interpreter')) registry.registerBackend(interpreterBackend)
  const builder = new AdjointBuilder(info.program, info.inverses, registry, registryPartials(registry, new Map(standardPrimitives.map((p) => [p.name, p]))), 1)
  const name = builder.request(info.name, false)
  const functions = builder.build()
  const program = (info as unknown as { program: { functions: Map<string, { name: string }>; hosts: unknown[] } }).program
  const taken = new Set(functions.map((g) => g.name))
  const all = [...functions, ...[...program.functions.values()].filter((g) => !taken.has(g.name))]
  return compileModule({ kind: 'module', functions: all as never, hosts: program.hosts }, { registry, backend: 'interpreter' })[name]!
}
