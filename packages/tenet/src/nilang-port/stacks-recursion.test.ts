/**
 * NiLang port suite: stacks (NiLang's `test/stack.jl`, `test/instructs.jl` "stack operations"),
 * recursion (the `fib.jl` example) and number types (`test/ulog.jl`, fixed point, complex,
 * wrapping integers). The wasm backend lowers neither stacks nor fixed-point numbers, so those
 * programs run on the interpreter and cpu.
 */
import { expect } from 'vitest'
import { ALL, NO_WASM, close, cx, expectComplexClose, expectInvertibilityError, port } from './util.js'

// ---------- stacks ----------

// "stack operations": push zeroes the value, pop restores it; popping into a non-zero value fails
port(
  'push and pop on a stack parameter',
  NO_WASM,
  `
  fn push1(x: f64, st: stack<f64>) { push(st, x) }
  fn pop1(x: f64, st: stack<f64>) { pop(st, x) }`,
  (m) => {
    const [x, st] = m.push1!(0.3, []) as [number, number[]]
    expect(x).toBe(0)
    expect(st).toEqual([0.3])
    expect(m.pop1!(0, st)).toEqual([0.3, []])
    expectInvertibilityError(() => m.pop1!(0.4, [0.3]), 'runtime/pop-nonzero')
  },
)

// reading the top of a stack without popping it (new form: top(s)), NiLang's loaddata
port(
  'reading the top of a stack',
  NO_WASM,
  `
  fn peek(y: f64, st: stack<f64>) { y += top(st) * 2.0 }`,
  (m) => {
    expect(m.peek!(1, [3, 4])).toEqual([9, [3, 4]])
    expect(m.peek!.inverse(9, [3, 4])).toEqual([1, [3, 4]])
    expectInvertibilityError(() => m.peek!(0, []), 'runtime/empty-stack')
  },
)

// "stack operations", the function `test`: square into an ancilla, push x, swap the square in
port(
  'square into an ancilla, push the input, swap',
  NO_WASM,
  `
  fn test(x: f64, st: stack<f64>) {
    x2 <- 0.0
    x2 += x * x
    push(st, x)
    SWAP(x, x2)
    x2 -> 0.0
  }`,
  (m) => {
    expect(m.test!(3, [])).toEqual([9, [3]])
    expect(m.test!.inverse(9, [3])).toEqual([3, []])
  },
)

// popping an empty stack, and freeing a stack ancilla that is not empty
port(
  'empty-stack pop and non-empty stack free are errors',
  NO_WASM,
  `
  fn f(x: f64, st: stack<f64>) { pop(st, x) }
  fn g(x: f64) {
    s: stack<f64> <- []
    push(s, x)
    s -> []
  }`,
  (m) => {
    expectInvertibilityError(() => m.f!(0, []), 'runtime/empty-stack')
    expectInvertibilityError(() => m.g!(1), 'runtime/dealloc')
  },
)

// last in, first out: an i32 stack reverses a sequence
port(
  'a stack reverses a sequence (LIFO)',
  NO_WASM,
  `
  fn rev(x: i32[]) {
    s: stack<i32> <- []
    for i in 0..len(x) { push(s, x[i]) }
    for i in 0..len(x) { pop(s, x[i]) }
    s -> []
  }`,
  (m) => {
    const x = Int32Array.of(1, 2, 3, 4, 5)
    m.rev!(x)
    expect(Array.from(x)).toEqual([5, 4, 3, 2, 1])
    m.rev!.inverse(x)
    expect(Array.from(x)).toEqual([1, 2, 3, 4, 5])
  },
)

// "loaddata" of complex values: a stack of complex keeps both parts
port(
  'a stack of complex values',
  NO_WASM,
  `
  fn f(z: complex, st: stack<complex>) {
    push(st, z)
    w: complex <- complex(0.0, 0.0)
    pop(st, w)
    z += w * w
    push(st, w)
    w -> complex(0.0, 0.0)
  }`,
  (m) => {
    const [z, st] = m.f!(cx.of(0.3, 0.6), []) as [unknown, unknown[]]
    expectComplexClose(z, cx.mul(cx.of(0.3, 0.6), cx.of(0.3, 0.6)))
    expect(st).toEqual([cx.of(0.3, 0.6)])
  },
)

// ---------- recursion ----------

// the `fib.jl` example: fib(n) by two recursive calls on n − 1 and n − 2 held in ancillas
port(
  'Fibonacci by double recursion',
  ALL,
  `
  fn rfib(out: i32, n: i32) {
    routine {
      n1: i32 <- 0
      n2: i32 <- 0
      n1 += n - 1
      n2 += n - 2
    }
    if (n <= 2, ~) { out += 1 } else {
      rfib(out, n1)
      rfib(out, n2)
    }
    ~routine
  }`,
  (m) => {
    const fib = (n: number): number => (n <= 2 ? 1 : fib(n - 1) + fib(n - 2))
    for (const n of [1, 2, 3, 10, 15]) expect(m.rfib!(0, n)).toEqual([fib(n), n])
    expect(m.rfib!.inverse(610, 15)).toEqual([0, 15])
  },
)

// the `fib.jl` example: the first n whose Fibonacci number exceeds z, by a while loop around rfib
port(
  'first Fibonacci number above a bound',
  ALL,
  `
  fn rfib(out: i32, n: i32) {
    routine {
      n1: i32 <- 0
      n2: i32 <- 0
      n1 += n - 1
      n2 += n - 2
    }
    if (n <= 2, ~) { out += 1 } else {
      rfib(out, n1)
      rfib(out, n2)
    }
    ~routine
  }
  fn rfibn(n: i32, z: i32) {
    routine {
      out: i32 <- 0
      rfib(out, n)
    }
    while (out < z, n != 0) {
      ~rfib(out, n)
      n += 1
      rfib(out, n)
    }
    ~routine
  }`,
  (m) => {
    // the first n with fib(n) ≥ 100 is 12 (fib 12 = 144, fib 11 = 89)
    expect(m.rfibn!(0, 100)).toEqual([12, 100])
    expect(m.rfibn!.inverse(12, 100)).toEqual([0, 100])
  },
)

// recursion with a loop in the caller: triangular numbers, tri(n) = tri(n − 1) + n
port(
  'triangular numbers by recursion',
  ALL,
  `
  fn tri(out: i32, n: i32) {
    if (n >= 1, ~) {
      tri(out, n - 1)
      out += n
    }
  }
  fn sums(out: i32[]) { for i in 0..len(out) { tri(out[i], i) } }`,
  (m) => {
    const out = new Int32Array(8)
    m.sums!(out)
    expect(Array.from(out)).toEqual([0, 1, 3, 6, 10, 15, 21, 28])
    m.sums!.inverse(out)
    expect(Array.from(out)).toEqual(new Array(8).fill(0))
  },
)

// a descending loop with a step (for i = 10:-2:0)
port(
  'a loop counting down by a step',
  ALL,
  `
  fn f(s: i32, t: i32) {
    for i in 10..=0 by -2 {
      s += i
      t ^= i
    }
  }`,
  (m) => {
    expect(m.f!(0, 0)).toEqual([30, 10 ^ 8 ^ 6 ^ 4 ^ 2 ^ 0])
    expect(m.f!.inverse(30, 10 ^ 8 ^ 6 ^ 4 ^ 2)).toEqual([0, 0])
  },
)

// ---------- number types ----------

// `test/ulog.jl`: products and sums of logarithmic numbers are exact bijections
port(
  'logarithmic numbers: *= products and sums',
  NO_WASM,
  `
  fn f(z: ulog, x: ulog, y: ulog) {
    z *= x * y
    z *= x + y
    z /= y
  }`,
  (m) => {
    const [z] = m.f!(1, 2, 3) as number[]
    expect(close(z!, (2 * 3 * 5) / 3, 1e-12)).toBe(true)
    expect(m.f!.inverse(z!, 2, 3)[0]).toBe(1) // exact, bit for bit
  },
)

// the `lognumber.jl` example: a product of many small factors that underflows f64, kept in ulog
port(
  'a product that underflows f64 stays finite in ulog',
  NO_WASM,
  `
  fn prod(p: ulog, x: f64[], logp: f64) {
    for i in 0..len(x) { p *= convert(x[i]) }
    logp += p.log
  }`,
  (m) => {
    const x = new Float64Array(120).fill(1e-3)
    const [p, , logp] = m.prod!(1, x, 0) as number[]
    expect(p).toBe(0) // 1e-360 is 0 as an f64 at the host boundary
    expect(close(logp!, 120 * Math.log(1e-3), 1e-9)).toBe(true)
  },
)

// the `fixedlog.jl` idea and the `*, /` testset: fixed-point += is exact, x / 2 of an integer is 0.5
// (new forms: a fixed target rounds its f64 right-hand side; i32 / i32 is real division)
port(
  'fixed point: exact accumulation and exact undo',
  NO_WASM,
  `
  fn half(out: fixed, x: i32) { out += x / 2 }
  fn acc(s: fixed, x: f64[]) { for v in x { s += sin(v) * 3.0 } }`,
  (m) => {
    expect(m.half!(0, 1)).toEqual([0.5, 1])
    expect(m.half!.inverse(0.5, 1)).toEqual([0, 1])
    const x = Float64Array.from({ length: 100 }, (_, i) => 0.37 * i)
    const [s] = m.acc!(0, x) as number[]
    expect(Math.abs(s! - x.reduce((a, v) => a + 3 * Math.sin(v), 0))).toBeLessThan(1e-8)
    expect(m.acc!.inverse(s!, x)[0]).toBe(0) // bit-exact: every addend was rounded once, the same way both ways
  },
)

// INC/DEC on Int32 (test/instructs.jl "INC, DEC"), and wrapping arithmetic
port(
  'i32: INC, DEC and wrapping updates',
  ALL,
  `
  fn f(x: i32) {
    INC(x)
    DEC(x)
    DEC(x)
  }
  fn wrap(x: i32, k: i32) { x += k }`,
  (m) => {
    expect(m.f!(2)).toEqual([1])
    expect(m.f!.inverse(1)).toEqual([2])
    expect(m.wrap!(2147483647, 1)).toEqual([-2147483648, 1])
    expect(m.wrap!.inverse(-2147483648, 1)).toEqual([2147483647, 1])
  },
)

// f32 rounds at every write, and the inverse of a rounded update is the rounded subtraction
port(
  'f32 updates round like Math.fround',
  ALL,
  `
  fn f(y: f32, x: f32) { y += x * x + 0.1 }`,
  (m) => {
    const x = Math.fround(1.3)
    const [y] = m.f!(0, x) as number[]
    expect(y).toBe(Math.fround(Math.fround(Math.fround(x * x) + Math.fround(0.1))))
  },
)

// test/complex.jl: complex arithmetic, conj, abs, angle, exp and log against plain TS
port(
  'complex arithmetic and functions',
  ALL,
  `
  fn f(y: complex, a: f64, r: f64, x: complex, z: complex) {
    y += x * z - conj(x) / z + exp(x) * log(z)
    a += angle(x)
    r += abs(z) + abs2(x)
  }`,
  (m) => {
    const x = cx.of(0.4, -1.1),
      z = cx.of(-0.7, 0.3)
    const r = m.f!(cx.of(0), 0, 0, x, z) as [unknown, number, number]
    const want = cx.add(cx.sub(cx.mul(x, z), cx.div(cx.of(x.re, -x.im), z)), cx.mul(cx.exp(x), cx.log(z)))
    expectComplexClose(r[0], want)
    expect(r[1]).toBeCloseTo(Math.atan2(-1.1, 0.4), 15)
    expect(r[2]).toBeCloseTo(Math.hypot(-0.7, 0.3) + 0.16 + 1.21, 14)
  },
)

// INC on a complex adds one to the real part (2 + 1i → 3 + 1i)
port(
  'INC and DEC on a complex number',
  ALL,
  `
  fn f(z: complex) { INC(z) }
  fn g(z: complex) { DEC(z); DEC(z) }`,
  (m) => {
    expect(m.f!(cx.of(2, 1))).toEqual([cx.of(3, 1)])
    expect(m.g!(cx.of(2, 1))).toEqual([cx.of(0, 1)])
    expect(m.f!.inverse(cx.of(3, 1))).toEqual([cx.of(2, 1)])
  },
)

// tropical (max-plus) numbers: ⊗ is +, ⊕ is max; *= is exact
port(
  'tropical numbers: *= by a tropical sum',
  NO_WASM,
  `
  fn f(z: tropical, x: tropical, y: tropical) {
    z *= x + y
    z *= x * y
  }`,
  (m) => {
    // z ⊗ (x ⊕ y) ⊗ (x ⊗ y) = 0 + max(2, 3) + (2 + 3)
    expect(m.f!(0, 2, 3)).toEqual([8, 2, 3])
    expect(m.f!.inverse(8, 2, 3)).toEqual([0, 2, 3])
  },
)
