/**
 * The conformance suite of @tenet/testing on webgpu, for its i32 subset: random reversible
 * programs (stacks off; programs that convert to f64 left out, WGSL has none), each run on a
 * batch of argument sets in one dispatch, must give the cpu backend's results bit for bit and
 * come back to their inputs under the inverse.
 */
import { describe, expect, it } from 'vitest'
import { randomArgs, randomProgram, sameBits, showArgs } from '@tenet/testing'
import { gpuMap } from './index.js'
import { cpu, testGpu } from './test-util.js'

const gpu = await testGpu()

/** Programs tried (those with an f64 conversion are skipped and counted). */
const PROGRAMS = Number(process.env.WEBGPU_CONFORMANCE_PROGRAMS ?? 30)
/** Argument sets per program: the items of one batch. */
const ITEMS = 4

/** Packs per-item argument lists into batch arguments (scalars into arrays of n, arrays back to back). */
function pack(sets: Array<Array<number | Int32Array>>): Int32Array[] {
  return sets[0]!.map((_, j) => {
    const parts = sets.map((s) => s[j]!)
    if (typeof parts[0] === 'number') return Int32Array.from(parts as number[])
    const L = (parts[0] as Int32Array).length
    const out = new Int32Array(L * parts.length)
    parts.forEach((p, k) => out.set(p as Int32Array, k * L))
    return out
  })
}

/** Programs per test (each compiles two pipelines, about half a second each on SwiftShader when idle). */
const BATCH = 6

describe.skipIf(!gpu)('conformance: random i32 programs on webgpu agree with cpu bit for bit', () => {
  let run = 0, skipped = 0
  for (let first = 0; first < PROGRAMS; first += BATCH) {
    it(`seeds ${first}..${Math.min(PROGRAMS, first + BATCH) - 1}, ${ITEMS} items each`, async () => {
      const failures: string[] = []
      for (let seed = first; seed < Math.min(PROGRAMS, first + BATCH); seed++) {
        const p = randomProgram(seed, { features: { stack: false } })
        if (p.source.includes('f64(')) { skipped++; continue }
        run++
        const m = cpu(p.source)
        const f = m[p.entry]!
        const sets = Array.from({ length: ITEMS }, (_, k) => randomArgs(p.signature, seed * 7919 + k) as Array<number | Int32Array>)
        const want = sets.map((s) => f(...s.map((a) => (typeof a === 'number' ? a : a.slice()))) as Array<number | Int32Array>)
        const k = await gpuMap(f, { batch: ITEMS, perItem: f.ir.params.map((q) => q.name), gpu })
        const input = pack(sets)
        const args = input.map((a) => a.slice())
        await k(...args)
        const expected = pack(want)
        const bad = args.findIndex((a, j) => !sameBits(a, expected[j]))
        if (bad >= 0) { failures.push(`seed ${seed}: forward differs in \`${f.ir.params[bad]!.name}\`: webgpu ${showArgs([args[bad]])} vs cpu ${showArgs([expected[bad]])}\n${p.source}`); continue }
        await k.inverse(...args)
        if (!args.every((a, j) => sameBits(a, input[j]))) failures.push(`seed ${seed}: inverse(forward(x)) != x: ${showArgs(args)} vs ${showArgs(input)}\n${p.source}`)
      }
      expect(failures.slice(0, 3).join('\n\n')).toBe('')
    }, 240_000)
  }
  it('ran most programs (the rest convert to f64)', () => {
    console.log(`[backend-webgpu] conformance: ${run} random programs run on webgpu, ${skipped} left out (they convert to f64)`)
    expect(run + skipped).toBe(PROGRAMS)
    expect(run).toBeGreaterThan(PROGRAMS / 2)
  })
})
