/**
 * Lean copies (`CompiledFunction.lean`): a function of scalars, one of which it never writes, that
 * no function of its program calls has a copy that leaves those results out of `results`
 * (`passedThrough`) and stores the others as the function does. Random programs, checks on and off: the lean copy's arrays and written results
 * are the function's bit for bit, and the passed-through results are never stored.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, type CompiledFunction } from '@tenet/ir'
import { compileModule, type TenetFunction } from '@tenet/reversible'
import { randomArgs, randomProgram, sameBits } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend)
const compile = (text: string, checks: boolean) =>
  compileModule(parse({ text, name: 'lean-entries' }), { registry, backend: 'cpu', checks })

/** Runs `call` on copies of `args`: the arrays after it and the results, or what it threw. */
function outcome(call: CompiledFunction | NonNullable<CompiledFunction['lean']>, args: unknown[], sentinel: number) {
  const copies = args.map((a) => (ArrayBuffer.isView(a) ? (a as Int32Array).slice() : a))
  call.results.fill(sentinel)
  try {
    call(...copies)
  } catch (e) {
    return { threw: (e as Error).message }
  }
  return { arrays: copies.filter((a) => ArrayBuffer.isView(a)), results: Array.from(call.results) }
}

describe('lean copies of functions with read-only scalars (cpu backend)', () => {
  it('leave the read-only results out and store the written ones', () => {
    const m = compile('fn f(y: f64, x: f64, n: i32, t: f64) { for k in 0..n { t += x * y; y += t } }', false)
    const core = (m.f as TenetFunction).core
    const lean = core.lean!
    expect(lean.passedThrough).toEqual([false, true, true, false])
    core(1, 2, 3, 0)
    const full = Array.from(core.results)
    const got = outcome(lean, [1, 2, 3, 0], Number.NaN)
    expect(got.results![0]).toBe(full[0])
    expect(got.results![3]).toBe(full[3])
    // never stored: still the sentinel
    expect(got.results![1]).toBeNaN()
    expect(got.results![2]).toBeNaN()
  })

  it('are absent where every scalar is written and where there is an array', () => {
    const m = compile(
      `fn f(y: f64, x: f64) { y += x; x += y }
       fn g(y: f64, x: f64[]) { y += x[0] }
       fn h(y: f64, x: f64) { y += x * x }
       fn k(y: f64, x: f64) { h(y, x) }`,
      false,
    )
    for (const name of ['f', 'g']) expect((m[name] as TenetFunction).core.lean, name).toBeUndefined()
    expect((m.k as TenetFunction).core.lean?.passedThrough).toEqual([false, true])
  })

  for (const checks of [true, false]) {
    it(`agree with the function on 200 random programs (checks ${checks ? 'on' : 'off'})`, () => {
      const failures: string[] = []
      let compared = 0
      for (let seed = 0; seed < 200; seed++) {
        // (scalar parameters only: functions with an array have no lean copy)
        const p = randomProgram(seed, { maxStatements: 12, features: { arrays: false } })
        const core = (compile(p.source, checks)[p.entry] as TenetFunction).core
        const lean = core.lean
        const readOnly = p.signature.params.some((q) => q.type === 'i32')
        if (!lean) continue
        if (!readOnly) failures.push(`seed ${seed}: a lean copy without scalar parameters`)
        compared++
        for (let a = 0; a < 2; a++) {
          const args = randomArgs(p.signature, seed * 2 + a)
          const full = outcome(core, args, 0)
          const got = outcome(lean, args, Number.NaN)
          if (full.threw !== undefined || got.threw !== undefined) {
            if (full.threw !== got.threw) failures.push(`seed ${seed}: threw ${got.threw}, the function ${full.threw}`)
            continue
          }
          if (!sameBits(got.arrays, full.arrays)) failures.push(`seed ${seed}: arrays differ`)
          lean.passedThrough.forEach((through, i) => {
            // (arrays have no results)
            if (p.signature.params[i]!.type !== 'i32') return
            const r = got.results![i]!
            if (through ? !Number.isNaN(r) : !Object.is(r, full.results![i]))
              failures.push(
                `seed ${seed}: result ${i} is ${r} (the function's ${full.results![i]}, passed through: ${through})`,
              )
          })
        }
      }
      expect(failures.slice(0, 3)).toEqual([])
      // (a few random programs have a scalar they only read)
      expect(compared).toBeGreaterThan(8)
    })
  }
})
