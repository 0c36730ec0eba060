import { describe, expect, it } from 'vitest'
import { grad, type Real } from './index.js'
import { Dual } from './dual.js'
import { HANDLE_BASE } from './tape.js'
import { Naive, type NaiveReal } from './naive.js'

/** y = x; then n times y = y + y (every intermediate used twice): dy/dx = 2ⁿ. */
function doubling<T>(d: { add(a: T, b: T): T }, x: T, n: number): T {
  let y = x
  for (let i = 0; i < n; i++) y = d.add(y, y)
  return y
}

describe('sharing: y = x + x repeated n times (seed 003 §3.4, counted operations)', () => {
  it('the naive algorithm calls 2ⁿ⁺¹ − 1 backpropagators: the count doubles with every step', () => {
    const counts: number[] = []
    for (let n = 1; n <= 16; n++) {
      const r = Naive.grad((d, [x]) => doubling<NaiveReal>(d, x!, n), [0.3])
      expect(r.grad[0]).toBe(2 ** n)
      counts.push(r.calls)
      expect(r.calls).toBe(2 ** (n + 1) - 1)
    }
    for (let k = 1; k < counts.length; k++) expect(counts[k]! / counts[k - 1]!).toBeGreaterThan(1.99)
  })

  it('the arena records n + 1 nodes and its one sweep follows 2n edges: linear', () => {
    const tape = new Dual()
    for (const n of [1, 2, 8, 16, 64, 1000, 100_000]) {
      tape.reset()
      const x = tape.leaf(0.3)
      const y = doubling<Real>(tape, x, n)
      expect(tape.top).toBe(n + 1)
      tape.clearAdjoints()
      tape.adj[y - HANDLE_BASE] = 1
      tape.sweep()
      expect(tape.edgesSwept).toBe(2 * n)
      expect(tape.adj[0]).toBe(2 ** n) // Infinity past 2¹⁰²³, as in plain arithmetic
    }
  })

  it('the same program through the public grad: 2ⁿ for n = 30, where the naive count would be 2³¹ − 1', () => {
    expect(grad((d, x: Real) => doubling(d, x, 30))(0.3)).toBe(2 ** 30)
  })
})
