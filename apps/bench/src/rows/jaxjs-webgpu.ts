/**
 * jax-js on its `webgpu` device, float32 (WebGPU has no f64): the batched Bessel gradient, the GMM
 * gradient and the BA Jacobian, written as the wasm rows are (`jit(grad(f))`, vectorised), so
 * the two jax-js rows differ only in the device. In Node, jax-js finds WebGPU through
 * `navigator.gpu`, which is given the `webgpu` package's GPU (Dawn); without a GPU that is
 * SwiftShader, whose rows say "emulated (SwiftShader)". Where jax-js cannot start its webgpu
 * device, every row reports why. Results are read back with `await data()` (WebGPU has no
 * synchronous readback).
 */
import { existsSync } from 'node:fs'
import { requestGpu } from 'tenet/webgpu'
import { gmmIcfSize } from '../data/gmm-data.js'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { CheckResult, NotApplicable, PreparedRow } from '../harness/types.js'
import { loadJax, type Jax } from '../peers/jaxjs.js'
import { baJaxResidual, besselConstants, besselJax, gmmJaxObjective, gmmSelection } from './jaxjs.js'
import { besselBatchTermCount } from './tfjs.js'

export const JAX_WEBGPU_ROW = 'jax-js (webgpu)'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type A = any

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json'

/** jax-js with its webgpu device started, and what the adapter is; or why it cannot run. */
interface JaxGpu {
  jax: Jax
  /** "emulated (SwiftShader): …" or "on <adapter>". */
  note: string
}

let pending: Promise<JaxGpu | string> | undefined
/** The GPU object handed to jax-js (kept referenced: Dawn's Node binding crashes when it is collected). */
let keep: unknown

function jaxGpu(): Promise<JaxGpu | string> {
  pending ??= (async () => {
    try {
      const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator
      if (!nav?.gpu) {
        if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD
        const { create, globals } = await import('webgpu')
        // jax-js uses the GPUBufferUsage, GPUMapMode, … globals a browser defines
        for (const [key, value] of Object.entries(globals))
          if (!(key in globalThis))
            Object.defineProperty(globalThis, key, { value, configurable: true, writable: true })
        const gpu = create([]) as unknown as GPU
        keep = gpu
        if (nav) Object.defineProperty(nav, 'gpu', { value: gpu, configurable: true })
        // (Node 20 has no navigator; jax-js also reads navigator.userAgent)
        else
          Object.defineProperty(globalThis, 'navigator', {
            value: { gpu, userAgent: `Node.js/${process.version}` },
            configurable: true,
            writable: true,
          })
      }
      const gpu = (globalThis as unknown as { navigator: { gpu: GPU } }).navigator.gpu
      // what jax-js will get (it asks for the high-performance adapter), for the row's note
      const info = await requestGpu(gpu)
      info.device.destroy()
      const jax = await loadJax()
      const devices = await jax.init('webgpu')
      if (!devices.includes('webgpu'))
        return `jax-js 0.1.25 did not start its webgpu device here (init('webgpu') gave ${devices.join(', ')})`
      const note = info.fallback
        ? `emulated (SwiftShader): a fallback adapter (${info.adapter}), timings are no speed claim`
        : `on ${info.adapter}`
      return { jax, note }
    } catch (e) {
      return `jax-js webgpu device unavailable: ${e instanceof Error ? e.message : String(e)}`
    }
  })()
  return pending
}

const f32 = (jax: Jax, data: ArrayLike<number>, shape: number[]): A =>
  jax.numpy.array(Float32Array.from(data), { shape, dtype: jax.numpy.float32, device: 'webgpu' })

/** Reads results (in order) into one float64 vector. */
async function read(out: A | A[]): Promise<Float64Array> {
  const list: A[] = Array.isArray(out) ? out : [out]
  const parts = await Promise.all(list.map((a) => a.data() as Promise<ArrayLike<number>>))
  const res = new Float64Array(parts.reduce((s, p) => s + p.length, 0))
  let o = 0
  for (const p of parts) {
    res.set(p, o)
    o += p.length
  }
  return res
}

const noted = (r: CheckResult, note: string, extra: string): CheckResult => ({
  ...r,
  reason: [r.reason, extra, note].filter(Boolean).join('; '),
})

function prepared(call: () => A, check: (v: Float64Array) => CheckResult, dispose: A[]): PreparedRow {
  return {
    run: async () => void (await read(call())),
    check: async () => check(await read(call())),
    dispose: () => {
      for (const a of dispose) a.dispose()
    },
  }
}

async function start(): Promise<JaxGpu | NotApplicable> {
  const j = await jaxGpu()
  return typeof j === 'string' ? { na: j } : j
}

export const jaxWebgpuRows = defineRowFamily({
  family: 'jax-js (webgpu)',
  rows: {
    bessel: [
      {
        name: JAX_WEBGPU_ROW,
        kind: 'gradient',
        async setup(c) {
          const b = c.batch
          if (!b) return { na: 'the webgpu rows run the batched case (10⁵ z)' }
          const j = await start()
          if ('na' in j) return j
          const { jax } = j
          const terms = besselBatchTermCount(c.nu, b.zs)
          const g = jax.jit(jax.grad((z: A, k: A) => jax.numpy.sum(besselJax(jax, z, k, c.nu, terms))))
          const z = f32(jax, b.zs, [b.zs.length])
          const k = f32(jax, besselConstants(c.nu, terms), [terms + 1])
          return prepared(
            () => g(z.ref, k.ref),
            (v) =>
              noted(
                checkClose(v, b.derivative(), TOLERANCE.f32, 'dJ/dz'),
                j.note,
                `float32, vectorised over ${b.zs.length} z, series unrolled to ${terms} terms`,
              ),
            [z, k],
          )
        },
      },
    ],
    gmm: [
      {
        name: JAX_WEBGPU_ROW,
        kind: 'gradient',
        async setup(c) {
          const { d, k, n } = c.inst
          if (d < 2) return { na: 'd = 1 has no off-diagonal factors' }
          const j = await start()
          if ('na' in j) return j
          const { jax } = j
          const icfSz = gmmIcfSize(d)
          const { gamma, m } = c.inst.wishart
          const g: A = jax.jit(jax.grad(gmmJaxObjective(jax, d, k), { argnums: [0, 1, 2] }))
          const args = [
            f32(jax, c.inst.alphas, [k]),
            f32(jax, c.inst.means, [k, d]),
            f32(jax, c.inst.icf, [k, icfSz]),
            f32(jax, c.inst.x, [n, d]),
            f32(jax, gmmSelection(d), [icfSz, d * d]),
            f32(jax, [n, 0.5 * gamma * gamma, m], [3]),
          ]
          return prepared(
            () => g(...args.map((a) => a.ref)),
            (v) => noted(checkClose(v, c.gradient(), TOLERANCE.f32, 'gradient'), j.note, 'float32'),
            args,
          )
        },
      },
    ],
    ba: [
      {
        name: JAX_WEBGPU_ROW,
        kind: 'jacobian',
        async setup(c) {
          if (c.peersSkipped) return { na: c.peersSkipped }
          const { p, cams, X, w, obs, feats } = c.inst
          for (let i = 0; i < cams.length; i += 11)
            if (cams[i] === 0 && cams[i + 1] === 0 && cams[i + 2] === 0)
              return { na: 'a camera with zero rotation needs the first-order branch, not written for jax-js' }
          const j = await start()
          if ('na' in j) return j
          const { jax } = j
          const camO = new Float64Array(11 * p),
            ptO = new Float64Array(3 * p)
          for (let i = 0; i < p; i++) {
            camO.set(cams.subarray(11 * obs[2 * i]!, 11 * obs[2 * i]! + 11), 11 * i)
            ptO.set(X.subarray(3 * obs[2 * i + 1]!, 3 * obs[2 * i + 1]! + 3), 3 * i)
          }
          const g0: A = jax.jit(jax.grad(baJaxResidual(jax, 0), { argnums: [0, 1, 2] }))
          const g1: A = jax.jit(jax.grad(baJaxResidual(jax, 1), { argnums: [0, 1, 2] }))
          const args = [
            f32(jax, camO, [p, 11]),
            f32(jax, ptO, [p, 3]),
            f32(jax, w, [p]),
            f32(
              jax,
              feats.filter((_, i) => i % 2 === 0),
              [p],
            ),
            f32(
              jax,
              feats.filter((_, i) => i % 2 === 1),
              [p],
            ),
            f32(jax, [1], []),
          ]
          const [camA, ptA, wA, fxA, fyA, oneA] = args
          const vals = new Float64Array(2 * 15 * p + p)
          const once = async (): Promise<Float64Array> => {
            for (const [row, g, f] of [
              [0, g0, fxA],
              [1, g1, fyA],
            ] as const) {
              const out = g(camA.ref, ptA.ref, wA.ref, f.ref, oneA.ref) as A[]
              const [gc, gp, gw] = await Promise.all(out.map((a) => a.data() as Promise<Float32Array>))
              for (let i = 0; i < p; i++) {
                const o = (2 * i + row) * 15
                for (let q = 0; q < 11; q++) vals[o + q] = gc![11 * i + q]!
                for (let q = 0; q < 3; q++) vals[o + 11 + q] = gp![3 * i + q]!
                vals[o + 14] = gw![i]!
              }
            }
            for (let i = 0; i < p; i++) vals[30 * p + i] = -2 * w[i]!
            return vals
          }
          return {
            run: async () => void (await once()),
            check: async () =>
              noted(
                checkClose(await once(), c.jacobian().vals, TOLERANCE.f32, 'Jacobian'),
                j.note,
                'float32, two reverse passes over per-observation parameters',
              ),
            dispose: () => {
              for (const a of args) a.dispose()
            },
          }
        },
      },
    ],
  },
})
