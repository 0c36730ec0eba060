/**
 * Tables whose zeroing the wasm backend leaves out (see \`ZeroingSite\` in the code generator): a
 * \`zeros\` array ancilla marked \`overwritten\` (pass \`first-writes\` and others) whose every
 * \`init\` update is emitted as zero plus the value, without checks. The memory under such a table
 * is left dirty before each allocation (a routine's ancilla that nothing uncomputes without checks,
 * a call with long arrays of NaN, −0 and huge values before a call with short ones): results must
 * equal the interpreter's and the cpu backend's bit for bit; where a lane pair, map lanes or a held
 * element read the old element, or checks are on, the zeroing stays.
 */
import { describe, expect, it } from 'vitest'
import { hornerLossSource } from '@tenet/testing'
import { compile, exact, lastUnzeroedTables } from './test-util.js'

/** A result as exact text (−0 and NaN told apart from 0). */
const text = (r: unknown) =>
  JSON.stringify((r as unknown[]).map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v))))

/** Values that stale memory may hold: NaN, −0, huge, infinite, subnormal. */
const DIRT = [Number.NaN, -0, 1e308, Number.NEGATIVE_INFINITY, 3.5, -1e-310, 7.25e-3]
const dirt = (n: number, shift = 0) => Float64Array.from({ length: n }, (_, i) => DIRT[(i + shift) % DIRT.length]!)

/**
 * Compiles \`source\` for wasm (recording how many tables skip their zeroing), cpu and the
 * interpreter; runs each on \`args(long)\` (long arrays of dirt, which the wasm call lays out in
 * its memory) and then on every \`args(short)\`, and expects the short calls' results bit for bit
 * equal. Returns \`lastUnzeroedTables\` of the wasm compilation.
 */
function agree(
  source: string,
  args: (n: number, k: number) => unknown[],
  shorts: number[],
  checks = false,
  simd = true,
): number {
  const wasm = compile(source, 'wasm', checks, simd).f!
  const unzeroed = lastUnzeroedTables
  const cpu = compile(source, 'cpu', checks).f!
  const ref = compile(source, 'interpreter', checks).f!
  for (const n of shorts)
    for (let k = 0; k < 3; k++) {
      // the dirt first (its own results need not agree: NaN payloads; with checks on it may
      // fail, leaving its values in memory all the same), then the call under test
      for (const g of [wasm, cpu])
        try {
          g(...args(400, k + 1))
        } catch {}
      const want = text(ref(...args(n, 0)))
      expect(text(wasm(...args(n, 0))), `wasm, n = ${n}, round ${k}`).toBe(want)
      expect(text(cpu(...args(n, 0))), `cpu, n = ${n}, round ${k}`).toBe(want)
    }
  return unzeroed
}

/** The bench kernel's Horner least squares, entry named `f`. */
const horner = hornerLossSource.replace('fn horner_loss(', 'fn f(')

/** Polynomial coefficients (−0 among them: \`0 + −0\` is +0) and points; long ones are dirt. */
const hornerArgs = (n: number, k: number) =>
  k > 0
    ? [0, dirt(n, k), dirt(n, k + 1), dirt(n, k + 2)]
    : [
        0,
        Float64Array.from({ length: n }, (_, i) => (i % 3 === 1 ? -0 : (i - 1.5) / 3)),
        Float64Array.from({ length: 5 }, (_, i) => i / 4 - 0.5),
        Float64Array.from({ length: 5 }, (_, i) => i / 7),
      ]

describe('tables without zeroing (wasm backend)', () => {
  it('Horner’s accumulator: no zeroing without checks, results equal on dirty memory; zeroed with checks on', () => {
    expect(agree(horner, hornerArgs, [1, 2, 3, 8, 33, 40])).toBeGreaterThan(0)
    expect(agree(horner, hornerArgs, [1, 3, 8, 40], true)).toBe(0)
    expect(agree(horner, hornerArgs, [1, 3, 8, 40], false, false)).toBeGreaterThan(0)
  })

  it('histories going up (f64, f32, i32; one and two first elements), read after their loops', () => {
    const source = `fn f(y: f64, z: i32, w: f32, x: f64[], n: i32) {
  for r in 0..3 {
    routine {
      h: f64[] <- zeros(n + 2)
      q: f32[] <- zeros(n + 1)
      m: i32[] <- zeros(n + 1)
      h[0] += x[0]
      h[1] += h[0] * x[1] - 0.5
      for t in 2..n + 2 { h[t] += h[t - 1] * x[t] - h[t - 2] }
      q[0] += f32(x[0])
      for t in 1..n + 1 { q[t] -= q[t - 1] * f32(x[t]) + f32(0.25) }
      m[0] += r
      for t in 1..n + 1 { m[t] += m[t - 1] * 3 + t }
      s <- 0.0
      for t in 0..n + 2 { s += h[t] * f64(r + 1) }
    }
    y += s
    w += q[n]
    z += m[n]
    ~routine
  }
}`
    const args = (n: number, k: number) =>
      k > 0
        ? [0, 0, 0, dirt(n + 2, k), n]
        : [0, 0, 0, Float64Array.from({ length: n + 2 }, (_, i) => (i % 4 === 2 ? -0 : 1 / (i + 2))), n]
    expect(agree(source, args, [0, 1, 2, 5, 31, 40])).toBeGreaterThan(0)
    expect(agree(source, args, [0, 1, 5, 40], true)).toBe(0)
  })

  it('a gradient’s shape: an adjoint array written one ahead of its loop, and the forward uncomputed in between', () => {
    const source = `fn f(y: f64, c: f64[], gc: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    a: f64[] <- zeros(len(c))
    g: f64[] <- zeros(len(c))
    a[len(c) - 1] += c[len(c) - 1]
    for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * xs[j] + c[k] }
    y += a[0]
    g[0] += 2.0 * a[0]
    for k in 0..=len(c) - 2 {
      a[k] -= a[k + 1] * xs[j] + c[k]
      g[k + 1] += g[k] * xs[j]
      gc[k] += g[k]
    }
    for k in 0..len(c) { y += a[k] * g[k] }
    gc[len(c) - 1] += g[len(c) - 1]
    g -> zeros(len(c))
    a -> zeros(len(c))
  }
}`
    const args = (n: number, k: number) =>
      k > 0
        ? [0, dirt(n, k), dirt(n, k + 1), dirt(n, k + 2)]
        : [
            0,
            Float64Array.from({ length: n }, (_, i) => (i - 2) / 5),
            new Float64Array(n),
            Float64Array.of(0.5, -0.25, 2),
          ]
    expect(agree(source, args, [2, 3, 9, 40])).toBeGreaterThan(0)
  })

  it('a map loop’s first writes, read in another order: results equal', () => {
    const source = `fn f(y: f64, x: f64[], n: i32) {
  for r in 0..2 {
    routine {
      t: f64[] <- zeros(n)
      for k in 0..n { t[k] += x[k] * 2.0 + f64(r) }
      s <- 0.0
      for k in 0..n { s += t[k] * t[n - 1 - k] }
    }
    y += s
    ~routine
  }
}`
    const args = (n: number, k: number) =>
      k > 0 ? [0, dirt(n, k), n] : [0, Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? -0 : i / 3)), n]
    agree(source, args, [1, 2, 3, 8, 33, 40])
  })

  it('random histories (direction, first elements, update ops and values, later updates and reads): bit for bit', () => {
    let seed = 0
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      return (seed >>> 8) % n
    }
    const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!
    let unzeroed = 0
    for (let program = 0; program < 24; program++) {
      seed = program * 7919 + 1
      const up = rnd(2) === 0
      const two = rnd(2) === 0
      // p: the element written before (one step back in the loop's direction), x: the input
      const value = (p: string, x: string): string =>
        pick([
          `${p} * ${x}`,
          `${x} - ${p}`,
          `sqrt(abs(${p})) + ${x}`,
          `max(${p}, ${x})`,
          `-${x}`,
          `${x} * 0.0`,
          `${p} * 0.5 + ${x} * ${x}`,
          `exp(${x}) - ${p}`,
        ])
      const op = () => pick(['+=', '-='])
      const lines: string[] = []
      if (up) {
        lines.push(`a[0] ${op()} ${value('x[0]', 'x[1]')}`)
        if (two) lines.push(`a[1] ${op()} ${value('a[0]', 'x[1]')}`)
        const p2 = two ? pick(['a[k - 1]', 'a[k - 2]']) : 'a[k - 1]'
        lines.push(`for k in ${two ? 2 : 1}..n { a[k] ${op()} ${value(p2, 'x[k]')} }`)
      } else {
        lines.push(`a[n - 1] ${op()} ${value('x[0]', 'x[n - 1]')}`)
        if (two) lines.push(`a[n - 2] ${op()} ${value('a[n - 1]', 'x[1]')}`)
        const p2 = two ? pick(['a[k + 1]', 'a[k + 2]']) : 'a[k + 1]'
        lines.push(`for k in n - ${two ? 3 : 2}..=0 by -1 { a[k] ${op()} ${value(p2, 'x[k]')} }`)
      }
      if (rnd(2) === 0) lines.push(`a[${rnd(3)}] += x[2] * 1.5`)
      const read = pick(['a[k] * x[k]', 'a[n - 1 - k]', 'a[k] - a[0]'])
      const source = `fn f(y: f64, x: f64[], n: i32) {
  for r in 0..3 {
    a: f64[] <- zeros(n)
    ${lines.join('\n    ')}
    for k in 0..n { y += ${read} }
    y += f64(r)
    a -> zeros(n)
  }
}`
      const args = (n: number, k: number) =>
        k > 0
          ? [0, dirt(n, k), n]
          : [0, Float64Array.from({ length: n }, (_, i) => [0.5, -0, -1.25, 2, 1e-3, -3][(i + program) % 6]!), n]
      unzeroed += agree(source, args, [3, 4, 9, 40])
    }
    expect(unzeroed).toBeGreaterThan(0)
  })

  it('a loop nest of primitives and rotations of elements its outer loop does not write (pass `tabulate`’s shape) on dirty memory, with and without SIMD', () => {
    const source = `fn f(y: f64[], x: f64[], w: f64[], n: i32, m: i32) {
  for l in 0..n {
    for j in 0..m {
      y[j + m * l] += cos(w[j]) * x[j + m * l] + sin(w[m - 1 - j])
      ROT(x[j + m * l], y[j + m * l], w[j])
    }
  }
}`
    const args = (m: number, k: number) =>
      k > 0
        ? [dirt(3 * m, k), dirt(3 * m, k + 1), dirt(m, k + 2), 3, m]
        : [
            Float64Array.from({ length: 3 * m }, (_, i) => i / 5 - 1),
            Float64Array.from({ length: 3 * m }, (_, i) => (i % 2 ? -0 : 0.5)),
            Float64Array.from({ length: m }, (_, i) => i - 1.5),
            3,
            m,
          ]
    agree(source, args, [1, 2, 5, 40])
    agree(source, args, [1, 2, 5, 40], false, false)
  })
})
