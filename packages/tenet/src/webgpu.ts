/**
 * `tenet/webgpu`: the webgpu backend with gradients. `@tenet/backend-webgpu` lowers whatever IR
 * it is given and may not import `@tenet/ad` (a backend never depends on the AD package); this
 * subpath is the glue that builds a function's adjoint with `@tenet/ad` (the same IR → IR
 * transform every backend gets) and hands it to the backend's `gpuMap`, built only when a
 * gradient or Jacobian is first asked for. A separate entry point, so that `import 'tenet'` never
 * loads the GPU code; `@tenet/backend-webgpu` is an optional peer dependency of `tenet`, needed
 * only by this entry point.
 */
import { compileAdjoint } from '@tenet/ad'
import type { TenetFunction } from '@tenet/reversible'
import { gpuMap as mapOnGpu, type GpuMapOptions, type MappedKernel } from '@tenet/backend-webgpu'

export {
  requestGpu,
  webgpuBackend,
  besselF32Source,
  type GpuContext,
  type GpuMapOptions,
  type MappedKernel,
  type MappedDirection,
  type GpuGradient,
  type GpuJacobian,
  type GpuResident,
  type Reduction,
} from '@tenet/backend-webgpu'

/**
 * Maps Tenet function `f` over a batch on the GPU, with its adjoint for `gradient` and
 * `jacobian`: `const k = await gpuMap(m.f, { batch: n, perItem: ['out', 'z'], shared: ['nu'] })`,
 * then `await k(out, nu, z)`, `await k.inverse(...)`, `await k.gradient([...], { loss: 'out' })`.
 */
export function gpuMap(f: TenetFunction, options: GpuMapOptions): Promise<MappedKernel> {
  return mapOnGpu(f, { ...options, adjoint: options.adjoint ?? (() => compileAdjoint(f).adjoint) })
}
