/**
 * Elements a straight-line run keeps in locals (scalar promotion within a run): an analysis for
 * the backends' code generators.
 *
 * In a run of updates (see `inRun` in `cse.ts`), an f64 element `A[e]` that several statements
 * touch — the accumulator `g[o + 3] += …` that an adjoint updates once per term, or a value the
 * run writes and then reads again — can live in a local from its first access to the end of the
 * run: the first access loads it (its address checked there, once), the later ones read and write
 * the local, and the statement that writes it last stores it. Distinct names are distinct memory
 * (the checker rejects aliased writes, and the drivers never pass one array twice), so only
 * accesses of the same array can reach the element another way; every access of the array in the
 * run must therefore be to one of its promoted elements or to an element provably different from
 * all of them (polynomial indices whose difference is a nonzero constant), and the array must not
 * be read as a whole (a call's argument) or by a bijection call.
 *
 * The value of `e` must be the same at every access: the names it reads are not written in the
 * run (not updated, not arguments of a call, allocated at most once, and not deallocated before
 * its last access). An access that may not be evaluated (under the right operand of `&&`, `||`)
 * would be made by the early load where the program does not make it (its index may be out of
 * range precisely then): its array is left alone, as is a run in which a host function or an
 * effectful function is called. An assert's condition (checks on) and a deallocation's value
 * (evaluated only by a check) are not accesses the run makes without checks; a code generator uses
 * this analysis only without run-time checks (a failed call then leaves its arrays unspecified:
 * the stores the run skips between the first and the last write are not seen either way).
 */
import type { Arg, Expr, Stmt } from './ast.js'
import { readNames } from './check.js'
import { polynomial } from './passes/interchange.js'
import { key } from './cse.js'
import { APART } from './passes/apart.js'

/** An element of a run kept in a local (see the module comment). */
export interface RunElement {
  array: string
  /** The element's first access (its index: the address is computed there). */
  element: Extract<Expr, { kind: 'index' }>
  /** The statement (index in the run) of its first access: the load is made before it. */
  first: number
  /** The statement that writes it last (the store is made after it), or −1 when the run only reads it. */
  lastWrite: number
}

type Index = Extract<Expr, { kind: 'index' }>

interface Group {
  array: string
  element: Index
  first: number
  lastWrite: number
  last: number
  count: number
  names: Set<string>
}

/** Whether an index is plain integer arithmetic of names and literals (no load, no call). */
function plainIndex(e: Expr): boolean {
  switch (e.kind) {
    case 'num':
      return true
    case 'var':
      return e.type === 'i32'
    case 'unary':
      return e.op === '-' && plainIndex(e.arg)
    case 'binary':
      return (e.op === '+' || e.op === '-' || e.op === '*') && plainIndex(e.left) && plainIndex(e.right)
    default:
      return false
  }
}

/**
 * An index as its polynomial's variable part (a key) and constant term, or undefined when it is
 * not a polynomial: two indices with the same variable part and different constants are
 * provably different elements (their difference is a nonzero constant); any other two may be one.
 */
function split(e: Expr): { base: string; c: number } | undefined {
  const p = polynomial(e)
  if (!p) return undefined
  const terms = [...p].filter(([m, c]) => m !== '' && c !== 0).map(([m, c]) => `${m}*${c}`)
  return { base: terms.sort().join('+'), c: p.get('') ?? 0 }
}

/**
 * The f64 elements of `run` (the statements of one straight-line run, in order) that a code
 * generator may keep in locals (see the module comment), at least twice accessed each.
 * `effectful`: the functions with a host effect (see `effectfulFunctions`).
 */
export function runElements(run: readonly Stmt[], effectful: ReadonlySet<string> = new Set()): RunElement[] {
  const groups = new Map<string, Group>()
  const refused = new Set<string>()
  const updated = new Set<string>()
  const callArgs = new Set<string>()
  const allocs = new Map<string, number>()
  const deallocAt = new Map<string, number[]>()
  let host = false
  const touch = (e: Index, at: number, write: boolean): void => {
    const a = e.array.name
    if (e.type !== 'f64' || !plainIndex(e.index)) {
      refused.add(a)
      return
    }
    const k = `${a}\u0000${key(e.index)}`
    let g = groups.get(k)
    if (!g) {
      g = { array: a, element: e, first: at, lastWrite: -1, last: at, count: 0, names: readNames(e.index) }
      groups.set(k, g)
    }
    g.count++
    g.last = at
    if (write) g.lastWrite = at
  }
  // the accesses of an expression that is always evaluated; `under`: below the right operand of && or ||
  const visit = (root: Expr | Arg, at: number): void => {
    const todo: Array<[Expr | Arg, boolean]> = [[root, false]]
    while (todo.length) {
      const [e, under] = todo.pop()!
      switch (e.kind) {
        case 'index':
          if (under) refused.add(e.array.name)
          else touch(e, at, false)
          todo.push([e.index, under])
          break
        case 'var':
          // an array read as a whole (an argument of an array primitive): all of it is read
          if (typeof e.type === 'object' && e.type.kind !== 'scalar') refused.add(e.name)
          break
        case 'binary':
          if (e.op === '&&' || e.op === '||') todo.push([e.left, under], [e.right, true])
          else todo.push([e.left, under], [e.right, under])
          break
        case 'unary':
          todo.push([e.arg, under])
          break
        case 'field':
        case 'neg':
          todo.push([e.target, under])
          break
        case 'call':
          if ((e.callee.startsWith('$') && e.callee !== APART) || effectful.has(e.callee)) host = true
          // the length of an array, and where it lies (\`$apart\`), do not change while the run goes on
          if (e.callee === 'len' || e.callee === APART) break
          for (const x of e.args) todo.push([x, under])
          break
        default:
          break
      }
    }
  }
  const mentioned = (e: Expr | Arg, into: Set<string>): void => {
    for (const n of readNames(e)) into.add(n)
  }
  run.forEach((s, at) => {
    switch (s.kind) {
      case 'update': {
        let t = s.target
        while (t.kind === 'neg') t = t.target
        if (t.kind === 'index') {
          touch(t, at, true)
          visit(t.index, at)
        } else if (t.kind === 'var') updated.add(t.name)
        else mentioned(t, refused)
        visit(s.value, at)
        break
      }
      case 'alloc':
        allocs.set(s.name, (allocs.get(s.name) ?? 0) + 1)
        if (s.value.kind !== 'emptystack') visit(s.value, at)
        break
      case 'dealloc': {
        const list = deallocAt.get(s.name) ?? []
        list.push(at)
        deallocAt.set(s.name, list)
        break
      }
      case 'callstmt':
        if (s.target !== 'bijection' || effectful.has(s.callee)) host = true
        // a bijection reads and may write every argument: nothing it names is kept in a local
        for (const a of s.args) {
          mentioned(a, refused)
          mentioned(a, callArgs)
          let v: Arg = a
          while (v.kind === 'neg' || v.kind === 'field') v = v.target
          if (v.kind === 'var') updated.add(v.name)
        }
        break
      case 'assert':
        mentioned(s.cond, refused)
        for (const a of s.args) if (typeof a === 'object') mentioned(a as Expr, refused)
        break
      default:
        // (not a statement of a run)
        host = true
    }
  })
  if (host) return []
  // the groups whose index has one value throughout the run
  const stable = (g: Group): boolean =>
    [...g.names].every(
      (n) =>
        !updated.has(n) &&
        !callArgs.has(n) &&
        (allocs.get(n) ?? 0) <= 1 &&
        !(deallocAt.get(n) ?? []).some((d) => d <= g.last),
    )
  const byArray = new Map<string, Group[]>()
  for (const g of groups.values()) {
    if (refused.has(g.array)) continue
    if (!stable(g)) {
      refused.add(g.array)
      continue
    }
    const list = byArray.get(g.array) ?? []
    list.push(g)
    byArray.set(g.array, list)
  }
  const out: RunElement[] = []
  for (const [array, list] of byArray) {
    if (refused.has(array) || list.every((g) => g.count < 2)) continue
    // one variable part, a different constant for each element
    const parts = list.map((g) => split(g.element.index))
    const consts = new Set(parts.map((x) => x?.c))
    if (parts.some((x) => x === undefined || x.base !== parts[0]!.base) || consts.size !== list.length) continue
    for (const g of list)
      if (g.count >= 2) out.push({ array, element: g.element, first: g.first, lastWrite: g.lastWrite })
  }
  return out.sort((a, b) => a.first - b.first)
}
