/**
 * Graph embedding of the Petersen graph (paper 001 §"Solving a graph embedding problem"):
 * positions x of 10 vertices in k dimensions (vertex-major: x[v·k + d]),
 *   L = Var(dist(L1)) + Var(dist(L2)) + exp(relu(mean(dist(L1)) − mean(dist(L2)) + 0.1)) − 1
 * with Euclidean distances, L1 the 15 edges, L2 the 30 non-edges, and Var the sample variance
 * (divisor n − 1, as Julia's `var`).
 */

/** The 15 edges (0-based): outer 5-cycle, spokes, inner pentagram. */
export const PETERSEN_EDGES: readonly (readonly [number, number])[] = [
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

/** The 30 vertex pairs that are not edges. */
export const PETERSEN_NON_EDGES: readonly (readonly [number, number])[] = (() => {
  const edge = new Set(PETERSEN_EDGES.map(([a, b]) => a * 10 + b))
  const out: [number, number][] = []
  for (let a = 0; a < 10; a++) for (let b = a + 1; b < 10; b++) if (!edge.has(a * 10 + b)) out.push([a, b])
  return out
})()

/**
 * The edge and non-edge lists flattened to [a₀, b₀, a₁, b₁, …] — the `e1`, `e2` arguments of the
 * Tenet program and the layout the plain kernels read. Shared, never written.
 */
export const PETERSEN_E1 = Int32Array.from(PETERSEN_EDGES.flat())
export const PETERSEN_E2 = Int32Array.from(PETERSEN_NON_EDGES.flat())

function distances(x: Float64Array, k: number, pairs: Int32Array, out: Float64Array): void {
  for (let e = 0; e < out.length; e++) {
    const a = pairs[2 * e] * k
    const b = pairs[2 * e + 1] * k
    let s = 0
    for (let d = 0; d < k; d++) {
      const t = x[a + d] - x[b + d]
      s += t * t
    }
    out[e] = Math.sqrt(s)
  }
}

function meanOf(a: Float64Array): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]
  return s / a.length
}

function varianceOf(a: Float64Array, mean: number): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += (a[i] - mean) * (a[i] - mean)
  return s / (a.length - 1)
}

export interface EmbeddingWorkspace {
  d1: Float64Array
  d2: Float64Array
}

export function createEmbeddingWorkspace(): EmbeddingWorkspace {
  return { d1: new Float64Array(PETERSEN_E1.length / 2), d2: new Float64Array(PETERSEN_E2.length / 2) }
}

export function embeddingLossPlain(
  x: Float64Array,
  k: number,
  ws: EmbeddingWorkspace = createEmbeddingWorkspace(),
): number {
  distances(x, k, PETERSEN_E1, ws.d1)
  distances(x, k, PETERSEN_E2, ws.d2)
  const m1 = meanOf(ws.d1)
  const m2 = meanOf(ws.d2)
  const t = m1 - m2 + 0.1
  return varianceOf(ws.d1, m1) + varianceOf(ws.d2, m2) + Math.exp(t > 0 ? t : 0) - 1
}

/**
 * Adds the gradient of Σₑ w(dₑ)·dₑ-terms over one pair list to `out`: with ∂L/∂dₑ = 2(dₑ − mean)/(n − 1) + c
 * (c the relu-exp term's share, the same for every pair of the list), ∂dₑ/∂x_a = (x_a − x_b)/dₑ.
 * A module-level function taking everything as arguments: a closure made per call (as this was
 * written before) kept x, k and out in its context and ran about 1.3–1.7× slower on V8.
 */
function accumulatePairs(
  x: Float64Array,
  k: number,
  pairs: Int32Array,
  dist: Float64Array,
  mean: number,
  c: number,
  out: Float64Array,
): void {
  const n = dist.length
  for (let e = 0; e < n; e++) {
    const scale = ((2 * (dist[e] - mean)) / (n - 1) + c) / dist[e]
    const a = pairs[2 * e] * k
    const b = pairs[2 * e + 1] * k
    for (let d = 0; d < k; d++) {
      const v = scale * (x[a + d] - x[b + d])
      out[a + d] += v
      out[b + d] -= v
    }
  }
}

/** Hand-derived gradient of {@link embeddingLossPlain} (the plain-TS gradient row, and checks). */
export function embeddingGradientPlain(
  x: Float64Array,
  k: number,
  out: Float64Array = new Float64Array(x.length),
  ws: EmbeddingWorkspace = createEmbeddingWorkspace(),
): Float64Array {
  out.fill(0)
  distances(x, k, PETERSEN_E1, ws.d1)
  distances(x, k, PETERSEN_E2, ws.d2)
  const m1 = meanOf(ws.d1)
  const m2 = meanOf(ws.d2)
  const t = m1 - m2 + 0.1
  const g = t > 0 ? Math.exp(t) : 0
  accumulatePairs(x, k, PETERSEN_E1, ws.d1, m1, g / ws.d1.length, out)
  accumulatePairs(x, k, PETERSEN_E2, ws.d2, m2, -g / ws.d2.length, out)
  return out
}
