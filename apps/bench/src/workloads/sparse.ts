import { checkClose, lazy } from '../harness/check.js'
import type { CaseOptions, CaseSpec, Workload } from '../harness/types.js'
import { createRng } from '../math/prng.js'
import {
  randomCsc,
  sparseComplexMulBackwardPlain,
  sparseComplexMulPlain,
  sparseDotGradientPlain,
  sparseDotPlain,
  type ComplexCscMatrix,
  type ComplexVector,
  type CscMatrix,
} from '../objectives/sparse.js'

export interface SparseDotCase {
  A: CscMatrix
  B: CscMatrix
  value: () => number
  /** ∂/∂A.values, ∂/∂B.values */
  gradient: () => { gA: Float64Array; gB: Float64Array }
}

export interface SparseMulCase {
  A: ComplexCscMatrix
  x: ComplexVector
  y0: ComplexVector
  /** cotangent for the reverse pass */
  yBar: ComplexVector
  /** y0 + A x */
  y: () => ComplexVector
  backward: () => { xBar: ComplexVector; aBarRe: Float64Array; aBarIm: Float64Array }
}

const sizes = (o: CaseOptions): number[] => (o.full ? [1000, 4000] : [1000])

function complexVector(n: number, seed: number): ComplexVector {
  const rng = createRng(seed)
  return { re: Float64Array.from({ length: n }, rng.normal), im: Float64Array.from({ length: n }, rng.normal) }
}

/** Timed results are added here, so their work is never dead code (a typed array: a module variable would box every double stored into it). */
const sink = new Float64Array(1)

export const sparseDotWorkload: Workload<SparseDotCase> = {
  id: 'sparse-dot',
  title: 'Sparse Frobenius dot product',
  description:
    'trace(AᵀB) of two random CSC matrices at density 0.05, and its gradient with respect to both value arrays.',
  cases: (o): CaseSpec<SparseDotCase>[] =>
    sizes(o).map((n) => ({
      label: `${n}×${n} ρ=0.05`,
      params: { n, density: 0.05 },
      make: () => {
        const A = randomCsc(n, n, 0.05, 11)
        const B = randomCsc(n, n, 0.05, 12)
        return { A, B, value: lazy(() => sparseDotPlain(A, B)), gradient: lazy(() => sparseDotGradientPlain(A, B)) }
      },
    })),
  baseline: { name: 'plain TS objective', setup: (c) => ({ run: () => void (sink[0] += sparseDotPlain(c.A, c.B)) }) },
  rows: [
    {
      name: 'plain TS (hand-derived)',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const gA = new Float64Array(c.A.values.length)
        const gB = new Float64Array(c.B.values.length)
        return {
          run: () => void sparseDotGradientPlain(c.A, c.B, 1, gA, gB),
          check: () => {
            sparseDotGradientPlain(c.A, c.B, 1, gA, gB)
            // independent oracle: the gradient must reproduce the value (the dot is bilinear)
            let s = 0
            for (let i = 0; i < gA.length; i++) s += gA[i] * c.A.values[i]
            return checkClose([s], [c.value()], 1e-12, 'Σ ∂/∂A · A')
          },
        }
      },
    },
  ],
}

export const sparseMulWorkload: Workload<SparseMulCase> = {
  id: 'sparse-mul',
  title: 'Complex sparse × dense vector',
  description:
    'y ← αAx + βy with α = β = 1 for a complex CSC matrix A at density 0.05; the inverse (y ← y − Ax) and the reverse pass for a given ȳ.',
  cases: (o): CaseSpec<SparseMulCase>[] =>
    sizes(o).map((n) => ({
      label: `${n}×${n} ρ=0.05`,
      params: { n, density: 0.05 },
      make: () => {
        const A = randomCsc(n, n, 0.05, 21, true)
        const x = complexVector(n, 22)
        const y0 = complexVector(n, 23)
        const yBar = complexVector(n, 24)
        return {
          A,
          x,
          y0,
          yBar,
          y: lazy(() => {
            const y = { re: y0.re.slice(), im: y0.im.slice() }
            sparseComplexMulPlain(y, A, x)
            return y
          }),
          backward: lazy(() => {
            const xBar = { re: new Float64Array(n), im: new Float64Array(n) }
            const aBarRe = new Float64Array(A.values.length)
            const aBarIm = new Float64Array(A.values.length)
            sparseComplexMulBackwardPlain(A, x, yBar, xBar, aBarRe, aBarIm)
            return { xBar, aBarRe, aBarIm }
          }),
        }
      },
    })),
  baseline: {
    name: 'plain TS objective',
    setup(c) {
      const y = { re: c.y0.re.slice(), im: c.y0.im.slice() }
      // y grows by Ax each call; the cost is what is measured, the value is irrelevant
      return { run: () => sparseComplexMulPlain(y, c.A, c.x) }
    },
  },
  rows: [
    {
      name: 'plain TS (hand-derived)',
      family: 'plain TS',
      kind: 'inverse',
      setup(c) {
        const y = { re: c.y0.re.slice(), im: c.y0.im.slice() }
        const minusOne: [number, number] = [-1, 0]
        return {
          run: () => sparseComplexMulPlain(y, c.A, c.x, minusOne),
          check: () => {
            y.re.set(c.y().re)
            y.im.set(c.y().im)
            sparseComplexMulPlain(y, c.A, c.x, minusOne)
            const r = checkClose([...y.re, ...y.im], [...c.y0.re, ...c.y0.im], 1e-12, 'y after inverse')
            return r
          },
        }
      },
    },
    {
      name: 'plain TS (hand-derived)',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const n = c.A.cols
        const xBar = { re: new Float64Array(n), im: new Float64Array(n) }
        const aRe = new Float64Array(c.A.values.length)
        const aIm = new Float64Array(c.A.values.length)
        const run = (): void => {
          xBar.re.fill(0)
          xBar.im.fill(0)
          aRe.fill(0)
          aIm.fill(0)
          sparseComplexMulBackwardPlain(c.A, c.x, c.yBar, xBar, aRe, aIm)
        }
        return {
          run,
          check: () => {
            run()
            // bilinearity: ⟨ȳ, A x⟩ = ⟨x̄, x⟩ = ⟨Ā, A⟩
            let lhs = 0
            const y = c.y()
            for (let i = 0; i < n; i++)
              lhs += c.yBar.re[i] * (y.re[i] - c.y0.re[i]) + c.yBar.im[i] * (y.im[i] - c.y0.im[i])
            let viaX = 0
            for (let i = 0; i < n; i++) viaX += xBar.re[i] * c.x.re[i] + xBar.im[i] * c.x.im[i]
            let viaA = 0
            for (let k = 0; k < aRe.length; k++) viaA += aRe[k] * c.A.values[k] + aIm[k] * c.A.imag[k]
            return checkClose([viaX, viaA], [lhs, lhs], 1e-10, '⟨ȳ, Ax⟩')
          },
        }
      },
    },
  ],
}
