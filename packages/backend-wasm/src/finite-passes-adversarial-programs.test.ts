/**
 * Adversarial programs for the passes `finite-cells` (checks on) and `zero-sums` (checks off) against
 * the reference interpreter, cpu and wasm.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses, type PassName } from '@tenet/ir/backend'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

function withoutPass<T>(pass: PassName, f: () => T): T {
  disabledPasses.add(pass)
  try {
    return f()
  } finally {
    disabledPasses.delete(pass)
  }
}

function outcome(run: () => unknown): unknown {
  try {
    const v = run()
    return JSON.stringify(v, (_k, x) => (typeof x === 'number' ? (Object.is(x, -0) ? '-0' : String(x)) : x))
  } catch {
    return raisedError(run)
  }
}

type Engine = ReturnType<typeof referenceBackend>

function outcomes(checks: boolean, pass: PassName, src: string, name: string, args: () => unknown[], inverse = false) {
  const reference = referenceBackend({ checks })
  const call = (m: ReturnType<Engine['compile']>) => (inverse ? m[name]!.inverse : m[name]!)(...args())
  const out: Record<string, unknown> = { reference: outcome(() => call(reference.compile(src))) }
  for (const [n, b] of [
    ['cpu', cpuBackend],
    ['wasm', wasmBackend],
  ] as const) {
    const e = backendUnderTest(b, { checks })
    out[n] = outcome(() => call(e.compile(src)))
    out[`${n} without ${pass}`] = withoutPass(pass, () => outcome(() => call(e.compile(`${src}\n`))))
  }
  return out
}

function expectAgree(o: Record<string, unknown>) {
  for (const [k, v] of Object.entries(o)) expect(v, k).toEqual(o.reference)
}

describe('finite-cells', () => {
  it('a later iteration writes an earlier cell through a negated view passed to a call', () => {
    const src = `
fn bump(y: f64) {
  y += 0.1
}
fn f(loss: f64, x: f64[], T: i32) {
  A: f64[] <- zeros(T + 2)
  B: f64[] <- zeros(T + 2)
  for t in 1..T {
    B[t] += x[t]
    bump(-B[t - 1])
    A[t] += B[t] * 1.0e300
  }
  loss += A[1]
  for t in reverse 1..T {
    A[t] -= B[t] * 1.0e300
    ~bump(-B[t - 1])
    B[t] -= x[t]
  }
  A -> zeros(T + 2)
  B -> zeros(T + 2)
}`
    const third = 1e-17
    const o = outcomes(true, 'finite-cells', src, 'f', () => [0, Float64Array.of(third, third, third, third, third), 4])
    expect(String(o.reference)).toMatch(/^runtime\//)
    expectAgree(o)
  })
})

describe('finite-cells (lengths)', () => {
  it('the history index reads len(C) of an ancilla reallocated between the loop and its inverse', () => {
    const src = `
fn f(loss: f64, x: f64[], T: i32) {
  A: f64[] <- zeros(T + 4)
  B: f64[] <- zeros(T)
  C: f64[] <- zeros(T)
  for t in 0..T {
    B[t] += x[t]
    A[t + len(C)] += B[t]
  }
  C -> zeros(T)
  C: f64[] <- zeros(T + 1)
  for t in reverse 0..T {
    A[t + len(C)] -= B[t]
    B[t] -= x[t]
  }
  A[1] -= x[0]
  loss += x[0]
  C -> zeros(T + 1)
  B -> zeros(T)
  A -> zeros(T + 4)
}`
    const o = outcomes(true, 'finite-cells', src, 'f', () => [0, Float64Array.of(0.5), 1])
    expect(String(o.reference)).toMatch(/^runtime\//)
    expectAgree(o)
  })
})

describe('finite-history (lengths, the same gap before this merge)', () => {
  it('finite-history, the history index reads len(C) of a reallocated ancilla', () => {
    const src = `
fn f(loss: f64, x: f64[], T: i32) {
  A: f64[] <- zeros(T + 4)
  C: f64[] <- zeros(T)
  for t in 0..T {
    A[t + len(C)] += x[t]
  }
  C -> zeros(T)
  C: f64[] <- zeros(T + 1)
  for t in reverse 0..T {
    A[t + len(C)] -= x[t]
  }
  A[1] -= x[0]
  loss += x[0]
  C -> zeros(T + 1)
  A -> zeros(T + 4)
}`
    const o = outcomes(true, 'finite-history', src, 'f', () => [0, Float64Array.of(0.5), 1])
    expect(String(o.reference)).toMatch(/^runtime\//)
    expectAgree(o)
  })
})

describe('zero-sums (checks off)', () => {
  const special = [0, -0, 1, -1, 1 / 3, 5e-324, -1e308, Number.POSITIVE_INFINITY, Number.NaN]
  const programs = [
    `fn f(out: f64, x: f64[], a: f64, b: f64, c: f64) {
  y <- 0.0
  y += a * c - b
  z <- 0.0
  z -= b - a * y
  out += y * 3.0 + z
  z += b - a * y
  y -= a * c - b
  y -> 0.0
  z -> 0.0
}`,
    `fn f(out: f64, x: f64[], a: f64, b: f64, c: f64) {
  x[0] += a
  y <- 0.0
  y -= x[0] + b - c
  out -= y + x[0]
  y += x[0] + b - c
  y -> 0.0
}`,
    `fn g(y: f64, a: f64, b: f64) {
  u <- 0.0
  u += y - b
  y += u * a
  u -= y - b
  u -> 0.0
}
fn f(out: f64, x: f64[], a: f64, b: f64, c: f64) {
  out += a
  g(out, b, c)
  ~g(out, c, a)
  w <- 0.0
  w += out - a
  out += w * w
  w -= out - a
  w -> 0.0
}`,
  ]
  it('forward and inverse: the reference interpreter’s bits, cpu and wasm, with the pass and without', () => {
    const bad: string[] = []
    for (const [pi, src] of programs.entries())
      for (const a of special)
        for (const b of special)
          for (const c of [-0, 1, Number.NaN, 1e-310])
            for (const inverse of [false, true]) {
              const o = outcomes(false, 'zero-sums', src, 'f', () => [-0, Float64Array.of(b, a), a, b, c], inverse)
              for (const [k, v] of Object.entries(o))
                if (v !== o.reference) bad.push(`${pi} ${a} ${b} ${c} ${inverse} ${k}: ${v} vs ${o.reference}`)
            }
    expect(bad.slice(0, 10)).toEqual([])
  }, 600_000)
})
