import { describe, expect, it } from 'vitest'
import { bessel, compile, expectSameForward, expectSameRuns, lastLaneQuads, lastMapLanes } from './test-util.js'

const zs = (n: number) => Float64Array.from({ length: n }, (_, i) => 0.1 + ((i * 0.6180339887) % 1) * 7.9)

describe('lane quads', () => {
  it('run the Bessel batch four z at a time with the scalar code’s bits, forwards and backwards, whatever is left over', () => {
    const quads = compile(bessel, 'wasm')
    // (the map loop of f and the downward one of its inverse)
    expect(lastMapLanes).toBe(2)
    expect(lastLaneQuads).toBe(2)
    const pairs = compile(bessel, 'wasm', false, true, undefined, { laneQuads: false })
    expect(lastMapLanes).toBeGreaterThan(0)
    expect(lastLaneQuads).toBe(0)
    const scalar = compile(bessel, 'wasm', false, false)
    expect(lastLaneQuads).toBe(0)
    const cpu = compile(bessel, 'cpu')
    // (every count of iterations left after the quads: 0 to 3, and none at all)
    for (const nu of [0, 1, 2, 5])
      for (const n of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 64, 67])
        expectSameRuns([cpu, scalar, pairs, quads], () => [new Float64Array(n), nu, zs(n)])
  })

  it('give the scalar code’s bits where the lanes of one pair end long before the other pair’s', () => {
    // one z of each quad tiny (a series of one term), the others large (many terms)
    const quads = compile(bessel, 'wasm')
    expect(lastLaneQuads).toBeGreaterThan(0)
    const cpu = compile(bessel, 'cpu')
    const mixed = (n: number) =>
      Float64Array.from({ length: n }, (_, i) => (i % 4 === 1 ? 9.5 : i % 3 === 0 ? 1e-3 : 2.5))
    for (const n of [4, 8, 13]) expectSameRuns([cpu, quads], () => [new Float64Array(n), 2, mixed(n)])
  })

  /**
   * Every kind of lane code in a series the quads run as one joint loop: an `if`/`else` in the
   * `while` (and a `while` in that), i32 counters that wrap, the loop variable read, i32 elements,
   * SWAP, an inverse call, `**`, `exp`, a uniform loop before and its uncompute after (once for
   * the four lanes). (Not reversible as written, `k` is not uncomputed: a test of the code
   * generator only, forwards.)
   */
  const features = `
fn step(x: f64, y: f64, n: i32) {
  x += sqrt(abs(y)) * 0.5 + min(y, 1.5)
  n += 1
  SWAP(x, y)
}
fn body(a: f64, b: f64, c: i32, i: i32, m: i32, s: f64) {
  k: i32 <- 0
  t <- 0.0
  u: i32 <- 0
  for j in 0..m { u += j * 3 }
  t += f64(i) * 0.25 + s + f64(u)
  while (abs(a) < 40.0 && k < 9 || k == 0, k != 0) {
    if (a > b || !(c > 2), ~) {
      step(a, b, k)
      c += k * 1103515245 + 12345
      while (b < -3.0, b >= -0.5) {
        b += 2.5
      }
    } else {
      ~step(b, a, k)
      a -= max(b, 0.25) ** 2 + sqrt(abs(t)) + b ** 3
      k += 1
    }
    t += exp(-abs(a)) + f64(c) * 1e-9
  }
  b += t * 0.125
  a += f64(k)
  ~{
    t += f64(i) * 0.25 + s + f64(u)
  }
  t -> 0.0
  ~{ for j in 0..m { u += j * 3 } }
  u -> 0
  k -> 0
}
fn f(a: f64[], b: f64[], c: i32[], m: i32, s: f64) {
  for i in 0..len(a) { body(a[i], b[i], c[i], i, m, s) }
}`

  it('give the scalar code’s bits on every lane of a series with branches, inner loops and calls', () => {
    const quads = compile(features, 'wasm')
    expect(lastLaneQuads).toBeGreaterThan(0)
    // (its series touches five varying names: a, b, c, k, t)
    const fewer = compile(features, 'wasm', false, true, undefined, { laneQuadValues: 4 })
    expect(lastMapLanes).toBeGreaterThan(0)
    expect(lastLaneQuads).toBe(0)
    const pairs = compile(features, 'wasm', false, true, undefined, { laneQuads: false })
    expect(lastLaneQuads).toBe(0)
    const scalar = compile(features, 'wasm', false, false)
    const cpu = compile(features, 'cpu')
    for (const n of [1, 3, 4, 5, 10, 33]) {
      const args = () => [
        Float64Array.from({ length: n }, (_, i) => Math.sin(i * 1.7) * 30),
        Float64Array.from({ length: n }, (_, i) => Math.cos(i * 0.9) * 8),
        Int32Array.from({ length: n }, (_, i) => (i * 7) % 5),
        3,
        0.75,
      ]
      expectSameForward([cpu, scalar, pairs, fewer, quads], args)
    }
  })

  const refused: Record<string, string> = {
    // a copy of the loop would add to u twice
    'a statement in lanes writes a uniform name': `
fn f(a: f64[], m: i32) {
  for i in 0..len(a) {
    u <- 0.0
    for j in 0..m { u += 1.0
      a[i] += u }
    while (a[i] < 3.0, a[i] >= 0.5) { a[i] += 1.0 }
    u -> f64(m)
  }
}`,
    // sin and cos pairs are shared by a run
    'sin or cos': `
fn f(a: f64[], m: i32) { for i in 0..len(a) { t <- f64(i)
  while (a[i] < 3.0, a[i] >= 0.5) { a[i] += 1.0 + sin(t) }
  t -> f64(i) } }`,
    // nothing for quads to interleave
    'no series': `
fn f(a: f64[], m: i32) { for i in 0..len(a) { if (a[i] < 3.0, a[i] < 3.0) { a[i] += 1.0 } } }`,
  }
  for (const [why, text] of Object.entries(refused))
    it(`keep pairs where ${why}`, () => {
      const wasm = compile(text, 'wasm')
      expect(lastMapLanes).toBeGreaterThan(0)
      expect(lastLaneQuads).toBe(0)
      const cpu = compile(text, 'cpu')
      for (const n of [1, 4, 9])
        expectSameForward([cpu, wasm], () => [Float64Array.from({ length: n }, (_, i) => i * 0.3), 3])
    })
})
