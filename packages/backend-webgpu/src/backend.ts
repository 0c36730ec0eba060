import { TenetError, type BackendSpec, type CompiledProgram } from '@tenet/ir'
import { generateKernel, type KernelParam } from './codegen.js'

/**
 * The webgpu backend plugin. WebGPU is asynchronous, so the synchronous `compile` front door
 * cannot run on it: compiling a module with `backend: 'webgpu'` checks that every function
 * lowers to WGSL (as one item of a batch, with the parameters it writes per item and the others
 * shared) and shows the shaders through `sourceOf`; calling a function throws
 * `webgpu/asynchronous`, pointing at `gpuMap`, which maps a function over a batch and runs it.
 */
export const webgpuBackend: BackendSpec = {
  specificationVersion: 'v1',
  name: 'webgpu',
  priority: 1,
  capabilities: {
    f64: false,
    recursion: false,
    exceptions: false,
    f32: true,
    stacks: false,
    checks: false,
    // gradients run through gpuMap (the adjoint mapped over a batch), not through a synchronous call
    gradient: false,
    hessian: false,
    // calls go through gpuMap (asynchronous, over a batch): its own conformance test covers it
    synchronous: false,
  },
  description:
    'WGSL compute pipelines: a function mapped over a batch (use gpuMap; f32, i32, bool, fixed point on i32)',
  // whether an adapter can be had is known only when one is requested (gpuMap does)
  isAvailable: () => typeof (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu === 'object',
  doCompile(program, inverses, options): CompiledProgram {
    const sources = new Map<string, string>()
    for (const direction of [false, true]) {
      for (const f of program.functions.values()) {
        const fn = direction ? inverses.get(f.name)! : f
        const writes = program.writes.get(f.name)!
        const params: KernelParam[] = f.params.map((p, i) => ({
          name: p.name,
          role: writes[i] ? 'item' : 'shared',
          shape: p.type.kind === 'array' ? 'array' : 'scalar',
          elem: p.type.kind === 'scalar' ? p.type.name : p.type.elem,
          written: writes[i]!,
        }))
        const k = generateKernel({
          registry: program.registry,
          functions: program.functions,
          inverses,
          writes: program.writes,
          params,
          steps: [{ fn, args: f.params.map((p) => p.name) }],
          checks: options.checks,
          tolerance: options.tolerance,
          reduction: 'tree',
          workgroupSize: 64,
        })
        sources.set(`${direction ? '~' : ''}${f.name}`, k.code)
      }
    }
    return {
      get(name) {
        const fn = () => {
          throw new TenetError(
            'webgpu/asynchronous',
            `\`${name}\` cannot be called synchronously on the webgpu backend: map it over a batch with \`await gpuMap(m.${name}, { batch })\` from @tenet/backend-webgpu`,
          )
        }
        return Object.assign(fn, { results: new Float64Array(0) })
      },
      sourceOf: (name, inverse) => sources.get(`${inverse ? '~' : ''}${name}`),
    }
  },
}
