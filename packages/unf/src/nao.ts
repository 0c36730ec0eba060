/**
 * NAO, the nesting of array operations (seed 004 §5.3), extended to the §7 constructs: every
 * array construct counts one level around its body, like map2 and reduce.
 */
import type { Term } from './term.js'

/** The nesting depth of array operations of a term (p in Theorem 5.4). */
export function nao(t: Term): number {
  switch (t.k) {
    case 'const':
    case 'bool':
    case 'var':
      return 0
    case 'map':
      return Math.max(1 + nao(t.body), ...t.arrays.map(nao))
    case 'reduce':
    case 'fold':
    case 'scanl':
    case 'scanr':
      return Math.max(1 + nao(t.body), nao(t.init), nao(t.array))
    case 'let':
      return Math.max(nao(t.value), nao(t.body))
    case 'tuple':
      return Math.max(0, ...t.items.map(nao))
    case 'proj':
      return nao(t.of)
    case 'op':
      return Math.max(0, ...t.args.map(nao))
    case 'shift1L':
    case 'shift1R':
      return nao(t.array)
    case 'prefix':
      return Math.max(nao(t.array), nao(t.len))
    case 'if':
      return Math.max(nao(t.cond), nao(t.then), nao(t.else))
    default:
      throw new Error(`nao: ${t.k} is not a source construct`)
  }
}
