/**
 * Pass `jam-iterations` (`@tenet/ir`) on whole programs: compiled with the pass and without it
 * (`disabledPasses`), on the cpu and wasm backends with checks off, the objective and the
 * gradient agree bit for bit — Horner least squares (the kernels' program: a history array per
 * point, the loss a reduction over the points, the gradient of the coefficients summed over the
 * points at `g_c[k]` and `g_c[len(c) − 1]`), a softmax cross-entropy, and loops that count down,
 * start elsewhere than 0 or run in reverse — for trip counts 0 to 9 (the leftover iterations, the
 * loop as written below four) and inner loops that are empty (the guard's other branch). The
 * gradients are also checked against central differences.
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { disabledPasses } from '@tenet/ir/backend'
import { createRegistry, grad, rev, TENET_FUNCTION, type TenetModule } from './index.js'

const registry = createRegistry().registerBackend(wasmBackend)
const source = `fn horner_loss(loss: f64, c: f64[], xs: f64[], ys: f64[]) {
  for j in 0..len(xs) {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[len(c) - 1] += c[len(c) - 1]
      for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * xs[j] + c[k] }
      e <- 0.0
      e += acc[0] - ys[j]
    }
    loss += e * e
    ~routine
  }
}
fn softmax_ce_loss(loss: f64, z: f64[], label: i32[], C: i32) {
  for b in 0..len(label) {
    routine {
      ms: f64[] <- zeros(C)
      ms[0] += z[b * C]
      for i in 1..C { ms[i] += max(ms[i - 1], z[b * C + i]) }
      s <- 0.0
      for i in 0..C { s += exp(z[b * C + i] - ms[C - 1]) }
      lse <- 0.0
      lse += log(s) + ms[C - 1]
    }
    loss += lse - z[b * C + label[b]]
    ~routine
  }
}
fn down_loss(loss: f64, w: f64[], xs: f64[], out: f64[], d: i32) {
  for j in len(xs) - 1..=2 by -1 {
    routine {
      h: f64[] <- zeros(d + 1)
      h[0] += xs[j]
      for k in 1..=d { h[k] += sin(h[k - 1]) * w[k - 1] + xs[j - 1] }
    }
    out[j] += h[d] * h[d]
    loss += out[j] * w[0]
    ~routine
  }
}`
let fresh = 0
/** A fresh module (nothing cached) on `backend`, checks off, with `jam-iterations` on or off. */
function compile(backend: 'cpu' | 'wasm', on: boolean): TenetModule {
  const tag = rev.with({ checks: false, backend, registry })
  const text = `${source}\n// ${fresh++}`
  if (!on) disabledPasses.add('jam-iterations')
  try {
    const m = tag(Object.assign([text], { raw: [text] }) as unknown as TemplateStringsArray)
    // compile now, while the switch holds
    m.horner_loss!(0, new Float64Array(2), new Float64Array(1), new Float64Array(1))
    return m
  } finally {
    if (!on) disabledPasses.delete('jam-iterations')
  }
}

function normals(n: number, seed: number): Float64Array {
  let s = seed
  const next = () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    return ((s >>> 8) & 0xffff) / 0x10000 - 0.5
  }
  return Float64Array.from({ length: n }, next)
}

const sameBits = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  a.length === b.length && Array.from(a).every((v, i) => Object.is(v, b[i]))

/** Central differences of `f` at `x[q]`. */
function central(f: (x: Float64Array) => number, x: Float64Array, q: number): number {
  const h = 1e-6,
    p = x.slice(),
    m = x.slice()
  p[q]! += h
  m[q]! -= h
  return (f(p) - f(m)) / (2 * h)
}

describe('pass `jam-iterations` on whole programs', () => {
  for (const backend of ['cpu', 'wasm'] as const) {
    const on = compile(backend, true),
      off = compile(backend, false)

    it(`${backend}: the pass applies (the generated code differs)`, () => {
      if (backend !== 'cpu') return
      const text = (m: TenetModule) => m.horner_loss![TENET_FUNCTION].compiled.sourceOf?.('horner_loss', false)
      expect(text(on)).not.toBe(text(off))
    })

    it(`${backend}: Horner least squares, its objective and gradient bit for bit, for 0–9 points and degrees 0–8`, () => {
      for (const degree of [0, 1, 2, 8])
        for (let points = 0; points <= 9; points++) {
          const c = normals(degree + 1, 3 + degree),
            xs = normals(points, 7 + points),
            ys = normals(points, 11 + points)
          expect(Object.is(on.horner_loss!(0.25, c, xs, ys)[0], off.horner_loss!(0.25, c, xs, ys)[0])).toBe(true)
          const gOn = grad(on.horner_loss!, { loss: 0 }),
            gOff = grad(off.horner_loss!, { loss: 0 })
          gOn.run(0, c, xs, ys)
          gOff.run(0, c, xs, ys)
          for (const b of [1, 2, 3]) expect(sameBits(gOn.buffers[b]!, gOff.buffers[b]!)).toBe(true)
          // and right: against central differences of the objective
          const loss = (cc: Float64Array) => off.horner_loss!(0, cc, xs, ys)[0] as number
          for (const q of [0, degree]) expect(gOn.buffers[1]![q]).toBeCloseTo(central(loss, c, q), 6)
          const lossX = (xx: Float64Array) => off.horner_loss!(0, c, xx, ys)[0] as number
          if (points > 0) expect(gOn.buffers[2]![points - 1]).toBeCloseTo(central(lossX, xs, points - 1), 6)
        }
      // the kernels' size
      const c = normals(9, 1),
        xs = normals(256, 2),
        ys = normals(256, 3)
      expect(Object.is(on.horner_loss!(0, c, xs, ys)[0], off.horner_loss!(0, c, xs, ys)[0])).toBe(true)
    })

    it(`${backend}: softmax cross-entropy, bit for bit for batches of 1–9`, () => {
      const C = 6
      for (let B = 1; B <= 9; B++) {
        const z = normals(B * C, B),
          label = Int32Array.from({ length: B }, (_, b) => (b * 5) % C)
        expect(Object.is(on.softmax_ce_loss!(0, z, label, C)[0], off.softmax_ce_loss!(0, z, label, C)[0])).toBe(true)
        const gOn = grad(on.softmax_ce_loss!, { loss: 0 }),
          gOff = grad(off.softmax_ce_loss!, { loss: 0 })
        gOn.run(0, z, label, C)
        gOff.run(0, z, label, C)
        expect(sameBits(gOn.buffers[1]!, gOff.buffers[1]!)).toBe(true)
        const loss = (zz: Float64Array) => off.softmax_ce_loss!(0, zz, label, C)[0] as number
        expect(gOn.buffers[1]![0]).toBeCloseTo(central(loss, z, 0), 6)
      }
    })

    it(`${backend}: a loop counting down to 2, an output element per iteration, bit for bit`, () => {
      for (const d of [0, 1, 4])
        for (let n = 0; n <= 11; n++) {
          const w = normals(d + 1, 5 + d),
            xs = normals(n, 9 + n)
          const oa = normals(n, 13),
            ob = oa.slice()
          const ra = on.down_loss!(0.5, w, xs, oa, d),
            rb = off.down_loss!(0.5, w, xs, ob, d)
          expect(Object.is(ra[0], rb[0])).toBe(true)
          expect(sameBits(oa, ob)).toBe(true)
          const gOn = grad(on.down_loss!, { loss: 0 }),
            gOff = grad(off.down_loss!, { loss: 0 })
          gOn.run(0, w, xs, normals(n, 13), d)
          gOff.run(0, w, xs, normals(n, 13), d)
          for (const b of [1, 2, 3]) expect(sameBits(gOn.buffers[b]!, gOff.buffers[b]!)).toBe(true)
          const loss = (ww: Float64Array) => off.down_loss!(0, ww, xs, normals(n, 13), d)[0] as number
          expect(gOn.buffers[1]![d]).toBeCloseTo(central(loss, w, d), 6)
        }
    })
  }
})
