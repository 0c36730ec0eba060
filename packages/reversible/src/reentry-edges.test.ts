/**
 * (Review 20b.) Re-entrant calls with checks on: JavaScript that runs while a call takes or puts
 * back its snapshots (a stack argument's `constructor` getter, read by `slice`; a typed array
 * subclass's `length` getter) may call the function again, and that call must use the next
 * frame, not the outer call's (the depth was raised only around the core's run). Also: a
 * primitive's error whose `message` cannot be written (a frozen error, a DOMException) comes out
 * as thrown; a large stack is put back element by element (a spread of it as arguments overflowed
 * the JS stack); re-entry from a primitive at depths 1–3; `f` and `f.inverse` interleaved.
 */
import { describe, expect, it } from 'vitest'
import { TenetError, createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from './index.js'

type M = Record<string, any>

function outcome(f: () => unknown): string {
  try {
    f()
    return 'ok'
  } catch (e) {
    return TenetError.isInstance(e) ? (e as TenetError).code : `${(e as Error)?.constructor?.name}`
  }
}

function compile(text: string, evaluate: (d: number) => number = (d) => d, checks = true): M {
  const registry = createRegistry()
    .registerBackend(interpreterBackend)
    .registerPrimitive({
      specificationVersion: 'v1',
      name: 'hook',
      kind: 'pure',
      arity: 1,
      evaluate,
      partials: () => [0],
    })
  return compileModule(parse({ text, name: 'reentry' }), { registry, backend: 'interpreter', checks }) as M
}

/** A stack whose `constructor` getter (read by `slice` and `splice`) runs `act`. */
function stackCalling(values: number[], act: () => void): number[] {
  const s = [...values]
  Object.defineProperty(s, 'constructor', {
    get() {
      act()
      return Array
    },
  })
  return s
}

describe('re-entry while the snapshots are taken or put back (checks on)', () => {
  it('re-entry from the stack snapshot (`slice`): the outer array is restored to its own values, not the inner call’s', () => {
    const m = compile('fn f(x: f64[], s: stack<f64>, k: i32, v: f64) {\n  x[0] += 1.0\n  push(s, v)\n  x[k] += 1.0\n}')
    expect(m.f.length).toBe(4) // the generated call
    let fired = 0
    const s = stackCalling([7], () => {
      if (fired++ === 0) m.f(Float64Array.of(100, 200), [], 0, 3)
    })
    const x = Float64Array.of(1, 2)
    expect(outcome(() => m.f(x, s, 5, 2))).toBe('runtime/out-of-bounds')
    expect([...s]).toEqual([7])
    // got [100, 200]: the inner call took its snapshot into the outer call's frame
    expect([...x]).toEqual([1, 2])
  })

  it('re-entry from the stack restore (`splice`): the array restored after the stack gets its own values back', () => {
    const m = compile('fn f(s: stack<f64>, x: f64[], k: i32, v: f64) {\n  x[0] += 1.0\n  push(s, v)\n  x[k] += 1.0\n}')
    expect(m.f.length).toBe(4)
    const s = stackCalling([7], () => {
      m.f([], Float64Array.of(100, 200), 0, 3)
    })
    const x = Float64Array.of(1, 2)
    expect(outcome(() => m.f(s, x, 5, 2))).toBe('runtime/out-of-bounds')
    expect([...s]).toEqual([7])
    // got [100, 200]
    expect([...x]).toEqual([1, 2])
  })
})

describe('re-entry while the snapshots are taken: a typed array subclass (checks on)', () => {
  it('a `length` getter (read for the snapshot) calls the function again: the earlier array is restored to its own values', () => {
    const m = compile('fn f(x: f64[], y: f64[], k: i32) {\n  x[0] += 1.0\n  y[0] += 1.0\n  x[k] += 1.0\n}')
    expect(m.f.length).toBe(3)
    class Watched extends Float64Array {
      override get length(): number {
        m.f(Float64Array.of(100, 200), new Float64Array(1), 0)
        return super.length
      }
    }
    const x = Float64Array.of(1, 2)
    const y = new Watched(1)
    expect(outcome(() => m.f(x, y, 5))).toBe('runtime/out-of-bounds')
    expect([...y]).toEqual([0])
    // got [100, 200]
    expect([...x]).toEqual([1, 2])
  })
})

describe('the restore of a large stack (checks on)', () => {
  it('a stack of 2 000 000 values is put back after a failed call (before: a RangeError from the restore’s spread, the pushed value left on it)', () => {
    const m = compile('fn p(s: stack<f64>, t: f64[], v: f64) {\n  push(s, v)\n  t[5] += 1.0\n}')
    expect(m.p.length).toBe(3)
    const s = Array.from({ length: 2_000_000 }, (_, i) => i)
    expect(outcome(() => m.p(s, new Float64Array(2), 1))).toBe('runtime/out-of-bounds')
    expect(s.length).toBe(2_000_000)
  })
})

describe('errors thrown by a primitive', () => {
  for (const checks of [true, false]) {
    it(`a frozen error and a DOMException come out as thrown, not as a TypeError of the wrapper (checks ${checks ? 'on' : 'off'})`, () => {
      let which = 0
      const frozen = Object.freeze(new Error('frozen'))
      const m = compile(
        'fn f(x: f64[], d: f64) { x[0] += hook(d) }',
        (d) => {
          if (which === 0) throw frozen
          atob('*') // a DOMException: `message` is a getter without a setter
          return d
        },
        checks,
      )
      const caught = (): unknown => {
        try {
          m.f(Float64Array.of(1), 1)
        } catch (e) {
          return e
        }
        return undefined
      }
      which = 0
      // got TypeError: Cannot assign to read only property 'message' (from the wrapper's note)
      expect(caught()).toBe(frozen)
      which = 1
      // got TypeError: Cannot set property message of … which has only a getter
      expect((caught() as Error).name).toBe('InvalidCharacterError')
    })
  }

  it('an error of a primitive in a function that writes no array comes out as thrown', () => {
    const m = compile('fn g(y: f64, d: f64) { y += hook(d) }', () => {
      atob('*')
      return 0
    })
    let name = ''
    try {
      m.g(0, 1)
    } catch (e) {
      name = (e as Error).name
    }
    expect(name).toBe('InvalidCharacterError')
  })
})

describe('re-entry from a primitive at depths 1 to 3', () => {
  const L = 3
  for (const caughtInside of [true, false]) {
    it(`each level failing or not, the failure ${caughtInside ? 'caught by the primitive' : 'propagated'}: every array restored or updated`, () => {
      let fail: boolean[] = []
      const arrays: Float64Array[] = []
      let m: M | undefined
      m = compile('fn f(x: f64[], k: i32, d: f64) {\n  x[0] += hook(d)\n  x[k] += 1.0\n}', (d) => {
        if (d <= 0) return 0
        const level = L - d + 1
        const z = Float64Array.of(10 * level + 1, 10 * level + 2)
        arrays[level] = z
        const run = () => m!.f(z, fail[level] ? 5 : 1, d - 1)
        if (caughtInside) outcome(run)
        else run()
        return 0.5
      })
      for (let mask = 0; mask < 1 << (L + 1); mask++) {
        fail = Array.from({ length: L + 1 }, (_, l) => ((mask >> l) & 1) === 1)
        const x = Float64Array.of(1, 2)
        arrays.length = 0
        arrays[0] = x
        outcome(() => m!.f(x, fail[0] ? 5 : 1, L))
        const deepest = fail.lastIndexOf(true)
        const want = arrays.map((_, l) => {
          const before = l === 0 ? [1, 2] : [10 * l + 1, 10 * l + 2]
          const failed = caughtInside ? fail[l] : l <= deepest
          return failed ? before : [before[0]! + (l < L ? 0.5 : 0), before[1]! + 1]
        })
        expect(arrays.map((a) => [...a])).toEqual(want)
      }
      const y = Float64Array.of(1, 2)
      expect(outcome(() => m.f(y, 5, 0))).toBe('runtime/out-of-bounds')
      expect([...y]).toEqual([1, 2])
    })
  }

  it('f and f.inverse interleaved, one level failing', () => {
    const log: string[] = []
    let m: M | undefined
    m = compile('fn f(x: f64[], k: i32, d: f64) {\n  x[0] += hook(d)\n  x[k] += 1.0\n}', (d) => {
      if (d <= 0) return 0
      const z = Float64Array.of(d, d)
      const g = d % 2 ? m!.f.inverse : m!.f
      log.push(`${d}:${outcome(() => g(z, d === 2 ? 7 : 1, d - 1))}:${[...z]}`)
      return 0.25
    })
    const x = Float64Array.of(1, 2)
    log.push(`${outcome(() => m!.f(x, 9, 4))}:${[...x]}`)
    expect(log).toEqual([
      '1:ok:1,0',
      '2:runtime/out-of-bounds:2,2',
      '3:ok:2.75,2',
      '4:ok:4.25,5',
      'runtime/out-of-bounds:1,2',
    ])
  })
})
