/**
 * The f32 operations the cpu generator leaves unrounded because their value is already a float32
 * when their operands are (`exactOf` of `codegen.ts`): the negation, `abs`, `min`, `max`, `sign`
 * and `identity` of values in the representation, and `f32(x)` of an f32 value or of a literal
 * (converted once, when the code is generated). A parameter is not in the representation (`core`
 * takes its scalars as the caller passes them): an operation on one is still rounded. Bit for
 * bit with the interpreter (the reference, which rounds every write), checks on and off, with
 * −0, NaN, infinities, subnormals and the largest float32 among the inputs.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

const source = `
fn ops(y: f32[], x: f32[], g: f32) {
  for i in 0..len(x) - 1 {
    y[0] += -x[i]
    y[1] += abs(x[i])
    y[2] += min(x[i], x[i + 1])
    y[3] += max(x[i], x[i + 1])
    y[4] += sign(x[i])
    y[5] += f32(x[i] * x[i + 1])
    y[6] += identity(x[i]) * 3.0
    y[7] += -g
    y[8] += abs(g)
    y[9] += f32(16777217) * x[i]
    y[10] += max(g, x[i])
    y[11] += f32(i)
  }
}
fn local(y: f32[], x: f32[]) {
  t: f32 <- 0.0
  t += x[0] * x[1]
  y[0] += -t
  y[1] += abs(t)
  y[2] += f32(t)
  t -= x[0] * x[1]
  t -> 0.0
}`

function build(backend: 'cpu' | 'interpreter', checks: boolean) {
  return compileModule(parse({ text: source, name: 'f32-exact-ops' }), { registry, backend, checks })
}

function code(name: string, checks: boolean): string {
  const m = build('cpu', checks)
  const info = (m[name] as unknown as Record<symbol, { compiled: { sourceOf(n: string, inv: boolean): string } }>)[
    Symbol.for('tenet.function')
  ]!
  return info.compiled.sourceOf(name, false)
}

const specials = [
  -0,
  0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  1e-45,
  -3e-40,
  3.4028234663852886e38,
  -3.4028234663852886e38,
  -1.5,
  2.5,
  0.1,
  -7,
]

describe('f32 operations exact on float32 operands (cpu backend)', () => {
  it('leaves them unrounded, an operation on a parameter and a conversion of an i32 rounded', () => {
    for (const checks of [false, true]) {
      const js = code('ops', checks)
      // no rounding of a negation, abs, min, max, sign or identity of an element
      expect(js).not.toMatch(/Math\.fround\(\(-\(c\d+\)\)\)/)
      expect(js).not.toMatch(/Math\.fround\(\(Math\.(abs|min|max)\(c\d+/)
      expect(js).not.toMatch(/Math\.fround\(\(\(Math\.sign\(/)
      expect(js).not.toMatch(/Math\.fround\(\(\(c\d+\)\)\)/)
      // f32(x) of an f32 value is the value, and f32 of a literal is a literal
      expect(js).not.toMatch(/Math\.fround\(\(\+Math\.fround/)
      expect(js).not.toMatch(/Math\.fround\(\(\+16777216\)\)/)
      expect(js).toMatch(/16777216 \* c\d+/)
      // the parameter g (passed unrounded to core): its negation, abs and max are rounded
      expect(js).toMatch(/Math\.fround\(\(-\(p2\)\)\)/)
      expect(js).toMatch(/Math\.fround\(\(Math\.abs\(p2\)\)\)/)
      expect(js).toMatch(/Math\.fround\(\(Math\.max\(p2, c\d+\)\)\)/)
      // an i32 converted at run time is rounded (exact only below 2^24)
      expect(js).toMatch(/Math\.fround\(\(\+i\d+\)\)/)
      const local = code('local', checks)
      expect(local).not.toMatch(/Math\.fround\(\(-\(v\d+\)\)\)/)
      expect(local).not.toMatch(/Math\.fround\(\(Math\.abs\(v\d+\)\)\)/)
    }
  })

  it('computes what the interpreter computes, bit for bit, checks on and off', () => {
    const cases: Array<[number[], number]> = []
    for (let k = 0; k < specials.length; k++)
      cases.push([[specials[k]!, specials[(k + 3) % specials.length]!, specials[(k + 5) % specials.length]!], 0.1])
    cases.push([[1, -0, 0, -0], -0], [[0.3, 0.7, Number.NaN], Number.NaN], [[-2, 5, 1e-40], 1e30])
    for (const checks of [false, true]) {
      const cpu = build('cpu', checks),
        ref = build('interpreter', checks)
      for (const [xs, g] of cases) {
        const run = (m: ReturnType<typeof build>, name: 'ops' | 'local') => {
          const y = new Float32Array(12)
          try {
            m[name]!(y, Float32Array.from(xs), g)
            return Array.from(y)
          } catch (e) {
            return (e as Error).message
          }
        }
        for (const name of ['ops', 'local'] as const) {
          const got = run(cpu, name),
            want = run(ref, name)
          if (typeof got === 'string' || typeof want === 'string') expect(got).toBe(want)
          else
            expect(got.map((v) => (Object.is(v, -0) ? '-0' : String(v)))).toEqual(
              want.map((v) => (Object.is(v, -0) ? '-0' : String(v))),
            )
        }
      }
    }
  })

  it('rounds an operation on a parameter that core takes unrounded', () => {
    const g = 0.1 // not a float32
    for (const checks of [false, true]) {
      const y = new Float32Array(12)
      build('cpu', checks).ops!.core(y, Float32Array.of(-4, 2), g)
      expect(y[7]).toBe(Math.fround(-g))
      expect(y[8]).toBe(Math.fround(g))
      expect(y[10]).toBe(Math.fround(g))
      expect(y[9]).toBe(-4 * 16777216)
    }
  })
})
