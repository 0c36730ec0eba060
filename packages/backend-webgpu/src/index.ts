/// <reference types="@webgpu/types" />
/**
 * `@tenet/backend-webgpu`: a Tenet function mapped over a batch becomes a WGSL compute pipeline
 * (forward, inverse, and the adjoint that `@tenet/ad` generates), with the gradients of shared
 * parameters summed over items by a deterministic tree or by atomics.
 */
export {
  gpuMap,
  type GpuMapOptions,
  type MappedKernel,
  type MappedDirection,
  type GpuGradient,
  type GpuJacobian,
  type GpuResident,
  type MappableFunction,
} from './map.js'
export { requestGpu, type GpuContext } from './device.js'
export {
  generateKernel,
  type Kernel,
  type KernelParam,
  type KernelSpec,
  type KernelStep,
  type ParamRole,
  type Reduction,
  type Site,
} from './codegen.js'
export { webgpuBackend } from './backend.js'
export { gpuScalar, MAX_FIXED_BITS, type GpuScalar } from './scalars.js'
export { besselF32Source } from './bessel.js'
