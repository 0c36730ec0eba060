/**
 * Objectives written in the source language with the builder API: a Gaussian mixture model's
 * log-likelihood (ADBench's GMM objective) and a two-layer perceptron's squared loss. They are
 * what a user writes; the tests and `apps/bench` compile and differentiate them.
 */
import { add, c, dot, let_, lets, logsumexp, map, map2, mapN, mul, op, prefix, sub, sum, v, type Term } from './term.js'
import { arrayType, R, type Type } from './types.js'

const R1 = arrayType(R)
const R2 = arrayType(R1)
const R3 = arrayType(R2)

/** `‖a‖²`. */
export const sqnorm = (a: Term): Term => sum(map(a, (x) => op('square', x)))
/** `M·x` for a matrix given by rows. */
export const matvec = (m: Term, x: Term): Term => map(m, (row) => dot(row, x))

/** Options of `gmmObjective`. */
export interface GmmObjectiveOptions {
  /**
   * The strictly lower part of each factor Q_k stored by rows as a triangle: row j holds its j
   * entries left of the diagonal (row 0 is empty), read against the matching prefix of the
   * centred point (`prefix`). Default false: dense D × D rows, zeros on and above the diagonal.
   */
  triangular?: boolean
}

/**
 * ADBench's GMM objective, written functionally. Parameters: `alphas` (K), `means` (K×D),
 * `logdiag` (K×D, the log-diagonals of the inverse-covariance factors Q_k), `lower` (K×D×D, the
 * strictly lower parts of Q_k as dense rows, zeros on and above the diagonal; with `triangular`,
 * K×D rows of lengths 0, 1, …, D − 1), `xs` (N×D), `gamma`, `m` (Wishart prior), `n` (N as a
 * real) and `constant` (the data-independent terms).
 *
 *   Σᵢ logsumexp_k(α_k + Σ logdiag_k − ½‖Q_k(xᵢ − μ_k)‖²) − n·logsumexp(α)
 *     + Σ_k ½γ²(‖exp logdiag_k‖² + ‖lower_k‖²) − m Σ logdiag_k + constant
 */
export function gmmObjective(options: GmmObjectiveOptions = {}): { params: Array<[string, Type]>; body: Term } {
  // row j of Q_k(x − μ): the diagonal entry times x_j, plus the row of the lower part against x
  // (all of it, or the prefix of its length)
  const lowerTimes = (lrow: Term, xc: Term): Term => dot(lrow, options.triangular ? prefix(xc, lrow) : xc)
  const params: Array<[string, Type]> = [
    ['alphas', R1],
    ['means', R2],
    ['logdiag', R2],
    ['lower', R3],
    ['xs', R2],
    ['gamma', R],
    ['m', R],
    ['n', R],
    ['constant', R],
  ]
  const body = lets(
    [
      ['sumq', map(v('logdiag'), (q) => sum(q))],
      ['qd', map(v('logdiag'), (q) => map(q, (t) => op('exp', t)))],
      [
        'slse',
        sum(
          map(v('xs'), (x) =>
            logsumexp(
              mapN([v('alphas'), v('sumq'), v('means'), v('qd'), v('lower')], (a, s, mu, d, l) =>
                let_(
                  'xc',
                  map2(x, mu, (xi, mi) => sub(xi, mi)),
                  sub(
                    add(a, s),
                    mul(
                      c(0.5),
                      sqnorm(mapN([d, v('xc'), l], (dj, xj, lrow) => add(mul(dj, xj), lowerTimes(lrow, v('xc'))))),
                    ),
                  ),
                ),
              ),
            ),
          ),
        ),
      ],
      [
        'prior',
        sum(
          mapN([v('qd'), v('sumq'), v('lower')], (d, s, l) =>
            sub(
              mul(mul(c(0.5), mul(v('gamma'), v('gamma'))), add(sqnorm(d), sum(map(l, (row) => sqnorm(row))))),
              mul(v('m'), s),
            ),
          ),
        ),
      ],
    ],
    add(add(sub(v('slse'), mul(v('n'), logsumexp(v('alphas')))), v('prior')), v('constant')),
  )
  return { params, body }
}

/**
 * A two-layer perceptron's summed squared error over a batch: parameters `w1` (H×D), `b1` (H),
 * `w2` (O×H), `b2` (O), inputs `xs` (N×D) and targets `ys` (N×O):
 *   Σₙ ‖W₂ tanh(W₁xₙ + b₁) + b₂ − yₙ‖²
 */
export function mlpObjective(): { params: Array<[string, Type]>; body: Term } {
  const params: Array<[string, Type]> = [
    ['w1', R2],
    ['b1', R1],
    ['w2', R2],
    ['b2', R1],
    ['xs', R2],
    ['ys', R2],
  ]
  const body = sum(
    map2(v('xs'), v('ys'), (x, y) =>
      let_(
        'h',
        map2(matvec(v('w1'), x), v('b1'), (a, b) => op('tanh', add(a, b))),
        sum(mapN([matvec(v('w2'), v('h')), v('b2'), y], (o, b, t) => op('square', sub(add(o, b), t)))),
      ),
    ),
  )
  return { params, body }
}

/** `dot(A, B)` over two real arrays. */
export function dotObjective(): { params: Array<[string, Type]>; body: Term } {
  return {
    params: [
      ['A', R1],
      ['B', R1],
    ],
    body: dot(v('A'), v('B')),
  }
}
