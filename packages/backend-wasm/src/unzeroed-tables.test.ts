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
function agree(source: string, args: (n: number, k: number) => unknown[], shorts: number[], checks = false): number {
  const wasm = compile(source, 'wasm', checks).f!
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

const horner = `fn f(loss: f64, c: f64[], xs: f64[], ys: f64[]) {
  for j in 0..len(xs) {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[len(c) - 1] += c[len(c) - 1]
      for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * xs[j] + c[k] }
      e <- 0.0
      e += acc[0] - ys[j]
    }
    loss += e * e
    ~routine
  }
}`

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
  })
})
