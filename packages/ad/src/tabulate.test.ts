/**
 * The `tabulate` pass of @tenet/ir on gradient programs: the adjoint of paper 000's unitary
 * multiply (Listing 14) and of a recurrent stack of it applies cos and sin of the same angles to
 * every column, in both sweeps; without run-time checks they come from tables. The gradients
 * with tables (checks off, cpu and wasm) must equal those without (checks on) and central
 * differences of the loss.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printFunction } from '@tenet/ir'
import { tabulate } from '@tenet/ir/backend'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { compileAdjoint, grad, ummSource } from './index.js'
import { infoOf } from './compile.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
const compile = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'unitary' }), { registry: registry(), backend, checks })

/** L = Σ c ⊙ U(θ)ᵀx: `layers` rotations of x by the same angles (the unitary recurrent step). */
const source = `${ummSource}
fn layers_loss(loss: f64, x: f64[], theta: f64[], c: f64[], m: i32, n: i32, layers: i32) {
  for t in 0..layers { i_umm(x, theta, m, n) }
  for i in 0..len(x) { loss += c[i] * x[i] * x[i] }
}`

const m = 4,
  n = 3,
  layers = 2
const theta = Float64Array.from({ length: (m * (m - 1)) / 2 }, (_, i) => Math.sin(1.7 * i + 0.3))
const x = Float64Array.from({ length: m * n }, (_, i) => Math.cos(0.9 * i))
const c = Float64Array.from({ length: m * n }, (_, i) => 0.5 + Math.sin(2.1 * i))

describe('tabulate on gradient programs', () => {
  it('tables the angles’ cos and sin in the adjoint of i_umm', () => {
    const f = compile(source, 'cpu', false).layers_loss!
    const program = infoOf(compileAdjoint(f).adjoint).program
    const adj = program.functions.get('i_umm$adj')!
    const after = printFunction(tabulate(adj, program.registry, new Set(), program.writes))
    expect(after).toContain('+= cos(theta[')
    expect(after).toContain('+= sin(theta[')
  })

  it('gradients with tables (checks off, cpu and wasm) equal those without and central differences', () => {
    const reference = compile(source, 'cpu', true).layers_loss!
    const args = () => [0, x.slice(), theta.slice(), c, m, n, layers]
    const want = grad(reference, { loss: 0 })(...args())
    // central differences of the loss (the checked program's forward run)
    const loss = (t: Float64Array, xs: Float64Array) => {
      reference.core(0, xs, t, c, m, n, layers)
      return reference.core.results[0] as number
    }
    const eps = 1e-6
    for (const [k, base] of [
      [2, theta],
      [1, x],
    ] as const) {
      const g = want[k] as Float64Array
      for (let i = 0; i < base.length; i++) {
        const plus = base.slice(),
          minus = base.slice()
        plus[i]! += eps
        minus[i]! -= eps
        const fd =
          k === 2
            ? (loss(plus, x.slice()) - loss(minus, x.slice())) / (2 * eps)
            : (loss(theta, plus) - loss(theta, minus)) / (2 * eps)
        expect(Math.abs(g[i]! - fd), `∂L/∂${k === 2 ? 'θ' : 'x'}[${i}]`).toBeLessThan(1e-6 * (1 + Math.abs(fd)))
      }
    }
    for (const backend of ['cpu', 'wasm']) {
      const got = grad(compile(source, backend, false).layers_loss!, { loss: 0 })(...args())
      for (const k of [1, 2]) {
        const a = got[k] as Float64Array,
          b = want[k] as Float64Array
        for (let i = 0; i < b.length; i++)
          expect(Math.abs(a[i]! - b[i]!), `${backend} #${k}[${i}]`).toBeLessThan(1e-12 * (1 + Math.abs(b[i]!)))
      }
    }
  })
})
