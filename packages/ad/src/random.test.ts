import { describe, expect, it } from 'vitest'
import { TenetError } from '@tenet/ir'
import { finiteDifference, randomRealArgs, randomRealProgram, relativeError } from '@tenet/testing'
import { checkGrad, gradient, hessian } from './index.js'
import { tag } from './test-util.js'

/**
 * Random differentiable f64 programs from the generator of `@tenet/testing` (`randomRealProgram`
 * with `differentiable`: loops over an array, ifs, whiles, routines, ROT, calls, uncalls,
 * recursion and stacks): `fn f(w0, w1, w2, p, n: i32, x: f64[])`, loss `w0`.
 */
const PROGRAMS = Number(process.env.TENET_AD_RANDOM_PROGRAMS ?? 150)
const program = (seed: number) =>
  randomRealProgram(seed, { differentiable: true, functions: ['sin', 'cos', 'tanh', 'atan'], maxStatements: 10 })
/** The float inputs but the loss: w1, w2, p and the elements of x. */
const flat = (a: unknown[]) => [a[1], a[2], a[3], ...(a[5] as Float64Array)] as number[]
const unflat = (args: unknown[], v: number[]) => [args[0], v[0], v[1], v[2], args[4], Float64Array.from(v.slice(3))]

describe.each(['cpu', 'interpreter', 'cpu without checks'] as const)('checkGrad on random programs (%s)', (label) => {
  const backend = label === 'interpreter' ? 'interpreter' : 'cpu'
  const rev = tag({ backend, checks: label !== 'cpu without checks' })
  const reference = tag({ backend: 'interpreter' })
  it(`${PROGRAMS} random programs: adjoint gradients match central differences (every 10th: Hessian too)`, () => {
    const first = label === 'cpu' ? 1234 : label === 'interpreter' ? 98765 : 4321
    let checked = 0,
      unstable = 0
    for (let t = 0; t < PROGRAMS; t++) {
      const p = program(first + t)
      const m = rev(p.source)
      const args = randomRealArgs(p, first + t)
      let r: ReturnType<typeof checkGrad>
      try {
        r = checkGrad(m.f!, args, { loss: 0, atol: 1e-5, rtol: 1e-5 })
      } catch (e) {
        // the drivers' own check: the adjoint sweep did not recompute the inputs (unstable uncompute)
        // or values that overflowed to ±Infinity or NaN, which a deallocation check reports
        const nonFinite = TenetError.isInstance(e) && /\b(NaN|-?Infinity)\b/.test((e as Error).message)
        if (!(TenetError.isInstance(e) && ((e as TenetError).code === 'ad/uncompute' || nonFinite))) throw e
        unstable++
        continue
      }
      if (!r.ok) {
        // the adjoint sweep recomputes values by uncomputing, so it is only as exact as the
        // inverse: a program that does not return its inputs when run forwards and back is unstable
        const f = reference(p.source).f!
        const back = f.inverse(...f(...args.map((a) => (ArrayBuffer.isView(a) ? a.slice() : a))))
        const drift = Math.max(...flat(back).map((v, i) => Math.abs(v - flat(args)[i]!)))
        if (drift > 1e-9) {
          unstable++
          continue
        }
      }
      expect(r.ok, `seed ${first + t}\n${p.source}\n${JSON.stringify(r.worst)}`).toBe(true)
      if (t % 10 === 0) {
        // forward-over-reverse against central differences of the adjoint gradient
        const x = flat(args)
        const H = hessian(m.f!, args, { loss: 0 })
        const n = x.length
        expect(H.length).toBe(n * n)
        // two steps: truncation error grows with the step, rounding error as it shrinks
        const differences = [1e-5, 2e-6].map((h) =>
          finiteDifference((v) => flat(gradient(m.f!, unflat(args, v), { loss: 0 })), x, h),
        )
        for (let i = 0; i < n; i++)
          for (let j = 0; j < n; j++) {
            const errors = differences.map((J) => relativeError(H[i * n + j]!, J[i]![j]!))
            expect(
              Math.min(...errors),
              `seed ${first + t}\n${p.source}\nH[${i}][${j}] = ${H[i * n + j]} vs ${differences.map((J) => J[i]![j]).join(', ')}`,
            ).toBeLessThan(1e-4)
          }
      }
      checked++
    }
    console.log(`[ad random] ${label}: ${checked} programs checked, ${unstable} unstable or non-finite (not counted)`)
    expect(unstable, 'programs whose uncompute is unstable').toBeLessThan(PROGRAMS / 10)
    expect(checked + unstable).toBe(PROGRAMS)
  })
})
