/**
 * Element loads reused across statements: an analysis for the backends' code generators (cpu,
 * wasm).
 *
 * In a block, an element `A[i]` that one statement reads and a later statement reads again has
 * the same value both times when nothing in between can have written `A` or any name its index
 * reads (distinct names are distinct memory: the checker rejects aliased writes, and the drivers
 * never pass one array twice). The straight-line common subexpressions of `cse.ts` stop at every
 * `if`; this analysis goes across them, and across the conditions themselves, where the loads
 * that matter sit under `&&` and `||`. A merge loop of two sorted index lists reads
 * `arowval[ia]` and `browval[ib]` in the condition that compares them, again in the condition
 * that decides which list advances, and V8 cannot reuse them: the stores between the two may
 * alias, as far as it can tell.
 *
 * A load that its first statement reads under the right operand of `&&` or `||` may not have
 * been read there (and must not be read where the program would not read it: its index may be out
 * of range, precisely when the condition is false). The code generator then keeps a flag beside
 * the local: set where the load is made, tested where it is reused, and the load made there when
 * it was not (`h ? l : (h = true, l = A[i])`). After a statement that reads it unconditionally,
 * the local holds it: no flag is tested from then on.
 *
 * Conservative by construction: only the head of a statement counts (an update's target index
 * and value, an allocation's value, an `if`'s condition, a `for` loop's range); a statement's effects retire loads by
 * `writtenNames` (every name that a nested block, a call's dataview arguments, a stack operation
 * may write), and a statement that may have a host effect (`@safe`, a call of an effectful
 * function, a host function in its head) retires all of them. Nothing of a nested block is reused
 * (a loop body repeats, a branch may not run); the code generator analyses it as a block of its
 * own.
 */
import type { Expr, Stmt } from './ast.js'
import { readNames, walk } from './check.js'
import { stmtExprs } from './stmt-exprs.js'
import { flatten, inRun, key } from './cse.js'
import { writtenNames } from './passes/hoist-invariants.js'
import { callsRuntime } from './passes/insert-checks.js'

/** One element load that several statements of a block read; the code generator's locals for it. */
export interface ReusedLoad {
  /** The load that its first statement reads may not be made there (under `&&`, `||`): a flag says whether it was. */
  conditional: boolean
  /** The generated local holding the element (once declared). */
  local?: string
  /** The generated flag: the local holds the element (only for a `conditional` load). */
  flag?: string
}

/**
 * One occurrence of a reused load in a statement's head. `define`: the load's first statement
 * (every occurrence there loads the element and keeps it); otherwise the element is reused,
 * through the flag (loading and keeping it where the flag is not set) unless `loaded` (an
 * earlier statement read it unconditionally, so that its local holds it).
 */
export interface LoadOccurrence {
  load: ReusedLoad
  define: boolean
  loaded: boolean
}

/** Element types whose loads are reused (numbers and flags of typed arrays). */
const ELEMENT_TYPES = new Set(['f64', 'f32', 'i32', 'bool'])

/** Whether a statement, or one nested in it, calls a host function. */
function reachesHost(s: Stmt): boolean {
  let host = false
  walk([s], (x) => {
    if (!host) host = stmtExprs(x).some(callsRuntime)
  })
  return host
}

/** The expressions a statement evaluates first, before it writes anything: its head. */
function heads(s: Stmt): Expr[] {
  switch (s.kind) {
    case 'update': {
      const out: Expr[] = []
      let t = s.target
      while (t.kind === 'neg') t = t.target
      if (t.kind === 'index') out.push(t.index)
      out.push(s.value)
      return out
    }
    case 'alloc':
      return s.value.kind === 'emptystack' || (s.value.kind === 'call' && s.value.callee === 'zeros') ? [] : [s.value]
    case 'if':
      return [s.pre]
    case 'for':
      // the range, evaluated once before the body runs
      return s.step ? [s.start, s.stop, s.step] : [s.start, s.stop]
    default:
      return []
  }
}

/**
 * For each statement of `flatten(body)` (the block with its `@unchecked` blocks opened, the order
 * in which a code generator's `forEachStatement` visits them), the element-load nodes of its head
 * that are loads several statements read (see the module comment), with what the code generator
 * does at each. Loads that only one statement, or one run of straight-line statements, reads are
 * left out (the run's common subexpressions deal with those: see `sharedSubexpressions`). `effectful`: the functions with a host effect (see
 * `effectfulFunctions`).
 */
export function reusedLoads(
  body: Stmt[],
  effectful: ReadonlySet<string> = new Set(),
): Array<Map<Expr, LoadOccurrence>> {
  interface Live {
    load: ReusedLoad
    /** Names whose write retires it: the array and every name its index reads. */
    reads: Set<string>
    /** The statements that read it. */
    statements: Set<number>
    /** An earlier statement read it unconditionally. */
    loaded: boolean
  }
  const flat = flatten(body).map((f) => f.s)
  const live = new Map<string, Live>()
  /** Each statement's occurrences: node, load, whether it is the load's first statement, whether it is loaded before. */
  const found: Array<Array<[Expr, Live, boolean, boolean]>> = flat.map(() => [])
  flat.forEach((s, k) => {
    const exprs = heads(s)
    // a host function may do anything (it may be given an array): nothing is reused across it
    if (reachesHost(s)) {
      live.clear()
      return
    }
    // the loads this statement reads unconditionally somewhere (known loaded after it)
    const sure = new Set<Live>()
    // the loads whose first statement this is: whether every occurrence here is conditional
    const firsts = new Map<Live, boolean>()
    const visit = (root: Expr): void => {
      // pre-order, left to right; `under`: below the right operand of && or ||
      const todo: Array<[Expr, boolean]> = [[root, false]]
      while (todo.length) {
        const [e, under] = todo.pop()!
        switch (e.kind) {
          case 'index': {
            if (e.type !== undefined && ELEMENT_TYPES.has(e.type)) {
              const id = `${e.array.name}[${key(e.index)}]`
              let l = live.get(id)
              if (!l) {
                l = {
                  load: { conditional: true },
                  reads: readNames(e.index, new Set([e.array.name])),
                  statements: new Set(),
                  loaded: false,
                }
                live.set(id, l)
                firsts.set(l, under)
              } else if (firsts.has(l) && !under) firsts.set(l, false)
              l.statements.add(k)
              found[k]!.push([e, l, firsts.has(l), l.loaded])
              if (!under) sure.add(l)
            }
            todo.push([e.index, under])
            break
          }
          case 'binary':
            if (e.op === '&&' || e.op === '||') todo.push([e.right, true], [e.left, under])
            else todo.push([e.right, under], [e.left, under])
            break
          case 'unary':
            todo.push([e.arg, under])
            break
          case 'field':
            todo.push([e.target, under])
            break
          case 'call':
            for (let i = e.args.length - 1; i >= 0; i--) todo.push([e.args[i]!, under])
            break
          default:
            break
        }
      }
    }
    for (const e of exprs) visit(e)
    for (const [l, under] of firsts) l.load.conditional = under
    for (const l of sure) l.loaded = true
    // what the statement may write (its nested blocks included) retires what reads it
    const written = writtenNames([s], effectful)
    if (!written) {
      live.clear()
      return
    }
    for (const [id, l] of live) for (const n of l.reads) if (written.has(n)) live.delete(id)
  })
  // the run of straight-line statements each statement belongs to (see `forEachStatement`)
  const run: number[] = []
  flat.forEach((s, k) => run.push(k > 0 && inRun(s) && inRun(flat[k - 1]!) ? run[k - 1]! : k))
  // a load read in one run only is one of the run's common subexpressions already
  const across = (l: Live): boolean => new Set([...l.statements].map((k) => run[k])).size > 1
  return found.map((list) => {
    const out = new Map<Expr, LoadOccurrence>()
    for (const [e, l, define, loaded] of list)
      if (across(l) && !out.has(e)) out.set(e, { load: l.load, define, loaded })
    return out
  })
}
