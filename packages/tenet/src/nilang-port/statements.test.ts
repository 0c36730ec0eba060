/**
 * NiLang port suite: statements, control flow, ancillas and routines, translated from the
 * testsets of NiLangCore's compiler tests (`test/compiler.jl`, `test/instr.jl`) into Tenet
 * (0-based indices, loops for broadcasts). Expected values are worked out by hand or by plain TS.
 */
import { expect } from 'vitest'
import { TenetStaticError } from '../index.js'
import { ALL, compileOn, expectAllClose, expectInvertibilityError, port } from './util.js'

// "i": add then multiply, (a + b)·b into out; a caller that calls and uncalls it
port(
  'compute (a + b)·b, call and uncall',
  ALL,
  `
  fn test1(a: f64, b: f64, out: f64) {
    a += b
    out += a * b
  }
  fn tt(a: f64, b: f64) {
    out <- 0.0
    test1(a, b, out)
    ~test1(a, b, out)
    out -> 0.0
    a += b
  }`,
  (m) => {
    expect(m.test1!(3, 4, 0)).toEqual([7, 4, 28])
    expect(m.test1!.inverse(7, 4, 28)).toEqual([3, 4, 0])
    expect(m.tt!(3, 4)).toEqual([7, 4])
    expect(m.tt!.inverse(7, 4)).toEqual([3, 4])
  },
)

// "if statement 1" and "3": the branch taken depends on a + b; post-condition equal to pre
port(
  'if with a post-condition (branch taken or not)',
  ALL,
  `
  fn test1(a: i32, b: i32, out: i32) {
    a += b
    if (a > 8, a > 8) { out += a * b }
  }
  fn test3(a: i32, b: i32, out: i32) {
    a += b
    if (a > 2, a > 2) { out += a * b }
  }`,
  (m) => {
    expect(m.test1!(3, 4, 0)).toEqual([7, 4, 0])
    expect(m.test1!.inverse(7, 4, 0)).toEqual([3, 4, 0])
    expect(m.test3!(3, 4, 0)).toEqual([7, 4, 28])
    expect(m.test3!.inverse(7, 4, 28)).toEqual([3, 4, 0])
  },
)

// "if statement error": the branch changes its own post-condition
port(
  'if whose branch breaks the post-condition is an InvertibilityError',
  ALL,
  `
  fn test1(a: i32, b: i32, out: i32) {
    a += b
    if (out < 4, out < 4) { out += a * b }
  }`,
  (m) => {
    expectInvertibilityError(() => m.test1!(3, 4, 0), 'runtime/post-condition')
  },
)

// "if statement 4": `if a > 8.0` without a post-condition (the same as pre), taken
port(
  'if with ~ as post-condition',
  ALL,
  `
  fn test1(a: f64, b: f64, out: f64) {
    a += b
    if (a > 8.0, ~) { out += a * b }
  }
  fn test2(a: f64, b: f64) {
    a += b
    if (a > 8.0, ~) { a -= b * b }
  }`,
  (m) => {
    expect(m.test1!(1, 8, 0)).toEqual([9, 8, 72])
    // test2 subtracts 64 in the branch, so a > 8 no longer holds afterwards
    expectInvertibilityError(() => m.test2!(1, 8), 'runtime/post-condition')
  },
)

// "for": a loop adds y k times; a loop that changes its own range fails
port(
  'for loop, and a loop that changes its range',
  ALL,
  `
  fn looper(x: f64, y: f64, k: i32) {
    for i in 0..k { x += y }
  }
  fn looper2(x: f64, y: f64, k: i32) {
    for i in 0..k {
      k += 18
      x += y
    }
  }`,
  (m) => {
    expect(m.looper!(0, 1, 3)).toEqual([3, 1, 3])
    expect(m.looper!.inverse(3, 1, 3)).toEqual([0, 1, 3])
    expectInvertibilityError(() => m.looper2!(0, 1, 3), 'runtime/loop-range')
  },
)

// "while": x grows by y while x < 100; the post-condition x > 0 tells the inverse when to stop
port(
  'while loop with pre- and post-conditions',
  ALL,
  `
  fn looper(x: f64, y: f64) {
    while (x < 100.0, x > 0.0) { x += y }
  }
  fn looper2(x: f64, y: f64) {
    while (x < 100.0, x > -10.0) { x += y }
  }`,
  (m) => {
    expect(m.looper!(0, 9)).toEqual([108, 9])
    expect(m.looper!.inverse(108, 9)).toEqual([0, 9])
    // x > −10 already holds on entry: the inverse could not find the start
    expectInvertibilityError(() => m.looper2!(0, 9), 'runtime/post-condition')
  },
)

// "ancilla": an ancilla restored to its value is freed; one that is not fails
port(
  'ancilla deallocation checks its value',
  ALL,
  `
  fn looper(x: f64, y: f64) {
    z: i32 <- 0
    x += y
    z += 1
    z -= 1
    z -> 0
  }
  fn looper2(x: f64, y: f64) {
    z: i32 <- 0
    x += y
    z += 1
    z -= 10
    z -> 0
  }`,
  (m) => {
    expect(m.looper!(0, 9)).toEqual([9, 9])
    expect(m.looper!.inverse(9, 9)).toEqual([0, 9])
    expectInvertibilityError(() => m.looper2!(0, 9), 'runtime/dealloc')
  },
)

// "neg sign": a negated operand inside the expression
port(
  'negated operand in an update',
  ALL,
  `
  fn test(out: f64, x: f64, y: f64) { out += x * (-y) }`,
  (m) => {
    expect(m.test!(0.1, 2, -2.5)).toEqual([0.1 + 5, 2, -2.5])
    expect(m.test!.inverse(5.1, 2, -2.5)[0]).toBeCloseTo(0.1, 15)
  },
)

// "routines": compute and uncompute around nothing leaves out unchanged
port(
  'routine ... ~routine with nothing between',
  ALL,
  `
  fn test(out: f64, x: f64) {
    routine { out += x }
    ~routine
  }`,
  (m) => {
    expect(m.test!(0, 1)).toEqual([0, 1])
  },
)

// "inverse a prog": ~{ } blocks run backwards (new form: a closing } ends its statement)
port(
  'inverse blocks ~{ }',
  ALL,
  `
  fn test(out: f64, x: f64) {
    ~{ out += x; out += x } ~{ for i in 0..3 { out += x } }
  }`,
  (m) => {
    expect(m.test!(0, 1)).toEqual([-5, 1])
    expect(m.test!.inverse(-5, 1)).toEqual([0, 1])
  },
)

// "invcheck": loops whose checks are off (a post-condition that would fail), and a free without a check
port(
  '@unchecked loops and deallocation',
  ALL,
  `
  fn test(out: i32, x: i32[]) {
    anc: i32 <- 0
    @unchecked {
      for i in 0..x[0] { x[1] -= 1 }
      while (anc < 3, anc < 3) { anc += 1 }
    }
    out += anc
    @unchecked { anc -> 0 }
  }`,
  (m) => {
    const x = Int32Array.of(7, 7)
    expect(m.test!(0, x)[0]).toBe(3)
    expect(Array.from(x)).toEqual([7, 0])
  },
)

// "ifelse statement": an else-if chain; a wrong post-condition in one arm fails
port(
  'else-if chain',
  ALL,
  `
  fn f(x: i32, y: i32) {
    if (x > 0, ~) { y += 1 } else {
      if (x < 0, ~) { y += 2 } else { y += 3 }
    }
  }
  fn f2(x: i32, y: i32) {
    if (x > 0, x < 0) { y += 1 } else {
      if (x < 0, x < 0) { y += 2 } else { y += 3 }
    }
  }`,
  (m) => {
    expect(m.f!(1, 0)).toEqual([1, 1])
    expect(m.f!(-2, 0)).toEqual([-2, 2])
    expect(m.f!(0, 0)).toEqual([0, 3])
    expect(m.f!.inverse(-2, 2)).toEqual([-2, 0])
    expectInvertibilityError(() => m.f2!(-1, 0), 'runtime/post-condition')
  },
)

// "for x in range": summing the items of an array, inverse subtracts them (new form: for v in y)
port(
  'loop over the items of an array',
  ALL,
  `
  fn f(x: f64, y: f64[]) { for v in y { x += v } }`,
  (m) => {
    const y = Float64Array.of(1, 2, 5)
    expect(m.f!(0, y)[0]).toBe(8)
    expect(m.f!.inverse(8, y)[0]).toBe(0)
  },
)

// "macro": two zero ancillas (new form: a, b <- 0.0, 0.0)
port(
  'two zero ancillas in a product',
  ALL,
  `
  fn f(x: f64) {
    a, b <- 0.0, 0.0
    x += a * b
    a, b -> 0.0, 0.0
  }`,
  (m) => {
    expect(m.f!(3)).toEqual([3])
  },
)

// "allocation multiple vars": sizes of a matrix as ancillas, y += m·n twice (new form: m, n <- …)
port(
  'ancillas holding sizes, deallocated against the same sizes',
  ALL,
  `
  fn f(y: i32, rows: i32[], cols: i32[]) {
    m, n <- len(rows), len(cols)
    y += m * n
    l, k <- len(rows), len(cols)
    y += l * k
    l, k -> len(rows), len(cols)
    m, n -> len(rows), len(cols)
  }
  fn g(rows: i32[], cols: i32[]) {
    m, n <- len(rows), len(cols)
    m, n -> 7, 5
  }`,
  (m) => {
    const r = new Int32Array(2),
      c = new Int32Array(4)
    expect(m.f!(0, r, c)[0]).toBe(16)
    expect(m.f!.inverse(16, r, c)[0]).toBe(0)
    expectInvertibilityError(() => m.g!(r, c), 'runtime/dealloc')
  },
)

// "@from post while pre": a countdown whose counter records the iterations
port(
  'while whose post-condition is a counter',
  ALL,
  `
  fn f(out: i32) {
    x: i32 <- 5
    z: i32 <- 0
    while (x > 0, z != 0) {
      x -= 1
      z += 1
    }
    out += z
    z -> 5
    x -> 0
  }`,
  (m) => {
    expect(m.f!(0)).toEqual([5])
    expect(m.f!.inverse(5)).toEqual([0])
  },
)

// "ancilla check": static errors for an ancilla named like a parameter, allocated twice, freed unallocated
port('ancilla mistakes are static errors', ALL, 'fn ok(x: i32) { }', (_m, backend) => {
  for (const src of [
    'fn f(x: i32) { x: i32 <- 0; x -> 0 }',
    'fn f(x: i32) { y: i32 <- 0; y: i32 <- 0; y -> 0 }',
    'fn f(x: i32) { y -> 0 }',
    'fn f(x: i32) { y: i32 <- 0 }',
  ])
    expect(() => compileOn(backend, src), src).toThrow(TenetStaticError)
})

// "xor over ||": bool updates by xor of logical expressions
port(
  'xor of logical expressions',
  ALL,
  `
  fn f(x: bool) {
    x ^= true || false
    x ^= true && false
  }`,
  (m) => {
    expect(m.f!(false)).toEqual([true])
    expect(m.f!.inverse(true)).toEqual([false])
  },
)

// "broadcast": a .+= b, then out .+= a .* b (new form: elementwise statements x[..])
port(
  'elementwise updates',
  ALL,
  `
  fn test1(a: f64[], b: f64[]) { a[..] += b[..] }
  fn test2(a: f64[], b: f64[], out: f64[]) {
    a[..] += b[..]
    out[..] += a[..] * b[..]
  }`,
  (m) => {
    const x = Float64Array.of(3, 1),
      y = Float64Array.of(4, 2)
    m.test1!(x, y)
    expect(Array.from(x)).toEqual([7, 3])
    m.test1!.inverse(x, y)
    expect(Array.from(x)).toEqual([3, 1])
    const out = Float64Array.of(0, 1)
    m.test2!(x, y, out)
    expect(Array.from(out)).toEqual([28, 7])
    m.test2!.inverse(x, y, out)
    expect(Array.from(out)).toEqual([0, 1])
    expect(Array.from(x)).toEqual([3, 1])
  },
)

// "broadcast arr": functions mapped elementwise (f1: negation through an ancilla; f4), new form f(x[..])
port(
  'elementwise functions through an ancilla',
  ALL,
  `
  fn f1(x: f64) {
    l <- 0.0
    l += x
    x -= 2.0 * l
    l += x
    l -> 0.0
  }
  fn f4(x: f64, y: f64, z: f64, a: f64) {
    x += y + z
    a += y + x
  }
  fn map1(x: f64[]) { f1(x[..]) }
  fn map4(x: f64[], y: f64[], z: f64[], a: f64[]) { f4(x[..], y[..], z[..], a[..]) }`,
  (m) => {
    const a = Float64Array.of(0.3, -1.2, 2.5),
      b = Float64Array.of(1, 2, 3),
      c = Float64Array.of(-0.5, 0.25, 4),
      d = Float64Array.of(7, 8, 9)
    const aa = a.slice()
    m.map1!(aa)
    expectAllClose(
      aa,
      a.map((v) => -v),
    )
    const [x, y, z, w] = [a.slice(), b.slice(), c.slice(), d.slice()]
    m.map4!(x, y, z, w)
    expectAllClose(
      x,
      a.map((v, i) => v + b[i]! + c[i]!),
    )
    expectAllClose(
      w,
      a.map((v, i) => v + 2 * b[i]! + c[i]! + d[i]!),
    )
    m.map4!.inverse(x, y, z, w)
    expectAllClose(w, d)
  },
)

// "argument with function call": a nested call of constants in an expression
port(
  'nested calls of constants in an expression',
  ALL,
  `
  fn f(x: f64, y: f64) { x += sin(exp(0.4)) + y }`,
  (m) => {
    expect(m.f!(0, 1)[0]).toBe(Math.sin(Math.exp(0.4)) + 1)
  },
)

// a literal passed for a written parameter is an implicit ancilla (allocated, passed, freed against it)
port(
  'a literal for a written parameter',
  ALL,
  `
  fn g(o: f64, a: f64) {
    a += 1.0
    o += a * 2.0
    a -= 1.0
  }
  fn f(o: f64) { g(o, 2.0) }`,
  (m) => {
    expect(m.f!(1)).toEqual([7])
    expect(m.f!.inverse(7)).toEqual([1])
  },
)

// integer literals take their type from use: k <- 0 then k += n and x[k] make k an i32
port(
  'an ancilla typed by its use',
  ALL,
  `
  fn f(y: f64, x: f64[], n: i32) {
    k <- 0
    k += n
    y += x[k] * k
    k -= n
    k -> 0
  }`,
  (m) => {
    expect(m.f!(0, Float64Array.of(1, 2, 3), 2)[0]).toBe(6)
  },
)
