/**
 * Allocation tests: run by themselves after the parallel test suite (see vitest.alloc.config.ts
 * at the repository root), because they count garbage collections and other test files running
 * on the same cores make that noisy.
 */
import { describe, expect, it } from 'vitest'
import { collectionsDuring, warmUntilSteady } from '@tenet/testing'
import { grad, graphEmbeddingArgs, graphEmbeddingSource } from './index.js'
import { tag } from './test-util.js'

describe('grad(f) allocates nothing per call in steady state (cpu backend, checks off)', () => {
  const m = tag({ checks: false })`
    fn kernel(y: f64, x: f64[], a: f64) {
      t <- 0.5
      for i in 0..len(x) { y += sin(x[i]) * a * t }
      t -> 0.5
    }`
  const x = Float64Array.from({ length: 4 }, (_, i) => i / 4)
  const g = grad(m.kernel!, { loss: 0 })
  // retried: the test runner itself may allocate during the window on a loaded machine; a
  // sweep that allocates fails every attempt
  it('g.run, 4·10⁶ gradient sweeps: (almost) no garbage collection', { retry: 2 }, async () => {
    function drive(calls: number): number {
      let acc = 0
      for (let i = 0; i < calls; i++) { g.run(0.5, x, 0.25); acc += g.scalars[2]! }
      return acc
    }
    for (let r = 0; r < 20; r++) drive(5_000)
    await warmUntilSteady(() => drive(200_000))
    let acc = 0
    // 4·10⁶ sweeps: 16 bytes per sweep would be 64 MB, at least 4 scavenges of a 16 MB young
    // generation; the runner's own messages may cause one or two in the window under load
    const gcs = await collectionsDuring(() => { acc = drive(4_000_000) })
    expect(Number.isFinite(acc)).toBe(true)
    expect(gcs).toBeLessThanOrEqual(2) // the test runner may allocate once in the window on a loaded machine
  })
  it('g.run on the graph-embedding loss (k = 10), 2·10⁴ sweeps: no garbage collection', { retry: 3 }, async () => {
    const ge = tag({ checks: false })(graphEmbeddingSource)
    const gg = grad(ge.embedding_loss!, { loss: 0 })
    const x10 = Float64Array.from({ length: 100 }, (_, i) => Math.sin(i))
    const [, , q1, d1, q2, d2, , e1, e2] = graphEmbeddingArgs(x10, 10)
    const drive = (calls: number) => { let acc = 0; for (let i = 0; i < calls; i++) { gg.run(0, x10, q1, d1, q2, d2, 10, e1, e2); acc += gg.lastLoss } return acc }
    for (let r = 0; r < 10; r++) drive(1000)
    await warmUntilSteady(() => drive(2000))
    let acc = 0
    const gcs = await collectionsDuring(() => { acc = drive(20_000) })
    expect(Number.isFinite(acc)).toBe(true)
    expect(gcs).toBeLessThanOrEqual(1) // the test runner may allocate once in the window on a loaded machine
  })
})
