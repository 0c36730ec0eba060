/**
 * The guarantees of the host boundary, on every engine (the interpreter, cpu and wasm): what a
 * failed call restores, reentrant calls, out-of-range indices without checks, the scope of
 * `@unchecked`, host functions' results, detached buffers and `dispose()`.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, TenetError, InvertibilityError } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { registerNumbers } from '@tenet/numbers'
import { wasmBackend } from './index.js'

const BACKENDS = ['interpreter', 'cpu', 'wasm'] as const
const registry = () =>
  registerNumbers(
    createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend),
  )
const compile = (text: string, backend: string, hosts: unknown[] = [], checks = true): TenetModule =>
  compileModule(parse({ text, name: 'boundary' }, hosts), { registry: registry(), backend, checks })

/** The error `run` throws (fails the test when it returns). */
function thrown(run: () => unknown): Error & { code?: string; line?: number; restored?: boolean } {
  try {
    run()
  } catch (e) {
    return e as Error
  }
  return expect.unreachable('expected an error') as never
}

/** A detached Float64Array of n elements (its buffer transferred away). */
function detached(n: number): Float64Array {
  const buffer = new ArrayBuffer(8 * n)
  const a = new Float64Array(buffer)
  structuredClone(buffer, { transfer: [buffer] })
  expect(a.length).toBe(0)
  return a
}

describe.each(BACKENDS)('the host boundary on %s', (backend) => {
  it('reentrancy: a callback that calls the same function does not corrupt the outer call’s restore', () => {
    // x[0] += 1, then the callback, then a check that fails unless x[0] ended at 101
    const src = 'fn f(x: f64[], k: i32) { x[0] += 1.0\n @safe ${0}()\n t <- 0.0\n t += x[0]\n t -> 101.0 }'
    let m: TenetModule
    const inner = new Float64Array([100, 200, 300])
    let depth = 0
    const callback = () => {
      if (depth++ === 0) m.f!(inner, 0)
    }
    m = compile(src, backend, [callback])
    const outer = new Float64Array([1, 2, 3])
    const e = thrown(() => m.f!(outer, 0))
    expect(e.code).toBe('runtime/dealloc')
    expect(e.restored).toBe(true)
    // before the fix the outer array was "restored" with the inner one's snapshot: [100, 200, 300]
    expect(Array.from(outer)).toEqual([1, 2, 3])
    expect(Array.from(inner)).toEqual([101, 200, 300])
    // and a failing inner call restores its own array while the outer one goes on and succeeds
    const failing = new Float64Array([7, 8, 9])
    let caught: unknown
    depth = 0
    const m2 = compile(src, backend, [
      () => {
        if (depth++ === 0) {
          try {
            m2.f!(failing, 0)
          } catch (err) {
            caught = err
          }
        }
      },
    ])
    const ok = new Float64Array([100, 0, 0])
    m2.f!(ok, 0)
    expect(Array.from(ok)).toEqual([101, 0, 0])
    expect((caught as TenetError).code).toBe('runtime/dealloc')
    expect(Array.from(failing)).toEqual([7, 8, 9])
  })

  it('without checks an index out of range never reads or writes another argument', () => {
    const m = compile(
      'fn g(x: f64[], y: f64[], i: i32) { x[i] += 1.0\n y[0] += 1.0 }\nfn r(x: f64[], y: f64[], i: i32) { y[1] += x[i] }',
      backend,
      [],
      false,
    )
    const x = new Float64Array(2),
      y = new Float64Array(2)
    if (backend === 'cpu') {
      // the cpu backend drops the write (a typed array ignores it) and reads NaN: y is never x's neighbour
      m.g!(x, y, 2)
      expect(Array.from(x)).toEqual([0, 0])
      expect(Array.from(y)).toEqual([1, 0])
      m.r!(x, y, 5)
      expect(y[1]).toBeNaN()
    } else {
      // the interpreter and wasm raise the bounds error even with checks off (before the fix,
      // wasm added 1 to y[0], the element after x in its memory, and copied it back)
      for (const [f, i] of [
        [m.g!, 2],
        [m.g!, -1],
        [m.r!, 2],
        [m.r!, 1 << 30],
      ] as const) {
        const e = thrown(() => f(x, y, i))
        expect(e.code).toBe('runtime/out-of-bounds')
        expect(e.message).toContain(`index ${i} is out of bounds for \`x\` (length 2)`)
      }
      expect(Array.from(y)).toEqual([0, 0])
    }
  })

  it('@unchecked covers the statements written inside it, not the functions they call (inlined or not)', () => {
    // `small` is small enough for the inliner, `large` is not: both keep their own checks
    const pad = Array.from({ length: 20 }, () => '  t += 1.0\n  t -= 1.0').join('\n')
    const src = `fn small(y: f64) { t <- 0.0\n t += y\n t -> 0.0 }
fn large(y: f64) {
  t <- 0.0
${pad}
  t += y
  t -> 0.0
}
fn callsSmall(y: f64) { @unchecked { small(y) } }
fn callsLarge(y: f64) { @unchecked { large(y) } }
fn uncallsSmall(y: f64) { @unchecked { ~small(y) } }
fn own(y: f64) { @unchecked { t <- 0.0\n t += y\n t -> 0.0 } }
fn callee(y: f64) { @unchecked { t <- 0.0\n t += y\n t -> 0.0 } }
fn callsUnchecked(y: f64) { callee(y) }`
    const m = compile(src, backend)
    for (const f of [m.callsSmall!, m.callsLarge!, m.uncallsSmall!]) {
      const e = thrown(() => f(1))
      expect(InvertibilityError.isInstance(e)).toBe(true)
      expect(e.code).toBe('runtime/dealloc')
    }
    // statements inside the block, and a callee's own block, are unchecked wherever it is called from
    expect(m.own!(1)).toEqual([1])
    expect(m.callsUnchecked!(1)).toEqual([1])
  })

  it('@safe runs a host function in both directions and ignores its value (even a BigInt)', () => {
    const seen: number[] = []
    const m = compile('fn h(y: f64) { y += 1.0\n @safe ${0}(y)\n @safe ${1}() }', backend, [
      (v: number) => {
        seen.push(v)
      },
      () => 10n,
    ])
    expect(m.h!(1)).toEqual([2])
    expect(m.h!.inverse(2)).toEqual([1])
    expect(seen).toEqual([2, 2])
    // an array argument reaches the host function as a typed array of its current values
    const arrays: number[][] = []
    const a = compile('fn h(y: f64, x: f64[], b: bool[]) { x[1] += y\n @safe ${0}(x, y, b) }', backend, [
      (x: Float64Array, y: number, b: Uint8Array) => {
        arrays.push([...x, y, ...b])
      },
    ])
    a.h!(2, new Float64Array([1, 1]), new Uint8Array([1, 0]))
    a.h!.inverse(2, new Float64Array([1, 3]), new Uint8Array([0, 1]))
    expect(arrays).toEqual([
      [1, 3, 2, 1, 0],
      [1, 3, 2, 0, 1],
    ])
  })

  it('a host function in an expression must return a number: anything else is runtime/host-result at the call', () => {
    for (const [value, shown] of [
      [10n, 'a bigint (10n)'],
      ['3', 'a string'],
      [undefined, 'undefined'],
      [null, 'null'],
    ] as const) {
      const m = compile('fn k(y: f64, x: f64[]) {\n  x[0] += 1.0\n  y += ${0}(1.0)\n}', backend, [() => value])
      const x = new Float64Array([5])
      const e = thrown(() => m.k!(0, x))
      expect(TenetError.isInstance(e)).toBe(true)
      expect(e.code).toBe('runtime/host-result')
      expect(e.message).toContain(`returned ${shown}`)
      expect(e.line).toBe(3)
      expect(Array.from(x)).toEqual([5])
    }
  })

  it('a detached ArrayBuffer argument is call/detached (an empty live array is fine)', () => {
    const m = compile('fn k(x: f64[], y: f64) { for i in 0..len(x) { x[i] += y } }', backend)
    const e = thrown(() => m.k!(detached(3), 1))
    expect(e.code).toBe('call/detached')
    expect(e.message).toContain('argument 1 (`x: f64[]`) of `k`')
    expect(m.k!(new Float64Array(0), 1)).toEqual([new Float64Array(0), 1])
  })

  it('dispose(): later calls, forwards and backwards, are call/disposed', () => {
    const m = compile('fn k(x: f64[], y: f64) { x[0] += y }', backend)
    const x = new Float64Array([1])
    m.k!(x, 2)
    ;(m as unknown as { dispose(): void }).dispose()
    for (const run of [() => m.k!(x, 1), () => m.k!.inverse(x, 1)]) expect(thrown(run).code).toBe('call/disposed')
    if (backend === 'wasm') expect(thrown(() => m.k!.core(x, 1)).code).toBe('call/disposed')
    expect(Array.from(x)).toEqual([3])
    // a second dispose does nothing
    ;(m as unknown as { dispose(): void }).dispose()
  })
})

describe.each(['interpreter', 'cpu'] as const)('fixed, ulog and tropical arrays on %s', (backend) => {
  const src = `fn fx(x: fixed[], y: fixed) { x[0] += y\n t: fixed <- 0.0\n t += x[1]\n t -> 5.0 }
fn ul(x: ulog[], y: ulog) { x[0] *= y\n t: ulog <- 1.0\n t *= x[1]\n t -> 5.0 }
fn tr(x: tropical[], y: tropical) { x[0] *= y\n t: tropical <- 0.0\n t *= x[1]\n t -> 5.0 }
fn touch(x: ulog[], y: ulog) { x[0] *= y }`

  it('a failed call gives the caller back exactly the values it passed', () => {
    const m = compile(src, backend)
    for (const name of ['fx', 'ul', 'tr']) {
      // values off every grid: a lossy conversion would show in the last bits
      const given = [0.1, 1 / 3, Math.PI / 7]
      const x = Float64Array.from(given)
      const e = thrown(() => m[name]!(x, 0.7))
      expect(e.code).toBe('runtime/dealloc')
      expect(e.restored).toBe(true)
      expect(Array.from(x)).toEqual(given)
    }
  })

  it('elements a call does not change come back exactly as passed (no ulog drift); changed ones hold their new values', () => {
    const m = compile(src, backend)
    const given = [0.1, 1 / 3, Math.PI / 7, 1e-300, 123456.789]
    const x = Float64Array.from(given)
    for (let k = 0; k < 50; k++) {
      m.touch!(x, 1.5)
      m.touch!.inverse(x, 1.5)
    }
    expect(Array.from(x.subarray(1))).toEqual(given.slice(1))
    expect(x[0]).toBeCloseTo(0.1, 12)
  })
})

it('the wasm backend rejects fixed, ulog and tropical arrays at compile time (so it has no such state to restore)', () => {
  for (const t of ['fixed', 'ulog', 'tropical']) {
    expect(thrown(() => compile(`fn f(x: ${t}[]) { }`, 'wasm')).code).toBe('backend/unsupported')
  }
})
