/**
 * The first update of a fresh float ancilla, `r <- 0.0; r += e`, is `0 + e` (see
 * `firstUpdatesOfZeros` of `codegen.ts`): +0 where `e` is −0, which a later `1 / r` can see. Where
 * `e` is never −0 nor negative (`neverNegative`: a square, a sum, product or quotient of such
 * values, `sqrt` of one, `abs`, `exp`, a local that such an update wrote), `0 + e` is `e` bit for bit
 * and the generator writes `e` alone: the add sat on the chain of every routine's ancillas
 * (paper 000's leapfrog: `r2 → r = sqrt(r2) → s = g·m / (r2·r)`). Printed code before/after, and
 * bit for bit with the interpreter (signed zeros included), f64 and f32, checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

const source = (T: 'f64' | 'f32') => `
fn norms(y: ${T}[], x: ${T}[]) {
  routine {
    d: ${T} <- 0.0
    d += x[1] - x[0]
    q: ${T} <- 0.0
    q += d * d + x[2] * x[2]
    r: ${T} <- 0.0
    r += sqrt(q)
    e: ${T} <- 0.0
    e += exp(x[0]) / (abs(x[1]) + 2.0)
    w: ${T} <- 0.0
    w += x[3] ** 2 * r
  }
  y[0] += 1.0 / d
  y[1] += 1.0 / r
  y[2] += 1.0 / e
  y[3] += 1.0 / w
  ~routine
}
fn signed(y: ${T}[], x: ${T}[]) {
  routine {
    p: ${T} <- 0.0
    p += x[0] * x[1]
    n: ${T} <- 0.0
    n += sqrt(x[2])
    h: ${T} <- 0.0
    h += x[2] * x[2]
    h += x[3]
    k: ${T} <- 0.0
    k += sqrt(h)
  }
  y[0] += 1.0 / p
  y[1] += 1.0 / n
  y[2] += 1.0 / k
  ~routine
}${T === 'f64' ? scaledSource : ''}`

// (\`*=\` and \`/=\` on f64 only: f32 has them not)
const scaledSource = `
fn scaled(y: f64[], x: f64[]) {
  routine {
    t: f64 <- 0.0
    t += x[0] * x[0]
    t *= -1.0
    u: f64 <- 0.0
    u += t
    s: f64 <- 0.0
    s += x[1] * x[1]
    s /= x[2]
    v: f64 <- 0.0
    v += s
  }
  y[0] += 1.0 / u
  y[1] += 1.0 / v
  ~routine
}`

const build = (T: 'f64' | 'f32', backend: 'cpu' | 'interpreter', checks: boolean) =>
  compileModule(parse({ text: source(T), name: `nonnegative-${T}` }), { registry, backend, checks })

function code(T: 'f64' | 'f32', name: string, checks: boolean): string {
  const m = build(T, 'cpu', checks)
  const info = (m[name] as unknown as Record<symbol, { compiled: { sourceOf(n: string, inv: boolean): string } }>)[
    Symbol.for('tenet.function')
  ]!
  return info.compiled.sourceOf(name, false)
}

/** The assignments of first updates in generated code: `v3 = (0 + …)` or `v3 = (…)` after `let v3 = 0;`. */
const firstUpdates = (js: string): string[] => {
  const declared = [...js.matchAll(/let (v\d+) = 0;/g)].map((m) => m[1]!)
  return declared.flatMap((v) => {
    const m = js.match(new RegExp(`\\n\\s*${v} = (.*);`))
    return m ? [m[1]!] : []
  })
}

const inputs: number[][] = [
  [0.25, 1.75, -3, 0.5],
  [0, -0, -0, -0],
  [-0, 0, 0, 0],
  [-0, -0, -0, 0],
  [1, 1, 0, -0],
  [-2, 3, -0, 4],
  [Number.NaN, 1, 2, 3],
  [Number.POSITIVE_INFINITY, 0, 1e30, -1e-30],
]

describe('first updates of fresh ancillas by a value that is never −0 (cpu backend)', () => {
  for (const T of ['f64', 'f32'] as const)
    for (const checks of [false, true]) {
      it(`writes the value alone where it is never −0 nor negative, else 0 + value (${T}, checks ${checks ? 'on' : 'off'})`, () => {
        const norms = firstUpdates(code(T, 'norms', checks))
        // d (a difference) keeps its zero; q (a sum of squares), r (sqrt of q), e (exp / (abs + 2)) and
        // w (a square times r) are written bare
        expect(norms).toHaveLength(5)
        expect(norms[0]).toMatch(/^\(0 \+ /)
        for (const u of norms.slice(1)) expect(u).not.toMatch(/\(0 \+ /)
        const signed = firstUpdates(code(T, 'signed', checks))
        // a product of two elements, sqrt of an element (sqrt(−0) is −0), and sqrt of a local that a
        // second update wrote: each keeps its zero
        expect(signed).toHaveLength(4)
        expect(signed[0]).toMatch(/^\(0 \+ /)
        expect(signed[1]).toMatch(/^\(0 \+ /)
        expect(signed[2]).not.toMatch(/\(0 \+ /) // (h's first update, a square)
        expect(signed[3]).toMatch(/^\(0 \+ /)
        // a local that \`*=\` or \`/=\` updated since may be negative or −0 (review12 D1): u and v keep
        // their zero
        if (T === 'f64') {
          const scaled = firstUpdates(code(T, 'scaled', checks))
          expect(scaled).toHaveLength(4)
          expect(scaled[0]).not.toMatch(/\(0 \+ /)
          expect(scaled[1]).toMatch(/^\(0 \+ /)
          expect(scaled[2]).not.toMatch(/\(0 \+ /)
          expect(scaled[3]).toMatch(/^\(0 \+ /)
        }
      })

      it(`computes what the interpreter computes, signed zeros included (${T}, checks ${checks ? 'on' : 'off'})`, () => {
        const A = T === 'f64' ? Float64Array : Float32Array
        const cpu = build(T, 'cpu', checks),
          ref = build(T, 'interpreter', checks)
        for (const name of T === 'f64' ? ['norms', 'signed', 'scaled'] : ['norms', 'signed'])
          for (const xs of inputs) {
            const run = (m: typeof cpu) => {
              const y = new A(4)
              try {
                m[name]!(y, A.from(xs))
                return { y: Array.from(y), error: '' }
              } catch (e) {
                return { y: Array.from(y), error: (e as Error).message }
              }
            }
            const got = run(cpu),
              want = run(ref)
            expect(got.error).toBe(want.error)
            // (Object.is: +0 and −0 differ, as 1 / y would show)
            expect(got.y.map((v, i) => Object.is(v, want.y[i]))).toEqual([true, true, true, true])
          }
        // the signs of zero that the dropped adds could have changed: 1 / (0 + −0) is +Infinity
        const y = new A(4)
        cpu.norms!(y, A.of(0, -0, -0, -0))
        expect(Array.from(y)).toEqual([Infinity, Infinity, 2, Infinity])
        const z = new A(4)
        cpu.signed!(z, A.of(-0, 1, -0, 0))
        expect(Array.from(z.subarray(0, 3))).toEqual([Infinity, Infinity, Infinity])
        // −(0·0) is −0, and 0·0 / −1 is −0: 1 / (0 + −0) is +Infinity
        if (T === 'f64') {
          const w = new A(4)
          cpu.scaled!(w, A.of(0, 0, -1, 0))
          expect(Array.from(w.subarray(0, 2))).toEqual([Infinity, Infinity])
        }
      })
    }
})
