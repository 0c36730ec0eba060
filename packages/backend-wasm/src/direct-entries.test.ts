/**
 * Direct entries (\`CompiledFunction.direct\`, see \`directEntry\` in backend.ts): the exported thunk
 * of a module that runs none of the caller's code, without its JS wrapper, for callers that keep
 * their arrays resident. Present exactly for such modules (`grows` where a call may take heap);
 * a call through one gives the wrapper's results (scalars returned, read from the memory, or
 * passed through) and, through `error`, its errors; one that takes heap starts it where the
 * wrapper would (above every resident array, above the enclosing call's heap when nested), and
 * after it grew the memory `memory()` gives the new views; a disposed module's entry says so and
 * throws `call/disposed`.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, type DirectEntry, type TenetError } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { createWasmBackend } from './index.js'

const text = `fn h(s: f64, y: f64[], x: f64[], k: i32) {
  for i in 0..len(x) { y[i] += x[i] * f64(k) }
  s += y[k]
}`

function compile(
  source: string,
  checks: boolean,
  registry = createRegistry().registerBackend(createWasmBackend()),
  hosts: unknown[] = [],
) {
  return compileModule(parse({ text: source, name: 'direct' }, hosts), { registry, backend: 'wasm', checks })
}

// an array ancilla of n doubles: a call takes 8n bytes of heap
const ancilla = `fn a(y: f64, x: f64[], n: i32) {
  t: f64[] <- zeros(n)
  t[n - 1] += x[0] * 2.0
  y += t[n - 1]
  t[n - 1] -= x[0] * 2.0
  t -> zeros(n)
}`

describe('direct entries of wasm functions', () => {
  it('exist for modules that run none of the caller’s code, grows where a call takes heap', () => {
    const closed = compile(text, true).h!.core.direct
    expect(closed?.grows).toBe(false)
    for (const checks of [false, true]) expect(compile(ancilla, checks).a!.core.direct?.grows).toBe(true)
    const callsOut = compile('fn c(y: f64) { y += 1.0\n @safe ${0}() }', true, undefined, [() => {}])
    expect(callsOut.c!.core.direct).toBeUndefined()
  })

  for (const checks of [false, true]) {
    it(`of a module that takes heap: the wrapper's results, above the resident arrays, after growing the memory, nested, checks ${checks ? 'on' : 'off'}`, () => {
      const registry = createRegistry().registerBackend(createWasmBackend())
      const core = compile(ancilla, checks, registry).a!.core
      const d = core.direct as DirectEntry
      const x = core.resident!.allocate('f64', 1)
      x.array[0] = 1.25
      // y, the last scalar not passed through, is returned
      expect(d.returned).toBe(0)
      const call = (n: number, y = 0.5) => d.call(d.heapStart(), y, x.array.byteOffset, 1, n) as number
      core(0.5, Float64Array.of(1.25), 4)
      expect(call(4)).toBe(core.results[0])
      expect(call(4)).toBe(3)
      // a resident array allocated after a call lies where that call's heap was: the next call's
      // heap starts above it, and 2²¹ doubles grow the memory under the views taken before
      const z = core.resident!.allocate('f64', 64)
      z.array.fill(7)
      const before = d.memory()
      expect(call(2 ** 21, 1)).toBe(3.5)
      expect(before.length).toBe(0)
      expect(Array.from(z.array)).toEqual(new Array(64).fill(7))
      expect(x.array[0]).toBe(1.25)
      // nested in another module's call (from its host function): above that call's ancilla
      const seen: number[] = []
      const outer = compile(
        `fn o(x: f64[], n: i32, y: f64) {
  b: f64[] <- zeros(n)
  b[n - 1] += y
  @safe \${0}()
  x[0] += b[n - 1]
  b[n - 1] -= y
  b -> zeros(n)
}`,
        checks,
        registry,
        [() => seen.push(call(1 << 12, 2))],
      )
      const r = outer.o!(Float64Array.of(0.5), 1 << 10, 2.25) as unknown[]
      expect(seen).toEqual([4.5])
      expect(Array.from(r[0] as Float64Array)).toEqual([2.75])
      // an index out of range traps; the next call at top level starts its heap where it should
      const xs = core.resident!.allocate('f64', 0)
      expect(() => {
        try {
          d.call(d.heapStart(), 0, xs.array.byteOffset, 0, 3)
        } catch (e) {
          throw d.error(e)
        }
      }).toThrow()
      expect(call(8)).toBe(3)
      expect(Array.from(z.array)).toEqual(new Array(64).fill(7))
    })
  }

  for (const checks of [false, true]) {
    it(`give the wrapper's results and errors, checks ${checks ? 'on' : 'off'}`, () => {
      const m = compile(text, checks)
      const core = m.h!.core
      const d = core.direct as DirectEntry
      expect(d.kinds).toEqual(['scalar', 'array', 'array', 'scalar'])
      // k is never written: passed through; s is
      expect(d.passedThrough).toEqual([false, false, false, true])
      const y = core.resident!.allocate('f64', 3),
        x = core.resident!.allocate('f64', 3)
      x.array.set([1, 2, 3])
      y.array.set([0.5, 0.25, 0])
      const yHost = Float64Array.of(0.5, 0.25, 0)
      core(10, yHost, Float64Array.of(1, 2, 3), 2)
      const want = core.results[0]
      // s, the last scalar not passed through, is returned rather than stored
      expect(d.returned).toBe(0)
      expect(d.call(10, y.array.byteOffset, 3, x.array.byteOffset, 3, 2)).toBe(want)
      expect(Array.from(y.array)).toEqual(Array.from(yHost))
      // an index out of range: the wrapper's error (its code) through \`error\`
      let wrapperCode = ''
      try {
        core(0, Float64Array.of(0, 0), Float64Array.of(1, 2), 2)
      } catch (e) {
        wrapperCode = (e as TenetError).code
      }
      expect(wrapperCode).not.toBe('')
      let directCode = ''
      const y2 = core.resident!.allocate('f64', 2),
        x2 = core.resident!.allocate('f64', 2)
      try {
        d.call(0, y2.array.byteOffset, 2, x2.array.byteOffset, 2, 2)
      } catch (e) {
        directCode = (d.error(e) as TenetError).code
      }
      expect(directCode).toBe(wrapperCode)
      // and the next call works
      core(0, Float64Array.of(0, 0), Float64Array.of(1, 2), 1)
      expect(core.results[0]).toBe(2)
      expect(d.disposed).toBe(false)
      ;(m as unknown as { dispose(): void }).dispose()
      expect(d.disposed).toBe(true)
      expect(() => d.call(10, 0, 0, 0, 0, 0)).toThrow(expect.objectContaining({ code: 'call/disposed' }))
    })
  }
})
