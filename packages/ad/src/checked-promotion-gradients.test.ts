import { describe, expect, it } from 'vitest'
import { disabledPasses } from '@tenet/ir/backend'
import { raisedError } from '@tenet/testing'
import { gradient } from './index.js'
import { tag } from './test-util.js'

const src = (T: string) => `fn f(e: ${T}, a: ${T}[], x: ${T}[], s: ${T}, n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (i != j, ~) {
        a[2 * i] += s * x[j] * x[j]
        a[2 * i + 1] += sin(a[2 * i]) * s
      }
    }
  }
  for k in 0..len(a) { e += a[k] * a[k] }
}`
const args = (T: any, la: number, n: number) => () => [
  0,
  T.from(Array.from({ length: la }, (_, k) => k / 8 - 0.2)),
  T.from(Array.from({ length: n }, (_, k) => 1 + k / 3)),
  0.7,
  n,
]
const text = (v: unknown) => JSON.stringify(v, (_k, x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x))
const src2 = `fn f(e: f64, x: f64[], y: f64[], k: i32, n: i32) {
  for i in 0..n { y[i] += x[i + k] * x[i + k] }
  for i in reverse 0..n { e += y[i] * sin(y[i]) }
}`
describe('gradient hoist', () => {
  for (const [lx, ly, k, n] of [
    [4, 4, 0, 4],
    [4, 4, 1, 4],
    [4, 3, 0, 4],
    [4, 4, -1, 2],
    [4, 4, 2147483647, 2],
  ])
    it(`lx ${lx} ly ${ly} k ${k} n ${n}`, () => {
      const res: Record<string, string> = {}
      for (const [name, opts] of [
        ['cpu', { checks: true }],
        ['interp', { checks: true, backend: 'interpreter' }],
      ] as const) {
        const m = tag(opts)(src2)
        let g: unknown
        const a = [
          0,
          Float64Array.from({ length: lx }, (_, q) => q / 3 + 0.1),
          Float64Array.from({ length: ly }, (_, q) => q / 5),
          k,
          n,
        ]
        const e = raisedError(() => {
          g = gradient(m.f!, a, { loss: 0 })
        })
        res[name] = e === 'no error' ? text(g) + ' ' + text(a) : e
      }
      expect(res.cpu).toBe(res.interp)
    })
})
describe('gradients with promote-checked', () => {
  for (const T of ['f64', 'f32'])
    for (const [la, n] of [
      [8, 4],
      [7, 4],
      [3, 4],
      [0, 1],
      [2, 1],
    ] as const)
      it(`${T} la=${la} n=${n}`, () => {
        const A = T === 'f64' ? Float64Array : Float32Array
        const mk = args(A, la, n)
        const res: Record<string, string> = {}
        for (const [name, opts, off] of [
          ['cpu on', { checks: true }, false],
          ['cpu on nopass', { checks: true }, true],
          ['interp on', { checks: true, backend: 'interpreter' }, false],
        ] as const) {
          if (off) disabledPasses.add('promote-checked')
          const m = tag(opts)(src(T))
          disabledPasses.delete('promote-checked')
          let g: unknown
          const a = mk()
          const e = raisedError(() => {
            g = gradient(m.f!, a, { loss: 0 })
          })
          res[name] = e === 'no error' ? text(g) + ' ' + text(a) : e
        }
        expect(res['cpu on']).toBe(res['cpu on nopass'])
        expect(res['cpu on']).toBe(res['interp on'])
      })
})
