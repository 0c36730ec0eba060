/**
 * `GradientFunction.program`: the compiled program a call runs, as the plan chose it, so that
 * `generatedCode(g.program)` shows the JavaScript of a gradient (the fused program, the tangent in
 * forward mode, the adjoint for two sweeps). The gradients themselves are checked against central
 * differences of an independent plain-TS loss.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import { generatedCode, interpreterBackend } from '@tenet/reversible'
import { checkGradient } from '@tenet/testing'
import { grad, graphEmbeddingArgs, graphEmbeddingSource, petersenEdges, petersenNonEdges } from './index.js'
import { tag } from './test-util.js'

/** The graph-embedding loss in plain TS (independent of Tenet). */
function embeddingLoss(x: ArrayLike<number>, k: number): number {
  const lengths = (pairs: ReadonlyArray<readonly [number, number]>) =>
    pairs.map(([a, b]) => {
      let s = 0
      for (let j = 0; j < k; j++) s += (x[a * k + j]! - x[b * k + j]!) ** 2
      return Math.sqrt(s)
    })
  const mean = (d: number[]) => d.reduce((s, v) => s + v, 0) / d.length
  const variance = (d: number[]) => d.reduce((s, v) => s + (v - mean(d)) ** 2, 0) / (d.length - 1)
  const d1 = lengths(petersenEdges),
    d2 = lengths(petersenNonEdges)
  return variance(d1) + variance(d2) + Math.exp(Math.max(mean(d1) - mean(d2) + 0.1, 0)) - 1
}

describe('the program a gradient runs (g.program)', () => {
  for (const checks of [true, false]) {
    it(`is the routine-fused program for the graph embedding, its code readable (checks ${checks ? 'on' : 'off'})`, () => {
      const f = tag({ checks })(graphEmbeddingSource).embedding_loss!
      const g = grad(f, { loss: 0, scratch: [2, 3, 4, 5] })
      expect(g.plan.program).toBe('routine-fused')
      expect(g.program).not.toBe(g.adjoint)
      const code = generatedCode(g.program)!
      // the fused program: the forward distances and the gradient's accumulation in one function
      expect(code).toMatch(/^function /)
      expect(code).toContain('Math.sqrt(')
      expect(code).not.toBe(generatedCode(g.adjoint))
      // without checks the uncompute of the routine is skipped: no subtraction of the squares it added
      if (!checks) expect(code).not.toMatch(/- \(c\d+ \* c\d+\)\)/)
      const k = 3
      const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.cos(0.3 + 1.1 * i) * 2)
      const gx = g(...graphEmbeddingArgs(x, k))[1] as Float64Array
      const fd = checkGradient((v) => embeddingLoss(v, k), Array.from(gx), Array.from(x), { tolerance: 1e-6 })
      expect(fd.ok, JSON.stringify(fd)).toBe(true)
    })

    it(`is the adjoint for two sweeps (checks ${checks ? 'on' : 'off'})`, () => {
      const f = tag({ checks })(graphEmbeddingSource).embedding_loss!
      const g = grad(f, { loss: 0, fuse: false })
      expect(g.plan.program).toBe('two-sweep')
      expect(g.program).toBe(g.adjoint)
      expect(generatedCode(g.program)).toBe(generatedCode(g.adjoint))
    })
  }

  it('is the tangent in forward mode', () => {
    const m = tag({ checks: false })(`fn f(y: f64, x: f64) { y += sin(x) * x }`)
    const g = grad(m.f!, { loss: 0 })
    expect(g.plan.program).toBe('forward')
    expect(g.program).not.toBe(g.adjoint)
    const code = generatedCode(g.program)!
    expect(code).toContain('Math.cos(')
    const [, dx] = g(0, 0.7)
    expect(dx).toBeCloseTo(Math.cos(0.7) * 0.7 + Math.sin(0.7), 12)
  })

  it('has no generated code on the interpreter', () => {
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
    const f = tag({ registry, backend: 'interpreter' })(graphEmbeddingSource).embedding_loss!
    const g = grad(f, { loss: 0 })
    expect(g.program).toBeDefined()
    expect(generatedCode(g.program)).toBeUndefined()
  })
})
