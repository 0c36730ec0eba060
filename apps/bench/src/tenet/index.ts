/**
 * The Tenet-backed public functions of the suite (cpu backend, generated JavaScript): ADBench's
 * GMM objective and gradient, BA residuals and sparse Jacobian, computed by Tenet programs and
 * their generated adjoints.
 */
import type { BaInstance } from '../data/ba-data.js'
import type { GmmInstance } from '../data/gmm-data.js'
import type { BaResiduals, BaSparseJacobian } from '../objectives/ba.js'
import { baObjectiveTenet, createBaJacobianTenet } from './ba.js'
import { createGmmTenet, type GmmTenet } from './gmm.js'

const gmms = new Map<string, GmmTenet>()
const gmmFor = (inst: GmmInstance): GmmTenet => {
  const key = `${inst.d},${inst.k}`
  let t = gmms.get(key)
  if (!t) gmms.set(key, (t = createGmmTenet(inst.d, inst.k)))
  return t
}

/** ADBench's GMM objective, by Tenet. */
export const gmmObjective = (inst: GmmInstance): number => gmmFor(inst).objective(inst)

/** Its gradient in ADBench's order (alphas, means, icf), by Tenet's generated adjoint. */
export const gmmGradient = (inst: GmmInstance): Float64Array => gmmFor(inst).gradient(inst)

/** ADBench's BA reprojection errors (2 per observation) and weight errors, by Tenet. */
export const baObjective = (inst: BaInstance): BaResiduals => baObjectiveTenet(inst)

/** ADBench's BA Jacobian in its CSR layout (2p rows × 15 non-zeros, then p weight rows), by Tenet. */
export const baJacobian = (inst: BaInstance): BaSparseJacobian => createBaJacobianTenet(inst).run()

export { baSource, baFunctions, BA_WORKSPACE } from './ba.js'
export { createGmmTenet, gmmFunctions, gmmPointsSource, gmmQSource, gmmRestSource, type GmmTenet } from './gmm.js'
export * from './programs.js'
export { compile as compileTenet, generatedSource } from './compile.js'
