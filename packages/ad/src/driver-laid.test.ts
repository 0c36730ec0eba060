/**
 * The cpu gradient driver that lays its block out once per lengths (\`run\` checks the arguments,
 * \`work\` holds the block, its views and the copies as constants: driver.ts): every error of a
 * call is the one the driver gave before (code, class and message), thrown before anything is
 * written, also once a call has laid the block out; after an error, a \`release\`, a length change or
 * a detached gradient buffer, the next call lays out again and gives the gradient at its own
 * arguments, in \`buffers\` (reused while the lengths stay). Also the short copies and zeroings of
 * short-arrays.ts, per element type and length.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad } from './index.js'
import { DRIVER, type DriverContext } from './driver.js'
import { copyOf, zeroOf } from './short-arrays.js'
import { tag } from './test-util.js'

// x is written (the driver copies it), w only read; l = Σ w[i]·(x[i] + w[i]²)²
const source = `
fn f(l: f64, x: f64[], w: f64[]) {
  for i in 0..len(x) { x[i] += w[i] * w[i] }
  for i in 0..len(x) { l += w[i] * x[i] * x[i] }
}`

const lossOf = (x: ArrayLike<number>, w: ArrayLike<number>): number => {
  let l = 0
  for (let i = 0; i < x.length; i++) l += w[i]! * (x[i]! + w[i]! * w[i]!) ** 2
  return l
}

/** Checks the gradients of the last call at (x, w), in \`buffers\`. */
function expectGradient(g: ReturnType<typeof grad>, x: Float64Array, w: Float64Array): void {
  expect(g.lastLoss).toBeCloseTo(lossOf(x, w), 12)
  for (let i = 0; i < x.length; i++) {
    const y = x[i]! + w[i]! * w[i]!
    expect(g.buffers[1]![i]).toBeCloseTo(2 * w[i]! * y, 12)
    expect(g.buffers[2]![i]).toBeCloseTo(y * y + 4 * w[i]! * w[i]! * y, 12)
  }
  expect(g.buffers[1]!.length).toBe(x.length)
  expect(g.buffers[2]!.length).toBe(x.length)
}

function thrown(f: () => void): [string | undefined, string, string] {
  try {
    f()
  } catch (e) {
    return [(e as { code?: string }).code, (e as Error).constructor.name, (e as Error).message]
  }
  return ['none', '', '']
}

const detached = (n: number): Float64Array => {
  const a = new Float64Array(n)
  structuredClone(a.buffer, { transfer: [a.buffer] })
  return a
}

describe('the cpu gradient driver laid out per lengths', () => {
  for (const checks of [false, true]) {
    it(`gives the errors of the driver before it, also once laid out, and then the gradient (checks ${checks ? 'on' : 'off'})`, () => {
      const g = grad(tag({ checks })(source).f!, { loss: 0 })
      const ctx = (g as unknown as { [DRIVER]: DriverContext })[DRIVER]
      expect(ctx.source).toContain('function laidOut(')
      const x = Float64Array.of(1, 2, 3)
      const w = Float64Array.of(0.5, 0.25, 2)
      const x0 = x.slice()
      g.run(0, x, w)
      expectGradient(g, x, w)
      const sig = '`f` takes 3 arguments (l, x, w)'
      expect(thrown(() => g.run(0, x))).toEqual(['call/arity', 'TenetError', `${sig}, got 2`])
      expect(thrown(() => g.run(0, x, w, 1))).toEqual(['call/arity', 'TenetError', `${sig}, got 4`])
      expect(thrown(() => g.run('0', x, w))).toEqual([
        'call/type',
        'TenetError',
        'argument 1 (`l: f64`) of `f` must be a number, got a string',
      ])
      expect(thrown(() => g.run(0, [1, 2, 3], w))).toEqual([
        'call/type',
        'TenetError',
        'argument 2 (`x: f64[]`) of `f` must be a Float64Array, got a Array',
      ])
      expect(thrown(() => g.run(0, x, new Float32Array(3)))).toEqual([
        'call/type',
        'TenetError',
        'argument 3 (`w: f64[]`) of `f` must be a Float64Array, got a Float32Array',
      ])
      expect(thrown(() => g.run(0, x, { length: 3 }))).toEqual([
        'call/type',
        'TenetError',
        'argument 3 (`w: f64[]`) of `f` must be a Float64Array, got a Object',
      ])
      expect(thrown(() => g.run(0, detached(3), w))).toEqual([
        'call/detached',
        'TenetError',
        'argument 2 (`x: f64[]`) of `f` is a view of a detached ArrayBuffer (transferred, or of a wasm memory that grew); pass an array with live memory',
      ])
      const overlap =
        'arguments 2 (`x: f64[]`) and 3 (`w: f64[]`) of `f` share memory, and `f` writes `x`: an array a function writes must not overlap any other array argument (pass a copy, e.g. `w.slice()`)'
      expect(thrown(() => g.run(0, x, x))).toEqual(['call/overlap', 'TenetError', overlap])
      const b = new Float64Array(6)
      expect(thrown(() => g.run(0, b.subarray(0, 3), b.subarray(2, 5)))).toEqual([
        'call/overlap',
        'TenetError',
        overlap,
      ])
      if (checks) {
        // a failed run-time check of the program: its error, the caller's arrays as passed
        const e = thrown(() => g.run(0, x, Float64Array.of(1)))
        expect(e[0]).toBe('runtime/out-of-bounds')
        expect(e[1]).toBe('InvertibilityError')
        expect(e[2]).toContain('index 1 is out of bounds for `w` (length 1)')
      }
      expect(Array.from(x)).toEqual(Array.from(x0))
      expect(Array.from(b)).toEqual([0, 0, 0, 0, 0, 0])
      // the next call: its own gradient; the one after it, in the same buffers (the lengths stayed)
      g.run(0, x, w)
      expectGradient(g, x, w)
      const bx = g.buffers[1]
      g.run(0, w, x)
      expectGradient(g, w, x)
      expect(g.buffers[1]).toBe(bx)
      g.dispose()
      expect(thrown(() => g.run(0, x, w))).toEqual([
        'ad/disposed',
        'TenetError',
        'this gradient function of `f` was disposed; make a new one with `grad`',
      ])
    })
  }

  it('lays out again after release, a length change or a detached gradient buffer', () => {
    const g = grad(tag({ checks: false })(source).f!, { loss: 0 })
    const x = Float64Array.of(1, 2, 3)
    const w = Float64Array.of(0.5, 0.25, 2)
    g.run(0, x, w)
    const before = g.buffers[1]
    g.release()
    g.run(0, x, w)
    expectGradient(g, x, w)
    expect(g.buffers[1]).not.toBe(before)
    // the caller takes the gradient's buffer away: the next call lays out a new block
    const taken = g.buffers[1]!
    const buffer = taken.buffer as ArrayBuffer
    structuredClone(buffer, { transfer: [buffer] })
    expect(g.buffers[1]!.length).toBe(0)
    g.run(0, x, w)
    expectGradient(g, x, w)
    // longer and shorter arguments, across the length where copies and zeroing change form
    for (const n of [20, 20, 2, 15, 16, 3]) {
      const xn = Float64Array.from({ length: n }, (_, i) => Math.sin(i + n))
      const wn = Float64Array.from({ length: n }, (_, i) => Math.cos(2 * i - n))
      g.run(0, xn, wn)
      expectGradient(g, xn, wn)
    }
  })

  it('gives the direct wasm driver the same gradients across lengths (short copies and zeroings made per length)', () => {
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
    const g = grad(tag({ checks: false, backend: 'wasm', registry })(source).f!, { loss: 0 })
    expect((g as unknown as { [DRIVER]: DriverContext })[DRIVER].source).toContain('EA.call(')
    for (const n of [3, 3, 2, 15, 16, 40, 1, 3]) {
      const xn = Float64Array.from({ length: n }, (_, i) => Math.sin(i + n))
      const wn = Float64Array.from({ length: n }, (_, i) => Math.cos(2 * i - n))
      g.run(0, xn, wn)
      expectGradient(g, xn, wn)
    }
  })
})

describe('short copies and zeroings (short-arrays.ts)', () => {
  it('are made once per element type and length, straight-line below SHORT and by the builtins from it', () => {
    expect(zeroOf('Float64Array', 3)).toBe(zeroOf('Float64Array', 3))
    expect(zeroOf('Float32Array', 3)).not.toBe(zeroOf('Float64Array', 3))
    expect(zeroOf('Float64Array', 3)).not.toBe(zeroOf('Float64Array', 4))
    expect(String(zeroOf('Float64Array', 3))).toContain('z[2] = 0;')
    expect(String(zeroOf('Float64Array', 40))).toContain('z.fill(0)')
    expect(String(copyOf('Int32Array', 2))).toContain('d[1] = s[1];')
    expect(String(copyOf('Int32Array', 16))).toContain('d.set(s)')
    for (const n of [0, 1, 5, 15, 16, 33]) {
      const z = new Float32Array(n).fill(7)
      zeroOf('Float32Array', n)(z)
      expect(Array.from(z)).toEqual(new Array(n).fill(0))
      const s = Int32Array.from({ length: n }, (_, i) => i * 3 - 5)
      const d = new Int32Array(n)
      copyOf('Int32Array', n)(d, s)
      expect(Array.from(d)).toEqual(Array.from(s))
    }
  })
})
