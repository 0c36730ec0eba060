/**
 * Pass `replay-uncall` on printed IR: the call–uncall pair of a function that only adds terms to one
 * float array, whose inverse subtracts the same terms in reverse order, calls the recording copy
 * and its replay; and the cases that must stay as they are. The inverses are written out here (the
 * `invert` of `@tenet/reversible` gives the same shape); the compiled programs run against the
 * reference interpreter, with checks on, in `@tenet/backend-cpu`'s `replay-uncall-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type FunctionDef, type Program } from '../index.js'
import { effectfulFunctions, replayUncalls } from './index.js'

const program = (text: string): Program => check(parse(text).functions, [], createRegistry())
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef | undefined): string =>
  printFunction(f!)
    .split('\n')
    .slice(1, -1)
    .map((l) => l.slice(2))
    .join('\n')

/** `acc` adds 2x², through a local, to `a` (or as `term` says), the inverse as written by `inverse`. */
const acc = ({ sign = '+=', term = 't * 2.0', reads = 'x[i] * x[i]', extra = '' } = {}) => `
fn acc(a: f64[], x: f64[], n: i32) {
  for i in ${sign === '+=' ? '' : 'reverse '}0..n {
    t <- 0.0
    t += ${reads}
    a[i] ${sign} ${term}${extra}
    t -= ${reads}
    t -> 0.0
  }
}`

const caller = (between = '') => `
fn f(y: f64[], x: f64[], n: i32) {
  a: f64[] <- zeros(n)
  acc(a, x, n)
  for i in 0..n { y[i] += a[i] }${between}
  ~acc(a, x, n)
  a -> zeros(n)
}`

/** The program of `acc` and `f`, and the inverses (`acc`'s written as `inverse`), after the pass. */
function after(
  forward: string,
  inverse: string,
  between = '',
): { program: Program; inverses: Map<string, FunctionDef> } {
  const p = program(forward + caller(between))
  const inv = program(inverse + caller(between))
  const inverses = new Map([...p.functions.keys()].map((n) => [n, inv.functions.get(n)!]))
  return replayUncalls(p, inverses, effectfulFunctions([...p.functions.values(), ...inverses.values()]))
}

describe('pass `replay-uncall`', () => {
  it('records the terms in the call and replays them in the uncall', () => {
    const r = after(acc(), acc({ sign: '-=' }))
    expect(body(r.program.functions.get('f'))).toBe(
      [
        'a: f64[] <- zeros(n)',
        'acc$replay(a, x, n)',
        'for i in 0..n {',
        '  y[i] += a[i]',
        '}',
        '~acc$replay(a, x, n)',
        'a -> zeros(n)',
      ].join('\n'),
    )
    expect(body(r.program.functions.get('acc$replay'))).toBe(
      [
        'for i in 0..n {',
        '  t <- 0.0',
        '  t += x[i] * x[i]',
        '  a[i] += $record(t * 2.0)',
        '  t -= x[i] * x[i]',
        '  t -> 0.0',
        '}',
      ].join('\n'),
    )
    expect(body(r.inverses.get('acc$replay'))).toBe(
      ['for i in reverse 0..n {', '  a[i] -= $replayed()', '}'].join('\n'),
    )
    expect(r.program.writes.get('acc$replay')).toEqual([true, false, false])
    // (the function itself stays as it was, for its other callers)
    expect(body(r.program.functions.get('acc'))).toContain('a[i] += t * 2.0')
  })

  it('leaves the uncall alone where the inverse computes other terms, or in another order', () => {
    // another term
    expect(after(acc(), acc({ sign: '-=', term: 't * 3.0' })).program.functions.has('acc$replay')).toBe(false)
    // the same terms, but a local computed otherwise (x[i] + 0.0 is not x[i] for x[i] = −0)
    expect(after(acc(), acc({ sign: '-=', reads: 'x[i] * x[i] + 0.0' })).program.functions.has('acc$replay')).toBe(
      false,
    )
    // two updates of a, in the same order in both directions
    const two = (sign: string) => acc({ sign, extra: `\n    a[i] ${sign} t` })
    expect(after(two('+='), two('-=')).program.functions.has('acc$replay')).toBe(false)
    const reversed = acc({ sign: '-=', term: 't', extra: '\n    a[i] -= t * 2.0' })
    expect(after(two('+='), reversed).program.functions.has('acc$replay')).toBe(true)
  })

  it('leaves the uncall alone where what the call reads changes before it', () => {
    const r = after(acc(), acc({ sign: '-=' }), '\n  x[0] += 1.0')
    expect(r.program.functions.has('acc$replay')).toBe(false)
    expect(body(r.program.functions.get('f'))).toContain('~acc(a, x, n)')
    // a write of `a` itself is allowed: the uncall subtracts the same terms whatever a holds
    expect(after(acc(), acc({ sign: '-=' }), '\n  a[0] += 1.0').program.functions.has('acc$replay')).toBe(true)
  })

  it('leaves alone a function that reads the array it adds to, or writes another', () => {
    // (a[i] += a[0] is legal: the elements differ but where i = 0, a check at run time)
    const own = (sign: string) => acc({ sign, term: 'a[0]' })
    expect(after(own('+='), own('-=')).program.functions.has('acc$replay')).toBe(false)
    // a second written array: not replayed
    const twoArrays = (sign: string) =>
      acc({ sign }).replace(
        'fn acc(a: f64[], x: f64[], n: i32) {',
        'fn acc(a: f64[], x: f64[], n: i32) {\n  x[0] += 1.0',
      )
    const inv = acc({ sign: '-=' }).replace(
      'fn acc(a: f64[], x: f64[], n: i32) {',
      'fn acc(a: f64[], x: f64[], n: i32) {\n  x[0] -= 1.0',
    )
    expect(after(twoArrays('+='), inv).program.functions.has('acc$replay')).toBe(false)
  })

  it('pairs only calls and uncalls that nest: crossing pairs keep one plain uncall', () => {
    // `acc2`: the same shape as `acc`, another function; the second pair reads nothing that the
    // first one's calls write (`m`, not `n`)
    const pairs = (order: string) => {
      const calls = `
fn g(a: f64[], b: f64[], x: f64[], y: f64[], n: i32, m: i32) {
${order}
}`
      const p = program(acc() + acc().replace('fn acc(', 'fn acc2(') + calls)
      const inv = program(acc({ sign: '-=' }) + acc({ sign: '-=' }).replace('fn acc(', 'fn acc2(') + calls)
      const inverses = new Map([...p.functions.keys()].map((n) => [n, inv.functions.get(n)!]))
      const r = replayUncalls(p, inverses, effectfulFunctions([...p.functions.values(), ...inverses.values()]))
      return body(r.program.functions.get('g'))
    }
    // crossing, one function: the first pair is replayed, the second computes its uncall
    expect(pairs('  acc(a, x, n)\n  acc(b, y, m)\n  ~acc(a, x, n)\n  ~acc(b, y, m)')).toBe(
      ['acc$replay(a, x, n)', 'acc(b, y, m)', '~acc$replay(a, x, n)', '~acc(b, y, m)'].join('\n'),
    )
    // crossing, two functions
    expect(pairs('  acc(a, x, n)\n  acc2(b, y, m)\n  ~acc(a, x, n)\n  ~acc2(b, y, m)')).toBe(
      ['acc$replay(a, x, n)', 'acc2(b, y, m)', '~acc$replay(a, x, n)', '~acc2(b, y, m)'].join('\n'),
    )
    // nested: both replayed
    expect(pairs('  acc(a, x, n)\n  acc2(b, y, m)\n  ~acc2(b, y, m)\n  ~acc(a, x, n)')).toBe(
      ['acc$replay(a, x, n)', 'acc2$replay(b, y, m)', '~acc2$replay(b, y, m)', '~acc$replay(a, x, n)'].join('\n'),
    )
  })
})
