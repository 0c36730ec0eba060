/**
 * Pass `jam-iterations` with and without it, checks off, cpu and wasm: objective,
 * `.inverse` and gradient bit for bit (shared elements at a column and one index, reverse and
 * down-counting outer loops, signed zeros, NaN and infinities).
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { disabledPasses } from '@tenet/ir/backend'
import { createRegistry, grad, rev, TENET_FUNCTION, type TenetModule } from './index.js'

const registry = createRegistry().registerBackend(wasmBackend)
const source = `fn f(loss: f64, g: f64[], c: f64[], xs: f64[], w: f64[]) {
  for j in reverse 0..=len(xs) - 1 {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    }
    for k in 1..len(c) { g[k] += acc[k] * w[j] }
    g[0] += acc[len(c) - 1] - w[j]
    loss += acc[len(c) - 1] * acc[len(c) - 1]
    ~routine
  }
}
fn h(loss: f64, g: f64[], c: f64[], xs: f64[], w: f64[]) {
  for j in len(xs) - 1..=0 by -1 {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[len(c) - 1] += xs[j]
      for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * xs[j] - c[k] }
    }
    g[len(c)] -= acc[0] * w[j]
    for k in len(c) - 1..=0 by -1 { g[k] += acc[k] * w[j] }
    loss += acc[0] * w[j]
    ~routine
  }
}`
let fresh = 0
function compile(backend: 'cpu' | 'wasm', on: boolean): TenetModule {
  const tag = rev.with({ checks: false, backend, registry })
  const text = `${source}\n// jam-bits ${fresh++}`
  if (!on) disabledPasses.add('jam-iterations')
  try {
    const m = tag(Object.assign([text], { raw: [text] }) as unknown as TemplateStringsArray)
    m.f!(0, new Float64Array(3), new Float64Array(2), new Float64Array(1), new Float64Array(1))
    m.h!(0, new Float64Array(3), new Float64Array(2), new Float64Array(1), new Float64Array(1))
    m.f!.inverse(0, new Float64Array(3), new Float64Array(2), new Float64Array(1), new Float64Array(1))
    m.h!.inverse(0, new Float64Array(3), new Float64Array(2), new Float64Array(1), new Float64Array(1))
    for (const n of ['f', 'h'])
      grad(m[n]!, { loss: 0 }).run(
        0,
        new Float64Array(3),
        new Float64Array(2),
        new Float64Array(1),
        new Float64Array(1),
      )
    return m
  } finally {
    if (!on) disabledPasses.delete('jam-iterations')
  }
}
const specials = [-0, 0, Number.NaN, Number.POSITIVE_INFINITY, -1e308, 1e-310, 0.5, -2.5, 3, -0]
function values(n: number, seed: number): Float64Array {
  let s = seed
  return Float64Array.from({ length: n }, () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    const r = (s >>> 8) & 0xffff
    return r % 5 === 0 ? specials[r % specials.length]! : r / 0x10000 - 0.5
  })
}
const bits = (a: ArrayLike<number>) =>
  Array.from(a)
    .map((v) => (Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : String(v)))
    .join(',')

describe('jam-iterations, objective, inverse and gradient bit for bit', () => {
  for (const backend of ['cpu', 'wasm'] as const) {
    it(`${backend}: f and h, 0–11 points, degrees 0–4`, () => {
      const on = compile(backend, true),
        off = compile(backend, false)
      if (backend === 'cpu')
        for (const name of ['f', 'h']) {
          const text = (m: TenetModule) => m[name]![TENET_FUNCTION].compiled.sourceOf?.(name, false)
          expect(text(on), name).not.toBe(text(off))
        }
      for (const name of ['f', 'h'])
        for (const degree of [0, 1, 4])
          for (let n = 0; n <= 11; n++)
            for (const seed of [1, 2, 3]) {
              const mk = () => [
                values(1, seed)[0]!,
                values(degree + 2, seed + 10),
                values(degree + 1, seed + 20),
                values(n, seed + 30),
                values(n, seed + 40),
              ]
              const a = mk(),
                b = mk()
              const ra = on[name]!(...a),
                rb = off[name]!(...b)
              const show = (r: unknown[], args: unknown[]) =>
                `${bits([r[0] as number])} | ${bits(args[1] as Float64Array)}`
              expect(show(ra, a), `${name} ${degree} ${n} ${seed}`).toBe(show(rb, b))
              const ia = mk(),
                ib = mk()
              const qa = on[name]!.inverse(...ia),
                qb = off[name]!.inverse(...ib)
              expect(show(qa, ia), `inverse ${name} ${degree} ${n} ${seed}`).toBe(show(qb, ib))
              const ga = grad(on[name]!, { loss: 0 }),
                gb = grad(off[name]!, { loss: 0 })
              const x = mk(),
                y = mk()
              ga.run(...x)
              const sa = [1, 2, 3, 4].map((k) => bits(ga.buffers[k]!))
              gb.run(...y)
              const sb = [1, 2, 3, 4].map((k) => bits(gb.buffers[k]!))
              expect(sa.join(' | '), `grad ${name} ${degree} ${n} ${seed}`).toBe(sb.join(' | '))
            }
    })
  }
})
