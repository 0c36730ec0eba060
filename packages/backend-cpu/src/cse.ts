/**
 * Common subexpressions of a straight-line run of updates, for the code generator.
 *
 * Within a run of consecutive `y op= e` statements (and bijection calls between them), an expression that occurs again before any
 * statement writes a variable or array it reads has the same value both times (expressions are
 * pure, and distinct names are distinct memory: the checker rejects aliased writes, and the
 * drivers never pass one array twice). The generator computes it once into a `const`. This is
 * what V8 cannot do by itself across stores into typed arrays (it cannot prove that two arrays
 * do not alias), and it is where reverse and forward-over-reverse programs repeat themselves: the
 * uncompute of `q += (x[a] - x[b]) ** 2` and its two gradient updates all read `x[a] - x[b]`,
 * and a tangent at width w repeats each partial derivative w times.
 */
import { readNames, rootName, type Expr, type Stmt } from '@tenet/ir'

/** One shared value: the generated `const` once the first occurrence has been emitted. */
export interface Shared { temp?: string }

type Update = Extract<Stmt, { kind: 'update' }>
type Bijection = Extract<Stmt, { kind: 'callstmt' }>

/** Whether a statement belongs in a run: an update, or a bijection call (`SWAP`, `ROT`, …) that only writes its arguments. */
export function inRun(s: Stmt): s is Update | Bijection {
  return s.kind === 'update' || (s.kind === 'callstmt' && s.target === 'bijection')
}

/** A structural key of an expression (kind, operator, type and children). */
export function key(e: Expr): string {
  switch (e.kind) {
    case 'num': return `${e.value}${e.isFloat ? 'f' : ''}:${e.type ?? ''}`
    case 'bool': return String(e.value)
    case 'var': return `$${e.name}`
    case 'index': return `${e.array.name}[${key(e.index)}]:${e.type ?? ''}`
    case 'field': return `(${key(e.target)}).${e.field}`
    case 'unary': return `${e.op}(${key(e.arg)}):${e.type ?? ''}`
    case 'binary': return `(${key(e.left)} ${e.op} ${key(e.right)}):${e.type ?? ''}`
    case 'call': return `${e.callee}(${e.args.map(key).join(', ')}):${e.type ?? ''}`
  }
}

/** Whether an expression is worth a `const` (a load or arithmetic, not a name or literal). */
function candidate(e: Expr): boolean {
  switch (e.kind) {
    case 'index': case 'binary': return true
    case 'unary': return e.op === '-' && e.arg.kind !== 'num' && e.arg.kind !== 'var'
    case 'call': return !e.callee.startsWith('$host') && e.callee !== 'len'
    default: return false
  }
}

/**
 * For each statement of `run`, the nodes of its value to compute once: nodes that map to the
 * same `Shared` have the same value. Only values that occur at least twice are returned.
 */
export function sharedSubexpressions(run: Array<Update | Bijection>): Array<Map<Expr, Shared>> {
  interface Entry { shared: Shared; deps: Set<string>; count: number }
  const available = new Map<string, Entry>()
  const perStmt: Array<Map<Expr, Entry>> = []
  for (const s of run) {
    const nodes = new Map<Expr, Entry>()
    const visit = (e: Expr): void => {
      // the right operand of && and || is not always evaluated: nothing below them moves
      if (e.kind === 'binary' && (e.op === '&&' || e.op === '||')) return
      if (candidate(e)) {
        const k = key(e)
        const hit = available.get(k)
        if (hit) { hit.count++; nodes.set(e, hit); return }
        const entry: Entry = { shared: {}, deps: readNames(e), count: 1 }
        available.set(k, entry)
        nodes.set(e, entry)
      }
      switch (e.kind) {
        case 'index': visit(e.index); break
        case 'field': visit(e.target); break
        case 'unary': visit(e.arg); break
        case 'binary': visit(e.left); visit(e.right); break
        case 'call': for (const a of e.args) visit(a); break
      }
    }
    if (s.kind === 'update') visit(s.value)
    perStmt.push(nodes)
    // a bijection may write any of its arguments (nothing of it is shared)
    const written = s.kind === 'update' ? [rootName(s.target)] : s.args.map((a) => rootName(a))
    if (written.includes(undefined)) available.clear()
    for (const [k, entry] of available) if (written.some((w) => entry.deps.has(w!))) available.delete(k)
  }
  return perStmt.map((nodes) => {
    const out = new Map<Expr, Shared>()
    for (const [e, entry] of nodes) if (entry.count > 1) out.set(e, entry.shared)
    return out
  })
}

/**
 * Array elements of a loop that can live in a local while it runs (scalar promotion): in a loop
 * body made of updates only, an element `a[i]` that is the only way the body touches `a`, with an
 * index that reads neither the loop variable nor anything the body writes. The accumulation
 * `q[e] += …` of an inner loop then runs in a register instead of through memory (V8 must
 * otherwise assume that the stores may alias the other arrays' loads). Returns the element
 * expression per array name.
 */
export function promotableElements(loopVariable: string, body: Stmt[]): Map<string, Extract<Expr, { kind: 'index' }>> {
  const out = new Map<string, Extract<Expr, { kind: 'index' }>>()
  if (body.length === 0 || !body.every((s) => s.kind === 'update')) return out
  const updates = body as Update[]
  const written = new Set<string>([loopVariable])
  for (const s of updates) { const r = rootName(s.target); if (r === undefined) return out; written.add(r) }
  // every occurrence of each array in the body, by key ('' for a use that is not an element)
  const uses = new Map<string, Set<string>>()
  const elements = new Map<string, Extract<Expr, { kind: 'index' }>>()
  const note = (name: string, k: string) => { let u = uses.get(name); if (!u) uses.set(name, (u = new Set())); u.add(k) }
  const visit = (e: Expr): void => {
    switch (e.kind) {
      case 'var': note(e.name, ''); break
      case 'index': { const k = key(e); note(e.array.name, k); elements.set(e.array.name, e); visit(e.index); break }
      case 'field': visit(e.target); break
      case 'unary': visit(e.arg); break
      case 'binary': visit(e.left); visit(e.right); break
      case 'call': for (const a of e.args) visit(a); break
    }
  }
  const visitTarget = (dv: Update['target']): void => {
    switch (dv.kind) {
      case 'neg': visitTarget(dv.target); break
      case 'var': note(dv.name, ''); break
      case 'index': visit(dv); break
      default: note(rootName(dv) ?? '', '')
    }
  }
  for (const s of updates) { visitTarget(s.target); visit(s.value) }
  for (const [name, ks] of uses) {
    const e = elements.get(name)
    if (!e || ks.size !== 1 || ks.has('') || e.type === 'bool' || !written.has(name)) continue
    const idx = readNames(e.index)
    if ([...idx].some((n) => written.has(n))) continue
    out.set(name, e)
  }
  return out
}
