import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry, parse, TenetStaticError } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { registerNumbers } from './index.js'

const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)
const compile = (backend: string, text: string): TenetModule =>
  compileModule(parse({ text, name: 'test' }, []), { registry, backend })

interface C {
  re: number
  im: number
}
const cmul = (a: C, b: C): C => ({ re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re })
const cdiv = (a: C, b: C): C => {
  const d = b.re * b.re + b.im * b.im
  return { re: (a.re * b.re + a.im * b.im) / d, im: (a.im * b.re - a.re * b.im) / d }
}
const cexp = (a: C): C => ({ re: Math.exp(a.re) * Math.cos(a.im), im: Math.exp(a.re) * Math.sin(a.im) })
const close = (a: unknown, b: C, digits = 12) => {
  expect((a as C).re).toBeCloseTo(b.re, digits)
  expect((a as C).im).toBeCloseTo(b.im, digits)
}

const source = `
  // the papers' complex log (seed 001, Listing 5/6), written with complex arguments
  fn complex_log(y: complex, x: complex) {
    routine {
      n <- 0.0
      n += abs(x)
    }
    y.re += log(n)
    y.im += angle(x)
    ~routine
  }
  fn arith(y: complex, a: complex, b: complex, s: f64) {
    y += a * b - conj(a) / b + s * a + exp(a) - 2.0
  }
  fn clog2(y: complex, x: complex) { y += log(x) }
  fn lit(y: complex) { y += complex(1.5, -2.0) }
  fn call2(y: complex, x: complex) {
    t: complex <- complex(0.0, 0.0)
    clog2(t, x)
    y += t * t
    ~clog2(t, x)
    t -> complex(0.0, 0.0)
  }
  fn parts(r: f64, i: f64, m: f64, x: complex) { r += x.re; i += x.im; m += abs2(x) }
  fn scale(z: complex[], a: complex) {
    for k in 0..len(z) { z[k].im += a.re * z[k].re; z[k] += a }
  }
  fn swap(a: complex, b: complex) { SWAP(a, b); NEG(b) }
`

for (const backend of ['cpu', 'interpreter']) {
  describe(`complex (${backend})`, () => {
    const m = compile(backend, source)
    it('complex log against Math.log / Math.atan2, and back', () => {
      for (const x of [
        { re: 1, im: 2 },
        { re: -3, im: 0.5 },
        { re: 0.1, im: -4 },
        { re: -2, im: -1e-3 },
      ]) {
        const [y, xx] = m.complex_log!({ re: 0.5, im: -0.25 }, x)
        close(y, { re: 0.5 + Math.log(Math.hypot(x.re, x.im)), im: -0.25 + Math.atan2(x.im, x.re) }, 14)
        expect(xx).toEqual(x)
        close(m.complex_log!.inverse(y, xx)[0], { re: 0.5, im: -0.25 }, 14)
        close(
          m.clog2!({ re: 0, im: 0 }, x)[0],
          { re: Math.log(Math.hypot(x.re, x.im)), im: Math.atan2(x.im, x.re) },
          14,
        )
      }
    })
    it('+ − * / conj exp with real operands', () => {
      const a = { re: 0.3, im: -1.2 },
        b = { re: 2, im: 0.7 },
        s = 1.25
      const conj = { re: a.re, im: -a.im }
      const ab = cmul(a, b),
        q = cdiv(conj, b),
        e = cexp(a)
      const want = { re: 1 + ab.re - q.re + s * a.re + e.re - 2, im: -1 + ab.im - q.im + s * a.im + e.im }
      const [y] = m.arith!({ re: 1, im: -1 }, a, b, s)
      close(y, want, 13)
      close(m.arith!.inverse(y, a, b, s)[0], { re: 1, im: -1 }, 13)
      expect(m.lit!(0)[0]).toEqual({ re: 1.5, im: -2 }) // a number is a real complex
    })
    it('calls with complex arguments, complex ancillas, ~call', () => {
      const x = { re: 2, im: 1 }
      const l = { re: Math.log(Math.hypot(2, 1)), im: Math.atan2(1, 2) }
      close(m.call2!({ re: 0, im: 0 }, x)[0], cmul(l, l), 13)
    })
    it('fields, abs2, arrays as interleaved Float64Array, SWAP/NEG', () => {
      expect(m.parts!(0, 0, 0, { re: 3, im: 4 }).slice(0, 3)).toEqual([3, 4, 25])
      const z = new Float64Array([1, 2, 3, 4]) // z[0] = 1+2i, z[1] = 3+4i
      m.scale!(z, { re: 0.5, im: 1 })
      expect([...z]).toEqual([1.5, 3.5, 3.5, 6.5])
      m.scale!.inverse(z, { re: 0.5, im: 1 })
      expect([...z]).toEqual([1, 2, 3, 4])
      expect(m.swap!({ re: 1, im: 2 }, { re: 3, im: 4 })).toEqual([
        { re: 3, im: 4 },
        { re: -1, im: -2 },
      ])
    })
    it('lowers to f64 IR: names with $ that cannot collide with user names', () => {
      expect(m.complex_log!.ir.params.map((p) => p.name)).toEqual(['y$re', 'y$im', 'x$re', 'x$im'])
      expect(m.complex_log!.source).toContain('y: complex')
    })
  })
}

describe('complex static errors and host checks', () => {
  it('rejects non-reversible updates and real targets', () => {
    expect(() => compile('cpu', 'fn f(y: complex, x: complex) { y *= x }')).toThrow(
      /not a reversible update of complex/,
    )
    expect(() => compile('cpu', 'fn f(y: f64, x: complex) { y += x }')).toThrow(TenetStaticError)
    expect(() => compile('cpu', 'fn f(y: complex, x: complex) { y += atan(x) }')).toThrow(
      /`atan` is not defined on complex/,
    )
    expect(() => compile('cpu', 'fn f(y: complex) { y += y * 2.0 }')).toThrow(/own right-hand side/)
    expect(() => compile('cpu', 'fn f(z: complex[]) { z[0] += z[0].re }')).toThrow(/own right-hand side/)
  })
  it('INC and DEC add ±1 to the real part only (issue 20), and undo each other', () => {
    for (const backend of ['cpu', 'interpreter']) {
      const m = compile(backend, 'fn f(z: complex) { INC(z) }\nfn g(z: complex) { DEC(z); DEC(z) }')
      expect(m.f!({ re: 2, im: 1 })[0]).toEqual({ re: 3, im: 1 })
      expect(m.f!.inverse({ re: 3, im: 1 })[0]).toEqual({ re: 2, im: 1 })
      expect(m.g!({ re: 2, im: 1 })[0]).toEqual({ re: 0, im: 1 })
    }
  })
  it('a stack of complex holds both parts; moving a real value onto it is a static error at the statement', () => {
    // (stacks of complex used to be rejected: the fuzzer found that error without a location)
    const m = compile('cpu', 'fn f(y: f64,\n  s: stack<complex>, z: complex) { push(s, z) }')
    expect(m.f!(1, [], { re: 2, im: 3 })).toEqual([1, [{ re: 2, im: 3 }], { re: 0, im: 0 }])
    expect(compile('cpu', 'fn f(y: f64) {\n  s: stack<complex> <- []\n  s -> []\n}').f!(1)).toEqual([1])
    try {
      compile('cpu', 'fn f(y: f64) {\n  s: stack<complex> <- []\n  push(s, y)\n  s -> []\n}')
      throw new Error('compiled')
    } catch (e) {
      expect(e).toBeInstanceOf(TenetStaticError)
      expect((e as TenetStaticError).message).toMatch(/is a stack of complex, but a real value is moved/)
      expect((e as TenetStaticError).line).toBe(3)
    }
  })
  it('checks host values', () => {
    const m = compile('cpu', 'fn f(y: complex, x: complex) { y += x }')
    expect(() => m.f!({ re: 1 }, { re: 1, im: 1 })).toThrow(/must be \{ re: number, im: number \}/)
    expect(m.f!(1, 2)).toEqual([
      { re: 3, im: 0 },
      { re: 2, im: 0 },
    ])
  })
})
