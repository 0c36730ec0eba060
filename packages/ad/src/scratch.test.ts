/**
 * `grad(f, { scratch })`: work arrays that each call runs with zeros in their place (the caller's
 * arrays give only the lengths), whose gradients are not returned. The gradient equals the one
 * without the option when the caller passes zeros, and that of central differences of an
 * independent plain-TS loss; the generated driver, the interpreted one and the wasm backend agree.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { interpreterBackend } from '@tenet/reversible'
import { checkGradient } from '@tenet/testing'
import { grad, graphEmbeddingArgs, graphEmbeddingSource, petersenEdges, petersenNonEdges } from './index.js'
import { DRIVER, type DriverContext } from './driver.js'
import { setEvalAllowedForTesting } from './driver-interpreted.js'
import { tag } from './test-util.js'

afterEach(() => setEvalAllowedForTesting(undefined))

/** The graph-embedding loss in plain TS (independent of Tenet): the oracle of the finite differences. */
function embeddingLoss(x: ArrayLike<number>, k: number): number {
  const lengths = (pairs: ReadonlyArray<readonly [number, number]>) =>
    pairs.map(([a, b]) => {
      let s = 0
      for (let j = 0; j < k; j++) s += (x[a * k + j]! - x[b * k + j]!) ** 2
      return Math.sqrt(s)
    })
  const mean = (d: number[]) => d.reduce((s, v) => s + v, 0) / d.length
  const variance = (d: number[]) => d.reduce((s, v) => s + (v - mean(d)) ** 2, 0) / (d.length - 1)
  const d1 = lengths(petersenEdges),
    d2 = lengths(petersenNonEdges)
  return variance(d1) + variance(d2) + Math.exp(Math.max(mean(d1) - mean(d2) + 0.1, 0)) - 1
}

const point = (k: number, seed: number) => Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(seed + 1.7 * i) * 2)

describe('scratch arguments of grad', () => {
  for (const checks of [true, false])
    for (const fuse of [true, false])
      it(`gives the gradient without copying them (checks ${checks ? 'on' : 'off'}, ${fuse ? 'fused' : 'two sweeps'}; generated and interpreted drivers)`, () => {
        const f = tag({ checks })(graphEmbeddingSource).embedding_loss!
        const plain = grad(f, { loss: 0, fuse })
        for (const evalAllowed of [true, false]) {
          setEvalAllowedForTesting(evalAllowed)
          const g = grad(f, { loss: 0, fuse, scratch: [2, 3, 4, 5] })
          // k changes (the block is laid out again), and repeats (it is zeroed and reused)
          for (const k of [2, 2, 3, 1, 3]) {
            const x = point(k, k)
            const args = graphEmbeddingArgs(x, k)
            const want = plain(...args)
            // the caller's work arrays hold anything: they are neither read nor written
            const junk = args.slice(2, 6).map((a) => (a as Float64Array).fill(Number.NaN))
            const got = g(...args)
            expect(junk.every((a) => a.every(Number.isNaN))).toBe(true)
            expect(got.slice(2, 6)).toEqual([null, null, null, null])
            expect(g.buffers.slice(2, 6)).toEqual([undefined, undefined, undefined, undefined])
            expect(g.lastLoss).toBeCloseTo(embeddingLoss(x, k), 12)
            const gx = got[1] as Float64Array
            for (let i = 0; i < gx.length; i++) expect(gx[i]).toBeCloseTo((want[1] as Float64Array)[i]!, 12)
            const fd = checkGradient((v) => embeddingLoss(v, k), Array.from(gx), Array.from(x), { tolerance: 1e-6 })
            expect(fd.ok, JSON.stringify(fd)).toBe(true)
            // run, allocation-free form: the same gradient in buffers[1]
            g.run(...args)
            expect(Array.from(g.buffers[1]!)).toEqual(Array.from(gx))
          }
        }
      })

  it('holds the gradients and the scratch arrays in one block, zeroed once per call, with no copy', () => {
    const g = grad(tag({ checks: false })(graphEmbeddingSource).embedding_loss!, { loss: 0, scratch: [2, 3, 4, 5] })
    const ctx = (g as unknown as { [DRIVER]: DriverContext })[DRIVER]
    // the fused program writes every element of the work arrays and their gradients before it
    // reads one (q1, q2 and their gradients not at all: contracted to scalars), so they sit after
    // the gradient of x in the block, and a call zeroes only that (\`hz\`)
    expect(ctx.source).toContain(
      'ctx.hostBlock([-1, a1.length, a2.length, a3.length, a4.length, a5.length, -1, -1, -1], [-1, -1, a2.length, a3.length, a4.length, a5.length, -1, -1, -1], {"grads":[false,false,true,true,true,true,false,false,false],"scratch":[false,false,true,true,true,true,false,false,false]});',
    )
    expect(ctx.source).toContain('HZ = ctx.hz, ZB = zeroOf("Float64Array", HZ.length)')
    expect(ctx.source).not.toMatch(/\.set\(a[2-5]\)/)
    const k = 3
    g.run(...graphEmbeddingArgs(point(k, k), k))
    expect(ctx.hz!.length).toBe(10 * k)
    expect(ctx.hz!.buffer).toBe(ctx.hb!.buffer)
    expect(ctx.buffers[1]!.byteOffset).toBe(0)
  })

  it('zeroes a scratch array the fused program may read before writing it, and gives the same gradient on every call', () => {
    // w is read (w[0]) before the loop writes its elements, and the loop covers all of them:
    // zeroed; t is written first over all its elements: not
    const f = tag({ checks: false })(`fn f(l: f64, x: f64[], w: f64[], t: f64[]) {
      w[0] += x[0]
      for i in 0..len(w) { w[i] += x[i] * x[i] }
      for i in 0..len(t) { t[i] += sin(x[i]) }
      s <- 0.0
      routine { for i in 0..len(x) { s += w[i] * t[i] } }
      l += s * s
      ~routine
      s -> 0.0
    }`).f!
    const g = grad(f, { loss: 0, scratch: [2, 3] })
    const ctx = (g as unknown as { [DRIVER]: DriverContext })[DRIVER]
    expect(String(g.plan)).toContain('routine-fused')
    expect(ctx.source).toContain('"scratch":[false,false,false,true]')
    const x = Float64Array.from([0.5, -1.25, 2])
    // l = s² with s = Σ w_i sin x_i, w_0 = x_0 + x_0², w_i = x_i² elsewhere
    const want = (x: Float64Array) => {
      const w = Array.from(x, (v, i) => v * v + (i === 0 ? v : 0))
      const s = w.reduce((a, wi, i) => a + wi * Math.sin(x[i]!), 0)
      return Array.from(x, (v, i) => 2 * s * ((2 * v + (i === 0 ? 1 : 0)) * Math.sin(v) + w[i]! * Math.cos(v)))
    }
    for (let call = 0; call < 3; call++) {
      const y = x.map((v) => v + call)
      const got = g(0, y, new Float64Array(3), new Float64Array(3))[1] as Float64Array
      const ref = want(y)
      for (let i = 0; i < 3; i++) expect(got[i]).toBeCloseTo(ref[i]!, 12)
    }
  })

  it('checks the uncompute of a scratch array against zero (checks on, two sweeps)', () => {
    // q is left holding x² by f: the adjoint sweep must bring it back to the zero it started at
    const f = tag({ checks: true })(`fn f(l: f64, x: f64[], q: f64[]) {
      for i in 0..len(x) { q[i] += x[i] * x[i] }
      for i in 0..len(x) { l += q[i] * x[i] }
    }`).f!
    for (const evalAllowed of [true, false]) {
      setEvalAllowedForTesting(evalAllowed)
      const g = grad(f, { loss: 0, fuse: false, scratch: [2] })
      const x = Float64Array.from([0.5, -1.25, 2])
      const out = g(0, x, Float64Array.from([7, 8, 9]))
      expect(Array.from(out[1] as Float64Array)).toEqual(Array.from(x, (v) => 3 * v * v))
      expect(out[2]).toBeNull()
    }
  })

  for (const checks of [false, true])
    for (const fuse of [true, false])
      it(`runs on the wasm backend (values and gradients in its memory; checks ${checks ? 'on' : 'off'}, ${fuse ? 'fused' : 'two sweeps'})`, () => {
        const registry = createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
        const f = tag({ checks, backend: 'wasm', registry })(graphEmbeddingSource).embedding_loss!
        const g = grad(f, { loss: 0, fuse, scratch: [2, 3, 4, 5] })
        // the direct driver, with the scratch values in the gradient block: one fill zeroes them all
        const source = (g as unknown as { [DRIVER]: DriverContext })[DRIVER].source
        expect(source).toContain('EA.call(')
        expect(source).toContain(
          'ctx.gradients([-1, a1.length, a2.length, a3.length, a4.length, a5.length, -1, -1, -1], [-1, -1, a2.length, a3.length, a4.length, a5.length, -1, -1, -1]);',
        )
        expect(source).not.toMatch(/V[2-5]\.fill\(0\)|\.set\(a[2-5]\)/)
        expect(source).toContain('else tfill.call(GZ, 0);')
        const plain = grad(tag({ checks })(graphEmbeddingSource).embedding_loss!, { loss: 0, fuse })
        for (const k of [3, 3, 2, 1]) {
          const x = point(k, 5)
          const args = graphEmbeddingArgs(x, k)
          const want = plain(...args)
          for (const a of args.slice(2, 6)) (a as Float64Array).fill(1e300)
          const got = g(...args)
          expect(got.slice(2, 6)).toEqual([null, null, null, null])
          const fd = checkGradient((v) => embeddingLoss(v, k), Array.from(got[1] as Float64Array), Array.from(x), {
            tolerance: 1e-6,
          })
          expect(fd.ok, JSON.stringify(fd)).toBe(true)
          expect(Array.from(got[1] as Float64Array)).toEqual(Array.from(want[1] as Float64Array))
          expect(g.lastLoss).toBe(plain.lastLoss)
          expect((args[2] as Float64Array)[0]).toBe(1e300)
        }
      })

  it('zeroes short scratch arrays and gradients in the wasm block straight-line, and checks the scratch uncompute there', () => {
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
    const text = `fn f(l: f64, x: f64[], q: f64[]) {
      for i in 0..len(x) { q[i] += x[i] * x[i] }
      for i in 0..len(x) { l += q[i] * x[i] }
    }`
    for (const checks of [false, true]) {
      const g = grad(tag({ checks, backend: 'wasm', registry })(text).f!, { loss: 0, fuse: false, scratch: [2] })
      // (by functions made for their lengths: see short-arrays.ts)
      expect((g as unknown as { [DRIVER]: DriverContext })[DRIVER].source).toContain('ZV2(V2);')
      for (const n of [3, 3, 2, 40, 3]) {
        const x = Float64Array.from({ length: n }, (_, i) => 0.5 - 0.75 * i)
        const out = g(0, x, new Float64Array(n).fill(7))
        expect(Array.from(out[1] as Float64Array)).toEqual(Array.from(x, (v) => 3 * v * v))
        expect(g.lastLoss).toBe(x.reduce((s, v) => s + v * v * v, 0))
      }
    }
  })

  it('rejects what cannot be scratch with a clear error', () => {
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
    const f = tag({ checks: false, registry })(graphEmbeddingSource).embedding_loss!
    const code = (scratch: unknown, constants?: number[]) => {
      try {
        grad(f, { loss: 0, scratch: scratch as number[], ...(constants ? { constants } : {}) })
      } catch (e) {
        return [(e as { code?: string }).code, (e as Error).message]
      }
      return ['none', '']
    }
    expect(code(2)).toEqual(['ad/argument', expect.stringContaining('must be an array')])
    expect(code([9])).toEqual(['ad/argument', expect.stringContaining('indices of arguments')])
    expect(code([1.5])).toEqual(['ad/argument', expect.stringContaining('indices of arguments')])
    expect(code([6])).toEqual(['ad/argument', expect.stringContaining('must be arrays, but argument 6 (`k`)')])
    expect(code([1], [1])).toEqual(['ad/argument', expect.stringContaining('both scratch and a constant')])
    expect(code([2, 2, 3])[0]).toBe('none')
  })
})
