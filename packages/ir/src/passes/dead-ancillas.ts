/**
 * Pass `dead-ancillas`: drops the statements whose only effect is on ancillas that nothing reads
 * afterwards. Without run-time checks a deallocation `x -> e` reads nothing (the check is gone),
 * so the uncompute half of a compute–copy–uncompute (`~routine`), which only brings ancillas back
 * to zero before they are dropped, does no observable work: it is removed, and so is an
 * allocation that nothing uses any more. This is where a reversible program run forwards pays
 * for reversibility (a `~routine` doubles the work of its routine), and plain code does not.
 *
 * The analysis is backward liveness over structured code, whole variables and whole arrays as
 * the unit (an element write keeps its array live). A statement is dropped when everything it
 * writes (at any depth, ancillas it allocates itself excepted) is dead after it and it has no
 * other effect: no `@safe`, host call, stack operation, or call of a function that has one.
 * A loop whose writes are all dead goes as a whole (its condition, which reads what the body
 * writes, goes with it), so a loop is assumed to terminate. With checks on, a deallocation reads
 * its ancilla (outside `@unchecked`), which keeps the uncompute, and the pass changes nothing a
 * check could see; the backends run it only with checks off, where the result is no longer
 * reversible (an ancilla is not back at zero when it is dropped), and a statement that is not run
 * cannot raise (the wasm backend's out-of-bounds error of a dropped read, for instance).
 */
import type { Arg, Expr, FunctionDef, Stmt } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import type { Program } from '../plugin.js'
import { stmtExprs as exprsOf } from '../stmt-exprs.js'
import { callsHost } from './insert-checks.js'
import { callsHostOrTape } from './replay-uncall.js'

/** What the pass needs to know about the program around a function. */
export interface DeadAncillasContext {
  /** For each function, which parameters it writes (the program's `writes`). */
  writes: Map<string, boolean[]>
  /** Functions that have an effect besides writing their arguments (see `effectfulFunctions`). */
  effectful: ReadonlySet<string>
  /** Whether run-time checks are on (a deallocation then reads its ancilla). */
  checks: boolean
}

/**
 * The functions of a program with an effect other than writing their arguments: a `@safe`
 * statement, a host call, a stack operation (a pop from an empty stack fails even without
 * checks), a term recorded or replayed (pass `replay-uncall`), or a call of such a function.
 */
export function effectfulFunctions(functions: Iterable<FunctionDef>): Set<string> {
  const direct = new Set<string>()
  const callers = new Map<string, Set<string>>()
  for (const f of functions) {
    walk(f.body, (s) => {
      // (the tape of pass \`replay-uncall\` is a stack too: \`$record\` pushes, \`$replayed\` pops)
      if (s.kind === 'safe' || s.kind === 'push' || s.kind === 'pop' || exprsOf(s).some(callsHostOrTape))
        direct.add(f.name)
      if (s.kind === 'callstmt' && s.target === 'function') {
        let c = callers.get(s.callee)
        if (!c) callers.set(s.callee, (c = new Set()))
        c.add(f.name)
      }
    })
  }
  const out = new Set<string>()
  const todo = [...direct]
  while (todo.length) {
    const n = todo.pop()!
    if (out.has(n)) continue
    out.add(n)
    for (const c of callers.get(n) ?? []) todo.push(c)
  }
  return out
}

/** The variables and arrays an argument or expression reads (`len(a)` reads no element of a). */
function reads(e: Expr | Arg, out: Set<string>): void {
  if (e.kind === 'call' && e.callee === 'len') return
  readNames(e, out)
}

class DeadAncillas {
  constructor(private readonly ctx: DeadAncillasContext) {}

  /** Whether a statement has an effect besides its writes (then it always stays). */
  private effectful(s: Stmt): boolean {
    let yes = false
    walk([s], (x) => {
      if (x.kind === 'safe' || x.kind === 'push' || x.kind === 'pop' || exprsOf(x).some(callsHost)) yes = true
      else if (x.kind === 'callstmt' && x.target === 'function' && this.ctx.effectful.has(x.callee)) yes = true
    })
    return yes
  }

  /**
   * The names a statement writes, at any depth, less the ancillas it allocates itself; undefined
   * when it deallocates one it did not allocate (an `@unchecked { t -> 0.0 }`), which keeps it.
   */
  private writes(s: Stmt): Set<string> | undefined {
    const out = new Set<string>(),
      local = new Set<string>()
    let foreign = false
    walk([s], (x) => {
      switch (x.kind) {
        case 'dealloc':
          if (!local.has(x.name)) foreign = true
          break
        case 'update': {
          const r = rootName(x.target)
          if (r) out.add(r)
          break
        }
        case 'callstmt': {
          const w = x.target === 'function' ? this.ctx.writes.get(x.callee) : undefined
          x.args.forEach((a, i) => {
            // a bijection may write any of its dataview arguments; a function those it writes
            if (x.target === 'function' && !w?.[i]) return
            const r = rootName(a)
            if (r) out.add(r)
          })
          break
        }
        case 'alloc':
          local.add(x.name)
          break
        case 'for':
          local.add(x.variable)
          break
      }
    })
    if (foreign) return undefined
    for (const n of local) out.delete(n)
    return out
  }

  /** The body with its dead statements dropped, given what is live after it; and what is live before it. */
  block(body: Stmt[], liveAfter: Set<string>, checking: boolean): { body: Stmt[]; live: Set<string> } {
    let live = new Set(liveAfter)
    const out: Stmt[] = []
    for (let k = body.length - 1; k >= 0; k--) {
      const s = body[k]!
      // (an `@unchecked` block is no scope: its allocations and deallocations are the block's own)
      if (s.kind !== 'alloc' && s.kind !== 'dealloc' && s.kind !== 'unchecked' && !this.effectful(s)) {
        const w = this.writes(s)
        if (w && ![...w].some((n) => live.has(n))) continue
      }
      const r = this.stmt(s, live, checking)
      out.push(r.stmt)
      live = r.live
    }
    out.reverse()
    return { body: out, live }
  }

  private stmt(s: Stmt, after: Set<string>, checking: boolean): { stmt: Stmt; live: Set<string> } {
    const live = new Set(after)
    switch (s.kind) {
      case 'alloc':
        live.delete(s.name)
        for (const e of exprsOf(s)) reads(e, live)
        return { stmt: s, live }
      case 'dealloc':
        if (checking) {
          live.add(s.name)
          for (const e of exprsOf(s)) reads(e, live)
        } else live.delete(s.name)
        return { stmt: s, live }
      case 'if': {
        const post = new Set(after)
        if (checking) reads(s.post ?? s.pre, post)
        const t = this.block(s.then, post, checking),
          e = this.block(s.else, post, checking)
        for (const n of t.live) live.add(n)
        for (const n of e.live) live.add(n)
        reads(s.pre, live)
        return { stmt: { ...s, then: t.body, else: e.body }, live }
      }
      case 'for':
      case 'while': {
        // live at the end of an iteration: what is live after the loop, what the next test of
        // the condition (and the checks) read, and what any iteration reads of the names it does
        // not allocate itself (its own ancillas start afresh each time): no fixed point needed
        const end = new Set(after)
        if (s.kind === 'while') {
          reads(s.pre, end)
          if (checking) reads(s.post, end)
        } else if (checking) for (const e of exprsOf(s)) reads(e, end)
        const local = new Set<string>()
        walk(s.body, (x) => {
          if (x.kind === 'alloc') local.add(x.name)
          else if (x.kind === 'for') local.add(x.variable)
          for (const e of exprsOf(x)) for (const n of readNames(e)) if (!local.has(n)) end.add(n)
        })
        const r = this.block(s.body, end, checking)
        for (const n of r.live) live.add(n)
        if (s.kind === 'for') live.delete(s.variable)
        for (const e of exprsOf(s)) reads(e, live)
        return { stmt: { ...s, body: r.body }, live }
      }
      case 'unchecked': {
        const r = this.block(s.body, after, false)
        return { stmt: { ...s, body: r.body }, live: r.live }
      }
      default:
        // updates, calls, stack operations, `@safe`: the target of an update is read too (y += e)
        for (const e of exprsOf(s)) reads(e, live)
        return { stmt: s, live }
    }
  }
}

/** Drops the allocations and deallocations of ancillas that no other statement names any more. */
function dropUnusedAncillas(body: Stmt[]): Stmt[] {
  const named = new Set<string>()
  walk(body, (s) => {
    if (s.kind === 'alloc' || s.kind === 'dealloc') {
      for (const e of exprsOf(s)) readNames(e, named)
      return
    }
    for (const e of exprsOf(s)) readNames(e, named)
  })
  const allocated = new Map<string, Stmt>()
  walk(body, (s) => {
    if (s.kind === 'alloc' && !exprsOf(s).some(callsHost)) allocated.set(s.name, s)
  })
  const unused = new Set([...allocated.keys()].filter((n) => !named.has(n)))
  if (!unused.size) return body
  const strip = (b: Stmt[]): Stmt[] =>
    b.flatMap((s): Stmt[] => {
      if ((s.kind === 'alloc' || s.kind === 'dealloc') && unused.has(s.name)) return []
      switch (s.kind) {
        case 'if':
          return [{ ...s, then: strip(s.then), else: strip(s.else) }]
        case 'unchecked': {
          // (a block left empty goes too)
          const b = strip(s.body)
          return b.length ? [{ ...s, body: b }] : []
        }
        case 'while':
        case 'for':
          return [{ ...s, body: strip(s.body) } as Stmt]
        default:
          return [s]
      }
    })
  return strip(body)
}

/**
 * The function with the statements that only change dead ancillas dropped (see the module
 * comment). Its parameters are live at its end: they are what the caller sees.
 */
export function dropDeadAncillaWrites(f: FunctionDef, ctx: DeadAncillasContext): FunctionDef {
  const params = new Set(f.params.map((p) => p.name))
  const { body } = new DeadAncillas(ctx).block(f.body, params, ctx.checks)
  return { ...f, body: dropUnusedAncillas(body) }
}

/** `dropDeadAncillaWrites` on every function of a program and of its inverses. */
export function deadAncillas(
  program: Program,
  inverses: Map<string, FunctionDef>,
  checks: boolean,
): { program: Program; inverses: Map<string, FunctionDef> } {
  const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
  const ctx: DeadAncillasContext = { writes: program.writes, effectful, checks }
  const functions = new Map([...program.functions].map(([n, f]) => [n, dropDeadAncillaWrites(f, ctx)]))
  const inv = new Map([...inverses].map(([n, f]) => [n, dropDeadAncillaWrites(f, ctx)]))
  return { program: { ...program, functions }, inverses: inv }
}
