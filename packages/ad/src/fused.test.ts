import { describe, expect, it } from 'vitest'
import { compileFused, gradient, grad } from './index.js'
import { besselSource } from './examples/papers.js'
import { tag } from './test-util.js'

const routineSource = `
fn norm_like(out: f64, x: f64[], s: f64) {
  t <- 0.0
  routine {
    for i in 0..len(x) { t += x[i] * x[i] * s }
  }
  out += sqrt(t)
  ~routine
  t -> 0.0
}
fn no_routine(out: f64, x: f64) { out += x * x }
fn writes_param(out: f64, x: f64) {
  routine { x += 1.0 }
  out += x * x
  ~routine
}
fn with_prefix(out: f64, x: f64, w: f64[]) {
  w[0] += x * 2.0
  routine {
    t <- 0.0
    t += w[0] * w[0]
  }
  out += t
  ~routine
}
fn writes_loss(out: f64, x: f64) {
  routine { out += 1.0 }
  x += out * out
  ~routine
}`

describe.each(['cpu', 'interpreter'])('the fused gradient program (%s backend)', (backend) => {
  const m = tag({ backend })(routineSource)
  const b = tag({ backend })(besselSource)

  it('is built for compute–copy–uncompute functions and gives the same gradient as forward + adjoint', () => {
    expect(compileFused(m.norm_like!, 0)).not.toBeNull()
    const x = Float64Array.from([1, -2, 3])
    const viaFused = grad(m.norm_like!, { loss: 0 })(0.25, x, 1.5)
    const reference = gradient(m.norm_like!, [0.25, x, 1.5], { loss: 0 }) // forward run + adjoint run
    expect(viaFused[0]).toBe(reference[0])
    for (let i = 0; i < 3; i++) expect((viaFused[1] as Float64Array)[i]).toBeCloseTo((reference[1] as Float64Array)[i]!, 14)
    expect(viaFused[2]).toBeCloseTo(reference[2] as number, 14)
    expect(Array.from(x)).toEqual([1, -2, 3])
  })

  it('reports the loss value after the forward part', () => {
    const g = grad(m.norm_like!, { loss: 0 })
    g(0.25, Float64Array.from([3, 4]), 1)
    expect(g.lastLoss).toBeCloseTo(5.25, 14)
  })

  it('Bessel J₂: the fused gradient equals the unfused one (0.2102436…)', () => {
    expect(compileFused(b.ibesselj!, 0)).not.toBeNull()
    const fused = grad(b.ibesselj!, { loss: 0 })(0, 2, 1.0)[2] as number
    const plain = gradient(b.ibesselj!, [0, 2, 1.0], { loss: 0 })[2] as number
    expect(fused).toBeCloseTo(plain, 13)
    expect(fused).toBeCloseTo(0.21024361588, 9)
  })

  it('is not built without a top-level uncompute, or when the routine writes the loss', () => {
    expect(compileFused(m.no_routine!, 0)).toBeNull()
    expect(compileFused(m.writes_loss!, 0)).toBeNull()
    // with x as the loss the routine writes only `out`: fused, and the same gradient as unfused
    expect(compileFused(m.writes_loss!, 1)).not.toBeNull()
    const [go, gx] = grad(m.writes_loss!, { loss: 1 })(2, 0) as number[]
    expect(gx).toBe(1)
    expect(go).toBeCloseTo(6, 12) // d/d out of (out + 1)² at out = 2
    expect(gradient(m.writes_loss!, [2, 0], { loss: 1 })).toEqual([go, gx])
  })

  it('a prefix before the routine (Q; P₀; C; ~P₀) is fused too', () => {
    expect(compileFused(m.with_prefix!, 0)).not.toBeNull()
    const w = Float64Array.from([0.5])
    const [, gx, gw] = grad(m.with_prefix!, { loss: 0 })(0, 1.5, w) as [number, number, Float64Array]
    expect(gx).toBeCloseTo(4 * (0.5 + 3), 12)   // out = (w0 + 2x)²
    expect(gw[0]).toBeCloseTo(2 * (0.5 + 3), 12)
    expect(w[0]).toBe(0.5)
  })

  it('a routine that writes (and restores) another parameter is fused, with the same gradient', () => {
    expect(compileFused(m.writes_param!, 0)).not.toBeNull()
    const [, gx] = grad(m.writes_param!, { loss: 0 })(0, 2) as number[]
    expect(gx).toBeCloseTo(6, 12) // d/dx (x + 1)² at x = 2
    expect(gradient(m.writes_param!, [0, 2], { loss: 0 })[1]).toBeCloseTo(6, 12)
  })
})
