/**
 * The generality probe (issue 29: "programs nobody tuned run slower"): six small scientific
 * kernels written the way a NiLang user porting code writes them — history arrays and
 * compute–copy–uncompute routines, no hand-tuning for Tenet — each beside a plain-TS objective
 * written the way a TypeScript programmer writes it. The workload's cases are the kernels; the
 * Tenet rows (`src/rows/tenet.ts`, and through it wasm and checks on) time each kernel's loss and
 * its gradient, checked against central finite differences of the plain-TS objective.
 */
import { lazy } from '../harness/check.js'
import type { CaseSpec, Workload } from '../harness/types.js'
import { finiteDifferenceGradient, maxScaledError } from '../math/finite-difference.js'
import { createRng } from '../math/prng.js'
import { benchTarget, compile } from '../tenet/compile.js'
import {
  csrLossSource,
  heatLossSource,
  hornerLossSource,
  lvSource,
  rk4LossSource,
  rnnLossSource,
  softmaxCeLossSource,
} from '@tenet/testing/programs'
import type { TenetModule } from 'tenet'

/**
 * The six kernels in Tenet. Each `*_loss(loss, …)` adds a scalar to `loss` and leaves every other
 * argument as it was passed (the intermediates live in ancillas that the routine uncomputes).
 */
export const kernelsSource = `
// 1-D heat equation, explicit stencil, fixed zero ends: the whole history u[t * n + i] in an ancilla
${heatLossSource}

// Lotka-Volterra right-hand side: (d0, d1) += f(x, y; p)
${lvSource}
// classical RK4 over \`steps\` steps, the trajectory in an ancilla, the stages uncomputed each step
${rk4LossSource}

// y += Aᵀx for a CSR matrix A (m rows: len(x) = m), a scatter over the columns
${csrLossSource}

// softmax cross-entropy of a batch of logits z[b * C + i], labels label[b], max-shifted log-sum-exp
${softmaxCeLossSource}

// least squares of a polynomial (Horner) at many points: Σ (p(x_j) - y_j)²
${hornerLossSource}

// a tanh RNN cell over a sequence: h_{t+1} = tanh(W h_t + U x_t + b), loss Σ h_T²
${rnnLossSource}
`

// ---- the plain-TS objectives (scratch arrays are allocated once per case, as a TS programmer would) ----

/** Σ w_i u_T[i]² after T explicit heat steps from u0 (zero ends). */
export function heatPlain(
  u0: Float64Array,
  w: Float64Array,
  r: number,
  n: number,
  T: number,
  a: Float64Array,
  b: Float64Array,
): number {
  a.set(u0)
  // (b needs no zeroing: the first step writes every element of it)
  let cur = a
  let next = b
  for (let t = 0; t < T; t++) {
    for (let i = 1; i < n - 1; i++) next[i] = cur[i]! + r * (cur[i - 1]! - 2 * cur[i]! + cur[i + 1]!)
    next[0] = 0
    next[n - 1] = 0
    const s = cur
    cur = next
    next = s
  }
  let loss = 0
  for (let i = 0; i < n; i++) loss += w[i]! * cur[i]! * cur[i]!
  return loss
}

/** x·y of the Lotka–Volterra state after `steps` RK4 steps from x0 with parameters p. */
export function rk4Plain(x0: Float64Array, p: Float64Array, h: number, steps: number): number {
  const p0 = p[0]!
  const p1 = p[1]!
  const p2 = p[2]!
  const p3 = p[3]!
  let x = x0[0]!
  let y = x0[1]!
  for (let t = 0; t < steps; t++) {
    const a0 = p0 * x - p1 * x * y
    const a1 = p3 * x * y - p2 * y
    let u = x + (h / 2) * a0
    let v = y + (h / 2) * a1
    const b0 = p0 * u - p1 * u * v
    const b1 = p3 * u * v - p2 * v
    u = x + (h / 2) * b0
    v = y + (h / 2) * b1
    const c0 = p0 * u - p1 * u * v
    const c1 = p3 * u * v - p2 * v
    u = x + h * c0
    v = y + h * c1
    const e0 = p0 * u - p1 * u * v
    const e1 = p3 * u * v - p2 * v
    x += (h / 6) * (a0 + 2 * b0 + 2 * c0 + e0)
    y += (h / 6) * (a1 + 2 * b1 + 2 * c1 + e1)
  }
  return x * y
}

/** ‖Aᵀx‖² for a CSR matrix A; `y` is scratch of length n. */
export function csrPlain(
  rowptr: Int32Array,
  col: Int32Array,
  val: Float64Array,
  x: Float64Array,
  y: Float64Array,
): number {
  y.fill(0)
  for (let i = 0; i < x.length; i++) {
    const xi = x[i]!
    for (let q = rowptr[i]!; q < rowptr[i + 1]!; q++) y[col[q]!]! += val[q]! * xi
  }
  let loss = 0
  for (let j = 0; j < y.length; j++) loss += y[j]! * y[j]!
  return loss
}

/** Σ_b (log Σ_i exp z[b, i] − z[b, label_b]), max-shifted. */
export function softmaxCePlain(z: Float64Array, label: Int32Array, C: number): number {
  let loss = 0
  for (let b = 0; b < label.length; b++) {
    const o = b * C
    let m = z[o]!
    for (let i = 1; i < C; i++) m = Math.max(m, z[o + i]!)
    let s = 0
    for (let i = 0; i < C; i++) s += Math.exp(z[o + i]! - m)
    loss += Math.log(s) + m - z[o + label[b]!]!
  }
  return loss
}

/** Σ_j (p(x_j) − y_j)² with p's coefficients c (lowest first), by Horner. */
export function hornerPlain(c: Float64Array, xs: Float64Array, ys: Float64Array): number {
  const d = c.length - 1
  let loss = 0
  for (let j = 0; j < xs.length; j++) {
    const x = xs[j]!
    let acc = c[d]!
    for (let k = d - 1; k >= 0; k--) acc = acc * x + c[k]!
    const e = acc - ys[j]!
    loss += e * e
  }
  return loss
}

/** Σ h_T² of a tanh RNN; `h` and `hn` are scratch of length H. */
export function rnnPlain(
  W: Float64Array,
  U: Float64Array,
  b: Float64Array,
  xs: Float64Array,
  H: number,
  D: number,
  T: number,
  h: Float64Array,
  hn: Float64Array,
): number {
  h.fill(0)
  let cur = h
  let next = hn
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < H; i++) {
      let s = b[i]!
      for (let j = 0; j < H; j++) s += W[i * H + j]! * cur[j]!
      for (let j = 0; j < D; j++) s += U[i * D + j]! * xs[t * D + j]!
      next[i] = Math.tanh(s)
    }
    const tmp = cur
    cur = next
    next = tmp
  }
  let loss = 0
  for (let i = 0; i < H; i++) loss += cur[i]! * cur[i]!
  return loss
}

// ---- the cases ----

/** One kernel: its Tenet loss function, arguments and plain-TS objective. */
export interface KernelCase {
  /** the loss function's name in {@link kernelsSource} */
  fn: string
  /** the arguments of the Tenet loss (the loss, argument 0, is 0); never written by a call */
  args: unknown[]
  /** the plain-TS objective on `args` */
  plain: () => number
  /** the argument indices of the float inputs the gradient is checked on (arrays or scalars) */
  wrt: number[]
  /** the gradient with respect to `args[wrt[k]]` by central finite differences of `plain`, flattened in `wrt` order */
  reference: () => Float64Array
}

/** The central-difference gradient of `plain` with respect to the float inputs `wrt` of `args`. */
export function finiteDifferenceKernelGradient(args: unknown[], wrt: number[], plain: () => number): Float64Array {
  const parts: Float64Array[] = []
  for (const i of wrt) {
    const a = args[i]
    if (a instanceof Float64Array) parts.push(finiteDifferenceGradient(() => plain(), a))
    else {
      const box = Float64Array.of(a as number)
      parts.push(
        finiteDifferenceGradient((x) => {
          args[i] = x[0]
          return plain()
        }, box),
      )
      args[i] = a
    }
  }
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

/** The gradient a `grad` run left (`scalars` / `buffers`), flattened in `wrt` order. */
export function flattenGradient(
  wrt: number[],
  scalars: ArrayLike<number>,
  buffers: ReadonlyArray<ArrayLike<number> | undefined>,
): Float64Array {
  const parts = wrt.map((i) => buffers[i] ?? [scalars[i]!])
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

/** Agreement of a gradient with the finite-difference one: max error scaled by the largest entry. */
export const kernelGradientError = (g: ArrayLike<number>, c: KernelCase): number => maxScaledError(g, c.reference())

/** Tolerance of the finite-difference comparison (central differences, h = 1e-6: about 1e-9 relative). */
export const KERNEL_FD_TOLERANCE = 1e-6

function spec(
  label: string,
  params: Record<string, number | string>,
  make: () => Omit<KernelCase, 'reference'>,
): CaseSpec<KernelCase> {
  return {
    label,
    params,
    make: () => {
      const c = make()
      return { ...c, reference: lazy(() => finiteDifferenceKernelGradient(c.args, c.wrt, c.plain)) }
    },
  }
}

/** The kernels' cases (one size each: the probe is about the shape of the code, not its scaling). */
export function kernelCases(): CaseSpec<KernelCase>[] {
  return [
    spec('heat n=64 T=64', { kernel: 'heat', n: 64, T: 64 }, () => {
      const n = 64
      const T = 64
      const rng = createRng(1)
      const u0 = Float64Array.from({ length: n }, (_, i) => (i === 0 || i === n - 1 ? 0 : rng.uniform()))
      const w = Float64Array.from({ length: n }, () => rng.uniform())
      const r = 0.3
      const sa = new Float64Array(n)
      const sb = new Float64Array(n)
      const args: unknown[] = [0, u0, w, r, n, T]
      return { fn: 'heat_loss', args, wrt: [1, 2, 3], plain: () => heatPlain(u0, w, args[3] as number, n, T, sa, sb) }
    }),
    spec('rk4 Lotka-Volterra 200 steps', { kernel: 'rk4', steps: 200 }, () => {
      const x0 = Float64Array.of(1.2, 0.8)
      const p = Float64Array.of(1.1, 0.4, 0.4, 0.1)
      const args: unknown[] = [0, x0, p, 0.01, 200]
      return { fn: 'rk4_loss', args, wrt: [1, 2, 3], plain: () => rk4Plain(x0, p, args[3] as number, 200) }
    }),
    spec('CSR Aᵀx m=n=500 nnz=2500', { kernel: 'csr-transpose', m: 500, n: 500, nnz: 2500 }, () => {
      const m = 500
      const n = 500
      const perRow = 5
      const rng = createRng(3)
      const rowptr = Int32Array.from({ length: m + 1 }, (_, i) => i * perRow)
      const col = Int32Array.from({ length: m * perRow }, () => Math.floor(rng.uniform() * n))
      const val = Float64Array.from({ length: m * perRow }, rng.normal)
      const x = Float64Array.from({ length: m }, rng.normal)
      const y = new Float64Array(n)
      return {
        fn: 'csr_loss',
        args: [0, rowptr, col, val, x, n],
        wrt: [3, 4],
        plain: () => csrPlain(rowptr, col, val, x, y),
      }
    }),
    spec('softmax CE B=32 C=32', { kernel: 'softmax-ce', B: 32, C: 32 }, () => {
      const B = 32
      const C = 32
      const rng = createRng(4)
      const z = Float64Array.from({ length: B * C }, () => 3 * rng.normal())
      const label = Int32Array.from({ length: B }, () => Math.floor(rng.uniform() * C))
      return { fn: 'softmax_ce_loss', args: [0, z, label, C], wrt: [1], plain: () => softmaxCePlain(z, label, C) }
    }),
    spec('Horner deg 8 at 256 points', { kernel: 'horner', degree: 8, points: 256 }, () => {
      const rng = createRng(5)
      const c = Float64Array.from({ length: 9 }, () => rng.normal() / 4)
      const xs = Float64Array.from({ length: 256 }, () => 2 * rng.uniform() - 1)
      const ys = Float64Array.from(xs, (x) => Math.sin(3 * x))
      return { fn: 'horner_loss', args: [0, c, xs, ys], wrt: [1, 2], plain: () => hornerPlain(c, xs, ys) }
    }),
    spec('tanh RNN H=8 D=4 T=16', { kernel: 'rnn', H: 8, D: 4, T: 16 }, () => {
      const H = 8
      const D = 4
      const T = 16
      const rng = createRng(6)
      const W = Float64Array.from({ length: H * H }, () => rng.normal() / Math.sqrt(H))
      const U = Float64Array.from({ length: H * D }, () => rng.normal() / Math.sqrt(D))
      const b = Float64Array.from({ length: H }, () => rng.normal() / 4)
      const xs = Float64Array.from({ length: T * D }, rng.normal)
      const h = new Float64Array(H)
      const hn = new Float64Array(H)
      return {
        fn: 'rnn_loss',
        args: [0, W, U, b, xs, H, D, T],
        wrt: [1, 2, 3, 4],
        plain: () => rnnPlain(W, U, b, xs, H, D, T, h, hn),
      }
    }),
  ]
}

const modules = new Map<string, TenetModule>()
/** The kernels compiled for the current bench backend and checks setting (one module per target). */
export function kernelsModule(): TenetModule {
  const key = benchTarget()
  let m = modules.get(key)
  if (!m) {
    m = compile(kernelsSource)
    modules.set(key, m)
  }
  return m
}

/** Timed results are added here, so their work is never dead code. */
const sink = new Float64Array(1)

export const kernelsWorkload: Workload<KernelCase> = {
  id: 'kernels',
  title: 'Generality probe: six small kernels as a NiLang user writes them',
  description:
    'A 1-D heat stencil over T steps, an RK4 Lotka–Volterra integrator, a CSR transpose product, a softmax cross-entropy, Horner least squares and a tanh RNN, each written in Tenet with history arrays and compute–copy–uncompute routines and nothing tuned; the loss and its gradient (checked against central finite differences of the plain-TS objective), as ratios to the plain-TS objective.',
  cases: kernelCases,
  baseline: {
    name: 'plain TS objective',
    setup: (c) => ({ run: () => void (sink[0] += c.plain()) }),
  },
  rows: [],
}
