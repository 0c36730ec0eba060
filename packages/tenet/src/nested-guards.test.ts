/**
 * `hoist-bounds` hoists the test of a versioned inner loop over the loops around it (one test for
 * a nest, the nest as written where it fails): programs of two- and three-level nests, run with
 * checks on by the interpreter (the reference, which hoists nothing), the cpu backend and the
 * wasm backend, forwards and backwards, with arguments that put a failing access at the first,
 * a middle and the last iteration of each level, that wrap i32 index arithmetic (strides near
 * 2³⁰, offsets near ±2³¹), that run no iteration, and whose results are printed bit for bit.
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, rev, TenetError, type TenetModule } from './index.js'
import { rnnLossSource } from '@tenet/testing'

const registry = createRegistry().registerBackend(wasmBackend)
const engines = {
  interpreter: rev.with({ backend: 'interpreter' }),
  cpu: rev.with({ backend: 'cpu' }),
  wasm: rev.with({ backend: 'wasm', registry }),
}
const compile = (tag: (typeof engines)[keyof typeof engines], src: string): TenetModule =>
  tag([src] as unknown as TemplateStringsArray)
const text = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    ArrayBuffer.isView(x) ? Array.from(x as Float64Array, (e) => (Object.is(e, -0) ? '-0' : e)) : x,
  )
function outcome(m: TenetModule, entry: string, args: unknown[], inverse: boolean): string {
  let out: unknown
  try {
    const f = (m as any)[entry]
    out = (inverse ? f.inverse : f)(...args)
  } catch (e) {
    if (!TenetError.isInstance(e)) return `non-tenet ${e}`
    const t = e as TenetError
    return `${t.code} | ${t.message} | ${t.line}:${t.column} | ${text(args)}`
  }
  return `${text(out)} | ${text(args)}`
}
const F = (n: number, f = (i: number) => (i % 7) - 3 + i / 8) => Float64Array.from({ length: n }, (_, i) => f(i))

/** Nests, each with argument lists (fresh arrays per run). */
const nests: Array<[string, string, Array<() => unknown[]>]> = [
  [
    'row-major matrix-vector product',
    `fn f(y: f64[], A: f64[], x: f64[], n: i32, m: i32) {
  for i in 0..n { for j in 0..m { y[i] += A[i * m + j] * x[j] } }
}`,
    [
      () => [F(3), F(12), F(4), 3, 4],
      () => [F(3), F(11), F(4), 3, 4], // the last element of A is missing: fails at the last (i, j)
      () => [F(2), F(12), F(4), 3, 4], // y too short: fails at i = 2
      () => [F(3), F(12), F(3), 3, 4], // x too short: fails at j = 3 of i = 0
      () => [F(3), F(12), F(4), 0, 4],
      () => [F(3), F(12), F(4), 3, 0],
      () => [F(3), F(12), F(4), 3, -1],
      () => [F(3), F(12), F(4), 3, 1073741824], // i * m wraps
      () => [F(3), F(12), F(4), 5, 1073741824],
      () => [F(3), F(12), F(4), -2147483648, 4],
    ],
  ],
  [
    'column-major with an offset',
    `fn f(y: f64[], A: f64[], n: i32, m: i32, k: i32) {
  for i in 0..n { for j in 0..m { y[i] += A[i + n * j + k] } }
}`,
    [
      () => [F(3), F(12), 3, 4, 0],
      () => [F(3), F(12), 3, 4, 1], // fails at the last (i, j)
      () => [F(3), F(12), 3, 4, -1], // fails at the first
      () => [F(3), F(12), 3, 4, 2147483647],
      () => [F(3), F(12), 3, 4, -2147483648],
      () => [F(3), F(12), 3, 1431655766, 0], // n * j wraps
    ],
  ],
  [
    'three levels (the RNN’s shape), forwards and in reverse',
    `fn f(pre: f64[], W: f64[], hs: f64[], H: i32, T: i32) {
  for t in 0..T { for i in reverse 0..H {
    for j in 0..H { pre[t * H + i] += W[i * H + j] * hs[t * H + j] }
    hs[(t + 1) * H + i] += pre[t * H + i]
  } }
}`,
    [
      () => [F(6), F(4), F(8), 2, 3],
      () => [F(5), F(4), F(8), 2, 3], // pre too short: fails at t = 2
      () => [F(6), F(3), F(8), 2, 3], // W too short: fails at i = 1, j = 1 of t = 0
      () => [F(6), F(4), F(7), 2, 3], // hs too short: fails at the last t
      () => [F(6), F(4), F(8), 2, 0],
      () => [F(6), F(4), F(8), 0, 3],
      () => [F(6), F(4), F(8), 65536, 3], // t * H wraps only at large t
      () => [F(6), F(4), F(8), 46341, 2],
    ],
  ],
  [
    'a stride whose ends are in range and whose middle wraps',
    `fn f(z: f64[], y: f64[], A: f64[], n: i32, m: i32, s: i32) {
  for i in 0..n {
    z[i] += 1.0
    for j in 0..m { y[j] += A[s * i + j] }
  }
}`,
    [
      () => [F(5), F(2), F(12), 3, 2, 4],
      () => [F(5), F(2), F(12), 3, 2, -2147483648], // s·1 wraps to −2³¹, s·2 to 0
      () => [F(5), F(2), F(12), 5, 2, 1073741824], // s·4 wraps to 0, s·1 is out of range
      () => [F(5), F(2), F(12), 2, 2, -2147483648],
      () => [F(5), F(2), F(12), 1, 2, -2147483648],
    ],
  ],
  [
    'an inner loop whose range moves with the outer variable (kept per iteration)',
    `fn f(z: f64[], y: f64[], x: f64[], n: i32, m: i32) {
  for i in 0..n {
    z[i] += 1.0
    for j in i..i + m { y[i] += x[j] }
  }
}`,
    [() => [F(3), F(3), F(5), 3, 3], () => [F(3), F(3), F(4), 3, 3], () => [F(3), F(3), F(5), 3, 2147483647]],
  ],
  [
    'an offset the outer body changes (kept per iteration)',
    `fn f(z: f64[], y: f64[], x: f64[], n: i32, k: i32) {
  for i in 0..n {
    z[i] += 1.0
    for j in 0..n { y[j] += x[j + k] }
    k += 1
  }
}`,
    [() => [F(3), F(3), F(5), 3, 0], () => [F(3), F(3), F(4), 3, 0], () => [F(3), F(3), F(5), 3, -1]],
  ],
]

describe('hoist-bounds on nests against the interpreter (cpu, wasm; checks on)', () => {
  for (const [name, src, argLists] of nests)
    it(name, () => {
      const modules = Object.fromEntries(Object.entries(engines).map(([b, tag]) => [b, compile(tag, src)]))
      for (const inverse of [false, true])
        argLists.forEach((args, k) => {
          const r = Object.fromEntries(Object.entries(modules).map(([b, m]) => [b, outcome(m, 'f', args(), inverse)]))
          expect(r.cpu, `${name} #${k} ${inverse}`).toBe(r.interpreter)
          expect(r.wasm, `${name} #${k} ${inverse}`).toBe(r.interpreter)
        })
    })

  it('the tanh RNN loss: the interpreter’s bits and errors (short arrays at each argument)', () => {
    const modules = Object.fromEntries(Object.entries(engines).map(([b, tag]) => [b, compile(tag, rnnLossSource)]))
    const [H, D, T] = [3, 2, 4]
    const full = () => [0, F(H * H, (i) => Math.sin(i)), F(H * D, (i) => Math.cos(i)), F(H), F(T * D), H, D, T]
    const lists = [full()]
    for (let p = 1; p <= 4; p++) {
      const a = full()
      a[p] = (a[p] as Float64Array).slice(0, (a[p] as Float64Array).length - 1)
      lists.push(a)
    }
    for (const inverse of [false, true])
      for (const args of lists) {
        const r = Object.fromEntries(
          Object.entries(modules).map(([b, m]) => [
            b,
            outcome(
              m,
              'rnn_loss',
              args.map((x) => (ArrayBuffer.isView(x) ? x.slice() : x)),
              inverse,
            ),
          ]),
        )
        expect(r.cpu).toBe(r.interpreter)
        expect(r.wasm).toBe(r.interpreter)
      }
  })
})
