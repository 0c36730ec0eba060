/**
 * The mirrored copy of `hessian`'s columns (`mirrorCopier`: each gradient tangent read once and
 * written to its row and, below the diagonal, to its mirror image), against a plain reference at
 * widths that take the generated copy (≤ 64) and the loop (> 64); and the Hessians it assembles on
 * cpu and wasm with run-time checks off (skipped rows, mirrored lower triangle) against central
 * differences of the exact gradient and against the checks-on Hessian (no mirroring: every
 * column computed, then symmetrised).
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { hessian } from './index.js'
import { mirrorCopier } from './hessian.js'
import { expectClose, fdHessian, tag, testRegistry } from './test-util.js'

/** What the mirrored copy must write: rows e0… of b to H's rows row + e, and below the diagonal their mirror images. */
function reference(
  H: Float64Array,
  b: Float64Array,
  w: number,
  len: number,
  e0: number,
  row: number,
  c0: number,
  n: number,
) {
  for (let e = e0; e < len; e++)
    for (let k = 0; k < w; k++) {
      H[(row + e) * n + c0 + k] = b[e * w + k]!
      if (c0 + k < row + e) H[(c0 + k) * n + row + e] = b[e * w + k]!
    }
}

describe('the mirrored column copy of hessian', () => {
  // (w, rows of the array, its first row in H, the sweep's first column, H's order)
  const cases: Array<[number, number, number, number, number]> = [
    [1, 7, 0, 3, 7],
    [3, 10, 2, 3, 13],
    [8, 20, 5, 8, 25],
    [25, 100, 0, 50, 100],
    [25, 40, 60, 75, 100],
    [70, 80, 10, 0, 90],
    [70, 80, 10, 70, 90],
  ]
  it.each(cases)(
    'at width %i (%i rows from row %i, columns from %i, n = %i) writes what the reference writes, nothing else',
    (w, len, row, c0, n) => {
      const b = Float64Array.from({ length: len * w }, (_, i) => Math.sin(1 + i * 0.7))
      const e0 = Math.max(0, c0 - row)
      const got = new Float64Array(n * n).fill(Number.NaN)
      const want = new Float64Array(n * n).fill(Number.NaN)
      mirrorCopier(w)(got, b, len, e0, row, c0, n)
      reference(want, b, w, len, e0, row, c0, n)
      // exactly (NaN where neither writes)
      expect(Array.from(got, (v) => (Number.isNaN(v) ? 'NaN' : v))).toEqual(
        Array.from(want, (v) => (Number.isNaN(v) ? 'NaN' : v)),
      )
    },
  )
})

const source = `
fn f(loss: f64, s: f64, x: f64[], y: f64[]) {
  for i in 0..len(x) {
    for j in 0..len(y) {
      loss += sin(x[i] * y[j] + s) * (x[i] - y[j])
    }
  }
}`

describe.each(['cpu', 'wasm'] as const)('hessians assembled by the mirrored copy on %s', (backend) => {
  const registry = testRegistry().registerBackend(wasmBackend)
  const fast = tag({ backend, checks: false, registry })(source).f!
  const checked = tag({ backend, checks: true, registry })(source).f!
  const values = (n: number, seed: number) => Float64Array.from({ length: n }, (_, i) => Math.sin(seed + 1.3 * i) * 0.9)

  it('match differences of the gradient and the checks-on Hessian, over two arrays and a scalar in several sweeps', () => {
    // 23 + 1 + 9 = 33 scalars at width 6: six sweeps, full rows (below each sweep's diagonal block) in each
    const args = [0, 0.2, values(23, 1), values(9, 2)]
    for (const wrt of [[2, 1, 3], [3, 2], [2]]) {
      const H = hessian(fast, args, { loss: 0, wrt, width: 6 })
      const n = Math.sqrt(H.length)
      for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) expect(H[i * n + j]).toBe(H[j * n + i])
      expectClose(H, fdHessian(fast, args, wrt), 1e-6, `H over ${wrt.join(',')}`)
      expectClose(H, hessian(checked, args, { loss: 0, wrt, width: 6 }), 1e-12, `H over ${wrt.join(',')} (checks on)`)
    }
  })
})
