/**
 * `peel-ones.ts` and map lanes (found by an adversarial review): a loop that would be peeled inside a map loop run in
 * lanes is not peeled. The lane memo (see `lane-memo.ts`) records the costly values (divisions, square roots,
 * routines) a peeled copy would compute with i = 1 under the `for`'s one opaque guard, and the loop
 * copy after it (same guard, the loop variable never logged as written) would read them back for every
 * later iteration (h: an element read, x[k % len(x)], which the memo also holds).
 */
import { describe, expect, it } from 'vitest'
import { compile, exact } from './test-util.js'

const source = `
fn f(x: f64[], y: f64[], m: i32) {
  for j in 0..len(x) {
    for k in 1..=m { y[j] += x[j] / f64(k) }
  }
}
fn g(x: f64[], y: f64[], m: i32) {
  for j in 0..len(x) {
    t <- 0.0
    for k in 1..=m { t += sqrt(x[j] * f64(k)) }
    y[j] += t
    for k in 1..=m { t -= sqrt(x[j] * f64(k)) }
    t -> 0.0
  }
}
fn h(x: f64[], y: f64[], m: i32) {
  for j in 0..len(x) {
    for k in 1..=m { y[j] += x[k % len(x)] * f64(k) }
  }
}
`

const run = (m: ReturnType<typeof compile>, name: string, n: number, k: number) => {
  try {
    const x = Float64Array.from({ length: n }, (_, i) => i + 1)
    const r = m[name]!(x, new Float64Array(n), k) as unknown[]
    return JSON.stringify(Array.from(r[1] as Float64Array, exact))
  } catch (e) {
    return `${(e as { code?: string }).code} ${(e as Error).message}`
  }
}

describe('peel-ones in map lanes', () => {
  it('a peeled loop inside a map loop in lanes computes what the interpreter does (checks off)', () => {
    const ref = compile(source, 'interpreter', false)
    const peeled = compile(source, 'wasm', false)
    const unpeeled = compile(source, 'wasm', false, true, undefined, { peelOnes: false })
    for (const name of ['f', 'g', 'h'])
      for (const [n, k] of [
        [5, 4],
        [4, 2],
        [2, 3],
      ] as const) {
        const want = run(ref, name, n, k)
        expect([name, n, k, run(unpeeled, name, n, k)]).toEqual([name, n, k, want])
        // (a peeled copy in lanes gave y[j] = k·x[j] (x[j] / 1 read back for every k) in the lanes' elements
        expect([name, n, k, run(peeled, name, n, k)]).toEqual([name, n, k, want])
      }
  })
})
