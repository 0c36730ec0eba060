/// <reference types="@webgpu/types" />
/**
 * Getting a WebGPU device: `navigator.gpu` in a browser, or a `GPU` object the caller passes
 * (in Node, `create([])` of the `webgpu` package, Dawn). The package itself depends on neither.
 */
import { TenetError } from '@tenet/ir'

/** A device and what is known about the adapter it came from. */
export interface GpuContext {
  device: GPUDevice
  /** True for a software (fallback) adapter such as SwiftShader: no speed claims from it. */
  fallback: boolean
  /** Vendor, architecture and description of the adapter, for reports. */
  adapter: string
  /** The GPU object the device came from (kept referenced: Dawn's Node binding crashes when it is collected). */
  gpu: GPU
}

/** `GPUBufferUsage` / `GPUMapMode` flags as numbers (Node has no such globals unless installed). */
export const Usage = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const
export const MAP_READ = 0x1

/**
 * Requests an adapter and a device from `gpu` (default: `navigator.gpu`), with the adapter's own
 * storage-buffer limits (kernels with many parameters need more than WebGPU's default 8).
 * Throws a `TenetError` with code `webgpu/no-adapter` when there is none.
 */
export async function requestGpu(gpu?: GPU): Promise<GpuContext> {
  const g = gpu ?? (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu
  if (!g) {
    throw new TenetError(
      'webgpu/no-gpu',
      'no WebGPU here: in a browser use one with WebGPU enabled; in Node pass `create([])` of the `webgpu` package (Dawn) to `requestGpu`',
    )
  }
  const adapter = await g.requestAdapter()
  if (!adapter) {
    throw new TenetError(
      'webgpu/no-adapter',
      "WebGPU found no adapter (on Linux without a GPU, point VK_ICD_FILENAMES at the SwiftShader ICD, e.g. /usr/lib/chromium/vk_swiftshader_icd.json from Debian's chromium)",
    )
  }
  const info = (adapter as GPUAdapter & { info?: GPUAdapterInfo }).info
  const fallback =
    Boolean(
      (info as { isFallbackAdapter?: boolean } | undefined)?.isFallbackAdapter ??
        (adapter as { isFallbackAdapter?: boolean }).isFallbackAdapter,
    ) || /swiftshader|llvmpipe|lavapipe|software/i.test(`${info?.vendor} ${info?.architecture} ${info?.description}`)
  const device = await adapter.requestDevice({
    requiredLimits: {
      maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage,
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
    },
  })
  return {
    device,
    fallback,
    gpu: g,
    adapter: [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' / ') || 'unknown adapter',
  }
}
