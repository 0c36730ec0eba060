/**
 * Peer rows of the `unf` workload: jax-js (`jit(grad(f))`, float64 on its wasm device) and
 * TF.js (`tf.grads`, float32 on its cpu backend), written as their users would: vectorised.
 * The dual-numbers engine (`@tenet/dual`) adds its row in `workloads/unf.ts` beside the UNF rows.
 */
import type { Tensor } from '@tensorflow/tfjs'
import { defineRowFamily } from '../harness/registry.js'
import type { PreparedRow, Row } from '../harness/types.js'
import { JAX_ROW, loadJax } from '../peers/jaxjs.js'
import { readFlat } from '../peers/read.js'
import { loadTf, TF_ROW } from '../peers/tfjs.js'
import { gmmConstant, gmmDenseLower, gmmPackGradient } from '../objectives/unf.js'
import { directionalCheck, warmUp, type UnfCase } from '../workloads/unf.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type A = any

const JAX_TOL = 1e-4 // float64 storage, single-precision exp/log on wasm
const TF_TOL = 1e-3 // float32

const jaxRow: Row<UnfCase> = {
  name: JAX_ROW,
  family: 'jax-js',
  kind: 'gradient',
  async setup(c) {
    const jax = await loadJax()
    const np = jax.numpy
    const f64 = (data: ArrayLike<number>, shape: number[]): A =>
      np.array(Float64Array.from(data), { shape, dtype: np.float64 })
    let g: A
    let args: A[]
    let flatten = (v: Float64Array): Float64Array => v
    switch (c.name) {
      case 'dot': {
        const { a, b } = c.vectors!
        g = jax.jit(jax.grad((x: A, y: A) => np.sum(np.multiply(x, y)), { argnums: [0, 1] }))
        args = [f64(a, [a.length]), f64(b!, [b!.length])]
        break
      }
      case 'prod': {
        const { a } = c.vectors!
        g = jax.jit(jax.grad((x: A) => np.prod(x)))
        args = [f64(a, [a.length])]
        break
      }
      case 'logsumexp': {
        const { a } = c.vectors!
        g = jax.jit(jax.grad((x: A) => jax.nn.logsumexp(x)))
        args = [f64(a, [a.length])]
        break
      }
      case 'mlp': {
        const m = c.mlp!
        const loss = (w1: A, b1: A, w2: A, b2: A, xs: A, ys: A): A => {
          const hidden = np.tanh(np.add(np.matmul(xs, np.transpose(w1)), b1))
          return np.sum(np.square(np.subtract(np.add(np.matmul(hidden, np.transpose(w2)), b2), ys)))
        }
        g = jax.jit(jax.grad(loss, { argnums: [0, 1, 2, 3] }))
        args = [
          f64(m.w1, [m.h, m.d]),
          f64(m.b1, [m.h]),
          f64(m.w2, [m.o, m.h]),
          f64(m.b2, [m.o]),
          f64(m.xs, [m.n, m.d]),
          f64(m.ys, [m.n, m.o]),
        ]
        break
      }
      case 'gmm': {
        const inst = c.gmm!
        const { d, k, n } = inst
        const { gamma, m } = inst.wishart
        // the same formulation as the UNF program: dense strictly-lower factors
        const objective = (alphas: A, means: A, logdiag: A, lower: A, x: A, eye: A, scal: A): A => {
          const qdiag = np.exp(logdiag.ref)
          const sumQ = np.sum(logdiag, 1)
          const Q = np.add(lower.ref, np.multiply(np.expandDims(qdiag.ref, 2), eye))
          const xc = np.subtract(np.expandDims(x, 0), np.expandDims(means, 1))
          const y = np.matmul(xc, np.swapaxes(Q, 1, 2))
          const main = np.subtract(
            np.expandDims(np.add(alphas.ref, sumQ.ref), 1),
            np.multiply(np.sum(np.square(y), 2), 0.5),
          )
          const slse = np.sum(jax.nn.logsumexp(main, 0))
          const lseA = jax.nn.logsumexp(alphas)
          const frob = np.add(np.sum(np.square(qdiag), 1), np.sum(np.reshape(np.square(lower), [k, d * d]), 1))
          const prior = np.sum(np.subtract(np.multiply(frob, scal.ref.slice(1)), np.multiply(sumQ, scal.ref.slice(2))))
          return np.add(np.subtract(slse, np.multiply(lseA, scal.slice(0))), prior)
        }
        g = jax.jit(jax.grad(objective, { argnums: [0, 1, 2, 3] }))
        const icfSz = (d * (d + 1)) / 2
        const logdiag = Float64Array.from({ length: k * d }, (_, i) => inst.icf[Math.floor(i / d) * icfSz + (i % d)])
        const lower = Float64Array.from(gmmDenseLower(inst).flatMap((L) => L.flatMap((r) => [...r])))
        const eye = Float64Array.from({ length: d * d }, (_, i) => (i % (d + 1) === 0 ? 1 : 0))
        args = [
          f64(inst.alphas, [k]),
          f64(inst.means, [k, d]),
          f64(logdiag, [k, d]),
          f64(lower, [k, d, d]),
          f64(inst.x, [n, d]),
          f64(eye, [d, d]),
          f64([n, 0.5 * gamma * gamma, m], [3]),
        ]
        flatten = (v) =>
          gmmPackGradient(
            d,
            k,
            v.subarray(0, k),
            v.subarray(k, k + k * d),
            v.subarray(k + k * d, k + 2 * k * d),
            (cc, row, col) => v[k + 2 * k * d + cc * d * d + row * d + col],
          )
        void gmmConstant
        break
      }
    }
    const call = () => readFlat(g(...args.map((a) => a.ref)))
    warmUp(call)
    const row: PreparedRow = {
      run: () => void call(),
      check: () => directionalCheck(c, flatten(call()), JAX_TOL),
      dispose: () => {
        for (const a of args) a.dispose()
      },
    }
    return row
  },
}

const tfRow: Row<UnfCase> = {
  name: TF_ROW,
  family: 'TF.js',
  kind: 'gradient',
  async setup(c) {
    const tf = await loadTf()
    let grads: (xs: Tensor[]) => Tensor[]
    let inputs: Tensor[]
    let extra: Tensor[] = []
    switch (c.name) {
      case 'dot': {
        const { a, b } = c.vectors!
        grads = tf.grads((x: Tensor, y: Tensor) => tf.sum(tf.mul(x, y))) as (xs: Tensor[]) => Tensor[]
        inputs = [tf.tensor1d(Float32Array.from(a)), tf.tensor1d(Float32Array.from(b!))]
        break
      }
      case 'prod': {
        const { a } = c.vectors!
        grads = tf.grads((x: Tensor) => tf.prod(x)) as (xs: Tensor[]) => Tensor[]
        inputs = [tf.tensor1d(Float32Array.from(a))]
        break
      }
      case 'logsumexp': {
        const { a } = c.vectors!
        grads = tf.grads((x: Tensor) => tf.logSumExp(x)) as (xs: Tensor[]) => Tensor[]
        inputs = [tf.tensor1d(Float32Array.from(a))]
        break
      }
      case 'mlp': {
        const m = c.mlp!
        const xs = tf.tensor2d(Float32Array.from(m.xs), [m.n, m.d]),
          ys = tf.tensor2d(Float32Array.from(m.ys), [m.n, m.o])
        extra = [xs, ys]
        grads = tf.grads((w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor) => {
          const hidden = tf.tanh(tf.add(tf.matMul(xs as never, w1 as never, false, true), b1))
          return tf.sum(tf.square(tf.sub(tf.add(tf.matMul(hidden as never, w2 as never, false, true), b2), ys)))
        }) as (xs: Tensor[]) => Tensor[]
        inputs = [
          tf.tensor2d(Float32Array.from(m.w1), [m.h, m.d]),
          tf.tensor1d(Float32Array.from(m.b1)),
          tf.tensor2d(Float32Array.from(m.w2), [m.o, m.h]),
          tf.tensor1d(Float32Array.from(m.b2)),
        ]
        break
      }
      case 'gmm':
        return { na: 'TF.js GMM rows are in the gmm workload (same objective); not repeated here' }
    }
    const once = (): Float64Array => {
      let out!: Float64Array
      tf.tidy(() => {
        out = readFlat(grads(inputs) as never)
      })
      return out
    }
    warmUp(once)
    return {
      run: () => void once(),
      check: () => directionalCheck(c, once(), TF_TOL),
      dispose: () => {
        for (const t of [...inputs, ...extra]) t.dispose()
      },
    }
  },
}

export const unfPeerRows = defineRowFamily({ family: 'unf peers', rows: { unf: [jaxRow, tfRow] } })
