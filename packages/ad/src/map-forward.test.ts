import { describe, expect, it } from 'vitest'
import { grad } from './index.js'
import { compileMapForward } from './map-forward.js'
import { besselSource } from './examples/papers.js'
import { randomExpressions, tag } from './test-util.js'

const batchSource = `
${besselSource}
fn ibesselj_batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i]) }
}
fn ibesselj_sum(loss: f64, out: f64[], nu: i32, z: f64[]) {
  ibesselj_batch(out, nu, z)
  for i in 0..len(out) { loss += identity(out[i]) }
}`

/** J_ν(z) by its series to full precision (ν ≥ 0), and J′_ν = (J_{ν−1} − J_{ν+1}) / 2. */
function besselJ(nu: number, z: number): number {
  if (nu < 0) return (nu % 2 === 0 ? 1 : -1) * besselJ(-nu, z)
  let s = (z / 2) ** nu
  for (let k = 2; k <= nu; k++) s /= k
  let out = s
  for (let k = 1; k < 60; k++) {
    s *= -(z * z) / 4 / (k * (k + nu))
    out += s
  }
  return out
}
const besselJPrime = (nu: number, z: number) => (besselJ(nu - 1, z) - besselJ(nu + 1, z)) / 2

describe('the map-forward gradient program', () => {
  const fast = tag({ checks: false })(batchSource)
  const checked = tag()(batchSource)

  it('is chosen for a batch of Bessel functions without checks, and gives the two-sweep gradient', () => {
    const g = grad(fast.ibesselj_sum!, { loss: 0 })
    expect(g.plan.program).toBe('map-forward')
    const zs = Float64Array.from({ length: 7 }, (_, i) => 0.2 + 0.4 * i)
    const r = g(0, new Float64Array(7), 2, zs)
    const two = grad(fast.ibesselj_sum!, { loss: 0, fuse: false })(0, new Float64Array(7), 2, zs)
    expect(two[3]).not.toBe(r[3])
    // both agree with the exact derivative to the series' truncation (atol 1e-8 on the terms)
    for (let i = 0; i < 7; i++) {
      const exact = besselJPrime(2, zs[i]!)
      expect(Math.abs((r[3] as Float64Array)[i]! - exact)).toBeLessThan(1e-7)
      expect(Math.abs((two[3] as Float64Array)[i]! - exact)).toBeLessThan(1e-7)
    }
    for (let i = 0; i < 7; i++) expect((r[1] as Float64Array)[i]).toBe(1)
  })

  it('is not chosen with run-time checks', () => {
    expect(compileMapForward(checked.ibesselj_sum!, 0)).toBeNull()
  })
})

/** f(loss, a, b, c, idx): an elementwise map over a, b, c (c only accumulated), then a nonlinear loss. */
function mapProgram(seed: number): string {
  const { expr } = randomExpressions(seed)
  return `
fn h(a: f64[], b: f64[], c: f64[], idx: i32[]) {
  for i in 0..len(a) {
    t <- 0.0
    routine { t += a[i] * (${expr(['a[i]', 'f64(idx[i])'], 2)}) }
    c[i] += ${expr(['t', 'b[i]', 'a[i]'], 2)}
    b[i] += ${expr(['a[i]', 't'], 2)}
    ~routine
    t -> 0.0
  }
}
fn f(loss: f64, a: f64[], b: f64[], c: f64[], idx: i32[]) {
  h(a, b, c, idx)
  for i in 0..len(c) { loss += ${expr(['c[i]', 'b[i]', 'a[i]'], 2)} }
}`
}

describe('map-forward on random elementwise maps', () => {
  it('30 programs: the gradient equals the two-sweep one and central differences, the loss value too', () => {
    const n = 5
    for (let seed = 1; seed <= 30; seed++) {
      const src = mapProgram(seed)
      const m = tag({ checks: false })(src)
      const g = grad(m.f!, { loss: 0 })
      expect(g.plan.program, src).toBe('map-forward')
      const { rnd } = randomExpressions(seed * 7)
      const arr = () => Float64Array.from({ length: n }, () => rnd() - 0.5)
      const a = arr(),
        b = arr(),
        c = arr()
      const idx = Int32Array.from({ length: n }, (_, i) => i % 3)
      const r = g(0.25, a, b, c, idx)
      const loss = g.lastLoss
      const two = grad(m.f!, { loss: 0, fuse: false })
      const q = two(0.25, a, b, c, idx)
      expect(loss).toBeCloseTo(two.lastLoss, 12)
      for (const k of [1, 2, 3])
        for (let i = 0; i < n; i++)
          expect(
            Math.abs((r[k] as Float64Array)[i]! - (q[k] as Float64Array)[i]!),
            `${src}\narg ${k}[${i}]`,
          ).toBeLessThan(1e-10 * (1 + Math.abs((q[k] as Float64Array)[i]!)))
      // central differences of the loss
      const L = (k: number, i: number, h: number) => {
        const xs = [a.slice(), b.slice(), c.slice()]
        xs[k - 1]![i]! += h
        m.f!.core(0.25, xs[0], xs[1], xs[2], idx)
        return m.f!.core.results[0] as number
      }
      for (const k of [1, 2, 3])
        for (let i = 0; i < n; i++) {
          const fd = (L(k, i, 1e-6) - L(k, i, -1e-6)) / 2e-6
          expect(Math.abs((r[k] as Float64Array)[i]! - fd), `${src}\nFD ${k}[${i}]`).toBeLessThan(
            1e-6 * (1 + Math.abs(fd)),
          )
        }
    }
  })

  it('refuses maps that are not elementwise, read a float scalar, or are not the first statement', () => {
    const m = tag({ checks: false })(`
fn shifted(a: f64[], b: f64[]) { for i in 0..len(a) - 1 { b[i] += a[i + 1] } }
fn scaled(a: f64[], b: f64[], s: f64) { for i in 0..len(a) { b[i] += s * a[i] } }
fn plain(a: f64[], b: f64[]) { for i in 0..len(a) { b[i] += sin(a[i]) } }
fn f1(loss: f64, a: f64[], b: f64[]) {
  shifted(a, b)
  for i in 0..len(b) { loss += b[i] * b[i] }
}
fn f2(loss: f64, a: f64[], b: f64[], s: f64) {
  scaled(a, b, s)
  for i in 0..len(b) { loss += b[i] * b[i] }
}
fn f3(loss: f64, a: f64[], b: f64[]) {
  a[0] += 1.0
  plain(a, b)
  for i in 0..len(b) { loss += b[i] * b[i] }
}
fn f4(loss: f64, a: f64[], b: f64[]) {
  plain(a, b)
  for i in 0..len(b) { loss += b[i] * b[i] }
}`)
    const plan = (name: string) => grad(m[name]!, { loss: 0 }).plan
    expect(String(plan('f1'))).toContain('accesses `a` at other elements')
    expect(String(plan('f2'))).toContain('reads the float scalar `s`')
    expect(plan('f3').program).toBe('two-sweep')
    expect(plan('f4').program).toBe('map-forward')
    const a = Float64Array.of(0.3, -0.2, 0.9),
      b = new Float64Array(3)
    for (const name of ['f1', 'f2', 'f3', 'f4']) {
      const extra = name === 'f2' ? [1.5] : []
      const fast = grad(m[name]!, { loss: 0 })(0, a, b, ...extra)
      const two = grad(m[name]!, { loss: 0, fuse: false })(0, a, b, ...extra)
      for (let i = 0; i < 3; i++) expect((fast[1] as Float64Array)[i]).toBeCloseTo((two[1] as Float64Array)[i]!, 12)
    }
  })
})
