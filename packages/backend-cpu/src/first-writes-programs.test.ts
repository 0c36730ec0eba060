/**
 * Pass `first-writes` end to end on the cpu backend: an array ancilla allocated per iteration of
 * a loop and written in order (Horner's accumulator, a running maximum, a two-term recurrence) is
 * reused from its pool without a fill, its first writes `0 + value`. Random such programs — some
 * that the pass must leave alone (an element read that nothing wrote, a loop going the wrong way,
 * a gap) — in one compiled module called again and again with lengths and values that change (so
 * a reused array holds stale values), give the interpreter's doubles bit for bit, forwards and
 * backwards, with run-time checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import { hornerSource as horner, Random } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** A random program with an array ancilla per iteration, written in order or not (see the module comment). */
function program(seed: number): { text: string; inOrder: boolean } {
  const r = new Random(seed)
  const up = r.chance(0.5)
  const two = r.chance(0.5)
  const op = r.pick(['+=', '-='])
  const f = r.pick(['max', 'min', 'mul'])
  const combine = (p: string, q: string) => (f === 'mul' ? `${p} * ${q}` : `${f}(${p}, ${q})`)
  // the defect of an out-of-order variant: none, a gap, an element nothing writes, the wrong direction
  const defect = r.pick(['none', 'none', 'none', 'gap', 'unwritten', 'direction'])
  let first: string
  let loop: string
  let read: string
  if (up) {
    first = `a[0] += c[0] * xs[j]${two ? '\n      a[1] += a[0] + c[1]' : ''}`
    const start = defect === 'gap' ? (two ? 3 : 2) : two ? 2 : 1
    const stop = defect === 'unwritten' ? 'len(c) - 1' : 'len(c)'
    const dir = defect === 'direction' ? 'reverse ' : ''
    const term = two ? ` + a[k - 2] * 0.5` : ''
    loop = `for k in ${dir}${start}..${stop} { a[k] ${op} ${combine('a[k - 1]', 'xs[j] + c[k]')}${term} }`
    read = r.pick(['a[len(c) - 1]', 'a[0] + a[len(c) - 1]', 'a[len(c) - 2] * a[1]'])
  } else {
    first = `a[len(c) - 1] += c[len(c) - 1] - xs[j]${two ? '\n      a[len(c) - 2] += a[len(c) - 1] * c[0]' : ''}`
    const start = defect === 'gap' ? (two ? 'len(c) - 4' : 'len(c) - 3') : two ? 'len(c) - 3' : 'len(c) - 2'
    const stop = defect === 'unwritten' ? '1' : '0'
    const dir = defect === 'direction' ? 'reverse ' : ''
    const term = two ? ` + a[k + 2] * 0.5` : ''
    loop = `for k in ${dir}${start}..=${stop} by -1 { a[k] ${op} ${combine('a[k + 1]', 'xs[j] - c[k]')}${term} }`
    read = r.pick(['a[0]', 'a[0] * a[len(c) - 1]', 'a[1] + a[0]'])
  }
  const text = `fn f(y: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    routine {
      a: f64[] <- zeros(len(c))
      ${first}
      ${loop}
    }
    y += ${read}
    ~routine
  }
}`
  return { text, inOrder: defect === 'none' }
}

/** A number as text that tells −0 from 0 and keeps NaN. */
const exact = (v: unknown) => (typeof v !== 'number' ? v : Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : v)
const text = (xs: unknown[]) =>
  JSON.stringify(xs.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v))))

/** The arguments of call `k`: c of length L (≥ 4), n points. */
const args = (L: number, n: number, k: number): unknown[] => [
  0.25 * k,
  Float64Array.from({ length: L }, (_, i) => Math.sin(i + 1 + k) / 2),
  Float64Array.from({ length: n }, (_, i) => Math.cos(2 * i + k)),
]

describe('pass `first-writes` on the cpu backend', () => {
  it('Horner’s accumulator is reused without a fill, its first writes `0 + value`', () => {
    // (the stores as they are without pass \`carried-stores\`, which drops the loop's)
    disabledPasses.add('carried-stores')
    let code: string
    try {
      const m = compileModule(parse({ text: horner, name: 'p' }), {
        registry: registry(),
        backend: 'cpu',
        checks: false,
      })
      code = generatedCode(m.f!)!
    } finally {
      disabledPasses.delete('carried-stores')
    }
    expect(code).toMatch(/\? PL\d+ : \(PL\d+ = new Float64Array/)
    expect(code).not.toMatch(/\.fill\(0\)|\$zero\w+\((?:PL|h)\d+\)/)
    // (or, where the loop keeps the element in a local for the next iteration, the local: see `carriedElements`)
    expect(code).toMatch(/(\[i\d+\]|w\d+) = \(0 \+ /)
  })

  it('a gradient-shaped program (an uncompute loop, an adjoint array written one ahead) against the interpreter, stale arrays reused', () => {
    const source = `fn f(y: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    routine {
      a: f64[] <- zeros(len(c))
      g: f64[] <- zeros(len(c))
      a[len(c) - 1] += c[len(c) - 1]
      for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * xs[j] + c[k] }
      g[0] += 2.0 * a[0]
      for k in 0..=len(c) - 2 {
        a[k] -= a[k + 1] * xs[j] + c[k]
        g[k + 1] += g[k] * xs[j]
      }
    }
    for k in 0..len(c) { y += a[k] * g[k] }
    ~routine
  }
}`
    for (const checks of [false, true]) {
      const cpu = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend: 'cpu', checks })
      const ref = compileModule(parse({ text: source, name: 'p' }), {
        registry: registry(),
        backend: 'interpreter',
        checks,
      })
      if (!checks) expect(generatedCode(cpu.f!)!).not.toMatch(/\.fill\(0\)|\$zero\w+\((?:PL|h)\d+\)/)
      for (const [L, n, k] of [
        [5, 3, 0],
        [5, 2, 1],
        [3, 4, 2],
        [5, 1, 3],
      ] as const) {
        const got = cpu.f!(...args(L, n, k)) as unknown[]
        const want = ref.f!(...args(L, n, k)) as unknown[]
        expect(text(got), `checks ${checks}, call ${k}`).toBe(text(want))
        expect(text(cpu.f!.inverse(...got) as unknown[])).toBe(text(ref.f!.inverse(...want) as unknown[]))
      }
    }
  })

  it('random in-order and out-of-order arrays, one module called with changing lengths: the interpreter’s doubles, forwards and backwards', () => {
    const calls: Array<[number, number]> = [
      [5, 3],
      [5, 4],
      [7, 2],
      [4, 3],
      [7, 3],
      [4, 1],
    ]
    let unfilled = 0
    for (let seed = 0; seed < 40; seed++) {
      const { text: source, inOrder } = program(seed)
      for (const checks of [false, true]) {
        const cpu = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend: 'cpu', checks })
        const ref = compileModule(parse({ text: source, name: 'p' }), {
          registry: registry(),
          backend: 'interpreter',
          checks,
        })
        const code = generatedCode(cpu.f!)!
        // the pass marks exactly the arrays written in order (with checks off: it runs only there)
        if (!checks) {
          expect(!/(?:PL|h)\d+\.fill\(0\)|\$zero\w+\((?:PL|h)\d+\)/.test(code), `${source}\n${code}`).toBe(inOrder)
          if (inOrder) unfilled++
        }
        calls.forEach(([L, n], k) => {
          const got = cpu.f!(...args(L, n, k)) as unknown[]
          const want = ref.f!(...args(L, n, k)) as unknown[]
          expect(text(got), `${source}\nchecks ${checks}, call ${k}`).toBe(text(want))
          expect(text(cpu.f!.inverse(...got) as unknown[])).toBe(text(ref.f!.inverse(...want) as unknown[]))
        })
      }
    }
    expect(unfilled).toBeGreaterThan(10)
  })
})
