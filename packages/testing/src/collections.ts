import { PerformanceObserver } from 'node:perf_hooks'

/**
 * Counts the garbage collections (scavenges included) of this isolate that happen while `work`
 * runs: zero over many calls means the calls allocate nothing on the heap. Used by the
 * "no allocation per call" tests of the backends and the AD drivers.
 */
export async function collectionsDuring(work: () => void): Promise<number> {
  let count = 0
  const obs = new PerformanceObserver((list) => {
    count += list.getEntries().length
  })
  obs.observe({ entryTypes: ['gc'] })
  work()
  await new Promise((r) => setTimeout(r, 50))
  obs.disconnect()
  return count
}

/**
 * Has V8 optimise `fn` now (TurboFan), calling `call` to give it type feedback, and returns whether
 * it is optimised. Needs `node --allow-natives-syntax` (the allocation-test config passes it);
 * throws a clear error otherwise. Forcing optimisation makes the allocation tests deterministic:
 * whether V8's background compiler finishes in time no longer matters.
 */
export function optimizeNow(fn: Function, call: () => void): boolean {
  let natives: (f: Function, c: () => void) => number
  try {
    natives = new Function(
      'f',
      'c',
      '%PrepareFunctionForOptimization(f); c(); c(); %OptimizeFunctionOnNextCall(f); c(); return %GetOptimizationStatus(f)',
    ) as typeof natives
  } catch {
    throw new Error(
      'optimizeNow needs node --allow-natives-syntax (run the allocation tests with vitest.alloc.config.ts)',
    )
  }
  return isOptimized(natives(fn, call))
}

/** Whether `fn` is currently optimised (needs --allow-natives-syntax). */
export function optimized(fn: Function): boolean {
  return isOptimized((new Function('f', 'return %GetOptimizationStatus(f)') as (f: Function) => number)(fn))
}

// V8's optimisation status bit "optimised" (kOptimized = 1 << 4)
const isOptimized = (status: number) => (status & 16) !== 0
