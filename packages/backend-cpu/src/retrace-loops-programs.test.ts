/**
 * Pass `retrace-loops` of `@tenet/ir` (checks on) in generated JavaScript: the programs run as the
 * reference interpreter runs them — the same bits where it raises nothing, its error (code,
 * message, location) where it raises one — on inputs where the backward loop must run from some
 * step and fail there (a post-condition, a deallocation check), where a state value is NaN or ±∞,
 * where the sign of a zero is all that differs, and with a host function whose value changes from
 * call to call (the pass must leave that loop as it is). The generated code shows where it applied.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, TENET_FUNCTION, type TenetModule } from '@tenet/reversible'
import { besselSource, raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** `text` compiled with checks on, by the cpu backend and by the interpreter (host functions from `hosts()`, fresh for each). */
function both(text: string, hosts: () => unknown[] = () => []): { cpu: TenetModule; ref: TenetModule } {
  const compile = (backend: string) =>
    compileModule(parse({ text, name: 'retrace' }, hosts()), { registry, backend, checks: true })
  return { cpu: compile('cpu'), ref: compile(interpreterBackend.name) }
}

/** The generated JavaScript of function \`name\`. */
const generated = (m: TenetModule, name: string): string =>
  (m[name] as unknown as Record<symbol, { compiled: { sourceOf(n: string, i: boolean): string } }>)[
    TENET_FUNCTION
  ]!.compiled.sourceOf(name, false)

/** What a call did: its error, or its results (−0 told apart from +0). */
function outcome(f: (...a: number[]) => unknown, ...args: number[]): string {
  let r: unknown
  const e = raisedError(() => {
    r = f(...args)
  })
  return `${e} | ${JSON.stringify(r, (_k, v) => (typeof v === 'number' ? (Object.is(v, -0) ? '-0' : String(v)) : v))}`
}

/** z where the backward loop retraces every step, resumes at an early one, fails, or sees NaN and ±∞. */
const ZS = [
  1,
  0.1,
  0.5,
  2.5,
  3,
  7,
  15,
  30,
  60,
  -1,
  -2.5,
  0,
  -0,
  1e-10,
  1e-160,
  1e300,
  -1e300,
  Infinity,
  -Infinity,
  NaN,
  5e-324,
]

describe('retrace-loops with checks on (cpu)', () => {
  it('the Bessel listing: the reference values and errors at every z and order', () => {
    const { cpu, ref } = both(besselSource)
    // (the pass applied: the forward loop tests its updates)
    expect(generated(cpu, 'ibesselj')).toContain('Object.is(')
    const zs = [...ZS, ...Array.from({ length: 200 }, (_, i) => -5 + 0.173 * i)]
    const errors = new Set<string>()
    for (const nu of [0, 1, 2, 5])
      for (const z of zs) {
        const want = outcome(ref.ibesselj!, 0.5, nu, z)
        expect(outcome(cpu.ibesselj!, 0.5, nu, z), `ν=${nu} z=${z}`).toBe(want)
        errors.add(want.split(' ')[0]!)
      }
    // a failing post-condition of the backward loop and failing deallocation checks among them
    expect([...errors].sort()).toEqual(['no', 'runtime/dealloc', 'runtime/post-condition'])
  })

  it('a second series (exp x, updates that multiply): the reference values and errors', () => {
    const text = `
fn f(out: f64, x: f64) {
  n <- 0.0
  t <- 0.0
  s <- 0.0
  routine {
    t += 1.0
    s += identity(t)
    while (abs(t) > 1e-16, n != 0.0) {
      n += 1.0
      t *= x / n
      s += identity(t)
    }
  }
  out += identity(s)
  ~routine
  s -> 0.0
  t -> 0.0
  n -> 0.0
}`
    const { cpu, ref } = both(text)
    expect(generated(cpu, 'f')).toContain('Object.is(')
    const errors = new Set<string>()
    // (not x = ±1e300: t overflows to ±∞ and the forward loop never ends, in the reference too)
    for (const x of [
      1,
      0.5,
      -1,
      -2.5,
      0,
      -0,
      1e-10,
      Infinity,
      -Infinity,
      NaN,
      5e-324,
      ...Array.from({ length: 120 }, (_, i) => -60 + i),
    ]) {
      const want = outcome(ref.f!, 0, x)
      expect(outcome(cpu.f!, 0, x), `x=${x}`).toBe(want)
      errors.add(want.split(' ')[0]!)
    }
    expect(errors.has('no')).toBe(true)
    expect(errors.has('runtime/dealloc')).toBe(true)
  })

  it('a zero whose sign the step back changes: the backward loop runs it and fails as the reference does', () => {
    // z is −0 where the iteration starts; z += a; z -= a leaves +0, and undone, the step back
    // reaches +0 again, not −0: atan2(+0, −1) = π, not −π, and w is not returned to zero
    const text = `
fn f(out: f64, a: f64) {
  z <- 0.0
  w <- 0.0
  k: i32 <- 0
  z *= -1.0
  routine {
    while (k < 1, k != 0) {
      k += 1
      w += atan2(z, -1.0)
      z += identity(a)
      z -= identity(a)
    }
  }
  out += identity(w)
  ~routine
  z /= -1.0
  k -> 0
  w -> 0.0
  z -> 0.0
}`
    const { cpu, ref } = both(text)
    expect(generated(cpu, 'f')).toContain('Object.is(')
    for (const a of [1, 0.5, -3, 0, -0]) {
      const want = outcome(ref.f!, 0, a)
      if (a !== 0) expect(want).toMatch(/^runtime\/dealloc \| cannot deallocate `w`/)
      expect(outcome(cpu.f!, 0, a), `a=${a}`).toBe(want)
    }
  })

  it('a host function in the forward loop: left as it is, and its changing values fail the check as in the reference', () => {
    const text = `
fn f(out: f64, x: f64) {
  n <- 0.0
  t <- 0.0
  routine {
    while (n < 3.0, n != 0.0) {
      n += 1.0
      t += \${0}(n)
    }
  }
  out += identity(t)
  ~routine
  t -> 0.0
  n -> 0.0
}`
    // (a host with a state of its own: each call adds a little more)
    const hosts = () => {
      let calls = 0
      return [(v: number) => v + 1e-3 * calls++]
    }
    const { cpu, ref } = both(text, hosts)
    expect(generated(cpu, 'f')).not.toContain('Object.is(')
    const want = outcome(ref.f!, 0, 1)
    expect(want).toMatch(/^runtime\/dealloc \| cannot deallocate `t`/)
    expect(outcome(cpu.f!, 0, 1)).toBe(want)
  })
})
