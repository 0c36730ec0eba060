/**
 * Failed run-time checks trap (see the code generator's \`fail\`): the function records the check's
 * site and values in globals and executes \`unreachable\`, and the wrapper (or the caller of a
 * direct entry) turns the trap into the check's error. Each failure is compared with the reference
 * interpreter's (code, message with its values, location); after a failure the module runs
 * correctly again and does not blame a later, unrelated error on the old check. With checks on,
 * i32 → f64 conversions are emitted by their bits (\`i32ToF64\`): exact for every i32.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, TenetError, type DirectEntry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { wasmBackend } from './index.js'

const registry = () => createRegistry().registerBackend(wasmBackend).registerBackend(interpreterBackend)
const compile = (text: string, backend: string, checks = true, hosts: unknown[] = []): TenetModule =>
  compileModule(parse({ text, name: 'traps' }, hosts), { registry: registry(), backend, checks })

// a loop's post-condition that fails in its third iteration (n ≥ 3), a tolerance deallocation in a
// loop body that fails at the first element that is not 1, an exact i32 deallocation that fails
// with the value held, and a failure inside a callee (its site is the callee's)
const source = `
fn post(out: f64, n: i32) {
  k: i32 <- 0
  while (k < n, k != 0 && k < 3) { k += 1 }
  out += f64(k)
  ~{ while (k < n, k != 0 && k < 3) { k += 1 } }
  k -> 0
}
fn ones(x: f64[], s: f64) {
  for i in 0..len(x) {
    t <- 0.0
    t += x[i]
    x[i] += t * s
    x[i] -= t * s
    t -> 1.0
  }
}
fn seven(out: i32, k: i32) {
  j: i32 <- 0
  j += k
  out += j
  j -> 7
}
fn outer(x: f64[], s: f64) {
  for r in 0..2 { ones(x, s) }
}`

/** The call's outcome: its results, or its error as \`code | message | line:column\`. */
function outcome(m: TenetModule, name: string, args: unknown[]): string {
  const f = m[name]!
  let out = ''
  const err = raisedError(() => {
    const r = f(...args.map((a) => (a instanceof Float64Array ? a.slice() : a)))
    out = JSON.stringify(r, (_, v) => (v instanceof Float64Array ? Array.from(v) : v))
  })
  return err === 'no error' ? out : err
}

const calls: Array<[string, unknown[]]> = [
  ['post', [0, 2]],
  ['post', [0, 5]],
  ['post', [0.5, 1]],
  ['ones', [Float64Array.of(1, 1, 1), 3]],
  ['ones', [Float64Array.of(1, 1, 2.5, 1), 3]],
  ['ones', [Float64Array.of(-0.25), 0]],
  ['seven', [0, 7]],
  ['seven', [0, -123456]],
  ['outer', [Float64Array.of(1, 1), 2]],
  ['outer', [Float64Array.of(1, 4), 2]],
]

describe('failed checks trap, and the wrapper raises their errors', () => {
  it('each failure as the interpreter raises it (code, message with its values, location), interleaved with passing calls', () => {
    const reference = compile(source, 'interpreter')
    const m = compile(source, 'wasm')
    const expected = calls.map(([name, args]) => outcome(reference, name, args))
    // (the failures are real: a regression that let them pass would not compare equal)
    expect(expected.filter((e) => e.startsWith('runtime/')).length).toBe(5)
    for (let round = 0; round < 2; round++)
      expect(calls.map(([name, args]) => outcome(m, name, args))).toEqual(expected)
  })

  it('after a failed check, an error a host function throws reaches the caller as it is', () => {
    const text = 'fn h(x: f64[], k: i32) {\n  t <- 0.0\n  t += x[0]\n  @safe ${0}(k)\n  t -> 1.0\n}'
    const boom = new Error('host says no')
    const m = compile(text, 'wasm', true, [
      (k: number) => {
        if (k === 1) throw boom
      },
    ])
    expect(raisedError(() => m.h!(Float64Array.of(2), 0))).toMatch(/^runtime\/dealloc \| [\s\S]*holds 2[\s\S]* \| 5:3$/)
    let caught: unknown
    try {
      m.h!(Float64Array.of(1), 1)
    } catch (e) {
      caught = e
    }
    expect(caught).toBe(boom)
    expect(m.h!(Float64Array.of(1), 0)).toBeDefined()
  })

  it('an inner call that fails inside a host function fails the outer call with its own error, and both run again', () => {
    const text = 'fn g(x: f64[], k: i32) {\n  @safe ${0}(k)\n  t <- 0.0\n  t += x[0]\n  t -> 1.0\n}'
    let m: TenetModule
    const inner = Float64Array.of(5)
    m = compile(text, 'wasm', true, [
      (k: number) => {
        if (k === 1) m.g!(inner, 0)
      },
    ])
    const e = (() => {
      try {
        m.g!(Float64Array.of(1), 1)
      } catch (err) {
        return err as TenetError
      }
      return undefined
    })()
    expect(TenetError.isInstance(e)).toBe(true)
    expect(e!.code).toBe('runtime/dealloc')
    expect(e!.message).toContain('holds 5')
    expect(e!.line).toBe(5)
    expect(raisedError(() => m.g!(Float64Array.of(1), 0))).toBe('no error')
    expect(raisedError(() => m.g!(Float64Array.of(3), 0))).toMatch(/^runtime\/dealloc \| [\s\S]*holds 3[\s\S]* \| 5:3$/)
  })

  it('a direct entry turns the trap into the same error as the wrapper', () => {
    const m = compile(source, 'wasm')
    const core = m.seven!.core as unknown as { direct?: DirectEntry }
    const d = core.direct!
    expect(d).toBeDefined()
    let direct = ''
    try {
      d.call(0, 5)
    } catch (e) {
      const err = d.error(e) as TenetError
      direct = `${err.code} | ${err.message} | ${err.line}:${err.column}`
    }
    expect(direct).toBe(raisedError(() => m.seven!(0, 5)))
    expect(direct).toMatch(/^runtime\/dealloc/)
  })
})

describe('i32 → f64 with checks on (by the bits of 1.5·2⁵² + k)', () => {
  it('is exact for every i32, 0 converting to +0, as without checks', () => {
    const text =
      'fn conv(out: f64, k: i32) { out += f64(k) }\nfn prod(out: f64, k: i32, j: i32) { out += f64(k) * f64(j + 1) }'
    const on = compile(text, 'wasm', true)
    const off = compile(text, 'wasm', false)
    const ks = [-(2 ** 31), -(2 ** 31) + 1, -123456789, -1, 0, 1, 2, 4096, 123456789, 2 ** 31 - 2, 2 ** 31 - 1]
    for (const k of ks) {
      const a = on.conv!(-0, k) as number[]
      const b = off.conv!(-0, k) as number[]
      expect(Object.is(a[0], k === 0 ? 0 : k)).toBe(true)
      expect(Object.is(a[0], b[0])).toBe(true)
      for (const j of [-(2 ** 31), -2, 0, 7, 2 ** 31 - 2]) {
        const p = on.prod!(0, k, j) as number[]
        // (0 + k·(j + 1): a product −0 adds to +0)
        expect(p[0]).toBe(0 + k * (j + 1))
        expect(Object.is(p[0], (off.prod!(0, k, j) as number[])[0])).toBe(true)
      }
    }
  })
})
