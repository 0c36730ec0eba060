/**
 * Adversarial programs for calls of exact functions kept
 * through the passes and inlined after them on wasm with checks on, and `finite-uncompute` taking
 * a call in between by its callee's writes. Each program runs on the reference interpreter, the
 * cpu backend and the wasm backend with checks on, forwards (and inverse where it says so); the
 * outcome (values bit for bit, or the error: code, message, location) must be the interpreter's.
 * A map loop of series whose range bounds sit at the i32 limits runs as the interpreter's too
 * (\`pair-series\` guards its groups: \`range-guard.ts\`).
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, besselSource, mulberry32, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const engines = {
  ref: referenceBackend({ checks: true }),
  cpu: backendUnderTest(cpuBackend, { checks: true }),
  wasm: backendUnderTest(wasmBackend, { checks: true }),
}

const show = (v: unknown): unknown =>
  ArrayBuffer.isView(v)
    ? { arr: Array.from(v as Float64Array, (x) => (Object.is(x, -0) ? '-0' : Number.isNaN(x) ? 'NaN' : x)) }
    : Array.isArray(v)
      ? v.map(show)
      : Object.is(v, -0)
        ? '-0'
        : typeof v === 'number' && Number.isNaN(v)
          ? 'NaN'
          : v

const copy = (a: unknown[]): unknown[] => a.map((x) => (ArrayBuffer.isView(x) ? (x as Float64Array).slice() : x))

/** The outcome of `fn(...args)` (or its inverse) on each engine: the values, or the error. */
function outcomes(src: string, fn: string, args: unknown[], inverse = false): Record<keyof typeof engines, string> {
  const run = (e: (typeof engines)[keyof typeof engines]): string => {
    let out: unknown
    const err = raisedError(() => {
      const f = e.compile(src)[fn] as unknown as ((...a: unknown[]) => unknown) & {
        inverse: (...a: unknown[]) => unknown
      }
      out = inverse ? f.inverse(...copy(args)) : f(...copy(args))
    })
    return err === 'no error' ? JSON.stringify(show(out)) : err
  }
  return { ref: run(engines.ref), cpu: run(engines.cpu), wasm: run(engines.wasm) }
}

/** The calls whose outcome on cpu or wasm is not the interpreter's. */
function mismatches(src: string, calls: Array<[string, unknown[], boolean?]>): string[] {
  const out: string[] = []
  for (const [fn, args, inverse] of calls) {
    const r = outcomes(src, fn, args, inverse ?? false)
    if (r.cpu !== r.ref || r.wasm !== r.ref)
      out.push(
        `${fn}${inverse ? '.inverse' : ''}(${args.map((a) => JSON.stringify(show(a))).join(', ')}):\n  ref  ${r.ref}\n  cpu  ${r.cpu}\n  wasm ${r.wasm}`,
      )
  }
  return out
}

const f64 = (...x: number[]) => Float64Array.from(x)
const I32_MIN = -(2 ** 31)
const I32_MAX = 2 ** 31 - 1

describe('loop ranges at the i32 limits', () => {
  it('a checked map loop of series `for i in a..b` with b = −2³¹ is empty (b − 1 wraps): no grouped loop runs', () => {
    const src = `${besselSource}
fn b10(out: f64[], nu: i32, z: f64[], a: i32, b: i32) {
  for i in a..b { ibesselj(out[i], nu, z[i]) }
}`
    // the loop is empty (a ≥ b): the interpreter returns the arguments unchanged; wasm raised
    // "RuntimeError: memory access out of bounds" (not a TenetError: the unchecked version of the
    // loop ran past the arrays), or the factorial's check (ν = 13, the hoisted call), and cpu a
    // deallocation error
    const calls: Array<[string, unknown[]]> = []
    for (const [a, b] of [
      [0, I32_MIN],
      [I32_MIN, I32_MIN],
      [-1, I32_MIN],
      [I32_MAX, I32_MIN],
    ] as const)
      for (const nu of [1, 13]) calls.push(['b10', [f64(0, 0, 0, 0), nu, f64(1, 2, 3, 4), a, b]])
    expect(mismatches(src, calls)).toEqual([])
  })
})

describe('loop ranges at the i32 limits, checks off', () => {
  it('a map loop of series pairs its iterations only where its range fits: the interpreter’s values', () => {
    const src = `${besselSource}
fn b10(out: f64[], nu: i32, z: f64[], a: i32, b: i32) {
  for i in a..b { ibesselj(out[i], nu, z[i]) }
}
fn b11(out: f64[], nu: i32, z: f64[], a: i32, b: i32) {
  for i in reverse a..=b { ibesselj(out[i], nu, z[i]) }
}`
    const off = {
      ref: referenceBackend({ checks: false }),
      cpu: backendUnderTest(cpuBackend, { checks: false }),
      wasm: backendUnderTest(wasmBackend, { checks: false }),
    }
    const diffs: string[] = []
    let valid = 0
    for (const fn of ['b10', 'b11'])
      for (const [a, b] of [
        [0, I32_MIN],
        [I32_MIN, I32_MIN],
        [I32_MAX, I32_MIN],
        [0, 4],
        [1, 3],
        [2, 3],
        [0, 0],
      ] as const) {
        const args = () => [f64(0, 0, 0, 0), 1, f64(1, 2, 3, 4), a, b]
        const r = (e: (typeof off)[keyof typeof off]) => {
          let out: unknown
          const err = raisedError(() => {
            out = (e.compile(src)[fn] as unknown as (...x: unknown[]) => unknown)(...args())
          })
          return err === 'no error' ? JSON.stringify(show(out)) : err
        }
        const want = r(off.ref)
        // (an index out of range with checks off: the backends need not report it)
        if (want.startsWith('runtime/out-of-bounds')) continue
        valid++
        for (const k of ['cpu', 'wasm'] as const) {
          const got = r(off[k])
          if (got !== want) diffs.push(`${k} ${fn}(${a}, ${b}): ${got} | interpreter ${want}`)
        }
      }
    expect(diffs).toEqual([])
    expect(valid).toBeGreaterThanOrEqual(8)
  })
})

describe('exact calls inlined after the passes, finite-uncompute by callee writes', () => {
  it('exact calls kept through the passes and inlined after them: values and the failing check (forwards, inverse, callers inlined in turn)', () => {
    // `g` is exact (integer updates, a while loop, a call of the exact `h`) and not small: its
    // call stays a call through the passes on wasm (`exact-uncompute` turns its uncall into c -= c)
    // and is inlined after them; its deallocation `k -> 3` fails for n ≠ 3 (the callee's message
    // and location), division by zero and i32 wrap in `div(m, k)`
    const src = `fn h(out: i32, a: i32, b: i32) {
  out += div(a, b)
}
fn g(out: i32, n: i32, m: i32) {
  k: i32 <- 0
  while (k < n, k != 0) {
    k += 1
    h(out, m, k)
  }
  k -> 3
}
fn caller(y: f64[], n: i32, m: i32) {
  c: i32 <- 0
  g(c, n, m)
  for i in 0..m { y[i] += f64(c) }
  ~g(c, n, m)
  c -> 0
}
fn caller2(y: f64[], n: i32, m: i32) {
  c: i32 <- 0
  g(c, n, m)
  y[m] += f64(c)
  ~g(c, n, m)
  c -> 0
}
fn caller3(y: f64[], n: i32, m: i32) {
  for i in 0..m { y[i] += 1.0 }
  c: i32 <- 0
  g(c, n, m)
  y[0] += f64(c)
  ~g(c, n, m)
  c -> 0
}
fn both(y: f64[], n: i32, m: i32) {
  caller(y, n, m)
  caller2(y, m, n)
}`
    const calls: Array<[string, unknown[], boolean]> = []
    for (const fn of ['caller', 'caller2', 'caller3', 'both'])
      for (const n of [0, 2, 3, -1])
        for (const m of [0, 2, 5, -1, I32_MIN])
          for (const inverse of [false, true]) calls.push([fn, [f64(0.5, 1.5, 2.5), n, m], inverse])
    expect(mismatches(src, calls)).toEqual([])
  })

  it('recursive and mutually recursive exact functions, nested exact calls inlined after the passes (their $top<k>$ locals apart)', () => {
    const src = `fn fib(out: i32, n: i32) {
  if (n > 1, ~) {
    t: i32 <- 0
    fib(t, n - 1)
    out += t
    ~fib(t, n - 1)
    fib(t, n - 2)
    out += t
    ~fib(t, n - 2)
    t -> 0
  } else {
    out += n
  }
}
fn ev(out: i32, n: i32) {
  if (n > 0, ~) {
    t: i32 <- 0
    od(t, n - 1)
    out ^= t
    ~od(t, n - 1)
    t -> 0
  } else {
    out += 1
  }
}
fn od(out: i32, n: i32) {
  if (n > 0, ~) {
    t: i32 <- 0
    ev(t, n - 1)
    out ^= t
    ~ev(t, n - 1)
    t -> 0
  }
}
fn wrap(out: i32, n: i32) {
  t: i32 <- 0
  k: i32 <- 0
  fib(t, n)
  ev(k, n)
  out += t * 1000 + k
  ~ev(k, n)
  ~fib(t, n)
  k -> 0
  t -> 0
}
fn f(y: f64, n: i32) {
  t: i32 <- 0
  wrap(t, n)
  y += f64(t)
  ~wrap(t, n)
  t -> 0
}
fn f2(y: f64, n: i32) {
  f(y, n)
  t: i32 <- 0
  wrap(t, n + 1)
  y += f64(t) * 0.5
  ~wrap(t, n + 1)
  t -> 0
}`
    const calls: Array<[string, unknown[], boolean]> = []
    for (const fn of ['f', 'f2'])
      for (const n of [-3, 0, 1, 2, 5, 9]) for (const inverse of [false, true]) calls.push([fn, [0.25, n], inverse])
    expect(mismatches(src, calls)).toEqual([])
  })

  it('finite-uncompute: a call in between that only reads keeps the values and the failed deallocations; one that writes (forwards or uncalled) still blocks', () => {
    const src = `fn acc(out: f64, x: f64, s: f64) {
  out += x * s
}
fn acc2(x: f64, s: f64) {
  x += s
}
fn big(out: f64, a: f64[], s: f64) {
  k: i32 <- 0
  while (k < 2, k != 0) {
    k += 1
    acc(out, a[k], s)
  }
  k -> 2
}
fn wr(a: f64[], s: f64) {
  k: i32 <- 0
  while (k < 1, k != 0) {
    k += 1
    acc2(a[1], s)
  }
  k -> 1
}
fn wrs(x: f64, s: f64) {
  k: i32 <- 0
  while (k < 1, k != 0) {
    k += 1
    acc2(x, s)
  }
  k -> 1
}
fn f1(y: f64, a: f64[], s: f64) {
  t <- 0.0
  t += sqrt(a[0]) * s
  big(y, a, s)
  y += t
  t -= sqrt(a[0]) * s
  t -> 0.0
}
fn f2(y: f64, a: f64[], s: f64) {
  t <- 0.0
  routine { t += s / a[0] }
  big(y, a, s)
  y += t
  ~routine
  t -> 0.0
}
fn f3(y: f64, a: f64[], s: f64) {
  t <- 0.0
  if (s > 0.0, ~) { t += log(s) } else { t += s * a[0] }
  big(y, a, s)
  y += t
  if (s > 0.0, ~) { t -= log(s) } else { t -= s * a[0] }
  t -> 0.0
}
fn f4(y: f64, a: f64[], s: f64) {
  t <- 0.0
  t += a[1] * s
  wr(a, s)
  y += t
  t -= a[1] * s
  t -> 0.0
}
fn f5(y: f64, a: f64[], s: f64) {
  t <- 0.0
  t += a[1] * s
  ~wr(a, s)
  y += t
  t -= a[1] * s
  t -> 0.0
}
fn f6(y: f64, a: f64[], s: f64) {
  t <- 0.0
  t += s * s
  wrs(s, a[0])
  y += t
  t -= s * s
  t -> 0.0
}
fn f7(y: f64, a: f64[], s: f64) {
  t <- 0.0
  t += s * s
  ~wrs(s, a[0])
  y += t
  t -= s * s
  t -> 0.0
}
fn f8(y: f64, a: f64[], b: f64[], s: f64) {
  t <- 0.0
  t += b[0] * s
  big(a[0], b, s)
  y += t
  t -= b[0] * s
  t -> 0.0
}`
    const calls: Array<[string, unknown[], boolean]> = []
    for (const fn of ['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7'])
      for (const a of [
        f64(1, 2, 3),
        f64(4, -1, 0.5),
        f64(-1, 2, 3),
        f64(0, 1, 1),
        f64(Number.NaN, 1, 1),
        f64(1e308, 1e308, 1e308),
        f64(1, 2),
      ])
        for (const s of [0.5, 0, -2, 1e-300])
          for (const inverse of [false, true]) calls.push([fn, [0.25, a, s], inverse])
    for (const b of [f64(1, 2, 3), f64(2, Number.NaN, 1), f64(1)])
      for (const inverse of [false, true]) calls.push(['f8', [0.25, f64(1, 2, 3), b, 0.5], inverse])
    expect(mismatches(src, calls)).toEqual([])
  })

  it('the Bessel map loop with the factorial hoisted on wasm: empty, odd and reversed loops, ν! past i32, NaN, forwards and inverse', () => {
    const src = `${besselSource}
fn b1(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i]) }
}
fn b2(out: f64[], nu: i32, z: f64[]) {
  for i in reverse 0..len(z) { ibesselj(out[i], nu, z[i]) }
}
fn b3(out: f64[], nu: i32, z: f64[], n: i32) {
  for i in 1..n { ibesselj(out[i], nu, z[i]) }
}`
    const calls: Array<[string, unknown[], boolean?]> = []
    for (const z of [[], [1], [1, 2], [0.5, 1.5, 2.5], [1, Number.NaN, 2], [1, 2, 3, 4, 5]])
      for (const nu of [0, 2, 13, -1]) {
        for (const fn of ['b1', 'b2'])
          for (const inverse of [false, true]) calls.push([fn, [new Float64Array(z.length), nu, f64(...z)], inverse])
        for (const n of [0, 2, 3, 4, -5]) calls.push(['b3', [new Float64Array(z.length), nu, f64(...z), n]])
      }
    expect(mismatches(src, calls)).toEqual([])
  })

  it('random exact callees (wrapping i32 arithmetic, div and % by zero, i32 min, while loops, branches, failing deallocations) inlined after the passes: the interpreter’s values and errors', () => {
    const calls: Array<[string, unknown[], boolean]> = []
    for (const fn of ['caller', 'top'])
      for (const [n, m] of [
        [3, 5],
        [0, 0],
        [1, -1],
        [3, I32_MAX],
        [I32_MIN, 3],
        [2, 0],
      ])
        for (const inverse of [false, true]) calls.push([fn, [0.25, n, m], inverse])
    const bad: string[] = []
    for (let seed = 1; seed <= 60; seed++) bad.push(...mismatches(gen(mulberry32(seed)), calls))
    expect(bad).toEqual([])
  })
})

/** A random exact callee \`g\` (calling the exact \`h\` in a while loop) and callers that call and uncall it. */
function gen(r: () => number): string {
  const pick = <T>(a: T[]): T => a[Math.floor(r() * a.length)]!
  const iexpr = (vars: string[], d = 0): string => {
    if (d > 1 || r() < 0.4) return r() < 0.3 ? String(pick([0, 1, -1, 2, 3, 7, 2147483647, -2147483648])) : pick(vars)
    const op = pick(['+', '-', '*', 'div', '%', '&', '|'])
    const a = iexpr(vars, d + 1),
      b = iexpr(vars, d + 1)
    if (op === 'div') return `div(${a}, ${b})`
    return `(${a} ${op} ${b})`
  }
  // h: exact leaf-ish helper (writes out)
  const h = `fn h(out: i32, a: i32, b: i32) {\n  out += ${iexpr(['a', 'b'])}\n  out ^= ${iexpr(['a', 'b'])}\n}`
  const body: string[] = []
  body.push('  t: i32 <- 0')
  const E = iexpr(['n', 'm'])
  const L = pick(['3', '2', '0'])
  body.push(`  t += ${E}`)
  body.push('  k: i32 <- 0')
  body.push(`  while (k < ${L}, k != 0) {\n    k += 1\n    h(out, k, ${pick(['m', 't', 'n'])})\n  }`)
  if (r() < 0.5)
    body.push(`  if (${iexpr(['n', 'm'])} > 0, ~) {\n    out -= ${iexpr(['n', 'm'])}\n  } else {\n    out += t\n  }`)
  body.push(`  k -> ${r() < 0.85 ? L : 'n'}`)
  body.push(`  t -= ${r() < 0.85 ? E : iexpr(['n', 'm'])}`)
  body.push(`  t -> ${pick(['0', 't'])}`.replace('t -> t', 't -> 0'))
  const g = `fn g(out: i32, n: i32, m: i32) {\n${body.join('\n')}\n}`
  const caller = `fn caller(y: f64, n: i32, m: i32) {
  c: i32 <- 0
  g(c, n, m)
  y += f64(c) * 0.5
  ~g(c, n, m)
  c -> 0
}
fn top(y: f64, n: i32, m: i32) {
  caller(y, n, m)
  d: i32 <- 0
  g(d, m, n)
  y += f64(d)
  ~g(d, m, n)
  d -> 0
}`
  return `${h}\n${g}\n${caller}`
}
