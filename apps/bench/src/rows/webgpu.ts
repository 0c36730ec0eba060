/**
 * Tenet on WebGPU (`tenet/webgpu`): the batched Bessel gradient, the GMM gradient and the BA
 * Jacobian as kernels mapped over items (z values, points, observations), f32. The gradients of
 * the parameters every item reads (GMM's α, μ and icf) are summed over items on the GPU, by the
 * deterministic tree and by CAS atomics (one row each). In Node the device comes from Dawn (the
 * `webgpu` package); without a GPU that is SwiftShader, a CPU emulation: such rows say
 * "emulated (SwiftShader)" and their timings are no speed claim. Each timed call uploads its
 * inputs and reads its results back.
 */
import { existsSync } from 'node:fs'
import { grad, type TenetFunction } from 'tenet'
import { besselF32Source, gpuMap, requestGpu, type GpuContext, type MappedKernel, type Reduction } from 'tenet/webgpu'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { CheckResult, NotApplicable, PreparedRow } from '../harness/types.js'
import { gmmIcfSize, gmmParameterCount, type GmmInstance } from '../data/gmm-data.js'
import { BA_BLOCK_COLS } from '../objectives/ba.js'
import { checkBaJacobian } from '../workloads/ba.js'
import type { BesselCase } from '../workloads/bessel.js'
import { compile, fn } from '../tenet/compile.js'
import { gmmModule } from '../tenet/gmm.js'
import { NAMES as BA_NAMES, projection } from '../tenet/ba.js'

export const WEBGPU_ROW = 'Tenet (webgpu)'
/** Where Debian's chromium package puts the SwiftShader Vulkan driver (used when there is no GPU). */
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json'

let pending: Promise<GpuContext | string> | undefined
/** The device, or why there is none. */
function device(): Promise<GpuContext | string> {
  pending ??= (async () => {
    try {
      if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD
      const { create } = await import('webgpu')
      return await requestGpu(create([]) as unknown as GPU)
    } catch (e) {
      return `no WebGPU adapter: ${e instanceof Error ? e.message : String(e)}`
    }
  })()
  return pending
}

/** What a row says about the adapter it ran on. */
const note = (gpu: GpuContext): string =>
  gpu.fallback
    ? `emulated (SwiftShader): a fallback adapter (${gpu.adapter}), timings are no speed claim`
    : `on ${gpu.adapter}`

/** Cases an emulated adapter runs (the first of each workload: the emulator is slow). */
const emulatedOnly = (gpu: GpuContext, first: boolean): NotApplicable | undefined =>
  gpu.fallback && !first ? { na: 'emulated (SwiftShader): only the first case runs on a fallback adapter' } : undefined

const withNote = (r: CheckResult, gpu: GpuContext, extra?: string): CheckResult => ({
  ...r,
  reason: [r.reason, extra, note(gpu)].filter(Boolean).join('; '),
})

// ---------- Bessel: one item per z ----------

/** The batched Bessel gradient; `builtin`: the device's exp/log (precise: false), to show what the precise routines cost. */
async function besselSetup(c: BesselCase, builtin: boolean): Promise<PreparedRow | NotApplicable> {
  const b = c.batch
  if (!b) return { na: 'webgpu maps a function over a batch: see the 10⁵-z case' }
  const gpu = await device()
  if (typeof gpu === 'string') return { na: gpu }
  const f = fn(compile(besselF32Source), 'besselj')
  const N = b.zs.length
  const z = Float32Array.from(b.zs)
  const kernel = await gpuMap(f, { batch: N, perItem: ['out', 'z'], shared: ['nu'], gpu, precise: !builtin })
  const gradient = async () =>
    (await kernel.gradient([new Float32Array(N), c.nu, z], { loss: 'out' })).gradient[2] as Float32Array
  return {
    run: async () => void (await gradient()),
    check: async () =>
      withNote(
        checkClose(await gradient(), b.derivative(), TOLERANCE.f32, 'dJ/dz'),
        gpu,
        `J′ at each of ${N} z in one dispatch (f32 series of 24 terms${builtin ? "; the device's exp and log" : ''})`,
      ),
  }
}

// ---------- GMM: one item per point, α, μ, icf shared ----------

/**
 * One point's log-sum-exp over the components, main_c = α_c + Σ log diag Q_c − ½‖Q_c(x − μ_c)‖²,
 * with the running maximum (a reversible `if` where the cpu version calls `max`, whose derivative
 * rule is a JS function) and the component terms kept in per-item workspace arrays (the adjoint
 * uncomputes them); generated for (d, k) so that y = Q(x − μ) is one expression per row.
 */
export function gmmPointSource(d: number, k: number): string {
  const S = gmmIcfSize(d)
  const lower = (r: number, col: number): number => d + col * d - (col * (col + 1)) / 2 + (r - col - 1)
  const xc = (j: number) => `(x[${j}] - means[c * ${d} + ${j}])`
  const y = (r: number) =>
    [
      `exp(icf[c * ${S} + ${r}]) * ${xc(r)}`,
      ...Array.from({ length: r }, (_, col) => `icf[c * ${S} + ${lower(r, col)}] * ${xc(col)}`),
    ].join(' + ')
  const sumLog = Array.from({ length: d }, (_, r) => `icf[c * ${S} + ${r}]`).join(' + ')
  const sq = Array.from({ length: d }, (_, r) => `(${y(r)}) ** 2`).join(' + ')
  return `fn gmm_point(lse: f32, x: f32[], alphas: f32[], means: f32[], icf: f32[], main: f32[], rm: f32[]) {
  for c in 0..${k} {
    main[c] += alphas[c] + ${sumLog} - 0.5 * (${sq})
  }
  rm[0] += main[0]
  for c in 1..${k} {
    rm[c] += rm[c - 1]
    if (main[c] > rm[c - 1], ~) { rm[c] += main[c] - rm[c - 1] }
  }
  routine {
    s: f32 <- 0.0
    for c in 0..${k} { s += exp(main[c] - rm[${k - 1}]) }
  }
  lse += log(s) + rm[${k - 1}]
  ~routine
}`
}

async function gmmRow(
  inst: GmmInstance,
  reduction: Reduction,
  reference: () => ArrayLike<number>,
): Promise<PreparedRow | NotApplicable> {
  const gpu = await device()
  if (typeof gpu === 'string') return { na: gpu }
  const { d, k, n } = inst
  const na = emulatedOnly(gpu, n <= 1000 && d <= 2)
  if (na) return na
  const f = fn(compile(gmmPointSource(d, k)), 'gmm_point')
  const kernel = await gpuMap(f, {
    batch: n,
    perItem: ['lse', 'x', 'main', 'rm'],
    shared: ['alphas', 'means', 'icf'],
    reduction,
    gpu,
  })
  const restGrad = grad(fn(gmmModule(d, k), 'gmm_rest'), { loss: 0 })
  const x = Float32Array.from(inst.x),
    alphas = Float32Array.from(inst.alphas),
    means = Float32Array.from(inst.means),
    icf = Float32Array.from(inst.icf)
  const out = new Float64Array(gmmParameterCount(d, k))
  let ran: Reduction | undefined
  const gradient = async (): Promise<Float64Array> => {
    const g = await kernel.gradient(
      [new Float32Array(n), x, alphas, means, icf, new Float32Array(n * k), new Float32Array(n * k)],
      { loss: 'lse' },
    )
    ran = g.reduction
    // the point-independent part (−n·logsumexp α and the Wishart prior) on the cpu backend
    restGrad.run(0, n, d, k, inst.alphas, inst.icf, inst.wishart.gamma, inst.wishart.m)
    const ra = restGrad.buffers[4]!,
      ri = restGrad.buffers[5]!
    const ga = g.gradient[2] as Float32Array,
      gm = g.gradient[3] as Float32Array,
      gi = g.gradient[4] as Float32Array
    for (let c = 0; c < k; c++) out[c] = ga[c]! + ra[c]!
    out.set(gm, k)
    for (let j = 0; j < gi.length; j++) out[k + k * d + j] = gi[j]! + ri[j]!
    return out
  }
  return {
    run: async () => void (await gradient()),
    check: async (): Promise<CheckResult> => {
      const r = checkClose(await gradient(), reference(), TOLERANCE.f32, 'gradient')
      return withNote(
        r,
        gpu,
        `${ran} reduction of the shared α, μ, icf over ${n} points; data term on the GPU, the point-independent part on the cpu backend`,
      )
    },
  }
}

// ---------- BA: one item per observation ----------

const baObservationSource = `fn ba_obs(r: f32[], cam: f32[], pt: f32[], w: f32, feat: f32[]) {
  routine {
${BA_NAMES.map((n) => `    ${n}: f32 <- 0.0`).join('\n')}
${projection(
  (n) => n,
  (j) => `cam[${j}]`,
  (j) => `pt[${j}]`,
)}
  }
  r[0] += w * (u * L * cam[6] + cam[7] - feat[0])
  r[1] += w * (v * L * cam[6] + cam[8] - feat[1])
  ~routine
}`

let baKernel: { f: TenetFunction; kernel?: MappedKernel; p?: number } | undefined

export const webgpuRows = defineRowFamily({
  family: 'Tenet (webgpu)',
  rows: {
    bessel: [false, true].map((builtin) => ({
      name: builtin ? `${WEBGPU_ROW} built-in math` : WEBGPU_ROW,
      kind: 'gradient' as const,
      setup: (c: BesselCase) => besselSetup(c, builtin),
    })),
    gmm: (['tree', 'atomic'] as const).map((reduction) => ({
      name: `${WEBGPU_ROW} ${reduction}`,
      kind: 'gradient' as const,
      setup: (c: { inst: GmmInstance; gradient: () => Float64Array }) => gmmRow(c.inst, reduction, c.gradient),
    })),
    ba: [
      {
        name: WEBGPU_ROW,
        kind: 'jacobian',
        async setup(c) {
          const gpu = await device()
          if (typeof gpu === 'string') return { na: gpu }
          const { p, cams, X, w, obs, feats } = c.inst
          const na = emulatedOnly(gpu, p < 40_000)
          if (na) return na
          baKernel ??= { f: fn(compile(baObservationSource), 'ba_obs') }
          if (!baKernel.kernel || baKernel.p !== p) {
            baKernel.kernel = await gpuMap(baKernel.f, { batch: p, perItem: ['r', 'cam', 'pt', 'w', 'feat'], gpu })
            baKernel.p = p
          }
          const kernel = baKernel.kernel
          // each observation's own copy of its camera and point (ADBench's per-observation blocks)
          const cam = new Float32Array(11 * p),
            pt = new Float32Array(3 * p)
          for (let i = 0; i < p; i++) {
            cam.set(cams.subarray(11 * obs[2 * i]!, 11 * obs[2 * i]! + 11), 11 * i)
            pt.set(X.subarray(3 * obs[2 * i + 1]!, 3 * obs[2 * i + 1]! + 3), 3 * i)
          }
          const wf = Float32Array.from(w),
            ff = Float32Array.from(feats)
          const vals = new Float64Array(2 * p * BA_BLOCK_COLS + p)
          const jacobian = async (): Promise<Float64Array> => {
            const J = await kernel.jacobian([new Float32Array(2 * p), cam, pt, wf, ff], { outputs: ['r'] })
            const [, jc, jp, jw] = J.jacobian as [unknown, Float32Array, Float32Array, Float32Array]
            for (let i = 0; i < p; i++) {
              for (let row = 0; row < 2; row++) {
                const o = (2 * i + row) * BA_BLOCK_COLS,
                  q = 2 * i + row
                for (let j = 0; j < 11; j++) vals[o + j] = jc[q * 11 + j]!
                for (let j = 0; j < 3; j++) vals[o + 11 + j] = jp[q * 3 + j]!
                vals[o + 14] = jw[q]!
              }
              // the weight error 1 − w²: its derivative −2w, on the host
              vals[2 * p * BA_BLOCK_COLS + i] = -2 * w[i]!
            }
            return vals
          }
          return {
            run: async () => void (await jacobian()),
            check: async () =>
              withNote(
                checkBaJacobian(c, await jacobian(), TOLERANCE.f32),
                gpu,
                `two reverse sweeps (one per residual row) over ${p} observations`,
              ),
          }
        },
      },
    ],
  },
})
