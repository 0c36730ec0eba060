/**
 * Bounds asserts a load may take over. With checks on, `insert-checks` places a bounds assert
 * before each statement for every element its head reads; a backend whose loads check their own
 * index (the cpu backend's `a[i] ?? fail`, wasm's guarded loads) can leave such an assert out and
 * let the load of the very same element report it. This module recognises the asserts that can go
 * with nothing else; each backend decides which loads take them over.
 */
import type { Expr, Stmt } from './ast.js'
import { key } from './cse.js'
import { exprChildren } from './stmt-exprs.js'

/** A bounds assert before a statement that a load of its head may take over. */
export interface FoldableBounds {
  /** The array it checks (`len(array)`). */
  array: string
  /** The index's key (see `key`). */
  index: string
}

/** Whether an expression reads no element and calls nothing but `len`. */
export function loadFree(e: Expr): boolean {
  if (e.kind === 'index' || e.kind === 'field') return false
  if (e.kind === 'call' && e.callee !== 'len') return false
  return exprChildren(e).every(loadFree)
}

/**
 * The array and index key of a bounds assert that a load may take over: `$inrange(i, len(a))`, or
 * `!g || $inrange(i, len(a))`, where neither `i` nor `g` reads an element or calls anything but
 * `len` (so the assert can be left out with nothing else); undefined for any other statement.
 */
export function foldableBounds(s: Stmt): FoldableBounds | undefined {
  if (s.kind !== 'assert' || s.check !== 'outOfBounds') return undefined
  let c = s.cond
  if (c.kind === 'binary' && c.op === '||') {
    if (!loadFree(c.left)) return undefined
    c = c.right
  }
  if (c.kind !== 'call' || c.callee !== '$inrange') return undefined
  const [i, n] = c.args
  if (!i || !loadFree(i) || n?.kind !== 'call' || n.callee !== 'len' || n.args[0]?.kind !== 'var') return undefined
  return { array: n.args[0].name, index: key(i) }
}
