/**
 * Store-to-load forwarding across a store that a loop's range proves to be another element (see
 * `nonzeroInLoops` of `@tenet/ir/backend`): the adjoint of an explicit heat stencil reads
 * `g[(t + 1) * n + i]` once per iteration, not again after each store into `g[t * n + i ± 1]`;
 * where the range does not prove the indices apart, the element is read again. Runs against the
 * interpreter, checks on and off, on sizes where the indices do meet (n = 0, 1, 2).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** The reverse sweep of the heat stencil's adjoint (as the fused gradient program of `heat_loss` has it), and an aliasing one. */
const text = `
fn heat_adj(gr: f64, g: f64[], u: f64[], r: f64, n: i32, T: i32) {
  for t in reverse 0..T {
    for i in reverse 1..n - 1 {
      g[t * n + i] += g[(t + 1) * n + i] - g[(t + 1) * n + i] * r * 2.0
      gr += g[(t + 1) * n + i] * (u[t * n + i - 1] - 2.0 * u[t * n + i] + u[t * n + i + 1])
      g[t * n + i - 1] += g[(t + 1) * n + i] * r
      g[t * n + i + 1] += g[(t + 1) * n + i] * r
    }
  }
}
fn shifted(y: f64, g: f64[], n: i32, m: i32) {
  for i in 0..m {
    y += g[i + n] * 2.0
    g[i] += 1.5
    y += g[i + n]
  }
}`

function code(m: Record<string, unknown>, name: string): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, false)
}

const build = (backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'loop-facts' }), { registry, backend, checks })

describe('loads kept across stores that a loop range proves elsewhere (cpu backend)', () => {
  it("reads the stencil adjoint's g[(t + 1) * n + i] once per iteration", () => {
    const src = code(build('cpu', false), 'heat_adj')
    // the element's index, (t + 1)·n + i, is computed for one load only
    const loads = src.match(/p1\[\(\(Math\.imul\(\(\(i\d+ \+ 1\) \| 0\), p4\) \+ [ij]\d+\) \| 0\)\]/g) ?? []
    // (one load per copy of the body where the loop runs two iterations per pass)
    const copies = /-= 2\)/.test(src) ? 2 : 1
    expect(loads, src).toHaveLength(copies)
  })

  it('reads g[i + n] again after the store to g[i] (n may be 0)', () => {
    const src = code(build('cpu', false), 'shifted')
    expect(src.match(/p0 \+ \(?p1\[c\d+\]/g), src).toHaveLength(2)
  })

  for (const checks of [false, true]) {
    it(`agrees with the interpreter on every size, the meeting ones included (checks ${checks ? 'on' : 'off'})`, () => {
      const m = build('cpu', checks),
        ref = build('interpreter', checks)
      for (const n of [0, 1, 2, 3, 5]) {
        const T = 3
        const len = Math.max(1, (T + 1) * n)
        const g = Float64Array.from({ length: len }, (_, k) => Math.sin(k + 1)),
          u = Float64Array.from({ length: len }, (_, k) => Math.cos(3 * k))
        const gr = g.slice()
        m.heat_adj!.core(0.5, g, u, 0.3, n, T)
        ref.heat_adj!.core(0.5, gr, u, 0.3, n, T)
        expect(Array.from(g)).toEqual(Array.from(gr))
        expect(m.heat_adj!.core.results[0]).toBe(ref.heat_adj!.core.results[0])
      }
      for (const n of [0, 1, 3]) {
        const g = Float64Array.from({ length: 8 }, (_, k) => k * 0.25 + 1),
          gr = g.slice()
        m.shifted!.core(0, g, n, 4)
        ref.shifted!.core(0, gr, n, 4)
        expect(Array.from(g)).toEqual(Array.from(gr))
        expect(m.shifted!.core.results[0]).toBe(ref.shifted!.core.results[0])
      }
    })
  }
})
