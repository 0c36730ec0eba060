/**
 * A checked call given arrays that live in the wasm memory (resident arrays, `core.resident`)
 * whose array ancilla grows the memory and then fails a check: the growth detaches every view of
 * the memory, the caller's arrays included, and the wrapper must still raise the check's error
 * and put the arrays back (through the memory's current buffer, not the detached views).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { createWasmBackend } from './index.js'

/** (A backend of its own per module: a memory of its own, that the first big ancilla grows.) */
const compile = (text: string, checks = true): TenetModule =>
  compileModule(parse({ text, name: 'resident-restore' }), {
    registry: createRegistry().registerBackend(createWasmBackend()).registerBackend(interpreterBackend),
    backend: 'wasm',
    checks,
  })

// y is written before the ancilla of n doubles is taken; the ancilla's deallocation check fails
// when bad is not 0 (t[0] still holds it)
const text = `fn f(y: f64[], x: f64[], n: i32, bad: f64) {
  for i in 0..len(x) { y[i] += x[i] * 2.0 }
  t: f64[] <- zeros(n)
  t[0] += bad
  y[0] += t[0]
  t -> zeros(n)
}`
/** Doubles enough to grow the memory of any earlier test (2²² doubles, 32 MiB). */
const BIG = 1 << 22

describe('resident arrays after a failed call that grew the memory', () => {
  it('raises the check’s error and restores a resident array, with and without growth', () => {
    const f = compile(text).f!
    const mem = f.core.resident!
    const y = mem.allocate('f64', 3),
      x = mem.allocate('f64', 3)
    x.array.set([1, 2, 3])
    y.array.set([5, 5, 5])
    expect(raisedError(() => f(y.array, x.array, 4, 1))).toMatch(/^runtime\/dealloc/)
    expect(Array.from(y.array)).toEqual([5, 5, 5])
    const before = y.array
    const err = raisedError(() => f(y.array, x.array, BIG, 1))
    expect(err).toMatch(/^runtime\/dealloc/)
    expect(err).toContain('restored')
    // the memory grew (the view passed is detached), and y has its values before the call
    expect(before.length).toBe(0)
    expect(Array.from(y.array)).toEqual([5, 5, 5])
    expect(Array.from(x.array)).toEqual([1, 2, 3])
    // the same arrays, views taken again, in calls that pass and that grow the memory again
    f(y.array, x.array, 4, 0)
    expect(Array.from(y.array)).toEqual([7, 9, 11])
    f(y.array, x.array, 2 * BIG, 0)
    expect(Array.from(y.array)).toEqual([9, 13, 17])
    expect(raisedError(() => f(y.array, x.array, 4 * BIG, 2))).toMatch(/^runtime\/dealloc/)
    expect(Array.from(y.array)).toEqual([9, 13, 17])
  })

  it('restores a view into the middle of a resident array, and leaves its neighbours alone', () => {
    const f = compile(text).f!
    const mem = f.core.resident!
    const y = mem.allocate('f64', 7),
      x = mem.allocate('f64', 3)
    x.array.set([1, 2, 3])
    y.array.set([1, 2, 3, 4, 5, 6, 7])
    const before = y.array
    expect(raisedError(() => f(y.array.subarray(2, 5), x.array, BIG, 1))).toMatch(/^runtime\/dealloc/)
    expect(before.length).toBe(0)
    expect(Array.from(y.array)).toEqual([1, 2, 3, 4, 5, 6, 7])
    f(y.array.subarray(2, 5), x.array, BIG, 0)
    expect(Array.from(y.array)).toEqual([1, 2, 5, 8, 11, 6, 7])
  })

  it('restores host arrays (not resident) and mixed arguments after a growth', () => {
    const f = compile(text).f!
    const mem = f.core.resident!
    const x = mem.allocate('f64', 3)
    x.array.set([1, 2, 3])
    const y = Float64Array.of(5, 5, 5)
    const before = x.array
    expect(raisedError(() => f(y, x.array, BIG, 1))).toMatch(/^runtime\/dealloc/)
    expect(before.length).toBe(0)
    expect(Array.from(y)).toEqual([5, 5, 5])
    const r = mem.allocate('f64', 3)
    r.array.set([4, 4, 4])
    expect(raisedError(() => f(r.array, Float64Array.of(1, 1, 1), 2 * BIG, 1))).toMatch(/^runtime\/dealloc/)
    expect(Array.from(r.array)).toEqual([4, 4, 4])
    const [out] = f(y, Float64Array.of(1, 1, 1), BIG, 0) as [Float64Array]
    expect(out).toBe(y)
    expect(Array.from(y)).toEqual([7, 7, 7])
  })

  it('checks off: the call that grew the memory keeps its writes, and a failure is the access error', () => {
    const f = compile(text, false).f!
    const mem = f.core.resident!
    const y = mem.allocate('f64', 3),
      x = mem.allocate('f64', 3)
    x.array.set([1, 2, 3])
    y.array.set([5, 5, 5])
    // no deallocation check: the call passes, and its writes are in y
    const before = y.array
    expect(raisedError(() => f(y.array, x.array, BIG, 1))).toBe('no error')
    expect(before.length).toBe(0)
    expect(Array.from(y.array)).toEqual([8, 9, 11])
    // an out-of-range write after the growth (n = 0: t[0] is out of range) is raised as such
    const err = raisedError(() => f(y.array, x.array, 0, 1))
    expect(err).toMatch(/^runtime\/out-of-bounds/)
    expect(err).toContain('partially updated')
  })
})
