/**
 * The public call generated per parameter list (`fast-call.ts`): where it is used, that it gives
 * what the core gives, the general wrapper where code cannot be generated, and what it throws
 * (the aliasing rule, a failed run with checks on and off, a stack overflow, a disposed module).
 */
import { describe, expect, it } from 'vitest'
import { InvertibilityError, TenetError, createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from './index.js'

const registry = createRegistry().registerBackend(interpreterBackend)
type M = Record<string, any>
const compile = (text: string, checks: boolean, hosts: unknown[] = []): M =>
  compileModule(parse({ text, name: 'fast' }, hosts), { registry, backend: 'interpreter', checks }) as M

/** What `f` throws: a TenetError's code and message, or the constructor name of anything else. */
function thrown(f: () => unknown): { code: string; message: string; error: unknown } {
  try {
    f()
  } catch (e) {
    return {
      code: TenetError.isInstance(e) ? (e as TenetError).code : (e as Error).constructor.name,
      message: (e as Error).message,
      error: e,
    }
  }
  throw new Error('expected an error, but none was thrown')
}

const source = `fn f(y: f64, x: f64, b: bool, a: f64[], k: i32) {
  if (b) { y += x * a[0] }
  k += 1
}
fn h(y: f64[], x: f64[], k: i32) { y[k] += x[0] }`

describe('the generated public call', () => {
  it('is used where a call only checks its arguments: it declares its parameters (the general wrapper takes a rest array)', () => {
    const off = compile(source, false)
    expect([off.f.length, off.f.inverse.length, off.h.length, off.h.inverse.length]).toEqual([5, 5, 3, 3])
    // checks on too (a written array is snapshotted for the restore)
    const on = compile(source, true)
    expect([on.f.length, on.h.length, on.h.inverse.length]).toEqual([5, 3, 3])
    // a module with a host function that may call Tenet again: the general wrapper notes the running call
    const host = compile('fn g(y: f64, x: f64) { y += ${0}(x) }', false, [(v: number) => v])
    expect(host.g.length).toBe(0)
  })

  it('gives what the core gives: new scalars, bools as booleans, the arrays passed', () => {
    for (const checks of [false, true]) {
      const m = compile(source, checks)
      const a = Float64Array.of(3)
      const r = m.f(1.5, 2, true, a, 7)
      expect(r).toEqual([7.5, 2, true, a, 8])
      expect(r[3]).toBe(a)
      expect(m.f.inverse(...r)).toEqual([1.5, 2, true, a, 7])
      expect(m.f(1.5, 2, false, a, -1)).toEqual([1.5, 2, false, a, 0])
    }
  })

  it('without code generation (a content security policy), the general wrapper does the same work', () => {
    const saved = globalThis.Function
    let m: M
    try {
      globalThis.Function = function blocked() {
        throw new EvalError('code generation from strings disallowed for this context')
      } as unknown as FunctionConstructor
      m = compile(source, false)
    } finally {
      globalThis.Function = saved
    }
    expect(m.f.length).toBe(0)
    const a = Float64Array.of(3)
    expect(m.f(1.5, 2, true, a, 7)).toEqual([7.5, 2, true, a, 8])
    expect(thrown(() => m.f(1, 2, true, a)).code).toBe('call/arity')
  })

  it('checks its arguments as the general wrapper does', () => {
    const m = compile(source, false)
    const a = Float64Array.of(3)
    expect(thrown(() => m.f(1, 2, true, a)).code).toBe('call/arity')
    expect(thrown(() => m.f(1, 2, true, a, 7, 8)).code).toBe('call/arity')
    expect(thrown(() => m.f('1', 2, true, a, 7)).message).toMatch(/^argument 1 \(`y: f64`\) of `f`/)
    expect(thrown(() => m.f(1, 2, 1, a, 7)).message).toMatch(/^argument 3 \(`b: bool`\) of `f`/)
    expect(thrown(() => m.f(1, 2, true, [3], 7)).message).toMatch(/^argument 4 \(`a: f64\[\]`\) of `f`/)
    expect(thrown(() => m.f(1, 2, true, new Float32Array(1), 7)).code).toBe('call/type')
    expect(thrown(() => m.f.inverse(1, 2, true, a)).message).toMatch(/`f\.inverse`/)
  })

  it('the aliasing rule: a written array overlapping another array argument is call/overlap, every time', () => {
    const m = compile(source, false)
    const buf = new Float64Array(4)
    const x = Float64Array.of(5)
    expect(m.h(buf, x, 0)[0]).toBe(buf)
    expect(buf[0]).toBe(5)
    const e = thrown(() => m.h(buf.subarray(0, 2), buf.subarray(1, 3), 0))
    expect(e.code).toBe('call/overlap')
    // the same arrays again (the fast path remembers only arrays found apart)
    const y = buf.subarray(0, 2),
      z = buf.subarray(1, 3)
    expect(thrown(() => m.h(y, z, 0)).code).toBe('call/overlap')
    expect(thrown(() => m.h(y, z, 0)).code).toBe('call/overlap')
    expect(buf[0]).toBe(5)
    // apart again: runs
    m.h(y, x, 1)
    expect(buf[1]).toBe(5)
  })

  it('a failed run: with checks off the note that arrays may be partly updated, with checks on the restored flag', () => {
    const off = compile(source, false)
    const e = thrown(() => off.h(new Float64Array(1), Float64Array.of(1), 3))
    expect(e.message).toMatch(/array arguments may be partially updated: run-time checks are off/)
    const on = compile('fn d(y: f64, x: f64) {\n  t <- 0.0\n  t += x\n  y += t\n  t -> 0.0\n}', true)
    expect(on.d.length).toBe(2)
    const f = thrown(() => on.d(0, 2))
    expect(InvertibilityError.isInstance(f.error)).toBe(true)
    expect((f.error as InvertibilityError).restored).toBe(true)
    expect(f.message).not.toMatch(/partially updated/)
  })

  it('with checks on, a failed call puts every written array back (typed arrays and stacks), call after call', () => {
    const on = compile(
      `fn w(y: f64[], z: i32[], x: f64[], k: i32) {
  y[0] += x[0]
  z[0] += 1
  y[k] += 1.0
}
fn p(s: stack<f64>, t: f64[], v: f64) {
  t[0] += v
  push(s, v)
  t[1] += v
}`,
      true,
    )
    expect([on.w.length, on.p.length]).toEqual([4, 3])
    const y = Float64Array.of(1, 2),
      z = Int32Array.of(5),
      x = Float64Array.of(10)
    expect(on.w(y, z, x, 1)[0]).toBe(y)
    expect([...y, ...z]).toEqual([11, 3, 6])
    for (let r = 0; r < 3; r++) {
      const e = thrown(() => on.w(y, z, x, 2))
      expect(e.code).toBe('runtime/out-of-bounds')
      expect(e.message).toMatch(/the array arguments were restored to their values before the call/)
      expect([...y, ...z]).toEqual([11, 3, 6])
    }
    // a snapshot of another length and type: a fresh one
    const y3 = Float64Array.of(7, 8, 9)
    expect(thrown(() => on.w(y3, Int32Array.of(1), x, 3)).code).toBe('runtime/out-of-bounds')
    expect([...y3]).toEqual([7, 8, 9])
    const s = [1.5],
      t = Float64Array.of(0)
    expect(thrown(() => on.p(s, t, 2)).code).toBe('runtime/out-of-bounds')
    expect([s, [...t]]).toEqual([[1.5], [0]])
  })

  it('with checks on, the restore gives back the bits: a float32 signalling NaN and a float64 NaN payload', () => {
    const on = compile(
      'fn w(y: f32[], z: f64[], x: f32[], k: i32) {\n  y[1] += x[0]\n  z[1] += 1.0\n  y[k] += x[0]\n}',
      true,
    )
    expect(on.w.length).toBe(4)
    const y = new Float32Array(3),
      z = new Float64Array(2)
    new Uint32Array(y.buffer)[0] = 0x7f800001 // signalling: a copy through a double would quiet it
    new Uint32Array(z.buffer)[1] = 0x7ff80000
    new Uint32Array(z.buffer)[0] = 0x123
    const bits = () => [...new Uint32Array(y.buffer), ...new Uint32Array(z.buffer)]
    const before = bits()
    for (let r = 0; r < 3; r++) {
      expect(thrown(() => on.w(y, z, Float32Array.of(2), 7)).code).toBe('runtime/out-of-bounds')
      expect(bits()).toEqual(before)
    }
  })

  it('a recursion too deep for the stack is runtime/stack-overflow naming the function', () => {
    const text =
      'fn count(y: f64, n: i32) {\n  if (n > 0, n > 0) {\n    y += 1.0\n    m <- n - 1\n    count(y, m)\n    m -> n - 1\n  }\n}'
    for (const checks of [false, true]) {
      const m = compile(text, checks)
      expect(m.count.length).toBe(2)
      expect(m.count(0, 100)).toEqual([100, 100])
      const e = thrown(() => m.count(0, 1e6))
      expect(e.code).toBe('runtime/stack-overflow')
      expect(e.message).toMatch(/^`count`: the recursion is too deep for the JavaScript stack/)
      expect(m.count(0, 3)).toEqual([3, 3])
    }
  })

  it('a call of a disposed module is call/disposed', () => {
    const m = compile(source, false)
    m.dispose()
    expect(thrown(() => m.f(1, 2, true, Float64Array.of(3), 7)).code).toBe('call/disposed')
  })
})
