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
