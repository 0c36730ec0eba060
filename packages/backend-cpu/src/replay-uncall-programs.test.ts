/**
 * Pass `replay-uncall` (see `@tenet/ir`) on compiled programs with run-time checks on: the
 * reversible leapfrog (paper 000 Appendix F), whose step computes the accelerations in a routine
 * and uncomputes them with `~routine`, records the terms it adds and subtracts them again instead
 * of computing the accelerations twice; it computes the reference interpreter's values bit for
 * bit (float64 and float32), and every program that fails a check fails as the reference does
 * (code, message, source location). The programs it must leave alone keep their uncall.
 */
import { describe, expect, it } from 'vitest'
import { TENET_FUNCTION } from '@tenet/reversible'
import { accelSource, backendUnderTest, raisedError, Random, referenceBackend } from '@tenet/testing'
import { cpuBackend } from './index.js'

const cpu = backendUnderTest(cpuBackend, { checks: true })
const reference = referenceBackend({ checks: true })

/** The leapfrog of `nb` bodies in type `T`, with `between` after the kick (before `~routine`). */
const leapfrog = (T: 'f64' | 'f32', between = '') => `
${accelSource(true, T)}fn leapfrog(x: ${T}[], v: ${T}[], m: ${T}[], nb: i32, g: ${T}, dt: ${T}, steps: i32) {
  for t in 0..steps {
    for i in 0..3 * nb { x[i] += v[i] * dt }
    routine {
      a: ${T}[] <- zeros(3 * nb)
      accel(a, x, m, nb, g)
    }
    for i in 0..3 * nb { v[i] += a[i] * dt }${between}
    ~routine
  }
}`

const generated = (src: string, name: string, inverse = false, entry = 'leapfrog'): string =>
  (
    cpu.compile(src)[entry]![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string | undefined } }
  ).compiled.sourceOf(name, inverse) ?? ''

/** Three bodies on a line and off it, their masses, as arrays of `A`. */
function bodies(A: Float64ArrayConstructor | Float32ArrayConstructor, x = [0, 0, 0, 1, 0, 0.1, -0.5, 2, 0]) {
  return { x: A.from(x), v: A.from([0, 0, 0, 0, 0.3, 0, 0.2, 0, 0.05]), m: A.from([1, 1e-3, 2e-3]) }
}

describe('replay-uncall with checks on (cpu)', () => {
  it('records the terms in the call and subtracts them in the uncall (generated code)', () => {
    for (const T of ['f64', 'f32'] as const) {
      const src = leapfrog(T)
      const step = generated(src, 'leapfrog')
      const record = generated(src, 'accel$replay')
      const replay = generated(src, 'accel$replay', true)
      // the uncall replays: no square root, no division, no loads of the positions
      expect(record).toMatch(/tape\d+\[top\d+\+\+\] = /)
      expect(replay).toMatch(/tape\d+\[--top\d+\]/)
      expect(replay).not.toMatch(/Math\.sqrt|\/|p1\[/)
      // the step calls the copies (internal names: FI, BI), not accel
      expect(step).toMatch(/FI\d+\(v\d+, p0, p2, p3, p4\)/)
      expect(step).toMatch(/BI\d+\(v\d+, p0, p2, p3, p4\)/)
      expect(generated(src, 'accel')).not.toMatch(/tape/)
    }
  })

  it('computes the reference’s values bit for bit (float64, float32)', () => {
    for (const [T, A] of [
      ['f64', Float64Array],
      ['f32', Float32Array],
    ] as const) {
      const src = leapfrog(T)
      const run = (b: typeof cpu) => {
        const { x, v, m } = bodies(A)
        return b.compile(src).leapfrog!(x, v, m, 3, 0.5, 0.01, 7)
      }
      expect(run(cpu)).toEqual(run(reference))
      // (and once more: the tape is back where it started)
      expect(run(cpu)).toEqual(run(reference))
    }
  })

  it('fails as the reference does', () => {
    const cases: Array<[string, (A: Float64ArrayConstructor | Float32ArrayConstructor) => unknown[]]> = [
      // two bodies at one place: r2 = 0, s = ∞, its deallocation (s − s is NaN) fails in the call
      ['', (A) => [A.from([0, 0, 0, 0, 0, 0, 1, 1, 1]), new A(9), bodies(A).m, 3, 0.5, 0.01, 2]],
      // a mass NaN: the terms are NaN, the acceleration's deallocation fails after the uncall
      ['', (A) => [bodies(A).x, bodies(A).v, A.from([1, Number.NaN, 1]), 3, 0.5, 0.01, 2]],
      // more bodies than masses: out of bounds in the call
      ['', (A) => [bodies(A).x, bodies(A).v, A.from([1, 1e-3]), 3, 0.5, 0.01, 2]],
      // the step writes the accelerations before the uncall: their deallocation fails
      ['\n    a[1] += 1.0', (A) => [...Object.values(bodies(A)), 3, 0.5, 0.01, 2]],
    ]
    for (const [T, A] of [
      ['f64', Float64Array],
      ['f32', Float32Array],
    ] as const) {
      for (const [between, args] of cases) {
        const src = leapfrog(T, between)
        const want = raisedError(() => reference.compile(src).leapfrog!(...args(A)))
        expect(want).toMatch(/^runtime\//)
        expect(raisedError(() => cpu.compile(src).leapfrog!(...args(A)))).toBe(want)
      }
    }
    // after the failures, the tape still pairs each uncall with its call
    const src = leapfrog('f64')
    const run = (b: typeof cpu) => {
      const { x, v, m } = bodies(Float64Array)
      return b.compile(src).leapfrog!(x, v, m, 3, 0.5, 0.01, 3)
    }
    expect(run(cpu)).toEqual(run(reference))
  })

  it('leaves the uncall alone where what the call reads changes before it', () => {
    // the positions drift between the call and the uncall: ~accel computes other terms
    const src = leapfrog('f64', '\n    for i in 0..3 * nb { x[i] += v[i] * dt }')
    expect(generated(src, 'accel$replay')).toBe('')
    const run = (b: typeof cpu) => {
      const { x, v, m } = bodies(Float64Array)
      return raisedError(() => b.compile(src).leapfrog!(x, v, m, 3, 0.5, 0.01, 3))
    }
    expect(run(cpu)).toBe(run(reference))
  })

  it('random accumulators: the reference’s values and errors, bit for bit, replayed or not', () => {
    let replayed = 0
    let failed = 0
    for (let seed = 1; seed <= 32; seed++) {
      const r = new Random(seed)
      const T = r.pick(['f64', 'f32'] as const)
      const src = accumulator(r, T)
      if (generated(src, 'acc$replay', true, 'f').includes('tape')) replayed++
      const A = T === 'f64' ? Float64Array : Float32Array
      const n = r.int(1, 5)
      const x = Array.from({ length: n }, () => r.pick([0, -0, 1, -2.5, 0.75, 3, 1e-3, -7]))
      const k = r.int(0, n)
      const run = (b: typeof cpu) => {
        try {
          return JSON.stringify(b.compile(src).f!(new A(n), A.from(x), n, k), (_, v) => (Object.is(v, -0) ? '-0' : v))
        } catch {
          return raisedError(() => b.compile(src).f!(new A(n), A.from(x), n, k))
        }
      }
      const want = run(reference)
      if (want.startsWith('runtime/')) failed++
      expect(run(cpu), src).toBe(want)
    }
    // most of them replay (not those whose step writes x); some run to the end, some fail a check
    expect(replayed).toBeGreaterThan(10)
    expect(failed).toBeGreaterThan(4)
    expect(failed).toBeLessThan(28)
  })
})

/**
 * A random accumulator \`acc\` (terms of x through routine locals, added to or subtracted from
 * elements of \`a\`, in nested loops and branches) and a function \`f\` that computes it into an
 * ancilla, reads it, maybe writes it or x, and uncomputes it.
 */
function accumulator(r: Random, T: 'f64' | 'f32'): string {
  const inner = r.chance(0.6)
  const reads = inner ? ['x[i]', 'x[j]', 'x[0]', '2.0', '0.5'] : ['x[i]', 'x[n - 1 - i]', '1.5', '-0.0']
  const leaf = () => r.pick(reads)
  const expr = (locals: string[], depth = 0): string =>
    depth > 1 || r.chance(0.3)
      ? r.pick([...reads, ...locals])
      : `${expr(locals, depth + 1)} ${r.pick(['+', '-', '*', '/'])} ${expr(locals, depth + 1)}`
  const locals: string[] = []
  const compute: string[] = []
  // (three or more locals: a smaller callee is inlined, and there is no call left to replay)
  for (let q = 0, count = r.int(3, 4); q < count; q++) {
    const t = `t${q}`
    compute.push(`${t}: ${T} <- 0.0`, `${t} += ${r.chance(0.3) ? `sqrt(${leaf()} * ${leaf()})` : expr(locals)}`)
    locals.push(t)
  }
  const index = () => r.pick(inner ? ['i', 'j', 'n - 1 - i'] : ['i', 'n - 1 - i', '0'])
  const updates = Array.from({ length: r.int(1, 3) }, () => `a[${index()}] ${r.pick(['+=', '-='])} ${expr(locals)}`)
  const cond = r.pick(inner ? ['i != j', 'i < j', 'true'] : ['i % 2 == 0', 'true'])
  const body = `if (${cond}, ~) {
        routine {
          ${compute.join('\n          ')}
        }
        ${updates.join('\n        ')}
        ~routine
      }${r.chance(0.3) ? ` else { a[i] += ${leaf()} }` : ''}`
  const between = r.pick(['', '', '', '\n  a[0] += 1.0', '\n  x[0] += 1.0'])
  return `
fn acc(a: ${T}[], x: ${T}[], n: i32, k: i32) {
  for i in 0..n {
    ${inner ? `for j in 0..k {\n      ${body}\n    }` : body}
  }
}
fn f(y: ${T}[], x: ${T}[], n: i32, k: i32) {
  a: ${T}[] <- zeros(n)
  acc(a, x, n, k)
  for i in 0..n { y[i] += a[i] * x[i] }${between}
  ~acc(a, x, n, k)
  a -> zeros(n)
}`
}
