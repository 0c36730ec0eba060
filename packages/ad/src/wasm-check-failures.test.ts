/**
 * Failed run-time checks in the gradient programs of the wasm backend (a trap turned into
 * the check's error by the direct driver's `error`, or the wrapper's), against the cpu backend's
 * errors; after a failure the gradient runs again with the right values.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from '@tenet/backend-wasm'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { besselSource, raisedError } from '@tenet/testing'
import { grad, hessian, type GradientFunction } from './index.js'
import { DRIVER } from './driver.js'

const text = `
fn anc(y: f64, x: f64[], k: i32) {
  t <- 0.0
  t += x[0] * f64(k)
  y += sin(t) * x[1]
  t -= x[0] * 3.0
  t -> 0.0
}
fn fac(y: f64, x: f64[]) {
  y += x[1]
  y *= x[0]
}
fn rng(y: f64, x: f64[], n: i32, d: i32) {
  for i in 0..n { y += x[i] * x[i]
    n += d }
}
fn inner(y: f64, a: f64, k: i32) {
  j: i32 <- 0
  j += k
  y += a * a * f64(j)
  j -> 2
}
fn outer(y: f64, x: f64[], k: i32) {
  for i in 0..len(x) { inner(y, x[i], k + i) }
}
fn idx(y: f64, x: f64[], i: i32) { y += x[i] * x[i] }
fn tng(y: f64, a: f64, k: i32) {
  t <- 0.0
  t += a * f64(k)
  y += t * a
  t -= a * 2.0
  t -> 0.0
}
`

const sourceOf = (g: GradientFunction): string => (g as unknown as Record<symbol, { source: string }>)[DRIVER]!.source

const calls: Array<[string, unknown[]]> = [
  ['anc', [0, Float64Array.of(0.5, 2), 3]],
  ['anc', [0, Float64Array.of(0.5, 2), 2]],
  ['anc', [0, Float64Array.of(0.5, 2), 3]],
  ['fac', [1, Float64Array.of(2, 3)]],
  ['fac', [1, Float64Array.of(0, 3)]],
  ['fac', [1, Float64Array.of(-0, 3)]],
  ['fac', [1, Float64Array.of(Number.NaN, 3)]],
  ['fac', [1, Float64Array.of(2, 3)]],
  ['rng', [0, Float64Array.of(1, 2, 3), 3, 0]],
  ['rng', [0, Float64Array.of(1, 2, 3), 2, 1]],
  ['rng', [0, Float64Array.of(1, 2, 3), 3, -1]],
  ['rng', [0, Float64Array.of(1, 2, 3), 3, 0]],
  ['outer', [0, Float64Array.of(1, 2), 2]],
  ['outer', [0, Float64Array.of(1), 2]],
  ['outer', [0, Float64Array.of(1, 2, 3), -(2 ** 31)]],
  ['outer', [0, Float64Array.of(1, 2), 1]],
  ['outer', [0, Float64Array.of(1), 2]],
  ['idx', [0, Float64Array.of(1, 2), 1]],
  ['idx', [0, Float64Array.of(1, 2), 2]],
  ['idx', [0, Float64Array.of(1, 2), -(2 ** 31)]],
  ['idx', [0, Float64Array.of(1, 2), 0]],
  ['tng', [0, 0.5, 2]],
  ['tng', [0, 0.5, 3]],
  ['tng', [0, 0.5, 2]],
]

function run(g: GradientFunction, args: unknown[]): string {
  let out = ''
  const err = raisedError(() => {
    const r = g(...args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a)))
    out = JSON.stringify(r, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))
  })
  return err === 'no error' ? `${out} loss ${g.lastLoss}` : err
}

describe('failed checks in wasm gradients (direct driver), as the cpu backend’s', () => {
  for (const fuse of [true, false])
    for (const mode of ['auto', 'reverse'] as const)
      it(`fuse ${fuse}, mode ${mode}`, () => {
        const registry = createRegistry()
          .registerBackend(cpuBackend)
          .registerBackend(createWasmBackend())
          .registerBackend(interpreterBackend)
        const make = (backend: string) =>
          compileModule(parse({ text, name: `wcf-${backend}` }), { registry, backend, checks: true })
        const w = make('wasm'),
          c = make('cpu')
        const gw = new Map<string, GradientFunction>(),
          gc = new Map<string, GradientFunction>()
        const diffs: string[] = []
        let direct = 0
        for (const [name, args] of calls) {
          if (!gw.has(name)) {
            gw.set(name, grad(w[name]!, { loss: 0, fuse, mode }))
            gc.set(name, grad(c[name]!, { loss: 0, fuse, mode }))
            if (sourceOf(gw.get(name)!).includes('EA.call(')) direct++
          }
          const a = run(gw.get(name)!, args),
            b = run(gc.get(name)!, args)
          if (a !== b) diffs.push(`${name}(${args.map(String)}): wasm ${a} | cpu ${b}`)
        }
        expect(diffs).toEqual([])
        expect(direct).toBeGreaterThan(0)
      })
})

describe('Hessians of a function whose check fails (wasm as the cpu backend)', () => {
  const htext = `
fn anc(y: f64, x: f64[], k: i32) {
  t <- 0.0
  t += x[0] * f64(k)
  y += sin(t) * x[1] * x[1]
  t -= x[0] * 3.0
  t -> 0.0
}
fn fac(y: f64, x: f64[]) {
  y += x[1] * x[1]
  y *= x[0]
}
`
  const make = (backend: string) =>
    compileModule(parse({ text: htext, name: `h-${backend}` }), {
      registry: createRegistry()
        .registerBackend(cpuBackend)
        .registerBackend(createWasmBackend())
        .registerBackend(interpreterBackend),
      backend,
      checks: true,
    })
  const hcalls: Array<[string, unknown[]]> = [
    ['anc', [0, Float64Array.of(0.5, 2), 3]],
    ['anc', [0, Float64Array.of(0.5, 2), 2]],
    ['anc', [0, Float64Array.of(0.5, 2), 3]],
    ['fac', [1, Float64Array.of(2, 3)]],
    ['fac', [1, Float64Array.of(0, 3)]],
    ['fac', [1, Float64Array.of(2, 3)]],
  ]
  const hrun = (
    m: ReturnType<typeof make>,
    name: string,
    a: unknown[],
    method: 'forward-over-reverse' | 'reverse-over-forward',
  ) => {
    let o = ''
    const e = raisedError(() => {
      const args = a.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v))
      o = JSON.stringify(Array.from(hessian(m[name]!, args, { loss: 0, wrt: [1], method })))
    })
    return e === 'no error' ? o : e
  }
  it('the same values and errors, both methods, a failure between passing calls', () => {
    const w = make('wasm'),
      c = make('cpu')
    const diffs: string[] = []
    for (const method of ['forward-over-reverse', 'reverse-over-forward'] as const)
      for (const [n, a] of hcalls) {
        const x = hrun(c, n, a, method),
          y = hrun(w, n, a, method)
        if (x !== y) diffs.push(`${method} ${n}(${a.map(String)}): cpu ${x} | wasm ${y}`)
      }
    expect(diffs).toEqual([])
  })
})

describe('failures in a checked map of series, through the gradient', () => {
  const besselText = `${besselSource}
fn f(y: f64, nu: i32, z: f64[]) {
  out: f64[] <- zeros(len(z))
  for i in 0..len(z) { ibesselj(out[i], nu, z[i]) }
  for i in 0..len(z) { y += out[i] * out[i] }
  for i in 0..len(z) { ~ibesselj(out[i], nu, z[i]) }
  out -> zeros(len(z))
}`
  it('the Bessel batch’s gradient (checked lane pairs, direct driver): the same values and errors as the cpu backend’s', () => {
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend())
    const make = (backend: string) =>
      compileModule(parse({ text: besselText, name: `b-${backend}` }), { registry, backend, checks: true })
    const w = make('wasm'),
      c = make('cpu')
    const vals = [0, 1.5, 40, Number.NaN, 3]
    const diffs: string[] = []
    let errs = 0,
      runs = 0
    for (const fuse of [true, false]) {
      const gw = grad(w.f!, { loss: 0, fuse }),
        gc = grad(c.f!, { loss: 0, fuse })
      for (const nu of [0, 1, 13])
        for (const a of vals)
          for (const b of vals) {
            const z = Float64Array.of(a, b, 0.7)
            const one = (g: GradientFunction) => {
              let o = ''
              const e = raisedError(() => {
                const r = g(0, nu, z.slice()) as unknown[]
                o = JSON.stringify(Array.from(r[2] as Float64Array)) + g.lastLoss
              })
              return e === 'no error' ? o : e
            }
            const x = one(gc),
              y = one(gw)
            runs++
            if (x.startsWith('runtime')) errs++
            if (x !== y) diffs.push(`fuse ${fuse} nu ${nu} z ${Array.from(z)}: cpu ${x} | wasm ${y}`)
          }
    }
    expect(diffs.slice(0, 8)).toEqual([])
    expect(errs).toBeGreaterThan(20)
    expect(errs).toBeLessThan(runs)
  })
})
