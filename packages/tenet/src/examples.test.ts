import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, rev } from './index.js'
import {
  bennettSource,
  complexLogSource,
  fibonacciSource,
  multiplierSource,
  sparseDotMergeSource,
  sparseDotSource,
  ummSource,
} from './examples/index.js'
import { randomCsc } from '@tenet/testing'
import { compile, template } from './test-util.js'

const backends = ['cpu', 'interpreter', 'wasm'] as const
// the wasm backend comes from its package: a registry with it registered
const wasmRegistry = createRegistry().registerBackend(wasmBackend)

function fib(n: number): number {
  // rrfib(n) counts the calls of the recursion: rrfib(0) = 1, rrfib(1) = 1, ... (Fibonacci)
  let a = 1,
    b = 1
  for (let i = 1; i < n; i++) [a, b] = [b, a + b]
  return n === 0 ? 1 : b
}

function denseDot(m: number, n: number, a: ReturnType<typeof randomCsc>, b: ReturnType<typeof randomCsc>): number {
  const da = new Float64Array(m * n),
    db = new Float64Array(m * n)
  for (let j = 0; j < n; j++) {
    for (let k = a.colptr[j]!; k < a.colptr[j + 1]!; k++) da[j * m + a.rowval[k]!] = a.nzval[k]!
    for (let k = b.colptr[j]!; k < b.colptr[j + 1]!; k++) db[j * m + b.rowval[k]!] = b.nzval[k]!
  }
  let r = 0
  for (let i = 0; i < m * n; i++) r += da[i]! * db[i]!
  return r
}

describe.each(backends)("the papers' programs on the %s backend", (backend) => {
  const tag = backend === 'wasm' ? rev.with({ backend, registry: wasmRegistry }) : rev.with({ backend })

  it('multiplier(2, 3, 5) == [17, 3, 5] and back', () => {
    const m = compile(multiplierSource, tag)
    expect(m.multiplier!(2, 3, 5)).toEqual([17, 3, 5])
    expect(m.multiplier!.inverse(17, 3, 5)).toEqual([2, 3, 5])
  })

  it('complex log equals Math.log/Math.atan2 on the parts, and uncomputes', () => {
    const m = compile(complexLogSource, tag)
    for (const [re, im] of [
      [3, 4],
      [-1, 0.5],
      [0.2, -7],
      [-2, -2],
    ] as const) {
      const [yr, yi, xr, xi] = m.complex_log!(0.25, -0.5, re, im) as number[]
      expect(yr).toBeCloseTo(0.25 + Math.log(Math.hypot(re, im)), 14)
      expect(yi).toBeCloseTo(-0.5 + Math.atan2(im, re), 14)
      expect([xr, xi]).toEqual([re, im])
      const back = m.complex_log!.inverse(yr, yi, xr, xi) as number[]
      expect(back[0]).toBeCloseTo(0.25, 14)
      expect(back[1]).toBeCloseTo(-0.5, 14)
    }
  })

  it('rrfib computes Fibonacci numbers and its inverse returns to zero', () => {
    const m = compile(fibonacciSource, tag)
    for (const n of [0, 1, 2, 5, 10, 15]) {
      const [out] = m.rrfib!(0, n) as number[]
      expect(out).toBe(fib(n))
      expect(m.rrfib!.inverse(out, n)).toEqual([0, n])
    }
  })

  it('sparse dot product with a branch keeper matches a dense reference and uncalls', () => {
    const m = compile(sparseDotSource, tag)
    const rows = 60,
      cols = 50
    const a = randomCsc(rows, cols, 0.1, 1),
      b = randomCsc(rows, cols, 0.1, 2)
    const args = [0.5, rows, cols, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval]
    const [r] = m.sparse_dot!(...args) as number[]
    expect(r).toBeCloseTo(0.5 + denseDot(rows, cols, a, b), 12)
    const back = m.sparse_dot!.inverse(r, ...args.slice(1)) as number[]
    expect(back[0]).toBeCloseTo(0.5, 12)
  })

  it('the keeper-free sparse dot (merge with post-conditions) agrees and uncalls', () => {
    const m = compile(sparseDotMergeSource, tag)
    for (const [rows, cols, dens, seed] of [
      [60, 50, 0.1, 3],
      [30, 40, 0.3, 4],
      [10, 10, 0.0, 5],
      [20, 5, 1.0, 6],
    ] as const) {
      const a = randomCsc(rows, cols, dens, seed),
        b = randomCsc(rows, cols, dens * 0.7, seed + 10)
      const args = [0.5, rows, cols, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval]
      const [r] = m.sparse_dot_merge!(...args) as number[]
      expect(r).toBeCloseTo(0.5 + denseDot(rows, cols, a, b), 12)
      expect((m.sparse_dot_merge!.inverse(r, ...args.slice(1)) as number[])[0]).toBeCloseTo(0.5, 12)
    }
  })

  it('the unitary matrix multiply i_umm preserves the norm and its inverse restores x', () => {
    const m = compile(ummSource, tag)
    const M = 6,
      N = 3
    const x = Float64Array.from({ length: M * N }, (_, i) => Math.sin(i + 1))
    const theta = Float64Array.from({ length: (M * (M - 1)) / 2 }, (_, i) => 0.3 * i - 1)
    const x0 = x.slice()
    m.i_umm!(x, theta, M, N)
    for (let l = 0; l < N; l++) {
      const norm = (v: Float64Array) => Math.hypot(...v.subarray(l * M, (l + 1) * M))
      expect(norm(x)).toBeCloseTo(norm(x0), 12)
    }
    expect(Array.from(x)).not.toEqual(Array.from(x0))
    m.i_umm!.inverse(x, theta, M, N)
    for (let i = 0; i < x.length; i++) expect(x[i]).toBeCloseTo(x0[i]!, 12)
  })

  it("Bennett's algorithm (k = 4, n = 4): (2k−1)ⁿ steps, peak n(k−1)+2 states, 2²⁵⁶ kept", () => {
    let steps = 0,
      peak = 0
    const countStep = () => {
      steps++
    }
    const countLive = (state: Float64Array) => {
      let live = 0
      for (const v of state) if (v !== 0) live++
      peak = Math.max(peak, live)
    }
    const src = bennettSource('${0}', '${1}')
    const parts = src.split(/\$\{[01]\}/)
    const m = tag(template(...parts), countStep, countLive)
    const k = 4,
      n = 4,
      N = k ** n
    const state = new Float64Array(N + 1)
    state[0] = 1
    m.bennett!(state, k, 0, N)
    expect(steps).toBe((2 * k - 1) ** n)
    expect(peak).toBe(n * (k - 1) + 2)
    expect(state[N]).toBe(2 ** 256)
    expect(Array.from(state).filter((v) => v !== 0)).toEqual([1, 2 ** 256])
    steps = 0
    m.bennett!.inverse(state, k, 0, N)
    expect(steps).toBe(2401)
    expect(Array.from(state).filter((v) => v !== 0)).toEqual([1])
  })
})
