import { createRng } from '../math/prng.js'

/** Compressed sparse column matrix (0-based), rows sorted within each column. */
export interface CscMatrix {
  rows: number
  cols: number
  colPtr: Int32Array
  rowIdx: Int32Array
  values: Float64Array
}

/** A complex CSC matrix: the same pattern with real and imaginary parts. */
export interface ComplexCscMatrix extends CscMatrix {
  imag: Float64Array
}

/**
 * A seeded random CSC matrix: each entry present with probability `density`, values standard
 * normal (and, for `complex`, an independent normal imaginary part).
 */
export function randomCsc(rows: number, cols: number, density: number, seed: number): CscMatrix
export function randomCsc(rows: number, cols: number, density: number, seed: number, complex: true): ComplexCscMatrix
export function randomCsc(rows: number, cols: number, density: number, seed: number, complex = false): CscMatrix {
  const rng = createRng(seed)
  const colPtr = new Int32Array(cols + 1)
  const idx: number[] = []
  for (let j = 0; j < cols; j++) {
    for (let i = 0; i < rows; i++) if (rng.uniform() < density) idx.push(i)
    colPtr[j + 1] = idx.length
  }
  const values = new Float64Array(idx.length)
  for (let k = 0; k < idx.length; k++) values[k] = rng.normal()
  const m: CscMatrix = { rows, cols, colPtr, rowIdx: Int32Array.from(idx), values }
  if (!complex) return m
  const imag = new Float64Array(idx.length)
  for (let k = 0; k < idx.length; k++) imag[k] = rng.normal()
  return { ...m, imag } as ComplexCscMatrix
}

/**
 * Frobenius inner product trace(AᵀB) = Σ A_ij B_ij of two CSC matrices of the same shape: the
 * sorted-merge loop of Julia's SparseArrays `dot`. (Equally a CSR dot of the transposes.)
 */
export function sparseDotPlain(A: CscMatrix, B: CscMatrix): number {
  if (A.rows !== B.rows || A.cols !== B.cols) throw new RangeError('sparseDot: shapes differ')
  let r = 0
  const ar = A.rowIdx
  const br = B.rowIdx
  const av = A.values
  const bv = B.values
  for (let j = 0; j < A.cols; j++) {
    let ia = A.colPtr[j]
    const iaEnd = A.colPtr[j + 1]
    let ib = B.colPtr[j]
    const ibEnd = B.colPtr[j + 1]
    while (ia < iaEnd && ib < ibEnd) {
      const ra = ar[ia]
      const rb = br[ib]
      if (ra < rb) ia++
      else if (ra > rb) ib++
      else {
        r += av[ia] * bv[ib]
        ia++
        ib++
      }
    }
  }
  return r
}

/** ∂(A·B)/∂A.values and ∂/∂B.values scaled by `seed` (the pattern of each input). */
export function sparseDotGradientPlain(
  A: CscMatrix,
  B: CscMatrix,
  seed = 1,
  gA = new Float64Array(A.values.length),
  gB = new Float64Array(B.values.length),
): { gA: Float64Array; gB: Float64Array } {
  gA.fill(0)
  gB.fill(0)
  for (let j = 0; j < A.cols; j++) {
    let ia = A.colPtr[j]
    const iaEnd = A.colPtr[j + 1]
    let ib = B.colPtr[j]
    const ibEnd = B.colPtr[j + 1]
    while (ia < iaEnd && ib < ibEnd) {
      const ra = A.rowIdx[ia]
      const rb = B.rowIdx[ib]
      if (ra < rb) ia++
      else if (ra > rb) ib++
      else {
        gA[ia] += seed * B.values[ib]
        gB[ib] += seed * A.values[ia]
        ia++
        ib++
      }
    }
  }
  return { gA, gB }
}

/** A complex dense vector as separate real and imaginary arrays. */
export interface ComplexVector {
  re: Float64Array
  im: Float64Array
}

/**
 * y ← α·A·x + β·y for complex A (CSC), x and y, α and β complex (default 1), in place —
 * the column loop of Julia's `mul!` for sparse matrices.
 */
export function sparseComplexMulPlain(
  y: ComplexVector,
  A: ComplexCscMatrix,
  x: ComplexVector,
  alpha: [number, number] = [1, 0],
  beta: [number, number] = [1, 0],
): void {
  const [ar, ai] = alpha
  const [br, bi] = beta
  const yr = y.re
  const yi = y.im
  if (br !== 1 || bi !== 0)
    for (let i = 0; i < A.rows; i++) {
      const a = yr[i]
      const b = yi[i]
      yr[i] = br * a - bi * b
      yi[i] = br * b + bi * a
    }
  const rowIdx = A.rowIdx
  const vr = A.values
  const vi = A.imag
  for (let j = 0; j < A.cols; j++) {
    // αx_j
    const xr = ar * x.re[j] - ai * x.im[j]
    const xi = ar * x.im[j] + ai * x.re[j]
    for (let k = A.colPtr[j]; k < A.colPtr[j + 1]; k++) {
      const i = rowIdx[k]
      yr[i] += vr[k] * xr - vi[k] * xi
      yi[i] += vr[k] * xi + vi[k] * xr
    }
  }
}

/**
 * Reverse pass of y ← A·x + y (α = β = 1) for the real-valued pairing ⟨ȳ, y⟩ = Σ ȳr·yr + ȳi·yi:
 * accumulates x̄ += Aᴴ-like products and Ā (on A's pattern). ȳ passes through unchanged.
 */
export function sparseComplexMulBackwardPlain(
  A: ComplexCscMatrix,
  x: ComplexVector,
  yBar: ComplexVector,
  xBar: ComplexVector,
  aBarRe: Float64Array,
  aBarIm: Float64Array,
): void {
  for (let j = 0; j < A.cols; j++) {
    const xr = x.re[j]
    const xi = x.im[j]
    let gr = 0
    let gi = 0
    for (let k = A.colPtr[j]; k < A.colPtr[j + 1]; k++) {
      const i = A.rowIdx[k]
      const ur = yBar.re[i]
      const ui = yBar.im[i]
      const vr = A.values[k]
      const vi = A.imag[k]
      gr += vr * ur + vi * ui
      gi += -vi * ur + vr * ui
      aBarRe[k] += xr * ur + xi * ui
      aBarIm[k] += -xi * ur + xr * ui
    }
    xBar.re[j] += gr
    xBar.im[j] += gi
  }
}

/** Dense real matrix (row-major) of a CSC matrix (for peers and tests). */
export function cscToDense(A: CscMatrix, values: Float64Array = A.values): Float64Array {
  const out = new Float64Array(A.rows * A.cols)
  for (let j = 0; j < A.cols; j++)
    for (let k = A.colPtr[j]; k < A.colPtr[j + 1]; k++) out[A.rowIdx[k] * A.cols + j] = values[k]
  return out
}
