/**
 * Pass `jam-iterations` (checks off) against the reference interpreter: its guards (ancilla
 * lengths, loops at the ends of the i32 range, `.core` aliases, ranges a call in the body writes).
 * From review 17g.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, optimisedIr, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const backends = {
  refU: referenceBackend({ checks: false }),
  cpuU: backendUnderTest(cpuBackend, { checks: false }),
  wasmU: backendUnderTest(wasmBackend, { checks: false }),
}
type Key = keyof typeof backends

const show = (x: unknown) =>
  ArrayBuffer.isView(x)
    ? `[${Array.from(x as Float64Array)
        .map((v) => (Object.is(v, -0) ? '-0' : String(v)))
        .join(',')}]`
    : String(x)

function runAll(src: string, args: () => unknown[], name: string, core: boolean, inverse = false): Record<Key, string> {
  const out = {} as Record<Key, string>
  for (const [k, b] of Object.entries(backends) as Array<[Key, (typeof backends)['refU']]>) {
    const a = args()
    let res: unknown = ''
    let err: string
    try {
      err = raisedError(() => {
        const fn = b.compile(src)[name]!
        const g = inverse ? fn.inverse : fn
        res = core ? g.core(...a) : g(...a)
      })
    } catch (e) {
      err = `compile: ${String(e)}`
    }
    const r = Array.isArray(res) ? res.map(show).join(' ') : show(res)
    out[k] = `${err} || ${r} || ${a
      .filter((x) => ArrayBuffer.isView(x))
      .map(show)
      .join(' ')}`
  }
  return out
}

const applies = (src: string, entry = 'f') => optimisedIr(cpuBackend, src, { checks: false, entry }).includes('$b')
const xs = (n: number, at = 0.1) => Float64Array.from({ length: n }, (_, i) => at + 0.3 * i)

describe('jam-iterations guards', () => {
  it('wasm, an ancilla allocated under an if that does not run: the guard reads its length ns[0] out of range (a false out-of-bounds error)', () => {
    const src = `fn f(loss: f64, ns: i32[], c: f64[], xs: f64[], out: f64[]) {
  for j in 0..len(xs) {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    }
    out[j] += acc[len(c) - 1]
    if (len(ns) > 0, len(ns) > 0) {
      t: f64[] <- zeros(ns[0])
      t[0] += xs[j]
      out[j] += t[0] * t[0]
      t[0] -= xs[j]
      t -> zeros(ns[0])
    }
    ~routine
  }
}`
    // (found by review 17g: the guard capped every ancilla's length before the loop, so it read
    // ns[0] of an empty ns; a length under an if that reads an element now keeps the loop as written)
    expect(applies(src)).toBe(false)
    const r = runAll(src, () => [0.25, new Int32Array(0), xs(3, 0.5), xs(9), xs(9, 2)], 'f', false)
    expect(r.cpuU).toBe(r.refU)
    expect(r.wasmU).toBe(r.refU)
    // a length that reads no element is capped in the guard, and the loop is jammed
    const byLen = src.replaceAll('zeros(ns[0])', 'zeros(len(ns))')
    if (!process.env.TENET_DISABLE_PASSES) expect(applies(byLen)).toBe(true)
    for (const ns of [new Int32Array(0), new Int32Array(3)]) {
      const q = runAll(byLen, () => [0.25, ns, xs(3, 0.5), xs(9), xs(9, 2)], 'f', false)
      expect(q.cpuU).toBe(q.refU)
      expect(q.wasmU).toBe(q.refU)
    }
  })
  it('every loop form with its first or last value at -2^31 or 2^31 - 1, 0-11 trips', () => {
    const heads = [
      'for j in a..b',
      'for j in a..=b',
      'for j in b..=a by -1',
      'for j in b..a by -1',
      'for j in reverse a..b',
      'for j in reverse a..=b',
      'for j in reverse b..=a by -1',
      'for j in reverse b..a by -1',
    ]
    const bad: string[] = []
    for (const head of heads) {
      const src = `fn f(loss: f64, a: i32, b: i32, g: f64[], c: f64[], xs: f64[], out: f64[]) {
  ${head} {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j - a]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j - a] + c[k] }
    }
    for k in 1..len(c) { g[k] += acc[k] * xs[j - a] }
    out[j - a] += acc[len(c) - 1]
    g[0] -= acc[0]
    loss += acc[len(c) - 1] * out[j - a]
    ~routine
  }
}`
      expect(applies(src), head).toBe(true)
      const M = 2147483647,
        m = -2147483648
      for (let n = 0; n <= 11; n++)
        for (const [a, b] of [
          [m, m + n],
          [M - n, M],
          [M - n - 1, M - 1],
          [m + 1, m + 1 + n],
          [M - n, m + n],
          [n, m],
          [M, n - 5],
        ] as Array<[number, number]>)
          for (const inverse of [false, true]) {
            const r = runAll(
              src,
              () => [0.25, a, b, xs(3, -0.5), xs(3, 0.5), xs(13, -1), xs(13, 2)],
              'f',
              false,
              inverse,
            )
            if (r.wasmU !== r.refU) bad.push(`wasm ${head} ${a} ${b} ${inverse}: ${r.wasmU} instead of ${r.refU}`)
            if (r.cpuU !== r.refU) bad.push(`cpu ${head} ${a} ${b} ${inverse}: ${r.cpuU} instead of ${r.refU}`)
          }
    }
    expect(bad).toEqual([])
  })
  it('ancilla lengths 0, 1, 2^16, 2^16 + 1 (a dead ancilla); ranges read through an aliased view (.core)', () => {
    const src = `fn f(loss: f64, n: i32, ns: i32[], c: f64[], xs: f64[], out: f64[]) {
  for j in 0..ns[0] {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    }
    t: f64[] <- zeros(n)
    out[j] += acc[len(c) - 1]
    t -> zeros(n)
    ~routine
  }
}`
    if (!process.env.TENET_DISABLE_PASSES) expect(applies(src)).toBe(true)
    const bad: string[] = []
    for (const n of [0, 1, 65536, 65537])
      for (const trips of [0, 3, 4, 9])
        for (const inverse of [false, true]) {
          const r = runAll(src, () => [0.25, n, Int32Array.of(trips), xs(3, 0.5), xs(9), xs(9, 2)], 'f', false, inverse)
          if (r.wasmU !== r.refU) bad.push(`wasm ${n} ${trips} ${inverse}: ${r.wasmU} instead of ${r.refU}`)
          if (r.cpuU !== r.refU) bad.push(`cpu ${n} ${trips} ${inverse}: ${r.cpuU} instead of ${r.refU}`)
        }
    // ns a view of out's memory (.core): the body writes out[j], which the range reads
    for (const inverse of [false, true]) {
      const r = runAll(
        src,
        () => {
          const buf = new ArrayBuffer(72)
          const out = new Float64Array(buf)
          out[0] = 3
          const ns = new Int32Array(buf, 0, 1)
          ns[0] = 6
          return [0.25, 1, ns, xs(3, 0.5), xs(9), out]
        },
        'f',
        true,
        inverse,
      )
      if (r.wasmU !== r.refU) bad.push(`core wasm ${inverse}: ${r.wasmU} instead of ${r.refU}`)
      if (r.cpuU !== r.refU) bad.push(`core cpu ${inverse}: ${r.cpuU} instead of ${r.refU}`)
    }
    expect(bad).toEqual([])
  })
  it('a live ancilla of negative length: the first allocation fails as in the loop as written', () => {
    const src = `fn f(loss: f64, c: f64[], xs: f64[], out: f64[]) {
  for j in 0..len(xs) {
    routine {
      acc: f64[] <- zeros(len(c) - 2)
      acc[0] += xs[j]
      for k in 1..len(c) - 2 { acc[k] += acc[k - 1] * xs[j] + c[k] }
    }
    out[j] += acc[len(c) - 3]
    ~routine
  }
}`
    if (!process.env.TENET_DISABLE_PASSES) expect(applies(src)).toBe(true)
    const bad: string[] = []
    for (const nc of [0, 1, 3, 5])
      for (const n of [0, 4, 7])
        for (const inverse of [false, true]) {
          const r = runAll(src, () => [0.25, xs(nc, 0.5), xs(n), xs(n, 2)], 'f', false, inverse)
          // (nc = 2 would read acc[-1]: out of range, not compared)
          if (r.wasmU !== r.refU) bad.push(`wasm ${nc} ${n} ${inverse}: ${r.wasmU} instead of ${r.refU}`)
          if (r.cpuU !== r.refU) bad.push(`cpu ${nc} ${n} ${inverse}: ${r.cpuU} instead of ${r.refU}`)
        }
    expect(bad).toEqual([])
  })
  it('.core with overlapping views (offset, other element type) of a written array and an array read only in the fused loop, or in a range', () => {
    const src = `fn f(loss: f64, c: f64[], d: f64[], xs: f64[], g: f64[], out: f64[]) {
  for j in 0..len(xs) {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] * d[k - 1] }
    }
    for k in 1..len(c) { g[k] += acc[k] * d[k] }
    out[j] += acc[len(c) - 1]
    g[0] -= acc[0]
    ~routine
  }
}`
    if (!process.env.TENET_DISABLE_PASSES) expect(applies(src)).toBe(true)
    const bad: string[] = []
    type Views = (buf: ArrayBuffer) => {
      c: Float64Array
      d: Float64Array
      xs: Float64Array
      g: Float64Array
      out: Float64Array
    }
    const layouts: Record<string, Views> = {
      'c inside out': (b) => ({
        c: new Float64Array(b, 16, 4),
        d: xs(4, -0.25),
        xs: xs(9),
        g: xs(5, 2),
        out: new Float64Array(b, 0, 9),
      }),
      'd inside g': (b) => ({
        c: xs(4, 0.5),
        d: new Float64Array(b, 8, 4),
        xs: xs(9),
        g: new Float64Array(b, 0, 5),
        out: xs(9, 2),
      }),
      'xs offset out': (b) => ({
        c: xs(4, 0.5),
        d: xs(4, -0.25),
        xs: new Float64Array(b, 8, 9),
        g: xs(5, 2),
        out: new Float64Array(b, 0, 9),
      }),
      'g inside out': (b) => ({
        c: xs(4, 0.5),
        d: xs(4, -0.25),
        xs: xs(9),
        g: new Float64Array(b, 24, 5),
        out: new Float64Array(b, 0, 9),
      }),
      'same: c is out': (b) => {
        const o = new Float64Array(b, 0, 9)
        return { c: o, d: xs(9, -0.25), xs: xs(9), g: xs(10, 2), out: o }
      },
      'same: d is g': (b) => {
        const o = new Float64Array(b, 0, 5)
        return { c: xs(4, 0.5), d: o, xs: xs(9), g: o, out: xs(9, 2) }
      },
      'same: xs is out': (b) => {
        const o = new Float64Array(b, 0, 9)
        return { c: xs(4, 0.5), d: xs(4, -0.25), xs: o, g: xs(5, 2), out: o }
      },
      'same: g is c': (b) => {
        const o = new Float64Array(b, 0, 5)
        return { c: o, d: xs(5, -0.25), xs: xs(9), g: o, out: xs(9, 2) }
      },
    }
    for (const [name, make] of Object.entries(layouts))
      for (const inverse of [false, true]) {
        const r = runAll(
          src,
          () => {
            const buf = new ArrayBuffer(80)
            const all = new Float64Array(buf)
            for (let i = 0; i < all.length; i++) all[i] = 0.7 - 0.11 * i
            const v = make(buf)
            return [0.25, v.c, v.d, v.xs, v.g, v.out]
          },
          'f',
          true,
          inverse,
        )
        // (wasm copies two different overlapping views into separate regions, with or without the pass: only one array passed twice is compared)
        if (name.startsWith('same') && r.wasmU !== r.refU)
          bad.push(`wasm ${name} ${inverse}: ${r.wasmU} instead of ${r.refU}`)
        if (r.cpuU !== r.refU) bad.push(`cpu ${name} ${inverse}: ${r.cpuU} instead of ${r.refU}`)
      }
    expect(bad).toEqual([])
  })
  it('a body with a small array ancilla, an if, a non-fused inner loop and @unchecked, every loop form, forwards and inverse', () => {
    const bad: string[] = []
    for (const head of [
      'for j in 0..len(xs)',
      'for j in len(xs) - 1..=0 by -1',
      'for j in reverse 0..len(xs)',
      'for j in reverse len(xs) - 1..=0 by -1',
    ]) {
      const src = `fn f(loss: f64, c: f64[], xs: f64[], out: f64[], w: f64[]) {
  ${head} {
    routine {
      acc: f64[] <- zeros(len(c))
      p: f64[] <- zeros(2)
      s: f64 <- 0.0
      p[0] += xs[j]
      p[1] += xs[j] * xs[j]
      acc[0] += p[0]
      for k in 1..len(c) { acc[k] += acc[k - 1] * p[0] + c[k] * p[1] }
      for q in 0..len(w) { s += w[q] * p[1] }
    }
    if (acc[len(c) - 1] > 0.0, ~) { out[j] += acc[len(c) - 1] * s } else { out[j] -= acc[len(c) - 1] }
    @unchecked { loss += out[j] }
    ~routine
  }
}`
      if (!process.env.TENET_DISABLE_PASSES) expect(applies(src), head).toBe(true)
      for (const n of [0, 1, 3, 4, 5, 8, 11])
        for (const inverse of [false, true]) {
          const r = runAll(
            src,
            () => {
              const x = xs(n, -1.3)
              if (n > 2) x[2] = -0
              if (n > 5) x[5] = Number.NaN
              return [0.25, xs(3, -0.5), x, xs(11, 2), xs(2, -0.7)]
            },
            'f',
            false,
            inverse,
          )
          if (r.wasmU !== r.refU) bad.push(`wasm ${head} ${n} ${inverse}: ${r.wasmU} instead of ${r.refU}`)
          if (r.cpuU !== r.refU) bad.push(`cpu ${head} ${n} ${inverse}: ${r.cpuU} instead of ${r.refU}`)
        }
    }
    expect(bad).toEqual([])
  })
  it('ranges reading a scalar or an element that a call in the body writes', () => {
    const bad: string[] = []
    const bodies = [
      ['fn g(m: i32, t: i32) { m += t }', 'for j in 0..m', 'g(m, 0)'],
      ['fn g(m: i32, t: i32) { m += t }', 'for j in 0..m', 'g(m, 1)'],
      ['fn g(m: i32, t: i32) { m -= t }', 'for j in m - 1..=0 by -1', 'g(m, 1)'],
      ['fn g(ns: i32[], t: i32) { ns[0] += t }', 'for j in 0..ns[0]', 'g(ns, 1)'],
      ['fn g(ns: i32[], t: i32) { ns[1] += t }', 'for j in ns[1]..ns[0]', 'g(ns, 1)'],
    ]
    for (const [callee, head, call] of bodies) {
      const src = `${callee}
fn f(loss: f64, m: i32, ns: i32[], c: f64[], xs: f64[], out: f64[]) {
  ${head} {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    }
    out[j] += acc[len(c) - 1]
    ${call}
    ~routine
  }
}`
      for (const inverse of [false, true]) {
        const r = runAll(src, () => [0.25, 6, Int32Array.of(6, 0), xs(3, 0.5), xs(13), xs(13, 2)], 'f', false, inverse)
        if (r.wasmU !== r.refU) bad.push(`wasm ${head} ${call} ${inverse}: ${r.wasmU} instead of ${r.refU}`)
        if (r.cpuU !== r.refU) bad.push(`cpu ${head} ${call} ${inverse}: ${r.cpuU} instead of ${r.refU}`)
      }
    }
    expect(bad).toEqual([])
  })
})
