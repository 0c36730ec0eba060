/**
 * Example: a unitary recurrent layer. The hidden state h (m numbers) takes the input of each
 * step and is then rotated by U(θ), the Givens-decomposed unitary matrix of seed 000 Listing 14
 * (`i_umm` with one column): h ← U(θ)(h + x_t) for t = 0 … steps−1. The cell is reversible, so its
 * gradient (Tenet's adjoint) un-rotates h step by step and stores no activations.
 */
import { ummSource } from '@tenet/ad'
import type { TenetFunction } from '@tenet/reversible'
import { TenetLayer, type LayerArgs, type TenetWeight } from '../layer.js'

/**
 * The Tenet source: `urnn(h, xs, theta, m, steps)` (xs holds the steps' inputs one after the
 * other, m each) and `urnn_loss(loss, h, xs, theta, y, m, steps)` = Σ (h − y)² after the
 * recurrence (the f64 reference for tests).
 */
export const unitaryRnnSource = `${ummSource}
fn urnn(h: f64[], xs: f64[], theta: f64[], m: i32, steps: i32) {
  for t in 0..steps {
    for i in 0..m { h[i] += xs[i + m * t] }
    i_umm(h, theta, m, 1)
  }
}
fn urnn_loss(loss: f64, h: f64[], xs: f64[], theta: f64[], y: f64[], m: i32, steps: i32) {
  urnn(h, xs, theta, m, steps)
  for i in 0..m { loss += (h[i] - y[i]) * (h[i] - y[i]) }
}
`

/** The number of Givens angles of an m × m unitary matrix: m(m−1)/2. */
export const givensAngles = (m: number): number => (m * (m - 1)) / 2

/**
 * A `TenetLayer` running `urnn` (compiled from `unitaryRnnSource`) over inputs of shape
 * [batch, steps·m], with the m(m−1)/2 angles as its trainable weight `theta` (initialised by
 * `initializer`, default uniform in [−0.5, 0.5]); output [batch, m].
 */
export function unitaryRnnLayer(
  urnn: TenetFunction,
  options: { m: number; steps: number; initializer?: TenetWeight['initializer'] } & Omit<LayerArgs, 'inputShape'>,
): TenetLayer {
  const { m, steps, initializer, ...base } = options
  return new TenetLayer({
    ...base,
    fn: urnn,
    inputs: ['xs'],
    output: 'h',
    variables: [{ param: 'theta', shape: [givensAngles(m)], ...(initializer ? { initializer } : {}) }],
    args: { h: () => new Float64Array(m), m, steps },
    outputShape: () => [m],
    inputShape: [steps * m],
  })
}

/** The same recurrence in plain TS (f64), for references: h after all steps. */
export function unitaryRnnPlain(
  xs: ArrayLike<number>,
  theta: ArrayLike<number>,
  m: number,
  steps: number,
): Float64Array {
  const h = new Float64Array(m)
  for (let t = 0; t < steps; t++) {
    for (let i = 0; i < m; i++) h[i]! += xs[i + m * t]!
    let k = 0
    for (let j = 0; j < m; j++)
      for (let i = m - 2; i >= j; i--) {
        const c = Math.cos(theta[k]!),
          s = Math.sin(theta[k]!)
        k++
        const a = h[i]!,
          b = h[i + 1]!
        h[i] = c * a - s * b
        h[i + 1] = s * a + c * b
      }
  }
  return h
}
