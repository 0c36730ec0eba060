import { describe, expect, it } from 'vitest'
import { rev } from './index.js'
import { collectionsDuring, optimized, optimizeNow } from '@tenet/testing'

describe('the cpu backend allocates nothing per call in steady state', () => {
  const m = rev.with({ checks: false })`
    fn kernel(y: f64, x: f64[], idx: i32[], a: f64, n: i32) {
      routine {
        t <- 0.0
        t += a * a
      }
      for i in 0..len(x) {
        y += x[i] * t + f64(idx[i])
      }
      ~routine
      INC(n)
      helper(y, a)
    }
    fn helper(y: f64, a: f64) { y += sin(a) }
  `
  const x = Float64Array.from({ length: 16 }, (_, i) => i / 16)
  const idx = Int32Array.from({ length: 16 }, (_, i) => i)
  const core = m.kernel!.core

  // 4·10⁶ calls: a core that allocated even one heap number (16 bytes) per call would fill the
  // young generation (at most 16 MiB here) four times over and trigger at least 4 scavenges. The
  // test runner's own messages may cause one or two during the window on a loaded machine.
  it('4·10⁶ calls of the compiled core: (almost) no garbage collection, no heap growth', async () => {
    // V8 is made to optimise the core and the driver loop first (natives syntax, see
    // vitest.alloc.config.ts), so the measurement does not depend on the background compiler
    function drive(calls: number): number {
      let acc = 0
      for (let i = 0; i < calls; i++) {
        core(0.5, x, idx, 0.25, i)
        acc += core.results[0]!
      }
      return acc
    }
    for (let r = 0; r < 50; r++) drive(100)
    expect(
      optimizeNow(core, () => drive(100)),
      'the compiled core is optimised',
    ).toBe(true)
    expect(
      optimizeNow(drive, () => drive(100)),
      'the driver loop is optimised',
    ).toBe(true)
    const before = process.memoryUsage().heapUsed
    let acc = 0
    const long = () => {
      acc = drive(4_000_000)
    }
    // measured again only when it counted too many: an allocation per call collects every time,
    // a collection V8 makes for its own reasons need not come back
    let gcs = await collectionsDuring(long)
    if (gcs > 2) gcs = Math.min(gcs, await collectionsDuring(long))
    expect(Number.isFinite(acc)).toBe(true)
    const growth = process.memoryUsage().heapUsed - before
    expect(optimized(core), 'the compiled core stayed optimised').toBe(true)
    expect(gcs).toBeLessThanOrEqual(2)
    expect(growth).toBeLessThan(1 << 20)
  })

  it('the measurement can fail: a function that allocates one small object per call triggers more than 2', async () => {
    const allocating = (v: number) => ({ v })
    const ring: Array<{ v: number }> = new Array(1024) // the objects escape: no allocation sinking
    const gcs = await collectionsDuring(() => {
      let acc = 0
      for (let i = 0; i < 4_000_000; i++) acc += (ring[i & 1023] = allocating(i + 0.5)).v
      expect(acc).toBeGreaterThan(0)
    })
    expect(gcs).toBeGreaterThan(2)
  })

  it('the results buffer holds the new scalar values', () => {
    core(0.5, x, idx, 0.25, 7)
    const viaWrapper = m.kernel!(0.5, x, idx, 0.25, 7) as number[]
    expect(core.results[0]).toBe(viaWrapper[0])
    expect(core.results[4]).toBe(8)
  })
})
