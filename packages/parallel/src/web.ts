/**
 * `@tenet/parallel/web`: the browser pools (Web Workers, promise-returning `sum`/`map`), with the
 * same task-order reduction as the Node pools of `@tenet/parallel`. Imports nothing from Node.
 */
export { createWebPool, type WebPool, type WebPoolOptions } from './web-pool.js'
export { webGradientPool, type WebGradientPool, type WebGradientPoolOptions } from './web-gradient-pool.js'
export type { ShardGradient } from './layout.js'
export type { TaskFunction, WorkerModule } from './pool.js'
export type { TenetGradientInit } from './tenet-worker.js'
