/**
 * The deterministic reduction of shared-parameter gradients: every item wrote its partial row
 * (rows × width, row-major). Each pass sums blocks of `REDUCE_BLOCK` consecutive rows, one
 * invocation per (block, column) adding its rows in order, into one row per block; passes repeat
 * until one row is left. The order of the additions depends only on the number of rows, so the
 * result is the same bits on every run: a 256-ary tree of sums. (No workgroup barriers: a
 * binary tree in workgroup memory, with a barrier per level, made one GMM gradient (d=2, K=5,
 * 1000 points) take 700 ms on SwiftShader, which emulates barriers, against 7 ms with this.)
 */
import { Usage } from './device.js'

/** Rows summed by one invocation in one pass. */
export const REDUCE_BLOCK = 256
const WG = 64

const SHADER = `
@group(0) @binding(0) var<uniform> dims: vec4<u32>;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let rows = dims.x;
  let width = dims.y;
  let blocks = (rows + ${REDUCE_BLOCK}u - 1u) / ${REDUCE_BLOCK}u;
  let t = gid.x + gid.y * nwg.x * ${WG}u;
  if (t >= blocks * width) { return; }
  let b = t / width;
  let col = t % width;
  let end = min(rows, (b + 1u) * ${REDUCE_BLOCK}u);
  var s = 0.0f;
  for (var r = b * ${REDUCE_BLOCK}u; r < end; r++) { s = s + src[r * width + col]; }
  dst[b * width + col] = s;
}
`

const pipelines = new WeakMap<GPUDevice, GPUComputePipeline>()

function pipeline(device: GPUDevice): GPUComputePipeline {
  let p = pipelines.get(device)
  if (!p) {
    p = device.createComputePipeline({
      layout: 'auto',
      compute: { module: device.createShaderModule({ code: SHADER }), entryPoint: 'main' },
    })
    pipelines.set(device, p)
  }
  return p
}

/**
 * Encodes the passes that sum `rows` partial rows of `width` f32 in `partials` into one row,
 * written to `out` (at offset 0). Returns the temporary buffers, to destroy after submission.
 */
export function encodeTreeReduction(
  device: GPUDevice,
  encoder: GPUCommandEncoder,
  partials: GPUBuffer,
  rows: number,
  width: number,
  out: GPUBuffer,
): GPUBuffer[] {
  const temps: GPUBuffer[] = []
  const p = pipeline(device)
  let src = partials
  let n = rows
  do {
    const blocks = Math.ceil(n / REDUCE_BLOCK)
    const dst =
      blocks === 1
        ? out
        : device.createBuffer({ size: Math.max(16, blocks * width * 4), usage: Usage.STORAGE | Usage.COPY_SRC })
    if (dst !== out) temps.push(dst)
    const dims = device.createBuffer({ size: 16, usage: Usage.UNIFORM | Usage.COPY_DST })
    device.queue.writeBuffer(dims, 0, new Uint32Array([n, width, 0, 0]))
    temps.push(dims)
    const bind = device.createBindGroup({
      layout: p.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: dims } },
        { binding: 1, resource: { buffer: src } },
        { binding: 2, resource: { buffer: dst } },
      ],
    })
    const pass = encoder.beginComputePass()
    pass.setPipeline(p)
    pass.setBindGroup(0, bind)
    const groups = Math.ceil((blocks * width) / WG)
    const x = Math.min(groups, 65535)
    pass.dispatchWorkgroups(x, Math.ceil(groups / x))
    pass.end()
    src = dst
    n = blocks
  } while (n > 1)
  return temps
}
