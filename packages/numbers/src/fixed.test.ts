import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry, InvertibilityError, parse, TenetStaticError } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { fixedPoint, fixedRound, registerNumbers } from './index.js'

const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)
const tn =
  (backend: string, checks = true) =>
  (strings: TemplateStringsArray, ...values: unknown[]): TenetModule => {
    let text = strings[0]!
    for (let i = 0; i < values.length; i++) text += '${' + i + '}' + strings[i + 1]!
    return compileModule(parse({ text, name: 'test' }, values), { registry, backend, checks })
  }

/** A deterministic generator (xorshift) so failures reproduce. */
function rng(seed: number) {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s / 2 ** 32
  }
}

const F = 40,
  I = 13
const q = (x: number) => fixedRound(x, F, I)

const program = (T: string) => `
  fn run(acc: ${T}[], a: ${T}[], b: ${T}[], ops: i32[], idx: i32[]) {
    for k in 0..len(ops) {
      if (ops[k] == 0, ~) {
        acc[idx[k]] += a[k]
      } else {
        if (ops[k] == 1, ~) {
          acc[idx[k]] -= a[k]
        } else {
          if (ops[k] == 2, ~) {
            acc[idx[k]] += a[k] * b[k]
          } else {
            if (ops[k] == 3, ~) { acc[idx[k]] -= sin(a[k]) } else { acc[idx[k]] += exp(b[k]) / 3.0 }
          }
        }
      }
    }
  }`

function operands(n: number, m: number, seed: number) {
  const r = rng(seed)
  const acc = new Float64Array(m),
    a = new Float64Array(n),
    b = new Float64Array(n)
  const ops = new Int32Array(n),
    idx = new Int32Array(n)
  for (let i = 0; i < m; i++) acc[i] = q((r() - 0.5) * 200)
  for (let k = 0; k < n; k++) {
    a[k] = q((r() - 0.5) * 20)
    b[k] = q((r() - 0.5) * 4)
    ops[k] = Math.floor(r() * 5)
    idx[k] = Math.floor(r() * m)
  }
  return { acc, a, b, ops, idx }
}

describe('fixed point', () => {
  it('documents its format: multiples of 2^-40 below 2^13, exact in a JS number', () => {
    expect(q(1 / 3) * 2 ** 40).toBe(Math.round(2 ** 40 / 3))
    expect(q(-2.5)).toBe(-2.5)
    expect(() => q(8192)).toThrow(/overflow/)
    expect(() => fixedPoint({ fractionBits: 40, integerBits: 20 })).toThrow(/I \+ F ≤ 53/)
  })

  for (const backend of ['cpu', 'interpreter']) {
    const n = backend === 'cpu' ? 1_000_000 : 100_000
    it(`${backend}: ${n} random +=/-= instructions (incl. += a*b, -= sin a, += exp(b)/3), then the inverse: bit-identical`, () => {
      const m = tn(backend)([program('fixed')] as unknown as TemplateStringsArray)
      const { acc, a, b, ops, idx } = operands(n, 64, 12345)
      const acc0 = acc.slice()
      m.run!(acc, a, b, ops, idx)
      let changed = 0
      for (let i = 0; i < acc.length; i++) if (acc[i] !== acc0[i]) changed++
      expect(changed).toBeGreaterThan(60)
      for (const x of acc) expect(q(x)).toBe(x) // still on the grid
      m.run!.inverse(acc, a, b, ops, idx)
      for (let i = 0; i < acc.length; i++) expect(Object.is(acc[i], acc0[i])).toBe(true)
    })
  }

  it('the same program on f64 leaves a rounding residue (measured and reported)', () => {
    const n = 1_000_000
    const m = tn('cpu')([program('f64')] as unknown as TemplateStringsArray)
    const { acc, a, b, ops, idx } = operands(n, 64, 12345)
    const acc0 = acc.slice()
    m.run!(acc, a, b, ops, idx)
    m.run!.inverse(acc, a, b, ops, idx)
    let maxAbs = 0,
      differ = 0
    for (let i = 0; i < acc.length; i++) {
      const d = Math.abs(acc[i]! - acc0[i]!)
      if (d !== 0) differ++
      maxAbs = Math.max(maxAbs, d)
    }
    console.log(
      `f64 residue after ${n} random +=/-= and the inverse: max |x - x0| = ${maxAbs.toExponential(3)}, ${differ}/${acc.length} values not bit-identical`,
    )
    expect(differ).toBeGreaterThan(0)
    expect(maxAbs).toBeLessThan(1e-6)
  })

  for (const backend of ['cpu', 'interpreter']) {
    it(`${backend}: overflow is an InvertibilityError, never a silent wrap`, () => {
      const m = tn(backend)`fn f(y: fixed, x: fixed) { y += x }
        fn g(y: fixed, x: fixed) { y += x * x }
        fn h(y: fixed[], x: fixed) { y[0] += x }`
      expect(m.f!(4000, 100)).toEqual([4100, 100])
      try {
        m.f!(8000, 500)
        expect.unreachable()
      } catch (e) {
        expect(InvertibilityError.isInstance(e)).toBe(true)
        expect((e as InvertibilityError).code).toBe('runtime/fixed-overflow')
      }
      expect(() => m.g!(0, 100)).toThrow(/fixed overflow/)
      expect(() => m.h!(new Float64Array([8000]), 500)).toThrow(/fixed overflow/)
      expect(() => m.f!(1e6, 0)).toThrow(/fixed overflow/) // at the host boundary too
    })

    it(`${backend}: array arguments are rounded to the grid on entry; elements the call leaves unchanged come back exactly as passed`, () => {
      const m = tn(backend)`fn f(y: fixed[], x: fixed[]) { for i in 0..len(x) { y[i] += x[i] * 3.0 } }`
      const x = new Float64Array([0.1, -1 / 3]),
        y = new Float64Array(2)
      m.f!(y, x)
      // x is only read: the program computed with its rounded values, the caller keeps its own
      expect(Array.from(x)).toEqual([0.1, -1 / 3])
      expect(Array.from(y)).toEqual([q(q(0.1) * 3), q(q(-1 / 3) * 3)])
      m.f!.inverse(y, x)
      expect(Array.from(y)).toEqual([0, 0])
      // a value is its own representation: nothing to convert back after a call
      expect(registry.numberSystem('fixed').toHost).toBeUndefined()
    })

    it(`${backend}: y += f(x) is rounded to the grid, and -= rounds the same way (exact inverse)`, () => {
      const m = tn(backend)`fn f(y: fixed, x: fixed) { y += sin(x) * exp(x) / 7.0 }`
      for (const x of [0.1, 0.7, -1.3, 2.2]) {
        const [y] = m.f!(1 / 3, x) as number[]
        expect(q(y!)).toBe(y)
        expect(y).toBeCloseTo(q(1 / 3) + (Math.sin(q(x)) * Math.exp(q(x))) / 7, 11)
        expect(m.f!.inverse(y, x)[0]).toBe(q(1 / 3))
      }
    })

    it(`${backend}: deallocation checks are exact`, () => {
      const m = tn(backend)`fn f(y: fixed, x: fixed) {
        t: fixed <- 0.0
        t += x
        y += t * t
        t -= x
        t -> 0.0
      }
      fn bad(x: fixed) { t: fixed <- 0.0; t += x; t -> 0.0 }`
      expect(m.f!(0, 3)[0]).toBe(9)
      expect(() => m.bad!(2 ** -40)).toThrow(/cannot deallocate/) // off by one grid step: caught
    })
  }

  it('rejects *= with a reason', () => {
    expect(() => tn('cpu')`fn f(y: fixed, x: fixed) { y *= x }`).toThrow(TenetStaticError)
    expect(() => tn('cpu')`fn f(y: fixed, x: fixed) { y *= x }`).toThrow(/not reversible on fixed.*ulog/)
  })
})
