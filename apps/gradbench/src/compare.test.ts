import { describe, expect, it } from 'vitest'
import { compareOutputs } from './compare.js'

describe('compareOutputs (GradBench’s rule)', () => {
  it('accepts numbers within |a − b| / max(1, |a| + |b|) ≤ 1e-4', () => {
    expect(compareOutputs(1000.1, 1000)).toBeNull() // 0.1 / 2000.1
    expect(compareOutputs(0.5 + 9e-5, 0.5)).toBeNull() // absolute below 1
    expect(compareOutputs(1000.3, 1000)).not.toBeNull() // 1.5e-4
    expect(compareOutputs(2e-4, 0)).not.toBeNull()
  })
  it('requires equal array lengths, equal keys and equal kinds', () => {
    expect(compareOutputs([1, 2], [1, 2])).toBeNull()
    expect(compareOutputs([1, 2, 3], [1, 2])?.reason).toMatch(/2 elements/)
    expect(compareOutputs({ a: 1, b: 2 }, { a: 1 })?.reason).toMatch(/keys/)
    expect(compareOutputs({ a: 1 }, { a: 1, b: 2 })?.reason).toMatch(/keys/)
    expect(compareOutputs([1], 1)).not.toBeNull()
    expect(compareOutputs(1, [1])).not.toBeNull()
    expect(compareOutputs({ a: [1] }, { a: [[1]] })?.path).toBe('$.a[0]')
  })
  it('compares the named integer fields exactly', () => {
    const exact = new Set(['rows'])
    expect(compareOutputs({ rows: [0, 15], vals: [1.00001] }, { rows: [0, 15], vals: [1] }, 1e-4, exact)).toBeNull()
    expect(compareOutputs({ rows: [0, 15.0001] }, { rows: [0, 15] }, 1e-4, exact)?.reason).toMatch(/integer/)
  })
})
