import { dd, ddAdd, ddDiv, ddMul, ddSqrt, ddSub, ddToNumber, type DD } from '../math/double-double.js'

/**
 * The leapfrog integrator of paper 000 Appendix F on a solar system (Sun + 8 planets):
 *   a_i = Σ_j G m_j (x_j − x_i)/‖x_i − x_j‖³,  v_{1/2} = v_0 + a_0 Δt/2,
 *   x_{t+1} = x_t + v_{t+1/2} Δt,  v_{t+3/2} = v_{t+1/2} + a(x_{t+1}) Δt.
 * Units: AU, days, solar masses (G = k², k the Gaussian gravitational constant).
 */
export const GAUSS_K = 0.01720209895
export const G_SOLAR = GAUSS_K * GAUSS_K

export interface SolarSystem {
  bodies: number
  mass: Float64Array
  /** 3·bodies, body-major */
  x: Float64Array
  v: Float64Array
}

// name, semi-major axis (AU), mass (M_sun), inclination (deg), mean longitude at start (deg)
const PLANETS: [string, number, number, number, number][] = [
  ['Mercury', 0.387098, 1.6601e-7, 7.005, 252.25],
  ['Venus', 0.723332, 2.4478e-6, 3.3947, 181.98],
  ['Earth', 1.000001, 3.0035e-6, 0.0, 100.46],
  ['Mars', 1.523679, 3.2272e-7, 1.851, 355.45],
  ['Jupiter', 5.2044, 9.5479e-4, 1.303, 34.4],
  ['Saturn', 9.5826, 2.8589e-4, 2.485, 49.94],
  ['Uranus', 19.2184, 4.3662e-5, 0.773, 313.23],
  ['Neptune', 30.11, 5.1514e-5, 1.77, 304.88],
]

/**
 * A solar-system-like initial state: the Sun and the eight planets on circular orbits with their
 * real semi-major axes, masses and inclinations, moved to the barycentric frame.
 */
export function solarSystem(): SolarSystem {
  const bodies = PLANETS.length + 1
  const mass = new Float64Array(bodies)
  const x = new Float64Array(3 * bodies)
  const v = new Float64Array(3 * bodies)
  mass[0] = 1
  PLANETS.forEach(([, a, m, incDeg, lonDeg], p) => {
    const b = p + 1
    mass[b] = m
    const inc = (incDeg * Math.PI) / 180
    const phi = (lonDeg * Math.PI) / 180
    const speed = Math.sqrt((G_SOLAR * (1 + m)) / a)
    x[3 * b] = a * Math.cos(phi)
    x[3 * b + 1] = a * Math.sin(phi) * Math.cos(inc)
    x[3 * b + 2] = a * Math.sin(phi) * Math.sin(inc)
    v[3 * b] = -speed * Math.sin(phi)
    v[3 * b + 1] = speed * Math.cos(phi) * Math.cos(inc)
    v[3 * b + 2] = speed * Math.cos(phi) * Math.sin(inc)
  })
  let total = 0
  const cx = [0, 0, 0]
  const cv = [0, 0, 0]
  for (let b = 0; b < bodies; b++) {
    total += mass[b]
    for (let d = 0; d < 3; d++) {
      cx[d] += mass[b] * x[3 * b + d]
      cv[d] += mass[b] * v[3 * b + d]
    }
  }
  for (let b = 0; b < bodies; b++)
    for (let d = 0; d < 3; d++) {
      x[3 * b + d] -= cx[d] / total
      v[3 * b + d] -= cv[d] / total
    }
  return { bodies, mass, x, v }
}

function accelerationF64(x: Float64Array, mass: Float64Array, bodies: number, a: Float64Array): void {
  a.fill(0)
  for (let i = 0; i < bodies; i++)
    for (let j = 0; j < bodies; j++) {
      if (i === j) continue
      const dx = x[3 * j] - x[3 * i]
      const dy = x[3 * j + 1] - x[3 * i + 1]
      const dz = x[3 * j + 2] - x[3 * i + 2]
      const r = Math.sqrt(dx * dx + dy * dy + dz * dz)
      const s = (G_SOLAR * mass[j]) / (r * r * r)
      a[3 * i] += s * dx
      a[3 * i + 1] += s * dy
      a[3 * i + 2] += s * dz
    }
}

export interface LeapfrogState {
  x: Float64Array
  /** the half-step velocity v_{t+1/2} */
  v: Float64Array
  a: Float64Array
}

/** Initial half-kick: v_{1/2} = v_0 + a(x_0) Δt/2. */
export function leapfrogStartF64(sys: SolarSystem, dt: number): LeapfrogState {
  const x = sys.x.slice()
  const v = sys.v.slice()
  const a = new Float64Array(x.length)
  accelerationF64(x, sys.mass, sys.bodies, a)
  for (let i = 0; i < v.length; i++) v[i] += a[i] * (dt / 2)
  return { x, v, a }
}

/** `steps` drift–kick steps in float64, in place. */
export function leapfrogStepsF64(state: LeapfrogState, mass: Float64Array, dt: number, steps: number): void {
  const { x, v, a } = state
  const bodies = mass.length
  for (let t = 0; t < steps; t++) {
    for (let i = 0; i < x.length; i++) x[i] += v[i] * dt
    accelerationF64(x, mass, bodies, a)
    for (let i = 0; i < v.length; i++) v[i] += a[i] * dt
  }
}

/** The time reverse of {@link leapfrogStepsF64}: kick back, then drift back. */
export function leapfrogStepsInverseF64(state: LeapfrogState, mass: Float64Array, dt: number, steps: number): void {
  const { x, v, a } = state
  const bodies = mass.length
  for (let t = 0; t < steps; t++) {
    accelerationF64(x, mass, bodies, a)
    for (let i = 0; i < v.length; i++) v[i] -= a[i] * dt
    for (let i = 0; i < x.length; i++) x[i] -= v[i] * dt
  }
}

/** Positions after `steps` steps in float64. */
export function leapfrogF64(sys: SolarSystem, dt: number, steps: number): Float64Array {
  const s = leapfrogStartF64(sys, dt)
  leapfrogStepsF64(s, sys.mass, dt, steps)
  return s.x
}

/** The same integrator with every operation rounded to float32 (Math.fround). */
export function leapfrogF32(sys: SolarSystem, dt: number, steps: number): Float64Array {
  return leapfrogF32Samples(sys, dt, [steps])[0]!
}

/** {@link leapfrogF32}, integrating once and taking the positions after each of `sampleAt` (ascending) steps. */
export function leapfrogF32Samples(sys: SolarSystem, dt: number, sampleAt: readonly number[]): Float64Array[] {
  const f = Math.fround
  const n = sys.bodies
  const x = Float32Array.from(sys.x)
  const v = Float32Array.from(sys.v)
  const m = Float32Array.from(sys.mass)
  const a = new Float32Array(x.length)
  const G = f(G_SOLAR)
  const h = f(dt)
  const acc = (): void => {
    a.fill(0)
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        if (i === j) continue
        const dx = f(x[3 * j] - x[3 * i])
        const dy = f(x[3 * j + 1] - x[3 * i + 1])
        const dz = f(x[3 * j + 2] - x[3 * i + 2])
        const r = f(Math.sqrt(f(f(f(dx * dx) + f(dy * dy)) + f(dz * dz))))
        const s = f(f(G * m[j]) / f(f(r * r) * r))
        a[3 * i] = f(a[3 * i] + f(s * dx))
        a[3 * i + 1] = f(a[3 * i + 1] + f(s * dy))
        a[3 * i + 2] = f(a[3 * i + 2] + f(s * dz))
      }
  }
  acc()
  const half = f(h / 2)
  for (let i = 0; i < v.length; i++) v[i] = f(v[i] + f(a[i] * half))
  const out: Float64Array[] = []
  let t = 0
  for (const steps of sampleAt) {
    for (; t < steps; t++) {
      for (let i = 0; i < x.length; i++) x[i] = f(x[i] + f(v[i] * h))
      acc()
      for (let i = 0; i < v.length; i++) v[i] = f(v[i] + f(a[i] * h))
    }
    out.push(Float64Array.from(x))
  }
  return out
}

/** The reference: the same integrator in double-double arithmetic (~32 digits). */
export function leapfrogDoubleDouble(sys: SolarSystem, dt: number, steps: number): Float64Array {
  return leapfrogDoubleDoubleSamples(sys, dt, [steps])[0]!
}

/** {@link leapfrogDoubleDouble}, integrating once and taking the positions after each of `sampleAt` (ascending) steps. */
export function leapfrogDoubleDoubleSamples(sys: SolarSystem, dt: number, sampleAt: readonly number[]): Float64Array[] {
  const n = sys.bodies
  const x: DD[] = Array.from(sys.x, dd)
  const v: DD[] = Array.from(sys.v, dd)
  const a: DD[] = x.map(() => dd(0))
  const G = dd(G_SOLAR)
  const h = dd(dt)
  const m: DD[] = Array.from(sys.mass, dd)
  const acc = (): void => {
    for (let i = 0; i < a.length; i++) a[i] = dd(0)
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        if (i === j) continue
        const dx = ddSub(x[3 * j], x[3 * i])
        const dy = ddSub(x[3 * j + 1], x[3 * i + 1])
        const dz = ddSub(x[3 * j + 2], x[3 * i + 2])
        const r2 = ddAdd(ddAdd(ddMul(dx, dx), ddMul(dy, dy)), ddMul(dz, dz))
        const r = ddSqrt(r2)
        const s = ddDiv(ddMul(G, m[j]), ddMul(r2, r))
        a[3 * i] = ddAdd(a[3 * i], ddMul(s, dx))
        a[3 * i + 1] = ddAdd(a[3 * i + 1], ddMul(s, dy))
        a[3 * i + 2] = ddAdd(a[3 * i + 2], ddMul(s, dz))
      }
  }
  acc()
  const half = ddDiv(h, dd(2))
  for (let i = 0; i < v.length; i++) v[i] = ddAdd(v[i], ddMul(a[i], half))
  const out: Float64Array[] = []
  let t = 0
  for (const steps of sampleAt) {
    for (; t < steps; t++) {
      for (let i = 0; i < x.length; i++) x[i] = ddAdd(x[i], ddMul(v[i], h))
      acc()
      for (let i = 0; i < v.length; i++) v[i] = ddAdd(v[i], ddMul(a[i], h))
    }
    out.push(Float64Array.from(x, ddToNumber))
  }
  return out
}

/** Mean over the planets (not the Sun) of the Euclidean position error, in AU. */
export function meanPlanetError(x: Float64Array, reference: Float64Array): number {
  const bodies = x.length / 3
  let s = 0
  for (let b = 1; b < bodies; b++) {
    const dx = x[3 * b] - reference[3 * b]
    const dy = x[3 * b + 1] - reference[3 * b + 1]
    const dz = x[3 * b + 2] - reference[3 * b + 2]
    s += Math.sqrt(dx * dx + dy * dy + dz * dz)
  }
  return s / (bodies - 1)
}

/** {@link leapfrogF64}, integrating once and taking the positions after each of `sampleAt` (ascending) steps. */
export function leapfrogF64Samples(sys: SolarSystem, dt: number, sampleAt: readonly number[]): Float64Array[] {
  const s = leapfrogStartF64(sys, dt)
  const out: Float64Array[] = []
  let t = 0
  for (const steps of sampleAt) {
    if (steps > t) leapfrogStepsF64(s, sys.mass, dt, steps - t)
    t = Math.max(t, steps)
    out.push(s.x.slice())
  }
  return out
}
