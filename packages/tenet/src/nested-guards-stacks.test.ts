/**
 * `hoist-bounds` hoisting a versioned inner loop's test over the loop around it, where the outer
 * body pushes to a stack whose length the test reads (found by review 17e: the length was taken as
 * fixed, so the test ran once, on the empty stack)
 * — cpu with checks on against the interpreter (the reference).
 */
import { describe, expect, it } from 'vitest'
import { rev, TenetError, type TenetModule } from './index.js'

const engines = {
  interpreter: rev.with({ backend: 'interpreter' }),
  cpu: rev.with({ backend: 'cpu' }),
}
const compile = (tag: (typeof engines)[keyof typeof engines], src: string): TenetModule =>
  tag([src] as unknown as TemplateStringsArray)
const text = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    ArrayBuffer.isView(x) ? Array.from(x as Float64Array, (e) => (Object.is(e, -0) ? '-0' : e)) : x,
  )
function outcome(m: TenetModule, entry: string, args: unknown[], inverse: boolean): string {
  let out: unknown
  try {
    const f = (m as any)[entry]
    out = (inverse ? f.inverse : f)(...args)
  } catch (e) {
    if (!TenetError.isInstance(e)) return `non-tenet ${e}`
    const t = e as TenetError
    return `${t.code} | ${t.message} | ${t.line}:${t.column} | ${text(args)}`
  }
  return `${text(out)} | ${text(args)}`
}
const F = (n: number, f = (i: number) => (i % 7) - 3 + i / 8) => Float64Array.from({ length: n }, (_, i) => f(i))

function same(src: string, lists: Array<() => unknown[]>, directions = [false, true]): void {
  const modules = Object.fromEntries(Object.entries(engines).map(([b, tag]) => [b, compile(tag, src)]))
  for (const inverse of directions)
    lists.forEach((args, k) => {
      const r = Object.fromEntries(Object.entries(modules).map(([b, m]) => [b, outcome(m, 'f', args(), inverse)]))
      expect(r.cpu, `#${k} ${inverse}`).toBe(r.interpreter)
    })
}

describe('hoist-bounds: nests whose tests read the length of a stack the body pushes to', () => {
  // `invariantIn` takes `len(st)` for invariant unless `len:st` is in `changes(body)`; a push/pop
  // adds only `st`, so an inner range `0..len(st)` over a stack the outer body pushes to is taken
  // for invariant: the hoisted test, evaluated once with the stack empty, passes (the inner loop
  // "does not run"), and the inner accesses of later iterations run unchecked.
  it('an inner range over len(stack) that the outer body pushes to', () => {
    same(
      `fn f(y: f64[], n: i32, k: i32) {
  st: stack<f64> <- []
  for i in 0..n {
    for j in 0..len(st) { y[k] += 1.0 }
    t <- 0.0
    push(st, t)
    t -> 0.0
  }
  for i in 0..n { t <- 0.0 ; pop(st, t); t -> 0.0 }
  st -> []
}`,
      [() => [F(3), 3, 1], () => [F(3), 3, 5], () => [F(3), 1, 5], () => [F(3), 2, 5]],
    )
  })

  it('the same with the push in a function the outer body calls', () => {
    same(
      `fn g(st: stack<f64>) { t <- 0.0 ; push(st, t) ; t -> 0.0 }
fn f(y: f64[], n: i32, k: i32) {
  st: stack<f64> <- []
  for i in 0..n {
    for j in 0..len(st) { y[k] += 1.0 }
    g(st)
  }
  for i in 0..n { t <- 0.0 ; pop(st, t); t -> 0.0 }
  st -> []
}`,
      [() => [F(3), 3, 1], () => [F(3), 3, 5]],
    )
  })
  it('an inner index len(stack) + j over a stack the outer body pushes to (returns instead of failing)', () => {
    same(
      `fn f(y: f64[], n: i32, m: i32) {
  st: stack<f64> <- []
  for i in 0..n {
    for j in 0..m { y[len(st) + j] += 1.0 }
    t <- 0.0
    push(st, t)
    t -> 0.0
  }
  for i in 0..n { t <- 0.0 ; pop(st, t); t -> 0.0 }
  st -> []
}`,
      [() => [F(4), 3, 2], () => [F(4), 4, 2], () => [F(3), 3, 2], () => [F(3), 3, 1]],
    )
  })
})
