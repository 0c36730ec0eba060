/**
 * Pass `jam-iterations` under gradients (from review 17g) (fused and two-sweep), checks off, cpu and
 * wasm against the interpreter, bit for bit.
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, grad, rev, type TenetModule } from './index.js'

const registry = createRegistry().registerBackend(wasmBackend)
const engines = {
  ref: rev.with({ backend: 'interpreter', checks: false }),
  cpu: rev.with({ backend: 'cpu', checks: false }),
  wasm: rev.with({ backend: 'wasm', registry, checks: false }),
}
type Engine = keyof typeof engines
const compile = (e: Engine, src: string): TenetModule => engines[e]([src] as unknown as TemplateStringsArray)
const bits = (x: number) => {
  const b = new DataView(new ArrayBuffer(8))
  b.setFloat64(0, x)
  return `${x}:${b.getBigUint64(0).toString(16)}`
}
const text = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    ArrayBuffer.isView(x) ? Array.from(x as Float64Array, (e) => bits(e)) : typeof x === 'number' ? bits(x) : x,
  )
const xs = (n: number, at = 0.1) => Float64Array.from({ length: n }, (_, i) => at + 0.3 * i)

function compare(src: string, lists: Array<() => unknown[]>): string[] {
  const problems: string[] = []
  const ref = compile('ref', src)
  for (const e of ['cpu', 'wasm'] as Engine[]) {
    const m = compile(e, src)
    for (const fuse of [true, false])
      for (const [k, args] of lists.entries()) {
        const run = (mm: TenetModule) => {
          try {
            return text(grad((mm as any).f, { loss: 0, fuse })(...args()))
          } catch (err) {
            return `error ${(err as Error).message}`
          }
        }
        const got = run(m),
          want = run(ref)
        if (got !== want) problems.push(`${e} fuse=${fuse} #${k}\n got  ${got}\n want ${want}`)
      }
  }
  return problems
}

describe('jam-iterations guards: gradients', () => {
  it('wasm, gradient of a loop with an ancilla allocated under an if that does not run (length ns[0], ns empty)', () => {
    const src = `fn f(loss: f64, ns: i32[], c: f64[], xs: f64[], out: f64[]) {
  for j in 0..len(xs) {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    }
    out[j] += acc[len(c) - 1] * acc[len(c) - 1]
    if (len(ns) > 0, len(ns) > 0) {
      t: f64[] <- zeros(ns[0])
      t[0] += xs[j]
      out[j] += t[0] * t[0]
      t[0] -= xs[j]
      t -> zeros(ns[0])
    }
    ~routine
  }
  for j in 0..len(xs) { loss += out[j] * out[j] }
}`
    expect(
      compare(src, [
        () => [0, new Int32Array(0), xs(3, 0.5), xs(9), xs(9, 2)],
        () => [0, Int32Array.of(2), xs(3, 0.5), xs(9), xs(9, 2)],
      ]),
    ).toEqual([])
  })
  it('gradients of loops whose read-only arrays appear only in the fused inner loop, with down-counting and reverse forms', () => {
    const bad: string[] = []
    for (const head of ['for j in 0..len(xs)', 'for j in len(xs) - 1..=0 by -1', 'for j in reverse 0..len(xs)']) {
      const src = `fn f(loss: f64, c: f64[], d: f64[], xs: f64[], g: f64[]) {
  ${head} {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] * d[k - 1] }
    }
    for k in 1..len(c) { g[k] += acc[k] * d[k] }
    g[0] -= acc[0] * xs[j]
    loss += acc[len(c) - 1] * acc[len(c) - 1] + g[0]
    ~routine
  }
}`
      for (const p of compare(
        src,
        [0, 1, 4, 5, 11].map((n) => () => [0, xs(4, 0.5), xs(4, -0.25), xs(n), xs(5, 2)]),
      ))
        bad.push(`${head}: ${p}`)
    }
    expect(bad).toEqual([])
  })
})
