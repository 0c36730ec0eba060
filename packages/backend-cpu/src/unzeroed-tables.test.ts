/**
 * The tables of pass `forward-pure-values` are never zeroed on the cpu backend: the pass marks the
 * allocation `overwritten` and its first update `init`, and the generated code computes that update
 * as `0 + value` and reuses the array as it is (stale elements are never read). One compiled module
 * called again and again, with lengths and values that change (so the reused table holds the last
 * call's values, some at indices this call does not write), gives the interpreter's doubles bit for
 * bit, forwards and backwards, with run-time checks on (no table) and off.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import { Random } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** A random pair of loops: the first builds `q[e]` and applies a primitive to it, the second applies it again. */
function loopPair(seed: number): string {
  const r = new Random(seed)
  const p = r.pick(['sqrt', 'exp', 'tanh', 'atan', 'log', 'cos'])
  const range = r.pick(['0..n', 'n - 1..=0 by -1', '0..len(d)', '0..n by 2'])
  const reverse = r.chance(0.5) && !range.includes('by') ? 'reverse ' : ''
  const use = r.pick([`g[e] += h[e] * (0.5 / ${p}(q[e]))`, `g[e] -= ${p}(q[e])`, `g[e] += ${p}(q[e]) * x[e]`])
  return `fn f(q: f64[], d: f64[], g: f64[], h: f64[], x: f64[], n: i32) {
  for e in ${range} {
    for j in 0..3 { q[e] += x[e + j] ** 2 }
    d[e] += ${r.pick([`${p}(q[e])`, `x[e] * ${p}(q[e])`])}
  }
  ${r.pick(['', 'h[0] += 1.5'])}
  for e in ${reverse}${range} {
    ${use}
  }
}`
}

/** A number as text that tells −0 from 0 and keeps NaN. */
const exact = (v: unknown) => (typeof v !== 'number' ? v : Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : v)

/** The arguments of call `c` (length L, loop bound n ≤ L). */
function args(L: number, n: number, c: number): unknown[] {
  return [
    Float64Array.from({ length: L }, (_, i) => 0.5 + i * 0.375 + c),
    Float64Array.from({ length: L }, (_, i) => Math.sin(i + 1 + c)),
    Float64Array.from({ length: L }, (_, i) => Math.cos(3 * i + 1)),
    Float64Array.from({ length: L }, (_, i) => 0.25 + Math.sin(2 * i + 0.5 + c) ** 2),
    Float64Array.from({ length: L + 3 }, (_, i) => Math.cos(i + 0.3 * c)),
    n,
  ]
}

const text = (xs: unknown[]) =>
  JSON.stringify(xs.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v))))

describe('tables that are never zeroed (cpu backend)', () => {
  it('the table of a fused gradient’s roots is reused without a fill, its first update `0 + value`', () => {
    const m = compileModule(
      parse({ text: loopPair(1).replace(/for e in [^{]*\{/g, 'for e in 0..len(d) {'), name: 'p' }),
      {
        registry: registry(),
        backend: 'cpu',
        checks: false,
      },
    )
    const code = generatedCode(m.f!)!
    expect(code).toMatch(/\? PL\d+ : \(PL\d+ = new Float64Array/)
    expect(code).not.toMatch(/(?:PL|h)\d+\.fill\(0\)|\$zero\w+\((?:PL|h)\d+\)/)
    expect(code).toMatch(/\[i\d+\] = \(0 \+ /)
  })

  it('random loop pairs, one module called with changing lengths: the interpreter’s doubles, forwards and backwards', () => {
    const calls: Array<[number, number]> = [
      [5, 5],
      [5, 3],
      [7, 7],
      [3, 2],
      [7, 4],
    ]
    for (let seed = 0; seed < 24; seed++) {
      const source = loopPair(seed)
      for (const checks of [true, false]) {
        const cpu = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend: 'cpu', checks })
        const ref = compileModule(parse({ text: source, name: 'p' }), {
          registry: registry(),
          backend: 'interpreter',
          checks,
        })
        calls.forEach(([L, n], c) => {
          const got = cpu.f!(...args(L, n, c)) as unknown[]
          const want = ref.f!(...args(L, n, c)) as unknown[]
          expect(text(got), `${source}\nchecks ${checks}, call ${c}`).toBe(text(want))
          expect(text(cpu.f!.inverse(...got) as unknown[])).toBe(text(ref.f!.inverse(...want) as unknown[]))
        })
      }
    }
  })
})
