/**
 * TF.js with Tenet's adjoints plugged in (`@tenet/adapter-tfjs`): a Tenet function as a TF.js op
 * (`tfOp`) inside `tf.grad`, its gradient Tenet's generated adjoint through `tf.customGrad`.
 * Also TF.js's own gradient of the norm workload (seed 000 Appendix E), so that both run in one
 * process. TF.js rows report TF.js's memory over one gradient (`tf.profile`) in the status;
 * memory the Tenet side holds in plain typed arrays is stated beside it.
 */
import type { Tensor } from '@tensorflow/tfjs'
import { grad } from 'tenet'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { CheckResult, PreparedRow } from '../harness/types.js'
import { loadTf, TF_ROW, type Tf } from '../peers/tfjs.js'
import { formatBytes } from '../report/format.js'
import { benchTarget, compile, fn } from '../tenet/compile.js'
import * as P from '../tenet/programs.js'
import { TENET_ROW, toColumnMajor } from './tenet.js'

export const ADAPTER_ROW = 'TF.js + Tenet adjoint (adapter)'
const name = ADAPTER_ROW

/** Seed 000 Appendix E's norm in Tenet: the sum of squares computed, used, uncomputed. */
export const normSource = `
fn norm(out: f64, x: f64[]) {
  routine { s <- 0.0; for i in 0..len(x) { s += x[i] * x[i] } }
  out += sqrt(s)
  ~routine
}`

/** The norm compiled once per backend (the Tenet (wasm) row compiles it under `withBackend('wasm')`). */
const normModules = new Map<string, ReturnType<typeof compile>>()
const normFunction = () => {
  let m = normModules.get(benchTarget())
  if (!m) normModules.set(benchTarget(), (m = compile(normSource)))
  return fn(m, 'norm')
}

/** The adapter, loaded with TF.js (quietly: TF.js prints a hint when it starts under Node). */
async function loadAdapter(): Promise<{ tf: Tf; tfOp: typeof import('@tenet/adapter-tfjs').tfOp }> {
  const tf = await loadTf()
  const { tfOp } = await import('@tenet/adapter-tfjs')
  return { tf, tfOp }
}

/** TF.js's memory over one call of `once` (which returns tensors it leaves to the caller). */
async function tfMemory(tf: Tf, once: () => Tensor): Promise<string> {
  const p = await tf.profile(() => once())
  const result = p.result as Tensor
  const kept = p.newTensors
  result.dispose()
  return `TF.js over one gradient: peak ${formatBytes(p.peakBytes)} (${p.kernels.length} kernels), ${kept} tensor${kept === 1 ? '' : 's'} kept (the result)`
}

/**
 * The gradient as a plain array, every intermediate tensor freed. (Not returned from the tidy: a
 * tidy walks every key of what its function returns, which for a typed array of 10⁶ elements
 * took seconds.)
 */
function tensorValues(tf: Tf, g: () => Tensor): Float32Array {
  let out!: Float32Array
  tf.tidy(() => {
    out = g().dataSync() as Float32Array
  })
  return out
}

/**
 * A TF.js gradient row: `once` computes the gradient tensor; the check compares it with the
 * float64 reference at float32 tolerance and reports TF.js's memory for one gradient in `note`.
 */
async function tfGradientRow(
  tf: Tf,
  once: () => Tensor,
  expected: () => ArrayLike<number>,
  label: string,
  note: (memory: string) => string,
  dispose: () => void,
): Promise<PreparedRow> {
  const memory = await tfMemory(tf, once)
  return {
    run: () => void tensorValues(tf, once),
    check: (): CheckResult => {
      const r = checkClose(tensorValues(tf, once), expected(), TOLERANCE.f32, label)
      return { ...r, reason: r.reason ?? note(memory) }
    },
    dispose,
  }
}

export const adapterRows = defineRowFamily({
  family: 'TF.js + Tenet',
  rows: {
    norm: [
      {
        name: TF_ROW,
        family: 'TF.js',
        kind: 'gradient',
        async setup(c) {
          const tf = await loadTf()
          const g = tf.grad((x: Tensor) => tf.norm(x))
          const x = tf.tensor1d(Float32Array.from(c.x))
          const once = () => g(x)
          return tfGradientRow(
            tf,
            once,
            () => c.gradient(),
            'x/‖x‖',
            (memory) => `tf.grad(tf.norm); ${memory}`,
            () => x.dispose(),
          )
        },
      },
      {
        name: TENET_ROW,
        family: 'Tenet',
        kind: 'gradient',
        setup(c) {
          // the same Tenet adjoint without TF.js: the cost of the boundary is the difference
          const g = grad(normFunction(), { loss: 0 })
          return {
            run: () => g.run(0, c.x),
            check: () => checkClose(g(0, c.x)[1] as Float64Array, c.gradient(), TOLERANCE.f64, 'x/‖x‖'),
          }
        },
      },
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const { tf, tfOp } = await loadAdapter()
          const norm = tfOp(normFunction(), { inputs: ['x'], outputs: ['out'] })
          const g = tf.grad((x: Tensor) => norm(x))
          const x = tf.tensor1d(Float32Array.from(c.x))
          const once = () => g(x)
          return tfGradientRow(
            tf,
            once,
            () => c.gradient(),
            'x/‖x‖',
            (memory) => `${memory}; outside TF.js, Tenet's f64 x and x̄ (${formatBytes(16 * c.n)}) until the gradient`,
            () => x.dispose(),
          )
        },
      },
    ],
    bessel: [
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const { tf, tfOp } = await loadAdapter()
          const b = c.batch
          if (b) {
            // the Tenet batch program as one op over the whole batch: ∂(Σ J(z_i))/∂z_i = J′(z_i)
            const op = tfOp(P.besselBatchFunctions().batch, {
              inputs: ['z'],
              outputs: ['out'],
              args: { nu: c.nu, out: ({ z }) => new Float64Array((z as Float64Array).length) },
            })
            const g = tf.grad((z: Tensor) => tf.sum(op(z)))
            const z = tf.tensor1d(Float32Array.from(b.zs))
            const once = () => g(z)
            return tfGradientRow(
              tf,
              once,
              () => b.derivative(),
              'dJ/dz',
              (memory) => `one op over 10⁵ z (ibesselj_batch, f64 inside); ${memory}`,
              () => z.dispose(),
            )
          }
          const op = tfOp(P.besselFunction(), { inputs: ['z'], outputs: ['out'], args: { nu: c.nu } })
          const g = tf.grad((z: Tensor) => op(z))
          const z = tf.scalar(c.z)
          const once = () => g(z)
          return {
            run: () => void tensorValues(tf, once),
            check: () => checkClose(tensorValues(tf, once), [c.derivative], TOLERANCE.f32, 'dJ/dz'),
            dispose: () => z.dispose(),
          }
        },
      },
    ],
    'unitary-rnn': [
      {
        name: `${TF_ROW} (dense U(θ))`,
        family: 'TF.js',
        kind: 'gradient',
        async setup(c) {
          const tf = await loadTf()
          const { M, N, T } = c
          // the TF.js way: U(θ) as a dense matrix, the product of its Givens rotations
          // G_k = I + (cos θ_k − 1)P_k + sin θ_k Q_k by a tree of batched matMuls, then x ← U x
          // T times; tf.grad stores what each op needs (the G_k, the partial products, every x_t)
          const K = c.theta.length
          let Kp = 1
          while (Kp < K) Kp *= 2
          const pd = new Float32Array(Kp * M * M),
            qd = new Float32Array(Kp * M * M),
            id = new Float32Array(Kp * M * M)
          let k = 0
          for (let j = 0; j < M; j++)
            for (let i = M - 2; i >= j; i--, k++) {
              const at = (r: number, col: number) => k * M * M + r * M + col
              pd[at(i, i)] = 1
              pd[at(i + 1, i + 1)] = 1
              qd[at(i + 1, i)] = 1
              qd[at(i, i + 1)] = -1
            }
          for (let q = 0; q < Kp; q++) for (let r = 0; r < M; r++) id[q * M * M + r * M + r] = 1
          const P = tf.tensor3d(pd, [Kp, M, M]),
            Q = tf.tensor3d(qd, [Kp, M, M]),
            I = tf.tensor3d(id, [Kp, M, M])
          const x0 = tf.tensor2d(Float32Array.from(c.x), [M, N]),
            cc = tf.tensor2d(Float32Array.from(c.c), [M, N])
          const loss = (theta: Tensor): Tensor => {
            // angles beyond K are 0: their G is the identity
            const th = tf.pad(theta, [[0, Kp - K]]).reshape([Kp, 1, 1])
            let G = tf.add(tf.add(I, tf.mul(tf.sub(tf.cos(th), 1), P)), tf.mul(tf.sin(th), Q))
            // U = G_{K−1} ⋯ G_0: multiply neighbours, later on the left
            for (let h = Kp / 2; h >= 1; h /= 2) {
              const [even, odd] = tf.split(G.reshape([h, 2, M, M]), 2, 1)
              G = tf.matMul(odd!.reshape([h, M, M]), even!.reshape([h, M, M]))
            }
            const U = G.reshape([M, M])
            let x: Tensor = x0
            for (let t = 0; t < T; t++) x = tf.matMul(U, x)
            return tf.sum(tf.mul(cc, x))
          }
          const g = tf.grad(loss)
          const theta = tf.tensor1d(Float32Array.from(c.theta))
          const once = () => g(theta)
          return tfGradientRow(
            tf,
            once,
            () => c.gradient(),
            '∂L/∂θ',
            (memory) => `U(θ) dense (tree of batched matMuls), T matMuls; ${memory}`,
            () => tf.dispose([P, Q, I, x0, cc, theta]),
          )
        },
      },
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const { tf, tfOp } = await loadAdapter()
          // ∂L/∂θ through all T layers as one op: the adjoint un-rotates x, no stored activations
          const op = tfOp(P.unitaryRnnFunctions().loss, {
            inputs: ['theta'],
            outputs: ['loss'],
            args: { x: toColumnMajor(c.x, c.M, c.N), c: toColumnMajor(c.c, c.M, c.N), m: c.M, n: c.N, layers: c.T },
          })
          const g = tf.grad((t: Tensor) => op(t))
          const theta = tf.tensor1d(Float32Array.from(c.theta))
          const once = () => g(theta)
          return tfGradientRow(
            tf,
            once,
            () => c.gradient(),
            '∂L/∂θ',
            (memory) => `no stored activations; ${memory}`,
            () => theta.dispose(),
          )
        },
      },
    ],
  },
})
