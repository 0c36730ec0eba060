/**
 * The bounds checks of a program compiled without run-time checks, hoisted out of its loops where
 * `@tenet/ir`'s `hoist-bounds` can: the wasm backend guards every element access whatever the
 * options (all arrays share one linear memory), and without this pass it compares each index with
 * its length on every iteration.
 *
 * How: the program gets the bounds asserts that checks on would give it (`insertChecks`), and
 * `hoistBounds` moves those of loop-affine indices before their loops. Every other assert is then
 * dropped: the ones left in place (not hoisted), whose accesses lose their `inBounds` mark (the
 * code generator guards those itself, as before), and the checks other than bounds (checks are
 * off). An `alias` assert leaves its pair on the statement again (`distinct`: the lane and loop
 * pairing leave such statements alone, as they do without this pass). What changes: an index out
 * of range that a hoisted assert catches fails before its loop starts (the same error, code
 * `runtime/out-of-bounds`, and location), where the guard at the access failed in the iteration
 * that reached it; without checks a failed call leaves its arrays unspecified either way.
 */
import type { AssertStmt, Dataview, Expr, FunctionDef, CompileOptions, Program, Stmt } from '@tenet/ir'
import {
  hoistBounds,
  insertChecks,
  key,
  plainBoundsExpr,
  readNames,
  rewriteExpr,
  rootName,
  walk,
} from '@tenet/ir/backend'

/** The program and its inverses with only their hoisted bounds asserts (see the module comment). */
export function hoistedBoundsOnly(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  const on = { ...options, checks: true }
  const checked = insertChecks(program, inverses, on)
  const offsets = (f: FunctionDef): FunctionDef => ({ ...f, body: withOffsets(f.body) })
  const asserted = {
    program: {
      ...checked.program,
      functions: new Map([...checked.program.functions].map(([n, f]) => [n, offsets(f)])),
    },
    inverses: new Map([...checked.inverses].map(([n, f]) => [n, offsets(f)])),
  }
  // the asserts as placed before their statements: hoisting keeps the objects it leaves in place
  const placed = new WeakSet<Stmt>()
  for (const f of [...asserted.program.functions.values(), ...asserted.inverses.values()])
    walk(f.body, (s) => {
      if (s.kind === 'assert') placed.add(s)
    })
  // (the asserts before the loop, not two versions of it: without checks, a failed call leaves its
  // arrays unspecified, and the one loop stays one)
  const hoisted = hoistBounds(asserted.program, asserted.inverses, on, false)
  // the indices of the bounds asserts left in place (the index of a bounds assert is the very
  // node of the access it marked)
  const unproven = new Set<Expr>()
  for (const f of [...hoisted.program.functions.values(), ...hoisted.inverses.values()])
    walk(f.body, (s) => {
      if (s.kind === 'assert' && placed.has(s) && s.check === 'outOfBounds' && typeof s.args[1] === 'object')
        unproven.add(s.args[1])
    })
  const keep = (a: AssertStmt): boolean => a.check === 'outOfBounds' && !placed.has(a)
  const fn = (f: FunctionDef): FunctionDef => ({ ...f, body: strip(f.body, keep, unproven) })
  return {
    program: { ...hoisted.program, functions: new Map([...hoisted.program.functions].map(([n, f]) => [n, fn(f)])) },
    inverses: new Map([...hoisted.inverses].map(([n, f]) => [n, fn(f)])),
  }
}

/**
 * The bounds asserts of each loop body with its offset ancillas spelled out: an i32 ancilla
 * allocated once at the top of the body (\`o: i32 <- (p + c) * 10\`, the form of generated
 * code), to a plain value of the loop variable and of names the body does not write, and never
 * updated, has that value wherever it is read, so \`x[o + 3]\` is checked as \`x[(p + c) * 10 + 3]\`,
 * which is affine in c and can be hoisted. Only the asserts change; the accesses read \`o\` as before.
 */
function withOffsets(body: Stmt[]): Stmt[] {
  return body.map((s): Stmt => {
    switch (s.kind) {
      case 'if':
        return { ...s, then: withOffsets(s.then), else: withOffsets(s.else) }
      case 'while':
        return { ...s, body: withOffsets(s.body) }
      case 'unchecked':
        return { ...s, body: withOffsets(s.body) }
      case 'for':
        return { ...s, body: substituteOffsets(withOffsets(s.body), s.variable) }
      default:
        return s
    }
  })
}

/** The top-level asserts of a loop body with its offset ancillas replaced by their values (see \`withOffsets\`). */
function substituteOffsets(body: Stmt[], variable: string): Stmt[] {
  const written = new Set<string>()
  const allocs = new Map<string, number>()
  walk(body, (s) => {
    switch (s.kind) {
      case 'update':
        written.add(rootName(s.target) ?? '')
        break
      case 'callstmt':
        for (const a of s.args) if (a.kind !== 'num' && a.kind !== 'bool') written.add(rootName(a as Dataview) ?? '')
        break
      case 'push':
      case 'pop':
        written.add(rootName(s.value) ?? '')
        written.add(s.stack.name)
        break
      case 'alloc':
        allocs.set(s.name, (allocs.get(s.name) ?? 0) + 1)
        break
    }
  })
  const values = new Map<string, Expr>()
  const spell = (e: Expr): Expr =>
    rewriteExpr(e, (x) => (x.kind === 'var' && values.has(x.name) ? values.get(x.name)! : x)) as Expr
  const out: Stmt[] = []
  for (const s of body) {
    if (s.kind === 'alloc' && s.value.kind !== 'emptystack') {
      const v = s.value
      const ok =
        v.type === 'i32' &&
        allocs.get(s.name) === 1 &&
        !written.has(s.name) &&
        plainBoundsExpr(v) &&
        [...readNames(v)].every((n) => n === variable || values.has(n) || (!written.has(n) && !allocs.has(n)))
      if (ok) values.set(s.name, spell(v))
    }
    if (s.kind === 'assert' && s.check === 'outOfBounds' && values.size) {
      const cond = spell(s.cond)
      out.push(cond === s.cond ? s : { ...s, cond })
    } else out.push(s)
  }
  return out
}

/** `body` without the asserts `keep` refuses, its accesses checked by those unmarked. */
function strip(body: Stmt[], keep: (a: AssertStmt) => boolean, unproven: Set<Expr>): Stmt[] {
  const x = <T extends Expr | Dataview>(e: T): T => unmark(e, unproven) as T
  const out: Stmt[] = []
  let pairs: Array<[Expr, Expr]> = []
  // the conditions of the asserts kept since the last other statement: one of each is enough (a
  // loop's hoisted asserts repeat for every access of the same element)
  let seen = new Set<string>()
  for (const s of body) {
    let t: Stmt
    if (s.kind !== 'assert') seen = new Set()
    switch (s.kind) {
      case 'assert':
        if (keep(s)) {
          const k = key(s.cond)
          if (!seen.has(k)) out.push(s)
          seen.add(k)
        } else if (s.check === 'alias' && s.cond.kind === 'binary') pairs.push([x(s.cond.left), x(s.cond.right)])
        continue
      case 'update':
        t = { ...s, target: x(s.target), value: x(s.value) }
        break
      case 'callstmt':
        t = { ...s, args: s.args.map((a) => (a.kind === 'neg' || a.kind === 'field' || a.kind === 'index' ? x(a) : a)) }
        break
      case 'alloc':
      case 'dealloc':
        t = { ...s, value: s.value.kind === 'emptystack' ? s.value : x(s.value) } as Stmt
        break
      case 'if':
        t = {
          ...s,
          pre: x(s.pre),
          post: s.post ? x(s.post) : null,
          then: strip(s.then, keep, unproven),
          else: strip(s.else, keep, unproven),
        }
        break
      case 'while':
        t = { ...s, pre: x(s.pre), post: x(s.post), body: strip(s.body, keep, unproven) }
        break
      case 'for':
        t = {
          ...s,
          start: x(s.start),
          stop: x(s.stop),
          step: s.step ? x(s.step) : null,
          body: strip(s.body, keep, unproven),
        }
        break
      case 'push':
      case 'pop':
        t = { ...s, value: x(s.value) }
        break
      case 'safe':
        t = { ...s, expr: x(s.expr) }
        break
      case 'unchecked':
        t = { ...s, body: strip(s.body, keep, unproven) }
        break
      default:
        t = s
    }
    // the pairs of the alias asserts before it go back on the statement they were taken from
    if (pairs.length && (t.kind === 'update' || t.kind === 'callstmt')) {
      t = { ...t, distinct: pairs }
      pairs = []
    }
    out.push(t)
  }
  return out
}

/** `e` with the `inBounds` mark taken off the accesses whose index is in `unproven` (the same nodes where nothing changes). */
function unmark(e: Expr | Dataview, unproven: Set<Expr>): Expr | Dataview {
  switch (e.kind) {
    case 'index': {
      const index = unmark(e.index, unproven) as Expr
      const drop = e.inBounds === true && unproven.has(e.index)
      if (index === e.index && !drop) return e
      const { inBounds, ...rest } = e
      return drop ? { ...rest, index } : { ...e, index }
    }
    case 'field': {
      const target = unmark(e.target, unproven) as Expr
      return target === e.target ? e : { ...e, target }
    }
    case 'neg': {
      const target = unmark(e.target, unproven) as Dataview
      return target === e.target ? e : { ...e, target }
    }
    case 'unary': {
      const arg = unmark(e.arg, unproven) as Expr
      return arg === e.arg ? e : { ...e, arg }
    }
    case 'binary': {
      const left = unmark(e.left, unproven) as Expr,
        right = unmark(e.right, unproven) as Expr
      return left === e.left && right === e.right ? e : { ...e, left, right }
    }
    case 'call': {
      const args = e.args.map((a) => unmark(a, unproven) as Expr)
      return args.every((a, i) => a === e.args[i]) ? e : { ...e, args }
    }
    default:
      return e
  }
}
