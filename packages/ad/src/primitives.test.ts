import { describe, expect, it } from 'vitest'
import { checkGrad, gradient } from './index.js'
import { tag } from './test-util.js'

const backends = ['cpu', 'interpreter'] as const

/** Each row: a pure expression over a (and b), and points inside its domain. */
const unary: Array<[string, number[]]> = [
  ['sin(a)', [-2, -0.3, 0, 0.7, 3]],
  ['cos(a)', [-2, -0.3, 0, 0.7, 3]],
  ['tan(a)', [-1.2, -0.3, 0, 0.7, 1.3]],
  ['exp(a)', [-2, 0, 0.5, 2]],
  ['log(a)', [0.1, 0.5, 1, 3, 20]],
  ['sinh(a)', [-2, 0, 0.5, 2]],
  ['cosh(a)', [-2, 0, 0.5, 2]],
  ['tanh(a)', [-2, 0, 0.5, 2]],
  ['asin(a)', [-0.9, -0.2, 0, 0.5, 0.95]],
  ['acos(a)', [-0.9, -0.2, 0, 0.5, 0.95]],
  ['atan(a)', [-5, -0.2, 0, 0.5, 3]],
  ['abs(a)', [-3, -0.5, 0.25, 2]],
  ['abs2(a)', [-3, -0.5, 0, 0.25, 2]],
  ['sqrt(a)', [0.01, 0.5, 1, 4, 100]],
  ['identity(a)', [-1, 0, 2.5]],
  ['a ** 2', [-3, -0.5, 0, 0.25, 2]],
  ['a ** 3', [-3, -0.5, 0, 0.25, 2]],
  ['a ** 0.5', [0.1, 1, 4]],
  ['-a * a / (1.0 + a * a)', [-2, 0, 1, 3]],
  ['a % 0.75', [0.1, 1.3, 2.9]],
]
const binary: Array<[string, Array<[number, number]>]> = [
  [
    'atan2(a, b)',
    [
      [1, 2],
      [-1, 0.5],
      [0.3, -2],
      [-2, -1],
    ],
  ],
  [
    'min(a, b)',
    [
      [1, 2],
      [3, -1],
      [-0.5, 0.5],
    ],
  ],
  [
    'max(a, b)',
    [
      [1, 2],
      [3, -1],
      [-0.5, 0.5],
    ],
  ],
  [
    'pow(a, b)',
    [
      [0.5, 2],
      [2, 0.3],
      [3, -1.5],
    ],
  ],
  [
    'a ** b',
    [
      [0.5, 2],
      [2, 0.3],
      [3, -1.5],
    ],
  ],
  [
    'a * b',
    [
      [0.5, 2],
      [-2, 0.3],
    ],
  ],
  [
    'a / b',
    [
      [0.5, 2],
      [-2, 0.3],
    ],
  ],
  [
    'a - b * sin(a * b)',
    [
      [0.5, 2],
      [-2, 0.3],
    ],
  ],
  [
    'a % b',
    [
      [2.5, 0.7],
      [-3.1, 1.3],
    ],
  ],
]

describe.each(backends)('pure primitives on the %s backend', (backend) => {
  const rev = tag({ backend })
  it.each(unary)('y += %s matches central differences', (e, points) => {
    const m = rev(`fn f(y: f64, a: f64) { y += ${e} }`)
    for (const a of points) {
      const r = checkGrad(m.f!, [0.25, a], { loss: 0, atol: 1e-6, rtol: 1e-6 })
      expect(r.ok, `${e} at ${a}: ${JSON.stringify(r.worst)}`).toBe(true)
    }
  })
  it.each(binary)('y -= %s matches central differences', (e, points) => {
    const m = rev(`fn f(y: f64, a: f64, b: f64) { y -= ${e} }`)
    for (const [a, b] of points) {
      const r = checkGrad(m.f!, [0.25, a, b], { loss: 0, atol: 1e-6, rtol: 1e-6 })
      expect(r.ok, `${e} at ${a}, ${b}: ${JSON.stringify(r.worst)}`).toBe(true)
    }
  })
  it('analytic values: d sin = cos, d log = 1/x, d atan2', () => {
    const m = rev`fn f(y: f64, a: f64, b: f64) { y += sin(a) + log(b) + atan2(a, b) }`
    const [, ga, gb] = gradient(m.f!, [0, 0.3, 2], { loss: 0 }) as number[]
    expect(ga).toBeCloseTo(Math.cos(0.3) + 2 / (0.09 + 4), 14)
    expect(gb).toBeCloseTo(1 / 2 - 0.3 / (0.09 + 4), 14)
  })
  it('integer conversions have no derivative w.r.t. the integer', () => {
    const m = rev`fn f(y: f64, x: f64, n: i32) { y += f64(n) * x + f64(n * n) }`
    for (const mode of ['reverse', 'forward'] as const)
      expect(gradient(m.f!, [0, 2, 3], { loss: 0, mode })).toEqual([1, 3, null])
  })
  it('a negative target view and -=', () => {
    const m = rev`fn f(y: f64, x: f64) { NEG(y); y += x * x; NEG(y); y -= 3.0 * x }`
    expect(gradient(m.f!, [0, 2], { loss: 0 })).toEqual([1, -4 - 3])
  })
})

describe.each(backends)('bijections on the %s backend', (backend) => {
  const rev = tag({ backend })
  const cases: Array<[string, string, number[]]> = [
    ['SWAP', 'SWAP(a, b)', [0.3, -1.2, 0.7]],
    ['<->', 'a <-> b', [0.3, -1.2, 0.7]],
    ['NEG', 'NEG(a)', [0.3, -1.2, 0.7]],
    ['ROT', 'ROT(a, b, t)', [0.3, -1.2, 0.7]],
    ['IROT', 'IROT(a, b, t)', [0.3, -1.2, 0.7]],
    ['~ROT', '~ROT(a, b, t)', [0.3, -1.2, 0.7]],
    ['HADAMARD', 'HADAMARD(a, b)', [0.3, -1.2, 0.7]],
    ['INV', 'INV(a)', [0.6, -1.2, 0.7]],
    ['AddConst', 'AddConst(a, t)', [0.3, -1.2, 0.7]],
    ['SubConst', 'SubConst(b, t)', [0.3, -1.2, 0.7]],
    ['ROT twice with a constant angle', 'ROT(a, b, 0.4); ROT(b, a, t)', [0.3, -1.2, 0.7]],
  ]
  it.each(cases)('%s', (_name, stmt, [a, b, t]) => {
    const m = rev(`fn f(y: f64, a: f64, b: f64, t: f64) {
      ${stmt}
      y += a * 2.0 + b * b * 3.0 + a * b * t
    }`)
    const r = checkGrad(m.f!, [0, a, b, t], { loss: 0, atol: 1e-7, rtol: 1e-7 })
    expect(r.ok, JSON.stringify(r.worst)).toBe(true)
  })
  it('ROT: the θ gradient by the adjoint rule equals the analytic one', () => {
    // y += a' with a' = cos θ a − sin θ b: dy/dθ = −sin θ a − cos θ b
    const m = rev`fn f(y: f64, a: f64, b: f64, t: f64) { ROT(a, b, t); y += a }`
    const [, ga, gb, gt] = gradient(m.f!, [0, 0.3, -1.2, 0.7], { loss: 0 }) as number[]
    expect(ga).toBeCloseTo(Math.cos(0.7), 14)
    expect(gb).toBeCloseTo(-Math.sin(0.7), 14)
    expect(gt).toBeCloseTo(-Math.sin(0.7) * 0.3 + Math.cos(0.7) * 1.2, 14)
  })
})
