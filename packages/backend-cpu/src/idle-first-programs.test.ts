/**
 * Programs with counting loops whose first iteration changes nothing (the factorial by the integer
 * approximate multiplier from a zero ancilla, as in paper 001's Bessel function; a product from 1;
 * a difference from 0). Without checks, `idle-first` starts them at their second value: the
 * programs must compute the same bits as the reference interpreter (checks on), forwards and
 * backwards, at trip counts around the first value (none, one, two, more), and the optimised IR
 * must show where the pass applied.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printFunction, type BackendSpec } from '@tenet/ir'
import { inlineSmallCalls, optimize } from '@tenet/ir/backend'
import { compileModule } from '@tenet/reversible'
import { backendUnderTest, conformanceProblems, referenceBackend, runConformance } from '@tenet/testing'
import { cpuBackend } from './index.js'

const FACTORIAL = `
fn imul_int(out: i32, x: i32, anc: i32) {
  anc += out * x
  out -= div(anc, x)
  SWAP(out, anc)
}
fn ifactorial(out: i32, n: i32) {
  anc: i32 <- 0
  out += 1
  for i in 1..=n { imul_int(out, i, anc) }
  anc -> 0
}`

/**
 * Each program, its entry, the arguments it runs on, and the loop header the optimised entry must
 * show. (\`forwardOnly\`: argument lists whose round trip no backend makes, the interpreter
 * included: −0 − 0 is −0 but −0 + 0 is +0; there only the forward results are compared.)
 */
const PROGRAMS: Array<{
  name: string
  source: string
  entry: string
  args: unknown[][]
  header: string
  forwardOnly?: unknown[][]
}> = [
  {
    name: 'the factorial by the approximate multiplier',
    source: FACTORIAL,
    entry: 'ifactorial',
    args: [-3, -1, 0, 1, 2, 3, 5, 12].map((n) => [0, n]),
    header: 'for i in 2..=n {',
  },
  {
    name: 'the factorial called once by a float function (as ν! in the Bessel series)',
    source: `${FACTORIAL}
fn f(y: f64, x: f64, n: i32) {
  fact: i32 <- 0
  ifactorial(fact, n)
  y += x / f64(fact)
  ~ifactorial(fact, n)
  fact -> 0
}`,
    entry: 'f',
    args: [0, 1, 2, 4, 7].map((n) => [0.25, 3.5, n]),
    header: 'for i in 2..=n {',
  },
  {
    name: 'a product by f64(i) from 1 (−0, ∞ and NaN kept)',
    source: `fn f(p: f64, n: i32) { for i in 1..=n { p *= f64(i) } }`,
    entry: 'f',
    args: [
      [1.5, 0],
      [1.5, 1],
      [1.5, 2],
      [1.5, 4],
      [-0, 3],
      [Number.POSITIVE_INFINITY, 2],
      [Number.NaN, 2],
    ],
    header: 'for i in 2..=n {',
  },
  {
    name: 'a difference of f64(i) from 0 (−0 − 0 is −0)',
    source: `fn f(y: f64, n: i32) { for i in 0..n { y -= f64(i) } }`,
    entry: 'f',
    args: [
      [0.5, 0],
      [0.5, 1],
      [0.5, 5],
    ],
    forwardOnly: [
      [-0, 0],
      [-0, 1],
      [-0, 2],
    ],
    header: 'for i in 1..n {',
  },
  {
    name: 'an i32 sum by 2 from a start known from an ancilla, wrapping',
    source: `
fn f(s: i32, n: i32) {
  a: i32 <- 0
  for i in a..n by 2 { s += (i + 65536) * 65536 + i }
  a -> 0
}`,
    entry: 'f',
    args: [
      [7, -1],
      [7, 0],
      [7, 1],
      [7, 2],
      [7, 3],
      [7, 9],
    ],
    header: 'for i in 2..n by 2 {',
  },
  {
    name: 'a sum that the first iteration changes (must stay)',
    source: `fn f(y: f64, n: i32) { for i in 0..n { y += f64(i) } }`,
    entry: 'f',
    args: [[0.5, 3]],
    forwardOnly: [
      [-0, 1],
      [-0, 3],
    ],
    header: 'for i in 0..n {',
  },
]

const registry = createRegistry()
const backends = [
  referenceBackend(),
  backendUnderTest(cpuBackend, { registry }),
  { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
]
/** The optimised IR the cpu backend compiles (checks off), captured by a backend that wraps it. */
let captured = new Map<string, string>()
const capture: BackendSpec = {
  ...cpuBackend,
  name: 'capture',
  doCompile(checked, inverses, options) {
    const inlined = inlineSmallCalls(checked, inverses)
    const opt = optimize(inlined.program, inlined.inverses, options).program
    captured = new Map([...opt.functions].map(([n, f]) => [n, printFunction(f)]))
    return cpuBackend.doCompile(checked, inverses, options)
  },
}
const reg = createRegistry().registerBackend(capture)
function optimised(source: string): Map<string, string> {
  compileModule(parse({ text: source, name: 'idle-first' }), { registry: reg, backend: 'capture', checks: false })
  return captured
}

describe('loops with an idle first iteration: every backend, checks on and off, agrees with the interpreter', () => {
  for (const p of PROGRAMS)
    it(`${p.name}: the bits agree; the loop reads \`${p.header}\``, () => {
      for (const args of p.args)
        expect(conformanceProblems(runConformance({ source: p.source, entry: p.entry }, args, backends))).toEqual([])
      for (const args of p.forwardOnly ?? []) {
        const problems = conformanceProblems(runConformance({ source: p.source, entry: p.entry }, args, backends))
        expect(problems.filter((m) => !m.includes('inverse(forward(x)) != x'))).toEqual([])
      }
      const ir = optimised(p.source)
      const fn = p.entry === 'f' && ir.get('f')!.includes('for ') ? 'f' : p.entry === 'f' ? 'ifactorial' : p.entry
      expect(ir.get(fn)!).toContain(p.header)
    })
})
