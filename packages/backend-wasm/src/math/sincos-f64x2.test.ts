import { describe, expect, it } from 'vitest'
import { encodeModule, type Bytes } from '../encoder.js'
import { Routine, words } from './builder.js'
import { MathLibrary } from './index.js'
import { writeMathConstants } from './constants.js'
import { mathModule } from './standalone.js'
import { lane, pair } from './vector.js'
import { compile, expectSameRuns, lastMapLanes, lastRoutines } from '../test-util.js'

/** Bits of a double as text (NaN as one text: wasm leaves its payload open). */
const bitsOf = (v: number) => {
  if (Number.isNaN(v)) return 'NaN'
  const d = new DataView(new ArrayBuffer(8))
  d.setFloat64(0, v)
  return d.getBigUint64(0).toString(16)
}

/** The doubles next to v (one ulp down and up). */
function neighbours(v: number): number[] {
  const d = new DataView(new ArrayBuffer(8))
  d.setFloat64(0, v)
  const b = d.getBigInt64(0)
  const at = (x: bigint) => {
    d.setBigInt64(0, x)
    return d.getFloat64(0)
  }
  return [at(b - 1n), v, at(b + 1n)]
}

/** A small deterministic generator of uniform numbers in [0, 1). */
function generator(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
}

/** `(x₀, x₁) → [sin x₀, sin x₁, cos x₀, cos x₁]` by one call of `__sincos_f64x2`. */
function vectorSincos(): (a: number, b: number) => number[] {
  const calls: Array<[Bytes, number, number]> = []
  const lib = new MathLibrary(1, (body, at, target) => calls.push([body, at, target]))
  const r = new Routine(['f64', 'f64'], ['f64', 'f64', 'f64', 'f64'])
  const s = r.var('v128'),
    c = r.var('v128')
  r.callInto('__sincos_f64x2', [pair(r.param(0), r.param(1))], [s, c])
  r.ret(lane(s, 0), lane(s, 1), lane(c, 0), lane(c, 1))
  const wrapper = { ...r.done(), export: 'f' }
  for (const site of r.calls) calls.push([site.body, site.at, lib.use(site.name)])
  const functions = [wrapper, ...lib.functions()]
  for (const [body, at, target] of calls) body.patchU32(at, target)
  // (a page for the routines' constants table, see constants.ts)
  const bytes = encodeModule({ imports: [], functions, memoryPages: 1, globals: [] })
  const { f, memory } = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as unknown as {
    f: (a: number, b: number) => number[]
    memory: WebAssembly.Memory
  }
  writeMathConstants(memory)
  return f
}

const PIO2 = Math.PI / 2

/** Inputs at and around every branch of the scalar routine, multiples of π/2, and random ones. */
function inputs(): number[] {
  const xs: number[] = [0, -0, 5e-324, -5e-324, Infinity, -Infinity, NaN, Number.MAX_VALUE, -Number.MAX_VALUE, 1e300]
  const edges = [
    words(0x3e400000, 0), // sin r = r, cos r = 1 below
    words(0x3fd33333, 0), // cos: near/far
    words(0x3fe90000, 0xffffffff), // cos: qx fixed above
    words(0x3fe90001, 0),
    words(0x3fe921fb, 0xffffffff), // the last unreduced
    words(0x3fe921fc, 0),
    Math.PI / 4,
    words(0x4002d97b, 0xffffffff), // n = ±1 below
    words(0x4002d97c, 0),
    words(0x3ff921fb, 0), // within π/2's high word: more pieces
    words(0x3ff921fb, 0x54442d18),
    words(0x413921fb, 0xffffffff), // the last of the medium range
    words(0x413921fc, 0),
    31.5 * PIO2,
    32 * PIO2,
    32.5 * PIO2,
  ]
  for (const e of edges) for (const sgn of [1, -1]) xs.push(...neighbours(sgn * e))
  // at and next to multiples of π/2 (the reduction's cancellation), small and large n
  for (let n = 1; n < 200; n++) for (const sgn of [1, -1]) xs.push(...neighbours(sgn * n * PIO2))
  for (const n of [1000, 12345, 65536, 300000, 333333])
    for (const sgn of [1, -1]) xs.push(...neighbours(sgn * n * PIO2))
  const unit = generator(29)
  for (let k = 0; k < 3000; k++) xs.push(20 * unit() - 10)
  for (let k = 0; k < 2000; k++) xs.push(4 * unit() - 2)
  for (let k = 0; k < 1000; k++) xs.push(2e6 * unit() - 1e6)
  for (let k = 0; k < 1000; k++) xs.push((unit() < 0.5 ? -1 : 1) * 2 ** (80 * unit() - 60))
  const d = new DataView(new ArrayBuffer(8))
  for (let k = 0; k < 500; k++) {
    d.setUint32(0, Math.floor(unit() * 2 ** 32))
    d.setUint32(4, Math.floor(unit() * 2 ** 32))
    xs.push(d.getFloat64(0))
  }
  return xs
}

describe('sin and cos of an f64x2 (__sincos_f64x2)', () => {
  it('gives in each lane the scalar routine’s doubles, whatever the other lane holds', () => {
    const vector = vectorSincos()
    const { __sincos: scalar } = mathModule(['__sincos']) as unknown as {
      __sincos: (x: number) => [number, number]
    }
    const xs = inputs()
    // each input beside a common value of each branch, beside itself, and beside its neighbour
    const partners = [0.3, 2.0, 1234.5, -7e-10, 1e200, NaN]
    let compared = 0
    const check = (a: number, b: number) => {
      const [s0, s1, c0, c1] = vector(a, b)
      const [sa, ca] = scalar(a)
      const [sb, cb] = scalar(b)
      expect([s0, c0, s1, c1].map(bitsOf)).toEqual([sa, ca, sb, cb].map(bitsOf))
      compared += 2
    }
    for (let k = 0; k < xs.length; k++) {
      const x = xs[k]!
      check(x, x)
      check(x, xs[(k * 7 + 3) % xs.length]!)
      for (const p of partners) check(p, x)
    }
    expect(compared).toBeGreaterThan(100000)
  })

  it('gives Math.sin and Math.cos where it reduces the argument itself (|x| < 2¹⁹·π/2)', () => {
    // (beyond, both lanes call the scalar routine, whose Payne–Hanek reduction can differ from
    // V8's by 1 ulp: at x = −3490072.7691842485, say)
    const vector = vectorSincos()
    const unit = generator(5)
    for (let k = 0; k < 2000; k++) {
      const a = (unit() - 0.5) * 2 ** (20 * unit()),
        b = (unit() - 0.5) * 8
      const [s0, s1, c0, c1] = vector(a, b)
      expect([s0, s1, c0, c1].map(bitsOf)).toEqual(
        [Math.sin(a), Math.sin(b), Math.cos(a), Math.cos(b)].map((v) => bitsOf(v)),
      )
    }
  })
})

describe('sin and cos in map lanes', () => {
  // a block loop (map lanes over blocks) with sin and cos of one value (a pair), a lone cos, and
  // sin inside a branch one lane may skip
  const text = `
fn f(n: i32, x: f64[], y: f64[]) {
  for b in 0..n {
    o: i32 <- b * 3
    y[o] += sin(x[o]) * x[o + 1] + cos(x[o])
    y[o + 1] -= cos(x[o + 1] * 3.0)
    t <- 0.0
    routine {
      if (x[o + 2] > 0.0, ~) {
        t += sin(x[o + 2])
      }
    }
    y[o + 2] += t
    ~routine
    t -> 0.0
    o -> b * 3
  }
}`
  it('computes both lanes by __sincos_f64x2, with the doubles of the cpu backend and the scalar code', () => {
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBe(2)
    expect(lastRoutines).toContain('__sincos_f64x2')
    const scalar = compile(text, 'wasm', false, false)
    const cpu = compile(text, 'cpu')
    const xs = inputs()
    const unit = generator(3)
    for (const n of [1, 2, 7, 40]) {
      for (let round = 0; round < 20; round++) {
        const x = Float64Array.from({ length: 3 * n }, () => xs[Math.floor(unit() * xs.length)]!)
        const y = Float64Array.from({ length: 3 * n }, () => unit())
        expectSameRuns([cpu, scalar, lanes], () => [n, x.slice(), y.slice()])
      }
    }
  })
})
