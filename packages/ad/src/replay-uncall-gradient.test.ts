/**
 * Pass `replay-uncall` (see `@tenet/ir`) in gradient programs: the leapfrog's gradient with
 * run-time checks on (the step's acceleration call records its terms, its uncall replays them) is
 * the gradient with checks off (no replay: `dead-ancillas` drops the uncompute), bit for bit, for
 * an acceleration routine with scalar parameters (its callers call its internal copy) and one of
 * arrays only (its callers call the host's entry copy, which must not empty the tape).
 */
import { describe, expect, it } from 'vitest'
import { gradient } from './index.js'
import { accelSource } from '@tenet/testing'
import { tag } from './test-util.js'

const leapfrog = (scalars: boolean) => `
${accelSource(scalars)}fn leapfrog(e: f64, x: f64[], v: f64[], m: f64[], dt: f64, steps: i32) {
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
