/**
 * The host boundary's error parity: one mistake, one error code and one message, whatever entry
 * point sees it first — a call and its inverse on every backend, `gradient`, `grad` (the call and
 * the allocation-free `run`), `checkGrad`, `jvp`, `jacobian`, `hessian`, `hvp`, `taylor` and a
 * vjp rule.
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import {
  checkGrad,
  createRegistry,
  grad,
  gradient,
  hessian,
  hvp,
  jacobian,
  jvp,
  rev,
  taylor,
  TenetError,
  vjp,
  type TenetFunction,
} from './index.js'

const source = 'fn f(y: f64, x: f64[], n: i32, flag: bool) { for i in 0..n { if (flag) { y += x[i] * x[i] } } }'
const registry = createRegistry().registerBackend(wasmBackend)
const modules = {
  cpu: rev.with({ backend: 'cpu' })([source] as unknown as TemplateStringsArray),
  interpreter: rev.with({ backend: 'interpreter' })([source] as unknown as TemplateStringsArray),
  wasm: rev.with({ backend: 'wasm', registry })([source] as unknown as TemplateStringsArray),
}

/** The code and message of what `f` throws (fails when it throws nothing or not a TenetError). */
function error(f: () => unknown): string {
  try {
    f()
  } catch (e) {
    if (!TenetError.isInstance(e)) throw e
    return `${(e as TenetError).code}: ${(e as TenetError).message}`
  }
  throw new Error('expected an error, but none was thrown')
}

/** Every entry point, given a function and a bad argument list. */
function entryPoints(f: TenetFunction): Array<[string, (args: unknown[]) => unknown]> {
  return [
    ['call', (a) => f(...a)],
    ['gradient', (a) => gradient(f, a, { loss: 0 })],
    ['grad', (a) => grad(f, { loss: 0 })(...a)],
    ['grad.run', (a) => grad(f, { loss: 0 }).run(...a)],
    ['checkGrad', (a) => checkGrad(f, a, { loss: 0 })],
    ['jvp', (a) => jvp(f, a, { v: [0, new Float64Array(2), null, null] })],
    ['jacobian', (a) => jacobian(f, a)],
    ['hessian', (a) => hessian(f, a, { loss: 0 })],
    ['hvp', (a) => hvp(f, a, { loss: 0, v: [0, new Float64Array(2), null, null] })],
    ['taylor', (a) => taylor(f, a, { order: 2, direction: [0, new Float64Array(2), null, null] })],
    ['vjp rule', (a) => vjp(f)(...a)],
  ]
}

function detached(n: number): Float64Array {
  const a = new Float64Array(n)
  structuredClone(a.buffer, { transfer: [a.buffer] })
  return a
}

const mistakes: Array<[string, () => unknown[], RegExp]> = [
  [
    'too few arguments',
    () => [0, new Float64Array(2), 2],
    /^call\/arity: `f` takes 4 arguments \(y, x, n, flag\), got 3$/,
  ],
  [
    'a string for f64',
    () => ['0', new Float64Array(2), 2, true],
    /^call\/type: argument 1 \(`y: f64`\) of `f` must be a number, got a string$/,
  ],
  [
    'a Float32Array for f64[]',
    () => [0, new Float32Array(2), 2, true],
    /^call\/type: argument 2 \(`x: f64\[\]`\) of `f` must be a Float64Array, got a Float32Array$/,
  ],
  [
    'a plain array for f64[]',
    () => [0, [1, 2], 2, true],
    /^call\/type: argument 2 \(`x: f64\[\]`\) of `f` must be a Float64Array, got a Array$/,
  ],
  [
    'a number for bool',
    () => [0, new Float64Array(2), 2, 1],
    /^call\/type: argument 4 \(`flag: bool`\) of `f` must be a boolean, got a number$/,
  ],
  [
    'null for i32',
    () => [0, new Float64Array(2), null, true],
    /^call\/type: argument 3 \(`n: i32`\) of `f` must be a number, got null$/,
  ],
  [
    'a detached array',
    () => [0, detached(2), 2, true],
    /^call\/detached: argument 2 \(`x: f64\[\]`\) of `f` is a view of a detached ArrayBuffer/,
  ],
]

describe('the host boundary: one error per mistake at every entry point and on every backend', () => {
  for (const [backend, m] of Object.entries(modules)) {
    it(`${backend}: the same code and message everywhere`, () => {
      const f = m.f!
      for (const [what, args, want] of mistakes) {
        for (const [entry, call] of entryPoints(f)) {
          const got = error(() => call(args()))
          expect(got, `${what} through ${entry}`).toMatch(want)
        }
        // the inverse names itself
        expect(
          error(() => f.inverse(...args())),
          `${what} through the inverse`,
        ).toMatch(new RegExp(want.source.replace('`f` takes', '`f.inverse` takes')))
      }
    })
  }

  it('the right arguments pass every entry point', () => {
    const f = modules.cpu.f!
    const args = () => [0, Float64Array.from([1, 2]), 2, true]
    for (const [entry, call] of entryPoints(f)) expect(() => call(args()), entry).not.toThrow()
  })
})

// the aliasing rule: an array the function writes shares no memory with another array argument
const aliasing = `fn h(s: f64, y: f64[], x: f64[]) {
  for i in 0..len(x) { y[i] += x[i] * x[i] }
  s += y[0] * 2.0
}`
const aliasingModules = {
  cpu: rev.with({ backend: 'cpu' })([aliasing] as unknown as TemplateStringsArray),
  interpreter: rev.with({ backend: 'interpreter' })([aliasing] as unknown as TemplateStringsArray),
  wasm: rev.with({ backend: 'wasm', registry })([aliasing] as unknown as TemplateStringsArray),
  'cpu, checks off': rev.with({ backend: 'cpu', checks: false })([aliasing] as unknown as TemplateStringsArray),
  'wasm, checks off': rev.with({ backend: 'wasm', registry, checks: false })([
    aliasing,
  ] as unknown as TemplateStringsArray),
}

describe('the host boundary: call/overlap at every entry point and on every backend', () => {
  const v = () => [0, new Float64Array(3), new Float64Array(3)]
  const entries = (f: TenetFunction): Array<[string, (args: unknown[]) => unknown]> => [
    ['call', (a) => f(...a)],
    ['gradient', (a) => gradient(f, a, { loss: 0 })],
    ['grad', (a) => grad(f, { loss: 0 })(...a)],
    ['grad.run', (a) => grad(f, { loss: 0 }).run(...a)],
    ['checkGrad', (a) => checkGrad(f, a, { loss: 0 })],
    ['jvp', (a) => jvp(f, a, { v: v() })],
    ['jacobian', (a) => jacobian(f, a)],
    ['hessian', (a) => hessian(f, a, { loss: 0 })],
    ['hvp', (a) => hvp(f, a, { loss: 0, v: v() })],
    ['taylor', (a) => taylor(f, a, { order: 2, direction: v() })],
    ['vjp rule', (a) => vjp(f)(...a)],
  ]
  const cases: Array<[string, () => unknown[]]> = [
    [
      'one array for y and x',
      () => {
        const y = Float64Array.of(1, 2, 3)
        return [0, y, y]
      },
    ],
    [
      'x a view of y shifted by one',
      () => {
        const b = Float64Array.of(1, 2, 3, 4)
        return [0, b.subarray(0, 3), b.subarray(1)]
      },
    ],
  ]
  const want =
    /^call\/overlap: arguments 2 \(`y: f64\[\]`\) and 3 \(`x: f64\[\]`\) of `h` share memory, and `h` writes `y`: an array a function writes must not overlap any other array argument \(pass a copy, e.g. `x.slice\(\)`\)$/
  for (const [backend, m] of Object.entries(aliasingModules)) {
    it(`${backend}: the same code and message everywhere, the caller's arrays untouched`, () => {
      const f = m.h!
      for (const [what, args] of cases) {
        for (const [entry, call] of entries(f)) {
          const a = args()
          const before = JSON.stringify(a.map((x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x)))
          expect(
            error(() => call(a)),
            `${what} through ${entry}`,
          ).toMatch(want)
          expect(
            JSON.stringify(a.map((x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x))),
            `${what} through ${entry}`,
          ).toBe(before)
        }
        expect(
          error(() => f.inverse(...args())),
          `${what} through the inverse`,
        ).toMatch(new RegExp(want.source.replace(/`h`/g, '`h.inverse`')))
        // apart: no error, and every entry point agrees with a call on copies
        const b = Float64Array.of(1, 2, 3, 4, 5, 6)
        const apart = [0, b.subarray(0, 3), b.subarray(3)]
        for (const [entry, call] of entries(f)) expect(() => call(apart), entry).not.toThrow()
      }
    })
  }
})

describe('the aliasing rule: arrays converted in place (ulog)', () => {
  // ulog arrays are encoded in place on entry and decoded on exit, even where the function only
  // reads them: a view overlapping one would have its shared elements encoded twice, or be read
  // encoded (review12 D3). The very same array for two ulog parameters is converted once.
  const src = `fn f(y: ulog, a: ulog[], b: ulog[]) { y *= a[1] * b[0] }
fn g(y: f64, a: ulog[], c: f64[]) { y += c[0] }`
  const code = (f: () => unknown): string => {
    try {
      f()
      return ''
    } catch (e) {
      return TenetError.isInstance(e) ? `${(e as TenetError).code}: ${(e as Error).message}` : String(e)
    }
  }
  // (the wasm backend compiles no ulog)
  for (const backend of ['interpreter', 'cpu'] as const) {
    const m = rev.with({ backend } as never)([src] as unknown as TemplateStringsArray)
    it(`${backend}: overlapping read-only ulog views are refused; the same array twice and apart views run`, () => {
      const buf = Float64Array.of(2, 3, 5)
      const err = code(() => m.f!(1, buf.subarray(0, 2), buf.subarray(1, 3)))
      expect(err).toMatch(
        /^call\/overlap: arguments 2 \(`a: ulog\[\]`\) and 3 \(`b: ulog\[\]`\) of `f` share memory, and `f` converts `a` in place/,
      )
      expect([...buf]).toEqual([2, 3, 5])
      // a ulog array and an f64 view of its memory: the f64 view would be read encoded
      expect(code(() => m.g!(0, buf.subarray(0, 2), buf.subarray(1, 3)))).toMatch(
        /^call\/overlap: arguments 2 \(`a: ulog\[\]`\) and 3 \(`c: f64\[\]`\)/,
      )
      expect(code(() => m.g!(0, buf, buf))).toMatch(/^call\/overlap:/)
      expect([...buf]).toEqual([2, 3, 5])
      const same = Float64Array.of(2, 3)
      expect(m.f!(1, same, same)[0] as number).toBeCloseTo(6, 9)
      expect([...same]).toEqual([2, 3])
      expect(m.f!(1, buf.subarray(0, 2), buf.subarray(2, 3))[0] as number).toBeCloseTo(15, 9)
      expect([...buf]).toEqual([2, 3, 5])
    })
  }
})
