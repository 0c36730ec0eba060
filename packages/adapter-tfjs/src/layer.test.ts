import * as tf from '@tensorflow/tfjs'
import { beforeAll, describe, expect, it } from 'vitest'
import { TenetError, compileModule, defaultRegistry, gradient, parse } from 'tenet'
import { TenetLayer } from './index.js'
import { finiteDifference } from '@tenet/testing'
import { givensAngles, unitaryRnnLayer, unitaryRnnPlain, unitaryRnnSource } from './examples/unitary-rnn.js'

beforeAll(async () => {
  await tf.setBackend('cpu')
  await tf.ready()
})

const m = compileModule(parse({ text: unitaryRnnSource, name: 'unitary-rnn' }, []), { registry: defaultRegistry })
const M = 4,
  STEPS = 6,
  B = 16

/** A seeded normal stream (Box–Muller over an LCG). */
function normals(n: number, seed: number): Float64Array {
  let s = seed >>> 0
  const u = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 0.5) / 2 ** 32
  return Float64Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u()))
}

/** The toy task: recover a teacher's rotation from sequences and the teacher's final states. */
function task() {
  // a teacher rotation with small angles: the student, started at U = I, can reach it
  const teacher = normals(givensAngles(M), 11).map((v) => 0.2 * v)
  const xs = Float32Array.from(normals(B * STEPS * M, 12).map((v) => v * 0.5))
  const ys = new Float32Array(B * M)
  for (let b = 0; b < B; b++)
    ys.set(unitaryRnnPlain(xs.subarray(b * STEPS * M, (b + 1) * STEPS * M), teacher, M, STEPS), b * M)
  return { xs, ys }
}

/** The mean squared error over the batch in f64, by the plain-TS recurrence. */
function mse(xs: Float32Array, ys: Float32Array, theta: ArrayLike<number>): number {
  let s = 0
  for (let b = 0; b < B; b++) {
    const h = unitaryRnnPlain(xs.subarray(b * STEPS * M, (b + 1) * STEPS * M), theta, M, STEPS)
    for (let i = 0; i < M; i++) s += (h[i]! - ys[b * M + i]!) ** 2
  }
  return s / (B * M)
}

describe('TenetLayer: the unitary recurrent cell as a TF.js layer', () => {
  it('gradients through the layer (tf.variableGrads, float32) = central differences (f64) = the Tenet f64 gradient', () => {
    const { xs, ys } = task()
    const layer = unitaryRnnLayer(m.urnn!, { m: M, steps: STEPS })
    const model = tf.sequential({ layers: [layer] })
    expect(model.outputs[0]!.shape).toEqual([null, M])
    const x = tf.tensor2d(xs, [B, STEPS * M]),
      y = tf.tensor2d(ys, [B, M])
    const theta = Float64Array.from(layer.getWeights()[0]!.dataSync())
    const { value, grads } = tf.variableGrads(
      () => tf.losses.meanSquaredError(y, model.apply(x) as tf.Tensor) as tf.Scalar,
    )
    expect(Object.keys(grads)).toHaveLength(1)
    const g = grads[layer.trainableWeights[0]!.originalName]!.dataSync()
    expect(Math.abs(value.dataSync()[0]! - mse(xs, ys, theta))).toBeLessThan(1e-5 * (1 + mse(xs, ys, theta)))
    // the Tenet f64 gradient of the same loss: Σ over the batch of ∂(Σ (h − y)²)/∂θ, / (B·M)
    const exact = new Float64Array(theta.length)
    for (let b = 0; b < B; b++) {
      const gr = gradient(
        m.urnn_loss!,
        [
          0,
          new Float64Array(M),
          Float64Array.from(xs.subarray(b * STEPS * M, (b + 1) * STEPS * M)),
          theta,
          Float64Array.from(ys.subarray(b * M, (b + 1) * M)),
          M,
          STEPS,
        ],
        { loss: 0 },
      )
      const gt = gr[3] as Float64Array
      for (let k = 0; k < theta.length; k++) exact[k]! += gt[k]! / (B * M)
    }
    // central differences of the f64 plain-TS loss (independent of Tenet)
    const fd = finiteDifference((t) => mse(xs, ys, t), theta, 1e-6)
    for (let k = 0; k < theta.length; k++) {
      expect(Math.abs(exact[k]! - fd[k]!), `Tenet f64 vs FD, angle ${k}`).toBeLessThan(1e-7 * (1 + Math.abs(fd[k]!)))
      expect(
        Math.abs(g[k]! - exact[k]!),
        `layer (float32) vs Tenet f64, angle ${k}: ${g[k]} vs ${exact[k]}`,
      ).toBeLessThan(2e-5 * (1 + Math.abs(exact[k]!)))
    }
    // the gradient reaches the layer's input too (for layers below it): against the Tenet f64 one
    const gx = tf
      .grad((t: tf.Tensor) => tf.losses.meanSquaredError(y, model.apply(t) as tf.Tensor))(x)
      .dataSync()
    const gr0 = gradient(
      m.urnn_loss!,
      [
        0,
        new Float64Array(M),
        Float64Array.from(xs.subarray(0, STEPS * M)),
        theta,
        Float64Array.from(ys.subarray(0, M)),
        M,
        STEPS,
      ],
      { loss: 0 },
    )[2] as Float64Array
    for (let e = 0; e < STEPS * M; e++) expect(Math.abs(gx[e]! - gr0[e]! / (B * M))).toBeLessThan(1e-6)
    tf.dispose([value, ...Object.values(grads), x, y])
    model.dispose()
  })

  it('trains with tf.train.adam on the toy sequence task: the loss falls; tensors stay flat', () => {
    const { xs, ys } = task()
    const layer = unitaryRnnLayer(m.urnn!, { m: M, steps: STEPS, initializer: tf.initializers.zeros() })
    const model = tf.sequential({ layers: [layer] })
    const x = tf.tensor2d(xs, [B, STEPS * M]),
      y = tf.tensor2d(ys, [B, M])
    const opt = tf.train.adam(0.05)
    const loss = () => tf.losses.meanSquaredError(y, model.apply(x) as tf.Tensor) as tf.Scalar
    const step = (): number => {
      const l = opt.minimize(loss, true)!
      const v = l.dataSync()[0]!
      l.dispose()
      return v
    }
    const first = step()
    const tensors = tf.memory().numTensors
    let last = first
    for (let i = 0; i < 200; i++) last = step()
    expect(tf.memory().numTensors).toBe(tensors)
    expect(last, `loss ${first} → ${last}`).toBeLessThan(first / 100)
    opt.dispose()
    tf.dispose([x, y])
    model.dispose()
  })

  it('trains inside model.fit (compile with adam and MSE, mini-batches of 8)', async () => {
    const { xs, ys } = task()
    const model = tf.sequential({
      layers: [unitaryRnnLayer(m.urnn!, { m: M, steps: STEPS, initializer: tf.initializers.zeros() })],
    })
    model.compile({ optimizer: tf.train.adam(0.05), loss: 'meanSquaredError' })
    const x = tf.tensor2d(xs, [B, STEPS * M]),
      y = tf.tensor2d(ys, [B, M])
    const before = tf.memory().numTensors
    const h = await model.fit(x, y, { epochs: 40, batchSize: 8, shuffle: false, verbose: 0 })
    const losses = h.history.loss as number[]
    expect(losses[losses.length - 1]!, `loss ${losses[0]} → ${losses[losses.length - 1]}`).toBeLessThan(losses[0]! / 20)
    // what fit keeps: adam's two moment estimates of θ, nothing per step
    expect(tf.memory().numTensors - before).toBe(2)
    tf.dispose([x, y])
    model.dispose()
  })

  it('composes with standard layers and checks its options', () => {
    const layer = unitaryRnnLayer(m.urnn!, { m: M, steps: STEPS })
    const model = tf.sequential({ layers: [layer, tf.layers.dense({ units: 1 })] })
    const out = model.predict(tf.zeros([3, STEPS * M])) as tf.Tensor
    expect(out.shape).toEqual([3, 1])
    out.dispose()
    model.dispose()
    expect(
      () =>
        new TenetLayer({
          fn: m.urnn!,
          inputs: ['xs'],
          output: 'h',
          variables: [{ param: 'phi', shape: [6] }],
          outputShape: () => [M],
        }),
    ).toThrow(/`inputs` names `phi`, which is not a parameter of `urnn`/)
    try {
      new TenetLayer({ fn: m.urnn!, inputs: ['xs'], output: 'h', variables: [], outputShape: () => [M] })
    } catch (e) {
      expect(TenetError.isInstance(e)).toBe(true)
    }
  })
})
