/**
 * The adjoint of a square, \`l ** 2\`, accumulates \`(2·seed)·l\`: where a loop runs over \`l\` with
 * the seed fixed, pass \`hoist-invariants\` computes \`2·seed\` once before the loop. The gradients
 * (cpu and wasm, checks on and off) are those of the hand-derived formula and central differences.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printFunction } from '@tenet/ir'
import { inlineSmallCalls, optimize } from '@tenet/ir/backend'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { checkGradient } from '@tenet/testing'
import { compileFused, grad, graphEmbeddingSource } from './index.js'
import { infoOf } from './compile.js'

const source = `fn f(l: f64, x: f64[], y: f64) {
  s <- 0.0
  routine { for j in 0..len(x) { s += (x[j] - y) ** 2 } }
  l += s * s
  ~routine
  s -> 0.0
}`
const compile = (backend: string, checks: boolean) =>
  compileModule(parse({ text: source, name: 'sq' }), {
    registry: createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend),
    backend,
    checks,
  }).f!

describe('the adjoint of a square', () => {
  it('scales the seed by 2 once per inner loop, not each element (the graph embedding)', () => {
    const f = compileModule(parse({ text: graphEmbeddingSource, name: 'embedding' }), {
      registry: createRegistry().registerBackend(cpuBackend),
      backend: 'cpu',
      checks: false,
    }).embedding_loss!
    const fused = compileFused(f, 0, [], [2, 3, 4, 5])!
    const info = infoOf(fused)
    const inlined = inlineSmallCalls(info.program, new Map())
    const { program } = optimize(inlined.program, inlined.inverses, { checks: false } as never)
    const printed = printFunction(program.functions.get(info.name)!)
    // per edge, 2·g_q is computed once (hoisted before the loop over the coordinates), and each
    // coordinate's partial multiplies it by the difference
    expect(printed.match(/\$inv\d+: f64 <- 2\.0 \* g_q[12]\$ct/g)).toHaveLength(2)
    const inner = printed.split(/for \$inl\d+\$j in reverse/).slice(1)
    expect(inner).toHaveLength(2)
    for (const body of inner) expect(body.split('\n    }')[0]).not.toContain('2.0 *')
  })

  it('gives the gradient 4s·(x − y), −4s·Σ(x − y) on cpu and wasm, checks on and off', () => {
    const x = Float64Array.from([0.5, -1.25, 2, 0.75]),
      y = 0.3
    const s = x.reduce((a, v) => a + (v - y) ** 2, 0)
    for (const backend of ['cpu', 'wasm'])
      for (const checks of [true, false]) {
        const got = grad(compile(backend, checks), { loss: 0 })(0, x, y)
        const gx = got[1] as Float64Array
        for (let i = 0; i < x.length; i++) expect(gx[i]).toBeCloseTo(4 * s * (x[i]! - y), 12)
        expect(got[2]).toBeCloseTo(-4 * s * x.reduce((a, v) => a + (v - y), 0), 12)
        const loss = (v: number[]) => v.slice(0, -1).reduce((a, xi) => a + (xi - v.at(-1)!) ** 2, 0) ** 2
        const fd = checkGradient(loss, [...Array.from(gx), got[2] as number], [...Array.from(x), y])
        expect(fd.ok, JSON.stringify(fd)).toBe(true)
      }
  })
})
