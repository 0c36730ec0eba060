import { finiteDifference, relativeError } from '@tenet/testing'
import { describe, expect, it } from 'vitest'
import { gradient, hessian, jvp } from './index.js'
import { tag } from './test-util.js'

describe.each(['cpu', 'interpreter'] as const)('f32 programs (%s)', (backend) => {
  it('gradients of f32 scalars and arrays are f32', () => {
    const m = tag({ backend })`fn f(y: f32, a: f32, x: f32[]) {
      t: f32 <- 0.0
      t += a * a
      for i in 0..len(x) { y += sin(x[i]) * t }
      t -= a * a
      t -> 0.0
      ROT(y, a, 0.5)
    }`
    const g = gradient(m.f!, [0, 0.5, Float32Array.from([0.25, 1])], { loss: 0 })
    const c = Math.cos(0.5),
      s = Math.sin(0.5)
    // after ROT, y' = c·y − s·a with y = (sin 0.25 + sin 1)·a²
    const S = Math.sin(0.25) + Math.sin(1)
    expect(g[1]).toBeCloseTo(c * 2 * 0.5 * S - s, 5)
    expect(g[2]).toBeInstanceOf(Float32Array)
    expect((g[2] as Float32Array)[1]).toBeCloseTo(c * Math.cos(1) * 0.25, 5)
  })

  it('mixed f32 and f64: derivatives cross the conversions in both modes (each side in its own precision)', () => {
    const m = tag({ backend })`fn up(y: f64, x: f32, z: f32) { y += f64(x * z) * 2.0 + f64(x) }
      fn down(y: f32, x: f64) { y += f32(x * x) }`
    const [x, z] = [Math.fround(1.5), Math.fround(-0.75)]
    const g = gradient(m.up!, [0, x, z], { loss: 0 })
    expect(g[1]).toBeCloseTo(2 * z + 1, 6)
    expect(g[2]).toBeCloseTo(2 * x, 6)
    expect(jvp(m.up!, [0, x, z], { v: [0, 1, 1] }).tangent[0]).toBeCloseTo(2 * z + 1 + 2 * x, 6)
    for (const mode of ['reverse', 'forward'] as const)
      expect(gradient(m.down!, [0, 0.3], { loss: 0, mode })[1]).toBeCloseTo(0.6, 6)
    expect(jvp(m.down!, [0, 0.3], { v: [0, 1] }).tangent[0]).toBeCloseTo(0.6, 6)
    expect(hessian(m.down!, [0, 0.3], { loss: 0, wrt: [1] })[0]).toBeCloseTo(2, 6)
  })
})

describe.each(['cpu', 'interpreter'] as const)('bijection rules at f32 (%s)', (backend) => {
  // ROT, INV (whose rules use float-literal ancillas), sincos, IROT and sincos_inverse in a chain
  const body = (t: string) => `fn f(y: ${t}, a: ${t}, b: ${t}, c: ${t}) {
    ROT(a, b, c)
    INV(a)
    sincos(b, c, a)
    IROT(a, b, c)
    sincos_inverse(c, y, b)
    y += a * b + c * c
  }`
  const loss = ([y, a, b, c]: number[]) => {
    let [a1, b1] = [Math.cos(c!) * a! - Math.sin(c!) * b!, Math.sin(c!) * a! + Math.cos(c!) * b!]
    a1 = 1 / a1
    b1 += Math.sin(a1)
    const c1 = c! + Math.cos(a1)
    ;[a1, b1] = [Math.cos(c1) * a1 + Math.sin(c1) * b1, -Math.sin(c1) * a1 + Math.cos(c1) * b1]
    const c2 = c1 - Math.sin(b1)
    const y1 = y! - Math.cos(b1)
    return y1 + a1 * b1 + c2 * c2
  }
  const x = [0, 0.9, 0.2, 0.3].map(Math.fround)
  const m32 = tag({ backend })([body('f32')] as unknown as TemplateStringsArray)
  const m64 = tag({ backend })([body('f64')] as unknown as TemplateStringsArray)
  const fd = finiteDifference(loss, x)

  it('gradient and tangent are f32 values that match finite differences (relative 1e-4)', () => {
    const g = gradient(m32.f!, x, { loss: 0 }) as number[]
    const v = [0.5, 1, -0.7, 0.4]
    const t = jvp(m32.f!, x, { v }).tangent[0] as number
    for (let i = 1; i < 4; i++) {
      expect(Math.fround(g[i]!)).toBe(g[i])
      expect(relativeError(g[i]!, fd[i]!)).toBeLessThan(1e-4)
    }
    expect(Math.fround(t)).toBe(t)
    expect(
      relativeError(
        t,
        fd.reduce((s, d, i) => s + d * v[i]!, 0),
      ),
    ).toBeLessThan(1e-4)
  })

  it('the Hessian (over a, b, c; y is the loss) matches finite differences of the f64 gradient (relative 1e-4)', () => {
    const H = hessian(m32.f!, x, { loss: 0 })
    const J = finiteDifference((p: number[]) => gradient(m64.f!, p, { loss: 0 }) as number[], x)
    expect(H).toHaveLength(9)
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) expect(relativeError(H[i * 3 + j]!, J[i + 1]![j + 1]!)).toBeLessThan(1e-4)
  })
})
