/**
 * Pass `tabulate` (see @tenet/ir's passes) on compiled programs: cpu and wasm, checks on (where
 * the pass does not run) and off (where it does), give the reference interpreter's doubles bit
 * for bit, forwards and backwards, on random loop nests that apply expensive primitives and
 * rotations to array elements (the shape of paper 000's unitary multiply, Listing 14), with
 * outer loops that run zero, one or several times.
 */
import { describe, expect, it } from 'vitest'
import { parse } from '@tenet/ir'
import { tabulate } from '@tenet/ir/backend'
import { compileModule } from '@tenet/reversible'
import { Random } from '@tenet/testing'
import { forwardAndBack, passChanges, passRegistry } from './test-util.js'

/** The lengths: y and x are m × (n ≤ 3) column-major, w has 5 elements (every index below is in range). */
const M = 4

/**
 * A random loop nest `f(y, x, w, n, m)`: an outer loop over columns l (one of several ranges), an
 * optional counter k, an inner loop over rows j whose statements add primitives of w's elements
 * to y and rotate (x, y) pairs by w's elements; sometimes the outer loop writes w (no table).
 */
function loopNest(seed: number): string {
  const r = new Random(seed)
  const counter = r.chance(0.6)
  const index = () =>
    r.pick(counter ? ['j', 'k', 'm - 1 - j', '0', 'l', 'j + 1'] : ['j', 'm - 1 - j', '0', 'l', 'j + 1'])
  const prim = () => r.pick(['cos', 'sin', 'exp', 'tanh', 'atan', 'sqrt', 'cos', 'sin'])
  const arg = () => (r.chance(0.2) ? `abs(w[${index()}])` : `w[${index()}]`)
  const term = () => `${prim()}(${prim() === 'sqrt' ? `abs(w[${index()}])` : arg()})`
  const stmt = () =>
    r.pick([
      () => `y[j + m * l] += ${term()} * x[j + m * l] + ${term()}`,
      () => `y[j + m * l] -= ${term()} * ${term()}`,
      () => `${r.pick(['ROT', 'IROT'])}(x[j + m * l], y[j + m * l], w[${index()}])`,
      () => `sincos(x[j + m * l], y[j + m * l], w[${index()}])`,
    ])()
  const range = r.pick(['0..n', 'n - 1..=0 by -1', 'n - 1..-1 by -1', '0..n by 2', '0..=n - 1', 'n - 1..0 by -2'])
  const inner = Array.from({ length: r.int(1, 3) }, stmt)
  if (counter) inner.push('INC(k)')
  const body = [
    ...(counter ? ['k: i32 <- 0'] : []),
    `for j in 0..m {\n      ${inner.join('\n      ')}\n    }`,
    ...(counter ? ['k -> m'] : []),
    ...(r.chance(0.15) ? ['w[l] += 0.25'] : []),
  ]
  return `fn f(y: f64[], x: f64[], w: f64[], n: i32, m: i32) {
  for l in ${range} {
    ${body.join('\n    ')}
  }
}`
}

/** Whether the pass changes `f` of the source. */
const changed = (source: string): boolean => passChanges(source, tabulate)

/** f forwards, then its inverse on the result, as one string of exact numbers. */
function runs(source: string, backend: string, checks: boolean, n: number): string {
  const m = compileModule(parse({ text: source, name: 'nest' }), { registry: passRegistry(), backend, checks })
  const args = [
    Float64Array.from({ length: M * 3 }, (_, i) => Math.sin(i + 1)),
    Float64Array.from({ length: M * 3 }, (_, i) => Math.cos(2 * i + 1)),
    Float64Array.from([0.3, -1.2, 2.5, 0.7, -0.4]),
    n,
    M,
  ]
  return forwardAndBack(m, args)
}

describe('tabulate on compiled programs', () => {
  it('random loop nests: cpu and wasm, checks on and off, give the interpreter’s doubles forwards and backwards', () => {
    const failures: string[] = []
    let tabulated = 0
    for (let seed = 0; seed < 24; seed++) {
      const source = loopNest(seed)
      if (changed(source)) tabulated++
      for (const n of [0, 1, 3]) {
        const want = runs(source, 'interpreter', true, n)
        for (const backend of ['cpu', 'wasm'])
          for (const checks of [true, false]) {
            const got = runs(source, backend, checks, n)
            if (got !== want) failures.push(`seed ${seed}, n = ${n}, ${backend} checks ${checks}:\n${source}`)
          }
      }
    }
    expect(failures.slice(0, 3).join('\n\n')).toBe('')
    // most nests get a table (not those whose indices read l, or whose loop writes w)
    expect(tabulated).toBeGreaterThanOrEqual(12)
  })
})
