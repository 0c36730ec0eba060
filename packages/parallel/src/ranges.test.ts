import { describe, expect, it } from 'vitest'
import { splitRange } from './ranges.js'

describe('splitRange', () => {
  it('covers the items once, in order, in whole units, within maxTasks and with at least minUnits per task', () => {
    for (const n of [0, 1, 255, 256, 257, 1300, 31843, 36455, 204472])
      for (const unit of [1, 64, 256])
        for (const minUnits of [1, 2, 5])
          for (const maxTasks of [1, 16, 128]) {
            const r = splitRange(n, { unit, minUnits, maxTasks })
            const where = `n ${n} unit ${unit} minUnits ${minUnits} maxTasks ${maxTasks}`
            expect(r.length, where).toBeLessThanOrEqual(Math.max(1, maxTasks))
            let at = 0
            for (const { i0, i1 } of r) {
              expect(i0, where).toBe(at)
              expect(i1, where).toBeGreaterThan(i0)
              at = i1
            }
            expect(at, where).toBe(n)
            // every task but the last: the same whole number of units, at least minUnits
            for (const { i0, i1 } of r.slice(0, -1)) {
              expect((i1 - i0) % unit, where).toBe(0)
              expect(i1 - i0, where).toBe(r[0]!.i1 - r[0]!.i0)
              expect(i1 - i0, where).toBeGreaterThanOrEqual(minUnits * unit)
            }
            // the fewest units per task within maxTasks (one fewer would need more tasks), unless minUnits rules
            if (r.length > 1) {
              const per = (r[0]!.i1 - r[0]!.i0) / unit
              if (per > minUnits) expect(Math.ceil(Math.ceil(n / unit) / (per - 1)), where).toBeGreaterThan(maxTasks)
            }
          }
  })

  it('the BA and GMM cuts of the bench', () => {
    // ba1: 125 chunks of 256 observations, two chunks a task; ba2 and ba3 as they were
    expect(splitRange(31843, { unit: 256, minUnits: 2 }).length).toBe(63)
    expect(splitRange(36455, { unit: 256, minUnits: 2 }).length).toBe(72)
    expect(splitRange(182072, { unit: 256, minUnits: 2 })[0]).toEqual({ i0: 0, i1: 1536 })
    // GMM: 40 tasks of whole 64-point blocks
    expect(splitRange(10000, { unit: 64, maxTasks: 40 }).map((r) => r.i1 - r.i0)).toEqual([...Array(39).fill(256), 16])
  })

  it('with a taper, cuts the last tasks finer: shrinking to one unit, within a few tasks of maxTasks; taper 0 is no taper', () => {
    for (const n of [1, 255, 1300, 10000, 31843, 204472])
      for (const unit of [1, 64, 256])
        for (const minUnits of [1, 2])
          for (const maxTasks of [1, 16, 40, 128])
            for (const taper of [1, 2, 3]) {
              const opts = { unit, minUnits, maxTasks }
              const where = `n ${n} unit ${unit} minUnits ${minUnits} maxTasks ${maxTasks} taper ${taper}`
              const plain = splitRange(n, opts)
              const r = splitRange(n, { ...opts, taper })
              expect(splitRange(n, { ...opts, taper: 0 }), where).toEqual(plain)
              let at = 0
              for (const { i0, i1 } of r) {
                expect(i0, where).toBe(at)
                expect(i1, where).toBeGreaterThan(i0)
                at = i1
              }
              expect(at, where).toBe(n)
              // whole units, never growing, never larger than the bulk task
              const sizes = r.map(({ i0, i1 }) => Math.ceil((i1 - i0) / unit))
              const per = Math.ceil((plain[0]!.i1 - plain[0]!.i0) / unit)
              for (const { i0, i1 } of r.slice(0, -1)) expect((i1 - i0) % unit, where).toBe(0)
              for (let t = 1; t < sizes.length; t++) expect(sizes[t]!, where).toBeLessThanOrEqual(sizes[t - 1]!)
              expect(sizes[0]!, where).toBeLessThanOrEqual(per)
              // the bulk is as without a taper; the tapered tail is less than (taper + 1) bulk tasks
              const bulk = sizes.filter((z) => z === per).length
              const tail = sizes.slice(bulk).reduce((a, b) => a + b, 0)
              if (Math.ceil(n / unit) >= (taper + 1) * per) expect(tail, where).toBeLessThan((taper + 1) * per)
              if (sizes.length > 1) expect(sizes.at(-1), where).toBe(1)
              expect(r.length, where).toBeLessThanOrEqual(maxTasks + (taper + 1) * Math.ceil(Math.log2(2 * per)) + 1)
            }
    // the GMM cut of the bench with a taper of 1: 38 tasks of 4 blocks, then 3, 1 and 1 (the last 16 points)
    expect(splitRange(10000, { unit: 64, maxTasks: 40, taper: 1 }).map((r) => r.i1 - r.i0)).toEqual([
      ...Array(38).fill(256),
      192,
      64,
      16,
    ])
  })

  it('refuses bad counts and options', () => {
    expect(() => splitRange(-1)).toThrow(/non-negative integer/)
    expect(() => splitRange(10, { unit: 0 })).toThrow(/`unit` must be a positive integer/)
    expect(() => splitRange(10, { minUnits: 1.5 })).toThrow(/`minUnits`/)
    expect(() => splitRange(10, { maxTasks: 0 })).toThrow(/`maxTasks`/)
    expect(() => splitRange(10, { taper: -1 })).toThrow(/`taper` must be a non-negative integer/)
    expect(() => splitRange(10, { taper: 0.5 })).toThrow(/`taper`/)
  })
})
