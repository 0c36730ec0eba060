/**
 * The precise f32 math routines on the device, against the cpu backend's reference
 * `Math.fround(Math.f(x))`: at most one ulp (adjacent f32 values) on random inputs over each
 * function's whole f32 domain, the hard cases (arguments next to multiples of π/2, log near 1,
 * asin/acos near ±1, exp near overflow and underflow), subnormals and the special values.
 * `TENET_MATH_N` sets the random inputs per function (default 2^15; the README's figures come
 * from a run with 2^20).
 */
import { describe, expect, it } from 'vitest'
import { gpuMap } from './index.js'
import { twoOverPiWords } from './precise-math.js'
import { cpu, testGpu } from './test-util.js'

const gpu = await testGpu()
const N = Number(process.env.TENET_MATH_N ?? 2 ** 15)

/** Distance between two f32 values in representable steps (0: same value; ±0 are equal; NaN only matches NaN). */
function ulpDistance(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity
  const x = new Int32Array(new Float32Array([a, b]).buffer)
  const ord = (v: number) => (v < 0 ? -2147483648 - v : v)
  return Math.abs(ord(x[0]!) - ord(x[1]!))
}

/** A seeded generator of 32-bit words. */
function words(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13; s >>>= 0
    s ^= s >>> 17
    s ^= s << 5; s >>>= 0
    return s
  }
}

/** f32 values with random sign (when `signed`), biased exponent uniform in [e0, e1] (0: subnormal), random significand. */
function logUniform(n: number, seed: number, e0: number, e1: number, signed = true): number[] {
  const w = words(seed)
  const f = new Float32Array(1), u = new Uint32Array(f.buffer)
  return Array.from({ length: n }, () => {
    const e = e0 + (w() % (e1 - e0 + 1))
    u[0] = ((signed && (w() & 1) ? 1 : 0) << 31 | (e << 23) | (w() & 0x7fffff)) >>> 0
    return f[0]!
  })
}

function uniform(n: number, seed: number, lo: number, hi: number): number[] {
  const w = words(seed)
  return Array.from({ length: n }, () => Math.fround(lo + (w() / 2 ** 32) * (hi - lo)))
}

/** The f32 neighbours of x (k steps each way). */
function around(x: number, k: number): number[] {
  const f = new Float32Array([x]), i = new Int32Array(f.buffer)
  const base = i[0]!
  const out: number[] = []
  for (let d = -k; d <= k; d++) { i[0] = base + d; out.push(f[0]!) }
  return out
}

const SPECIAL = [0, -0, Infinity, -Infinity, NaN, 1, -1, 2 ** -149, -(2 ** -149), 2 ** -126, 3.4028234663852886e38, -3.4028234663852886e38, 0.5, -0.5]

/** f32 values next to multiples of π/2 (the hard cases of the argument reduction), small and huge. */
function nearPiOver2(n: number, seed: number): number[] {
  const w = words(seed)
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const k = i < n / 2 ? 1 + (w() % 100000) : (w() / 2 ** 32) * 2 ** (w() % 100)
    out.push(...around(Math.fround(Math.round(k) * Math.PI / 2), 1))
  }
  return out
}

interface Case {
  name: string
  arity: 1 | 2
  reference: (x: number, y: number) => number
  inputs: () => Array<[number, number]>
}

const unary = (f: (x: number) => number, xs: () => number[]): Pick<Case, 'arity' | 'reference' | 'inputs'> => ({
  arity: 1, reference: (x) => f(x), inputs: () => [...xs(), ...SPECIAL].map((x) => [x, 0]),
})

const CASES: Case[] = [
  { name: 'sin', ...unary(Math.sin, () => [...logUniform(N, 1, 0, 254), ...uniform(N / 4, 2, -10, 10), ...nearPiOver2(N / 16, 3)]) },
  { name: 'cos', ...unary(Math.cos, () => [...logUniform(N, 4, 0, 254), ...uniform(N / 4, 5, -10, 10), ...nearPiOver2(N / 16, 6)]) },
  { name: 'tan', ...unary(Math.tan, () => [...logUniform(N, 7, 0, 254), ...uniform(N / 4, 8, -10, 10), ...nearPiOver2(N / 16, 9)]) },
  { name: 'exp', ...unary(Math.exp, () => [...uniform(N, 10, -110, 95), ...logUniform(N / 4, 11, 0, 130), ...around(88.72283935546875, 8), ...around(-87.33654, 8), ...around(-103.27893, 8)]) },
  { name: 'log', ...unary(Math.log, () => [...logUniform(N, 12, 0, 254, false), ...uniform(N / 4, 13, 0.5, 2), ...around(1, 64)]) },
  { name: 'sinh', ...unary(Math.sinh, () => [...uniform(N, 14, -92, 92), ...logUniform(N / 4, 15, 0, 130)]) },
  { name: 'cosh', ...unary(Math.cosh, () => [...uniform(N, 16, -92, 92), ...logUniform(N / 4, 17, 0, 130)]) },
  { name: 'tanh', ...unary(Math.tanh, () => [...uniform(N, 18, -12, 12), ...logUniform(N / 4, 19, 0, 135)]) },
  { name: 'atan', ...unary(Math.atan, () => [...logUniform(N, 20, 0, 254), ...uniform(N / 4, 21, -3, 3)]) },
  { name: 'asin', ...unary(Math.asin, () => [...uniform(N, 22, -1, 1), ...logUniform(N / 4, 23, 0, 126), ...around(1, 64), ...around(-1, 64), 1.5]) },
  { name: 'acos', ...unary(Math.acos, () => [...uniform(N, 24, -1, 1), ...logUniform(N / 4, 25, 0, 126), ...around(1, 64), ...around(-1, 64), -1.5]) },
  { name: 'sqrt', ...unary(Math.sqrt, () => [...logUniform(N, 26, 0, 254, false), -4]) },
  {
    name: 'atan2', arity: 2, reference: (y, x) => Math.atan2(y, x),
    inputs: () => {
      const a = logUniform(N, 27, 0, 254), b = logUniform(N, 28, 0, 254)
      const c = uniform(N / 4, 29, -5, 5), d = uniform(N / 4, 30, -5, 5)
      const grid = SPECIAL.flatMap((y) => SPECIAL.map((x) => [y, x] as [number, number]))
      return [...a.map((y, i) => [y, b[i]!] as [number, number]), ...c.map((y, i) => [y, d[i]!] as [number, number]), ...grid]
    },
  },
  {
    name: 'div', arity: 2, reference: (a, b) => a / b,
    inputs: () => {
      const a = logUniform(N, 31, 1, 254), b = logUniform(N, 32, 1, 254)
      return a.map((y, i) => [y, b[i]!] as [number, number])
    },
  },
  {
    name: 'pow', arity: 2, reference: (x, p) => Math.pow(x, p),
    inputs: () => {
      const x = logUniform(N, 33, 100, 150, false), p = uniform(N, 34, -40, 40)
      const nx = uniform(N / 4, 35, -20, 20), np = uniform(N / 4, 36, -30, 30).map(Math.round)
      const near1 = around(1, 200), big = uniform(near1.length, 37, -2e6, 2e6)
      const wide = logUniform(N / 4, 38, 1, 254, false), wp = uniform(N / 4, 39, -3, 3)
      const grid = [...SPECIAL, 3, -3, 0.25, 2.5].flatMap((a) => [...SPECIAL, 3, -3, 0.25, 2.5].map((b) => [a, b] as [number, number]))
      return [
        ...x.map((a, i) => [a, p[i]!] as [number, number]), ...nx.map((a, i) => [a, np[i]!] as [number, number]),
        ...near1.map((a, i) => [a, big[i]!] as [number, number]), ...wide.map((a, i) => [a, wp[i]!] as [number, number]), ...grid,
      ]
    },
  },
]

/** The Tenet source computing one function of the case's arguments into `y`. */
function sourceOf(c: Case): string {
  if (c.name === 'div') return 'fn f(y: f32, a: f32, b: f32) { y += a / b }'
  if (c.name === 'pow') return 'fn f(y: f32, a: f32, b: f32) { y += a ** b }'
  return c.arity === 1 ? `fn f(y: f32, a: f32) { y += ${c.name}(a) }` : `fn f(y: f32, a: f32, b: f32) { y += ${c.name}(a, b) }`
}

describe('the 2/π table', () => {
  it('holds the bits of 2/π (0.a2f9836e4e441529fc2757d1f534ddc0db62…)', () => {
    const w = twoOverPiWords(8)
    expect(w[0]).toBe(0)
    expect(w.slice(1, 5).map((x) => x.toString(16).padStart(8, '0')).join('')).toBe('a2f9836e4e441529fc2757d1f534ddc0')
  })
})

/** A subnormal as a zero of its sign. */
function flush(x: number): number {
  return x !== 0 && Math.abs(x) < 2 ** -126 ? (x < 0 ? -0 : 0) : x
}

/** Whether the device flushes subnormal f32 values to zero (WGSL allows it; SwiftShader does). */
async function flushesSubnormals(): Promise<boolean> {
  const f = cpu('fn f(y: f32, a: f32) { y += a * 2.0 }', undefined, false).f!
  const k = await gpuMap(f, { batch: 1, perItem: ['y', 'a'], gpu })
  const y = new Float32Array(1)
  await k(y, new Float32Array([2 ** -140]))
  return y[0] === 0
}

const ftz = gpu ? await flushesSubnormals() : false

describe.skipIf(!gpu)('precise f32 math on webgpu: within one ulp of Math.fround(Math.f(x))', () => {
  const measured: string[] = []
  it('reports whether the device flushes subnormals', () => {
    console.log(`[precise-math] this device ${ftz ? 'flushes subnormal f32 values to zero (compared as such)' : 'keeps subnormal f32 values'}`)
    expect(typeof ftz).toBe('boolean')
  })
  for (const c of CASES) {
    it(c.name, async () => {
      const inputs = c.inputs()
      const n = inputs.length
      const f = cpu(sourceOf(c), undefined, false).f!
      const k = await gpuMap(f, { batch: n, perItem: c.arity === 1 ? ['y', 'a'] : ['y', 'a', 'b'], gpu })
      const y = new Float32Array(n), a = Float32Array.from(inputs, (p) => p[0]), b = Float32Array.from(inputs, (p) => p[1])
      if (c.arity === 1) await k(y, a)
      else await k(y, a, b)
      let worst = 0, at = -1, ones = 0, flushed = 0
      const bad: string[] = []
      for (let i = 0; i < n; i++) {
        const want = Math.fround(c.reference(a[i]!, b[i]!))
        let d = ulpDistance(y[i]!, want)
        if (d > 1 && ftz) {
          // the device flushes subnormals: compare with the function of the flushed arguments, flushed
          const d2 = ulpDistance(flush(y[i]!), flush(Math.fround(c.reference(flush(a[i]!), flush(b[i]!)))))
          if (d2 <= 1) { flushed++; d = d2 }
        }
        if (d === 1) ones++
        if (d > worst) { worst = d; at = i }
        if (d > 1 && bad.length < 5) bad.push(`${c.name}(${a[i]}${c.arity === 2 ? `, ${b[i]}` : ''}) = ${y[i]} on webgpu, ${want} wanted (${d} ulp)`)
      }
      measured.push(`${c.name}: ${n} inputs, max ${worst} ulp${at >= 0 ? ` at ${a[at]}${c.arity === 2 ? `, ${b[at]}` : ''}` : ''}, ${ones} at 1 ulp, ${flushed} with subnormals flushed`)
      console.log(`[precise-math] ${measured.at(-1)}`)
      expect(bad).toEqual([])
    }, 120_000)
  }
})
