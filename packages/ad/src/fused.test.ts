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
fn no_routine(out: f64, x: f64) { x += 1.0; out += x * x }
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
    for (let i = 0; i < 3; i++)
      expect((viaFused[1] as Float64Array)[i]).toBeCloseTo((reference[1] as Float64Array)[i]!, 14)
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
    const fused = grad(b.ibesselj!, { loss: 0, mode: 'reverse' })(0, 2, 1.0)[2] as number
    const plain = grad(b.ibesselj!, { loss: 0, fuse: false })(0, 2, 1.0)[2] as number
    expect(fused).toBeCloseTo(plain, 13)
    expect(fused).toBeCloseTo(0.21024361588, 9)
  })

  it('is not built without a top-level uncompute (nor one-pass), or when the routine writes the loss', () => {
    expect(compileFused(m.no_routine!, 0)).toBeNull()
    expect(compileFused(m.writes_loss!, 0)).toBeNull()
    // with x as the loss the routine writes only `out`: fused, and the same gradient as unfused
    expect(compileFused(m.writes_loss!, 1)).not.toBeNull()
    const [go, gx] = grad(m.writes_loss!, { loss: 1, mode: 'reverse' })(2, 0) as number[]
    expect(gx).toBe(1)
    expect(go).toBeCloseTo(6, 12) // d/d out of (out + 1)² at out = 2
    expect(gradient(m.writes_loss!, [2, 0], { loss: 1, mode: 'reverse' })).toEqual([go, gx])
  })

  it('a prefix before the routine (Q; P₀; C; ~P₀) is fused too', () => {
    expect(compileFused(m.with_prefix!, 0)).not.toBeNull()
    const w = Float64Array.from([0.5])
    const [, gx, gw] = grad(m.with_prefix!, { loss: 0 })(0, 1.5, w) as [number, number, Float64Array]
    expect(gx).toBeCloseTo(4 * (0.5 + 3), 12) // out = (w0 + 2x)²
    expect(gw[0]).toBeCloseTo(2 * (0.5 + 3), 12)
    expect(w[0]).toBe(0.5)
  })

  it('a routine that writes (and restores) another parameter is fused, with the same gradient', () => {
    expect(compileFused(m.writes_param!, 0)).not.toBeNull()
    const [, gx] = grad(m.writes_param!, { loss: 0, mode: 'reverse' })(0, 2) as number[]
    expect(gx).toBeCloseTo(6, 12) // d/dx (x + 1)² at x = 2
    expect(gradient(m.writes_param!, [0, 2], { loss: 0, mode: 'reverse' })[1]).toBeCloseTo(6, 12)
  })
})

const onePassSource = `
fn dot(out: f64, a: f64[], b: f64[], idx: i32[]) {
  k: i32 <- 0
  for i in 0..len(idx) {
    if (idx[i] >= 0, ~) { out += a[idx[i]] * sin(b[i]) } else { out -= 2.0 * a[i] }
    k += idx[i]
  }
  k -= sum(idx)
  k -> 0
}
fn sum_helper(s: i32, idx: i32[]) { for i in 0..len(idx) { s += idx[i] } }
fn reads_loss(out: f64, x: f64, y: f64) { out += x * x; y += out }
fn reads_written(out: f64, x: f64, w: f64[]) { w[0] += x; out += w[0] * x }
fn reads_ancilla(out: f64, x: f64) {
  t <- 0.0
  t += x * 3.0
  out += t * t
  t -= x * 3.0
  t -> 0.0
}
fn passes_loss(out: f64, x: f64) { out += x; sq(out, x) }
fn sq(o: f64, x: f64) { o += x * x }
fn int_callee(out: f64, x: f64[], s: i32, idx: i32[]) {
  sum_helper(s, idx)
  out += x[s] * x[0]
  ~sum_helper(s, idx)
}`

describe.each(['cpu', 'interpreter'])('the one-pass gradient program (%s backend)', (backend) => {
  const m = tag({ backend })(onePassSource.replace('k -= sum(idx)', 'for i in 0..len(idx) { k -= idx[i] }'))

  it('is built when the loss only accumulates values f never writes, and agrees with the two sweeps', () => {
    const a = Float64Array.from([0.5, -1.25, 2, 0.75]),
      b = Float64Array.from([0.3, 1.1, -0.4, 2.2]),
      idx = Int32Array.from([2, -1, 0, 2])
    expect(compileFused(m.dot!, 0)).not.toBeNull()
    const one = grad(m.dot!, { loss: 0 })
    const two = grad(m.dot!, { loss: 0, fuse: false })
    const g1 = one(0.5, a, b, idx),
      l1 = one.lastLoss
    const g2 = two(0.5, a, b, idx),
      l2 = two.lastLoss
    expect(l1).toBeCloseTo(l2, 14)
    expect(g1[0]).toBe(1)
    for (const p of [1, 2]) {
      const x1 = g1[p] as Float64Array,
        x2 = g2[p] as Float64Array
      for (let i = 0; i < 4; i++) expect(x1[i]).toBeCloseTo(x2[i]!, 14)
    }
    // by hand: ∂/∂a[j] = Σ_{idx[i]=j} sin(b[i]) − 2·[idx[i]<0, i=j]; ∂/∂b[i] = a[idx[i]] cos(b[i])
    const ga = g1[1] as Float64Array,
      gb = g1[2] as Float64Array
    expect(ga[2]).toBeCloseTo(Math.sin(0.3) + Math.sin(2.2), 14)
    expect(ga[0]).toBeCloseTo(Math.sin(-0.4), 14)
    expect(ga[1]).toBeCloseTo(-2, 14)
    expect(gb[0]).toBeCloseTo(2 * Math.cos(0.3), 14)
    expect(gb[1]).toBe(0)
    expect(Array.from(a)).toEqual([0.5, -1.25, 2, 0.75])
    expect(l1).toBeCloseTo(0.5 + 2 * Math.sin(0.3) - 2 * -1.25 + 0.5 * Math.sin(-0.4) + 2 * Math.sin(2.2), 14)
  })

  it('with an integer-only callee too', () => {
    expect(compileFused(m.int_callee!, 0)).not.toBeNull()
    const x = Float64Array.from([1.5, 2, -3])
    const g = grad(m.int_callee!, { loss: 0 })(0, x, 0, Int32Array.from([1, 1]))
    expect(Array.from(g[1] as Float64Array)).toEqual([-3, 0, 1.5])
  })

  it('is not built when the loss is read or passed, or a loss term reads a written float or ancilla', () => {
    for (const name of ['reads_loss', 'reads_written', 'reads_ancilla', 'passes_loss']) {
      const g1 = grad(m[name]!, { loss: 0 }),
        g2 = grad(m[name]!, { loss: 0, fuse: false })
      const args =
        name === 'reads_written'
          ? () => [0.5, 1.5, Float64Array.from([0.25])]
          : () => [0.5, 1.5, 0.75].slice(0, m[name]!.ir.params.length)
      const a1 = g1(...args()),
        a2 = g2(...args())
      // whatever program is used, the gradient is the two-sweep one
      expect(a1.map((v) => (typeof v === 'number' ? v : Array.from(v ?? [])))).toEqual(
        a2.map((v) => (typeof v === 'number' ? v : Array.from(v ?? []))),
      )
      const built = compileFused(m[name]!, 0)
      expect(built === null || !built.ir.name.endsWith('$onepass')).toBe(true)
    }
  })
})
