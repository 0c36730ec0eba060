import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

// every update reads and stores an element at a computed index (a modulo, a load, a call)
const source = `
fn scatter(y: f64[], x: f64[], k: i32[]) {
  n: i32 <- len(x)
  for i in 0..n {
    y[(i + 1) % n] += x[i] * 2.0
    y[(i + n - 1) % n] -= x[i]
    y[k[i]] += 0.5 * x[i]
    y[min(k[i] + 1, n - 1)] += x[i] * x[i]
    -y[i] += 1.0
  }
  n -> len(x)
}`

function body(m: Record<string, unknown>, name: string, inverse = false): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, inverse)
}

describe('shared element addresses of updates (cpu backend)', () => {
  it('computes the index of a read-modify-write once (printed JS)', () => {
    const m = compileModule(parse({ text: source, name: 'addr' }), { registry, backend: 'cpu', checks: false })
    for (const inverse of [false, true]) {
      const code = body(m, 'scatter', inverse)
      // each modulo index once, bound to a const, then used for the load and the store
      expect(code.match(/% v\d+\)/g), code).toHaveLength(2)
      expect(code).toMatch(
        /const (c\d+) = \(\(\(\(i\d+ \+ 1\) \| 0\) % v\d+\) \| 0\);[\s\S]*?p0\[\1\] = \(p0\[\1\] [+-] /,
      )
      expect(code.match(/Math\.min/g), code).toHaveLength(1)
    }
  })

  it('gives bit-identical results to the interpreter, forwards and backwards, with checks on and off', () => {
    for (const checks of [false, true]) {
      const run = (backend: string) => {
        const m = compileModule(parse({ text: source, name: 'addr' }), { registry, backend, checks })
        const y = Float64Array.from({ length: 7 }, (_, i) => Math.sin(i)),
          x = Float64Array.from({ length: 7 }, (_, i) => Math.cos(i) + 0.1),
          k = Int32Array.from([3, 0, 6, 6, 2, 1, 5])
        const f = m.scatter as unknown as ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }
        f(y, x, k)
        const after = Array.from(y)
        f.inverse(y, x, k)
        return [after, Array.from(y)]
      }
      expect(run('cpu')).toEqual(run('interpreter'))
    }
  })

  it('still checks a computed index with checks on', () => {
    const m = compileModule(parse({ text: source, name: 'addr' }), { registry, backend: 'cpu', checks: true })
    const k = Int32Array.from([3, 0, 9, 6, 2, 1, 5])
    expect(() => (m.scatter as (...a: unknown[]) => unknown)(new Float64Array(7), new Float64Array(7), k)).toThrow(
      expect.objectContaining({ code: expect.stringMatching(/bounds|index/) }),
    )
  })
})
