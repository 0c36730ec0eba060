/**
 * Pass `forward-pure-values` on printed IR before and after, and the cases it must leave alone
 * (the backends' tests check compiled programs against the interpreter, @tenet/ad's gradients
 * through it).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printFunction, printStmts } from '../index.js'
import { forwardPureValues, optimize } from './index.js'

const registry = createRegistry()
const programOf = (text: string) => check(parse(text, []).functions, [], registry)
const fnOf = (text: string, name = 'f'): FunctionDef => programOf(text).functions.get(name)!
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const forwarded = (text: string) => body(forwardPureValues(fnOf(text), registry))
const unchanged = (text: string) => {
  const f = fnOf(text)
  return printFunction(forwardPureValues(f, registry)) === printFunction(f)
}

/** The shape of a fused gradient: lengths forwards, then the adjoint's partial of the root. */
const lengths = (first: string, between = '', second = 'g[e] += h[e] * (0.5 / sqrt(q[e]))') => `
fn f(q: f64[], d: f64[], g: f64[], h: f64[], x: f64[]) {
  for e in 0..len(d) {
    ${first}
  }
  ${between}
  for e in reverse 0..len(d) {
    ${second}
  }
}`
const forward = 'for j in 0..3 { q[e] += x[e + j] ** 2 }\n    d[e] += sqrt(q[e])'

describe('pass `forward-pure-values`', () => {
  it('keeps the roots the first loop computes in a table that the second loop reads', () => {
    expect(forwarded(lengths(forward))).toBe(`e$fwd0: f64[] <- zeros(len(q))
for e in 0..len(d) {
  for j in 0..3 {
    q[e] += x[e + j] ** 2
  }
  d[e] += sqrt(q[e])
  e$fwd0[e] += sqrt(q[e])
}
for e in reverse 0..len(d) {
  g[e] += h[e] * (0.5 / e$fwd0[e])
}
@unchecked {
  for e$fj1 in 0..len(d) {
    e$fwd0[e$fj1] -= sqrt(q[e$fj1])
  }
  e$fwd0 -> zeros(len(q))
}`)
  })

  it('marks the table `overwritten` and its first update `init` (hints for the backends; not printed)', () => {
    const out = forwardPureValues(fnOf(lengths(forward)), registry)
    const alloc = out.body[0]!
    expect(alloc).toMatchObject({ kind: 'alloc', name: 'e$fwd0', overwritten: true })
    const first = out.body[1] as { kind: 'for'; body: Array<{ kind: string; init?: boolean; target?: unknown }> }
    const updates = first.body.filter((s) => s.kind === 'update')
    // d[e] += sqrt(q[e]) is the function's own; only the table's update is `init`
    expect(updates.map((s) => s.init === true)).toEqual([false, true])
    expect(printFunction(out)).not.toMatch(/init|overwritten/)
  })

  it('runs in `optimize` without checks, where `dead-ancillas` drops the uncompute', () => {
    const p = programOf(lengths(forward))
    const off = optimize(p, new Map(), { checks: false } as never).program.functions.get('f')!
    const printed = body(off)
    expect(printed).toContain('g[e] += h[e] * (0.5 / e$fwd0[e])')
    expect(printed).not.toContain('-= sqrt')
    const on = optimize(p, new Map(), { checks: true } as never).program.functions.get('f')!
    expect(body(on)).not.toContain('$fwd')
  })

  it('reads through statements in between that leave the array alone, and other primitives', () => {
    const out = forwarded(lengths('q[e] += x[e]\n    d[e] += exp(q[e])', 'h[0] += 1.0', 'g[e] += h[e] * exp(q[e])'))
    expect(out).toContain('g[e] += h[e] * e$fwd0[e]')
  })

  it('leaves the loops alone when the element may have changed in between', () => {
    // written between the loops
    expect(unchanged(lengths(forward, 'q[0] += 1.0'))).toBe(true)
    // written by the second loop (before or after the use)
    expect(unchanged(lengths(forward, '', 'q[e] += 1.0\n    g[e] += sqrt(q[e])'))).toBe(true)
    expect(unchanged(lengths(forward, '', 'g[e] += sqrt(q[e])\n    q[e] += 1.0'))).toBe(true)
    // written by the first loop after the call, or at another iteration's element
    expect(unchanged(lengths('d[e] += sqrt(q[e])\n    q[e] += 1.0'))).toBe(true)
    expect(unchanged(lengths('q[len(q) - 1 - e] += 1.0\n    d[e] += sqrt(q[e])'))).toBe(true)
    // written through a call (a bijection's inout argument)
    expect(unchanged(lengths('d[e] += sqrt(q[e])', 'SWAP(q[0], q[1])'))).toBe(true)
  })

  it('leaves the loops alone when they may run through other indices', () => {
    const other = `
fn f(q: f64[], d: f64[], g: f64[], h: f64[], n: i32) {
  for e in 0..n { d[e] += sqrt(q[e]) }
  for e in 0..n - 1 { g[e] += sqrt(q[e]) }
}`
    expect(unchanged(other)).toBe(true)
    const stepped = `
fn f(q: f64[], d: f64[], g: f64[], n: i32) {
  for e in 0..n by 2 { d[e] += sqrt(q[e]) }
  for e in 0..n { g[e] += sqrt(q[e]) }
}`
    expect(unchanged(stepped)).toBe(true)
    // the bound itself changes between the loops
    const moved = `
fn f(q: f64[], d: f64[], g: f64[], n: i32) {
  for e in 0..n { d[e] += sqrt(q[e]) }
  n += 1
  for e in 0..n { g[e] += sqrt(q[e]) }
  n -= 1
}`
    expect(unchanged(moved)).toBe(true)
    // another index than the loop's own
    expect(unchanged(lengths('d[e] += sqrt(q[e])', '', 'g[e] += sqrt(q[0])'))).toBe(true)
  })
  describe('a target that holds zeros stands for the table', () => {
    /** `text`'s function `f` with the parameters named in `scratch` marked `Param.scratch`. */
    const withScratch = (text: string, scratch: string[]): FunctionDef => {
      const f = fnOf(text)
      return { ...f, params: f.params.map((p) => (scratch.includes(p.name) ? { ...p, scratch: true } : p)) }
    }
    const reused = (text: string, scratch: string[], atEntry = true) =>
      body(forwardPureValues(withScratch(text, scratch), registry, new Set(), undefined, atEntry))

    it('reads a scratch parameter the first loop accumulates the values into (zero at entry): no table', () => {
      expect(reused(lengths(forward), ['d'])).toBe(`for e in 0..len(d) {
  for j in 0..3 {
    q[e] += x[e + j] ** 2
  }
  d[e] += sqrt(q[e])
}
for e in reverse 0..len(d) {
  g[e] += h[e] * (0.5 / d[e])
}`)
    })

    it('reads an ancilla allocated with zeros before the first loop', () => {
      const text = `
fn f(q: f64[], g: f64[], h: f64[]) {
  d: f64[] <- zeros(len(q))
  for e in 0..len(q) { d[e] += exp(q[e]) }
  for e in 0..len(q) { g[e] += h[e] * exp(q[e]) }
  for e in 0..len(q) { d[e] -= exp(q[e]) }
  d -> zeros(len(q))
}`
      expect(body(forwardPureValues(fnOf(text), registry))).toContain('g[e] += h[e] * d[e]')
    })

    it('keeps the table where the target may not hold zeros there, or changes before the second loop', () => {
      const table = (text: string, scratch: string[], atEntry = true) =>
        reused(text, scratch, atEntry).includes('e$fwd0')
      // not scratch, or an inverse (`scratch` false: its entry is the function's exit)
      expect(table(lengths(forward), [])).toBe(true)
      expect(table(lengths(forward), ['d'], false)).toBe(true)
      // written before the first loop, or in it besides the update
      expect(
        table(
          `
fn f(q: f64[], d: f64[], g: f64[], h: f64[]) {
  d[0] += 1.0
  for e in 0..len(d) { d[e] += sqrt(q[e]) }
  for e in reverse 0..len(d) { g[e] += h[e] * sqrt(q[e]) }
}`,
          ['d'],
        ),
      ).toBe(true)
      expect(table(lengths('d[e] += 1.0\n    d[e] += sqrt(q[e])'), ['d'])).toBe(true)
      // more than the value added (the element holds 2·sqrt, or sqrt + 1)
      expect(table(lengths('d[e] += 2.0 * sqrt(q[e])'), ['d'])).toBe(true)
      // written between the loops or by the second loop
      expect(table(lengths(forward, 'd[0] += 1.0'), ['d'])).toBe(true)
      expect(table(lengths(forward, '', 'd[e] += 1.0\n    g[e] += h[e] * sqrt(q[e])'), ['d'])).toBe(true)
      // an ancilla whose allocation is marked `overwritten` (its elements are not zeros)
      const text = `
fn f(q: f64[], g: f64[], h: f64[]) {
  d: f64[] <- zeros(len(q))
  for e in 0..len(q) { d[e] += exp(q[e]) }
  for e in 0..len(q) { g[e] += h[e] * exp(q[e]) }
  for e in 0..len(q) { d[e] -= exp(q[e]) }
  d -> zeros(len(q))
}`
      const f = fnOf(text)
      const marked = {
        ...f,
        body: [{ ...f.body[0]!, overwritten: true } as FunctionDef['body'][number], ...f.body.slice(1)],
      }
      expect(body(forwardPureValues(marked, registry))).toContain('$fwd')
    })

    it("runs in `optimize` on a program's scratch parameters, not on its inverses", () => {
      const p = programOf(lengths(forward))
      const f = withScratch(lengths(forward), ['d'])
      const program = { ...p, functions: new Map([['f', f]]) }
      const out = optimize(program, new Map([['f', f]]), { checks: false } as never, ['forward-pure-values'])
      expect(body(out.program.functions.get('f')!)).toContain('(0.5 / d[e])')
      expect(body(out.inverses.get('f')!)).toContain('(0.5 / e$fwd0[e])')
    })
  })
})
