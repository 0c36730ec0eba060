import { arrayPrimitive } from '../array-primitive.js'
import { TenetError } from '../errors.js'

/** The order n of a square matrix stored row-major in an array of n² elements. */
function order(A: Float64Array): number {
  const n = Math.round(Math.sqrt(A.length))
  if (n * n !== A.length)
    throw new TenetError(
      'runtime/length',
      `\`det\` needs a square matrix (n² elements, row-major), got ${A.length} elements`,
    )
  return n
}

/** The determinant of the n×n row-major matrix `A`, by LU decomposition with partial pivoting (A is not changed). */
function determinant(A: Float64Array, n: number): number {
  const a = A.slice()
  let d = 1
  for (let c = 0; c < n; c++) {
    let p = c
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r * n + c]!) > Math.abs(a[p * n + c]!)) p = r
    if (a[p * n + c] === 0) return 0
    if (p !== c) {
      for (let j = 0; j < n; j++) {
        const t = a[c * n + j]!
        a[c * n + j] = a[p * n + j]!
        a[p * n + j] = t
      }
      d = -d
    }
    const pivot = a[c * n + c]!
    d *= pivot
    for (let r = c + 1; r < n; r++) {
      const f = a[r * n + c]! / pivot
      for (let j = c + 1; j < n; j++) a[r * n + j]! -= f * a[c * n + j]!
    }
  }
  return d
}

/** The cofactor matrix of `A` (∂det/∂Aᵢⱼ = Cᵢⱼ), from the (n−1)×(n−1) minors: also right where A is singular. */
function cofactors(A: Float64Array, n: number): Float64Array {
  const C = new Float64Array(n * n)
  if (n === 1) {
    C[0] = 1
    return C
  }
  const m = new Float64Array((n - 1) * (n - 1))
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let k = 0
      for (let r = 0; r < n; r++) {
        if (r === i) continue
        for (let c = 0; c < n; c++) if (c !== j) m[k++] = A[r * n + c]!
      }
      C[i * n + j] = ((i + j) % 2 === 0 ? 1 : -1) * determinant(m, n - 1)
    }
  }
  return C
}

/**
 * `det(A)`: the determinant of a square f64 matrix stored row-major (n² elements), with the
 * cofactor matrix as its partials (∂det/∂Aᵢⱼ = Cᵢⱼ, exact also for a singular A; O(n⁵), meant
 * for small matrices). Not in the default registry (user programs often name a function `det`):
 * register it with `registry.registerPrimitive(det)`.
 */
export const det = arrayPrimitive({
  name: 'det',
  args: ['array'],
  description: 'the determinant of a square f64 matrix stored row-major',
  evaluate: (A) => determinant(A, order(A)),
  partials: (A) => [cofactors(A, order(A))],
})
