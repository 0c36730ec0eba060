import { describe, expect, it } from 'vitest'
import { finiteDifferenceOfCall } from '@tenet/testing'
import { grad, planGradient } from './index.js'
import { tag } from './test-util.js'

const m = tag({ checks: true })`
fn one_var(y: f64, x: f64) { y += sin(x) * x }
fn sum_sq(loss: f64, x: f64[]) { for i in 0..len(x) { loss += x[i] * x[i] } }
fn norm_like(out: f64, x: f64[], s: f64) {
  t <- 0.0
  routine {
    for i in 0..len(x) { t += x[i] * x[i] * s }
  }
  out += sqrt(t)
  ~routine
  t -> 0.0
}
fn writes_x(loss: f64, x: f64[]) { x[0] += x[1] * 2.0; loss += x[0] * x[0] }
fn norm_shift(out: f64, x: f64[], s: f64, u: f64) {
  t <- 0.0
  routine {
    for i in 0..len(x) { t += x[i] * x[i] * s }
  }
  out += sqrt(t)
  u += t * s
  ~routine
  t -> 0.0
}
`
const fast = tag({ checks: false })`fn norm_like(out: f64, x: f64[], s: f64) {
  t <- 0.0
  routine { for i in 0..len(x) { t += x[i] * x[i] * s } }
  out += sqrt(t)
  ~routine
  t -> 0.0
}
fn norm_shift(out: f64, x: f64[], s: f64, u: f64) {
  t <- 0.0
  routine { for i in 0..len(x) { t += x[i] * x[i] * s } }
  out += sqrt(t)
  u += t * s
  ~routine
  t -> 0.0
}`

describe('planGradient: one visible choice of gradient program', () => {
  it('takes forward mode for a scalar function of one variable, and says why', () => {
    const g = grad(m.one_var, { loss: 0 })
    expect(g.plan.program).toBe('forward')
    expect(g.plan.uncomputeCheck).toBe('off')
    expect(String(g.plan)).toMatch(
      /^gradient of `one_var` \(loss: argument 0\): forward\n {2}✓ forward: a scalar function of one float argument/,
    )
    const [, dx] = g(0, 0.7)
    expect(dx).toBeCloseTo(Math.sin(0.7) + 0.7 * Math.cos(0.7), 12)
    // mode 'reverse' rules forward mode out and says so
    const r = grad(m.one_var, { loss: 0, mode: 'reverse' })
    expect(r.plan.considered[0]).toEqual({ program: 'forward', applies: false, why: "mode 'reverse'" })
    expect(r.plan.program).not.toBe('forward')
    expect(r(0, 0.7)[1]).toBeCloseTo(dx as number, 12)
  })

  it('takes the one-pass program where the loss only accumulates values f never writes', () => {
    const g = grad(m.sum_sq, { loss: 0 })
    expect(g.plan.program).toBe('one-pass')
    expect(g.plan.considered.map((s) => [s.program, s.applies])).toEqual([
      ['forward', false],
      ['one-pass', true],
    ])
    expect(g.plan.considered[0]!.why).toMatch(/not a function of scalars/)
    const x = Float64Array.from([1, -2, 3])
    expect(Array.from(g(0, x)[1] as Float64Array)).toEqual([2, -4, 6])
  })

  it('takes the adjoint-only program where f only accumulates the loss and writes no other argument', () => {
    const g = grad(m.norm_like, { loss: 0 })
    expect(g.plan.program).toBe('adjoint-only')
    expect(g.plan.considered.map((s) => [s.program, s.applies])).toEqual([
      ['forward', false],
      ['one-pass', false],
      ['adjoint-only', true],
    ])
    // no argument is uncomputed: nothing to check
    expect(g.plan.uncomputeCheck).toBe('off')
    const h = grad(fast.norm_like, { loss: 0 })
    expect(h.plan.program).toBe('adjoint-only')
    expect(h.plan.deadUpdatesDropped).toBe(true)
    const x = Float64Array.from([0.5, 1.5, -1]),
      s = 1.3
    const r = g(0.25, x, s)
    const fd = finiteDifferenceOfCall(m.norm_like.core, [0.25, x, s], { loss: 0 })
    for (let j = 0; j < 3; j++) expect((r[1] as Float64Array)[j]).toBeCloseTo((fd[1] as number[])[j]!, 6)
    expect(r[2]).toBeCloseTo(fd[2] as number, 6)
    // the loss value: the input plus what f accumulates (no forward run computed it)
    expect(g.lastLoss).toBeCloseTo(0.25 + Math.sqrt(3.5 * s), 14)
    expect(Array.from(h(0.25, x, s)[1] as Float64Array)).toEqual(Array.from(r[1] as Float64Array))
    expect(h.lastLoss).toBeCloseTo(g.lastLoss, 14)
    // the caller's arrays are untouched
    expect(Array.from(x)).toEqual([0.5, 1.5, -1])
  })

  it('takes the routine-fused program for a top-level compute–copy–uncompute, and checks the uncompute only with checks on', () => {
    const g = grad(m.norm_shift, { loss: 0 })
    expect(g.plan.program).toBe('routine-fused')
    expect(g.plan.considered.find((s) => s.program === 'adjoint-only')?.applies).toBe(false)
    expect(g.plan.uncomputeCheck).toBe('error')
    expect(g.plan.deadUpdatesDropped).toBe(false)
    const h = grad(fast.norm_shift, { loss: 0 })
    expect(h.plan.program).toBe('routine-fused')
    expect(h.plan.uncomputeCheck).toBe('off')
    expect(h.plan.deadUpdatesDropped).toBe(true)
    expect(String(h.plan)).toMatch(/updates nothing reads are dropped/)
    const x = Float64Array.from([0.5, 1.5, -1]),
      s = 1.3
    const gx = g(0, x, s, 0)[1] as Float64Array
    for (let j = 0; j < 3; j++)
      expect(gx[j]).toBeCloseTo(
        (finiteDifferenceOfCall(m.norm_shift.core, [0, x, s, 0], { loss: 0 })[1] as number[])[j]!,
        6,
      )
    expect(Array.from(h(0, x, s, 0)[1] as Float64Array)).toEqual(Array.from(gx))
  })

  it('falls back to the two sweeps where nothing cheaper applies, and with fuse: false', () => {
    const g = grad(m.writes_x, { loss: 0 })
    expect(g.plan.program).toBe('two-sweep')
    expect(g.plan.considered.map((s) => s.program)).toEqual([
      'forward',
      'one-pass',
      'adjoint-only',
      'routine-fused',
      'map-forward',
      'two-sweep',
    ])
    expect(g.plan.uncomputeCheck).toBe('error')
    const x = Float64Array.from([0.3, 0.4])
    const gx = g(0, x)[1] as Float64Array
    expect(gx[0]).toBeCloseTo(2 * (0.3 + 0.8), 12)
    expect(gx[1]).toBeCloseTo(4 * (0.3 + 0.8), 12)
    const off = grad(m.sum_sq, { loss: 0, fuse: false, uncompute: 'warn' })
    expect(off.plan.program).toBe('two-sweep')
    expect(off.plan.uncomputeCheck).toBe('warn')
    expect(off.plan.considered.filter((s) => !s.applies).every((s) => s.why === 'fuse: false')).toBe(true)
    // the plan is the same object planGradient returns, frozen
    expect(Object.isFrozen(off.plan)).toBe(true)
    expect(planGradient(m.sum_sq, { loss: 0, fuse: false }).plan.program).toBe('two-sweep')
  })
})
