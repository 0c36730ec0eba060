/**
 * Direct entries (\`CompiledFunction.direct\`, see \`directEntry\` in backend.ts): the exported thunk
 * of a closed module without its JS wrapper, for callers that keep their arrays resident. Present
 * exactly for closed modules; a call through one gives the wrapper's results (scalars returned,
 * read from the memory, or passed through) and, through \`error\`, its errors; a disposed module's entry
 * says so and throws \`call/disposed\`.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, type DirectEntry, type TenetError } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { createWasmBackend } from './index.js'

const text = `fn h(s: f64, y: f64[], x: f64[], k: i32) {
  for i in 0..len(x) { y[i] += x[i] * f64(k) }
  s += y[k]
}`

function compile(source: string, checks: boolean) {
  return compileModule(parse({ text: source, name: 'direct' }), {
    registry: createRegistry().registerBackend(createWasmBackend()),
    backend: 'wasm',
    checks,
  })
}

describe('direct entries of wasm functions', () => {
  it('exist for closed modules only', () => {
    expect(compile(text, true).h!.core.direct).toBeDefined()
    const grows = compile(
      'fn a(y: f64, n: i32) { t: f64[] <- zeros(n)\n t[0] += 1.0\n y += t[0]\n t[0] -= 1.0\n t -> zeros(n) }',
      true,
    )
    expect(grows.a!.core.direct).toBeUndefined()
  })

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
