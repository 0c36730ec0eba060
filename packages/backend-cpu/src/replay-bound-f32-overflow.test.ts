/**
 * `replay-bound` for f32 ancillas (review 19b) (cpu, checks on; see `replay-bound.ts`).
 *
 * The bound `|residual| <= 2u·Q / (1 − m·u)` rests on `fl(z) = z / (1 + δ)` for every rounded sum,
 * the replay's included; the module covers overflow only for the call's partial sums (summed in
 * P, an infinite one fails the test), not for the replay's. A replay step can overflow where every
 * partial sum of the call is finite: a[0] += FLT_MAX, then a[0] += −1.5·2¹⁰⁴ (exactly halfway
 * between FLT_MAX − 2·2¹⁰⁴ and FLT_MAX − 2¹⁰⁴: ties to even rounds up to FLT_MAX − 2¹⁰⁴), and the
 * replay's first step, (FLT_MAX − 2¹⁰⁴) + 1.5·2¹⁰⁴ = FLT_MAX + 2¹⁰³, rounds to +∞: the residual
 * is +∞. P ≈ 6.8e38 is finite, so `3·u·P̂ ≈ 1.2e32 <= tol` passes for any tolerance from ~1.2e32
 * up, and the cpu backend zeroes the ancilla and accepts its deallocation, where the interpreter
 * (which runs `~acc`) finds +∞ in a[0] and rejects it (`runtime/dealloc`).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** 17 updates (too many to inline): a[0] takes x[j], the others x[j] · 1e-10 (finite, harmless). */
const source = `
fn acc(a: f32[], x: f32[], n: i32) {
  for j in 0..n {
${Array.from({ length: 17 }, (_, k) => `    a[${k}] += x[j]${k === 0 ? '' : ' * 0.0000000001'}`).join('\n')}
  }
}
fn f(y: f32[], x: f32[], n: i32) {
  a: f32[] <- zeros(17)
  acc(a, x, n)
  y[0] += a[0] * 0.0
  ~acc(a, x, n)
  a -> zeros(17)
}`

type Fn = ((...a: unknown[]) => unknown) & { inverse: (...a: unknown[]) => unknown }
const compile = (backend: string, tolerance?: number) =>
  (
    compileModule(parse({ text: source, name: 'p' }), {
      registry: registry(),
      backend,
      checks: true,
      ...(tolerance !== undefined ? { tolerance } : {}),
    }) as unknown as Record<string, Fn>
  ).f!

const MAX = Math.fround(3.4028234663852886e38)
/** The two terms (f32): FLT_MAX, then −1.5·2¹⁰⁴ (or both negated). */
const terms = (sign: number) => Float32Array.from([sign * MAX, -sign * 1.5 * 2 ** 104])

/** The error (code and first line) and the arrays after the call, as text. */
function outcome(tolerance: number | undefined, backend: string, inverse: boolean, sign = 1): string {
  const f = compile(backend, tolerance)
  const args = [new Float32Array(1), terms(sign)]
  const e = raisedError(() => (inverse ? f.inverse : f)(...args, 2))
  return `${String(e).split('\n')[0]} | ${args.map((a) => Array.from(a).join(' ')).join(' / ')}`
}

describe('review19-b: replay-bound f32, a replay that overflows', () => {
  it('the arithmetic: every partial sum of the call finite, the replay +∞, P finite and 3·u·P ≈ 1.2e32', () => {
    const f = Math.fround
    const [t1, t2] = terms(1) as unknown as [number, number]
    const s1 = f(0 + t1),
      s2 = f(s1 + t2)
    expect([Number.isFinite(s1), Number.isFinite(s2)]).toEqual([true, true])
    expect(f(f(s2 - t2) - t1)).toBe(Infinity)
    expect(3 * 2 ** -24 * (Math.abs(s1) + Math.abs(s2))).toBeLessThan(1.3e32)
  })

  for (const tol of [1e34, 1e300])
    for (const inverse of [false, true])
      for (const sign of [1, -1])
        it(`tolerance ${tol}, ${inverse ? 'backwards' : 'forwards'}, sign ${sign}: cpu accepts the deallocation the interpreter rejects`, () => {
          const ref = outcome(tol, 'interpreter', inverse, sign)
          expect(ref).toMatch(/^runtime\/dealloc/)
          expect(outcome(tol, 'cpu', inverse, sign)).toBe(ref)
        })

  it('with replay-bound disabled (the replay runs, as before f32 was taken) the cpu backend agrees', () => {
    disabledPasses.add('replay-bound')
    try {
      expect(outcome(1e34, 'cpu', false)).toBe(outcome(1e34, 'interpreter', false))
    } finally {
      disabledPasses.delete('replay-bound')
    }
  })

  // (held: where the bound fails the replay runs, and an infinite tolerance accepts +∞ in both)
  for (const tol of [undefined, 1e31, Infinity, -1, Number.NaN, 0])
    it(`tolerance ${tol}: the same outcome as the interpreter`, () => {
      expect(outcome(tol, 'cpu', false)).toBe(outcome(tol, 'interpreter', false))
    })
})
