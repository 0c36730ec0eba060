/**
 * An array a loop keeps only for its length (a parameter whose element the body never reads,
 * kept so that its length is checked) has no element load in the loop: a load from a JS array
 * keeps its bounds and map checks even when its value is dead (the GMM gradient had nine such
 * loads per point and component). The length check stays. And a row of a reused array of rows,
 * taken from its place (or stored there when allocated), is not stored again after the loop.
 */
import { expect, test } from 'vitest'
import { compile, compileText } from './compile.js'
import { gmmObjective } from './models.js'
import { finiteDifferences, flat, maxScaledError, rng } from './test-util.js'

test('an array read only for its length: no element load, the length still checked', () => {
  const cp = compileText('(A: R[], B: R[], s: R) => sum(map2((a, b) => a * a * s, A, B))')
  for (const src of [cp.source.value, cp.source.gradient]) {
    expect(src).not.toMatch(/p1\[/)
    expect(src).toMatch(/p1\.length/)
  }
  const args = [Float64Array.of(0.5, -1, 2), Float64Array.of(9, 9, 9), 1.5]
  expect(cp.value(...args)).toBeCloseTo(7.875, 14)
  const [, grad] = cp.gradient(...args)
  expect(Array.from(grad[1] as Float64Array)).toEqual([0, 0, 0])
  expect(
    maxScaledError(
      flat(grad),
      finiteDifferences((...a) => cp.value(...a) as number, args),
    ),
  ).toBeLessThan(1e-7)
  expect(() => cp.value(Float64Array.of(1, 2), Float64Array.of(1), 1)).toThrow(
    expect.objectContaining({ code: 'unf/shape' }),
  )
  expect(() => cp.gradient(Float64Array.of(1, 2), Float64Array.of(1), 1)).toThrow(
    expect.objectContaining({ code: 'unf/shape' }),
  )
})

test('the GMM gradient: no dead element load, residual rows refilled in place and not stored again', () => {
  const { params, body } = gmmObjective({ triangular: true })
  const cp = compile(params, body, { wrt: ['alphas', 'means', 'logdiag', 'lower'] })
  const src = cp.source.gradient
  const loads = [...src.matchAll(/const (e\d+) = \w+\[[\w +]+\];/g)].map((m) => m[1]!)
  expect(loads.length).toBeGreaterThan(0)
  for (const e of loads) expect(src.match(new RegExp(`\\b${e}\\b`, 'g'))!.length, e).toBeGreaterThan(1)
  // the residual rows (the centred point and Q(x − μ) per component) live in reused arrays of rows
  const reused = [...src.matchAll(/const (o\d+) = (o\d+)\[(j\d+)\] !== undefined/g)]
  expect(reused.length).toBeGreaterThanOrEqual(2)
  for (const [, row, rows, j] of reused) expect(src).not.toContain(`${rows}[${j}] = ${row};`)
  const r = rng(5)
  const d = 3,
    k = 2,
    n = 4
  const vec = (m: number) => Float64Array.from({ length: m }, () => r() - 0.5)
  const args = [
    vec(k),
    [vec(d), vec(d)],
    [vec(d), vec(d)],
    Array.from({ length: k }, () => Array.from({ length: d }, (_, j) => vec(j))),
    Array.from({ length: n }, () => vec(d)),
    1.3,
    2,
    n,
    0.25,
  ]
  const [, grad] = cp.gradient(...args)
  // repeated calls (the rows reused) give the same gradient
  expect(flat(cp.gradient(...args)[1].slice(0, 4))).toEqual(flat(grad.slice(0, 4)))
  const fd = finiteDifferences((...a) => cp.value(...a) as number, args).slice(0, flat(grad.slice(0, 4)).length)
  expect(maxScaledError(flat(grad.slice(0, 4)), fd)).toBeLessThan(1e-6)
})
