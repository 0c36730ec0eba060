/**
 * \`overwrittenScratch\`: which scratch parameters a function's generated code writes before it
 * reads them (\`CompiledFunction.overwritten\`), on functions whose first writes are marked as
 * pass \`contract-arrays\` marks them, and the cases it must leave at −1.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, type FunctionDef, type Stmt } from '@tenet/ir'
import { contractArrays } from '@tenet/ir/backend'
import { overwrittenScratch } from './overwritten.js'

const registry = createRegistry()
/** \`text\`'s function \`f\` with the parameters named in \`scratch\` marked scratch, after pass \`contract-arrays\` (which marks first writes). */
function scratchFn(text: string, scratch: string[]): FunctionDef {
  const f = check(parse(text, []).functions, [], registry).functions.get('f')!
  return contractArrays(
    { ...f, params: f.params.map((p) => (scratch.includes(p.name) ? { ...p, scratch: true } : p)) },
    true,
  )
}
const of = (text: string, scratch: string[]) => overwrittenScratch(scratchFn(text, scratch))

describe('overwrittenScratch', () => {
  it('an unused scratch array and one whose first use writes every element first: their own index', () => {
    // d: written first at every index of 0..len(d); u: never used (only its length)
    const text = `fn f(l: f64, x: f64[], d: f64[], u: f64[]) {
      for e in 0..len(d) { d[e] += sqrt(x[e]); l += d[e] * f64(len(u)) }
      for e in 0..len(d) { l += d[e] }
    }`
    expect(of(text, ['d', 'u'])).toEqual([-1, -1, 2, 3])
    // not scratch: −1 whatever the code does
    expect(of(text, [])).toEqual([-1, -1, -1, -1])
  })

  it('a loop over another array’s length: that array’s index (the caller knows whether it is as long)', () => {
    const text = `fn f(l: f64, x: f64[], g: f64[]) {
      for e in reverse 0..len(x) { g[e] += x[e] * 2.0 }
      for e in 0..len(x) { l += g[e] * x[e] }
    }`
    expect(of(text, ['g'])).toEqual([-1, -1, 1])
  })

  it('−1 where an element may be read before it is written', () => {
    const cases = [
      // read before the loop
      `fn f(l: f64, x: f64[], d: f64[]) { l += d[0]; for e in 0..len(d) { d[e] += x[e] } }`,
      // written at one element first
      `fn f(l: f64, x: f64[], d: f64[]) { d[0] += 1.0; for e in 0..len(d) { d[e] += x[e] }; l += d[1] }`,
      // a loop that skips elements, or starts elsewhere
      `fn f(l: f64, x: f64[], d: f64[]) { for e in 0..len(d) by 2 { d[e] += x[e] }; l += d[1] }`,
      `fn f(l: f64, x: f64[], d: f64[]) { for e in 1..len(d) { d[e] += x[e] }; l += d[0] }`,
      // read at the index before the write in the loop, or at another index
      `fn f(l: f64, x: f64[], d: f64[]) { for e in 0..len(d) { l += d[e]; d[e] += x[e] }; l += d[0] }`,
      `fn f(l: f64, x: f64[], d: f64[]) { for e in 0..len(d) { d[e] += x[e]; l += d[0] }; l += d[1] }`,
      // passed whole to a call
      `fn g(a: f64[]) { a[0] += 1.0 }
       fn f(l: f64, x: f64[], d: f64[]) { g(d); for e in 0..len(d) { d[e] += x[e] }; l += d[0] }`,
    ]
    for (const text of cases) expect(of(text, ['d'])[2], text).toBe(-1)
  })

  it('−1 without the first-write mark (a backend reads an unmarked element)', () => {
    const f = scratchFn(`fn f(l: f64, x: f64[], d: f64[]) { for e in 0..len(d) { d[e] += x[e] }; l += d[0] }`, ['d'])
    const unmark = (b: Stmt[]): Stmt[] =>
      b.map((s) =>
        s.kind === 'for' ? { ...s, body: unmark(s.body) } : s.kind === 'update' ? { ...s, init: undefined } : s,
      )
    expect(overwrittenScratch(f)[2]).toBe(2)
    expect(overwrittenScratch({ ...f, body: unmark(f.body) })[2]).toBe(-1)
  })
})
