import { PerformanceObserver } from 'node:perf_hooks'

/**
 * Counts the garbage collections (scavenges included) of this isolate that happen while `work`
 * runs: zero over many calls means the calls allocate nothing on the heap. Used by the
 * "no allocation per call" tests of the backends and the AD drivers.
 */
export async function collectionsDuring(work: () => void): Promise<number> {
  let count = 0
  const obs = new PerformanceObserver((list) => { count += list.getEntries().length })
  obs.observe({ entryTypes: ['gc'] })
  work()
  await new Promise((r) => setTimeout(r, 50))
  obs.disconnect()
  return count
}

/**
 * Runs `work` until one run causes no garbage collection (at most `rounds` runs), so that the
 * code under test is optimised before it is measured: on a loaded machine V8's background
 * compiler can finish late, and unoptimised code boxes numbers. Returns the number of runs.
 */
export async function warmUntilSteady(work: () => void, rounds = 30): Promise<number> {
  for (let r = 1; r <= rounds; r++) {
    if ((await collectionsDuring(work)) === 0) return r
  }
  return rounds
}
