/**
 * Review 15b: gradients of programs whose loop-carried history stores pass `carried-stores` drops
 * (in the function, its inverse and the adjoint's backward sweep): the same bits with the pass
 * switched off, and close to checks on (interpreter).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad } from './index.js'

afterEach(() => disabledPasses.delete('carried-stores'))

const exact = (v: unknown) => (typeof v !== 'number' ? v : Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : v)
const text = (xs: unknown) =>
  JSON.stringify(
    (xs as unknown[]).map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v))),
  )
const copy = (a: unknown[]) => a.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v))
const compile = (src: string, backend: string, checks: boolean) =>
  compileModule(parse({ text: src, name: 'g' }), {
    registry: createRegistry()
      .registerBackend(cpuBackend)
      .registerBackend(wasmBackend)
      .registerBackend(interpreterBackend),
    backend,
    checks,
  }).f!

const SOURCES: Record<string, string> = {
  horner: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[len(c) - 1] += c[len(c) - 1]
    for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * x + c[k] }
  }
  y += a[0] * a[0]
  ~routine
}`,
  prefix: `fn f(y: f64, c: f64[], x: f64) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] } }
  y += a[len(c) - 1] * x
  ~routine }`,
  sweep: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += x
    for k in reverse len(c) - 2..=0 by -1 { a[k + 1] += a[k] * x + c[k] }
  }
  y += a[len(c) - 1] * c[0]
  ~routine
}`,
  branch: `fn f(y: f64, c: f64[], x: f64) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += sin(a[i - 1]) * x + c[i] } }
  if (x > 0.0, ~) { y += a[len(c) - 1] * x } else { y -= a[len(c) - 1] }
  ~routine }`,
}

const cs = (n: number) => Float64Array.from({ length: n }, (_, i) => Math.sin(i + 1) / 2)

describe('gradients through dropped carried stores', () => {
  for (const backend of ['cpu', 'wasm'])
    for (const [name, src] of Object.entries(SOURCES))
      it(`${name} on ${backend}: the same bits with the pass off, close to checks on`, () => {
        const run = (off: boolean, fuse: boolean) => {
          if (off) disabledPasses.add('carried-stores')
          else disabledPasses.delete('carried-stores')
          const g = grad(compile(src, backend, false), { loss: 0, fuse })
          const out: string[] = []
          for (const n of [1, 2, 3, 8, 1, 5])
            for (const x of [0.7, -1.3, -0, 0.2]) out.push(text(g(...copy([0, cs(n), x]))))
          disabledPasses.delete('carried-stores')
          return out
        }
        for (const fuse of [true, false]) expect(run(false, fuse)).toEqual(run(true, fuse))
        const ref = grad(compile(src, 'interpreter', true), { loss: 0 })
        const g = grad(compile(src, backend, false), { loss: 0 })
        for (const n of [1, 2, 3, 8, 1, 5])
          for (const x of [0.7, -1.3, 0.2]) {
            const a = JSON.parse(text(g(...copy([0, cs(n), x])))) as unknown[]
            const b = JSON.parse(text(ref(...copy([0, cs(n), x])))) as unknown[]
            expect(JSON.stringify(a.flat().map((v) => (typeof v === 'number' ? v.toPrecision(10) : v)))).toBe(
              JSON.stringify(b.flat().map((v) => (typeof v === 'number' ? v.toPrecision(10) : v))),
            )
          }
      })
})

import { createWasmBackend } from '@tenet/backend-wasm'

describe('gradients through uniform powers in map lanes', () => {
  const res = (f: () => unknown) => {
    try {
      return text(f())
    } catch (e) {
      return String(e)
    }
  }
  const src = `fn g(out: f64, x: f64, p: f64) {
  t <- 0.0
  t += x ** p
  if (t > 0.4, ~) { out += t * x } else { out -= t * 3.0 }
  t -= x ** p
  t -> 0.0
}
fn f(loss: f64, out: f64[], x: f64[], p: f64) {
  for i in 0..len(x) { g(out[i], x[i], p) }
  for i in 0..len(x) { loss += out[i] * out[i] }
}`
  const wasm = (simd: boolean, checks: boolean) =>
    compileModule(parse({ text: src, name: 'g' }), {
      registry: createRegistry().registerBackend({ ...createWasmBackend({ simd }), name: 'wasm' } as never),
      backend: 'wasm',
      checks,
    }).f!
  it('lanes and scalar wasm give the same gradient bits, p = 2, 1, other, -0, NaN', () => {
    const xs = (n: number) => Float64Array.from({ length: n }, (_, i) => [0.5, -1.5, 2, -0, 0, 1.25, 3][i % 7]!)
    for (const checks of [false, true]) {
      const lanes = grad(wasm(true, checks), { loss: 0 })
      const scalar = grad(wasm(false, checks), { loss: 0 })
      for (const p of [2, 1, 3, 0.5, -0, 0, -1, Number.NaN])
        for (const n of [1, 2, 5, 8]) {
          const args = () => [0, new Float64Array(n), xs(n), p]
          expect(
            res(() => lanes(...args())),
            `p ${p} n ${n} checks ${checks}`,
          ).toBe(res(() => scalar(...args())))
        }
    }
  })
})

import { hessian } from './index.js'

describe('Hessians through dropped carried stores', () => {
  for (const backend of ['cpu', 'wasm'])
    for (const name of ['horner', 'prefix', 'branch'])
      it(`${name} on ${backend}: the same Hessian bits with the pass off (both methods)`, () => {
        const run = (off: boolean) => {
          if (off) disabledPasses.add('carried-stores')
          try {
            const f = compile(SOURCES[name]!, backend, false)
            const out: string[] = []
            for (const method of ['forward-over-reverse', 'reverse-over-forward'] as const)
              for (const n of [1, 2, 4, 1, 3])
                for (const x of [0.7, -1.3])
                  out.push(text(Array.from(hessian(f, [0, cs(n), x], { loss: 0, wrt: [1, 2], method }))))
            return out
          } finally {
            disabledPasses.delete('carried-stores')
          }
        }
        expect(run(false)).toEqual(run(true))
      })
})
