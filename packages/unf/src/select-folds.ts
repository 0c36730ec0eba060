/**
 * Select folds (code generation): `fold (a, x. if x > a then x else a) z A` — the maximum, as
 * `logsumexp` computes its shift — and the same with `<`, `>=`, `<=` and either order of the
 * comparison's arguments, whenever the element is taken if the comparison holds and the
 * accumulator kept otherwise. Such a body is the larger (or smaller) of its two arguments, an
 * associative operation, so the fold is a reduction: it runs as four partial results, each
 * element compared with its own accumulator, so that no comparison waits for the previous one
 * (one chain is latency-bound), then the four are combined by the same selection.
 *
 * The partial results 1–3 start from the operation's unit, −∞ for a maximum and +∞ for a minimum
 * (the select keeps the other argument against it). The result is the fold's: an element NaN
 * fails every comparison and is skipped, and an accumulator NaN stays (z = NaN gives NaN), in
 * every grouping; ties keep the first (strict comparison) or the last (non-strict) element of a
 * group, so the result can differ from the left fold only in the sign of a zero maximum or minimum.
 */
import type { Term } from './term.js'

/** A recognised select fold: the comparison (as JS) with the element first, and the unit. */
export interface SelectFold {
  /** the comparison with the element's value as its first operand (`>`: the element is larger) */
  cmp: '>' | '<' | '>=' | '<='
  /** −∞ (a maximum) or +∞ (a minimum), as JS */
  unit: '(-Infinity)' | 'Infinity'
}

const FLIP = { '>': '<', '<': '>', '>=': '<=', '<=': '>=' } as const

/** The select fold a `fold` or `reduce` over reals is, if it is one (see the module comment). */
export function selectFold(x: Term): SelectFold | undefined {
  if (x.k !== 'fold' && x.k !== 'reduce') return undefined
  const b = x.body
  if (x.acc === x.elem || b.k !== 'if') return undefined
  const isVar = (t: Term, name: string) => t.k === 'var' && t.name === name
  if (!isVar(b.then, x.elem) || !isVar(b.else, x.acc)) return undefined
  const c = b.cond
  if (c.k !== 'op' || c.args.length !== 2 || !(c.op in FLIP)) return undefined
  const op = c.op as keyof typeof FLIP
  const [p, q] = c.args as [Term, Term]
  let cmp: SelectFold['cmp']
  if (isVar(p, x.elem) && isVar(q, x.acc)) cmp = op
  else if (isVar(p, x.acc) && isVar(q, x.elem)) cmp = FLIP[op]
  else return undefined
  return { cmp, unit: cmp === '>' || cmp === '>=' ? '(-Infinity)' : 'Infinity' }
}

/** The select step `a ⊕ e` as a JS expression: e if `e cmp a`, else a. */
export function selectJs(s: SelectFold, a: string, e: string): string {
  return `${e} ${s.cmp} ${a} ? ${e} : ${a}`
}
