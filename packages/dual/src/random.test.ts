import { describe, expect, it } from 'vitest'
import { finiteDifference, Random } from '@tenet/testing'
import { grad, type Real } from './index.js'
import { Naive } from './naive.js'
import { flatInput, plain, randomProgram, runProgram, type ProgramInput, type Program } from './test-util.js'

const flat = (g: ProgramInput<number>): number[] => [g.a, ...g.b, g.c.d, ...g.c.e]

/**
 * Central differences (`finiteDifference` of @tenet/testing), one input at a time, skipping
 * inputs whose ±h runs take another branch than the point itself.
 */
function finiteDifferences(p: Program, x: number[], h = 1e-6): Array<number | null> {
  const trace0: number[] = []
  runProgram(plain, p, flatInput(x), trace0)
  return x.map((xi, i) => {
    let branched = false
    const along = ([v]: number[]) => {
      const at = x.slice()
      at[i] = v!
      const trace: number[] = []
      const value = runProgram(plain, p, flatInput(at), trace)
      if (trace.join() !== trace0.join()) branched = true
      return value
    }
    const d = finiteDifference(along, [xi], h)[0]!
    return branched ? null : d
  })
}

describe('gradients of random plain-TS programs (loops, branches on values, recursion, a nested record)', () => {
  const seeds = Array.from({ length: 60 }, (_, k) => 1000 + k)
  it.each(seeds)('seed %i: against central finite differences and the naive oracle', (seed) => {
    const p = randomProgram(seed, 10)
    const rng = new Random(seed * 7 + 1)
    const x = Array.from({ length: 7 }, () => rng.next() * 2 - 1)
    const g = grad((d, input: ProgramInput<Real>) => runProgram(d, p, input))
    const ours = flat(g(flatInput(x)) as ProgramInput<number>)
    // value agrees with the plain objective
    const fd = finiteDifferences(p, x)
    let compared = 0
    fd.forEach((v, i) => {
      if (v === null) return
      compared++
      expect(Math.abs(ours[i]! - v), `∂/∂x${i}: ${ours[i]} vs finite difference ${v}`).toBeLessThan(
        1e-5 * Math.max(1, Math.abs(v)),
      )
    })
    expect(compared).toBeGreaterThanOrEqual(6)
    // the naive algorithm of seed 003 §3 gives the same numbers (up to rounding of the summation order)
    const naive = Naive.grad((d, xs) => runProgram(d, p, flatInput(xs)), x)
    ours.forEach((v, i) => expect(Math.abs(v - naive.grad[i]!)).toBeLessThan(1e-10 * Math.max(1, Math.abs(v))))
  })

  it('the programs exercise every construct', () => {
    const kinds = new Set<string>()
    const visit = (b: Program['body']) =>
      b.forEach((s) => {
        kinds.add(s.kind)
        if (s.kind === 'if') {
          visit(s.then)
          visit(s.else)
        }
        if (s.kind === 'loop') visit(s.body)
      })
    for (let seed = 1000; seed < 1060; seed++) visit(randomProgram(seed, 10).body)
    expect([...kinds].sort()).toEqual(['binary', 'if', 'loop', 'recurse', 'unary'])
  })
})
