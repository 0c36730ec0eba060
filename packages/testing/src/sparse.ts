/** A sparse matrix in compressed sparse column form (0-based), as the papers' sparse programs take it. */
export interface CscMatrix {
  colptr: Int32Array
  rowval: Int32Array
  nzval: Float64Array
}

/**
 * A seeded random m×n sparse matrix in CSC form: each entry is present with probability
 * `density`, with a value uniform in [−1, 1). Deterministic for a given seed (an LCG).
 */
export function randomCsc(m: number, n: number, density: number, seed: number): CscMatrix {
  let s = seed >>> 0
  const rnd = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
  const colptr = new Int32Array(n + 1)
  const rows: number[] = [],
    vals: number[] = []
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < m; i++)
      if (rnd() < density) {
        rows.push(i)
        vals.push(rnd() * 2 - 1)
      }
    colptr[j + 1] = rows.length
  }
  return { colptr, rowval: Int32Array.from(rows), nzval: Float64Array.from(vals) }
}
