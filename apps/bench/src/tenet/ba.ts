/**
 * ADBench's bundle adjustment in Tenet. One observation: rotate X − C by the Rodrigues formula
 * (first-order branch when θ = 0), divide by depth, apply the radial distortion and the focal
 * length and principal point, and compare with the feature; weighted by w. The weight error is
 * 1 − w².
 *
 * - `ba_objective` is the clean form: per observation the intermediates live in ancillas that
 *   `~routine` uncomputes, so the function leaves nothing behind.
 * - `ba_rows` (tenet's example; the WebGPU row's form): per-observation copies, a workspace, and
 *   `loss` accumulating one residual row of every observation.
 * - `ba_block` (here) is the Jacobian form: one observation as a block program; `blockJacobian`
 *   runs its forward run and its two-row vector adjoint per observation in one compiled loop.
 */
import { BA_CAMERA_PARAMS, type BaInstance } from '../data/ba-data.js'
import {
  BA_BLOCK_COLS,
  createBaJacobian,
  createBaResiduals,
  type BaResiduals,
  type BaSparseJacobian,
} from '../objectives/ba.js'
import { blockJacobian, type BlockJacobian, type TenetFunction, type TenetModule } from 'tenet'
import { benchTarget, compile, fn } from './compile.js'
import { examples } from 'tenet'

/** The BA program is `tenet`'s (`examples.baSource`); its projection helper serves other forms (the f32 GPU kernel). */
export const { baSource, baBlockSource, BA_WORKSPACE, baProjection: projection, BA_INTERMEDIATES: NAMES } = examples

const modules = new Map<string, TenetModule>()
export const baModule = (): TenetModule => {
  let m = modules.get(benchTarget())
  if (!m) modules.set(benchTarget(), (m = compile(baSource)))
  return m
}
export const baFunctions = (): { objective: TenetFunction; rows: TenetFunction } => ({
  objective: fn(baModule(), 'ba_objective'),
  rows: fn(baModule(), 'ba_rows'),
})

/**
 * The observation indices and features of the last instance `baObjectiveTenet` ran on a backend with
 * its own memory (wasm), copied there once: they are the problem's data, the same on every call,
 * where cameras, points and weights are the parameters an optimiser changes between calls, so the
 * wrapper still copies those in per call (the residuals can live there too: see
 * \`createBaResidualsTenet\`). Held per module, for one instance
 * at a time (the previous instance's copies are given back).
 */
/** An array in a backend's memory (`core.resident.allocate`'s result). */
type ResidentArray = ReturnType<NonNullable<TenetFunction['core']['resident']>['allocate']>

const stagedData = new WeakMap<TenetModule, { inst: BaInstance; obs: ResidentArray; feats: ResidentArray }>()

function baData(inst: BaInstance, m: TenetModule): { obs: Int32Array; feats: Float64Array } {
  const memory = fn(m, 'ba_objective').core.resident
  if (!memory) return inst
  let held = stagedData.get(m)
  if (held?.inst !== inst) {
    held?.obs.release()
    held?.feats.release()
    const obs = memory.allocate('i32', inst.obs.length)
    const feats = memory.allocate('f64', inst.feats.length)
    obs.array.set(inst.obs)
    // (read again: the second allocation may have grown the memory, detaching the first view)
    feats.array.set(inst.feats)
    held = { inst, obs, feats }
    stagedData.set(m, held)
  }
  // (views read afresh on every call: a grown memory detaches earlier ones)
  return { obs: held.obs.array as Int32Array, feats: held.feats.array as Float64Array }
}

/**
 * Residual buffers for {@link baObjectiveTenet} on module `m`: on a backend with its own memory
 * (wasm), in that memory (`CompiledFunction.resident`), so that the compiled call writes the
 * residuals in place instead of the wrapper copying both arrays in and out on every call, as the
 * Jacobian's values live there (see \`createBaJacobianTenet\`); the caller reads them through the
 * views. \`reprojErr\` and \`wErr\` are getters that read the views afresh (a grown memory detaches
 * earlier ones); \`release\` gives the memory back. Elsewhere (cpu), plain arrays.
 */
export function createBaResidualsTenet(p: number, m: TenetModule = baModule()): BaResiduals & { release(): void } {
  const memory = fn(m, 'ba_objective').core.resident
  if (!memory) return { ...createBaResiduals(p), release: () => {} }
  const reproj = memory.allocate('f64', 2 * p)
  const werr = memory.allocate('f64', p)
  return {
    get reprojErr() {
      return reproj.array as Float64Array
    },
    get wErr() {
      return werr.array as Float64Array
    },
    release() {
      reproj.release()
      werr.release()
    },
  }
}

/**
 * Reprojection and weight errors by `ba_objective` (Tenet; the module of the current backend unless
 * given). On wasm the instance's observations and features are copied into the module's memory on
 * the first call for that instance and used in place afterwards (see `baData`): they are taken to
 * stay as they are.
 */
export function baObjectiveTenet(
  inst: BaInstance,
  out: BaResiduals = createBaResiduals(inst.p),
  m: TenetModule = baModule(),
): BaResiduals {
  // (the data staged first: staging may grow the memory, detaching views of resident residuals)
  const { obs, feats } = baData(inst, m)
  const reproj = out.reprojErr,
    werr = out.wErr
  reproj.fill(0)
  werr.fill(0)
  fn(m, 'ba_objective').core(reproj, werr, inst.cams, inst.X, inst.w, obs, feats, inst.p)
  return out
}

const blockModules = new Map<string, TenetModule>()
/** The compiled `ba_block` of the current backend. */
export const baBlockFunction = (): TenetFunction => {
  let m = blockModules.get(benchTarget())
  if (!m) blockModules.set(benchTarget(), (m = compile(baBlockSource)))
  return fn(m, 'ba_block')
}

/** `blockJacobian` of `ba_block`: the 2 × 15 Jacobian block (camera, point, weight) of each observation. */
export function baBlockJacobian(): BlockJacobian {
  return blockJacobian(baBlockFunction(), {
    sizes: [2, BA_CAMERA_PARAMS, 3, null, 2, BA_WORKSPACE],
    inputs: [1, 2, 3],
    outputs: [0],
    workspace: [5],
  })
}

/**
 * A reusable Jacobian evaluator for one instance: `blockJacobian` over the observations writes the
 * 2p observation rows straight into the CSR values (its block layout is ADBench's), then the
 * weight rows. On a backend with its own memory (wasm), the values live in that memory
 * (`CompiledFunction.resident`), as the per-observation copies do (see `createBaJacobianRows`),
 * so that the compiled loop writes them in place; `run` returns the Jacobian with the current view.
 */
export function createBaJacobianTenet(inst: BaInstance): { run(): BaSparseJacobian; jac: BlockJacobian } {
  const rows = createBaJacobianRows(inst)
  const J = createBaJacobian(inst)
  const memory = rows.jac.programs[0]!.core.resident
  const vals = memory?.allocate('f64', J.vals.length)
  return {
    jac: rows.jac,
    run: () => {
      // (read after the copies' allocation and again after every run: a grown memory detaches views)
      const out = vals ? { ...J, vals: vals.array as Float64Array } : J
      rows(0, inst.p, out.vals, 0)
      const done = vals ? { ...J, vals: vals.array as Float64Array } : J
      baWeightRows(inst, done.vals)
      return done
    },
  }
}

/**
 * The Jacobian's observation rows for ranges of observations, for one instance (per-observation
 * copies of cameras and points made once, ADBench's blocks): `rows(i0, i1, vals, base)` writes rows
 * x and y of observations [i0, i1) into `vals` at observation `i − base` (ADBench's layout,
 * `BA_BLOCK_COLS` per row) by `baBlockJacobian`. The worker threads of the parallel rows use this
 * on their ranges. On a backend with its own memory (wasm), the copies (and copies of the weights and
 * features) live in that memory, where the block Jacobian reads them in place instead of copying
 * each chunk in.
 */
export function createBaJacobianRows(
  inst: BaInstance,
): ((i0: number, i1: number, vals: Float64Array, base: number) => void) & { jac: BlockJacobian } {
  const { p, cams, X, w, obs, feats } = inst
  const C = BA_CAMERA_PARAMS
  const jac = baBlockJacobian()
  const memory = jac.programs[0]!.core.resident
  const camHeld = memory?.allocate('f64', C * p)
  const ptHeld = memory?.allocate('f64', 3 * p)
  // (the weights and features too, copied once)
  const wHeld = memory?.allocate('f64', p)
  const featsHeld = memory?.allocate('f64', 2 * p)
  const wAt = () => (wHeld ? (wHeld.array as Float64Array) : w)
  const featsAt = () => (featsHeld ? (featsHeld.array as Float64Array) : feats)
  const camAt = () => (camHeld ? (camHeld.array as Float64Array) : cam)
  const ptAt = () => (ptHeld ? (ptHeld.array as Float64Array) : pt)
  const cam = camHeld ? new Float64Array(0) : new Float64Array(C * p)
  const pt = ptHeld ? new Float64Array(0) : new Float64Array(3 * p)
  const camv = camAt(),
    ptv = ptAt()
  if (wHeld) wAt().set(w)
  if (featsHeld) featsAt().set(feats)
  for (let i = 0; i < p; i++) {
    camv.set(cams.subarray(C * obs[2 * i]!, C * obs[2 * i]! + C), C * i)
    ptv.set(X.subarray(3 * obs[2 * i + 1]!, 3 * obs[2 * i + 1]! + 3), 3 * i)
  }
  const r = new Float64Array(2 * p)
  const B = 2 * BA_BLOCK_COLS
  const rows = (i0: number, i1: number, vals: Float64Array, base: number) => {
    const args = [
      r.subarray(2 * i0, 2 * i1),
      camAt().subarray(C * i0, C * i1),
      ptAt().subarray(3 * i0, 3 * i1),
      wAt().subarray(i0, i1),
      featsAt().subarray(2 * i0, 2 * i1),
      null,
    ]
    jac.run(i1 - i0, args, vals.subarray(B * (i0 - base), B * (i1 - base)))
  }
  return Object.assign(rows, { jac })
}

/**
 * The weight rows of the Jacobian, d(1 − w²)/dw, after the 2p observation rows: all of them, or
 * those of observations [i0, i1) (a parallel task writes its range's).
 */
export function baWeightRows(inst: BaInstance, vals: Float64Array, i0 = 0, i1 = inst.p): void {
  const base = 2 * BA_BLOCK_COLS * inst.p
  for (let i = i0; i < i1; i++) vals[base + i] = -2 * inst.w[i]!
}
