/**
 * (Review 20a.) With checks on, the snapshot of a written array is reused for any array of the
 * parameter's type and length, as the general wrapper's was: a loop over rows of one buffer or
 * over two arrays in turn does not allocate a snapshot per call (a first version of the generated
 * call keyed it on the array's identity and allocated one per call).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from './index.js'

const registry = createRegistry().registerBackend(interpreterBackend)
type M = Record<string, any>
const compile = (text: string): M =>
  compileModule(parse({ text, name: 'review20a' }, []), { registry, backend: 'interpreter', checks: true }) as M

describe('the snapshot of a written array, checks on, arrays that change from call to call', () => {
  it('two arrays of one type and length in turn: one snapshot allocated, not one per call', () => {
    let made = 0
    class Counted extends Float64Array {
      constructor(n: number) {
        super(n)
        made++
      }
    }
    const m = compile('fn f(x: f64[]) { x[0] += 1.0 }')
    const a = new Counted(1000),
      b = new Counted(1000)
    made = 0
    for (let r = 0; r < 20; r++) m.f(r % 2 ? a : b)
    expect([a[0], b[0]]).toEqual([10, 10])
    expect(made).toBeLessThanOrEqual(1)
  })

  it('one array call after call, and a failed call in between, restore each array', () => {
    const m = compile('fn g(x: f64[], k: i32) { x[0] += 1.0\n x[k] += 1.0 }')
    const a = Float64Array.of(1, 2),
      b = Float64Array.of(3, 4)
    m.g(a, 1)
    expect(() => m.g(b, 9)).toThrow(/out of bounds/)
    expect(() => m.g(a, 9)).toThrow(/out of bounds/)
    m.g(b, 0)
    expect([...a, ...b]).toEqual([2, 3, 5, 4])
  })
})
