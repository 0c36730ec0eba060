/**
 * NiLang port suite: the instructions (NiLang's `test/instructs.jl`) and their derivatives
 * (`test/autodiff/instructs.jl`, `jacobian.jl`, `simple_hessian.jl`): each value against `Math`,
 * each inverse, and each gradient against central differences of the forward run, for `+=` and
 * `-=` alike, on every backend.
 */
import { expect } from 'vitest'
import { gradient, hessian, jacobian } from '../index.js'
import { ALL, close, expectAllClose, expectGradientMatchesFd, port } from './util.js'

// ---------- values and inverses ----------

// "identity", "*, /"
port(
  'identity, * and / updates',
  ALL,
  `
  fn id(x: f64, y: f64) { x += identity(y) }
  fn mul(out: f64, x: f64, y: f64) { out += x * y }
  fn div(out: f64, x: f64, y: f64) { out += x / y }`,
  (m) => {
    expect(m.id!(0.2, 0.5)).toEqual([0.2 + 0.5, 0.5])
    expect(m.mul!(1, 2, 2)).toEqual([5, 2, 2])
    expect(m.div!(1, 2, 2)).toEqual([2, 2, 2])
    expect(m.div!.inverse(2, 2, 2)).toEqual([1, 2, 2])
  },
)

// "SWAP", "-" (NEG), "FLIP"
port(
  'SWAP, NEG and FLIP',
  ALL,
  `
  fn sw(x: i32, y: i32) { SWAP(x, y) }
  fn ng(x: f64) { NEG(x) }
  fn fl(x: bool) { FLIP(x) }`,
  (m) => {
    expect(m.sw!(1, 2)).toEqual([2, 1])
    expect(m.ng!(0.3)).toEqual([-0.3])
    expect(m.ng!.inverse(-0.3)).toEqual([0.3])
    expect(m.fl!(false)).toEqual([true])
    expect(m.fl!.inverse(true)).toEqual([false])
  },
)

// "ROT": rotating (0, 1) by π, and ROT/IROT undo each other
port(
  'ROT and IROT',
  ALL,
  `
  fn rot(x: f64, y: f64, t: f64) { ROT(x, y, t) }
  fn irot(x: f64, y: f64, t: f64) { IROT(x, y, t) }`,
  (m) => {
    const [x, y] = m.rot!(0, 1, Math.PI) as number[]
    expect(x).toBeCloseTo(-Math.sin(Math.PI), 15)
    expect(y).toBeCloseTo(-1, 15)
    const [a, b] = m.irot!(x!, y!, Math.PI) as number[]
    expect(a).toBeCloseTo(0, 15)
    expect(b).toBeCloseTo(1, 15)
    const back = m.rot!.inverse(0.3, -0.7, 1.1) as number[]
    expectAllClose(m.rot!(back[0]!, back[1]!, 1.1) as number[], [0.3, -0.7, 1.1], 1e-15)
  },
)

// "mulint": x *= y and x /= y on f64 with an integer factor (new form: *= on f64, checked non-zero)
port(
  'mulint and divint: *= and /= on f64',
  ALL,
  `
  fn mulint(x: f64, y: i32) { x *= y }
  fn divint(x: f64, y: i32) { x /= y }`,
  (m) => {
    expect(m.mulint!(3.3, 2)).toEqual([6.6, 2])
    expect(m.mulint!.inverse(6.6, 2)).toEqual([3.3, 2])
    expect(m.divint!(3.3, 2)).toEqual([1.65, 2])
    expect(() => m.mulint!(3.3, 0)).toThrow()
    expect(gradient(m.mulint!, [1.5, 2], { loss: 0 })[0]).toBe(2)
    expect(gradient(m.divint!, [1.5, 2], { loss: 0 })[0]).toBe(0.5)
  },
)

// HADAMARD (the butterfly of the FFT example) is its own inverse
port(
  'HADAMARD',
  ALL,
  `
  fn h(a: f64, b: f64) { HADAMARD(a, b) }`,
  (m) => {
    const [a, b] = m.h!(1, 2) as number[]
    expect(a).toBeCloseTo(3 / Math.SQRT2, 15)
    expect(b).toBeCloseTo(-1 / Math.SQRT2, 15)
    expectAllClose(m.h!(a!, b!) as number[], [1, 2], 1e-15)
  },
)

// sincos: (s, c) += sincos(x)
port(
  'sincos',
  ALL,
  `
  fn f(s: f64, c: f64, x: f64) { sincos(s, c, x) }`,
  (m) => {
    expect(m.f!(1, 2, 2)).toEqual([1 + Math.sin(2), 2 + Math.cos(2), 2])
    expectAllClose(m.f!.inverse(1 + Math.sin(2), 2 + Math.cos(2), 2) as number[], [1, 2, 2], 1e-15)
  },
)

// every pure function of the standard library against Math, and undone by -=
const UNARY = [
  'exp',
  'log',
  'sin',
  'cos',
  'tan',
  'sinh',
  'cosh',
  'tanh',
  'asin',
  'acos',
  'atan',
  'sqrt',
  'abs',
] as const
port(
  'the pure functions of the standard library',
  ALL,
  `
  fn f(y: f64[], x: f64, z: f64) {
    ${UNARY.map((f, i) => `y[${i}] += ${f}(x)`).join('\n    ')}
    y[${UNARY.length}] += atan2(x, z)
    y[${UNARY.length + 1}] += pow(x, z)
    y[${UNARY.length + 2}] += abs2(z)
    y[${UNARY.length + 3}] += max(x, z) - min(x, z)
    y[${UNARY.length + 4}] += gaussian_log(z)
    y[${UNARY.length + 5}] += sign(z) + identity(x)
  }`,
  (m) => {
    const x = 0.37,
      z = -1.4
    const y = new Float64Array(UNARY.length + 6)
    m.f!(y, x, z)
    const want = [
      ...UNARY.map((f) => Math[f](x)),
      Math.atan2(x, z),
      Math.pow(x, z),
      z * z,
      x - z,
      Math.log1p(Math.exp(z)),
      -1 + x,
    ]
    expectAllClose(y, want, 1e-14)
    m.f!.inverse(y, x, z)
    y.forEach((v) => expect(Math.abs(v)).toBeLessThan(1e-15))
  },
)

// ---------- gradients: each instruction with += and with -= ----------

/** [name, expression of x and z, arguments (y, x, z)]; NiLang's check_grad inputs. */
const OPS: Array<[string, string, [number, number, number]]> = [
  ['identity', 'identity(x)', [1, 2, 0]],
  ['*', 'x * z', [1, 2, 2]],
  ['+', 'x + z', [1, 2, 2]],
  ['-', 'x - z', [1, 2, 2]],
  ['^ (integer power)', 'x ** 2', [1, 2, 0]],
  ['^ (real power)', 'x ** z', [1, 2, 2]],
  ['sqrt', 'sqrt(x)', [1, 2, 0]],
  ['abs', 'abs(x)', [1, -2, 0]],
  ['abs2', 'abs2(x)', [1, -2, 0]],
  ['atan', 'atan(x)', [1, -2, 0]],
  ['atan (two arguments)', 'atan2(x, z)', [1, -2, 1.5]],
  ['exp', 'exp(x)', [1, 2, 0]],
  ['log', 'log(x)', [1, 2, 0]],
  ['sin', 'sin(x)', [1, 2, 0]],
  ['tanh', 'tanh(x)', [1, 2, 0]],
  ['cos', 'cos(x)', [1, 2, 0]],
  ['/', 'x / z', [1, 2, 2]],
  ['gaussian_log', 'gaussian_log(x)', [1, 2, 0]],
]
for (const [name, e, args] of OPS) {
  port(
    `gradient of ${name} (+= and -=)`,
    ALL,
    `
    fn add(y: f64, x: f64, z: f64) { y += ${e} }
    fn sub(y: f64, x: f64, z: f64) { y -= ${e} }`,
    (m) => {
      const ga = expectGradientMatchesFd(m.add!, args, 0, [], 1e-7)
      const gs = expectGradientMatchesFd(m.sub!, args, 0, [], 1e-7)
      expectAllClose(
        gs,
        ga.map((v) => -v),
        1e-14,
      ) // -= is += negated
    },
  )
}

// NEG, INC, DEC; ROT and IROT with the loss on either output
port(
  'gradients of NEG, INC, DEC, ROT and IROT',
  ALL,
  `
  fn ng(x: f64) { NEG(x) }
  fn inc(x: f64) { INC(x) }
  fn dec(x: f64) { DEC(x) }
  fn rot(a: f64, b: f64, t: f64) { ROT(a, b, t) }
  fn irot(a: f64, b: f64, t: f64) { IROT(a, b, t) }`,
  (m) => {
    expect(gradient(m.ng!, [1], { loss: 0 })).toEqual([-1])
    expect(gradient(m.inc!, [1], { loss: 0 })).toEqual([1])
    expect(gradient(m.dec!, [1], { loss: 0 })).toEqual([1])
    for (const f of [m.rot!, m.irot!]) for (const loss of [0, 1]) expectGradientMatchesFd(f, [1, 2, 2], loss, [], 1e-7)
    // ∂(cos t·a − sin t·b)/∂t = −sin t·a − cos t·b
    expect(gradient(m.rot!, [1, 2, 2], { loss: 0 })[2]).toBeCloseTo(-Math.sin(2) - 2 * Math.cos(2), 13)
  },
)

// "sincos": the loss on s, then on c
port(
  'gradient of sincos',
  ALL,
  `
  fn f(s: f64, c: f64, x: f64) { sincos(s, c, x) }`,
  (m) => {
    expect(gradient(m.f!, [1, 2, 2], { loss: 0 })[2]).toBeCloseTo(Math.cos(2), 15)
    expect(gradient(m.f!, [1, 2, 2], { loss: 1 })[2]).toBeCloseTo(-Math.sin(2), 15)
  },
)

// "AD over pipe": accumulate into an ancilla parameter, then swap it with each element
port(
  'gradient through SWAP with the elements (AD over pipe)',
  ALL,
  `
  fn mean(out: f64, anc: f64, x: f64[]) {
    for i in 0..len(x) {
      anc += identity(x[i])
      SWAP(anc, x[i])
    }
    out += anc / len(x)
  }`,
  (m) => {
    const x = Float64Array.of(1, 2, 3, 4)
    expectGradientMatchesFd(m.mean!, [0, 0, x], 0)
  },
)

// jacobian.jl: the Jacobian of a rotation is the rotation matrix (and ∂/∂θ)
port(
  'Jacobian of ROT',
  ALL,
  `
  fn f(a: f64, b: f64, t: f64) { ROT(a, b, t) }`,
  (m) => {
    const [a, b, t] = [0.3, -1.2, 0.8]
    const J = jacobian(m.f!, [a, b, t], { outputs: [0, 1], inputs: [0, 1, 2] })
    const [c, s] = [Math.cos(t), Math.sin(t)]
    const ap = c * a - s * b,
      bp = s * a + c * b
    expectAllClose(J, [c, -s, -bp, s, c, ap], 1e-14)
  },
)

// simple_hessian.jl: the Hessian of x·y·z + sin(x)·y² against the closed form
port(
  'Hessian of a product and a sine',
  ALL,
  `
  fn f(out: f64, x: f64, y: f64, z: f64) { out += x * y * z + sin(x) * y * y }`,
  (m) => {
    const [x, y, z] = [0.7, -1.3, 2.1]
    const H = hessian(m.f!, [0, x, y, z], { loss: 0 })
    const want = [
      -Math.sin(x) * y * y,
      z + 2 * Math.cos(x) * y,
      y,
      z + 2 * Math.cos(x) * y,
      2 * Math.sin(x),
      x,
      y,
      x,
      0,
    ]
    expectAllClose(H, want, 1e-12)
    expect(close(H[1]!, H[3]!)).toBe(true)
  },
)
