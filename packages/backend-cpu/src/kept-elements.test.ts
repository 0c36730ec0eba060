/**
 * Elements a loop keeps in a local (an element the loop accumulates into at an index it does not
 * change) hold their value after the loop, for the statements of the same block, until one writes
 * the array or a name of the index: `q[e] += …` over j, then `d[e] += sqrt(q[e])` reads the local
 * instead of loading `q[e]` right after storing it. Random programs give the interpreter's
 * doubles bit for bit, forwards and backwards, with checks on (no locals) and off.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import { Random } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

const lengths = `fn f(q: f64[], d: f64[], x: f64[], k: i32) {
  for e in 0..len(d) {
    for j in 0..k { q[e] += (x[e + j] - x[j]) ** 2 }
    d[e] += sqrt(q[e])
  }
}`

/** A loop body: an inner loop accumulating into `q[e]`, then statements that read and write around it. */
function program(seed: number): string {
  const r = new Random(seed)
  const after = () =>
    r.pick([
      'd[e] += sqrt(q[e])',
      'd[e] += q[e] * x[e]',
      'q[e] += 0.5',
      'q[e + 1] += d[e]',
      'd[e] += q[e + 1]',
      'SWAP(q[e], d[e])',
      'm += 1',
      'd[e] += q[m]',
      'q[m] += 0.25',
      'if (q[e] > 1.0, ~) { d[e] += q[e] }',
      'for t in 0..2 { d[e] += q[e] * 0.5 }',
    ])
  const index = r.pick(['e', 'e', 'm'])
  return `fn f(q: f64[], d: f64[], x: f64[], k: i32, m: i32) {
  for e in 0..len(d) - 1 {
    for j in 0..k { q[${index}] += (x[e + j] - x[j]) ** 2 }
    ${[after(), after(), after(), after()].join('\n    ')}
    m -= 1
  }
}`
}

/** A number as text that tells −0 from 0 and keeps NaN. */
const exact = (v: unknown) => (typeof v !== 'number' ? v : Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : v)
const text = (xs: unknown[]) =>
  JSON.stringify(xs.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v))))

describe('elements kept in locals after their loop (cpu backend)', () => {
  it('reads the element the inner loop accumulated from its local (printed JS)', () => {
    const m = compileModule(parse({ text: lengths, name: 'p' }), {
      registry: registry(),
      backend: 'cpu',
      checks: false,
    })
    const code = generatedCode(m.f!)!
    // the local is stored back, and the root reads it, not the element
    expect(code).toMatch(/p0\[(x\d+)\] = (r\d+);\s*p1\[i\d+\] = \(p1\[i\d+\] \+ \(Math\.sqrt\(\2\)\)\);/)
    expect(code).not.toMatch(/Math\.sqrt\(p0\[/)
  })

  it('an element the block’s reused loads load in a condition is loaded there, not read from the local (random program 1828)', () => {
    // a1[2] is kept after the loop; the condition's load of it is reused by \`a1[0] -= a1[2]\`
    const source = `fn f(x0: i32, x1: i32, a1: i32[]) {
  for i0 in len(a1)..=-1 by -1 {
    a1[1] -= 1
    a1[0] += (a1[2] - (x0 | x1))
  }
  if (a1[2] <= 0, ~) { x1 -= a1[1] } else { x1 += 3 }
  a1[0] -= a1[2]
}`
    const run = (backend: string) => {
      const m = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks: false })
      return text(m.f!(-5, 2, Int32Array.from([3, -3, 2147483647, 1, -4])) as unknown[])
    }
    expect(run('cpu')).toBe(run('interpreter'))
  })

  it('random programs: the interpreter’s doubles, forwards and backwards, checks on and off', () => {
    for (let seed = 0; seed < 40; seed++) {
      const source = program(seed)
      for (const checks of [true, false]) {
        const run = (backend: string) => {
          const m = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks })
          const args = [
            // q long enough for every m (at most 5 + 3 per iteration)
            Float64Array.from({ length: 32 }, (_, i) => 0.5 + i * 0.25),
            Float64Array.from({ length: 6 }, (_, i) => Math.sin(i + 1)),
            Float64Array.from({ length: 9 }, (_, i) => Math.cos(i + 0.3)),
            3,
            5,
          ]
          try {
            const fwd = m.f!(...args) as unknown[]
            return text(fwd) + text(m.f!.inverse(...fwd) as unknown[])
          } catch (e) {
            return `error ${(e as { code?: string }).code}`
          }
        }
        expect(run('cpu'), `${source}\nchecks ${checks}`).toBe(run('interpreter'))
      }
    }
  })
})
