/**
 * Calls inside a program go to an internal copy of the callee that does not store the results
 * of the scalar parameters it never writes (no caller inside the program reads them); a host
 * caller still finds every result in `results`. A callee that writes one scalar returns it from
 * its internal copy. Results bit for bit the interpreter's, checks
 * on and off, forwards and backwards.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const compile = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'internal-calls' }), { registry, backend, checks })

function code(m: Record<string, unknown>, name: string): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, false)
}

// `term` reads x and n and writes y and t: a caller inside the program reads back y and t only.
// (The inliner takes leaf functions: imul first; term, a leaf once imul is inlined, only where a
// loop calls it, so series' calls of term outside loops stay calls.)
const source = `
fn imul(y: f64, x: f64, t: f64) {
  t += x * y
  y -= t / x
  SWAP(y, t)
}
fn term(y: f64, x: f64, n: i32, t: f64) {
  for k in 0..n { imul(y, x, t) }
}
fn series(out: f64[], x: f64[], n: i32) {
  a <- 1.0
  term(a, x[0], n, out[0])
  ~{ term(a, x[0], n, out[0]) }
  a -> 1.0
  b <- 1.0
  term(b, x[2], n, out[2])
  ~{ term(b, x[2], n, out[2]) }
  b -> 1.0
}`

describe('internal copies of called functions (cpu backend)', () => {
  for (const checks of [true, false]) {
    it(`calls inside the program skip the read-only results; the host still reads them (checks ${checks ? 'on' : 'off'})`, () => {
      const m = compile(source, 'cpu', checks)
      const ref = compile(source, 'interpreter', checks)
      // the exported copy stores every scalar's result, the internal one only those it writes
      const exported = code(m, 'term')
      expect(exported).toMatch(/RF1\[1\] = p1;/)
      expect(exported).toMatch(/RF1\[2\] = p2;/)
      const seriesCode = code(m, 'series')
      expect(seriesCode).toContain('FI1(')
      expect(seriesCode).toContain('BI1(')
      expect(seriesCode).not.toMatch(/\bF1\(/)
      // a host call of term: results of every scalar parameter, the interpreter's bit for bit
      const f = m.term!.core,
        g = ref.term!.core
      f(0.5, 1.3, 4, 0.25)
      g(0.5, 1.3, 4, 0.25)
      expect(Array.from(f.results)).toEqual(Array.from(g.results))
      expect(f.results[1]).toBe(1.3)
      expect(f.results[2]).toBe(4)
      // through the internal copies, forwards and backwards
      const x = Float64Array.from([0.7, 1.9, -0.4]),
        a = new Float64Array(3),
        b = new Float64Array(3)
      m.series!.core(a, x, 3)
      ref.series!.core(b, x, 3)
      expect(Array.from(a)).toEqual(Array.from(b))
      m.series!.inverse.core(a, x, 3)
      ref.series!.inverse.core(b, x, 3)
      expect(Array.from(a)).toEqual(Array.from(b))
    })
  }
})

// `down` (recursive, so never inlined) writes the i32s `c` and `e`, which its caller then indexes
// with. (Two written scalars keep the results array: a callee that writes one returns it instead.)
const counting = `
fn down(c: i32, e: i32, n: i32) {
  if (n > 0, n > 0) {
    c += 1
    e += 2
    m: i32 <- 0
    m += n - 1
    down(c, e, m)
    m -= n - 1
    m -> 0
  }
}
fn mark(x: f64[], c: i32, e: i32, n: i32) {
  down(c, e, n)
  x[c] += 1.5
  x[e] += 0.25
}`

describe('integer results of called functions (cpu backend)', () => {
  for (const checks of [true, false]) {
    it(`come back as small integers (| 0), the interpreter's values (checks ${checks ? 'on' : 'off'})`, () => {
      const m = compile(counting, 'cpu', checks)
      const ref = compile(counting, 'interpreter', checks)
      const markCode = code(m, 'mark')
      expect(markCode, markCode).toMatch(/= \(RF\d+\[0\] \| 0\);/)
      for (const [c, n] of [
        [0, 3],
        [1, 0],
        [2, 4],
      ] as const) {
        const a = new Float64Array(16),
          b = new Float64Array(16)
        m.mark!.core(a, c, 0, n)
        ref.mark!.core(b, c, 0, n)
        expect(Array.from(a)).toEqual(Array.from(b))
        expect(a[c + n]).toBe(1.5)
        expect(a[2 * n]).toBe(0.25)
        expect(m.mark!.core.results[1]).toBe(c + n)
        expect(m.mark!.core.results[2]).toBe(2 * n)
        m.mark!.inverse.core(a, c + n, 2 * n, n)
        expect(Array.from(a)).toEqual(new Array(16).fill(0))
      }
    })
  }
})

// `bump` writes one scalar (y) and reads the rest: its internal copy returns y. (Each function
// calls another, so that the inliner, which takes leaf functions, leaves the calls outside loops
// as calls.) Its callers pass a
// variable (assigned the returned value), an array element, a negated variable and an element of
// an array that the index reads (assigned after the call), forwards and backwards; `pair` writes
// two scalars and keeps the results array; `flip` writes one bool.
const single = `
fn inc(y: f64, d: f64) {
  y += d
}
fn bump(y: f64, x: f64, n: i32) {
  for k in 0..n { inc(y, x * f64(k + 1)) }
}
fn pair(y: f64, z: f64, x: f64) {
  inc(y, x)
  inc(z, x * 2.0)
}
fn setb(b: bool, y: f64) {
  b ^= y > 1.0
}
fn flip(b: bool, y: f64) {
  setb(b, y)
}
fn caller(out: f64[], idx: i32[], s: f64, n: i32, flag: bool) {
  a <- 0.5
  bump(a, s, n)
  bump(out[idx[0]], a, n)
  flip(flag, a)
  ~bump(a, s, n)
  a -> 0.5
  bump(-s, out[0], 2)
  pair(out[1], s, out[2])
}`

describe('an internal copy that writes one scalar returns it (cpu backend)', () => {
  for (const checks of [true, false]) {
    it(`v = FI(…) instead of a store and a load of its result; results bit for bit the interpreter's (checks ${checks ? 'on' : 'off'})`, () => {
      const m = compile(single, 'cpu', checks)
      const ref = compile(single, 'interpreter', checks)
      const callerCode = code(m, 'caller')
      // (before: `FI1(v0, p2, p3);` then `v0 = RF1[0];`)
      expect(callerCode).toMatch(/v\d+ = FI1\(v\d+, p2, p3\);/)
      expect(callerCode).toMatch(/const r\d+ = FI1\(p0\[/)
      expect(callerCode).toMatch(/const r\d+ = FI1\(\(-\(p2\)\)/)
      expect(callerCode).toMatch(/p4 = FI4\(p4, v\d+\);/)
      expect(callerCode).not.toMatch(/RF1\[0\]|RB1\[0\]|RF4\[0\]/)
      // two scalars written: through the results array, as before
      expect(callerCode).toMatch(/RF2\[0\]/)
      expect(code(m, 'bump')).toMatch(/RF1\[0\] = p0;/)
      for (const [s, n, flag] of [
        [0.75, 3, true],
        [-1.5, 0, false],
        [2.25, 5, false],
      ] as const) {
        const args = () => [Float64Array.from([0.1, -0.2, 0.3]), Int32Array.from([2]), s, n, flag] as const
        const [a, ia] = args(),
          [b, ib] = args()
        m.caller!.core(a, ia, s, n, flag)
        ref.caller!.core(b, ib, s, n, flag)
        expect(Array.from(a)).toEqual(Array.from(b))
        expect(Array.from(m.caller!.core.results)).toEqual(Array.from(ref.caller!.core.results))
        const [s1, flag1] = [m.caller!.core.results[2]!, m.caller!.core.results[4] !== 0]
        m.caller!.inverse.core(a, ia, s1, n, flag1)
        ref.caller!.inverse.core(b, ib, s1, n, flag1)
        expect(Array.from(a)).toEqual(Array.from(b))
        expect(Array.from(m.caller!.inverse.core.results)).toEqual(Array.from(ref.caller!.inverse.core.results))
        expect(m.caller!.inverse.core.results[2]).toBeCloseTo(s, 9)
        expect(m.caller!.inverse.core.results[4]).toBe(flag ? 1 : 0)
        a.forEach((v, i) => expect(v).toBeCloseTo([0.1, -0.2, 0.3][i]!, 9))
      }
      // a host call of bump still reads every result
      m.bump!.core(1, 2, 3)
      expect(Array.from(m.bump!.core.results)).toEqual([13, 2, 3])
    })
  }
})
