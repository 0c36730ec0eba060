/**
 * The graph-embedding loss of seed 001 ("Solving a graph embedding problem") written in Tenet:
 * positions `x` of the 10 vertices of the Petersen graph in k dimensions (vertex-major,
 * `x[v·k + d]`), and
 *
 *   L = Var(d₁) + Var(d₂) + exp(relu(mean(d₁) − mean(d₂) + 0.1)) − 1
 *
 * with d₁ the Euclidean lengths of the 15 edges, d₂ those of the 30 non-edges and Var the sample
 * variance (divisor n − 1). The work arrays `q1, q2` (squared lengths) and `d1, d2` (lengths) are
 * passed in as zeros and left holding the lengths, so a call allocates nothing; their gradients
 * come out beside that of `x`. Exported as source so that benchmarks and tests compile the same
 * program with their own registry.
 */

/** Tenet source of `embedding_loss(loss, x, q1, d1, q2, d2, k, e1, e2)` and its helper `lengths`. */
export const graphEmbeddingSource = `
fn lengths(q: f64[], d: f64[], x: f64[], k: i32, pairs: i32[]) {
  for e in 0..len(d) {
    a: i32 <- pairs[2 * e] * k
    b: i32 <- pairs[2 * e + 1] * k
    for j in 0..k { q[e] += (x[a + j] - x[b + j]) ** 2 }
    d[e] += sqrt(q[e])
    b -> pairs[2 * e + 1] * k
    a -> pairs[2 * e] * k
  }
}
fn embedding_loss(loss: f64, x: f64[], q1: f64[], d1: f64[], q2: f64[], d2: f64[], k: i32, e1: i32[], e2: i32[]) {
  lengths(q1, d1, x, k, e1)
  lengths(q2, d2, x, k, e2)
  s1 <- 0.0
  s2 <- 0.0
  m1 <- 0.0
  m2 <- 0.0
  v1 <- 0.0
  v2 <- 0.0
  routine {
    for e in 0..len(d1) { s1 += d1[e] }
    for e in 0..len(d2) { s2 += d2[e] }
    m1 += s1 / f64(len(d1))
    m2 += s2 / f64(len(d2))
    for e in 0..len(d1) { v1 += (d1[e] - m1) ** 2 }
    for e in 0..len(d2) { v2 += (d2[e] - m2) ** 2 }
  }
  loss += v1 / f64(len(d1) - 1) + v2 / f64(len(d2) - 1) + exp(max(m1 - m2 + 0.1, 0.0)) - 1.0
  ~routine
  v2 -> 0.0
  v1 -> 0.0
  m2 -> 0.0
  m1 -> 0.0
  s2 -> 0.0
  s1 -> 0.0
}`

/** The 15 edges of the Petersen graph (0-based): outer 5-cycle, spokes, inner pentagram. */
export const petersenEdges: ReadonlyArray<readonly [number, number]> = [
  [0, 5],
  [1, 6],
  [2, 7],
  [3, 8],
  [4, 9],
  [0, 1],
  [1, 2],
  [2, 3],
  [3, 4],
  [0, 4],
  [5, 7],
  [7, 9],
  [6, 9],
  [6, 8],
  [5, 8],
]

/** The 30 vertex pairs of the Petersen graph that are not edges. */
export const petersenNonEdges: ReadonlyArray<readonly [number, number]> = (() => {
  const edge = new Set(petersenEdges.map(([a, b]) => a * 10 + b))
  const out: Array<[number, number]> = []
  for (let a = 0; a < 10; a++) for (let b = a + 1; b < 10; b++) if (!edge.has(a * 10 + b)) out.push([a, b])
  return out
})()

/**
 * The arguments of `embedding_loss` for positions `x` (length 10·k): loss 0, fresh zero work
 * arrays, k and the flattened edge lists. `x` is used as is (not copied).
 */
export function graphEmbeddingArgs(x: Float64Array, k: number): unknown[] {
  if (x.length !== 10 * k) throw new RangeError(`x must hold 10·k = ${10 * k} coordinates, got ${x.length}`)
  const e1 = Int32Array.from(petersenEdges.flat()),
    e2 = Int32Array.from(petersenNonEdges.flat())
  return [0, x, new Float64Array(15), new Float64Array(15), new Float64Array(30), new Float64Array(30), k, e1, e2]
}
