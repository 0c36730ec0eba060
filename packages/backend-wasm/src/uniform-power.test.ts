/**
 * Powers with a uniform exponent known only at run time in map lanes (`uniformPower` in the code
 * generator): `x ** n` with n a parameter of the map (`halfz ** nu` of the Bessel batch) decides
 * the scalar code's cases (n = 2: x · x, n = 1: x, else the scalar code per lane) once for both
 * lanes. Every case compares the lanes' bits, forwards and backwards, with the scalar wasm code,
 * the cpu backend and the reference interpreter, on operands that reach every case's edges.
 */
import { describe, expect, it } from 'vitest'
import { bessel, compile, expectSameForward, expectSameRuns, lastMapLanes, lastUniformPowers } from './test-util.js'

/** Operands: signs, zeros, subnormals, huge, infinite and NaN values, and ordinary ones. */
const XS = [0, -0, 1, -1, 0.5, -2.5, 3.75, 5e-324, -1e-310, 1e200, -1e200, Infinity, -Infinity, NaN, 1.1, 0.3]
const xs = (n: number) =>
  Float64Array.from({ length: n }, (_, i) => XS[i % XS.length]! * (1 + Math.floor(i / XS.length)))

/** The engines: lanes, scalar wasm, cpu, interpreter (checks off), and the interpreter with checks. */
function engines(text: string) {
  const lanes = compile(text, 'wasm')
  const mapped = lastMapLanes
  const powers = lastUniformPowers
  const scalar = compile(text, 'wasm', false, false)
  const scalarPowers = lastUniformPowers
  return {
    mapped,
    powers,
    scalarPowers,
    all: [compile(text, 'interpreter'), compile(text, 'cpu'), scalar, lanes, compile(text, 'interpreter', true)],
  }
}

describe('uniform powers in map lanes', () => {
  it('an i32 exponent: 2 as x · x, 1 as x, every other one per lane, the scalar code’s bits', () => {
    const e = engines(`
fn g(out: f64, x: f64, n: i32) {
  t <- 0.0
  t += x ** n
  if (t > 0.4, ~) { out += t } else { out -= t * 3.0 }
  t -= x ** n
  t -> 0.0
}
fn f(out: f64[], x: f64[], n: i32) {
  for i in 0..len(x) { g(out[i], x[i], n) }
}`)
    expect(e.mapped).toBeGreaterThan(0)
    expect(e.powers).toBeGreaterThan(0)
    expect(e.scalarPowers).toBe(0)
    for (const n of [-3, -2, -1, 0, 1, 2, 3, 4, 2147483647, -2147483648])
      for (const len of [1, 2, 3, 16, 33])
        expectSameForward(e.all.slice(0, 4), () => [new Float64Array(len), xs(len), n])
  })

  it('an f64 exponent, and powers under varying branches (lanes masked)', () => {
    const e = engines(`
fn g(out: f64, x: f64, p: f64) {
  if (x > 0.4, ~) {
    out += x ** p
  } else {
    out -= (x * 2.0) ** (p - 1.0)
  }
}
fn f(out: f64[], x: f64[], p: f64) {
  for i in 0..len(x) { g(out[i], x[i], p) }
}`)
    expect(e.mapped).toBeGreaterThan(0)
    expect(e.powers).toBeGreaterThanOrEqual(2)
    for (const p of [2, 1, 3, 0.5, -1, 0, 2.5, NaN, Infinity])
      for (const len of [2, 5, 16, 32]) expectSameRuns(e.all.slice(0, 4), () => [new Float64Array(len), xs(len), p])
  })

  it('the Bessel batch (halfz ** nu in its series’ prologue), ν = 0…5, forwards and backwards, checks on and off', () => {
    const e = engines(bessel)
    expect(e.powers).toBeGreaterThan(0)
    const zs = (n: number) => Float64Array.from({ length: n }, (_, i) => 0.1 + ((i * 0.6180339887) % 1) * 7.9)
    for (const nu of [0, 1, 2, 3, 5])
      for (const n of [1, 2, 7, 16]) expectSameRuns(e.all, () => [new Float64Array(n), nu, zs(n)])
  })
})
