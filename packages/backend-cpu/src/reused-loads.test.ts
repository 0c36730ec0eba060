/**
 * Element loads reused across the statements of a block (`reusedLoads` of `@tenet/ir/backend`):
 * the generated code of paper 000's branch-keeper merge reads each row index once per iteration,
 * and reads an element again after a write to its array or its index. Random merge-shaped programs
 * on cpu and wasm against the interpreter: backend-wasm's `reused-loads.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { sparseDotSource } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend)

function source(text: string, name: string, checks: boolean): string {
  const m = compileModule(parse({ text, name: 'loads' }), { registry, backend: 'cpu', checks })
  const info = (m[name] as unknown as Record<symbol, { compiled: { sourceOf(n: string, inv: boolean): string } }>)[
    Symbol.for('tenet.function')
  ]!
  return info.compiled.sourceOf(name, false)
}

describe('element loads reused across statements (cpu backend)', () => {
  it('reads the row indices of the branch-keeper merge once per iteration, behind flags', () => {
    const code = source(sparseDotSource, 'sparse_dot', false)
    // p4 = arowval, p7 = browval: each loaded in the first condition (under &&) and reused in
    // the keeper's decision through its flag (the second load there runs only when the flag is not set)
    expect(code.match(/p4\[/g)).toHaveLength(2)
    expect(code.match(/p7\[/g)).toHaveLength(2)
    expect(code).toMatch(/\(h\d+ = true, l\d+ = p4\[v\d+\]\)/)
    expect(code).toMatch(
      /\(h\d+ \? l\d+ : \(h\d+ = true, l\d+ = p7\[v\d+\]\)\) < \(h\d+ \? l\d+ : \(h\d+ = true, l\d+ = p4\[v\d+\]\)\)/,
    )
  })

  it('reads an element again after a write to its array or its index', () => {
    const text = `fn f(y: f64, x: f64[], i: i32, n: i32) {
  for k in 0..n {
    y += x[i] * 2.0
    if (y > 0.0, ~) { x[0] += 1.0 }
    y += x[i]
    i += 1
    y -= x[i] * 0.5
  }
}`
    const code = source(text, 'f', false)
    // once before the branch (reused by nothing: the branch may write x), once after, once after i changes
    expect(code.match(/p1\[p2\]/g)).toHaveLength(3)
    expect(code).not.toMatch(/let l\d+/)
  })
})

describe('reused loads after a bijection stored the element', () => {
  // INV stores x[2] and the statement after it takes the stored value (store-to-load forwarding,
  // `Shared.stored`) where it is the first of the block to load x[2]: the local of the reused load
  // must still be set there, for the statement after the stack operations to read
  const source = `
fn f(y: f64, x: f64[], c: f64) {
  INV(x[2])
  y += x[2] * c
  s: stack<f64> <- []
  push(s, c)
  y += x[2] * x[0]
  pop(s, c)
  s -> []
}`
  for (const checks of [true, false]) {
    it(`reads the stored value after the run ends (checks ${checks ? 'on' : 'off'})`, () => {
      const withInterp = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
      const build = (backend: string) =>
        compileModule(parse({ text: source, name: 'stored-reuse' }), { registry: withInterp, backend, checks })
      const m = build('cpu'),
        ref = build('interpreter')
      const x = Float64Array.from([0.5, 1.5, 4]),
        xr = x.slice()
      m.f!.core(0.25, x, 3)
      ref.f!.core(0.25, xr, 3)
      expect(Array.from(m.f!.core.results)).toEqual(Array.from(ref.f!.core.results))
      expect(Array.from(x)).toEqual(Array.from(xr))
      expect(m.f!.core.results[0]).toBe(0.25 + 0.25 * 3 + 0.25 * 0.5)
    })
  }
})
