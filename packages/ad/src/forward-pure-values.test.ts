/**
 * The `forward-pure-values` pass of @tenet/ir on a fused gradient program: the graph embedding's
 * forward sweep computes `d[e] += sqrt(q[e])` and its adjoint needs `sqrt(q[e])` again for the
 * partial `0.5 / sqrt(q[e])`; without run-time checks the adjoint reads the roots from a table
 * the forward sweep fills. The gradients with the table (checks off, cpu and wasm) must equal
 * those without (checks on) and central differences of the loss.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printFunction } from '@tenet/ir'
import { inlineSmallCalls, optimize } from '@tenet/ir/backend'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { compileFused, grad, graphEmbeddingArgs, graphEmbeddingSource } from './index.js'
import { infoOf } from './compile.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
const compile = (backend: string, checks: boolean) =>
  compileModule(parse({ text: graphEmbeddingSource, name: 'embedding' }), { registry: registry(), backend, checks })
    .embedding_loss!

const k = 3
const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(1.3 * i + 0.2) + 0.1 * i)

describe('forward-pure-values on the graph embedding’s fused gradient', () => {
  it('the adjoint reads the roots of the forward sweep from tables', () => {
    const fused = compileFused(compile('cpu', false), 0)!
    const info = infoOf(fused)
    // as the backends run it: small calls (\`lengths\`) inlined, then the passes
    const inlined = inlineSmallCalls(info.program, new Map())
    const { program } = optimize(inlined.program, inlined.inverses, { checks: false } as never)
    const printed = printFunction(program.functions.get(info.name)!)
    // one table per edge list, each filled once and read by the adjoint's partial
    // (names carry the prefix of the inlined call, as in $inl4$e$fwd0[$inl4$e])
    expect(printed.match(/\$fwd\d+\[[^\]]+\] \+= sqrt\(q[12]\[/g)).toHaveLength(2)
    expect(printed.match(/0\.5 \/ [^ ]*\$fwd\d+\[/g)).toHaveLength(2)
    expect(printed).not.toMatch(/0\.5 \/ sqrt/)
  })

  it('gradients with the tables (checks off, cpu and wasm) equal those without and central differences', () => {
    const reference = compile('cpu', true)
    const want = grad(reference, { loss: 0 })(...graphEmbeddingArgs(x.slice(), k))[1] as Float64Array
    const loss = (p: Float64Array) => {
      const a = graphEmbeddingArgs(p, k)
      return (reference(...a) as unknown[])[0] as number
    }
    const eps = 1e-6
    for (let i = 0; i < x.length; i++) {
      const plus = x.slice(),
        minus = x.slice()
      plus[i]! += eps
      minus[i]! -= eps
      const fd = (loss(plus) - loss(minus)) / (2 * eps)
      expect(Math.abs(want[i]! - fd), `∂L/∂x[${i}]`).toBeLessThan(1e-6 * (1 + Math.abs(fd)))
    }
    for (const backend of ['cpu', 'wasm']) {
      const got = grad(compile(backend, false), { loss: 0 })(...graphEmbeddingArgs(x.slice(), k))[1] as Float64Array
      for (let i = 0; i < want.length; i++)
        expect(Math.abs(got[i]! - want[i]!), `${backend} x[${i}]`).toBeLessThan(1e-12 * (1 + Math.abs(want[i]!)))
    }
  })
  it('with the work arrays scratch (zero at entry), the adjoint reads the lengths d1, d2 themselves: no tables', () => {
    const fused = compileFused(compile('cpu', false), 0, [], [2, 3, 4, 5])!
    const info = infoOf(fused)
    const inlined = inlineSmallCalls(info.program, new Map())
    const { program } = optimize(inlined.program, inlined.inverses, { checks: false } as never)
    const printed = printFunction(program.functions.get(info.name)!)
    expect(printed).not.toContain('$fwd')
    expect(printed.match(/0\.5 \/ d[12]\[/g)).toHaveLength(2)
    // the same gradient as with run-time checks (no scratch there), on both backends
    const want = grad(compile('cpu', true), { loss: 0 })(...graphEmbeddingArgs(x.slice(), k))[1] as Float64Array
    for (const backend of ['cpu', 'wasm']) {
      const g = grad(compile(backend, false), { loss: 0, scratch: [2, 3, 4, 5] })
      const got = g(...graphEmbeddingArgs(x.slice(), k))[1] as Float64Array
      for (let i = 0; i < want.length; i++)
        expect(Math.abs(got[i]! - want[i]!), `${backend} x[${i}]`).toBeLessThan(1e-12 * (1 + Math.abs(want[i]!)))
    }
  })
})
