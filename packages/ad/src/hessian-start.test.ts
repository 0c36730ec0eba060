/**
 * `hessian` and `hvp` reuse one driver between calls; a call with new values of the same shapes
 * keeps its start plan (what to copy and zero before a sweep) and must read the new scalars and
 * array contents, not those of the call that made the plan. Between sweeps only the seeded
 * tangents are reset (the other scalars of the program's arguments stay as the plan set them).
 */
import { describe, expect, it } from 'vitest'
import { hessian, hvp } from './index.js'
import { tag } from './test-util.js'

const m = tag({ checks: false })(`
fn f(loss: f64, x: f64[], s: f64, k: i32) {
  for i in 0..len(x) { loss += sin(s * x[i]) * f64(k) }
  loss += s * s * s
}`)

/** The exact Hessian of f over (x…, s). */
function exact(x: Float64Array, s: number, k: number): number[] {
  const n = x.length
  const H = new Array<number>((n + 1) * (n + 1)).fill(0)
  let ss = 6 * s
  for (let i = 0; i < n; i++) {
    const u = s * x[i]!
    H[i * (n + 1) + i] = -Math.sin(u) * s * s * k
    const xs = (Math.cos(u) - Math.sin(u) * u) * k
    H[i * (n + 1) + n] = xs
    H[n * (n + 1) + i] = xs
    ss += -Math.sin(u) * x[i]! * x[i]! * k
  }
  H[n * (n + 1) + n] = ss
  return H
}

describe('the second-order driver between calls', () => {
  it('reads the new scalars and array contents of every call (same shapes, plan kept)', () => {
    for (const [s, k, shift] of [
      [0.7, 2, 0],
      [1.3, 3, 0.5],
      [-0.4, 1, -0.2],
      [0.9, 5, 0.1],
    ] as const) {
      const x = Float64Array.from({ length: 4 }, (_, i) => 0.3 * i + shift)
      const H = hessian(m.f!, [0, x, s, k], { loss: 0, wrt: [1, 2] })
      const want = exact(x, s, k)
      for (let i = 0; i < want.length; i++) expect(H[i]).toBeCloseTo(want[i]!, 10)
      // H·v with v = e_s: the last column
      const hv = hvp(m.f!, [0, x, s, k], { loss: 0, v: [null, new Float64Array(4), 1, null] })
      expect(hv[2]).toBeCloseTo(want[want.length - 1]!, 10)
    }
  })

  it('resets the scalar seeds of the last sweep, whichever call made it (hessian and hvp on one width-1 driver)', () => {
    // (x, s, t): width 1, one direction per sweep: each sweep seeds one scalar and must see no other seed
    const g = tag({ checks: false })(`
fn g(loss: f64, s: f64, t: f64, u: f64) {
  loss += s * s * t + sin(t * u) + u * u * u
}`).g!
    const H = (s: number, t: number, u: number) => [
      [2 * t, 2 * s, 0],
      [2 * s, -u * u * Math.sin(t * u), Math.cos(t * u) - t * u * Math.sin(t * u)],
      [0, Math.cos(t * u) - t * u * Math.sin(t * u), -t * t * Math.sin(t * u) + 6 * u],
    ]
    for (const [s, t, u] of [
      [0.5, 1.5, -0.3],
      [-1.1, 0.4, 0.8],
    ]) {
      const args = [0, s, t, u]
      const want = H(s!, t!, u!)
      for (let j = 0; j < 3; j++) {
        const v: Array<number | null> = [null, 0, 0, 0]
        v[j + 1] = 1
        const hv = hvp(g, args, { loss: 0, v })
        for (let i = 0; i < 3; i++) expect(hv[i + 1]).toBeCloseTo(want[i]![j]!, 12)
        const h = hessian(g, args, { loss: 0, wrt: [1, 2, 3], width: 1 })
        for (let i = 0; i < 9; i++) expect(h[i]).toBeCloseTo(want[Math.floor(i / 3)]![i % 3]!, 12)
      }
    }
  })
})
