/**
 * Closed modules (`WasmProgram.closed`): a module that imports no function running the caller's
 * code and never grows the memory has wrappers that keep no count of the calls under way. These
 * tests check which modules are closed, and that calls of closed modules behave as those of any
 * other: nested in another module's host call after it grew the memory, failing, and failing
 * while nested (the count, the heap top and the views of the shared memory as they were).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, unary, type PrimitiveSpec, type TenetError } from '@tenet/ir'
import { compileModule, type TenetModule } from '@tenet/reversible'
import { createWasmBackend, type WasmProgram } from './index.js'

/** One backend (one memory shared by its modules) and a compile that records each module's program. */
function backend() {
  const spec = createWasmBackend()
  const programs: WasmProgram[] = []
  const wasm = {
    ...spec,
    doCompile: (...a: Parameters<typeof spec.doCompile>) => {
      const p = spec.doCompile(...a) as WasmProgram
      programs.push(p)
      return p
    },
  }
  const compile = (
    text: string,
    hosts: unknown[] = [],
    checks = true,
    prims: PrimitiveSpec[] = [],
  ): { m: TenetModule; closed: boolean } => {
    const registry = createRegistry().registerBackend(wasm)
    for (const p of prims) registry.registerPrimitive(p)
    const m = compileModule(parse({ text, name: 'closed' }, hosts), { registry, backend: 'wasm', checks })
    return { m, closed: programs.at(-1)!.closed }
  }
  return compile
}

/** The error `run` throws (fails the test when it returns). */
function thrown(run: () => unknown): TenetError {
  try {
    run()
  } catch (e) {
    return e as TenetError
  }
  return expect.unreachable('expected an error') as never
}

/** Scalars only; a run-time exponent (`**` of an i32: the `pow` of JS's Math, imported). */
const SCALAR = 'fn g(out: f64, z: f64, n: i32) { out += z ** n }'
/** Scalars only, two written: the wrapper reads one result from the memory (the other is returned). */
const TWO = 'fn t(a: f64, b: f64, z: f64) { a += z\n b += z * z }'
/** Arrays, still closed: copied through the memory at the heap top, no allocation in the module. */
const ARRAYS = 'fn h(y: f64[], x: f64[]) { for i in 0..len(x) { y[i] += x[i] * x[i] } }'
/**
 * Grows the memory (an ancilla of n doubles) and then calls host function 0 while the ancilla is
 * live: the callee sees a memory that grew during the call and a heap top above the ancilla.
 */
const GROWS_THEN_CALLS = `fn f(x: f64[], n: i32, y: f64) {
  a: f64[] <- zeros(n)
  a[n - 1] += y
  @safe \${0}()
  x[0] += a[n - 1]
  a[n - 1] -= y
  a -> zeros(n)
}`

describe('closed wasm modules', () => {
  it('are those that import only the built-in arithmetic and never grow the memory', () => {
    const compile = backend()
    expect(compile(SCALAR).closed).toBe(true)
    expect(compile(ARRAYS).closed).toBe(true)
    expect(compile('fn e(y: f64, x: f64) { y += exp(x) + sin(x) % 0.5 }').closed).toBe(true)
    // an array ancilla may grow the memory
    expect(
      compile('fn a(y: f64, n: i32) { t: f64[] <- zeros(n)\n t[0] += 1.0\n y += t[0]\n t[0] -= 1.0\n t -> zeros(n) }')
        .closed,
    ).toBe(false)
    // a host function, a plugin primitive: the caller's code, which may call a module again
    expect(compile('fn s(y: f64) { y += 1.0\n @safe ${0}() }', [() => {}]).closed).toBe(false)
    expect(compile('fn v(y: f64, x: f64) { y += ${0}(x) }', [(x: number) => 2 * x]).closed).toBe(false)
    const twice = unary({ name: 'twice', evaluate: (x) => 2 * x })
    expect(compile('fn p(y: f64, x: f64) { y += twice(x) }', [], true, [twice]).closed).toBe(false)
  })

  it('called from a host function after the caller grew the memory: right results, the caller intact', () => {
    const compile = backend()
    const { m: scalar } = compile(SCALAR)
    const { m: two } = compile(TWO)
    const { m: arrays } = compile(ARRAYS)
    const seen: unknown[] = []
    const { m: outer, closed } = compile(GROWS_THEN_CALLS, [
      () => {
        seen.push(scalar.g!(1, 3, 2))
        seen.push(two.t!(1, 2, 3))
        const y = new Float64Array([1, 1])
        arrays.h!(y, new Float64Array([2, 3]))
        seen.push(Array.from(y))
      },
    ])
    expect(closed).toBe(false)
    // 2^18 doubles: 2 MiB, past the memory the first modules made (its ancilla lies below the
    // heap top the nested calls start at, so they leave it as it was)
    for (const n of [1 << 18, 4, 1 << 19]) {
      seen.length = 0
      const x = new Float64Array([0.5])
      const r = outer.f!(x, n, 2.25) as unknown[]
      expect(seen).toEqual([
        [10, 3, 2],
        [4, 11, 3],
        [5, 10],
      ])
      expect(Array.from(r[0] as Float64Array)).toEqual([2.75])
      expect(r.slice(1)).toEqual([n, 2.25])
    }
    // and at the top level afterwards
    expect(scalar.g!(0, 2, 3)).toEqual([8, 2, 3])
  })

  it('a failing call leaves the shared state as it was, at the top level and nested', () => {
    const compile = backend()
    // with checks: the dealloc fails unless z = 1
    const { m: failing, closed } = compile('fn k(out: f64, z: f64) { t <- 0.0\n t += z\n out += t\n t -> 1.0 }')
    expect(closed).toBe(true)
    expect(failing.k!(0, 1)).toEqual([1, 1])
    expect(thrown(() => failing.k!(0, 2)).code).toBe('runtime/dealloc')
    // nothing counts a call under way: a resident array can be allocated
    const { m: res } = compile(ARRAYS)
    const r = res.h!.core.resident!.allocate('f64', 2)
    r.release()
    let caught: TenetError | undefined
    const { m: outer } = compile(GROWS_THEN_CALLS, [
      () => {
        caught = thrown(() => failing.k!(0, 5))
        expect(failing.k!(3, 1)).toEqual([4, 1])
      },
    ])
    const x = new Float64Array([0])
    expect(Array.from((outer.f!(x, 1 << 18, 1.5) as unknown[])[0] as Float64Array)).toEqual([1.5])
    expect(caught?.code).toBe('runtime/dealloc')
    // the outer call ended and its count with it
    res.h!.core.resident!.allocate('f64', 2).release()
    expect(failing.k!(0, 1)).toEqual([1, 1])
  })
})
