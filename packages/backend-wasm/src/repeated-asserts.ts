/**
 * Repeated run-time checks dropped (with checks on): an assert whose check and condition are those
 * of an assert that already passed on every path to it, with nothing written in between that the
 * condition reads, passes again — the same pure condition of the same values — so it is left out.
 *
 * Reversible code checks the same thing again and again: the uncompute half of a
 * compute–copy–uncompute block (Bennett's trick, every `~{ … }` and every inverse call with
 * checks on) reads the elements the compute half read, and each read gets its bounds assert
 * (`$inrange(3 * j + 2, len(x))` twice per pair of bodies in the n-body acceleration, once for
 * `dx += x[…] - x[…]` and once for `dx -= x[…] - x[…]`); the arms of an `if` repeat the checks of
 * the reads they share. With checks on, the wasm backend evaluates each of those asserts, a compare
 * and a branch around its cold failure path.
 *
 * What is known (the "facts") flows forward through a body: an assert adds its own (or is dropped
 * when it is known); a statement kills every fact whose condition reads a name it writes (a
 * scalar it updates, an ancilla it allocates or deallocates, a loop's variable, any name passed to
 * a call), and one that writes any array element (an element update, any call) kills every fact
 * that reads an element — of any array, as two array parameters may share their memory. A fact
 * that reads only `len(x)` survives writes of x's elements. After an `if`, what both arms know;
 * in and after a loop, what was known before it and its body (any number of iterations) writes
 * nothing of; an `@unchecked` block is straight-line code. Conditions that call a host function
 * are never facts.
 *
 * No check is weakened and no error changes: a dropped assert is one that cannot fail where it
 * stands, and every other assert stays where it was, in the same order, with its message. The
 * accesses an assert marked in bounds are in bounds by the earlier one (same index, same length).
 */
import type { AssertStmt, Expr, FunctionDef, Program, Stmt } from '@tenet/ir'
import { readNames, rootName } from '@tenet/ir/backend'

/** A condition known to hold: its key, the names it reads, and whether it reads array elements. */
interface Fact {
  key: string
  names: ReadonlySet<string>
  elements: boolean
}

/** What a statement may write: names, and whether any array element. */
interface Writes {
  names: Set<string>
  elements: boolean
  /** a statement this module does not know: everything is forgotten */
  all: boolean
}

/** The program and its inverses without their repeated asserts (see the module comment), and how many were dropped. */
export function dropRepeatedAsserts(
  program: Program,
  inverses: Map<string, FunctionDef>,
): { program: Program; inverses: Map<string, FunctionDef>; dropped: number } {
  let dropped = 0
  const each = (f: FunctionDef): FunctionDef => {
    const out = dedupe(f.body, [])
    dropped += out.dropped
    return out.dropped ? { ...f, body: out.body } : f
  }
  return {
    program: { ...program, functions: new Map([...program.functions].map(([n, f]) => [n, each(f)])) },
    inverses: new Map([...inverses].map(([n, f]) => [n, each(f)])),
    dropped,
  }
}

/** `body` without its repeated asserts, given the facts known at its start; the facts known at its end. */
function dedupe(body: Stmt[], known: Fact[]): { body: Stmt[]; known: Fact[]; dropped: number } {
  let dropped = 0
  let facts = known
  const out: Stmt[] = []
  for (const s of body) {
    switch (s.kind) {
      case 'assert': {
        const fact = factOf(s)
        if (fact && facts.some((f) => f.key === fact.key)) {
          dropped++
          continue
        }
        out.push(s)
        if (fact) facts = [...facts, fact]
        continue
      }
      case 'unchecked': {
        const inner = dedupe(s.body, facts)
        dropped += inner.dropped
        facts = inner.known
        out.push(inner.dropped ? { ...s, body: inner.body } : s)
        continue
      }
      case 'if': {
        const a = dedupe(s.then, facts),
          b = dedupe(s.else, facts)
        dropped += a.dropped + b.dropped
        const inElse = new Set(b.known.map((f) => f.key))
        facts = a.known.filter((f) => inElse.has(f.key))
        out.push(a.dropped || b.dropped ? { ...s, then: a.body, else: b.body } : s)
        continue
      }
      case 'for':
      case 'while': {
        // what holds at the start of every iteration, and after the loop: nothing the body (or the
        // loop's variable) writes
        const w = writesOf(s.body)
        if (s.kind === 'for') w.names.add(s.variable)
        facts = survivors(facts, w)
        const inner = dedupe(s.body, facts)
        dropped += inner.dropped
        out.push(inner.dropped ? ({ ...s, body: inner.body } as Stmt) : s)
        continue
      }
      default:
        facts = survivors(facts, writesOf([s]))
        out.push(s)
    }
  }
  return { body: out, known: facts, dropped }
}

/** The facts that `w` writes nothing of. */
function survivors(facts: Fact[], w: Writes): Fact[] {
  if (w.all) return []
  return facts.filter((f) => !(w.elements && f.elements) && ![...f.names].some((n) => w.names.has(n)))
}

/** What the statements of `body` (at any depth) may write. */
function writesOf(body: Stmt[]): Writes {
  const w: Writes = { names: new Set(), elements: false, all: false }
  const visit = (list: Stmt[]) => {
    for (const s of list) {
      switch (s.kind) {
        case 'assert':
        case 'safe':
          break
        case 'update':
          if (s.target.kind === 'var') {
            w.names.add(s.target.name)
            // (a whole array updated, or a name of no known scalar type: its elements too)
            if (typeof s.target.type !== 'string') w.elements = true
          } else {
            w.elements = true
            const r = rootName(s.target)
            if (r !== undefined && !hasIndex(s.target)) w.names.add(r)
          }
          break
        case 'callstmt':
          // a function or bijection may write any of its dataview arguments (and, through an array
          // argument, elements of any array sharing its memory)
          w.elements = true
          for (const a of s.args) {
            const r =
              a.kind === 'var' || a.kind === 'index' || a.kind === 'field' || a.kind === 'neg' ? rootName(a) : undefined
            if (r !== undefined) w.names.add(r)
          }
          break
        case 'alloc':
        case 'dealloc':
          w.names.add(s.name)
          break
        case 'if':
          visit(s.then)
          visit(s.else)
          break
        case 'for':
          w.names.add(s.variable)
          visit(s.body)
          break
        case 'while':
        case 'unchecked':
          visit(s.body)
          break
        default:
          w.all = true
      }
    }
  }
  visit(body)
  return w
}

/** Whether a dataview goes through an array element. */
function hasIndex(e: Expr | { kind: string }): boolean {
  const x = e as Expr
  if (x.kind === 'index') return true
  if (x.kind === 'field') return hasIndex(x.target)
  const n = e as { kind: string; target?: Expr }
  return n.kind === 'neg' && n.target !== undefined && hasIndex(n.target)
}

/** The fact an assert establishes when it passes, or undefined when its condition is not a pure value. */
function factOf(s: AssertStmt): Fact | undefined {
  const key = condKey(s.cond)
  if (key === undefined) return undefined
  return { key: `${s.check}|${key}`, names: readNames(s.cond), elements: readsElements(s.cond) }
}

/** A structural key of a condition (−0 told from 0), or undefined when it calls the host. */
function condKey(e: Expr): string | undefined {
  switch (e.kind) {
    case 'num':
      return `${Object.is(e.value, -0) ? '-0' : e.value}${e.isFloat ? 'f' : ''}:${e.type ?? ''}`
    case 'bool':
      return String(e.value)
    case 'var':
      return `$${e.name}`
    case 'index': {
      const i = condKey(e.index)
      return i === undefined ? undefined : `${e.array.name}[${i}]:${e.type ?? ''}`
    }
    case 'field': {
      const t = condKey(e.target)
      return t === undefined ? undefined : `(${t}).${e.field}`
    }
    case 'unary': {
      const a = condKey(e.arg)
      return a === undefined ? undefined : `${e.op}(${a}):${e.type ?? ''}`
    }
    case 'binary': {
      const l = condKey(e.left),
        r = condKey(e.right)
      return l === undefined || r === undefined ? undefined : `(${l} ${e.op} ${r}):${e.type ?? ''}`
    }
    case 'call': {
      if (e.callee.startsWith('$host')) return undefined
      const args = e.args.map(condKey)
      return args.some((a) => a === undefined) ? undefined : `${e.callee}(${args.join(', ')}):${e.type ?? ''}`
    }
    default:
      return undefined
  }
}

/** Whether a condition reads an array element (an index, or every element: `$zeros`). */
function readsElements(e: Expr): boolean {
  switch (e.kind) {
    case 'index':
      return true
    case 'field':
      return readsElements(e.target)
    case 'unary':
      return readsElements(e.arg)
    case 'binary':
      return readsElements(e.left) || readsElements(e.right)
    case 'call':
      return e.callee === '$zeros' || e.args.some(readsElements)
    default:
      return false
  }
}
