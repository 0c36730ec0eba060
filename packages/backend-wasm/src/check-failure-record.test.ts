/**
 * Failed run-time checks trap (the record in globals, `ProgramState.failure`), and
 * i32 → f64 by its bits with checks on. Each error is compared with the reference interpreter's.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from './index.js'

const registry = () =>
  createRegistry().registerBackend(wasmBackend).registerBackend(interpreterBackend).registerBackend(cpuBackend)
const compile = (text: string, backend: string, checks = true, hosts: unknown[] = []): TenetModule =>
  compileModule(parse({ text, name: 'cfr' }, hosts), { registry: registry(), backend, checks })

describe('the failure record and re-entry', () => {
  it('a host function in a failing check’s message value re-enters the module and fails there; the outer error keeps its own values', () => {
    // t holds x[0]; the dealloc's expected value calls the host, which (k = 1) runs the same
    // function on another array, catches its dealloc error and returns 1
    const text = 'fn d(x: f64[], k: i32) {\n  t <- 0.0\n  t += x[0]\n  t -> ${0}(k)\n}'
    const run = (backend: string) => {
      let m: TenetModule
      m = compile(text, backend, true, [
        (k: number) => {
          if (k === 1) {
            try {
              m.d!(Float64Array.of(99), 0)
            } catch {
              // (its own error, dropped)
            }
          }
          return 1
        },
      ])
      return [raisedError(() => m.d!(Float64Array.of(5), 1)), raisedError(() => m.d!(Float64Array.of(1), 0))]
    }
    const want = run('interpreter')
    expect(want[0]).toContain('holds 5')
    expect(run('cpu')).toEqual(want)
    expect(run('wasm')).toEqual(want)
  })
})

/** The outcome of a call: its results or its error (code | message | line:column). */
function outcome(m: TenetModule, name: string, args: unknown[], inverse = false): string {
  const f = inverse ? (m[name] as unknown as { inverse: (...a: unknown[]) => unknown }).inverse : m[name]!
  let out = ''
  const err = raisedError(() => {
    const r = f(...args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a)))
    out = JSON.stringify(r, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))
  })
  return err === 'no error' ? out : err
}

const I32_MIN = -(2 ** 31),
  I32_MAX = 2 ** 31 - 1

const sweep = `
fn seven(out: i32, k: i32) {
  j: i32 <- 0
  j += k
  out += j
  j -> 7
}
fn flt(out: f64, x: f64) {
  t <- 0.0
  t += x
  out += t
  t -> 0.5
}
fn f32d(out: f32, x: f32) {
  t: f32 <- 0.0
  t += x
  out += t
  t -> 0.5
}
fn bl(out: i32, b: bool) {
  c: bool <- false
  c ^= b
  if (c) { out += 1 }
  c -> true
}
fn rng(y: f64, a: i32, b: i32, s: i32, d: i32) {
  for i in a..b by s { b += d }
}
fn rng2(y: f64, a: i32, b: i32, s: i32, d: i32) {
  for i in a..b by s { a += d }
}
fn zstep(y: f64, s: i32) { for i in 0..3 by s { y += 1.0 } }
fn pif(x: f64, c: f64) { if (x > 0.0, ~) { x -= c } }
fn pif2(x: f64, c: f64, post: bool) { if (x > 0.0, post) { x -= c } }
fn pw(x: i32, n: i32, p: i32) { while (x < n, x > p) { x += 1 } }
fn fac(y: f64, x: f64) { y *= x }
fn ali(x: f64[], i: i32, j: i32) { x[i] += x[j] }
fn oob(y: f64, x: f64[], i: i32) { y += x[i] }
fn oobk(y: f64, x: f64[], i: i32, k: i32) { y += x[i + k] }
fn arr(y: f64, n: i32) {
  t: f64[] <- zeros(n)
  t[0] += y
  t -> zeros(n)
}
fn arr32(y: f64, n: i32) {
  t: i32[] <- zeros(n)
  t[n - 1] += 3
  t -> zeros(n)
}
fn callee(out: i32, x: f64[], k: i32) {
  for r in 0..len(x) { seven(out, k + r) }
}
fn unc(out: i32, k: i32) {
  ~seven(out, k)
}
fn nested(out: i32, x: f64[], k: i32) {
  for r in 0..2 { callee(out, x, k) }
  ~{ for r in 0..1 { unc(out, k) } }
}
`

const sweepCalls: Array<[string, unknown[], boolean?]> = [
  ['seven', [0, 7]],
  ['seven', [0, I32_MIN]],
  ['seven', [0, I32_MAX]],
  ['seven', [5, -1]],
  ['seven', [0, 7], true],
  ['seven', [0, 0], true],
  ['seven', [I32_MIN, 3], true],
  ['flt', [0, 0.5]],
  ['flt', [0, -0]],
  ['flt', [0, Number.NaN]],
  ['flt', [0, Number.POSITIVE_INFINITY]],
  ['flt', [0, 0.5 + 1e-12]],
  ['flt', [0, 0.5 + 1e-3]],
  ['flt', [1, 2], true],
  ['f32d', [0, 0.5]],
  ['f32d', [0, 0.1]],
  ['f32d', [0, -0]],
  ['bl', [0, true]],
  ['bl', [0, false]],
  ['rng', [0, 0, 3, 1, 1]],
  ['rng', [0, 0, 3, 1, 0]],
  ['rng', [0, I32_MIN, I32_MIN + 2, 1, 0]],
  ['rng', [0, I32_MAX - 2, I32_MAX, 1, -1]],
  ['rng', [0, I32_MAX - 2, I32_MAX, 1, 1]],
  ['rng', [0, 5, -5, -3, -1]],
  ['rng', [0, 0, 0, 1, 1]],
  ['rng2', [0, 0, 4, 2, 1]],
  ['rng2', [0, I32_MIN, I32_MIN + 1, 1, -1]],
  ['zstep', [0, 0]],
  ['zstep', [0, 1]],
  ['pif', [1, 5]],
  ['pif', [1, 0.5]],
  ['pif', [-1, 5]],
  ['pif2', [1, 5, true]],
  ['pif2', [1, 5, false]],
  ['pif2', [-1, 5, true]],
  ['pw', [1, 3, 0]],
  ['pw', [0, 3, 5]],
  ['pw', [0, 3, 1]],
  ['pw', [I32_MIN, I32_MIN + 3, I32_MIN]],
  ['fac', [1, 0]],
  ['fac', [1, -0]],
  ['fac', [1, Number.NaN]],
  ['fac', [1, Number.NEGATIVE_INFINITY]],
  ['fac', [1, 2]],
  ['fac', [1, 0], true],
  ['ali', [Float64Array.of(1, 2), 1, 1]],
  ['ali', [Float64Array.of(1, 2), 0, 1]],
  ['ali', [Float64Array.of(1, 2), 1, 1], true],
  ['oob', [0, Float64Array.of(1, 2), 2]],
  ['oob', [0, Float64Array.of(1, 2), -1]],
  ['oob', [0, Float64Array.of(1, 2), I32_MIN]],
  ['oob', [0, Float64Array.of(1, 2), I32_MAX]],
  ['oobk', [0, Float64Array.of(1, 2), I32_MAX, 1]],
  ['oobk', [0, Float64Array.of(1, 2), I32_MIN, -1]],
  ['arr', [1, 2]],
  ['arr', [1, -1]],
  ['arr', [1, I32_MIN]],
  ['arr', [1, 0]],
  ['arr32', [1, 2]],
  ['arr32', [1, 0]],
  ['callee', [0, Float64Array.of(1, 2, 3), 7]],
  ['callee', [0, Float64Array.of(1, 2, 3), 6]],
  ['callee', [0, Float64Array.of(1, 2, 3), 5]],
  ['unc', [0, 7]],
  ['unc', [0, 3]],
  ['unc', [0, 3], true],
  ['nested', [0, Float64Array.of(1), 7]],
  ['nested', [0, Float64Array.of(1), 6]],
  ['nested', [0, Float64Array.of(1), 7], true],
  ['nested', [0, Float64Array.of(1), 8], true],
]

describe('every kind of check fails as the interpreter’s, wasm with checks', () => {
  it('in a sweep of checks, values at the i32 extremes, callees, uncalls and inverses, twice over', () => {
    const reference = compile(sweep, 'interpreter')
    const wasm = compile(sweep, 'wasm')
    const expected = sweepCalls.map(([n, a, inv]) => outcome(reference, n, a, inv))
    const got = sweepCalls.map(([n, a, inv]) => outcome(wasm, n, a, inv))
    const got2 = sweepCalls.map(([n, a, inv]) => outcome(wasm, n, a, inv))
    const diff = sweepCalls.flatMap(([n, a, inv], i) =>
      got[i] === expected[i] && got2[i] === expected[i]
        ? []
        : [`${inv ? '~' : ''}${n}(${a.map(String)}): want ${expected[i]} got ${got[i]} / ${got2[i]}`],
    )
    expect(diff).toEqual([])
  })
})

describe('i32 → f64 with checks on (the bits of 1.5·2⁵² + k)', () => {
  const conv = `
fn sums(out: f64[], a: i32, b: i32) {
  out[0] += f64(a + b)
  out[1] += f64(a - b)
  out[2] += f64(a * b)
  out[3] += f64(a) * f64(b)
  out[4] += f64(a) - f64(b)
  out[5] += f64(-a)
  out[6] += f64(a / 3)
  out[7] += f64(b) / 7.0
}
fn loops(out: f64[], a: i32, b: i32, s: i32) {
  for i in a..b by s { out[0] += f64(i) * 0.5
    out[1] -= f64(i - a) }
}
fn back(out: f64[], a: i32, b: i32) {
  for i in a..b { out[0] += f64(i) }
  ~{ for i in a..b { out[1] += f64(i) * 0.25 } }
}
fn ints(out: f64[], v: i32[]) {
  for i in 0..len(v) { out[0] += f64(v[i]) * f64(i + 1) }
}
fn mix(y: f64, k: i32) {
  t <- 0.0
  t += f64(k)
  y += t * t
  t -= f64(k)
  t -> 0.0
}
`
  const pick = [
    -(2 ** 31),
    -(2 ** 31) + 1,
    -(2 ** 30) - 1,
    -65537,
    -3,
    -1,
    0,
    1,
    2,
    3,
    65535,
    2 ** 30,
    2 ** 31 - 2,
    2 ** 31 - 1,
  ]
  it('gives the bits of the interpreter and of the unchecked code, extremes and wrapping sums included', () => {
    const ref = compile(conv, 'interpreter', true)
    const on = compile(conv, 'wasm', true)
    const off = compile(conv, 'wasm', false)
    const bits = (m: TenetModule, name: string, args: unknown[]) => {
      try {
        const r = m[name]!(...args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a))) as unknown[]
        return JSON.stringify(r, (_, v) =>
          ArrayBuffer.isView(v)
            ? Array.from(v as Float64Array, (x) => (Object.is(x, -0) ? '-0' : String(x)))
            : Object.is(v, -0)
              ? '-0'
              : v,
        )
      } catch (e) {
        return raisedError(() => {
          throw e
        })
      }
    }
    const diffs: string[] = []
    const cmp = (name: string, args: unknown[]) => {
      const a = bits(ref, name, args),
        b = bits(on, name, args),
        c = bits(off, name, args)
      if (a !== b || b !== c) diffs.push(`${name}(${args.map(String)}): ref ${a} on ${b} off ${c}`)
    }
    for (const a of pick) for (const b of pick) cmp('sums', [new Float64Array(8), a, b])
    for (const a of pick) cmp('mix', [0, a])
    cmp('ints', [new Float64Array(1), Int32Array.from(pick)])
    for (const [a, b, s] of [
      [2 ** 31 - 5, 2 ** 31 - 1, 1],
      [-(2 ** 31), -(2 ** 31) + 4, 1],
      [-(2 ** 31) + 3, -(2 ** 31), -1],
      [2 ** 31 - 1, 2 ** 31 - 7, -2],
      [-(2 ** 31), 2 ** 31 - 1, 2 ** 30],
      [2 ** 31 - 1, -(2 ** 31), -(2 ** 30)],
      [0, 0, 1],
      [5, 6, 1],
    ])
      cmp('loops', [new Float64Array(2), a, b, s])
    for (const [a, b] of [
      [2 ** 31 - 3, 2 ** 31 - 1],
      [-(2 ** 31), -(2 ** 31) + 3],
      [-2, 2],
    ])
      cmp('back', [new Float64Array(2), a, b])
    expect(diffs).toEqual([])
  })
})

describe('failures inside the checked lane pairs of a map of series (pair-series)', () => {
  it('fails as the interpreter does, whichever lane fails first, and runs again', async () => {
    const { bessel, compile: compileLanes, lastCheckedSeries } = await import('./test-util.js')
    void lastCheckedSeries
    const ref = compile(bessel, 'interpreter', true)
    const wasm = compileLanes(bessel, 'wasm', true)
    const t = await import('./test-util.js')
    expect(t.lastCheckedSeries).toBeGreaterThan(0)
    const zsets = [
      Float64Array.of(0.5, 1.5, 2.5),
      Float64Array.of(0, 1.5),
      Float64Array.of(1.5, 0),
      Float64Array.of(1.5, 2.5, Number.NaN, 0.5),
      Float64Array.of(1.5, Number.POSITIVE_INFINITY),
      Float64Array.of(-0, 3),
      Float64Array.of(40, 1),
      Float64Array.of(1, 2, 3, 4, 5),
    ]
    const diffs: string[] = []
    for (const nu of [0, 1, 2, 12, 13, 20, -1, -(2 ** 31)])
      for (const z of zsets)
        for (const inverse of [false, true]) {
          const args = [new Float64Array(z.length), nu, z]
          const a = outcome(ref, 'f', args, inverse),
            b = outcome(wasm as unknown as TenetModule, 'f', args, inverse)
          if (a !== b) diffs.push(`${inverse ? '~' : ''}f(nu ${nu}, z ${Array.from(z)}): ref ${a} | wasm ${b}`)
        }
    expect(diffs).toEqual([])
  })
})

describe('the checks that run without checks (allocation, zero step) trap and fail as before', () => {
  it('as the interpreter (checks off), then run again', () => {
    const text = `
fn arr(y: f64, n: i32, x: f64[]) {
  t: f64[] <- zeros(n)
  for i in 0..len(x) { t[i] += x[i] * x[i] }
  for i in 0..len(x) { y += sin(t[len(x) - 1 - i]) * x[i] }
  for i in 0..len(x) { t[i] -= x[i] * x[i] }
  t -> zeros(n)
}
fn arrin(y: f64, n: i32, x: f64[]) {
  for i in 0..len(x) { arr(y, n + i, x) }
}
fn zstep(y: f64, s: i32) { for i in 0..3 by s { y += 1.0 } }
`
    const ref = compile(text, 'interpreter', false)
    const w = compile(text, 'wasm', false)
    const calls: Array<[string, unknown[]]> = [
      ['arr', [1, 2, Float64Array.of(1, 2)]],
      ['arr', [1, -1, Float64Array.of(1, 2)]],
      ['arr', [1, 3, Float64Array.of(1, 2)]],
      ['arr', [1, -(2 ** 31), Float64Array.of(1, 2)]],
      ['arrin', [1, 0, Float64Array.of(1, 2, 3)]],
      ['arrin', [1, 3, Float64Array.of(1, 2, 3)]],
      ['zstep', [0, 0]],
      ['zstep', [0, 2]],
    ]
    const want = calls.map(([n, a]) => outcome(ref, n, a))
    for (let round = 0; round < 2; round++) expect(calls.map(([n, a]) => outcome(w, n, a))).toEqual(want)
    // too large for the wasm memory: its own message, then the module runs again
    expect(outcome(w, 'arr', [1, 2 ** 31 - 1, Float64Array.of(1, 2)])).toMatch(
      /^runtime\/out-of-memory \| cannot allocate `t` \(zeros\(2147483647\)\)/,
    )
    expect(outcome(w, 'arr', [1, 2, Float64Array.of(1, 2)])).toBe(want[0])
  })
})

describe('re-entry with failures', () => {
  it('re-entry matrix: a host function re-enters this module or a second instance, the inner call fails (caught or not), the host throws its own error; outer errors and results as the interpreter’s', () => {
    const text = `
  fn g(x: f64[], k: i32, mode: i32) {
    t <- 0.0
    t += x[0]
    @safe ${'$'}{0}(k, mode)
    x[1] += t * 2.0
    for i in 0..len(x) by k { x[i] += 1.0 }
    t -> 1.0
  }
  fn big(x: f64[], n: i32) {
    a: f64[] <- zeros(n)
    a[n - 1] += x[0]
    x[1] += a[n - 1]
    a[n - 1] -= x[0]
    a -> zeros(n)
  }
  `
    const log: string[] = []
    const run = (backend: string) => {
      let m: TenetModule
      let other: TenetModule
      const host = (_k: number, mode: number) => {
        const inner = (mm: TenetModule, arr: Float64Array, kk: number) => {
          try {
            mm.g!(arr, kk, 0)
          } catch (e) {
            log.push(
              raisedError(() => {
                throw e
              }),
            )
            if (mode >= 10) throw e
          }
        }
        if (mode === 1 || mode === 11) inner(m, Float64Array.of(7, 0), 1)
        if (mode === 2 || mode === 12) inner(other, Float64Array.of(8, 0), 1)
        if (mode === 3) inner(m, Float64Array.of(1, 0), 0)
        if (mode === 4) {
          try {
            m.big!(Float64Array.of(1, 2), -3)
          } catch (e) {
            log.push(
              raisedError(() => {
                throw e
              }),
            )
          }
        }
        if (mode === 5) {
          try {
            m.big!(Float64Array.of(1, 2), 1 << 20)
          } catch (e) {
            log.push(String(e))
          }
        }
        if (mode === 6) {
          inner(m, Float64Array.of(7, 0), 1)
          throw new Error('host own error')
        }
        if (mode === 7) {
          try {
            m.g!(Float64Array.of(1, 0), 5, 0)
          } catch (e) {
            log.push(String(e))
          }
        }
      }
      m = compile(text, backend, true, [host])
      other = compile(text, backend, true, [host])
      const out: string[] = []
      for (const [x0, k, mode] of [
        [1, 1, 1],
        [3, 1, 1],
        [1, 1, 2],
        [3, 1, 2],
        [1, 1, 11],
        [1, 1, 12],
        [1, 0, 3],
        [2, 1, 3],
        [1, 1, 4],
        [1, 1, 5],
        [1, 1, 6],
        [1, 1, 7],
        [1, 1, 0],
        [1, 2, 0],
        [5, 1, 0],
      ]) {
        let res = ''
        const e = raisedError(() => {
          const x = Float64Array.of(x0!, 0, 0)
          const r = m.g!(x, k, mode) as unknown[]
          res = JSON.stringify(Array.from(r[0] as Float64Array))
        })
        out.push(`${x0} ${k} ${mode}: ${e === 'no error' ? res : e} | log ${log.splice(0).join(' ; ')}`)
      }
      return out
    }
    const want = run('interpreter')
    expect(run('cpu')).toEqual(want)
    expect(run('wasm')).toEqual(want)
  })
})
