/**
 * Where the `insert-checks` pass places the run-time checks, and what `hoist-bounds` does to
 * them, seen from outside: each program fails (or runs) alike on the interpreter, the cpu backend
 * and the wasm backend. (The error parity of every catalog entry is part of the conformance
 * suite, `@tenet/testing`.)
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { besselSource } from '@tenet/ad'
import { createRegistry, rev, TenetError, type TenetModule } from './index.js'

const registry = createRegistry().registerBackend(wasmBackend)
const engines = {
  interpreter: rev.with({ backend: 'interpreter' }),
  cpu: rev.with({ backend: 'cpu' }),
  wasm: rev.with({ backend: 'wasm', registry }),
}
const compile = (tag: (typeof engines)[keyof typeof engines], src: string): TenetModule =>
  tag([src] as unknown as TemplateStringsArray)

/** `code | message` of what `f` throws (a TenetError with a location). */
function failure(f: () => unknown): string {
  try {
    f()
  } catch (e) {
    if (!TenetError.isInstance(e)) throw e
    expect((e as TenetError).line, (e as TenetError).message).toBeGreaterThan(0)
    return `${(e as TenetError).code} | ${(e as TenetError).message}`
  }
  throw new Error('expected a run-time error, but none was thrown')
}

/**
 * The same checks where the `insert-checks` pass must place them with care: an element written,
 * read by a call, read by a condition evaluated again after each iteration; the inverse of a
 * function (whose allocations are the forward's deallocations); a range changed in a reversed
 * loop; an access guarded by `&&` (that must not fail). Each fails (or runs) alike on all three.
 */
const placed: Record<string, { src: string; call: (m: TenetModule) => unknown; fails: boolean }> = {
  'out of bounds: a written element': {
    src: 'fn f(x: f64[], i: i32) { x[i] += 1.0 }',
    call: (m) => m.f!(new Float64Array(2), -1),
    fails: true,
  },
  'out of bounds: an argument of a call': {
    src: 'fn g(y: f64) { y += 1.0 }\nfn f(x: f64[], i: i32) { g(x[i]) }',
    call: (m) => m.f!(new Float64Array(2), 2),
    fails: true,
  },
  "out of bounds: a while's condition, after an iteration": {
    src: 'fn f(x: i32[], i: i32) { while (x[i] < 3, i > 0) { i += 1 } }',
    call: (m) => m.f!(Int32Array.from([0, 1]), 0),
    fails: true,
  },
  "out of bounds: an if's post-condition": {
    src: 'fn f(x: f64[], i: i32) { if (i > 0, x[i] > 0.0) { x[0] += 1.0 } }',
    call: (m) => m.f!(new Float64Array(2), 4),
    fails: true,
  },
  'out of bounds: guarded by && (no error)': {
    src: 'fn f(y: f64, x: f64[], i: i32) { if (i < 2 && x[i] > 0.0, ~) { y += 1.0 } }',
    call: (m) => m.f!(0, new Float64Array(2), 7),
    fails: false,
  },
  'dealloc: in the inverse (the forward allocates)': {
    src: 'fn f(y: f64, x: f64) {\n  t <- x\n  y += t\n  t -> y\n}',
    call: (m) => m.f!.inverse(5, 1),
    fails: true,
  },
  'dealloc: a bool ancilla': {
    src: 'fn f(y: f64, b: bool) {\n  t <- false\n  t ^= b\n  t -> false\n}',
    call: (m) => m.f!(0, true),
    fails: true,
  },
  'zero factor: `/=` in the inverse of `*=`': {
    src: 'fn f(y: f64, x: f64) { y *= x }',
    call: (m) => m.f!.inverse(1, 0),
    fails: true,
  },
  'loop range: changed in the inverse (a reversed loop)': {
    src: 'fn f(y: f64, n: i32) { for i in 0..n by 2 { n -= 1 } }',
    call: (m) => m.f!.inverse(0, 5),
    fails: true,
  },
  'post-condition: in a called function': {
    src: 'fn g(x: f64) { if (x > 0.0, ~) { x -= 5.0 } }\nfn f(x: f64) { g(x) }',
    call: (m) => m.f!(1),
    fails: true,
  },
  '@unchecked: no check inside (no error)': {
    src: 'fn f(y: f64, x: f64) { @unchecked { y *= x } }',
    call: (m) => m.f!(1, 0),
    fails: false,
  },
}

describe('run-time checks where the pass places them: the same on every engine', () => {
  for (const [name, c] of Object.entries(placed)) {
    it(name, () => {
      const got: Record<string, string> = {}
      for (const [engine, tag] of Object.entries(engines)) {
        const m = compile(tag, c.src)
        got[engine] = c.fails ? failure(() => c.call(m)) : JSON.stringify(c.call(m))
      }
      const first = Object.values(got)[0]!
      if (c.fails) expect(first.split(' | ')[0]).toMatch(/^runtime\//)
      for (const [engine, g] of Object.entries(got)) expect(g, engine).toBe(first)
    })
  }
})

/**
 * Loops whose bounds checks the cpu and wasm backends hoist (`hoist-bounds`): a test before the
 * loop chooses the loop without those checks, where they all hold, or the loop as written, every
 * access checked in its iteration, where one does not. So a failing loop fails as the reference
 * interpreter's does, everywhere: the same error (code, message, location), in the same
 * iteration, after what the iterations before it did (a host function sees them), and where
 * another check fails in an earlier iteration, that one.
 */
describe('hoisted bounds checks: the reference’s error, in the same iteration', () => {
  /** Per engine: the error, and the loop variable's values a host function saw before it. */
  const run = (parts: string[], call: (m: TenetModule, x: Float64Array) => unknown) => {
    const out: Record<string, { error: string; seen: number[] }> = {}
    for (const [engine, tag] of Object.entries(engines)) {
      const seen: number[] = []
      const m = tag(parts as unknown as TemplateStringsArray, (i: number) => void seen.push(i))
      out[engine] = { error: failure(() => call(m, Float64Array.from([1, 2, 3]))), seen }
    }
    return out
  }
  const loop = (index: string) => [
    'fn f(x: f64[], n: i32) { for i in 0..n {\n  @safe ',
    `(i)\n  x[${index}] += 1.0\n} }`,
  ]

  it('the first end out of range: the same message everywhere', () => {
    const got = run(loop('i - 1'), (m, x) => m.f!(x, 2))
    expect(got.interpreter!.error).toContain('index -1 is out of bounds for `x` (length 3)')
    expect(got.cpu).toEqual(got.interpreter)
    expect(got.wasm).toEqual(got.interpreter)
  })

  it('a reversed loop (an inverse) visits its last value first', () => {
    const got = run(loop('i'), (m, x) => m.f!.inverse(x, 5))
    expect(got.interpreter!.error).toContain('index 4 is out of bounds')
    expect(got.cpu).toEqual(got.interpreter)
    expect(got.wasm).toEqual(got.interpreter)
  })

  it('the far end out of range: the same error, in the iteration that reaches it', () => {
    const got = run(loop('i'), (m, x) => m.f!(x, 5))
    expect(got.interpreter).toEqual({
      error: expect.stringContaining('runtime/out-of-bounds | index 3 is out of bounds for `x` (length 3)'),
      seen: [0, 1, 2, 3],
    })
    expect(got.cpu).toEqual(got.interpreter)
    expect(got.wasm).toEqual(got.interpreter)
  })

  it('another check failing in an earlier iteration fails first: the Bessel batch, `out` shorter than `z`, ν = 13', () => {
    const src = `${besselSource}
fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i]) }
}`
    const got: Record<string, string> = {}
    for (const [engine, tag] of Object.entries(engines))
      got[engine] = failure(() => compile(tag, src).batch!(new Float64Array(2), 13, Float64Array.from([0.5, 1, 2, 3])))
    // (13! wraps in i32: the first iteration fails, before any index of out is out of range)
    expect(got.interpreter).not.toMatch(/^runtime\/out-of-bounds/)
    expect(got.cpu).toBe(got.interpreter)
    expect(got.wasm).toBe(got.interpreter)
    // and with ν = 2, the index out of range, in the third iteration
    for (const [engine, tag] of Object.entries(engines))
      got[engine] = failure(() => compile(tag, src).batch!(new Float64Array(2), 2, Float64Array.from([0.5, 1, 2, 3])))
    expect(got.interpreter).toContain('runtime/out-of-bounds | index 2 is out of bounds for `out` (length 2)')
    expect(got.cpu).toBe(got.interpreter)
    expect(got.wasm).toBe(got.interpreter)
  })
})

describe('hoisted bounds checks never miss an error nor add one', () => {
  it('loops of every direction and affine index: the same outcome on all three engines', () => {
    const shapes = [
      'for i in a..b { x[i] += 1.0 }',
      'for i in a..=b { x[i] += 1.0 }',
      'for i in a..b by -1 { x[i] += 1.0 }',
      'for i in a..=b by -1 { x[i] += 1.0 }',
      'for i in a..b { x[2 * i + k] += 1.0 }',
      'for i in a..b { x[k - i] += 1.0 }',
      'for i in a..b { x[i * 3 - k] += 1.0 }',
      'for i in a..b { for j in a..b { x[i + j] += 1.0 } }',
      'for i in a..b { x[k] += 1.0 }',
      'for i in reverse a..b { x[i + k] += 1.0 }',
    ]
    let failures = 0
    for (const shape of shapes) {
      const src = `fn f(x: f64[], a: i32, b: i32, k: i32) { ${shape} }`
      const ms = Object.entries(engines).map(([e, tag]) => [e, compile(tag, src)] as const)
      for (const a of [-1, 0, 2, 5])
        for (const b of [-1, 0, 3, 6])
          for (const k of [-2, 0, 3])
            for (const inverse of [false, true]) {
              const outcome = ms.map(([, m]) => {
                const x = new Float64Array(5)
                try {
                  ;(inverse ? m.f!.inverse : m.f!)(x, a, b, k)
                  return `ok ${[...x].join(',')}`
                } catch (e) {
                  failures++
                  const t = e as TenetError
                  return `${t.code} | ${t.message} | ${t.line}:${t.column}`
                }
              })
              expect(new Set(outcome).size, `${shape} a=${a} b=${b} k=${k}${inverse ? ' (inverse)' : ''}`).toBe(1)
            }
    }
    // the grid has loops out of range as well as in range
    expect(failures).toBeGreaterThan(100)
  })

  it('another check in the loop (a zero factor at x[2] = 0): the error of whichever fails first, on all three engines', () => {
    const shapes = [
      'for i in a..b { y[0] /= x[i]\n x[i + k] += 1.0 }',
      'for i in a..b by -1 { x[k - i] += 1.0\n y[0] *= x[i] }',
      'for i in a..b { for j in 0..2 { y[j] /= x[i]\n x[2 * i + j + k] += 1.0 } }',
    ]
    const seen = new Set<string>()
    for (const shape of shapes) {
      const src = `fn f(x: f64[], y: f64[], a: i32, b: i32, k: i32) { ${shape} }`
      const ms = Object.entries(engines).map(([e, tag]) => [e, compile(tag, src)] as const)
      for (const a of [-1, 0, 1, 4])
        for (const b of [0, 3, 5, 7])
          for (const k of [-1, 0, 2])
            for (const inverse of [false, true]) {
              const outcome = ms.map(([, m]) => {
                const x = Float64Array.from([1, 2, 0, 4, 8, 1, 1])
                const y = Float64Array.from([1, 1])
                try {
                  ;(inverse ? m.f!.inverse : m.f!)(x, y, a, b, k)
                  return `ok ${[...x].join(',')} ${[...y].join(',')}`
                } catch (e) {
                  const t = e as TenetError
                  return `${t.code} | ${t.message} | ${t.line}:${t.column}`
                }
              })
              expect(
                new Set(outcome).size,
                `${shape} a=${a} b=${b} k=${k}${inverse ? ' (inverse)' : ''}: ${outcome.join(' / ')}`,
              ).toBe(1)
              seen.add(outcome[0]!.split(' | ')[0]!)
            }
    }
    // both errors occur, and runs that pass
    expect([...seen].some((c) => c.startsWith('ok'))).toBe(true)
    expect(seen).toContain('runtime/out-of-bounds')
    expect(seen).toContain('runtime/zero-factor')
  })
})
