import type { Workload } from '../harness/types.js'
import { baWorkload, type BaCase } from './ba.js'
import { checkpointWorkload, type ChainCase } from './checkpoint.js'
import { besselWorkload, type BesselCase } from './bessel.js'
import { gmmWorkload, type GmmCase } from './gmm.js'
import { embeddingWorkload, type EmbeddingCase } from './graph-embedding.js'
import { leapfrogWorkload, type LeapfrogCase } from './leapfrog.js'
import { sparseDotWorkload, sparseMulWorkload, type SparseDotCase, type SparseMulCase } from './sparse.js'
import { unitaryWorkload, type UnitaryCase } from './unitary.js'
import { unitaryRnnWorkload, type UnitaryRnnCase } from './unitary-rnn.js'
import { normWorkload, type NormCase } from './norm.js'
import { dualWorkload, type DualCase } from './dual.js'
import { unfWorkload, type UnfCase } from './unf.js'
import { kernelsWorkload, type KernelCase } from './kernels.js'

/** Workload id → its case type; row families are typed against this map. */
export interface WorkloadCaseMap {
  bessel: BesselCase
  'sparse-dot': SparseDotCase
  'sparse-mul': SparseMulCase
  'graph-embedding': EmbeddingCase
  gmm: GmmCase
  ba: BaCase
  unitary: UnitaryCase
  'unitary-rnn': UnitaryRnnCase
  leapfrog: LeapfrogCase
  checkpoint: ChainCase
  norm: NormCase
  dual: DualCase
  unf: UnfCase
  kernels: KernelCase
}

export type WorkloadId = keyof WorkloadCaseMap

/** Every workload, in report order, with only its own (plain-TS) rows. */
export const WORKLOADS: { [K in WorkloadId]: Workload<WorkloadCaseMap[K]> } = {
  bessel: besselWorkload,
  'sparse-dot': sparseDotWorkload,
  'sparse-mul': sparseMulWorkload,
  'graph-embedding': embeddingWorkload,
  gmm: gmmWorkload,
  ba: baWorkload,
  unitary: unitaryWorkload,
  'unitary-rnn': unitaryRnnWorkload,
  leapfrog: leapfrogWorkload,
  checkpoint: checkpointWorkload,
  norm: normWorkload,
  dual: dualWorkload,
  unf: unfWorkload,
  // the generality probe (not in the quick set: run it by name)
  kernels: kernelsWorkload,
}

/** The workloads `node dist/cli.js` runs without arguments. */
export const QUICK_SET: WorkloadId[] = [
  'bessel',
  'sparse-dot',
  'sparse-mul',
  'graph-embedding',
  'gmm',
  'ba',
  'unitary',
  'unitary-rnn',
  'leapfrog',
  'checkpoint',
]
// seed 000 Appendix E in TF.js (the adapter rows): in the quick set too
QUICK_SET.push('norm')
// seed 003's Table 1 (the dual-numbers engine)
QUICK_SET.push('dual')
// seed 004's workloads (the UNF engine)
QUICK_SET.push('unf')
