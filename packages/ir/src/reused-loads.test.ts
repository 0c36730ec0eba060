/**
 * The analysis `reusedLoads` on small programs: which element loads of a block several
 * statements read, where each is made and where it is reused, and every write that must retire
 * one (the cpu backend's tests check generated code and random programs against the interpreter).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printExpr, type Expr, type FunctionDef, type Stmt } from './index.js'
import { flatten } from './cse.js'
import { reusedLoads } from './reused-loads.js'

const registry = createRegistry()
const fnOf = (text: string, hosts: unknown[] = [], name = 'f'): FunctionDef => {
  const m = parse(text, hosts)
  return check(m.functions, m.hosts, registry).functions.get(name)!
}

/**
 * One line per statement of `body` (its `@unchecked` blocks opened) that reads reused loads: its
 * index, then each load as `A[i]` with `def` (made here) or `use` (reused), `?` where a flag is
 * tested or set, `!` where an earlier statement is known to have made it.
 */
function described(body: Stmt[], effectful?: ReadonlySet<string>): string[] {
  const maps = reusedLoads(body, effectful)
  expect(maps).toHaveLength(flatten(body).length)
  return maps.flatMap((m, k) => {
    if (!m.size) return []
    const seen = new Set<string>()
    const parts: string[] = []
    for (const [e, o] of m) {
      const text = `${printExpr(e as Expr)} ${o.define ? 'def' : 'use'}${o.load.conditional ? `?${o.loaded ? '!' : ''}` : ''}`
      if (!seen.has(text)) parts.push(text)
      seen.add(text)
    }
    return [`${k}: ${parts.join(', ')}`]
  })
}
/** The described loads of the body of the function's first loop. */
const loopLoads = (text: string, hosts: unknown[] = []): string[] => {
  const f = fnOf(text, hosts)
  const loop = f.body.find((s) => s.kind === 'for') as Extract<Stmt, { kind: 'for' }>
  return described(loop.body)
}

/** The merge of paper 000's sparse dot product (Listing 22), one iteration of the merge loop. */
const merge = (
  between = '',
  afterFirst = '',
) => `fn f(r: f64, ia: i32, ib: i32, ea: i32, eb: i32, av: i32[], bv: i32[], ax: f64[], bx: f64[], m: i32) {
  keeper: bool[] <- zeros(m)
  for i in 0..m {
    if (ia < ea && ib < eb && av[ia] == bv[ib], ~) {
      r += ax[ia] * bx[ib]
    }
    ${afterFirst}
    keeper[i] ^= ia == ea || ib < eb && bv[ib] < av[ia]
    ${between}
    if (keeper[i], ~) { ib += 1 } else { ia += 1 }
  }
  keeper -> zeros(m)
}`

describe('reusedLoads: element loads that several statements of a block read', () => {
  it('reuses the two row indices of a merge across its conditions, behind flags (first read under &&)', () => {
    expect(loopLoads(merge())).toEqual(['0: av[ia] def?, bv[ib] def?', '1: bv[ib] use?, av[ia] use?'])
  })

  it('needs no flag for a load its first statement reads unconditionally, and knows a flag set after an unconditional read', () => {
    const text = `fn f(y: f64, x: f64[], i: i32, j: i32, n: i32) {
  for k in 0..n {
    y += x[i] * 2.0
    if (j > 0 && x[j] > 0.0, ~) { y += 1.0 }
    y += x[j] + x[i]
    y -= x[j]
  }
}`
    expect(loopLoads(text)).toEqual(['0: x[i] def', '1: x[j] def?', '2: x[j] use?, x[i] use', '3: x[j] use?!'])
  })

  it('retires a load when its array or a name of its index may have been written', () => {
    // the branch writes ib: the second condition reads bv[ib] anew (av[ia] is still the same)
    expect(loopLoads(merge('', 'if (r > 0.0, ~) { ib += 1; ib -= 1 }'))).toEqual(['0: av[ia] def?', '2: av[ia] use?'])
    // an element of av written between (another element: the whole array counts)
    expect(loopLoads(merge('', 'av[m] += 1'))).toEqual(['0: bv[ib] def?', '2: bv[ib] use?'])
    // ia written between the two conditions
    expect(loopLoads(merge('', 'ia += 1\n    ia -= 1'))).toEqual(['0: bv[ib] def?', '3: bv[ib] use?'])
    // a write after the last read does not matter
    expect(loopLoads(merge('av[m] += 1'))).toEqual(['0: av[ia] def?, bv[ib] def?', '1: bv[ib] use?, av[ia] use?'])
  })

  it('is conservative about calls: dataview arguments are written, a host effect retires everything', () => {
    const withCall = (call: string) => `fn g(a: i32[], k: i32) { a[k] += 1 }
fn h(a: i32[], k: i32, y: f64) { y += f64(a[k]) }
fn f(y: f64, a: i32[], b: i32[], i: i32, n: i32) {
  for k in 0..n {
    y += f64(a[i] + b[i])
    ${call}
    y -= f64(a[i] * b[i])
  }
}`
    // g writes a (by name): b[i] is still reused
    expect(loopLoads(withCall('g(a, n)'))).toEqual(['0: b[i] def', '2: b[i] use'])
    // h writes nothing of its arrays, but a call's array arguments count as written
    expect(loopLoads(withCall('h(b, n, y)'))).toEqual(['0: a[i] def', '2: a[i] use'])
    // and so do its scalar ones: the index may change
    expect(loopLoads(withCall('g(b, i)'))).toEqual([])
    // a host function (it may be given an array) in a statement, or in one nested in it
    const host = () => 0
    expect(loopLoads(withCall('y += ${0}(f64(n))'), [host])).toEqual([])
    expect(loopLoads(withCall('if (y > 0.0, ~) { @safe ${0}(a) }'), [host])).toEqual([])
    // a function with a host effect, given nothing of a or b
    const effectful = fnOf(
      `fn e(y: f64) { @safe \${0}(y) }
fn f(y: f64, a: i32[], i: i32, n: i32) {
  for k in 0..n {
    y += f64(a[i])
    e(y)
    y -= f64(a[i])
  }
}`,
      [host],
    )
    const loop = effectful.body[0] as Extract<Stmt, { kind: 'for' }>
    expect(described(loop.body, new Set(['e']))).toEqual([])
    expect(described(loop.body)).toEqual(['0: a[i] def', '2: a[i] use'])
  })

  it('reuses across @unchecked blocks and a loop range, not into nested blocks, and not what one statement reads alone', () => {
    const text = `fn f(y: f64, x: f64[], c: i32[], i: i32, n: i32) {
  for k in 0..n {
    @unchecked { y += x[c[i]] }
    for j in 0..c[i] { y += x[j] * x[c[i]] }
    y -= x[c[i]] * x[c[i]]
    if (x[i] > 0.0, ~) { y += x[i] }
  }
}`
    // the loop writes y and j only: x[c[i]] and c[i] live on past it; x[i] is read by one statement
    expect(loopLoads(text)).toEqual(['0: x[c[i]] def, c[i] def', '1: c[i] use', '2: x[c[i]] use, c[i] use'])
  })
})
