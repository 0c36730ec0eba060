import { describe, expect, it } from 'vitest'
import { createRegistry, parse, InvertibilityError, RegistryError } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, programProblems, randomProgram, referenceBackend } from '@tenet/testing'
import { registerNumbers } from '@tenet/numbers'
import { createWasmBackend, wasmBackend } from './index.js'

const registry = () => registerNumbers(createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend))
const compile = (text: string, backend = 'wasm', checks = true) =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend, checks })

describe('random programs agree bit for bit with the reference interpreter', () => {
  // stacks are not lowered to wasm (see the README), so the generator leaves them out
  const backends = [
    referenceBackend(),
    backendUnderTest(wasmBackend),
    { ...backendUnderTest(wasmBackend, { checks: false }), name: 'wasm (checks off)' },
  ]
  for (let first = 0; first < 1000; first += 250) {
    it(`seeds ${first}..${first + 249}`, () => {
      const failures: string[] = []
      for (let seed = first; seed < first + 250; seed++) {
        const p = randomProgram(seed, { features: { stack: false } })
        const problems = programProblems(p, backends, { argSets: 2 })
        if (problems.length) failures.push(`seed ${seed}:\n${p.source}\n${problems.join('\n')}`)
      }
      expect(failures.slice(0, 3).join('\n\n')).toBe('')
    })
  }
})

describe('values and arrays', () => {
  it('runs f64, f32, i32 and bool scalars and arrays forwards and backwards', () => {
    const src = `fn f(y: f64, z: f64, a: f32[], n: i32[], b: bool[], s: f32, flag: bool) {
      for i in 0..len(a) { a[i] += f32(i) * s }
      n[0] += i32(y * 3.0)
      if (flag, flag) { z += sqrt(abs(y)) + max(y, 2.0) }
      b[1] ^= flag
    }`
    for (const checks of [true, false]) {
      const [w, c] = [compile(src, 'wasm', checks), compile(src, 'cpu', checks)]
      const args = () =>
        [
          2.5,
          -1,
          new Float32Array([0.1, 0.2, 0.3]),
          new Int32Array([7, 1]),
          new Uint8Array([0, 0]),
          1.25,
          true,
        ] as unknown[]
      const out = w.f!(...args())
      expect(out).toEqual(c.f!(...args()))
      // f32 rounding makes += and -= inexact inverses: compare with the cpu backend's inverse
      expect(w.f!.inverse(...out)).toEqual(c.f!.inverse(...c.f!(...args())))
    }
  })

  it('passes the same array twice as one region, as the cpu backend shares it', () => {
    const src = 'fn f(y: f64, a: f64[], b: f64[]) { y += a[0] * b[1] }'
    const x = new Float64Array([2, 3])
    expect(compile(src).f!(1, x, x)[0]).toBe(7)
  })

  it('grows its memory for large arguments and large array ancillas', () => {
    const src = `fn f(y: f64, x: f64[]) {
      t: f64[] <- zeros(len(x) * 4)
      for i in 0..len(x) { t[4 * i] += x[i] }
      for i in 0..len(x) { y += t[4 * i] }
      for i in 0..len(x) { t[4 * i] -= x[i] }
      t -> zeros(len(x) * 4)
    }`
    const x = Float64Array.from({ length: 100_000 }, (_, i) => i % 7)
    const want = x.reduce((a, b) => a + b, 0)
    const m = compile(src)
    expect(m.f!(0, x)[0]).toBe(want)
    expect(m.f!(0, x)[0]).toBe(want) // again, after the growth
  })
})

describe('edge cases that once differed from the cpu backend', () => {
  const same = (src: string, args: () => unknown[], checks = true) => {
    const run = (b: string) => {
      try {
        return compile(src, b, checks).f!(...args())
      } catch (e) {
        return `${(e as { code?: string }).code}`
      }
    }
    expect(run('wasm')).toEqual(run('cpu'))
    return run('wasm')
  }
  it('raises to an exponent known only at run time as Math.pow does (2 and 1 without the call)', () => {
    // special values and many magnitudes; f64 and f32, exponents of both types
    const xs = [
      0,
      -0,
      Infinity,
      -Infinity,
      NaN,
      5e-324,
      -1e-310,
      1e300,
      -3,
      0.1,
      ...Array.from({ length: 40 }, (_, i) => Math.sin(7.3 * i) * 10 ** ((i % 9) - 4)),
    ]
    const src = `fn f(y: f64[], s: f32[], x: f64[], n: i32, e: f64) {
      for i in 0..len(x) {
        y[4 * i] += x[i] ** n
        y[4 * i + 1] += x[i] ** e
        y[4 * i + 2] += x[i] ** (n - 1)
        y[4 * i + 3] += x[i] ** (e * 0.5)
        s[i] += f32(x[i]) ** n
      }
    }`
    for (const [n, e] of [
      [2, 2],
      [1, 1],
      [3, 4],
      [0, -1],
      [-2, 0.5],
    ]) {
      const out = same(
        src,
        () => [
          new Float64Array(4 * xs.length).fill(-0),
          new Float32Array(xs.length).fill(-0),
          Float64Array.from(xs),
          n,
          e,
        ],
        false,
      ) as unknown[]
      const y = out[0] as Float64Array
      // (y starts at −0, and −0 + x is x, −0 included)
      for (let i = 0; i < xs.length; i++) expect(y[4 * i]).toBe(Math.pow(xs[i]!, n!))
    }
  })

  it('divides two i32 as doubles', () => {
    expect(same('fn f(y: f64, a: i32, b: i32) { y += a / b }', () => [0, 7, 2])).toEqual([3.5, 7, 2])
    expect(same('fn f(y: f64, a: i32, b: i32) { y += a / b }', () => [0, 7, 0])).toEqual([Infinity, 7, 0])
  })
  it('keeps the sign of zero through a one-output bijection called in JS', () => {
    expect(Object.is((same('fn f(x: f64) { NEG(x) }', () => [0]) as number[])[0], -0)).toBe(true)
  })
  it('reads a bool element as true or false before updating it', () => {
    const out = same('fn f(b: bool[], t: bool) { b[0] ^= t }', () => [new Uint8Array([2]), true]) as unknown[]
    expect(out[0]).toEqual(new Uint8Array([0]))
  })
  it('counts loops at the ends of the i32 range as JS does', () => {
    for (const checks of [true, false]) {
      expect(
        same(
          'fn f(y: f64, a: i32, b: i32) { for i in reverse a..b { y += 1.0 } }',
          () => [0, 2147483645, -2147483648],
          checks,
        ),
      ).toEqual([0, 2147483645, -2147483648])
      expect(
        same('fn f(y: f64, a: i32, b: i32) { for i in a..=b { y += 1.0 } }', () => [0, 2147483645, 2147483647], checks),
      ).toEqual([3, 2147483645, 2147483647])
      expect(
        same(
          'fn f(y: f64, a: i32, b: i32) { for i in a..=b by -1 { y += 1.0 } }',
          () => [0, -2147483646, -2147483648],
          checks,
        ),
      ).toEqual([3, -2147483646, -2147483648])
    }
  })
  it('refuses an array ancilla too large for the wasm memory instead of overlapping others', () => {
    // (t[0] made non-zero first: a read of a zero ancilla is dropped without checks, its allocation with it)
    const src =
      'fn f(y: f64, n: i32) {\n  t: f64[] <- zeros(n)\n  t[0] += 1.0\n  y += t[0]\n  t[0] -= 1.0\n  t -> zeros(n)\n}'
    let err: unknown
    try {
      compile(src, 'wasm', false).f!(0, 2 ** 30)
    } catch (e) {
      err = e
    }
    expect((err as InvertibilityError).code).toBe('runtime/out-of-memory')
  })
})

describe('without run-time checks', () => {
  it('keeps a loop-invariant element in a local only when the loop runs', () => {
    // q[n + 5] is past the end of q; the loop runs zero times, so nothing may be read or written
    const src = 'fn f(q: f64[], x: f64[], n: i32) { for j in 0..n { q[n + 5] += x[j] } }'
    const q = new Float64Array([1, 2]),
      x = new Float64Array([3])
    expect(compile(src, 'wasm', false).f!(q, x, 0)).toEqual([new Float64Array([1, 2]), x, 0])
    // when it runs, the element is out of range: checked before the loop (it was once read and
    // written unchecked, in the memory of the next argument)
    expect(() => compile(src, 'wasm', false).f!(q, x, 1)).toThrow(/index 6 is out of bounds for `q`/)
    // an index read from memory is not checked before the loop (not hoisted): the load of the
    // element the loop keeps in a local checks it, when the loop runs
    const g = compile('fn g(q: f64[], x: f64[], p: i32[], n: i32) { for j in 0..n { q[p[0]] += x[j] } }', 'wasm', false)
      .g!
    const p = new Int32Array([2])
    expect(g(q, x, p, 0)[0]).toEqual(new Float64Array([1, 2]))
    expect(() => g(q, x, p, 1)).toThrow(/index 2 is out of bounds for `q`/)
    p[0] = 1
    expect(g(q, x, p, 1)[0]).toEqual(new Float64Array([1, 5]))
  })

  it("names a callee's parameter when an inlined callee's access is out of bounds", () => {
    // the memory guard stays with checks off; the small callee and the once-run callee are
    // inlined, and their errors name the callee's array, where their location points
    const small = compile(
      'fn inc(v: f64[], k: i32) { v[k] += 1.0 }\nfn f(x: f64[], k: i32) { inc(x, k) }',
      'wasm',
      false,
    )
    expect(() => small.f!(new Float64Array(3), 5)).toThrow(/index 5 is out of bounds for `v` \(length 3\) \(at 1:28\)/)
    const once = compile(
      'fn acc(v: f64[], s: f64) { for i in 0..4 { s += v[i] } }\nfn f(x: f64[], y: f64) { acc(x, y) }',
      'wasm',
      false,
    )
    expect(() => once.f!(new Float64Array(3), 0)).toThrow(/index 3 is out of bounds for `v` \(length 3\)/)
  })

  it('reads and writes elements at a constant offset from a base index, negative bases included', () => {
    // (the address of element base + c is that of base, plus c elements in the instruction)
    const src = `fn f(y: f64[], x: f64[], v: i32[], b: bool[], n: i32) {
      for i in 0..n {
        y[(i - 2) + 2] += x[(i - 1) + 3] * f64(v[(2 * i - 1) + 1])
        y[i * 3 + 2 - 2 * i] -= x[i + 1] - x[(i - 3) + 3]
        if (b[(i - 1) + 1], b[(i - 1) + 1]) { v[i + 1] += 1 }
      }
    }`
    const args = () => [
      new Float64Array(7),
      Float64Array.from([1, 2, 3, 4, 5, 6, 7]),
      Int32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
      Uint8Array.from([1, 0, 1, 1, 0]),
      4,
    ]
    for (const checks of [false, true]) {
      const [w, c] = [compile(src, 'wasm', checks), compile(src, 'cpu', checks)]
      const fw = w.f!(...args()),
        fc = c.f!(...args())
      expect(fw).toEqual(fc)
      expect(Array.from(fw[0] as Float64Array)).toEqual([3, 12, 24, 41, -1, -1, 0])
      expect(w.f!.inverse(...fw)).toEqual(args())
    }
    // bases far below zero (the first array sits a few bytes into the memory): the same elements
    const stencil = `fn s(w: f64[], x: f64[], y: f64[]) {
      for i in 5..len(x) - 5 { for k in -5..6 { y[i] += w[k + 5] * x[i + k] } }
    }`
    const sargs = () => [
      Float64Array.from({ length: 11 }, (_, i) => i - 5),
      Float64Array.from({ length: 20 }, (_, i) => Math.sin(i)),
      new Float64Array(20),
    ]
    expect(compile(stencil, 'wasm', false).s!(...sargs())).toEqual(compile(stencil, 'cpu', false).s!(...sargs()))
    const far = 'fn f(y: f64, x: i32[], m: i32) { for i in -m..0 { y += f64(x[i + 1000]) } }'
    const xs = Int32Array.from({ length: 1000 }, (_, i) => i)
    expect(compile(far, 'wasm', false).f!(0, xs, 1000)[0]).toBe(499500)
  })
})

describe('run-time checks', () => {
  it('throws the InvertibilityError of a failed deallocation with its location, arrays untouched', () => {
    const m = compile('fn f(x: f64[]) {\n  t <- 0.0\n  t += x[0]\n  x[1] += 1.0\n  t -> 0.0\n}')
    const x = new Float64Array([2, 5])
    let err: unknown
    try {
      m.f!(x)
    } catch (e) {
      err = e
    }
    expect(InvertibilityError.isInstance(err)).toBe(true)
    expect((err as InvertibilityError).code).toBe('runtime/dealloc')
    expect((err as InvertibilityError).line).toBe(5)
    expect((err as Error).message).toContain('it holds 2, but `t -> 0.0` expects 0')
    expect(x).toEqual(new Float64Array([2, 5]))
  })

  it('checks indices, post-conditions and loop ranges like the cpu backend', () => {
    const cases: Array<[string, unknown[], string]> = [
      ['fn f(y: f64, x: f64[]) { y += x[3] }', [0, new Float64Array(2)], 'runtime/out-of-bounds'],
      ['fn f(y: f64, n: i32) { if (n > 0, n > 5) { y += 1.0 } }', [0, 1], 'runtime/post-condition'],
      ['fn f(n: i32, m: i32) { for i in 0..n { n += m } }', [2, 1], 'runtime/loop-range'],
    ]
    for (const [src, args, code] of cases) {
      const messages = ['wasm', 'cpu'].map((b) => {
        try {
          compile(src, b).f!(...args)
          return 'no error'
        } catch (e) {
          return `${(e as InvertibilityError).code}: ${(e as Error).message}`
        }
      })
      expect(messages[0]).toBe(messages[1])
      expect(messages[0]!.startsWith(code)).toBe(true)
    }
  })
})

describe('what it cannot lower', () => {
  it('rejects stacks and number systems with their own arithmetic, naming the construct', () => {
    for (const [src, what] of [
      ['fn f(x: f64) { s: stack<f64> <- []\n push(s, x)\n pop(s, x)\n s -> [] }', 'stacks'],
      ['fn f(y: ulog, x: ulog) { y *= x }', 'ulog'],
    ] as const) {
      let err: unknown
      try {
        compile(src)
      } catch (e) {
        err = e
      }
      expect(String(err)).toContain(what)
      expect(RegistryError.isInstance(err)).toBe(true)
      expect((err as RegistryError).code).toBe('backend/unsupported')
      expect((err as Error).message).toContain(what)
    }
  })
})

/** A compile with a backend of its own (a fresh memory: the tests below watch it grow). */
const compileFresh = (text: string, checks = true) =>
  compileModule(parse({ text, name: 'test' }), {
    registry: registerNumbers(createRegistry().registerBackend(createWasmBackend())),
    backend: 'wasm',
    checks,
  })

describe('resident arrays', () => {
  const src = `fn f(y: f64[], x: f64[], n: i32[], s: f64) {
    for i in 0..len(x) { y[i] += x[i] * s + f64(n[i]) }
    t: f64[] <- zeros(len(x) * 4096)
    t[0] += s
    y[0] += t[0]
    t[0] -= s
    t -> zeros(len(x) * 4096)
  }`
  const core = () => compileFresh(src, true).f!.core

  it('are used in place, mixed with host arrays, and keep their contents when the memory grows', () => {
    const f = core()
    const mem = f.resident!
    const y = mem.allocate('f64', 3),
      x = mem.allocate('f64', 3)
    expect(Array.from(y.array)).toEqual([0, 0, 0])
    x.array.set([1, 2, 3])
    const n = new Int32Array([10, 20, 30])
    const before = y.array
    // the ancilla of 3·4096 doubles grows the memory during the call: earlier views detach
    f(y.array, x.array, n, 2)
    expect(before.length).toBe(0)
    expect(Array.from(y.array)).toEqual([14, 24, 36])
    expect(Array.from(x.array)).toEqual([1, 2, 3])
    // a host array and a resident one in the same call; the inverse undoes it in place
    const hostY = new Float64Array([1, 1, 1])
    f(hostY, x.array, n, 1)
    expect(Array.from(hostY)).toEqual([13, 23, 34])
    // the inverse, through the same memory, undoes a call in place
    const m = compileModule(parse({ text: src, name: 'r' }), { registry: registry(), backend: 'wasm' })
    const g = m.f!.core,
      gi = m.f!.inverse.core
    const y2 = g.resident!.allocate('f64', 3),
      x2 = g.resident!.allocate('f64', 3)
    x2.array.set([1, 2, 3])
    g(y2.array, x2.array, n, 2)
    gi(y2.array, x2.array, n, 2)
    expect(Array.from(y2.array)).toEqual([0, 0, 0])
  })

  it('are recognised call after call, alternating with host arrays and across a grown memory', () => {
    // the wrapper remembers the last resident view of each parameter and its offset
    const f = compileFresh('fn f(y: f64[], x: f64[], s: f64) { for i in 0..len(x) { y[i] += x[i] * s } }', false).f!
      .core
    const mem = f.resident!
    const y = mem.allocate('f64', 3),
      x = mem.allocate('f64', 3)
    x.array.set([1, 2, 3])
    const host = new Float64Array([5, 5, 5])
    f(y.array, x.array, 1)
    f(host, x.array, 1)
    f(y.array, x.array, 2)
    f(y.array, host, 1)
    expect(Array.from(y.array)).toEqual([9, 13, 17])
    expect(Array.from(host)).toEqual([6, 7, 8])
    // a call with a host array of 20000 doubles grows the memory: the old views detach, and the
    // current ones (new objects at the same offsets) are recognised again
    const old = y.array
    f(new Float64Array(20000), new Float64Array(20000), 1)
    expect(old.length).toBe(0)
    f(y.array, x.array, 1)
    expect(Array.from(y.array)).toEqual([10, 15, 20])
  })

  it('keep their length when copying a host array in grows the memory', () => {
    const f = compileFresh(
      'fn s(out: f64, x: f64[], y: f64[]) { for i in 0..len(x) { out += x[i] }\n for j in 0..len(y) { out += y[j] } }',
      false,
    ).s!.core
    const x = f.resident!.allocate('f64', 10)
    x.array.fill(1)
    // the first call copies 20000 doubles in: the memory grows after x's offset and length are taken
    f(0, x.array, new Float64Array(20000).fill(0.5))
    expect(f.results[0]).toBe(10 + 10000)
  })

  it('are zeroed when allocated, reuse released memory, and reject bad requests', () => {
    const mem = core().resident!
    const a = mem.allocate('f64', 4)
    a.array.fill(7)
    const offset = a.array.byteOffset
    // release works detached from its handle (as a callback), and twice is once
    const release = a.release
    release()
    a.release()
    expect(() => a.array).toThrow(/released/)
    const b = mem.allocate('i32', 6)
    expect(b.array.byteOffset).toBe(offset)
    expect(Array.from(b.array)).toEqual([0, 0, 0, 0, 0, 0])
    const c = mem.allocate('bool', 5)
    expect(c.array).toBeInstanceOf(Uint8Array)
    expect(Array.from(c.array)).toEqual([0, 0, 0, 0, 0])
    expect(() => mem.allocate('fixed', 2)).toThrow(RangeError)
    expect(() => mem.allocate('f64', -1)).toThrow(RangeError)
    expect(() => mem.allocate('f64', 1.5)).toThrow(RangeError)
  })

  it('cannot be allocated while a call is under way', () => {
    const reg = registry()
    let mem: { allocate(e: string, n: number): unknown } | undefined
    let err: unknown
    reg.registerPrimitive({
      specificationVersion: 'v1',
      name: 'probe',
      kind: 'pure',
      arity: 1,
      evaluate: (x) => {
        try {
          mem!.allocate('f64', 1)
        } catch (e) {
          err = e
        }
        return x!
      },
    })
    const m = compileModule(parse({ text: 'fn g(y: f64, x: f64) { y += probe(x) }', name: 't' }), {
      registry: reg,
      backend: 'wasm',
    })
    mem = m.g!.core.resident
    m.g!(0, 2)
    expect(String(err)).toMatch(/under way/)
  })

  it('are shared by the programs of one backend: in place in each, given back when a program is disposed', () => {
    const reg = registerNumbers(createRegistry().registerBackend(createWasmBackend()))
    const build = (text: string) => compileModule(parse({ text, name: 'shared' }), { registry: reg, backend: 'wasm' })
    const a = build('fn f(y: f64[], x: f64[]) { for i in 0..len(x) { y[i] += x[i] } }')
    // g fails (an ancilla that is not zero at its deallocation) after it has added s to y[0]
    const b = build('fn g(y: f64[], s: f64) { y[0] += s\n t: f64 <- y[1]\n t -> 0.0 }')
    const y = a.f!.core.resident!.allocate('f64', 3)
    const x = a.f!.core.resident!.allocate('f64', 3)
    x.array.set([1, 2, 3])
    a.f!(y.array, x.array)
    expect(y.array.buffer).toBe(b.g!.core.resident!.allocate('f64', 1).array.buffer)
    // in place in b as well: the failed call leaves y part-updated, as it does a resident array
    // of b's own, where a host array is left as it was passed
    // (the compiled core: the Tenet function restores its arguments after a failed call)
    expect(() => b.g!.core(y.array, 10)).toThrow(InvertibilityError)
    expect(Array.from(y.array)).toEqual([11, 2, 3])
    const host = new Float64Array([1, 2, 3])
    expect(() => b.g!.core(host, 10)).toThrow(InvertibilityError)
    expect(Array.from(host)).toEqual([1, 2, 3])
    // disposing a gives its blocks back (a later allocation reuses them); b goes on working
    const at = y.array.byteOffset
    ;(a as unknown as { dispose(): void }).dispose()
    expect(() => y.array).toThrow(/disposed/)
    const z = b.g!.core.resident!.allocate('f64', 3)
    expect([at, at + 32]).toContain(z.array.byteOffset)
    b.g!.inverse(z.array, 0)
    // another backend has a memory of its own
    const c = compileModule(parse({ text: 'fn h(y: f64[]) { y[0] += 1.0 }', name: 'own' }), {
      registry: registerNumbers(createRegistry().registerBackend(createWasmBackend())),
      backend: 'wasm',
    })
    expect(c.h!.core.resident!.allocate('f64', 1).array.buffer).not.toBe(z.array.buffer)
  })
})

describe('the module', () => {
  it('names its functions (stack traces and profiles show them)', () => {
    let stack = ''
    const probe = (x: number) => {
      stack = new Error().stack ?? ''
      return x
    }
    const text = 'fn named_fn(y: f64, x: f64) { y += exp(x) * ${0}(x) }'
    const m = compileModule(parse({ text, name: 'names' }, [probe]), { registry: registry(), backend: 'wasm' })
    expect(m.named_fn!(0, 1)).toEqual([Math.E, 1])
    // the function and the thunk the wrapper calls (frames without names read \`wasm-function[k]\`)
    expect(stack).toMatch(/at named_fn \(wasm/)
    expect(stack).toMatch(/at named_fn \(call\) \(wasm/)
  })
})

describe('host arrays', () => {
  it('are copied in and out at every size (a loop up to 64 elements, `set` beyond), call after call', () => {
    const src = `fn f(y: f64[], x: f32[], n: i32[], b: bool[], s: f64) {
      for i in 0..len(y) {
        y[i] += f64(x[i]) * s + f64(n[i])
        if (b[i], ~) { y[i] += 1.0 }
        n[i] += 1
      }
    }`
    const wasm = compile(src, 'wasm', false).f!.core
    const cpu = compile(src, 'cpu', false).f!.core
    for (const len of [0, 1, 2, 63, 64, 65, 200]) {
      const make = () => ({
        y: Float64Array.from({ length: len }, (_, i) => i / 3),
        x: Float32Array.from({ length: len }, (_, i) => 1.5 - i),
        n: Int32Array.from({ length: len }, (_, i) => i * 7 - 9),
        b: Uint8Array.from({ length: len }, (_, i) => (i % 3 === 0 ? 1 : 0)),
      })
      const w = make(),
        c = make()
      // the same host arrays three times (their contents change in between), then fresh ones
      for (let k = 0; k < 3; k++) {
        w.x[0] = c.x[0] = k
        wasm(w.y, w.x, w.n, w.b, 0.25 + k)
        cpu(c.y, c.x, c.n, c.b, 0.25 + k)
      }
      expect(Array.from(w.y)).toEqual(Array.from(c.y))
      expect(Array.from(w.n)).toEqual(Array.from(c.n))
      // arrays it only reads are not written back
      expect(Array.from(w.x)).toEqual(Array.from(c.x))
      const fresh = make()
      wasm(fresh.y, fresh.x, fresh.n, fresh.b, 1)
      const ref = make()
      cpu(ref.y, ref.x, ref.n, ref.b, 1)
      expect(Array.from(fresh.y)).toEqual(Array.from(ref.y))
    }
  })

  it('is used in place once it is a resident array, after being passed as a host array', () => {
    const f = compile('fn f(y: f64[], s: f64) { for i in 0..len(y) { y[i] += s } }', 'wasm', false).f!.core
    const host = new Float64Array(3)
    f(host, 1)
    f(host, 1)
    const r = f.resident!.allocate('f64', 3)
    f(r.array, 2)
    f(host, 1)
    f(r.array, 2)
    expect(Array.from(host)).toEqual([3, 3, 3])
    expect(Array.from(r.array)).toEqual([4, 4, 4])
  })
})

describe('scalar results', () => {
  it('of parameters a function never writes are its arguments as the call converts them, both ways', () => {
    const m = compile('fn f(y: f64, n: i32, s: f32, x: f64, b: bool) { y += x * f64(s) + f64(n) }', 'wasm', false)
    const f = m.f!.core
    const y = 1 + 1.5 * Math.fround(0.1) + 2
    f(1, 2.7, 0.1, 1.5, true)
    expect(Array.from(f.results)).toEqual([y, 2, Math.fround(0.1), 1.5, 1])
    const g = m.f!.inverse.core
    g(y, -3.2, 0.1, 1.5, false)
    expect(Array.from(g.results)).toEqual([y - 1.5 * Math.fround(0.1) + 3, -3, Math.fround(0.1), 1.5, 0])
  })

  it('are read after the memory grew under a function without arrays (another program’s call detached its views)', () => {
    const registry = registerNumbers(createRegistry().registerBackend(createWasmBackend()))
    const build = (text: string) =>
      compileModule(parse({ text, name: 'test' }), { registry, backend: 'wasm', checks: false })
    const scalar = build('fn f(y: f64, x: f64) { y += x * x }').f!.core
    const arrays = build('fn s(out: f64, x: f64[]) { for i in 0..len(x) { out += x[i] } }').s!.core
    scalar(1, 3)
    expect(scalar.results[0]).toBe(10)
    arrays(0, new Float64Array(100_000).fill(1))
    expect(arrays.results[0]).toBe(100_000)
    scalar(2, 4)
    expect(Array.from(scalar.results)).toEqual([18, 4])
  })
})
