/**
 * Step `hoist-lane-calls` of pass `pair-series` on printed IR before and after, and the calls it
 * must leave in the lanes. The compiled programs are checked against the interpreter (checks on
 * and off, forwards and backwards, failing checks included) in `@tenet/backend-cpu`'s
 * `hoist-lane-calls-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type FunctionDef, type Program } from '../index.js'
import { exactLaneFunctions, hoistBounds, insertChecks, pairSeries } from './index.js'

const registry = createRegistry()
const programOf = (text: string): Program => check(parse(text, []).functions, [], registry)
const body = (f: FunctionDef): string =>
  printFunction(f)
    .split('\n')
    .slice(1, -1)
    .map((l) => l.slice(2))
    .join('\n')
const paired = (p: Program, hoistCalls = true, name = 'batch'): string =>
  body(pairSeries(p, new Map(), { unrollSwaps: false, lanes: 2, hoistCalls }).program.functions.get(name)!)

/** ν! by the integer approximate multiplier (exact), as paper 001's Bessel function computes it. */
const factorial = `fn imul_int(out: i32, x: i32, anc: i32) {
  anc += out * x
  out -= div(anc, x)
  SWAP(out, anc)
}
fn ifact(out: i32, n: i32) {
  anc: i32 <- 0
  out += 1
  for i in 1..=n { imul_int(out, i, anc) }
  anc -> 0
}
`
/**
 * A series whose first term divides by ν! (the shape of paper 001's `ibesselj`); `before`, a line
 * put before the call of the factorial.
 */
const series = (factArg: string, init = '0', before?: string) => `fn term(out: f64, nu: i32, z: f64) {
  k: i32 <- 0
  f: i32 <- ${init}
  s <- 0.0
  anc <- 0.0
${before === undefined ? '' : `  ${before}\n`}  ifact(f, ${factArg})
  s += z / f64(f)
  while (abs(s) > 1e-8 && abs(anc) < 1e-8, k != 0) {
    k += 1
    anc += s * z
    s -= anc / z
    SWAP(s, anc)
    out += identity(s)
  }
  @unchecked { s -> 0.0 }
  @unchecked { anc -> 0.0 }
  ~ifact(f, ${factArg})
  f -> 0
  @unchecked { k -> 0 }
}
`
const batch = `fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { term(out[i], nu, z[i]) }
}`

describe('step `hoist-lane-calls` of pass `pair-series`', () => {
  it('decides exactness without the asserts: the factorial is exact with its checks placed', () => {
    const p = programOf(factorial + series('nu') + batch)
    expect([...exactLaneFunctions(p)].sort()).toEqual(['ifact', 'imul_int'])
    const asserted = insertChecks(p, new Map(), { checks: true, tolerance: 1e-8 } as never)
    expect([...exactLaneFunctions(asserted.program)].sort()).toEqual(['ifact', 'imul_int'])
  })

  it('prints the IR before and after: one call before the grouped loop, each lane adds its result', () => {
    const p = programOf(factorial + series('nu') + batch)
    expect(paired(p)).toMatchInlineSnapshot(`
      "if (0 < len(z) && (len(z) - 1 - 0 >= 1 && len(z) - 1 - 0 <= 1073741824), ~) {
        $pair0inv0$: i32 <- 0
        ifact($pair0inv0$, nu)
        for i in 0..=len(z) - 1 - 1 by 2 {
          $pair0a$k: i32 <- 0
          $pair0a$f: i32 <- 0
          $pair0a$s <- 0.0
          $pair0a$anc <- 0.0
          $pair0a$f += $pair0inv0$
          $pair0a$s += z[i] / f64($pair0a$f)
          $pair0b$k: i32 <- 0
          $pair0b$f: i32 <- 0
          $pair0b$s <- 0.0
          $pair0b$anc <- 0.0
          $pair0b$f += $pair0inv0$
          $pair0b$s += z[i + 1] / f64($pair0b$f)
          while (abs($pair0a$s) > 1e-8 && abs($pair0a$anc) < 1e-8 && (abs($pair0b$s) > 1e-8 && abs($pair0b$anc) < 1e-8), $pair0a$k != 0 && $pair0b$k != 0) {
            $pair0a$k += 1
            $pair0a$anc += $pair0a$s * z[i]
            $pair0a$s -= $pair0a$anc / z[i]
            SWAP($pair0a$s, $pair0a$anc)
            out[i] += identity($pair0a$s)
            $pair0b$k += 1
            $pair0b$anc += $pair0b$s * z[i + 1]
            $pair0b$s -= $pair0b$anc / z[i + 1]
            SWAP($pair0b$s, $pair0b$anc)
            out[i + 1] += identity($pair0b$s)
          }
          while (abs($pair0a$s) > 1e-8 && abs($pair0a$anc) < 1e-8, $pair0a$k != 0) {
            $pair0a$k += 1
            $pair0a$anc += $pair0a$s * z[i]
            $pair0a$s -= $pair0a$anc / z[i]
            SWAP($pair0a$s, $pair0a$anc)
            out[i] += identity($pair0a$s)
          }
          while (abs($pair0b$s) > 1e-8 && abs($pair0b$anc) < 1e-8, $pair0b$k != 0) {
            $pair0b$k += 1
            $pair0b$anc += $pair0b$s * z[i + 1]
            $pair0b$s -= $pair0b$anc / z[i + 1]
            SWAP($pair0b$s, $pair0b$anc)
            out[i + 1] += identity($pair0b$s)
          }
          @unchecked {
            $pair0a$s -> 0.0
          }
          @unchecked {
            $pair0a$anc -> 0.0
          }
          ~ifact($pair0a$f, nu)
          $pair0a$f -> 0
          @unchecked {
            $pair0a$k -> 0
          }
          @unchecked {
            $pair0b$s -> 0.0
          }
          @unchecked {
            $pair0b$anc -> 0.0
          }
          ~ifact($pair0b$f, nu)
          $pair0b$f -> 0
          @unchecked {
            $pair0b$k -> 0
          }
        }
        $pair0inv0$ -= $pair0inv0$
        $pair0inv0$ -> 0
        for i in 0 + (len(z) - 1 - 0 + 1 - (len(z) - 1 - 0 + 1) % 2)..=len(z) - 1 by 1 {
          term(out[i], nu, z[i])
        }
      } else {
        for i in 0..len(z) {
          term(out[i], nu, z[i])
        }
      }"
    `)
    // without the step, each lane calls the factorial
    expect(paired(p, false).match(/(^|[^~])ifact\(/gm)?.length).toBe(2)
  })

  it('leaves a call whose argument varies with the loop, or whose result ancilla is not zero, in the lanes', () => {
    const varies = programOf(`${factorial}${series('nu')}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { term(out[i], i, z[i]) }
}`)
    expect(paired(varies)).not.toMatch(/\$inv/)
    const dirty = programOf(factorial + series('nu', '1') + batch)
    expect(paired(dirty)).not.toMatch(/\$inv/)
  })

  it('with checks on, leaves a call that an assert of the lane precedes, and hoists it where none does', () => {
    // (a deallocation checked before the call: its failure would come first)
    const text = (before: string) => factorial + series('nu', '0', before) + batch
    const options = { checks: true, tolerance: 1e-8 } as never
    const grouped = (before: string): string => {
      const asserted = insertChecks(programOf(text(before)), new Map(), options)
      const bounded = hoistBounds(asserted.program, asserted.inverses, options)
      const out = pairSeries(bounded.program, bounded.inverses, { checked: true, lanes: 2, unrollSwaps: false })
      return printFunction(out.program.functions.get('batch')!)
    }
    const asserted = grouped('q <- z * z; q -= z * z; q -> 0.0')
    expect(asserted).toMatch(/\$pair0a\$/)
    expect(asserted).not.toMatch(/\$inv/)
    const plain = grouped('q <- z * z; q -= z * z; @unchecked { q -> 0.0 }')
    expect(plain).toMatch(/\$pair0a\$/)
    expect(plain).toMatch(/ifact\(\$pair0inv0\$, nu\)/)
  })
})
