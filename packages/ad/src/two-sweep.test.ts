/**
 * The two-sweep gradient program as one function (`compileTwoSweep`): without run-time checks,
 * where f's sweep applies an expensive pure primitive to an array it never writes, f and its
 * adjoint run as one program, and pass `tabulate-sweeps` computes the values both sweeps apply
 * (ROT's cos θ and sin θ, cos and exp in expressions) once, into tables. The gradients (cpu and
 * wasm, checks off) must equal those of the checked two-sweep program and central differences of
 * the loss; the driver's uncompute check still sees the recomputed inputs.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, type TenetFunction } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad, ummSource } from './index.js'
import { compileTwoSweep, infoOf } from './compile.js'
import { expectClose } from './test-util.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
const compile = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'two-sweep' }), { registry: registry(), backend, checks })

/** L = Σ c ⊙ U(θ)x (paper 000 Listing 14), the bench's unitary loss. */
const unitary = `${ummSource}
fn umm_loss(loss: f64, x: f64[], theta: f64[], c: f64[], m: i32, n: i32) {
  i_umm(x, theta, m, n)
  for i in 0..len(x) { loss += c[i] * x[i] }
}`

/** Expressions (not a bijection) that apply cos and exp to elements of w in both sweeps, under a branch. */
const waves = `fn step(x: f64[], w: f64[], n: i32) {
  for i in 0..n - 1 { x[i + 1] += x[i] * cos(w[i]) + exp(w[i + 1]) }
}
fn waves_loss(loss: f64, x: f64[], w: f64[], n: i32) {
  if (0 < n, ~) { step(x, w, n) }
  for i in 0..n { loss += x[i] * x[i] * sin(w[i]) }
}`

interface Case {
  name: string
  source: string
  entry: string
  args: () => unknown[]
  /** The argument indices to check against central differences. */
  inputs: number[]
}
const m = 5,
  n = 4
const cases: Case[] = [
  {
    name: 'unitary multiply (ROT)',
    source: unitary,
    entry: 'umm_loss',
    args: () => [
      0,
      Float64Array.from({ length: m * n }, (_, i) => Math.cos(0.9 * i)),
      Float64Array.from({ length: (m * (m - 1)) / 2 }, (_, i) => Math.sin(1.7 * i + 0.3)),
      Float64Array.from({ length: m * n }, (_, i) => 0.5 + Math.sin(2.1 * i)),
      m,
      n,
    ],
    inputs: [1, 2],
  },
  {
    name: 'cos, exp and sin in expressions',
    source: waves,
    entry: 'waves_loss',
    args: () => [
      0,
      Float64Array.from({ length: 7 }, (_, i) => 0.3 * Math.cos(1.3 * i)),
      Float64Array.from({ length: 7 }, (_, i) => 0.4 * Math.sin(0.7 * i + 0.2)),
      7,
    ],
    inputs: [1, 2],
  },
]

/** Central differences of the loss (argument 0) of the checked forward program along input k. */
function centralDifferences(f: TenetFunction, args: unknown[], k: number): Float64Array {
  const base = args[k] as Float64Array
  const out = new Float64Array(base.length)
  const eps = 1e-6
  const loss = (v: Float64Array) => {
    const a = args.map((x, i) => (i === k ? v : x instanceof Float64Array ? x.slice() : x))
    return f(...a)[0] as number
  }
  for (let i = 0; i < base.length; i++) {
    const plus = base.slice(),
      minus = base.slice()
    plus[i]! += eps
    minus[i]! -= eps
    out[i] = (loss(plus) - loss(minus)) / (2 * eps)
  }
  return out
}

describe('the two-sweep gradient as one program', () => {
  for (const c of cases) {
    it(`${c.name}: one program without checks (cpu, wasm), equal to the checked two sweeps and to central differences`, () => {
      const checked = compile(c.source, 'cpu', true)[c.entry]!
      expect(compileTwoSweep(checked, 0)).toBeNull()
      const g = grad(checked, { loss: 0 })
      expect(g.plan.program).toBe('two-sweep')
      expect(String(g.plan)).not.toContain('as one program')
      const want = g(...c.args())
      for (const k of c.inputs)
        expectClose(want[k] as Float64Array, centralDifferences(checked, c.args(), k), 1e-6, `∂L/∂#${k}`)
      for (const backend of ['cpu', 'wasm']) {
        const f = compile(c.source, backend, false)[c.entry]!
        const one = compileTwoSweep(f, 0)!
        expect(one).not.toBeNull()
        // the cpu program builds a table of the cosines (\`T[j] = 0 + cos(A[j])\`, see tabulate-sweeps;
        // A[j] in a local where the sines' table reads it too, in the same loop)
        if (backend === 'cpu')
          expect(infoOf(one).compiled.sourceOf?.(one.name, false)).toMatch(
            /\[\w+\] = \(0 \+ \(Math\.cos\([\w[\]]+\)\)\)/,
          )
        const h = grad(f, { loss: 0 })
        expect(h.plan.program).toBe('two-sweep')
        expect(String(h.plan)).toContain('as one program')
        for (let rep = 0; rep < 2; rep++) {
          const got = h(...c.args())
          expect(h.lastLoss).toBeCloseTo(g.lastLoss, 12)
          for (const k of c.inputs)
            expectClose(got[k] as Float64Array, want[k] as Float64Array, 1e-12, `${backend} #${k}`)
        }
        // `fuse: false` keeps f and its adjoint as two programs, with the same gradients
        const apart = grad(f, { loss: 0, fuse: false })
        expect(String(apart.plan)).not.toContain('as one program')
        const got = apart(...c.args())
        for (const k of c.inputs)
          expectClose(got[k] as Float64Array, want[k] as Float64Array, 1e-12, `${backend} apart #${k}`)
      }
    })
  }

  it('is not built where f applies no such primitive, nor for an inverse', () => {
    const f = compile(
      `fn sq_loss(loss: f64, x: f64[], w: f64[]) {
  for i in 0..len(x) - 1 { x[i + 1] += x[i] * w[i] }
  for i in 0..len(x) { loss += x[i] * x[i] }
}`,
      'cpu',
      false,
    ).sq_loss!
    expect(compileTwoSweep(f, 0)).toBeNull()
    expect(compileTwoSweep(f.inverse, 0)).toBeNull()
  })

  it('leaves the recomputed inputs for the uncompute check: a sweep that does not come back is reported', () => {
    // x[1] *= w[0] / w[0] by a multiplier that rounds: not exactly undone at these values
    const f = compile(
      `fn lossy(loss: f64, x: f64[], w: f64[]) {
  x[1] += x[0] * cos(w[0]) * 1e300
  x[0] += x[1] * 1e300
  for i in 0..len(x) { loss += x[i] * cos(w[i]) }
}`,
      'cpu',
      false,
    ).lossy!
    const g = grad(f, { loss: 0 })
    expect(String(g.plan)).toContain('as one program')
    expect(() => g(0, Float64Array.of(1e-300, 3), Float64Array.of(0.1, 0.2))).toThrow(/did not bring/)
  })
})
