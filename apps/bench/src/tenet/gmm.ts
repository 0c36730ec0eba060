/**
 * ADBench's GMM objective in Tenet, term for term as its C++ reference (and `gmmObjectivePlain`).
 *
 * `gmm_points` handles the data term of a block of points [i0, i1): for each point and component
 * it computes y = Q(x − μ) and main = α + Σ log diag Q − ½‖y‖², a running maximum of main, the
 * shifted sum of exponentials and adds log-sum-exp to `slse`. The intermediates are not thrown
 * away: they are kept in workspace arrays passed in as zeros (the "garbage" of a reversible
 * program, which the adjoint uncomputes while it carries the gradients) — so one forward run
 * and one adjoint run give the gradient, without recomputation.
 *
 * `gmm_rest` is the part that does not depend on the points — −n·logsumexp(α) and the Wishart
 * prior — written in the fully clean style: its log-sum-exp is compute–copy–uncompute
 * (`routine … ~routine`) on local ancillas, so nothing is left behind.
 */
import { gmmIcfSize, gmmParameterCount, type GmmInstance } from '../data/gmm-data.js'
import { ADBENCH_PI, wishartConstant } from '../objectives/gmm.js'
import { examples, grad, type GradientFunction, type TenetFunction, type TenetModule } from 'tenet'
import { benchTarget, compile, fn } from './compile.js'

/** The data term for (d, k): `tenet`'s `examples.gmmPointsSource` with k a constant. */
export const gmmPointsSource = (d: number, k: number): string => examples.gmmPointsSource(d, k)

/** exp of the log-diagonal and its per-component sums (once per evaluation, shared by all blocks). */
export const gmmQSource = examples.gmmQSource

/** −n·logsumexp(α) and the Wishart prior; log-sum-exp is compute–copy–uncompute on ancillas. */
export const gmmRestSource = `
${examples.logsumexpSource}
fn gmm_rest(err: f64, n: f64, d: i32, k: i32, alphas: f64[], icf: f64[], gamma: f64, wm: f64) {
  routine {
    lse <- 0.0
    logsumexp(lse, alphas, k)
    icfsz: i32 <- div(d * (d + 1), 2)
  }
  err -= n * lse
  for c in 0..k {
    for j in 0..d {
      err += 0.5 * gamma * gamma * exp(2.0 * icf[c * icfsz + j]) - wm * icf[c * icfsz + j]
    }
    for j in d..icfsz {
      err += 0.5 * gamma * gamma * icf[c * icfsz + j] * icf[c * icfsz + j]
    }
  }
  ~routine
}
`

const modules = new Map<string, TenetModule>()
/** The compiled GMM functions for (d, k) (cached). */
export function gmmModule(d: number, k: number): TenetModule {
  const key = `${benchTarget()}:${d},${k}`
  let m = modules.get(key)
  if (!m) modules.set(key, (m = compile(gmmPointsSource(d, k) + gmmQSource + gmmRestSource)))
  return m
}

/** The instance-independent part: −n d ½ log(2π) − k·(Wishart normalising constant). */
export function gmmConstant(inst: GmmInstance): number {
  const { d, k, n } = inst
  const { gamma, m } = inst.wishart
  return -n * d * 0.5 * Math.log(2 * ADBENCH_PI) - k * wishartConstant(d, gamma, m)
}

/** Points per block: the workspace of a block stays in cache. */
export const GMM_BLOCK = 64

/** A reusable GMM evaluator for one instance shape: objective and gradient, allocation-free. */
export interface GmmTenet {
  objective(inst: GmmInstance): number
  /** gradient in ADBench's order (alphas, means, icf); `out` is reused */
  gradient(inst: GmmInstance, out?: Float64Array): Float64Array
}

const zeros = (n: number): Float64Array => new Float64Array(n)

/** A work array of the drivers below; read \`array\` afresh for every call. */
interface Work {
  readonly array: Float64Array
  readonly length: number
}

/**
 * The drivers' arrays, in the module's own memory where its backend has one (the wasm backend's
 * resident arrays: no call then copies them in or out), else plain typed arrays. A grown wasm
 * memory detaches earlier views, so every call reads \`array\` again. \`stage(w, src)\` copies a
 * caller's array into such a work array once (reallocating it for a new length), so that the
 * block calls do not each copy it in.
 */
function workMemory(core: TenetFunction['core']): {
  alloc(n: number): Work
  stage(w: Work | undefined, src: Float64Array): Work
  /** whether the work arrays live in the module's memory */
  resident: boolean
} {
  const mem = core.resident
  const alloc = (n: number): Work => {
    if (mem) return mem.allocate('f64', n) as unknown as Work
    const array = zeros(n)
    return { array, length: n }
  }
  return {
    alloc,
    resident: mem !== undefined,
    stage(w, src) {
      // (the same wrapper again for the same array: nothing allocated per call)
      if (!mem) return w?.array === src ? w : { array: src, length: src.length }
      if (!w || w.length !== src.length) {
        ;(w as { release?: () => void } | undefined)?.release?.()
        w = alloc(src.length)
      }
      w.array.set(src)
      return w
    },
  }
}

/** Layout of a points-gradient output: ∂/∂alphas, ∂/∂means, ∂/∂icf, ∂/∂qdiag, ∂/∂sumq, concatenated. */
export function gmmPointsGradientLength(d: number, k: number): number {
  return k + k * d + k * gmmIcfSize(d) + k * d + k
}

/**
 * The data term's gradient over the points [i0, i1), block by block: per block one forward run
 * and one run of the generated adjoint of gmm_points. The gradients with respect to alphas,
 * means, icf, qdiag and sumq are *added* into `out` (layout: `gmmPointsGradientLength`); the
 * caller chains qdiag/sumq back to icf with the adjoint of gmm_q. `prepare(icf)` computes qdiag
 * and sumq first (kept in `qdiag`, `sumq`). Its slse is returned (the data term's value).
 */
export interface GmmPointsGradient {
  prepare(icf: Float64Array): void
  /** (Read afresh after every call: on wasm a view of the module's memory, which a grown memory detaches.) */
  readonly qdiag: Float64Array
  readonly sumq: Float64Array
  run(
    x: Float64Array,
    alphas: Float64Array,
    means: Float64Array,
    icf: Float64Array,
    i0: number,
    i1: number,
    out: Float64Array,
  ): number
}

export function createGmmPointsGradient(d: number, k: number, block = GMM_BLOCK): GmmPointsGradient {
  const m = gmmModule(d, k)
  const points = fn(m, 'gmm_points')
  const P = points.core
  const Q = fn(m, 'gmm_q').core
  const A = grad(points, { loss: 0 }).adjoint.core
  const S = gmmIcfSize(d)
  const work = workMemory(P)
  const qdiag = work.alloc(k * d),
    sumq = work.alloc(k)
  const sizes = [block * k * d, block * k * d, block * k, block * k, block * k, block]
  const [xc, y, main, rm, t, s] = sizes.map(work.alloc) as [Work, Work, Work, Work, Work, Work]
  const [gxc, gy, gmain, grm, gt, gs] = sizes.map(work.alloc) as [Work, Work, Work, Work, Work, Work]
  const ws = [xc, y, main, rm, t, s, gxc, gy, gmain, grm, gt, gs]
  let gX = work.alloc(0)
  let xw: Work | undefined
  // the parameters and the gradient accumulators, staged once per run (on wasm, resident: no
  // block call copies them in or out)
  let aw: Work | undefined, mw: Work | undefined, iw: Work | undefined
  const gw = work.alloc(gmmPointsGradientLength(d, k))
  const G = work.resident
  return {
    get qdiag() {
      return qdiag.array
    },
    get sumq() {
      return sumq.array
    },
    prepare(icf) {
      qdiag.array.fill(0)
      sumq.array.fill(0)
      Q(0, d, k, icf, qdiag.array, sumq.array)
    },
    run(x, alphas, means, icf, i0, i1, out) {
      if (gX.length !== x.length) gX = work.alloc(x.length)
      xw = work.stage(xw, x)
      if (G) {
        aw = work.stage(aw, alphas)
        mw = work.stage(mw, means)
        iw = work.stage(iw, icf)
        gw.array.fill(0)
      }
      const pa = G ? aw!.array : alphas,
        pm = G ? mw!.array : means,
        pi = G ? iw!.array : icf
      const o = G ? gw.array : out
      const gAlphas = o.subarray(0, k),
        gMeans = o.subarray(k, k + k * d),
        gIcf = o.subarray(k + k * d, k + k * d + k * S)
      const gQdiag = o.subarray(k + k * d + k * S, k + 2 * k * d + k * S),
        gSumq = o.subarray(k + 2 * k * d + k * S)
      let slse = 0
      for (let b0 = i0; b0 < i1; b0 += block) {
        const b1 = Math.min(i1, b0 + block)
        for (let j = 0; j < ws.length; j++) ws[j]!.array.fill(0)
        P(
          0,
          b0,
          b1,
          pa,
          pm,
          pi,
          xw.array,
          qdiag.array,
          sumq.array,
          xc.array,
          y.array,
          main.array,
          rm.array,
          t.array,
          s.array,
        )
        slse += P.results[0]!
        // the adjoint: the values, one gradient per float parameter (slse, then the arrays), the sink
        A(
          P.results[0]!,
          b0,
          b1,
          pa,
          pm,
          pi,
          xw.array,
          qdiag.array,
          sumq.array,
          xc.array,
          y.array,
          main.array,
          rm.array,
          t.array,
          s.array,
          1,
          gAlphas,
          gMeans,
          gIcf,
          gX.array,
          gQdiag,
          gSumq,
          gxc.array,
          gy.array,
          gmain.array,
          grm.array,
          gt.array,
          gs.array,
          0,
        )
      }
      if (G) {
        const g = gw.array
        for (let j = 0; j < g.length; j++) out[j] = out[j]! + g[j]!
      }
      return slse
    },
  }
}

/**
 * The gradient from the summed points gradient `pts` (layout `gmmPointsGradientLength`): chains
 * ∂/∂qdiag, ∂/∂sumq back to icf through gmm_q's adjoint, adds gmm_rest's gradient, and writes
 * ADBench's order (alphas, means, icf) into `out`. `qdiag`/`sumq` are gmm_q's values for inst.
 */
export function createGmmGradientFinish(
  d: number,
  k: number,
): (inst: GmmInstance, pts: Float64Array, qdiag: Float64Array, sumq: Float64Array, out: Float64Array) => Float64Array {
  const m = gmmModule(d, k)
  const QA = grad(fn(m, 'gmm_q'), { loss: 0 }).adjoint.core
  const gRest: GradientFunction = grad(fn(m, 'gmm_rest'), { loss: 0 })
  const S = gmmIcfSize(d)
  const gIcfQ = zeros(k * S)
  return (inst, pts, qdiag, sumq, out) => {
    const gQdiag = pts.subarray(k + k * d + k * S, k + 2 * k * d + k * S),
      gSumq = pts.subarray(k + 2 * k * d + k * S)
    // through qdiag = exp(diag), sumq = Σ diag
    gIcfQ.fill(0)
    QA(0, d, k, inst.icf, qdiag, sumq, 0, gIcfQ, gQdiag, gSumq, 0)
    gRest.run(0, inst.n, d, k, inst.alphas, inst.icf, inst.wishart.gamma, inst.wishart.m)
    const ra = gRest.buffers[4]!
    const ri = gRest.buffers[5]!
    for (let c = 0; c < k; c++) out[c] = pts[c]! + ra[c]!
    out.set(pts.subarray(k, k + k * d), k)
    const o = k + k * d
    for (let j = 0; j < k * S; j++) out[o + j] = pts[o + j]! + gIcfQ[j]! + ri[j]!
    return out
  }
}

/**
 * Objective: gmm_q, then gmm_points block by block (the workspace is cleared per block), then
 * gmm_rest. Gradient: the points gradient over all points (`createGmmPointsGradient`), then the
 * adjoint of gmm_q seeded with the accumulated qdiag/sumq gradients, plus gmm_rest's.
 */
export function createGmmTenet(d: number, k: number, block = GMM_BLOCK): GmmTenet {
  const m = gmmModule(d, k)
  const P = fn(m, 'gmm_points').core
  const R = fn(m, 'gmm_rest').core
  const pg = createGmmPointsGradient(d, k, block)
  const finish = createGmmGradientFinish(d, k)
  const pts = zeros(gmmPointsGradientLength(d, k))
  const work = workMemory(P)
  const sizes = [block * k * d, block * k * d, block * k, block * k, block * k, block]
  const ws = sizes.map(work.alloc)
  const [xc, y, main, rm, t, s] = ws as [Work, Work, Work, Work, Work, Work]
  let xw: Work | undefined, aw: Work | undefined, mw: Work | undefined, iw: Work | undefined
  const objective = (inst: GmmInstance): number => {
    pg.prepare(inst.icf)
    xw = work.stage(xw, inst.x)
    // (staged once: on wasm no block call copies the parameters in)
    aw = work.stage(aw, inst.alphas)
    mw = work.stage(mw, inst.means)
    iw = work.stage(iw, inst.icf)
    let slse = 0
    for (let i0 = 0; i0 < inst.n; i0 += block) {
      for (let j = 0; j < ws.length; j++) ws[j]!.array.fill(0)
      P(
        slse,
        i0,
        Math.min(inst.n, i0 + block),
        aw.array,
        mw.array,
        iw.array,
        xw.array,
        pg.qdiag,
        pg.sumq,
        xc.array,
        y.array,
        main.array,
        rm.array,
        t.array,
        s.array,
      )
      slse = P.results[0]!
    }
    R(0, inst.n, d, k, inst.alphas, inst.icf, inst.wishart.gamma, inst.wishart.m)
    return gmmConstant(inst) + slse + R.results[0]!
  }
  const gradient = (inst: GmmInstance, out = zeros(gmmParameterCount(d, k))): Float64Array => {
    pg.prepare(inst.icf)
    pts.fill(0)
    pg.run(inst.x, inst.alphas, inst.means, inst.icf, 0, inst.n, pts)
    return finish(inst, pts, pg.qdiag, pg.sumq, out)
  }
  return { objective, gradient }
}

export const gmmFunctions = (
  d: number,
  k: number,
): { points: TenetFunction; q: TenetFunction; rest: TenetFunction } => {
  const m = gmmModule(d, k)
  return { points: fn(m, 'gmm_points'), q: fn(m, 'gmm_q'), rest: fn(m, 'gmm_rest') }
}
