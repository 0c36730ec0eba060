/**
 * Which array parameters a program only accumulates into: every use of the array, in the function
 * and in the callees it is passed to, is `a[i] += e` or `a[i] -= e` with neither `i` nor `e`
 * reading `a` (`len(a)` aside). Nothing then reads the array's elements, so an element that no
 * caller looks at afterwards can skip its updates, and so can its tangent: `hessian` skips the
 * gradient rows that symmetry already gives (see `rowsVariant` in tangent.ts).
 */
import type { Arg, Expr, FunctionDef, Stmt } from '@tenet/ir'
import { stmtExprs, valueReads } from '@tenet/ir/backend'

/** Whether `name` is written `name` (a bare variable argument). */
const isVar = (a: Arg, name: string): boolean => a.kind === 'var' && a.name === name

/**
 * Whether function `fname` of `functions` only accumulates into its parameter at `position` (an
 * array), callees included. Recursion is assumed to accumulate only (the fixed point's start).
 */
export function accumulatesOnly(
  functions: ReadonlyMap<string, FunctionDef>,
  fname: string,
  position: number,
  visiting: Set<string> = new Set(),
): boolean {
  const f = functions.get(fname)
  const p = f?.params[position]
  if (!f || p?.type.kind !== 'array') return false
  const key = `${fname}/${position}`
  if (visiting.has(key)) return true
  visiting.add(key)
  try {
    return body(functions, f.body, p.name, visiting)
  } finally {
    visiting.delete(key)
  }
}

function body(
  functions: ReadonlyMap<string, FunctionDef>,
  stmts: Stmt[],
  name: string,
  visiting: Set<string>,
): boolean {
  const reads = (e: Expr | Arg) => valueReads(e).has(name)
  for (const s of stmts) {
    switch (s.kind) {
      case 'update': {
        const t = s.target
        if (t.kind === 'index' && t.array.name === name) {
          if (s.op !== '+=' && s.op !== '-=') return false
          if (reads(t.index) || reads(s.value)) return false
          continue
        }
        break
      }
      case 'callstmt': {
        const callee = functions.get(s.callee)
        let ok = true
        s.args.forEach((a, i) => {
          if (!ok) return
          if (isVar(a, name)) ok = !!callee && accumulatesOnly(functions, s.callee, i, visiting)
          else if (reads(a)) ok = false
        })
        if (!ok) return false
        continue
      }
      case 'alloc':
      case 'dealloc':
        // a local of the same name hides the parameter: not followed
        if (s.name === name) return false
        break
      case 'for':
        if (s.variable === name) return false
        break
    }
    if (stmtExprs(s).some(reads)) return false
    for (const b of nested(s)) if (!body(functions, b, name, visiting)) return false
  }
  return true
}

function nested(s: Stmt): Stmt[][] {
  switch (s.kind) {
    case 'if':
      return [s.then, s.else]
    case 'while':
    case 'for':
    case 'unchecked':
    case 'routine':
    case 'invblock':
      return [s.body]
    default:
      return []
  }
}
