/**
 * Issue 20, "Syntax and typing that reject reasonable programs": the forms a NiLang user writes,
 * on the interpreter, cpu and wasm backends (stacks, fixed and ulog do not run on wasm: those
 * cases run on the other two), with their inverses and their gradients against central finite
 * differences (`checkGrad`) or closed forms.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, TenetError, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { fixedRound, registerNumbers } from '@tenet/numbers'
import { checkGrad, grad, hessian } from './index.js'

const ALL = ['interpreter', 'cpu', 'wasm'] as const
/** Backends with stacks and the number systems fixed and ulog (wasm has neither). */
const JS = ['interpreter', 'cpu'] as const
const registry = (): Registry =>
  registerNumbers(createRegistry())
    .registerBackend(cpuBackend)
    .registerBackend(wasmBackend)
    .registerBackend(interpreterBackend)
const compile = (text: string, backend: string, checks = true): TenetModule =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend, checks })
const f64s = (...x: number[]) => Float64Array.from(x)

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

/** The gradient agrees with central finite differences. */
function gradOk(m: TenetModule, name: string, args: unknown[], loss = 0): void {
  const r = checkGrad(m[name]!, args, { loss, atol: 1e-7, rtol: 1e-6 })
  expect(r.ok, JSON.stringify(r.worst)).toBe(true)
}

describe('a `}` that closes a block ends its statement', () => {
  const src = `fn f(out: f64, x: f64, y: f64, k: i32) {
  routine { out += x } ~routine
  routine { t <- 0.0; t += x * x } out += t; ~routine
  for i in 0..k { y += x } if (y > 3, ~) { y -= 1.0 }
}`
  for (const b of ALL) {
    it(`routine { … } ~routine and for { … } if (…) { … } on one line (${b})`, () => {
      const m = compile(src, b)
      expect(m.f!(0, 1.5, 0, 3)).toEqual([2.25, 1.5, 3.5, 3])
      expect(m.f!(0, 0.5, 0, 3)).toEqual([0.25, 0.5, 1.5, 3])
      expect(m.f!.inverse(2.25, 1.5, 3.5, 3)).toEqual([0, 1.5, 0, 3])
      gradOk(m, 'f', [0, 1.5, 0.25, 3], 2)
    })
  }
  it('two statements on one line without `;` are still a syntax error', () => {
    expect(thrown(() => compile('fn f(y: f64, z: f64, x: f64) { y += x z += x }', 'cpu')).code).toBe('syntax')
  })
})

describe('integer literals take their type from use', () => {
  const src = `fn f(y: f64, x: f64[], n: i32) {
  k <- 0
  k += n
  y += x[k] * x[k]
  k -= n
  k -> 0
}
fn late(y: f64, x: f64[], n: i32) {
  k <- 0
  y += k * x[0]
  k += n
  y += x[k]
  k -= n
  k -> 0
}
fn undecided(y: f64, x: f64) {
  c <- 2
  y += c * x
  c -> 2
}
fn pair(y: f64, x: f64[]) {
  m, n <- 1, 2
  y += x[m] * x[n]
  m, n -> 1, 2
}`
  for (const b of ALL) {
    it(`k <- 0 then k += n (n: i32) or x[k] makes k an i32; else f64 (${b})`, () => {
      const m = compile(src, b)
      const types = (name: string) =>
        m[name]!.ir.body.filter((s) => s.kind === 'alloc').map((s) => (s as { type?: { name: string } }).type?.name)
      expect(types('f')).toEqual(['i32'])
      expect(types('late')).toEqual(['i32'])
      expect(types('undecided')).toEqual(['f64'])
      expect(types('pair')).toEqual(['i32', 'i32'])
      const x = f64s(0.5, -1.25, 3)
      expect(m.f!(1, x, 2)).toEqual([10, x, 2])
      // y += 0 · x[0] (k is 0 there, promoted to f64), then y += x[2]
      expect(m.late!(1, x, 2)).toEqual([4, x, 2])
      expect(m.undecided!(1, 0.25)).toEqual([1.5, 0.25])
      expect(m.pair!(0, x)).toEqual([-3.75, x])
      expect(m.f!.inverse(10, x, 2)).toEqual([1, x, 2])
      gradOk(m, 'f', [1, x, 2])
      gradOk(m, 'pair', [0, x])
    })
  }
})

describe('integer literals in NiLang programs', () => {
  // NiLang's Fibonacci (the paper's Listing 11) with an undeclared counter, and the other ways a
  // use decides: an i32 argument the callee writes, an i32 stack, a comparison with an i32
  const src = `fn rrfib(out: i32, n: i32) {
  if (n >= 1, ~) {
    counter <- 0
    counter += n
    while (counter > 1, counter != n) {
      rrfib(out, counter - 1)
      counter -= 2
    }
    counter -= n % 2
    counter -> 0
  }
  out += 1
}
fn bump(k: i32) { k += 1 }
fn uses(y: f64, x: f64[], n: i32) {
  a <- 0
  bump(a)
  y += x[a]
  bump(a)
  b <- 0
  b += 3
  if (b > n, ~) { y += 1.0 }
  b -= 3
  b -> 0
  ~bump(a)
  ~bump(a)
  a -> 0
}`
  for (const b of ALL) {
    it(`counter <- 0 is an i32 where the program needs one (${b})`, () => {
      const m = compile(src, b)
      expect(m.rrfib!(0, 20)).toEqual([10946, 20])
      expect(m.rrfib!.inverse(10946, 20)).toEqual([0, 20])
      const allocs = m
        .uses!.ir.body.filter((s) => s.kind === 'alloc')
        .map((s) => (s as { type?: { name: string } }).type?.name)
      expect(allocs).toEqual(['i32', 'i32'])
      expect(m.uses!(0, f64s(5, 7), 2)).toEqual([8, f64s(5, 7), 2])
    })
  }
})

describe('exact promotions: i32 → f64 where a float is needed', () => {
  const src = `fn f(s: f64, x: f64[], i: i32) {
  s += x[0] / len(x)
  s += x[1] * i
  s += sin(i) + i
  if (s > i, ~) { s += 1.0 }
  t: f64 <- i
  g(s, t, i)
  t -> i
}
fn g(s: f64, t: f64, w: f64) { s += t * w }`
  for (const b of ALL) {
    it(`s / len(x), x * i, sin(i), comparisons, declared ancillas and arguments (${b})`, () => {
      const m = compile(src, b)
      const x = f64s(1.5, -0.5, 2)
      let s = 0.25 + 1.5 / 3
      s += -0.5 * 3
      s += Math.sin(3) + 3
      if (s > 3) s += 1
      s += 9
      const [r] = m.f!(0.25, x, 3) as [number]
      expect(r).toBeCloseTo(s, 14)
      gradOk(m, 'f', [0.25, x, 3])
    })
  }
  it('i32 bases and f32 operands are promoted too', () => {
    for (const b of ALL) {
      const m = compile('fn f(y: f64, x: f64, i: i32, h: f32) {\n  y += i ** x + h * x\n}', b)
      expect(m.f!(0, 0.5, 4, 0.25)).toEqual([2 + 0.125, 0.5, 4, 0.25])
    }
  })
  it('lossy conversions stay explicit: f64 → i32 and i32 → f32 are errors', () => {
    expect(thrown(() => compile('fn f(i: i32, y: f64) { i += y }', 'cpu')).code).toBe('static/type-mismatch')
    expect(thrown(() => compile('fn f(y: f32, x: f32, i: i32) { y += x * i }', 'cpu')).code).toBe(
      'static/type-mismatch',
    )
    expect(thrown(() => compile('fn f(x: f64[], y: f64) { y += x[1.0] }', 'cpu')).code).toBe('static/type')
  })
})

describe('a number-system target converts its right-hand side', () => {
  for (const b of JS) {
    it(`acc += sin(x) * 3.0 with acc: fixed, s *= lx / k with s, lx: ulog, k: i32 (${b})`, () => {
      const m = compile(
        `fn f(acc: fixed, x: f64) { acc += sin(x) * 3.0 }
fn g(s: ulog, lx: ulog, k: i32) { s *= lx / k }
fn there(s: ulog, lx: ulog, k: i32) { g(s, lx, k); s *= 2.0; ~g(s, lx, k) }
fn twice(s: ulog) { s *= 2.0 }`,
        b,
      )
      const r = m.f!(0.125, 0.7) as [number, number]
      // the value added is the right-hand side rounded into fixed (40 fraction bits)
      expect(r[0]).toBe(0.125 + fixedRound(Math.sin(0.7) * 3, 40, 13))
      expect(m.f!.inverse(...r)).toEqual([0.125, 0.7])
      const [s] = m.g!(2, 3, 4) as [number]
      expect(s).toBeCloseTo(1.5, 10)
      // exact inside a program (at the host boundary values are decoded and encoded again)
      expect(m.there!(2, 3, 4)[0]).toBe(m.twice!(2)[0])
      // the gradient through the conversion is the real derivative
      const d = grad(m.f!, { loss: 0 })(0.125, 0.7) as number[]
      expect(d[1]).toBeCloseTo(3 * Math.cos(0.7), 9)
      const r2 = checkGrad(m.g!, [2, 3, 4], { loss: 0, step: 1e-4, rtol: 1e-5 })
      expect(r2.ok, JSON.stringify(r2.worst)).toBe(true)
    })
  }
  // every hint a type error gives works when followed
  const hints: Array<[string, string, RegExp]> = [
    ['fn f(i: i32, y: f64) { i += y }', 'fn f(i: i32, y: f64) { i += i32(y) }', /`i32\(\.\.\.\)`/],
    ['fn f(y: f32, x: f64) { y += x }', 'fn f(y: f32, x: f64) { y += f32(x) }', /`f32\(\.\.\.\)`/],
    ['fn f(y: f64, x: fixed) { y += x }', 'fn f(y: f64, x: fixed) { y += f64(x) }', /`f64\(\.\.\.\)`/],
    [
      'fn f(y: f64, x: f32, n: i32) { y += x * n }',
      'fn f(y: f64, x: f32, n: i32) { y += x * f32(n) }',
      /`f32\(\.\.\.\)`/,
    ],
    [
      'fn f(y: f32, x: f64, n: i32) { y += f32(x) * n }',
      'fn f(y: f32, x: f64, n: i32) { y += f32(x) * f32(n) }',
      /`f32\(\.\.\.\)`/,
    ],
    [
      'fn f(y: fixed, x: ulog, n: fixed) { y += n * x }',
      'fn f(y: fixed, x: ulog, n: fixed) { y += n * convert(x) }',
      /`convert\(\.\.\.\)`/,
    ],
    ['fn f(y: f64, u: ulog) { y += sin(u) }', 'fn f(y: f64, u: ulog) { y += sin(f64(u)) }', /`f64\(\.\.\.\)`/],
    [
      'fn f(y: i32, x: f64[]) { y += i32(x[0]) * x[1] }',
      'fn f(y: i32, x: f64[]) { y += i32(x[0]) * i32(x[1]) }',
      /`i32\(\.\.\.\)`/,
    ],
    ['fn f(y: i32, x: f64) { y += div(x, 2) }', 'fn f(y: i32, x: f64) { y += div(i32(x), 2) }', /`i32\(\.\.\.\)`/],
    [
      'fn f(y: f64, x: f64) { for i in 0..x { y += 1.0 } }',
      'fn f(y: f64, x: f64) { for i in 0..i32(x) { y += 1.0 } }',
      /`i32\(\.\.\.\)`/,
    ],
    [
      'fn f(y: f64, x: f64[], z: f64) { y += x[z] }',
      'fn f(y: f64, x: f64[], z: f64) { y += x[i32(z)] }',
      /`i32\(\.\.\.\)`/,
    ],
  ]
  for (const [bad, good, hint] of hints) {
    it(`the hint for \`${bad}\` works`, () => {
      const e = thrown(() => compile(bad, 'cpu'))
      expect(e.code).toMatch(/^static\//)
      expect(e.message).toMatch(hint)
      expect(() => compile(good, 'cpu')).not.toThrow()
    })
  }
})

describe('the printed source of the new forms', () => {
  const src = `fn f(y: f64, x: f64[], z: f64[], s: stack<f64>) {
  routine { k <- 0; k += len(x) } y += x[k - 1]; ~routine
  m, n <- 2.0, 1.0
  for v in x { y += v * m + n }
  m, n -> 2.0, 1.0
  z[..] += 0.5 * x[..]
  t <- 0.0
  t += 1.5
  push(s, t)
  y += top(s)
  pop(s, t)
  t -= 1.5
  t -> 0.0
  y += 1.0
  y *= 2.0
}`
  for (const b of JS) {
    it(`.source of a function and of its inverse compile to the same behaviour (${b})`, () => {
      const m = compile(src, b)
      const again = compile(m.f!.source, b)
      const inv = compile(m.f!.inverse.source, b)
      const args = (): unknown[] => [0.5, f64s(1, 2, 3), f64s(0, 0, 0), []]
      const out = m.f!(...args())
      expect(again.f!(...args())).toEqual(out)
      expect(out[0]).toBe(2 * (0.5 + 3 + (1 + 2 + 3) * 2 + 3 + 1.5 + 1))
      const back = inv.f_inverse!(...out.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v)))
      expect(back[0]).toBe(0.5)
      expect(Array.from(back[2] as Float64Array)).toEqual([0, 0, 0])
    })
  }
})

describe('several ancillas at once', () => {
  for (const b of ALL) {
    it(`m, n <- 2.0, 4.0 and m, n -> 2.0, 4.0 (${b})`, () => {
      const m = compile('fn f(y: f64, x: f64) {\n  m, n <- 2.0, 4.0\n  y += m * x + n\n  m, n -> 2.0, 4.0\n}', b)
      expect(m.f!(1, 1.5)).toEqual([8, 1.5])
      expect(m.f!.inverse(8, 1.5)).toEqual([1, 1.5])
      gradOk(m, 'f', [1, 1.5])
    })
  }
  it('needs one value per name', () => {
    const e = thrown(() => compile('fn f(y: f64) { m, n <- 2.0 }', 'cpu'))
    expect(e.code).toBe('syntax')
    expect(e.message).toMatch(/2 names but 1 value/)
  })
})

describe('for x in arr: read-only element loops', () => {
  const src = `fn f(s: f64, x: f64[], w: f64) {
  for v in x { s += v * v * w }
  ~{ for v in x { s -= v } }
}`
  for (const b of ALL) {
    it(`sums over the elements, inverts and differentiates (${b})`, () => {
      const m = compile(src, b)
      const x = f64s(1, -2, 0.5)
      const [s] = m.f!(0.5, x, 2) as [number]
      expect(s).toBe(0.5 + 2 * (1 + 4 + 0.25) + (1 - 2 + 0.5))
      expect(m.f!.inverse(s, x, 2)[0]).toBe(0.5)
      const g = grad(m.f!, { loss: 0 })(0.5, x, 2) as [number, Float64Array, number]
      expect(Array.from(g[1])).toEqual([4 * 1 + 1, 4 * -2 + 1, 4 * 0.5 + 1])
      gradOk(m, 'f', [0.5, x, 2])
    })
  }
  for (const b of ALL) {
    it(`loops over complex arrays, elementwise too (${b})`, () => {
      const m = compile(
        `fn f(s: complex, zs: complex[], ws: complex[]) {
  for z in zs { s += z }
  ws[..] += 2.0 * zs[..]
}`,
        b,
      )
      const [s, , ws] = m.f!({ re: 0.5, im: 0 }, f64s(1, 2, 3, 4), f64s(0, 1, 0, 0)) as [
        { re: number; im: number },
        Float64Array,
        Float64Array,
      ]
      expect(s).toEqual({ re: 4.5, im: 6 })
      expect(Array.from(ws)).toEqual([2, 5, 6, 8])
      expect(
        thrown(() => compile('fn f(s: complex, zs: complex[]) { for z in zs { s += z; zs[0] += s } }', b)).code,
      ).toBe('static/write-read-only')
    })
  }
  it('rejects a body that writes the array or the element, and an element that shadows a name', () => {
    for (const body of ['x[0] += 1.0', 'SWAP(v, s)', 'g(v)', 'v += 1.0']) {
      const e = thrown(() =>
        compile(`fn g(a: f64) { a += 1.0 }\nfn f(s: f64, x: f64[]) { for v in x { s += v; ${body} } }`, 'cpu'),
      )
      expect(e.code).toBe('static/write-read-only')
      expect(e.message).toMatch(/only reads `x`/)
    }
    expect(thrown(() => compile('fn f(s: f64, x: f64[]) { for s in x { } }', 'cpu')).code).toBe('static/realloc')
    expect(thrown(() => compile('fn f(s: f64, x: f64) { for v in x { } }', 'cpu')).code).toBe('static/not-array')
  })
})

describe('top(s) reads the top of a stack', () => {
  const src = `fn f(y: f64, x: f64, st: stack<f64>) {
  push(st, x)
  y += top(st) * top(st) + sin(top(st))
  pop(st, x)
}`
  for (const b of JS) {
    it(`y += top(s) * top(s) (${b})`, () => {
      const m = compile(src, b)
      expect(m.f!(1, 0.5, [])).toEqual([1 + 0.25 + Math.sin(0.5), 0.5, []])
      expect(m.f!.inverse(1 + 0.25 + Math.sin(0.5), 0.5, [])).toEqual([1, 0.5, []])
      const g = grad(m.f!, { loss: 0 })(1, 0.5, []) as number[]
      expect(g[1]).toBeCloseTo(2 * 0.5 + Math.cos(0.5), 12)
      gradOk(m, 'f', [1, 0.5, []])
    })
  }
  it('is an error in a condition, and on an empty stack', () => {
    expect(thrown(() => compile('fn f(y: f64, st: stack<f64>) { if (top(st) > 0.0, ~) { } }', 'cpu')).code).toBe(
      'static/top',
    )
    expect(thrown(() => compile('fn f(y: f64, st: f64) { y += top(st) }', 'cpu')).code).toBe('static/top')
    expect(thrown(() => compile('fn f(y: f64, st: stack<f64>) { y += top(st) }', 'cpu').f!(0, [])).code).toBe(
      'runtime/empty-stack',
    )
  })
  it('wasm rejects stacks with a clear error', () => {
    expect(thrown(() => compile(src, 'wasm')).message).toMatch(/stack/)
  })
})

describe('a literal passed to a written parameter is an implicit ancilla', () => {
  const src = `fn g(o: f64, a: f64, n: i32) {
  o += a * n
  a += 1.0
  a -= 1.0
}
fn f(o: f64, x: f64) {
  g(o, 2.0, 3)
  g(o, x, 1)
  ~g(o, 2, 0)
}
fn bad(o: f64, a: f64) { a += o }
fn h(o: f64) { bad(o, 2) }`
  for (const b of ALL) {
    it(`g(o, 2, 0) allocates, calls and deallocates against the literal (${b})`, () => {
      const m = compile(src, b)
      expect(m.f!(0, 1.5)).toEqual([7.5, 1.5])
      expect(m.f!.inverse(7.5, 1.5)).toEqual([0, 1.5])
      gradOk(m, 'f', [0.25, 1.5])
      const e = thrown(() => m.h!(1))
      expect(e.code).toBe('runtime/dealloc')
      expect(e.message).toMatch(/`2 passed to bad as a`: it holds 3/)
    })
  }
})

describe('elementwise statements: y[..] += a * x[..]', () => {
  const src = `fn axpy(y: f64[], a: f64, x: f64[]) { y[..] += a * x[..] }
fn swap(x: f64[], y: f64[]) { SWAP(x[..], y[..]) }
fn call(y: f64[], x: f64[]) { g(y[..], x[..]) }
fn g(y: f64, x: f64) { y += x * x }
fn loss(l: f64, y: f64[], a: f64, x: f64[]) {
  y[..] += a * x[..]
  g(y[..], x[..])
  for v in y { l += v * v }
}`
  for (const b of ALL) {
    it(`updates and calls over every element, inverse and adjoint (${b})`, () => {
      const m = compile(src, b)
      const y = f64s(1, 2, 3),
        x = f64s(0.5, -1, 4)
      expect(Array.from(m.axpy!(y.slice(), 2, x)[0] as Float64Array)).toEqual([2, 0, 11])
      expect(Array.from(m.axpy!.inverse(f64s(2, 0, 11), 2, x)[0] as Float64Array)).toEqual([1, 2, 3])
      const [sx, sy] = m.swap!(x.slice(), y.slice()) as Float64Array[]
      expect([Array.from(sx!), Array.from(sy!)]).toEqual([
        [1, 2, 3],
        [0.5, -1, 4],
      ])
      expect(Array.from(m.call!(y.slice(), x)[0] as Float64Array)).toEqual([1.25, 3, 19])
      // l = Σ (y + a·x + x²)²: closed form and finite differences
      const g = grad(m.loss!, { loss: 0 })(0, y.slice(), 2, x) as [number, Float64Array, number, Float64Array]
      const u = Array.from(y, (v, k) => v + 2 * x[k]! + x[k]! ** 2)
      expect(Array.from(g[1])).toEqual(u.map((v) => 2 * v))
      expect(g[2]).toBeCloseTo(
        u.reduce((acc, v, k) => acc + 2 * v * x[k]!, 0),
        12,
      )
      gradOk(m, 'loss', [0, y.slice(), 2, x])
    })
    it(`arrays of different lengths are a run-time error (${b})`, () => {
      const m = compile(src, b)
      const e = thrown(() => m.axpy!(f64s(1, 2), 2, f64s(1, 2, 3)))
      expect(e.code).toBe('runtime/dealloc')
      expect(e.message).toMatch(/`len\(y\)`: it holds 2, but `len\(y\) -> len\(x\)` expects 3/)
    })
  }
  it('reading the target elementwise is the usual static error', () => {
    const e = thrown(() => compile('fn f(y: f64[]) { y[..] += 2.0 * y[..] }', 'cpu'))
    expect(e.code).toBe('static/self-read')
    expect(e.message).toMatch(/`y\[\$elem\d+\]` is read in its own right-hand side/)
  })
  it('`x[..]` outside an update or a call is an error', () => {
    expect(thrown(() => compile('fn f(x: f64[]) { if (x[..] > 0.0, ~) { } }', 'cpu')).code).toBe('static/spread')
  })
})

describe('*= and /= on f64, with a run-time check that the factor is nonzero', () => {
  const src = `fn f(y: f64, x: f64, z: f64) {
  y *= x * z
  y /= sin(x)
}`
  for (const b of ALL) {
    it(`multiplies, divides, inverts up to rounding and differentiates (${b})`, () => {
      const m = compile(src, b)
      const [y] = m.f!(1.5, 2, 3) as [number]
      expect(y).toBe((1.5 * 6) / Math.sin(2))
      expect(m.f!.inverse(y, 2, 3)[0]).toBeCloseTo(1.5, 14)
      const g = grad(m.f!, { loss: 0 })(1.5, 2, 3) as number[]
      // y = y₀·x·z / sin x
      expect(g[0]).toBeCloseTo(6 / Math.sin(2), 12)
      expect(g[1]).toBeCloseTo((1.5 * 3 * (Math.sin(2) - 2 * Math.cos(2))) / Math.sin(2) ** 2, 12)
      expect(g[2]).toBeCloseTo((1.5 * 2) / Math.sin(2), 12)
      gradOk(m, 'f', [1.5, 2, 3])
      // second order through the scaling (forward over reverse) against differences of the gradient
      const H = hessian(m.f!, [1.5, 2, 3], { loss: 0, wrt: [0, 1, 2] })
      const h = 1e-5
      const gp = grad(m.f!, { loss: 0 })(1.5, 2 + h, 3) as number[]
      const gm = grad(m.f!, { loss: 0 })(1.5, 2 - h, 3) as number[]
      for (let k = 0; k < 3; k++) expect(H[3 + k]).toBeCloseTo((gp[k]! - gm[k]!) / (2 * h), 5)
    })
    it(`a zero or non-finite factor is an InvertibilityError (${b})`, () => {
      const m = compile(src, b)
      for (const [x, z] of [
        [2, 0],
        [2, Infinity],
        [Math.PI * 0, 3],
      ] as const) {
        const e = thrown(() => m.f!(1.5, x, z))
        expect(e.code).toBe('runtime/zero-factor')
        expect(e.message).toMatch(/`y \*= x \* z`: the factor is/)
      }
    })
  }
  it('stays an error on i32 (not reversible there)', () => {
    expect(thrown(() => compile('fn f(y: i32, x: i32) { y *= x }', 'cpu')).code).toBe('static/not-bijective')
  })
})

describe('mutated sources with the new forms', () => {
  // a fixed-seed generator (xorshift), so a failure is reproducible
  let state = 0x2f6b3a1d
  const rand = (n: number) => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) % n
  }
  const base = `fn g(o: f64, a: f64) { o += a; a += 1.0; a -= 1.0 }
fn f(y: f64, x: f64[], z: f64[], s: stack<f64>, n: i32) {
  routine { y += x[0] } ~routine
  for i in 0..n { y += x[i] } if (y > 3, ~) { y -= 1.0 }
  m, k <- 2, 0
  k += n
  for v in x { y += v * m }
  z[..] += 2.0 * x[..]
  t <- 0.0
  t += x[1]
  push(s, t)
  y += top(s)
  pop(s, t)
  t -= x[1]
  t -> 0.0
  g(y, 2)
  y *= 2.0
  k -= n
  m, k -> 2, 0
}`
  const TOKENS = [
    '[..]',
    '..',
    ',',
    '{',
    '}',
    '<-',
    '->',
    'top(s)',
    'top(',
    'for v in',
    'in',
    'reverse',
    '*=',
    '/=',
    '~',
    'x[..]',
    '2',
    '0.0',
    ';',
    '\n',
  ]
  it('compile or fail with a Tenet error (no crash, no hang) on cpu and interpreter', () => {
    // the unmutated source is valid
    const ok = compile(base, 'cpu').f!(0, f64s(1, 2), f64s(0, 0), [], 2) as [number]
    expect(ok[0]).toBe(26)
    for (let t = 0; t < 300; t++) {
      let src = base
      for (let k = 1 + rand(2); k > 0; k--) {
        const a = rand(src.length)
        src = rand(2)
          ? src.slice(0, a) + src.slice(a + 1 + rand(5))
          : `${src.slice(0, a)} ${TOKENS[rand(TOKENS.length)]} ${src.slice(a)}`
      }
      for (const b of ['cpu', 'interpreter']) {
        try {
          compile(src, b)
        } catch (e) {
          if (!TenetError.isInstance(e)) throw new Error(`a raw error for\n${src}\n${String(e)}`)
          expect(typeof (e as TenetError).code).toBe('string')
        }
      }
    }
  })
})
