/**
 * The deterministic reduction of shared-parameter gradients: every item wrote its partial row
 * (rows × width, row-major); each pass sums blocks of `REDUCE_GROUP` rows per column with a
 * fixed-order tree in workgroup memory, until one row is left. The order of additions depends
 * only on the number of rows, so the result is the same bits on every run.
 */
import { Usage } from './device.js'

/** Rows summed by one workgroup in one pass. */
export const REDUCE_GROUP = 256

const SHADER = `
@group(0) @binding(0) var<uniform> dims: vec4<u32>;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
var<workgroup> part: array<f32, ${REDUCE_GROUP}>;
@compute @workgroup_size(${REDUCE_GROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let rows = dims.x;
  let width = dims.y;
  let col = wid.y + wid.z * 65535u;
  let row = wid.x * ${REDUCE_GROUP}u + lid.x;
  var v = 0.0f;
  if (row < rows && col < width) { v = src[row * width + col]; }
  part[lid.x] = v;
  workgroupBarrier();
  for (var s = ${REDUCE_GROUP / 2}u; s > 0u; s = s >> 1u) {
    if (lid.x < s) { part[lid.x] = part[lid.x] + part[lid.x + s]; }
    workgroupBarrier();
  }
  if (lid.x == 0u && col < width) { dst[wid.x * width + col] = part[0]; }
}
`

const pipelines = new WeakMap<GPUDevice, GPUComputePipeline>()

function pipeline(device: GPUDevice): GPUComputePipeline {
  let p = pipelines.get(device)
  if (!p) {
    p = device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code: SHADER }), entryPoint: 'main' } })
    pipelines.set(device, p)
  }
  return p
}

/**
 * Encodes the passes that sum `rows` partial rows of `width` f32 in `partials` into one row,
 * written to `out` (at offset 0). Returns the temporary buffers, to destroy after submission.
 */
export function encodeTreeReduction(device: GPUDevice, encoder: GPUCommandEncoder, partials: GPUBuffer, rows: number, width: number, out: GPUBuffer): GPUBuffer[] {
  const temps: GPUBuffer[] = []
  const p = pipeline(device)
  let src = partials
  let n = rows
  do {
    const groups = Math.ceil(n / REDUCE_GROUP)
    const dst = groups === 1 ? out : device.createBuffer({ size: Math.max(4, groups * width * 4), usage: Usage.STORAGE | Usage.COPY_SRC })
    if (dst !== out) temps.push(dst)
    const dims = device.createBuffer({ size: 16, usage: Usage.UNIFORM | Usage.COPY_DST })
    device.queue.writeBuffer(dims, 0, new Uint32Array([n, width, 0, 0]))
    temps.push(dims)
    const bind = device.createBindGroup({
      layout: p.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: dims } }, { binding: 1, resource: { buffer: src } }, { binding: 2, resource: { buffer: dst } }],
    })
    const pass = encoder.beginComputePass()
    pass.setPipeline(p)
    pass.setBindGroup(0, bind)
    pass.dispatchWorkgroups(groups, Math.min(width, 65535), Math.ceil(width / 65535))
    pass.end()
    src = dst
    n = groups
  } while (n > 1)
  return temps
}
