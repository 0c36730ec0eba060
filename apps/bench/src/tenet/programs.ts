/**
 * The smaller workloads as Tenet programs: Bessel J_ν (paper 001), the complex sparse
 * matrix–vector product, the Petersen graph embedding, the unitary multiply loss and the
 * reversible leapfrog (paper 000 Appendix F, float64 and float32, clean and "accumulative").
 * The sparse dot products are the umbrella's `examples`.
 */
import { examples, type TenetFunction, type TenetModule } from 'tenet'
import { benchTarget, compile, fn } from './compile.js'
import { G_SOLAR } from '../objectives/leapfrog.js'

/** Seed 001, "The first kind Bessel function" (the umbrella's example, shared with @tenet/ad's tests). */
export const besselSource = examples.besselSource

/**
 * Complex y ← αAx + βy with α = β = 1 (Julia's \`mul!\` column loop) for a CSC matrix, the complex
 * numbers given by their parts; \`spmul_loss\` adds ⟨ȳ, y⟩ for the reverse pass.
 */
export const sparseMulSource = `
fn spmul(yre: f64[], yim: f64[], colptr: i32[], rowval: i32[], are: f64[], aim: f64[], xre: f64[], xim: f64[], n: i32) {
  for j in 0..n {
    for q in colptr[j]..colptr[j + 1] {
      yre[rowval[q]] += are[q] * xre[j] - aim[q] * xim[j]
      yim[rowval[q]] += are[q] * xim[j] + aim[q] * xre[j]
    }
  }
}
fn spmul_loss(loss: f64, yre: f64[], yim: f64[], colptr: i32[], rowval: i32[], are: f64[], aim: f64[], xre: f64[], xim: f64[], n: i32, bre: f64[], bim: f64[]) {
  spmul(yre, yim, colptr, rowval, are, aim, xre, xim, n)
  for i in 0..len(yre) {
    loss += bre[i] * yre[i] + bim[i] * yim[i]
  }
}`

/**
 * The Petersen graph embedding loss (seed 001): packages/ad's example, the program its own
 * benchmark differentiates (the squared lengths and lengths kept in work arrays passed in as
 * zeros; the means and variances compute–copy–uncompute).
 */
export const embeddingSource = examples.graphEmbeddingSource

/**
 * L = Σ c ⊙ U(θ)x with the umbrella's \`i_umm\` (Listing 14, column-major x[i + m·l]). The
 * gradient needs no memory beyond the parameters: the adjoint un-rotates x as it goes.
 */
export const unitaryLossSource = `
${examples.ummSource}
fn umm_loss(loss: f64, x: f64[], theta: f64[], c: f64[], m: i32, n: i32) {
  i_umm(x, theta, m, n)
  for i in 0..len(x) { loss += c[i] * x[i] }
}`

/**
 * The unitary recurrent step: \`i_umm\` applied \`layers\` times with the same angles, and the loss
 * Σ c ⊙ x_T. Its gradient keeps no activations: the adjoint un-rotates x layer by layer.
 */
export const unitaryRnnSource = `
${examples.ummSource}
fn umm_layers(x: f64[], theta: f64[], m: i32, n: i32, layers: i32) {
  for t in 0..layers { i_umm(x, theta, m, n) }
}
fn umm_layers_loss(loss: f64, x: f64[], theta: f64[], c: f64[], m: i32, n: i32, layers: i32) {
  umm_layers(x, theta, m, n, layers)
  for i in 0..len(x) { loss += c[i] * x[i] }
}`

/**
 * Paper 000 Appendix F: the reversible leapfrog for \`nb\` bodies (x, v body-major, 3 per body).
 * \`accel\` adds the accelerations to \`a\` with its intermediates in ancillas that \`~routine\`
 * uncomputes (Listing 25); a step drifts x, computes a, kicks v and uncomputes a. In the
 * "accumulative" variant (Listing 26) the separation is computed in place on x_j
 * (x_j −= x_i … x_j += x_i), so its round-off accumulates in the positions.
 */
export function leapfrogSource(T: 'f64' | 'f32', accumulative = false): string {
  const Z = '0.0'
  const pair = accumulative
    ? `
        for c in 0..3 { x[3 * j + c] -= x[3 * i + c] }
        routine {
          r2: ${T} <- ${Z}
          r2 += x[3 * j] * x[3 * j] + x[3 * j + 1] * x[3 * j + 1] + x[3 * j + 2] * x[3 * j + 2]
          r: ${T} <- ${Z}
          r += sqrt(r2)
          s: ${T} <- ${Z}
          s += g * m[j] / (r2 * r)
        }
        for c in 0..3 { a[3 * i + c] += s * x[3 * j + c] }
        ~routine
        for c in 0..3 { x[3 * j + c] += x[3 * i + c] }`
    : `
        routine {
          dx: ${T}[] <- zeros(3)
          for c in 0..3 { dx[c] += x[3 * j + c] - x[3 * i + c] }
          r2: ${T} <- ${Z}
          r2 += dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
          r: ${T} <- ${Z}
          r += sqrt(r2)
          s: ${T} <- ${Z}
          s += g * m[j] / (r2 * r)
        }
        for c in 0..3 { a[3 * i + c] += s * dx[c] }
        ~routine`
  return `
fn accel(a: ${T}[], x: ${T}[], m: ${T}[], nb: i32, g: ${T}) {
  for i in 0..nb {
    for j in 0..nb {
      if (i != j, ~) {${pair}
      }
    }
  }
}
fn leapfrog_start(x: ${T}[], v: ${T}[], m: ${T}[], nb: i32, g: ${T}, dt: ${T}) {
  routine {
    a: ${T}[] <- zeros(3 * nb)
    accel(a, x, m, nb, g)
  }
  for i in 0..3 * nb { v[i] += a[i] * (dt / 2.0) }
  ~routine
}
fn leapfrog(x: ${T}[], v: ${T}[], m: ${T}[], nb: i32, g: ${T}, dt: ${T}, steps: i32) {
  for t in 0..steps {
    for i in 0..3 * nb { x[i] += v[i] * dt }
    routine {
      a: ${T}[] <- zeros(3 * nb)
      accel(a, x, m, nb, g)
    }
    for i in 0..3 * nb { v[i] += a[i] * dt }
    ~routine
  }
}`
}

/**
 * The batch of the throughput case: \`ibesselj\` at every z (out[i] += J_ν(z[i])), and the loss
 * Σ J_ν(z_i) whose gradient is J′_ν(z_i) at every z (one forward run plus one adjoint run).
 */
export const besselBatchSource = `
${besselSource}
fn ibesselj_batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i]) }
}
fn ibesselj_sum(loss: f64, out: f64[], nu: i32, z: f64[]) {
  ibesselj_batch(out, nu, z)
  for i in 0..len(out) { loss += identity(out[i]) }
}`

const cache = new Map<string, TenetModule>()
function cached(name: string, source: () => string): TenetModule {
  const key = `${benchTarget()}:${name}`
  let m = cache.get(key)
  if (!m) cache.set(key, (m = compile(source())))
  return m
}

export const besselFunction = (): TenetFunction =>
  fn(
    cached('bessel', () => besselSource),
    'ibesselj',
  )
export const besselBatchFunctions = (): { batch: TenetFunction; sum: TenetFunction } => {
  const m = cached('bessel-batch', () => besselBatchSource)
  return { batch: fn(m, 'ibesselj_batch'), sum: fn(m, 'ibesselj_sum') }
}
export const sparseDotFunction = (): TenetFunction =>
  fn(
    cached('sparse-dot', () => examples.sparseDotSource),
    'sparse_dot',
  )
export const sparseDotMergeFunction = (): TenetFunction =>
  fn(
    cached('sparse-dot-merge', () => examples.sparseDotMergeSource),
    'sparse_dot_merge',
  )
export const sparseMulFunctions = (): { mul: TenetFunction; loss: TenetFunction } => {
  const m = cached('sparse-mul', () => sparseMulSource)
  return { mul: fn(m, 'spmul'), loss: fn(m, 'spmul_loss') }
}
export const embeddingFunction = (): TenetFunction =>
  fn(
    cached('embedding', () => embeddingSource),
    'embedding_loss',
  )
export const unitaryFunctions = (): { umm: TenetFunction; loss: TenetFunction } => {
  const m = cached('unitary', () => unitaryLossSource)
  return { umm: fn(m, 'i_umm'), loss: fn(m, 'umm_loss') }
}
export const unitaryRnnFunctions = (): { layers: TenetFunction; loss: TenetFunction } => {
  const m = cached('unitary-rnn', () => unitaryRnnSource)
  return { layers: fn(m, 'umm_layers'), loss: fn(m, 'umm_layers_loss') }
}
export const leapfrogFunctions = (
  T: 'f64' | 'f32',
  accumulative = false,
): { start: TenetFunction; steps: TenetFunction } => {
  const m = cached(`leapfrog-${T}-${accumulative}`, () => leapfrogSource(T, accumulative))
  return { start: fn(m, 'leapfrog_start'), steps: fn(m, 'leapfrog') }
}

/** Run the Tenet leapfrog (start half-kick, then `steps` steps); positions as float64. */
export function tenetLeapfrog(
  f: ReturnType<typeof leapfrogFunctions>,
  T: 'f64' | 'f32',
  sys: { x: Float64Array; v: Float64Array; mass: Float64Array; bodies: number },
  dt: number,
  steps: number,
): Float64Array {
  const A = T === 'f64' ? Float64Array : Float32Array
  const x = A.from(sys.x),
    v = A.from(sys.v),
    m = A.from(sys.mass)
  f.start.core(x, v, m, sys.bodies, G_SOLAR, dt)
  f.steps.core(x, v, m, sys.bodies, G_SOLAR, dt, steps)
  return Float64Array.from(x)
}

/** {@link tenetLeapfrog}, integrating once and taking the positions after each of `sampleAt` (ascending) steps. */
export function tenetLeapfrogSamples(
  f: ReturnType<typeof leapfrogFunctions>,
  T: 'f64' | 'f32',
  sys: { x: Float64Array; v: Float64Array; mass: Float64Array; bodies: number },
  dt: number,
  sampleAt: readonly number[],
): Float64Array[] {
  const A = T === 'f64' ? Float64Array : Float32Array
  const x = A.from(sys.x),
    v = A.from(sys.v),
    m = A.from(sys.mass)
  f.start.core(x, v, m, sys.bodies, G_SOLAR, dt)
  const out: Float64Array[] = []
  let t = 0
  for (const steps of sampleAt) {
    if (steps > t) f.steps.core(x, v, m, sys.bodies, G_SOLAR, dt, steps - t)
    t = Math.max(t, steps)
    out.push(Float64Array.from(x))
  }
  return out
}
