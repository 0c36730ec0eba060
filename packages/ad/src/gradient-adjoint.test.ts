import { describe, expect, it } from 'vitest'
import { compileAdjoint, compileGradientAdjoint } from './index.js'
import { printFunction, TenetError } from '@tenet/ir'
import { tag, expectClose } from './test-util.js'

const source = `
fn diffusion(dest: f64[], src: f64[], c: f64) {
  n: i32 <- len(src)
  for i in 0..n {
    dest[i] += src[i] + c * (src[(i + 1) % n] + src[(i + n - 1) % n] - 2.0 * src[i])
  }
  n -> len(src)
}
fn reads_out(y: f64[], x: f64[]) {
  for i in 0..len(x) {
    y[i] += sin(x[i])
    x[i] += y[i] * y[i]
  }
}`

/** Runs an adjoint core with values `dst`, `src` (copied), seeds `dstBar`, and returns (srcBar, g_c). */
function run(
  a: ReturnType<typeof compileAdjoint>,
  dst: Float64Array,
  src: Float64Array,
  dstBar: Float64Array,
  extra: number[] = [],
): { srcBar: Float64Array; scalars: number[] } {
  const call: unknown[] = [dst.slice(), src.slice(), ...extra]
  const srcBar = new Float64Array(src.length)
  a.slots.forEach((s, i) => {
    if (!s) return
    call[s.index] = s.kind === 'scalar' ? 0 : i === 0 ? dstBar.slice() : i === 1 ? srcBar : new Float64Array(0)
  })
  call[a.adjoint.ir.params.length - 1] = 0
  a.adjoint.core(...call)
  const scalars = a.slots.flatMap((s) => (s?.kind === 'scalar' ? [a.adjoint.core.results[s.index] as number] : []))
  return { srcBar, scalars }
}

describe('compileGradientAdjoint', () => {
  const fast = tag({ checks: false })(source)
  const checked = tag()(source)
  const n = 12
  const src = Float64Array.from({ length: n }, (_, i) => Math.sin(i) + 0.3)
  const dstBar = Float64Array.from({ length: n }, (_, i) => Math.cos(i / 3))

  it('is null with run-time checks on (the adjoint must uncompute there)', () => {
    expect(compileGradientAdjoint(checked.diffusion!)).toBeNull()
  })

  it('reads no value of a linear step’s output and gives the full adjoint’s gradients on any dst', () => {
    const r = compileGradientAdjoint(fast.diffusion!)!
    expect(r.reads).toEqual([false, true, true])
    const full = compileAdjoint(fast.diffusion!)
    const dst = new Float64Array(n)
    fast.diffusion!.core(dst, src, 0.2)
    const want = run(full, dst, src, dstBar, [0.2])
    // garbage in dst: the reduced program never looks at it
    const got = run(r, new Float64Array(n).fill(Number.NaN), src, dstBar, [0.2])
    expectClose(got.srcBar, want.srcBar, 1e-14, 'srcBar')
    expectClose(got.scalars, want.scalars, 1e-14, 'g_c')
  })

  it('still reads an output whose value the gradients need, and agrees with the full adjoint', () => {
    const r = compileGradientAdjoint(fast.reads_out!)!
    expect(r.reads[0]).toBe(true)
    const full = compileAdjoint(fast.reads_out!)
    const y = new Float64Array(n),
      x = src.slice()
    fast.reads_out!.core(y, x) // arrays in place: y and x now hold the outputs
    const want = run(full, y, x, dstBar)
    const got = run(r, y, x, dstBar)
    expectClose(got.srcBar, want.srcBar, 1e-14, 'xBar')
  })

  it('matches central differences of the step', () => {
    const r = compileGradientAdjoint(fast.diffusion!)!
    const got = run(r, new Float64Array(n), src, dstBar, [0.2]).srcBar
    const h = 1e-6
    const L = (s: Float64Array) => {
      const d = new Float64Array(n)
      fast.diffusion!.core(d, s, 0.2)
      return d.reduce((acc, v, i) => acc + v * dstBar[i]!, 0)
    }
    const fd = Float64Array.from({ length: n }, (_, i) => {
      const p = src.slice(),
        m = src.slice()
      p[i]! += h
      m[i]! -= h
      return (L(p) - L(m)) / (2 * h)
    })
    expectClose(got, fd, 1e-8, 'FD')
  })

  it('observing only some gradients drops the work that only the others need (printed IR)', () => {
    const all = compileGradientAdjoint(fast.diffusion!)!
    const some = compileGradientAdjoint(fast.diffusion!, [1])!
    const entry = (r: typeof all) => printFunction(r.functions.find((f) => f.name === 'diffusion$adj')!)
    // before: g_c accumulates a stencil of src; after: that update is gone, and so is every read of src
    expect(entry(all)).toContain('g_c += g_dest[i] * (src[(i + 1) % n] + src[(i + n - 1) % n] - 2.0 * src[i])')
    expect(entry(some)).not.toContain('g_c +=')
    expect(entry(some)).toContain('g_src[(i + 1) % n] += g_dest[i] * c')
    expect(some.reads).toEqual([false, false, true])
    // any dst and src content: srcBar is the full adjoint's
    const full = compileAdjoint(fast.diffusion!)
    const dst = new Float64Array(n)
    fast.diffusion!.core(dst, src, 0.2)
    const want = run(full, dst, src, dstBar, [0.2])
    const nan = new Float64Array(n).fill(Number.NaN)
    expectClose(run(some, nan, nan, dstBar, [0.2]).srcBar, want.srcBar, 1e-14, 'srcBar')
    expect(compileGradientAdjoint(fast.diffusion!, [1])).toBe(some)
  })

  it('keeps the gradient an observed one receives through an unobserved written argument', () => {
    // reads_out writes x from y: xBar gets yBar's contribution, though yBar itself is not observed
    const r = compileGradientAdjoint(fast.reads_out!, [1])!
    const full = compileAdjoint(fast.reads_out!)
    const y = new Float64Array(n),
      x = src.slice()
    fast.reads_out!.core(y, x)
    expectClose(run(r, y, x, dstBar).srcBar, run(full, y, x, dstBar).srcBar, 1e-14, 'xBar')
  })

  it('rejects an observed index that is not a parameter (ad/argument)', () => {
    expect(() => compileGradientAdjoint(fast.diffusion!, [3])).toThrow(TenetError)
    expect(() => compileGradientAdjoint(fast.diffusion!, [-1])).toThrow(
      expect.objectContaining({ code: 'ad/argument' }),
    )
  })
})
