/**
 * Front-end defects of issue 19 on every backend: a 3,000-term chain compiles, runs and
 * differentiates (interpreter, cpu, wasm), run-time messages name the user's variables and real
 * values, a function may be called `__proto__`, and `.source` keeps the sign of −0.0.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, NESTING_LIMITS, parse, TenetError, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { registerNumbers } from '@tenet/numbers'
import { grad } from './index.js'

const BACKENDS = ['interpreter', 'cpu', 'wasm'] as const
const registry = (): Registry =>
  registerNumbers(createRegistry())
    .registerBackend(cpuBackend)
    .registerBackend(wasmBackend)
    .registerBackend(interpreterBackend)
const compile = (text: string, backend: string): TenetModule =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend })

/** The Tenet error `f` throws (fails the test for no error or for a raw JS error). */
function thrown(f: () => unknown): TenetError {
  try {
    f()
  } catch (e) {
    if (!TenetError.isInstance(e)) throw e
    return e
  }
  throw new Error('expected a Tenet error, but none was thrown')
}

describe('a 3,000-term chain', () => {
  // y += x[0] ± x[1] ± x[2] ± …, the signs and indices from a fixed pattern
  const n = 3000
  const terms = Array.from({ length: n }, (_, k) => ({ sign: k === 0 || k % 3 !== 2 ? 1 : -1, index: (k * 5) % 7 }))
  const text = `fn f(y: f64, x: f64[]) {\n  y += x[0]${terms
    .slice(1)
    .map((t) => ` ${t.sign > 0 ? '+' : '-'} x[${t.index}]`)
    .join('')}\n}`
  const x = Float64Array.from([0.5, -1.25, 2.125, 3.5, -0.75, 1e-3, 7.25])
  // the value, summed left to right as the tree says, and the gradient by counting signs
  let value = 0
  const expected = new Float64Array(7)
  terms.forEach((t, k) => {
    value = k === 0 ? x[t.index]! : value + t.sign * x[t.index]!
    expected[t.index]! += t.sign
  })

  for (const backend of BACKENDS) {
    it(`compiles, runs bit-exactly and differentiates on ${backend}`, () => {
      const m = compile(text, backend)
      const [y] = m.f!(0.25, x.slice()) as [number]
      expect(y).toBe(0.25 + value)
      const g = grad(m.f!, { loss: 0 })(0, x.slice())
      expect(Array.from(g[1] as Float64Array)).toEqual(Array.from(expected))
    })
  }
})

describe('a chain at the tree limit', () => {
  // the tree of x[0] + x[1] + … of n terms is n + 1 levels deep (n − 1 sums, the element, its index)
  it(`compiles, runs and differentiates ${NESTING_LIMITS.tree - 1} terms on cpu`, () => {
    const n = NESTING_LIMITS.tree - 1
    const m = compile(
      `fn f(y: f64, x: f64[]) {\n  y += x[0]${Array.from({ length: n - 1 }, (_, i) => ` + x[${(i + 1) % 7}]`).join('')}\n}`,
      'cpu',
    )
    const x = Float64Array.from([1, 2, 3, 4, 5, 6, 7])
    let sum = x[0]!
    const counts = [1, 0, 0, 0, 0, 0, 0]
    for (let i = 1; i < n; i++) {
      sum += x[i % 7]!
      counts[i % 7]!++
    }
    expect(m.f!(0, x)[0]).toBe(sum)
    expect(Array.from(grad(m.f!, { loss: 0 })(0, x)[1] as Float64Array)).toEqual(counts)
  })
})

describe('a long chain in a complex module', () => {
  it('lowers, compiles and runs 3,000 terms around a complex parameter', () => {
    const sum = (first: string) => `${first}${Array.from({ length: 2999 }, (_, i) => ` + x[${(i + 1) % 7}]`).join('')}`
    const m = compile(
      `fn f(z: complex, y: f64, x: f64[]) {\n  z.re += ${sum('x[0]')}\n  z += complex(${sum('x[1]')}, y)\n}`,
      'cpu',
    )
    const x = Float64Array.from([1, 2, 3, 4, 5, 6, 7])
    let s0 = x[0]!,
      s1 = x[1]!
    for (let i = 1; i < 3000; i++) {
      s0 += x[i % 7]!
      s1 += x[i % 7]!
    }
    const [z] = m.f!({ re: 0.5, im: 0.25 }, 2, x) as [{ re: number; im: number }]
    expect(z).toEqual({ re: 0.5 + s0 + s1, im: 2.25 })
  })
})

describe('nesting at the limits', () => {
  // blocks and parentheses just inside NESTING_LIMITS (500): every pass and backend copes
  const n = NESTING_LIMITS.block - 1
  const text = `fn f(y: f64, x: f64) {\n${'if (x > 0.0, ~) {\n'.repeat(n - 1)}y += ${'('.repeat(n - 2)}x * x${')'.repeat(n - 2)}\n${'}\n'.repeat(n - 1)}}`
  for (const backend of BACKENDS) {
    it(`runs, inverts and differentiates ${n} nested blocks on ${backend}`, () => {
      const m = compile(text, backend)
      expect(m.f!(0, 1.5)).toEqual([2.25, 1.5])
      expect(m.f!.inverse(2.25, 1.5)).toEqual([0, 1.5])
      expect(grad(m.f!, { loss: 0 })(0, 1.5)[1]).toBe(3)
    })
  }
})

describe('run-time messages', () => {
  const recursive =
    'fn count(y: f64, n: i32) {\n  if (n > 0, n > 0) {\n    y += 1.0\n    m <- n - 1\n    count(y, m)\n    m -> n - 1\n  }\n}'
  for (const backend of BACKENDS) {
    it(`reports recursion too deep for the stack as a Tenet error naming the function on ${backend}`, () => {
      const m = compile(recursive, backend)
      expect(m.count!(0, 100)).toEqual([100, 100])
      const e = thrown(() => m.count!(0, 100000))
      expect(e.code).toBe('runtime/stack-overflow')
      expect(e.message).toMatch(/^`count`: the recursion is too deep/)
    })
  }

  // g is small enough to be inlined by cpu and wasm: the message must still say `t`
  const inlined = 'fn g(y: f64) {\n  t <- 0.0\n  t += y\n  t -> 0.0\n}\nfn f(y: f64) { g(y) }'
  for (const backend of BACKENDS) {
    it(`names the user's variable, not the inliner's, on ${backend}`, () => {
      const e = thrown(() => compile(inlined, backend).f!(2))
      expect(e.code).toBe('runtime/dealloc')
      expect(e.detail).toBe('cannot deallocate `t`: it holds 2, but `t -> 0.0` expects 0')
      expect([e.line, e.column]).toEqual([4, 3])
    })
  }

  for (const backend of ['interpreter', 'cpu']) {
    it(`shows the real values of a ulog ancilla, not its encoding, on ${backend}`, () => {
      const m = compile('fn f(y: ulog, x: ulog) {\n  t: ulog <- 1.0\n  t *= x\n  t -> 1.0\n  y *= x\n}', backend)
      const e = thrown(() => m.f!(1, 4))
      expect(e.code).toBe('runtime/dealloc')
      const [, holds, expects] = /it holds (\S+), but `t -> 1.0` expects (\S+)$/.exec(e.detail)!
      expect(Number(holds)).toBeCloseTo(4, 9)
      expect(Number(expects)).toBe(1)
    })
  }
})

describe('names and printing', () => {
  for (const backend of BACKENDS) {
    it(`keeps a function named __proto__ as an own property on ${backend}`, () => {
      const m = compile('fn __proto__(y: f64) { y += 1.0 }\nfn constructor(y: f64) { y += 2.0 }', backend)
      expect(Object.getPrototypeOf(m)).toBe(Object.prototype)
      expect(Object.keys(m)).toEqual(['__proto__', 'constructor'])
      expect(Object.getOwnPropertyDescriptor(m, '__proto__')!.value(1)).toEqual([2])
      expect(m.constructor!(1)).toEqual([3])
    })

    it(`recompiles .source to the same results, −0.0 included, on ${backend}`, () => {
      const m = compile('fn f(y: f64) { y += -0.0 }', backend)
      const again = compile(m.f!.source, backend)
      for (const f of [m.f!, again.f!]) expect(Object.is(f(-0)[0], -0)).toBe(true)
    })
  }

  it('does not count Object.prototype members as fields of a ulog value', () => {
    for (const field of ['constructor', 'toString', '__proto__']) {
      const e = thrown(() => compile(`fn f(y: f64, z: ulog) { y += z.${field} }`, 'cpu'))
      expect(e.code).toBe('static/unknown-field')
    }
  })
})
