/**
 * Unitary matrix multiply by a two-level (Givens) decomposition, paper 000 Listing 14: for every
 * column l of the M × N matrix x, for j = 1..M and i = M−1 down to j, rotate rows (i, i+1) by
 * θ_k with NiLang's ROT: (a, b) ← (cos θ·a − sin θ·b, sin θ·a + cos θ·b). θ has M(M−1)/2 angles,
 * applied in the same order to every column (x is row-major, x[i·N + l]).
 */
export function unitaryStepPlain(x: Float64Array, M: number, N: number, theta: Float64Array): void {
  if (theta.length !== (M * (M - 1)) / 2) throw new RangeError(`unitary: need M(M−1)/2 = ${(M * (M - 1)) / 2} angles`)
  let k = 0
  for (let j = 0; j < M; j++)
    for (let i = M - 2; i >= j; i--) {
      const c = Math.cos(theta[k])
      const s = Math.sin(theta[k])
      k++
      const ra = i * N
      const rb = ra + N
      for (let l = 0; l < N; l++) {
        const a = x[ra + l]
        const b = x[rb + l]
        x[ra + l] = c * a - s * b
        x[rb + l] = s * a + c * b
      }
    }
}

/** The exact inverse: the rotations by −θ in reverse order. */
export function unitaryStepInversePlain(x: Float64Array, M: number, N: number, theta: Float64Array): void {
  let k = theta.length
  for (let j = M - 1; j >= 0; j--)
    for (let i = j; i <= M - 2; i++) {
      k--
      const c = Math.cos(theta[k])
      const s = Math.sin(theta[k])
      const ra = i * N
      const rb = ra + N
      for (let l = 0; l < N; l++) {
        const a = x[ra + l]
        const b = x[rb + l]
        x[ra + l] = c * a + s * b
        x[rb + l] = -s * a + c * b
      }
    }
}

/** The scalar loss used for gradients: L = Σ c ⊙ U(θ)x. */
export function unitaryLossPlain(
  x0: Float64Array,
  M: number,
  N: number,
  theta: Float64Array,
  c: Float64Array,
  scratch = new Float64Array(x0.length),
): number {
  scratch.set(x0)
  unitaryStepPlain(scratch, M, N, theta)
  let s = 0
  for (let i = 0; i < scratch.length; i++) s += c[i] * scratch[i]
  return s
}

/**
 * Gradient of {@link unitaryLossPlain} with no stored intermediates: run forward, then walk the
 * rotations backwards, un-rotating the state and the adjoint together (the reversibility the
 * paper exploits). For a rotation with outputs (a', b') and adjoints (ā', b̄'):
 * θ̄ += a'·b̄' − b'·ā', and (ā, b̄) = Rᵀ(ā', b̄').
 */
export function unitaryGradientPlain(
  x0: Float64Array,
  M: number,
  N: number,
  theta: Float64Array,
  c: Float64Array,
  out: { x: Float64Array; theta: Float64Array; gx: Float64Array } = {
    x: new Float64Array(x0.length),
    theta: new Float64Array(theta.length),
    gx: new Float64Array(x0.length),
  },
): { gx: Float64Array; theta: Float64Array } {
  const x = out.x
  x.set(x0)
  unitaryStepPlain(x, M, N, theta)
  const gx = out.gx
  gx.set(c)
  const gt = out.theta
  gt.fill(0)
  let k = theta.length
  for (let j = M - 1; j >= 0; j--)
    for (let i = j; i <= M - 2; i++) {
      k--
      const cs = Math.cos(theta[k])
      const sn = Math.sin(theta[k])
      const ra = i * N
      const rb = ra + N
      let acc = 0
      for (let l = 0; l < N; l++) {
        const a = x[ra + l]
        const b = x[rb + l]
        const ga = gx[ra + l]
        const gb = gx[rb + l]
        acc += a * gb - b * ga
        x[ra + l] = cs * a + sn * b
        x[rb + l] = -sn * a + cs * b
        gx[ra + l] = cs * ga + sn * gb
        gx[rb + l] = -sn * ga + cs * gb
      }
      gt[k] = acc
    }
  return { gx, theta: gt }
}
