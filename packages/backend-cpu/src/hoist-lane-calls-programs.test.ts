/**
 * Step `hoist-lane-calls` of pass `pair-series` on paper 001's Bessel function over a batch of z:
 * the factorial ν! that every element computes (`ifactorial`, exact integer arithmetic) runs once,
 * before the grouped loop. The cpu backend, checks on and off, must compute the same bits as the
 * reference interpreter, forwards and backwards, for batches of 0 to 7 elements (with and without
 * a group of three, and with an element left over) and ν from 0 to 3; with checks on, a ν whose
 * factorial overflows (ν = 13: its `anc -> 0` fails) must raise the interpreter's error. The
 * generated code is printed to show that the step applied (one call of the factorial, before the
 * loop), so that the test cannot pass by never applying.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import { backendUnderTest, besselSource, columnProblems, referenceBackend, runConformance } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = createRegistry()
const backends = [
  referenceBackend(),
  backendUnderTest(cpuBackend, { registry }),
  { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
]

const source = `${besselSource}
fn ibesselj_batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i]) }
}`
const zs = [1, 0.3, 2.5, 0.7, 1.9, 2.9, 0.1]

describe('step `hoist-lane-calls` (cpu backend)', () => {
  for (const checks of [true, false]) {
    it(`computes the factorial once, before the grouped loop (checks ${checks ? 'on' : 'off'})`, () => {
      const m = backendUnderTest(cpuBackend, { registry, checks }).compile(source)
      const info = (
        m.ibesselj_batch as unknown as Record<symbol, { compiled: { sourceOf(n: string, i: boolean): string } }>
      )[Symbol.for('tenet.function')]!
      const js = info.compiled.sourceOf('ibesselj_batch', false)
      const loop = js.indexOf('for (')
      // one call of the factorial's internal copy, before the first loop (the rest loop calls ibesselj)
      const calls = [...js.matchAll(/= FI\d+\(v\d+, p1\)/g)]
      expect(calls).toHaveLength(1)
      expect(calls[0]!.index).toBeLessThan(loop)
    })
  }

  for (const nu of [0, 1, 2, 3])
    for (let n = 0; n <= zs.length; n++)
      it(`ν = ${nu}, ${n} elements: the interpreter's bits, forwards and backwards (checks on and off)`, () => {
        const args = [new Float64Array(n), nu, Float64Array.from(zs.slice(0, n))]
        expect(columnProblems(runConformance({ source, entry: 'ibesselj_batch' }, args, backends))).toEqual([])
      })

  it('ν = 13: the factorial’s failing check raises the interpreter’s error (checks on)', () => {
    const args = [new Float64Array(4), 13, Float64Array.from(zs.slice(0, 4))]
    const [ref, cpu] = runConformance({ source, entry: 'ibesselj_batch' }, args, backends.slice(0, 2))
    expect(ref!.error).toBeDefined()
    expect(String(cpu!.error)).toBe(String(ref!.error))
    expect(String(cpu!.error)).toMatch(/anc -> 0/)
  })
})

describe('step `hoist-lane-calls`: what the first element runs before the call may fail (checks on)', () => {
  const checked = [referenceBackend(), backendUnderTest(cpuBackend, { registry })]
  const z4 = Float64Array.from([1, 0.3, 2.5, 0.7])
  // a loop whose step is a parameter before the factorial: a zero step fails there (the emitted
  // code's zero-step check, not an assert), before element 0's factorial (ν = 13 fails it)
  const stepped = `${besselSource
    .replace('fn ibesselj(out: f64, nu: i32, z: f64)', 'fn ibesselj(out: f64, nu: i32, z: f64, st: i32)')
    .replace('    halfz += z / 2.0\n', '    for q in 0..1 by st { halfz += z / 2.0 }\n')}
fn batch(out: f64[], nu: i32, z: f64[], st: i32) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i], st) }
}`
  for (const [nu, st] of [
    [3, 1],
    [13, 1],
    [3, 0],
    [13, 0],
  ] as const)
    it(`a loop step that is a parameter (ν = ${nu}, step ${st}): the interpreter's values or error`, () => {
      expect(stepped).toContain('by st')
      const [ref, cpu] = runConformance({ source: stepped, entry: 'batch' }, [new Float64Array(4), nu, z4, st], checked)
      if (nu === 13 || st === 0) expect(ref!.error).toBeDefined()
      expect(String(cpu!.error)).toBe(String(ref!.error))
      expect(cpu!.forward).toEqual(ref!.forward)
      if (!ref!.error) expect(cpu!.forward).toBeDefined()
    })
  // an array ancilla of a parameter's length before the factorial (a negative length fails)
  const sized = `${besselSource
    .replace('fn ibesselj(out: f64, nu: i32, z: f64)', 'fn ibesselj(out: f64, nu: i32, z: f64, len: i32)')
    .replace('    halfz += z / 2.0\n', '    w: f64[] <- zeros(len)\n    halfz += z / 2.0\n    w -> zeros(len)\n')}
fn batch(out: f64[], nu: i32, z: f64[], len: i32) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i], len) }
}`
  it('an array ancilla of length −1 before the call: the interpreter’s error', () => {
    const [ref, cpu] = runConformance({ source: sized, entry: 'batch' }, [new Float64Array(4), 13, z4, -1], checked)
    expect(ref!.error).toBeDefined()
    expect(String(cpu!.error)).toBe(String(ref!.error))
  })
})
