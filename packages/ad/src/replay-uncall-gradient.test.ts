/**
 * Pass `replay-uncall` (see `@tenet/ir`) in gradient programs: the leapfrog's gradient with
 * run-time checks on (the step's acceleration call records its terms, its uncall replays them) is
 * the gradient with checks off (no replay: `dead-ancillas` drops the uncompute), bit for bit, for
 * an acceleration routine with scalar parameters (its callers call its internal copy) and one of
 * arrays only (its callers call the host's entry copy, which must not empty the tape).
 */
import { describe, expect, it } from 'vitest'
import { gradient } from './index.js'
import { tag } from './test-util.js'

const leapfrog = (scalars: boolean) => `
fn accel(a: f64[], x: f64[], m: f64[]${scalars ? ', nb: i32, g: f64' : ''}) {
  for i in 0..${scalars ? 'nb' : 'len(m)'} {
    for j in 0..${scalars ? 'nb' : 'len(m)'} {
      if (i != j, ~) {
        routine {
          dx: f64[] <- zeros(3)
          for c in 0..3 { dx[c] += x[3 * j + c] - x[3 * i + c] }
          r2: f64 <- 0.0
          r2 += dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
          r: f64 <- 0.0
          r += sqrt(r2)
          s: f64 <- 0.0
          s += ${scalars ? 'g' : '0.5'} * m[j] / (r2 * r)
        }
        for c in 0..3 { a[3 * i + c] += s * dx[c] }
        ~routine
      }
    }
  }
}
fn leapfrog(e: f64, x: f64[], v: f64[], m: f64[], dt: f64, steps: i32) {
  for t in 0..steps {
    for i in 0..len(x) { x[i] += v[i] * dt }
    routine {
      a: f64[] <- zeros(len(x))
      accel(a, x, m${scalars ? ', len(m), 0.5' : ''})
    }
    for i in 0..len(x) { v[i] += a[i] * dt }
    ~routine
  }
  for i in 0..len(v) { e += v[i] * v[i] }
}`

const args = () => [
  0,
  Float64Array.from([0, 0, 0, 1, 0, 0.1, -0.5, 2, 0]),
  Float64Array.from([0, 0, 0, 0, 0.3, 0, 0.2, 0, 0.05]),
  Float64Array.from([1, 1e-3, 2e-3]),
  0.01,
  3,
]

describe('replay-uncall in gradient programs (checks on)', () => {
  for (const scalars of [true, false])
    it(`the leapfrog's gradient, checks on = checks off (accel ${scalars ? 'with' : 'without'} scalar parameters)`, () => {
      const src = leapfrog(scalars)
      const on = gradient(tag({ checks: true })(src).leapfrog!, args(), { loss: 0 })
      const off = gradient(tag({ checks: false })(src).leapfrog!, args(), { loss: 0 })
      expect(on).toEqual(off)
    })
})
