/**
 * The first update of a fresh float ancilla allocated as −0.0, `g <- -0.0; g += e` (a scalar
 * gradient's zero, see `gradientZero` of `@tenet/ad`), is `e` and `g -= e` is `−e`, bit for bit
 * for every e (−0 is the additive identity: −0 + −0 is −0, −0 + +0 is +0), so the generator
 * writes the value alone, with no add of a zero (see `ZeroMarks.negative` in `codegen.ts`); an
 * ancilla allocated as +0.0 keeps its `0 + e`. Printed code, and bit for bit with the interpreter
 * (signed zeros included), f64 and f32, checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

const source = (T: 'f64' | 'f32') => `
fn signs(y: ${T}[], x: ${T}[]) {
  routine {
    a: ${T} <- -0.0
    a += x[0] * x[1]
    b: ${T} <- -0.0
    b -= x[0] * x[1]
    c: ${T} <- 0.0
    c += x[0] * x[1]
    d: ${T} <- -0.0
    d += x[2] + x[3]
  }
  y[0] += 1.0 / a
  y[1] += 1.0 / b
  y[2] += 1.0 / c
  y[3] += 1.0 / d
  ~routine
}`

const build = (T: 'f64' | 'f32', backend: 'cpu' | 'interpreter', checks: boolean) =>
  compileModule(parse({ text: source(T), name: `negative-zero-${T}` }), { registry, backend, checks })

function code(T: 'f64' | 'f32', checks: boolean): string {
  const m = build(T, 'cpu', checks)
  const info = (m.signs as unknown as Record<symbol, { compiled: { sourceOf(n: string, inv: boolean): string } }>)[
    Symbol.for('tenet.function')
  ]!
  return info.compiled.sourceOf('signs', false)
}

/** The first assignment of each local declared `let v = -0;` or `let v = 0;`, in order. */
const firstUpdates = (js: string): string[] =>
  [...js.matchAll(/let (v\d+) = -?0;/g)].flatMap((d) => {
    const m = js.match(new RegExp(`\\n\\s*${d[1]} = (.*);`))
    return m ? [m[1]!] : []
  })

const inputs: number[][] = [
  [0.25, 1.75, -3, 0.5],
  [0, -0, -0, -0],
  [-0, -0, 0, -0],
  [-0, 2, -0, 0],
  [3, -0, 0, 0],
  [Number.NaN, 1, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
  [1e30, 1e30, -1e-30, 1e-30],
]

describe('first updates of ancillas allocated as −0.0 (cpu backend)', () => {
  for (const T of ['f64', 'f32'] as const)
    for (const checks of [false, true]) {
      it(`writes the value alone, or its negation, where the ancilla is −0.0; 0 + value where it is +0.0 (${T}, checks ${checks ? 'on' : 'off'})`, () => {
        const js = code(T, checks)
        expect(js).toMatch(/let v\d+ = -0;/)
        const first = firstUpdates(js)
        expect(first).toHaveLength(4)
        expect(first[0]).not.toMatch(/0 [+-] /)
        expect(first[1]).toMatch(/^\(-\(/)
        expect(first[2]).toMatch(/^\(0 \+ /)
        expect(first[3]).not.toMatch(/0 [+-] /)
      })

      it(`computes what the interpreter computes, signed zeros included (${T}, checks ${checks ? 'on' : 'off'})`, () => {
        const A = T === 'f64' ? Float64Array : Float32Array
        const cpu = build(T, 'cpu', checks),
          ref = build(T, 'interpreter', checks)
        for (const xs of inputs) {
          const run = (m: typeof cpu) => {
            const y = new A(4)
            try {
              m.signs!(y, A.from(xs))
              return { y: Array.from(y), error: '' }
            } catch (e) {
              return { y: Array.from(y), error: (e as Error).message }
            }
          }
          const got = run(cpu),
            want = run(ref)
          expect(got.error).toBe(want.error)
          // (Object.is: +0 and −0 differ, as 1 / y shows)
          expect(got.y.map((v, i) => Object.is(v, want.y[i]))).toEqual([true, true, true, true])
        }
        // −0 + (−0 · 2) is −0 and −0 − (−0 · 2) is +0; +0 + (−0 · 2) is +0; −0 + (−0 + −0) is −0
        const y = new A(4)
        cpu.signs!(y, A.of(-0, 2, -0, -0))
        expect(Array.from(y)).toEqual([-Infinity, Infinity, Infinity, -Infinity])
      })
    }
})
