/**
 * Calls inside a program go to an internal copy of the callee that does not store the results
 * of the scalar parameters it never writes (no caller inside the program reads them); a host
 * caller still finds every result in `results`. Results bit for bit the interpreter's, checks
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

// `down` (recursive, so never inlined) writes the i32 `c`, which its caller then indexes with
const counting = `
fn down(c: i32, n: i32) {
  if (n > 0, n > 0) {
    c += 1
    m: i32 <- 0
    m += n - 1
    down(c, m)
    m -= n - 1
    m -> 0
  }
}
fn mark(x: f64[], c: i32, n: i32) {
  down(c, n)
  x[c] += 1.5
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
        const a = new Float64Array(8),
          b = new Float64Array(8)
        m.mark!.core(a, c, n)
        ref.mark!.core(b, c, n)
        expect(Array.from(a)).toEqual(Array.from(b))
        expect(a[c + n]).toBe(1.5)
        expect(m.mark!.core.results[1]).toBe(c + n)
        m.mark!.inverse.core(a, c + n, n)
        expect(Array.from(a)).toEqual(new Array(8).fill(0))
      }
    })
  }
})
