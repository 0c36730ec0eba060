import * as tf from '@tensorflow/tfjs'
import { beforeAll, describe, expect, it } from 'vitest'
import { TenetError, gradient, rev } from 'tenet'
import { tfOp } from './index.js'

beforeAll(async () => {
  await tf.setBackend('cpu')
  await tf.ready()
})

const m = rev`
  fn norm(out: f64, x: f64[]) {
    routine { s <- 0.0; for i in 0..len(x) { s += x[i] * x[i] } }
    out += sqrt(s)
    ~routine
  }
  fn two(lo: f64, hi: f64[], x: f64[], w: f64) {
    for i in 0..len(x) {
      lo += w * sin(x[i])
      hi[i] += x[i] * x[i] * w
    }
  }
  fn pick(out: f64, x: f64[], idx: i32[], n: i32) {
    for k in 0..n { out += x[idx[k]] * x[idx[k]] }
  }
  fn scaled(y: f32[], x: f32[], a: f32) { for i in 0..len(x) { y[i] += a * x[i] * x[i] } }
`

/** Every element within `tol` of the reference, relative to 1 + |reference|. */
function close(a: ArrayLike<number>, b: ArrayLike<number>, tol: number, what = ''): void {
  expect(a.length, what).toBe(b.length)
  for (let i = 0; i < a.length; i++)
    expect(Math.abs(a[i]! - b[i]!) / (1 + Math.abs(b[i]!)), `${what} [${i}]: ${a[i]} vs ${b[i]}`).toBeLessThanOrEqual(
      tol,
    )
}

const random = (n: number, seed: number): Float32Array => {
  let s = seed >>> 0
  return Float32Array.from({ length: n }, () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1)
}

describe('tfOp: a Tenet function as a TF.js op', () => {
  it('the norm (seed 000 Appendix E): value and tf.grad equal TF.js’s own and the Tenet f64 gradient; no tensor left behind', () => {
    const norm = tfOp(m.norm!, { inputs: ['x'], outputs: ['out'] })
    const xs = random(50, 1)
    const x = tf.tensor1d(xs)
    const before = tf.memory().numTensors
    const [value, g, own, ownG] = tf.tidy(() => [
      norm(x),
      tf.grad((t: tf.Tensor) => norm(t))(x),
      tf.norm(x),
      tf.grad((t: tf.Tensor) => tf.norm(t))(x),
    ])
    expect(tf.memory().numTensors - before, 'the four results only').toBe(4)
    expect(value!.shape).toEqual([])
    close(value!.dataSync(), own!.dataSync(), 1e-6, 'norm')
    close(g!.dataSync(), ownG!.dataSync(), 1e-6, 'gradient vs tf.grad(tf.norm)')
    const exact = gradient(m.norm!, [0, Float64Array.from(xs)], { loss: 0 })[1] as Float64Array
    close(g!.dataSync(), exact, 1e-7, 'gradient vs Tenet f64')
    tf.dispose([value!, g!, own!, ownG!])
    expect(tf.memory().numTensors).toBe(before)
    // outside tidy: the gradient call keeps exactly its result
    const r = tf.grad((t: tf.Tensor) => norm(t))(x)
    expect(tf.memory().numTensors).toBe(before + 1)
    r.dispose()
    expect(tf.memory().numTensors).toBe(before)
    x.dispose()
  })

  it('several inputs and outputs, against the same function in TF.js ops (values and tf.grads with random output weights)', () => {
    const two = tfOp(m.two!, {
      inputs: ['x', 'w'],
      outputs: ['lo', 'hi'],
      args: { hi: ({ x }) => new Float64Array((x as Float64Array).length) },
    })
    const x = tf.tensor2d(random(12, 2), [3, 4])
    const w = tf.scalar(0.7)
    const c = tf.tensor2d(random(12, 3), [3, 4])
    const before = tf.memory().numTensors
    tf.tidy(() => {
      const [lo, hi] = two(x, w)
      expect(lo!.shape).toEqual([])
      expect(hi!.shape, 'an output that is not an input: its length').toEqual([12])
      const lossTenet = (a: tf.Tensor, b: tf.Tensor) => {
        const [l, h] = two(a, b)
        return tf.add(tf.mul(l!, 1.3), tf.sum(tf.mul(h!, c.reshape([12]))))
      }
      const lossTf = (a: tf.Tensor, b: tf.Tensor) =>
        tf.add(tf.mul(tf.sum(tf.mul(b, tf.sin(a))), 1.3), tf.sum(tf.mul(tf.mul(tf.square(a), b), c)))
      close(lossTenet(x, w).dataSync(), lossTf(x, w).dataSync(), 1e-5, 'loss')
      const [gx, gw] = tf.grads(lossTenet)([x, w])
      const [ex, ew] = tf.grads(lossTf)([x, w])
      expect(gx!.shape).toEqual([3, 4])
      close(gx!.dataSync(), ex!.dataSync(), 1e-5, '∂/∂x')
      close(gw!.dataSync(), ew!.dataSync(), 1e-5, '∂/∂w')
    })
    expect(tf.memory().numTensors).toBe(before)
    tf.dispose([x, w, c])
  })

  it('batching over a leading dimension with a shared input: per-row outputs, summed gradient of the shared one', () => {
    const two = tfOp(m.two!, {
      inputs: ['x', 'w'],
      outputs: ['lo', 'hi'],
      args: { hi: ({ x }) => new Float64Array((x as Float64Array).length) },
      batch: [true, false],
      outputShapes: [undefined, [2, 2]],
    })
    const x = tf.tensor2d(random(12, 4), [3, 4])
    const w = tf.scalar(-0.4)
    tf.tidy(() => {
      const [lo, hi] = two(x, w)
      expect(lo!.shape).toEqual([3])
      expect(hi!.shape).toEqual([3, 2, 2])
      close(lo!.dataSync(), tf.mul(tf.sum(tf.sin(x), 1), w).dataSync(), 1e-6, 'lo per row')
      const f = (a: tf.Tensor, b: tf.Tensor) => {
        const [l, h] = two(a, b)
        return tf.add(tf.sum(tf.mul(l!, tf.tensor1d([1, -2, 3]))), tf.sum(tf.square(h!)))
      }
      const g = (a: tf.Tensor, b: tf.Tensor) =>
        tf.add(
          tf.sum(tf.mul(tf.mul(tf.sum(tf.sin(a), 1), b), tf.tensor1d([1, -2, 3]))),
          tf.sum(tf.square(tf.mul(tf.square(a), b))),
        )
      const [gx, gw] = tf.grads(f)([x, w])
      const [ex, ew] = tf.grads(g)([x, w])
      close(gx!.dataSync(), ex!.dataSync(), 1e-5, '∂/∂x')
      close(gw!.dataSync(), ew!.dataSync(), 1e-5, '∂/∂w (summed over the batch)')
    })
    tf.dispose([x, w])
  })

  it('integer inputs (indices) pass through and get zero gradients; sizes come from `args`', () => {
    const pick = tfOp(m.pick!, {
      inputs: ['x', 'idx'],
      outputs: ['out'],
      args: { n: ({ idx }) => (idx as Int32Array).length },
    })
    const x = tf.tensor1d([1, 2, 3, 4])
    const idx = tf.tensor1d([3, 0, 3], 'int32')
    tf.tidy(() => {
      expect(pick(x, idx).dataSync()[0]).toBe(16 + 1 + 16)
      const [gx, gi] = tf.grads((a: tf.Tensor, b: tf.Tensor) => pick(a, b))([x, idx])
      expect(Array.from(gx!.dataSync())).toEqual([2, 0, 0, 16])
      expect(gi!.dtype).toBe('float32')
      expect(Array.from(gi!.dataSync())).toEqual([0, 0, 0])
    })
    tf.dispose([x, idx])
  })

  it('f32 parameters run in float32 on the Tenet side too', () => {
    const sc = tfOp(m.scaled!, {
      inputs: ['x', 'a'],
      outputs: ['y'],
      args: { y: ({ x }) => new Float32Array((x as Float32Array).length) },
    })
    const x = tf.tensor1d([0.1, 0.2, 0.3])
    const a = tf.scalar(3)
    tf.tidy(() => {
      close(sc(x, a).dataSync(), [0.03, 0.12, 0.27], 1e-6)
      const [gx, ga] = tf.grads((u: tf.Tensor, v: tf.Tensor) => tf.sum(sc(u, v)))([x, a])
      close(gx!.dataSync(), [0.6, 1.2, 1.8], 1e-6)
      close(ga!.dataSync(), [0.14], 1e-6)
    })
    tf.dispose([x, a])
  })

  it('tf.variableGrads and an optimizer train through the op; memory is flat across steps', () => {
    const norm = tfOp(m.norm!, { inputs: ['x'], outputs: ['out'] })
    const target = tf.tensor1d([1, -2, 2])
    const v = tf.variable(tf.tensor1d([0.5, 0.5, 0.5]))
    const loss = () => tf.add(norm(tf.sub(v, target)), tf.mul(0.01, tf.sum(tf.square(v)))) as tf.Scalar
    const { value, grads } = tf.variableGrads(loss)
    // d/dv ‖v − t‖ = (v − t)/‖v − t‖, plus 0.02 v
    const d = [0.5 - 1, 0.5 + 2, 0.5 - 2],
      len = Math.hypot(...d)
    close(
      grads[v.name]!.dataSync(),
      d.map((e) => e / len + 0.01),
      1e-6,
      'variableGrads',
    )
    tf.dispose([value, ...Object.values(grads)])
    const opt = tf.train.adam(0.05)
    const first = opt.minimize(loss, true) as tf.Scalar
    const l0 = first.dataSync()[0]!
    first.dispose()
    const before = tf.memory().numTensors
    for (let i = 0; i < 200; i++) opt.minimize(loss)
    expect(tf.memory().numTensors, 'no tensor kept per step').toBe(before)
    const last = opt.minimize(loss, true) as tf.Scalar
    expect(last.dataSync()[0]!).toBeLessThan(l0 / 4)
    last.dispose()
    opt.dispose()
    tf.dispose([target, v])
  })

  const code = (fn: () => unknown): string => {
    try {
      fn()
    } catch (e) {
      expect(TenetError.isInstance(e), String(e)).toBe(true)
      return `${(e as TenetError).code}: ${(e as Error).message}`
    }
    throw new Error('expected an error')
  }

  it('clear errors for what does not fit', () => {
    expect(code(() => tfOp(m.norm!, { inputs: ['y'], outputs: ['out'] }))).toMatch(
      /^adapter\/argument: tfOp: `inputs` names `y`, which is not a parameter of `norm` \(0 `out`: f64, 1 `x`: f64\[\]\)/,
    )
    expect(code(() => tfOp(m.pick!, { inputs: ['x'], outputs: ['out'], args: { n: 1 } }))).toMatch(
      /parameter `idx` \(i32\[\]\) of `pick` is neither an input nor given in `args`/,
    )
    expect(code(() => tfOp(m.pick!, { inputs: ['x', 'idx'], outputs: ['n'] }))).toMatch(
      /output `n` of `pick` is i32; outputs must be f64 or f32/,
    )
    expect(code(() => tfOp(m.norm!, { inputs: ['x'], outputs: ['out'], args: { x: 1 } }))).toMatch(
      /`args` gives `x`, which is an input of the op/,
    )
    const norm = tfOp(m.norm!, { inputs: ['x'], outputs: ['out'] })
    expect(code(() => tf.tidy(() => norm()))).toMatch(
      /^adapter\/argument: the op of `norm` takes 1 tensors \(x\), got 0/,
    )
    expect(code(() => tf.tidy(() => norm(tf.tensor1d([1, 2], 'int32'))))).toMatch(
      /input 0 \(`x`: f64\[\]\) of the op of `norm` must be a float32 tensor, got int32/,
    )
    const two = tfOp(m.two!, {
      inputs: ['x', 'w'],
      outputs: ['lo'],
      args: { hi: ({ x }) => new Float64Array((x as Float64Array).length) },
      batch: true,
    })
    expect(code(() => tf.tidy(() => two(tf.zeros([3, 2]), tf.zeros([2]))))).toMatch(
      /^adapter\/shape: the batched inputs of the op of `two` must share their leading dimension: input 1 \(`w`\) has 2, an earlier one 3/,
    )
    expect(code(() => tf.tidy(() => two(tf.zeros([0, 2]), tf.zeros([0]))))).toMatch(
      /^adapter\/shape: the op of `two` got an empty batch/,
    )
    expect(
      code(() => tf.tidy(() => tfOp(m.norm!, { inputs: ['x'], outputs: ['out'], outputShapes: [[2]] })(tf.zeros([2])))),
    ).toMatch(/outputShapes\[0\] = \[2\] does not fit output `out` of `norm`, which is a scalar/)
  })
})
