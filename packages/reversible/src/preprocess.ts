/**
 * Preprocessing: expands the sugar of the surface syntax into core IR. `routine { R }` becomes
 * R, the matching `~routine` becomes the inverse of R, and `~{ B }` becomes the inverse of B.
 */
import { TenetStaticError, type FunctionDef, type SourceLocation, type Stmt, type Type } from '@tenet/ir'
import { invertBody } from './invert.js'
import { expandSugar } from './sugar.js'

function expandBlock(body: Stmt[], owner: SourceLocation | undefined): Stmt[] {
  const out: Stmt[] = []
  const open: Array<{ body: Stmt[]; loc?: SourceLocation }> = []
  for (const s of body) {
    switch (s.kind) {
      case 'routine': {
        const expanded = expandBlock(s.body, s.loc)
        open.push({ body: expanded, ...(s.loc ? { loc: s.loc } : {}) })
        out.push(...expanded)
        break
      }
      case 'unroutine': {
        const r = open.pop()
        if (!r) {
          throw new TenetStaticError(
            'static/unpaired-routine',
            '`~routine` has no matching `routine { ... }` before it in this block',
            s.loc,
          )
        }
        out.push(...invertBody(r.body))
        break
      }
      case 'invblock':
        out.push(...invertBody(expandBlock(s.body, s.loc)))
        break
      case 'if':
        out.push({ ...s, then: expandBlock(s.then, s.loc), else: expandBlock(s.else, s.loc) })
        break
      case 'while':
      case 'for':
      case 'unchecked':
        out.push({ ...s, body: expandBlock(s.body, s.loc) } as Stmt)
        break
      default:
        out.push(s)
    }
  }
  if (open.length) {
    const r = open[open.length - 1]!
    throw new TenetStaticError(
      'static/unpaired-routine',
      '`routine` is never undone: add `~routine` later in the same block (after the code that uses its results)',
      r.loc ?? owner,
    )
  }
  return out
}

/**
 * Gives every deallocation the declared type of the allocation it closes, so that inverting
 * it (into an allocation, inside `~{ }` or an undone routine) keeps the type.
 */
export function annotateDeallocs(body: Stmt[], declared: Map<string, Type | undefined>): Stmt[] {
  return body.map((s): Stmt => {
    switch (s.kind) {
      case 'alloc':
        declared.set(s.name, s.declared)
        return s
      case 'dealloc': {
        const d = declared.get(s.name)
        return d ? ({ ...s, declared: d } as Stmt) : s
      }
      case 'if':
        return { ...s, then: annotateDeallocs(s.then, declared), else: annotateDeallocs(s.else, declared) }
      case 'while':
      case 'for':
      case 'unchecked':
      case 'routine':
      case 'invblock':
        return { ...s, body: annotateDeallocs(s.body, declared) } as Stmt
      default:
        return s
    }
  })
}

/**
 * Expands `routine`/`~routine`, `~{ }`, `for x in arr`, elementwise statements (`[..]`) and
 * `top(s)` in a function; the result is core IR.
 */
export function preprocess(f: FunctionDef): FunctionDef {
  return { ...f, body: expandBlock(annotateDeallocs(expandSugar(f).body, new Map()), f.loc) }
}
