/**
 * TF.js and jax-js rows for seed 003's Table 1 (workload `dual`), written as their users would:
 * vectorised where the function allows (dot, matrix–vector, the batch of rotations, the MLP's
 * matrix products), the particles' 1000 Euler steps as 1000 small ops on length-4 vectors. Each
 * gradient comes back in the layout of the case's flat input and is checked against it.
 */
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { NotApplicable, PreparedRow } from '../harness/types.js'
import { PARTICLE_DT, ROT_COTANGENT } from '../objectives/table1.js'
import { JAX_ROW, JAX_TOLERANCE, loadJax, type Jax } from '../peers/jaxjs.js'
import { readFlat } from '../peers/read.js'
import { loadTf, TF_ROW, type Tf } from '../peers/tfjs.js'
import type { DualCase } from '../workloads/dual.js'
import type { Tensor } from '@tensorflow/tfjs'

/** The parts of a case's flat input, as [offset, shape] in input order. */
function parts(c: DualCase): Array<[number, number[]]> {
  const n = c.sizes.n
  switch (c.id) {
    case 'scalar-mul':
      return [
        [0, []],
        [1, []],
      ]
    case 'dot':
      return [
        [0, [n]],
        [n, [n]],
      ]
    case 'sum-mat-vec':
      return [
        [0, [n, n]],
        [n * n, [n, 1]],
      ]
    case 'rotate-vec-by-quat':
      return [[0, [n, 7]]]
    case 'particles':
      return [[0, [n, 4]]]
    case 'neural': {
      const out: Array<[number, number[]]> = []
      let p = 0
      const L = c.mlp!.layers
      for (let l = 1; l < L.length; l++) {
        out.push([p, [L[l]!, L[l - 1]!]])
        p += L[l]! * L[l - 1]!
        out.push([p, [L[l]!, 1]])
        p += L[l]!
      }
      return out
    }
  }
}
const sizeOf = (shape: number[]) => shape.reduce((a, b) => a * b, 1)

/** A loss over the parts, in a framework with these array operations (TF.js and jax-js share the shapes). */
interface Ops<T> {
  add(a: T, b: T): T
  sub(a: T, b: T): T
  mul(a: T, b: T | number): T
  sum(a: T): T
  matMul(a: T, b: T): T
  tanh(a: T): T
  square(a: T): T
  /** columns [from, to) of a 2-D array */
  cols(a: T, from: number, to: number): T
  constant(data: Float64Array, shape: number[]): T
}

function table1Loss<T>(o: Ops<T>, c: DualCase, xs: T[], keep: (t: T) => T): T {
  switch (c.id) {
    case 'scalar-mul':
      return o.mul(xs[0]!, xs[1]!)
    case 'dot':
      return o.sum(o.mul(xs[0]!, xs[1]!))
    case 'sum-mat-vec':
      return o.sum(o.matMul(xs[0]!, xs[1]!))
    case 'rotate-vec-by-quat': {
      const x = xs[0]!
      const col = (k: number) => o.cols(keep(x), k, k + 1)
      const [vx, vy, vz, ux, uy, uz, w] = [0, 1, 2, 3, 4, 5, 6].map(col) as T[]
      const k = (t: T) => keep(t)
      const a = o.mul(o.add(o.add(o.mul(k(ux!), k(vx!)), o.mul(k(uy!), k(vy!))), o.mul(k(uz!), k(vz!))), 2)
      const b = o.sub(o.square(k(w!)), o.add(o.add(o.square(k(ux!)), o.square(k(uy!))), o.square(k(uz!))))
      const cc = o.mul(k(w!), 2)
      const rx = o.add(
        o.add(o.mul(k(a), k(ux!)), o.mul(k(b), k(vx!))),
        o.mul(k(cc), o.sub(o.mul(k(uy!), k(vz!)), o.mul(k(uz!), k(vy!)))),
      )
      const ry = o.add(
        o.add(o.mul(k(a), k(uy!)), o.mul(k(b), k(vy!))),
        o.mul(k(cc), o.sub(o.mul(k(uz!), k(vx!)), o.mul(k(ux!), k(vz!)))),
      )
      const rz = o.add(o.add(o.mul(a, uz!), o.mul(b, vz!)), o.mul(cc, o.sub(o.mul(ux!, vy!), o.mul(uy!, vx!))))
      return o.sum(o.add(o.add(o.mul(rx, ROT_COTANGENT[0]), o.mul(ry, ROT_COTANGENT[1])), o.mul(rz, ROT_COTANGENT[2])))
    }
    case 'neural': {
      const { layers, inputs, targets, batch } = c.mlp!
      const L = layers.length
      // activations as [features, batch]: z = W a + b (b broadcast over the batch)
      let act = o.constant(transpose(inputs, batch, layers[0]!), [layers[0]!, batch])
      for (let l = 1; l < L; l++) {
        const W = xs[2 * (l - 1)]!,
          bias = xs[2 * (l - 1) + 1]!
        const z = o.add(o.matMul(W, act), bias)
        act = l < L - 1 ? o.tanh(z) : z
      }
      const t = o.constant(transpose(targets, batch, layers[L - 1]!), [layers[L - 1]!, batch])
      return o.mul(o.sum(o.square(o.sub(act, t))), 1 / batch)
    }
    case 'particles': {
      const x = xs[0]!
      let p0 = o.cols(keep(x), 0, 1),
        p1 = o.cols(keep(x), 1, 2),
        v0 = o.cols(keep(x), 2, 3),
        v1 = o.cols(x, 3, 4)
      for (let t = 0; t < c.sizes.steps!; t++) {
        const a0 = o.sub(o.mul(keep(p0), -0.5), o.mul(keep(v0), 0.2)),
          a1 = o.sub(o.mul(keep(p1), -0.5), o.mul(keep(v1), 0.2))
        p0 = o.add(p0, o.mul(keep(v0), PARTICLE_DT))
        p1 = o.add(p1, o.mul(keep(v1), PARTICLE_DT))
        v0 = o.add(v0, o.mul(a0, PARTICLE_DT))
        v1 = o.add(v1, o.mul(a1, PARTICLE_DT))
      }
      v0 = keep(v0)
      v1 = keep(v1)
      return o.sum(o.mul(p0, p1))
    }
  }
}

/** [rows × cols] row-major → [cols × rows]. */
function transpose(a: Float64Array, rows: number, cols: number): Float64Array {
  const out = new Float64Array(a.length)
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = a[i * cols + j]!
  return out
}

// ── TF.js ─────────────────────────────────────────────────────────────────────────────────────

function tfOps(tf: Tf): Ops<Tensor> {
  return {
    add: (a, b) => tf.add(a, b),
    sub: (a, b) => tf.sub(a, b),
    mul: (a, b) => tf.mul(a, b),
    sum: (a) => tf.sum(a),
    matMul: (a, b) => tf.matMul(a as never, b as never),
    tanh: (a) => tf.tanh(a),
    square: (a) => tf.square(a),
    cols: (a, from, to) => tf.slice(a, [0, from], [-1, to - from]),
    constant: (data, shape) => tf.tensor(Float32Array.from(data), shape),
  }
}

async function tfRow(c: DualCase): Promise<PreparedRow | NotApplicable> {
  if (c.id === 'particles')
    return { na: 'not timed: TF.js records 8000 tiny ops per gradient (4.5 s for one gradient in a trial run)' }
  const tf = await loadTf()
  const ps = parts(c)
  const xs = ps.map(([o, shape]) => tf.tensor(Float32Array.from(c.x.subarray(o, o + sizeOf(shape))), shape))
  const ops = tfOps(tf)
  const g = tf.grads((...ts: Tensor[]) => table1Loss(ops, c, ts, (t) => t) as never)
  const once = (): Float64Array => {
    let out!: Float64Array
    tf.tidy(() => {
      out = readFlat(g(xs))
    })
    return out
  }
  return {
    run: () => void once(),
    check: () => checkClose(once(), c.gradient(), TOLERANCE.f32, 'gradient'),
    dispose: () => {
      for (const t of xs) t.dispose()
    },
  }
}

export const table1TfRows = defineRowFamily({
  family: 'TF.js',
  rows: { dual: [{ name: TF_ROW, kind: 'gradient', setup: tfRow }] },
})

// ── jax-js ────────────────────────────────────────────────────────────────────────────────────

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type A = any

function jaxOps(jax: Jax): Ops<A> {
  const np = jax.numpy
  return {
    add: (a, b) => np.add(a, b),
    sub: (a, b) => np.subtract(a, b),
    mul: (a, b) => np.multiply(a, b),
    sum: (a) => np.sum(a),
    matMul: (a, b) => np.matmul(a, b),
    tanh: (a) => np.tanh(a),
    square: (a) => np.square(a),
    cols: (a, from, to) => a.slice([], [from, to]),
    constant: (data, shape) => np.array(Float64Array.from(data), { shape, dtype: np.float64 }),
  }
}

async function jaxRow(c: DualCase): Promise<PreparedRow | NotApplicable> {
  if (c.id === 'particles')
    return { na: 'not written for jax-js: 1000 sequential steps of length-4 vectors (jit would unroll 8000 ops)' }
  const jax = await loadJax()
  const np = jax.numpy
  const ps = parts(c)
  const xs = ps.map(([o, shape]) =>
    np.array(Float64Array.from(c.x.subarray(o, o + sizeOf(shape))), { shape, dtype: np.float64 }),
  )
  const ops = jaxOps(jax)
  const argnums = ps.map((_, i) => i)
  // arrays follow move semantics: `keep` takes a new reference for each further use
  const g: A = jax.jit(jax.grad((...ts: A[]) => table1Loss(ops, c, ts, (t: A) => t.ref), { argnums }))
  const once = (): Float64Array => readFlat(g(...xs.map((a: A) => a.ref)))
  return {
    run: () => void once(),
    check: () => checkClose(once(), c.gradient(), JAX_TOLERANCE, 'gradient'),
    dispose: () => {
      for (const a of xs) a.dispose()
    },
  }
}

export const table1JaxRows = defineRowFamily({
  family: 'jax-js',
  rows: { dual: [{ name: JAX_ROW, kind: 'gradient', setup: jaxRow }] },
})
