/**
 * Pass `idle-first` on random loops (i32 and f64 updates that vanish or cancel at the loop's first
 * value, exchanges, ancillas of the body; starts, steps and trip counts around the first value):
 * the cpu backend without checks computes the interpreter's bits with the pass and without it
 * (switched off through `disabledPasses`), forwards and backwards, and the pass applies to some.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A random loop over `i` whose statements mostly vanish or cancel at its first value. */
function randomProgram(seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const start = pick([0, 1, 2, -1, 3])
  const step = pick([1, 1, 2, -1])
  const range = step === 1 ? pick(['..', '..=']) : pick(['..', '..='])
  const k = () => pick([1, 2, 3, -2, 65536, 7])
  const stmts: string[] = []
  const count = 1 + Math.floor(r() * 4)
  for (let j = 0; j < count; j++) {
    switch (Math.floor(r() * 8)) {
      case 0:
        stmts.push(`a += (i - ${start}) * ${k()}`)
        break
      case 1:
        stmts.push(`b -= (i - ${start}) * ${k()} + a * ${k()} - a * ${k()}`)
        break
      case 2:
        stmts.push('SWAP(a, b)', 'SWAP(b, a)')
        break
      case 3:
        // (−0 − 0 is −0; −0 + 0 is +0: the sum changes a −0)
        stmts.push(r() < 0.5 ? `y -= f64(i - ${start})` : `y += f64(i - ${start})`)
        break
      case 4:
        stmts.push(`y *= f64(i - ${start} + 1)`)
        break
      case 5:
        // (the divisor is at least 1: 1 at the first value)
        stmts.push(
          `t: i32 <- 0`,
          `t += a * ((i - ${start}) * (i - ${start}) + 1)`,
          `a -= div(t, (i - ${start}) * (i - ${start}) + 1)`,
          'SWAP(a, t)',
          't -> 0',
        )
        break
      case 6:
        // (changes something at the first value: the loop must stay)
        stmts.push(`a += i + ${k()}`)
        break
      default:
        stmts.push(`y += f64(a) * 0.5`, `y -= f64(a) * 0.5`)
    }
  }
  return `fn f(a: i32, b: i32, y: f64, n: i32) {
  for i in ${start}${range}n by ${step} {
    ${stmts.join('\n    ')}
  }
}`
}

const registry = createRegistry().registerBackend(cpuBackend)
const refRegistry = createRegistry().registerBackend(interpreterBackend)
const compile = (source: string, off: boolean) => {
  if (off) disabledPasses.add('idle-first')
  try {
    return compileModule(parse({ text: source, name: 'idle-first random' }), {
      registry,
      backend: cpuBackend.name,
      checks: false,
    }).f!
  } finally {
    disabledPasses.delete('idle-first')
  }
}

describe('pass `idle-first` on random loops: the interpreter’s bits with and without it (cpu, checks off)', () => {
  it('200 programs, trip counts −1 … 6 around the first value', () => {
    let applied = 0
    for (let seed = 1; seed <= 200; seed++) {
      const source = randomProgram(seed)
      const withPass = compile(source, false)
      const without = compile(source, true)
      // (where the pass applied, the generated JavaScript's loop starts elsewhere)
      if (String(withPass.core) !== String(without.core)) applied++
      const interp = compileModule(parse({ text: source, name: 'idle-first random' }), {
        registry: refRegistry,
        backend: interpreterBackend.name,
        checks: false,
      }).f!
      for (const n of [-1, 0, 1, 2, 3, 4, 6])
        for (const [a, b, y] of [
          [3, -5, 1.5],
          [0, 0, -0],
          [2147483647, -2147483648, Number.POSITIVE_INFINITY],
        ] as const) {
          const args = [a, b, y, n]
          const expected = interp(...args) as unknown[]
          for (const f of [withPass, without]) {
            const got = f(...args) as unknown[]
            expect([seed, n, a, got.map((v) => (Object.is(v, -0) ? '-0' : String(v)))]).toEqual([
              seed,
              n,
              a,
              expected.map((v) => (Object.is(v, -0) ? '-0' : String(v))),
            ])
            const back = f.inverse(...got) as unknown[]
            const backRef = interp.inverse(...expected) as unknown[]
            expect([seed, n, 'inverse', back.map(String)]).toEqual([seed, n, 'inverse', backRef.map(String)])
          }
        }
    }
    // (the pass applied to a good share of them)
    expect(applied).toBeGreaterThan(40)
    expect(applied).toBeLessThan(200)
  })
})
