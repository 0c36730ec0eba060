/**
 * Pass `scalar-arrays` (scalar replacement of aggregates): an array ancilla of a small literal
 * size, `dx: f64[] <- zeros(3)`, that is only ever used at literal positions (`dx[0]`, `dx[2]`,
 * `len(dx)`) between its allocation and its deallocation in the same block becomes that many
 * scalar ancillas (`dx$sr0 <- 0.0`, …). A loop that allocated the array once per iteration
 * (the leapfrog allocates one per pair of bodies per step) then allocates nothing, and the
 * elements live in registers. Run `unroll` first: it turns `dx[c]` in a short loop into
 * literal positions.
 *
 * With run-time checks on the array's deallocation check stays what it was: each element's
 * deallocation carries `DeallocStmt.element`, and `insert-checks` places one `deallocArray`
 * assert on the array's name before the first of them, over every element (float elements within
 * the tolerance of zero, exact ones exactly: the rule of `$zeros`), instead of one `dealloc`
 * assert per scalar. The bounds asserts it saves are those of literal positions below the literal
 * length, which cannot fail; so the pass runs with checks on too (with a tolerance ≥ 0: below it,
 * or NaN, an array of zeros fails its check where a scalar zero passes, so `optimize` leaves
 * the arrays).
 */
import type { Arg, Expr, FunctionDef, ScalarTypeName, Stmt } from '../ast.js'
import { walk } from '../check.js'
import { printExpr } from '../printer.js'
import { mapInnerBlocks, rewriteBlock } from './rewrite.js'

/** Arrays of at most this many elements are replaced by scalars. */
export const SCALAR_ARRAY_MAX_LENGTH = 16

/** Element types whose zero is the number 0 in every backend's representation. */
const PLAIN = new Set<ScalarTypeName>(['f64', 'f32', 'i32'])

const literalLength = (e: Expr): number | undefined =>
  e.kind === 'call' &&
  e.callee === 'zeros' &&
  e.args[0]?.kind === 'num' &&
  Number.isInteger(e.args[0].value) &&
  e.args[0].value >= 0 &&
  e.args[0].value <= SCALAR_ARRAY_MAX_LENGTH
    ? e.args[0].value
    : undefined

/** The name of element k of array `name` once replaced. */
export const elementName = (name: string, k: number): string => `${name}$sr${k}`

/** Whether every use of `name` in `stmts` is an element at a literal position below `n`, or `len(name)`. */
function onlyLiteralElements(stmts: Stmt[], name: string, n: number): boolean {
  let ok = true
  const check = (e: Expr | Arg): void => {
    switch (e.kind) {
      case 'var':
        if (e.name === name) ok = false
        break
      case 'index':
        if (
          e.array.name === name &&
          !(e.index.kind === 'num' && Number.isInteger(e.index.value) && e.index.value >= 0 && e.index.value < n)
        )
          ok = false
        check(e.index)
        break
      case 'call':
        if (!(e.callee === 'len' && e.args[0]?.kind === 'var' && e.args[0].name === name))
          for (const a of e.args) check(a)
        break
      case 'field':
      case 'neg':
        check(e.target)
        break
      case 'unary':
        check(e.arg)
        break
      case 'binary':
        check(e.left)
        check(e.right)
        break
    }
  }
  walk(stmts, (s) => {
    switch (s.kind) {
      case 'update':
        check(s.target)
        check(s.value)
        for (const [a, b] of s.distinct ?? []) {
          check(a)
          check(b)
        }
        break
      case 'callstmt':
        for (const a of s.args) check(a)
        for (const [a, b] of s.distinct ?? []) {
          check(a)
          check(b)
        }
        break
      case 'alloc':
      case 'dealloc':
        if (s.name === name) ok = false
        else if (s.value.kind !== 'emptystack') check(s.value)
        break
      case 'if':
        check(s.pre)
        if (s.post) check(s.post)
        break
      case 'while':
        check(s.pre)
        check(s.post)
        break
      case 'for':
        check(s.start)
        check(s.stop)
        if (s.step) check(s.step)
        break
      case 'push':
      case 'pop':
        check(s.stack)
        check(s.value)
        break
      case 'safe':
        check(s.expr)
        break
    }
  })
  return ok
}

/** `body` with its small literal-position array ancillas replaced by scalars (nested blocks too). */
export function scalarArraysBlock(body: Stmt[]): Stmt[] {
  let out = mapInnerBlocks(body, scalarArraysBlock)
  for (let i = 0; i < out.length; i++) {
    const a = out[i]!
    if (a.kind !== 'alloc' || a.type?.kind !== 'array' || !PLAIN.has(a.type.elem) || a.value.kind === 'emptystack')
      continue
    const n = literalLength(a.value)
    if (n === undefined) continue
    const j = out.findIndex((s, k) => k > i && s.kind === 'dealloc' && s.name === a.name)
    if (j < 0) continue
    const d = out[j] as Extract<Stmt, { kind: 'dealloc' }>
    if (d.value.kind === 'emptystack' || literalLength(d.value) !== n) continue
    const between = out.slice(i + 1, j)
    if (!onlyLiteralElements(between, a.name, n)) continue
    const elem = a.type.elem
    const type = { kind: 'scalar' as const, name: elem }
    const zero: Expr = { kind: 'num', value: 0, isFloat: elem !== 'i32', type: elem }
    const loc = (s: Stmt) => (s.loc ? { loc: s.loc } : {})
    const allocs: Stmt[] = [],
      deallocs: Stmt[] = []
    for (let k = 0; k < n; k++) {
      allocs.push({ kind: 'alloc', name: elementName(a.name, k), value: zero, type, declared: type, ...loc(a) })
      const element = { array: a.name, index: k, length: n, shown: printExpr(d.value) }
      deallocs.push({
        kind: 'dealloc',
        name: elementName(a.name, k),
        value: zero,
        type,
        declared: type,
        element,
        ...loc(d),
      })
    }
    const replaced = rewriteBlock(between, (x) => {
      if (x.kind === 'index' && x.array.name === a.name && x.index.kind === 'num')
        return { kind: 'var', name: elementName(a.name, x.index.value), type: elem, ...(x.loc ? { loc: x.loc } : {}) }
      if (x.kind === 'call' && x.callee === 'len' && x.args[0]?.kind === 'var' && x.args[0].name === a.name)
        return { kind: 'num', value: n, isFloat: false, type: 'i32' }
      return x
    })
    out = [...out.slice(0, i), ...allocs, ...replaced, ...deallocs, ...out.slice(j + 1)]
    i += n - 1
  }
  return out
}

/** The function with its small literal-position array ancillas replaced by scalars. */
export function scalarReplaceArrays(f: FunctionDef): FunctionDef {
  return { ...f, body: scalarArraysBlock(f.body) }
}
