import { describe, expect, it } from 'vitest'
import { finiteDifferenceGradient, finiteDifferenceHessian, maxScaledError } from '../math/finite-difference.js'
import { createRng } from '../math/prng.js'
import { besselJDerivative, besselJPlain, besselJSecondDerivative, powInt } from './bessel.js'
import { embeddingGradientPlain, embeddingLossPlain, PETERSEN_EDGES, PETERSEN_NON_EDGES } from './graph-embedding.js'
import {
  leapfrogDoubleDouble,
  leapfrogF32,
  leapfrogF64,
  leapfrogStartF64,
  leapfrogStepsF64,
  leapfrogStepsInverseF64,
  meanPlanetError,
  solarSystem,
} from './leapfrog.js'
import {
  randomCsc,
  sparseComplexMulBackwardPlain,
  sparseComplexMulPlain,
  sparseDotGradientPlain,
  sparseDotPlain,
  cscToDense,
} from './sparse.js'
import { unitaryGradientPlain, unitaryLossPlain, unitaryStepInversePlain, unitaryStepPlain } from './unitary.js'

describe('Bessel J₂', () => {
  it("matches the paper's figures at z = 1", () => {
    expect(besselJPlain(2, 1)).toBeCloseTo(0.1149034849319005, 8)
    expect(besselJDerivative(2, 1)).toBeCloseTo(0.2102436, 7)
    expect(besselJSecondDerivative(2, 1)).toBeCloseTo(0.13446683844358093, 9)
  })
  it('derivative matches finite differences of the series', () => {
    const fd = finiteDifferenceGradient((z) => besselJPlain(2, z[0], 1e-16), Float64Array.of(1.7), 1e-6)
    expect(besselJDerivative(2, 1.7)).toBeCloseTo(fd[0], 8)
  })
})

describe('powInt (the series’ (z/2)^ν)', () => {
  it('is x ** n for every order, exactly x·x and x for 2 and 1', () => {
    for (const x of [0, 0.05, 0.5, 1.45, -0.7])
      for (let n = 0; n <= 6; n++) expect(powInt(x, n)).toBeCloseTo(x ** n, 15)
    expect(powInt(0.1, 2)).toBe(0.1 * 0.1)
    expect(powInt(0.3, 1)).toBe(0.3)
    expect(besselJPlain(3, 1.2)).toBeCloseTo(0.032874, 6)
  })
})

describe('sparse', () => {
  it('Frobenius dot equals the dense sum and its gradient is the other operand on the pattern', () => {
    const A = randomCsc(40, 30, 0.2, 1)
    const B = randomCsc(40, 30, 0.2, 2)
    const dA = cscToDense(A)
    const dB = cscToDense(B)
    let ref = 0
    for (let i = 0; i < dA.length; i++) ref += dA[i] * dB[i]
    expect(sparseDotPlain(A, B)).toBeCloseTo(ref, 12)
    const { gA } = sparseDotGradientPlain(A, B)
    const fd = finiteDifferenceGradient((v) => sparseDotPlain({ ...A, values: v }, B), A.values.slice())
    expect(maxScaledError(gA, fd)).toBeLessThan(1e-8)
  })
  it('1000×1000 at density 0.05 has about 50k non-zeros', () => {
    const A = randomCsc(1000, 1000, 0.05, 1)
    expect(Math.abs(A.values.length - 50_000)).toBeLessThan(1500)
  })
  it('complex y = A x + y and its reverse pass match finite differences', () => {
    const A = randomCsc(12, 9, 0.3, 3, true)
    const rng = createRng(4)
    const vec = (n: number) => ({
      re: Float64Array.from({ length: n }, rng.normal),
      im: Float64Array.from({ length: n }, rng.normal),
    })
    const x = vec(9)
    const y0 = vec(12)
    const yBar = vec(12)
    const pairing = (xr: Float64Array, xi: Float64Array, ar: Float64Array, ai: Float64Array) => {
      const y = { re: y0.re.slice(), im: y0.im.slice() }
      sparseComplexMulPlain(y, { ...A, values: ar, imag: ai }, { re: xr, im: xi })
      let s = 0
      for (let i = 0; i < 12; i++) s += yBar.re[i] * y.re[i] + yBar.im[i] * y.im[i]
      return s
    }
    const xBar = { re: new Float64Array(9), im: new Float64Array(9) }
    const aRe = new Float64Array(A.values.length)
    const aIm = new Float64Array(A.values.length)
    sparseComplexMulBackwardPlain(A, x, yBar, xBar, aRe, aIm)
    expect(
      maxScaledError(
        xBar.re,
        finiteDifferenceGradient((v) => pairing(v, x.im, A.values, A.imag), x.re.slice()),
      ),
    ).toBeLessThan(1e-8)
    expect(
      maxScaledError(
        xBar.im,
        finiteDifferenceGradient((v) => pairing(x.re, v, A.values, A.imag), x.im.slice()),
      ),
    ).toBeLessThan(1e-8)
    expect(
      maxScaledError(
        aRe,
        finiteDifferenceGradient((v) => pairing(x.re, x.im, v, A.imag), A.values.slice()),
      ),
    ).toBeLessThan(1e-8)
    expect(
      maxScaledError(
        aIm,
        finiteDifferenceGradient((v) => pairing(x.re, x.im, A.values, v), A.imag.slice()),
      ),
    ).toBeLessThan(1e-8)
  })
})

describe('graph embedding (Petersen)', () => {
  it('has 15 edges and 30 non-edges, every vertex of degree 3', () => {
    expect(PETERSEN_EDGES.length).toBe(15)
    expect(PETERSEN_NON_EDGES.length).toBe(30)
    const deg = new Array(10).fill(0)
    for (const [a, b] of PETERSEN_EDGES) deg[a]++, deg[b]++
    expect(deg).toEqual(new Array(10).fill(3))
  })
  it('gradient and its Hessian by differences match finite differences for k = 1..10', () => {
    for (let k = 1; k <= 10; k++) {
      const rng = createRng(k)
      const x = Float64Array.from({ length: 10 * k }, rng.normal)
      const fd = finiteDifferenceGradient((p) => embeddingLossPlain(p, k), x)
      expect(maxScaledError(embeddingGradientPlain(x, k), fd)).toBeLessThan(1e-7)
    }
    const rng = createRng(99)
    const x = Float64Array.from({ length: 20 }, rng.normal)
    const H = finiteDifferenceHessian((p) => embeddingGradientPlain(p, 2), x)
    for (let i = 0; i < 20; i++) for (let j = 0; j < 20; j++) expect(H[i * 20 + j]).toBeCloseTo(H[j * 20 + i], 12)
  })
  it('is positive at a random start', () => {
    const rng = createRng(5)
    const x = Float64Array.from({ length: 50 }, rng.normal)
    expect(embeddingLossPlain(x, 5)).toBeGreaterThan(0)
  })
})

describe('leapfrog', () => {
  it('float64 is far closer to the double-double reference than float32', () => {
    const sys = solarSystem()
    const ref = leapfrogDoubleDouble(sys, 1, 200)
    const e64 = meanPlanetError(leapfrogF64(sys, 1, 200), ref)
    const e32 = meanPlanetError(leapfrogF32(sys, 1, 200), ref)
    expect(e64).toBeLessThan(1e-11)
    expect(e32).toBeGreaterThan(1e-9)
    expect(e32).toBeLessThan(1e-3)
  })
  it('running the inverse recovers the start up to round-off', () => {
    const sys = solarSystem()
    const s = leapfrogStartF64(sys, 1)
    const x0 = s.x.slice()
    const v0 = s.v.slice()
    leapfrogStepsF64(s, sys.mass, 1, 500)
    leapfrogStepsInverseF64(s, sys.mass, 1, 500)
    expect(maxScaledError(s.x, x0)).toBeLessThan(1e-12)
    expect(maxScaledError(s.v, v0)).toBeLessThan(1e-12)
  })
})

describe('unitary step', () => {
  const M = 6
  const N = 4
  const rng = createRng(11)
  const theta = Float64Array.from({ length: (M * (M - 1)) / 2 }, rng.normal)
  const x0 = Float64Array.from({ length: M * N }, rng.normal)
  const c = Float64Array.from({ length: M * N }, rng.normal)
  it('preserves column norms and inverts exactly (to round-off)', () => {
    const x = x0.slice()
    unitaryStepPlain(x, M, N, theta)
    for (let l = 0; l < N; l++) {
      let a = 0
      let b = 0
      for (let i = 0; i < M; i++) (a += x0[i * N + l] ** 2), (b += x[i * N + l] ** 2)
      expect(b).toBeCloseTo(a, 12)
    }
    unitaryStepInversePlain(x, M, N, theta)
    expect(maxScaledError(x, x0)).toBeLessThan(1e-14)
  })
  it('gradient by reversibility matches finite differences', () => {
    const g = unitaryGradientPlain(x0, M, N, theta, c)
    const fdT = finiteDifferenceGradient((t) => unitaryLossPlain(x0, M, N, t, c), theta.slice())
    const fdX = finiteDifferenceGradient((v) => unitaryLossPlain(v, M, N, theta, c), x0.slice())
    expect(maxScaledError(g.theta, fdT)).toBeLessThan(1e-8)
    expect(maxScaledError(g.gx, fdX)).toBeLessThan(1e-8)
  })
})
