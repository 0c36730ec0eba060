/**
 * `@tenet/parallel`: evaluate shardable work — typically the gradient of a data term, one shard
 * of points per task — on worker threads, with the results summed in task order (deterministic:
 * the bits do not depend on the number of workers).
 */
export {
  createPool,
  sharedArray,
  type Pool,
  type PoolOptions,
  type TaskFunction,
  type TaskList,
  type Tasks,
  type WorkerModule,
} from './pool.js'
export { tenetGradientPool, type GradientPool, type GradientPoolOptions, type ShardGradient } from './gradient-pool.js'
export type { TenetGradientInit } from './tenet-worker.js'
export { splitRange, type ItemRange, type SplitOptions } from './ranges.js'
