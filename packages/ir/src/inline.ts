/**
 * Inlining of small leaf functions (DESIGN §8: "inlines small callees"), an IR → IR rewrite the
 * backends run before code generation. A call `g(a, x[i])` of a
 * function whose body calls no other function is replaced by g's body (or its inverse's, for an
 * uncall) with the parameters substituted by the argument dataviews and g's locals renamed, so
 * scalars stay in registers instead of crossing a call and a results buffer. A call is inlined
 * only where that cannot change its meaning: no argument reads a variable another argument
 * lets g write, written arguments are plain variables or array elements, and the call has no
 * run-time aliasing check. A read-only argument that is a compound expression is computed once
 * into an ancilla (freed unchecked: nothing the callee writes can change it).
 */
import type { Arg, Dataview, Expr, FunctionDef, ScalarTypeName, Stmt } from './ast.js'
import { readNames, walk } from './check.js'
import { printExpr } from './printer.js'
import type { Program } from './plugin.js'

const MAX_STATEMENTS = 16

/**
 * A message with the inliner's names of a callee's locals (`$inl3$t`) turned back into the
 * names the user wrote (`t`), so that every backend words a run-time error the same way.
 */
export function userNames(message: string): string {
  return message.replace(/\$(?:inl|top|pair|leaf)\d+[a-z]?\$/g, '')
}

/** The statements of `body`, nested ones included (the size limits of inlining and of `pair-series`). */
export function countStatements(body: Stmt[]): number {
  let n = 0
  walk(body, () => {
    n++
  })
  return n
}

/**
 * `body` with its calls (and uncalls) of small leaf functions inlined, at any depth outside
 * `@unchecked` blocks (a callee keeps its own checks): callees that call no function and have
 * at most `MAX_STATEMENTS` statements and no `while` loop, as `inlineSmallCalls` inlines them, their locals named
 * `$leaf<k>$` + name (`counter` numbers them). For a pass that puts a call inside a loop
 * (`pair-series`), where `inlineSmallCalls` left it a call outside loops.
 */
export function inlineLeafCalls(
  body: Stmt[],
  program: Program,
  inverses: ReadonlyMap<string, FunctionDef>,
  counter: { n: number },
): Stmt[] {
  return body.flatMap((s): Stmt[] => {
    switch (s.kind) {
      case 'callstmt': {
        if (s.target !== 'function' || s.distinct) return [s]
        const g = s.inverse ? inverses.get(s.callee) : program.functions.get(s.callee)
        const written = program.writes.get(s.callee)
        if (!g || !written || callsFunctions(g.body) || countStatements(g.body) > MAX_STATEMENTS) return [s]
        // (a loop whose trips the data decide stays in its function: the pass that asks may look
        // for the caller's own `while`)
        if (hasWhile(g.body)) return [s]
        const out = inlineCall(s, g, written, `$leaf${counter.n}$`)
        if (out) counter.n++
        return out ?? [s]
      }
      case 'if':
        return [
          {
            ...s,
            then: inlineLeafCalls(s.then, program, inverses, counter),
            else: inlineLeafCalls(s.else, program, inverses, counter),
          },
        ]
      case 'while':
      case 'for':
        return [{ ...s, body: inlineLeafCalls(s.body, program, inverses, counter) } as Stmt]
      default:
        return [s]
    }
  })
}

function hasWhile(body: Stmt[]): boolean {
  let found = false
  walk(body, (s) => {
    if (s.kind === 'while') found = true
  })
  return found
}

function callsFunctions(body: Stmt[]): boolean {
  let calls = false
  walk(body, (s) => {
    if (s.kind === 'callstmt' && s.target === 'function') calls = true
  })
  return calls
}

/**
 * Argument `a` where it stands for parameter `name` (`Substituted.shown`: run-time errors print
 * the name the callee wrote); an expression that cannot carry the name is returned as it is.
 */
function shownAs<E extends Expr>(a: E, name: string): E {
  switch (a.kind) {
    case 'var':
    case 'index':
    case 'num':
    case 'bool':
      return { ...a, shown: name }
    default:
      return a
  }
}

class Substitution {
  constructor(
    private readonly params: Map<string, Arg>,
    private readonly renames: Map<string, string>,
  ) {}

  name(n: string): string {
    return this.renames.get(n) ?? n
  }

  expr(e: Expr): Expr {
    switch (e.kind) {
      case 'num':
      case 'bool':
        return e
      case 'var': {
        const a = this.params.get(e.name)
        if (a) return shownAs(a as Expr, e.shown ?? e.name)
        return this.renames.has(e.name) ? { ...e, name: this.renames.get(e.name)! } : e
      }
      case 'index': {
        const a = this.params.get(e.array.name)
        const array = a
          ? shownAs(a as Extract<Expr, { kind: 'var' }>, e.array.shown ?? e.array.name)
          : this.renames.has(e.array.name)
            ? { ...e.array, name: this.renames.get(e.array.name)! }
            : e.array
        return { ...e, array, index: this.expr(e.index) }
      }
      case 'field':
        return { ...e, target: this.expr(e.target) }
      case 'unary':
        return { ...e, arg: this.expr(e.arg) }
      case 'binary':
        return { ...e, left: this.expr(e.left), right: this.expr(e.right) }
      case 'call':
        return { ...e, args: e.args.map((a) => this.expr(a)) }
    }
  }

  arg(a: Arg): Arg {
    return a.kind === 'neg' ? { ...a, target: this.arg(a.target) as Dataview } : this.expr(a)
  }

  stmts(body: Stmt[]): Stmt[] {
    return body.map((s) => this.stmt(s))
  }

  stmt(s: Stmt): Stmt {
    switch (s.kind) {
      case 'update':
        return {
          ...s,
          target: this.arg(s.target) as Dataview,
          value: this.expr(s.value),
          ...(s.distinct ? { distinct: s.distinct.map(([a, b]) => [this.expr(a), this.expr(b)] as [Expr, Expr]) } : {}),
        }
      case 'callstmt':
        return {
          ...s,
          args: s.args.map((a) => this.arg(a)),
          ...(s.distinct ? { distinct: s.distinct.map(([a, b]) => [this.expr(a), this.expr(b)] as [Expr, Expr]) } : {}),
        }
      case 'alloc':
        return { ...s, name: this.name(s.name), value: s.value.kind === 'emptystack' ? s.value : this.expr(s.value) }
      case 'dealloc':
        return { ...s, name: this.name(s.name), value: s.value.kind === 'emptystack' ? s.value : this.expr(s.value) }
      case 'if':
        return {
          ...s,
          pre: this.expr(s.pre),
          post: s.post ? this.expr(s.post) : null,
          then: this.stmts(s.then),
          else: this.stmts(s.else),
        }
      case 'while':
        return { ...s, pre: this.expr(s.pre), post: this.expr(s.post), body: this.stmts(s.body) }
      case 'for':
        return {
          ...s,
          variable: this.name(s.variable),
          start: this.expr(s.start),
          stop: this.expr(s.stop),
          step: s.step ? this.expr(s.step) : null,
          body: this.stmts(s.body),
        }
      case 'push':
      case 'pop':
        return {
          ...s,
          stack: this.expr(s.stack) as Extract<Expr, { kind: 'var' }>,
          value: this.arg(s.value) as Dataview,
        }
      case 'safe':
        return { ...s, expr: this.expr(s.expr) }
      case 'unchecked':
        return { ...s, body: this.stmts(s.body) }
      case 'assert':
        // (a callee with its run-time checks placed: `pair-series` with checks on)
        return { ...s, cond: this.expr(s.cond), args: s.args.map((a) => (typeof a === 'string' ? a : this.expr(a))) }
      default:
        return s
    }
  }
}

function localNames(body: Stmt[]): Set<string> {
  const out = new Set<string>()
  walk(body, (s) => {
    if (s.kind === 'alloc') out.add(s.name)
    else if (s.kind === 'for') out.add(s.variable)
  })
  return out
}

/** Rounds of `inlineSmallCalls`: a caller whose calls were all inlined is a leaf in the next round. */
const MAX_ROUNDS = 4

/**
 * Returns the program with small leaf calls inlined (functions and inverses alike), bottom up: a
 * small function whose calls were all inlined is itself inlined, in the next round, where a loop
 * calls it (the adjoint of a loop of rotations, whose body called the adjoint of ROT, called once
 * per layer), so that the passes see across both calls. (A call outside loops stays a call after
 * the first round: inlined, the Bessel series' factorial made its Hessian slower.)
 */
export function inlineSmallCalls(
  program: Program,
  inverses: Map<string, FunctionDef>,
  checks = false,
): { program: Program; inverses: Map<string, FunctionDef> } {
  // one numbering for all rounds: the locals of each inlined body get names of their own
  const names = { counter: 0 }
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const next = inlineRound(program, inverses, names, round > 0, checks)
    if (next.program === program) break
    ;({ program, inverses } = next)
  }
  return { program, inverses }
}

/** One round: the calls of the current leaves inlined (the same program when there are none). */
function inlineRound(
  program: Program,
  inverses: Map<string, FunctionDef>,
  names: { counter: number },
  loopsOnly: boolean,
  checks: boolean,
): { program: Program; inverses: Map<string, FunctionDef> } {
  const inlinable = new Set<string>()
  for (const f of program.functions.values()) {
    if (!callsFunctions(f.body) && countStatements(f.body) <= MAX_STATEMENTS) inlinable.add(f.name)
  }
  if (!inlinable.size) return { program, inverses }

  const tryInline = (s: Extract<Stmt, { kind: 'callstmt' }>): Stmt[] | undefined => {
    if (s.target !== 'function' || !inlinable.has(s.callee) || s.distinct) return undefined
    const g = s.inverse ? inverses.get(s.callee)! : program.functions.get(s.callee)!
    const k = names.counter
    const out = inlineCall(s, g, program.writes.get(s.callee)!, `$inl${k}$`, checks)
    if (out) names.counter++
    return out
  }

  // \`@unchecked\` is lexical: a callee keeps its own checks, so a call inside an unchecked block
  // stays a call (inlined there, the callee's body would lose its checks)
  // (`loopsOnly`: after the first round, only calls inside a loop, where the passes can then share
  // what the callee computes in every iteration; a call outside loops stays a call)
  const rewrite = (body: Stmt[], unchecked = false, inLoop = false): Stmt[] =>
    body.flatMap((s): Stmt[] => {
      switch (s.kind) {
        case 'callstmt':
          return (unchecked || (loopsOnly && !inLoop) ? undefined : tryInline(s)) ?? [s]
        case 'if':
          return [{ ...s, then: rewrite(s.then, unchecked, inLoop), else: rewrite(s.else, unchecked, inLoop) }]
        case 'while':
        case 'for':
          return [{ ...s, body: rewrite(s.body, unchecked, true) } as Stmt]
        case 'unchecked':
          return [{ ...s, body: rewrite(s.body, true, inLoop) }]
        default:
          return [s]
      }
    })

  let changed = false
  const rewriteAll = (f: FunctionDef): FunctionDef => {
    const before = names.counter
    const body = rewrite(f.body)
    if (names.counter === before) return f
    changed = true
    return { ...f, body }
  }
  const functions = new Map<string, FunctionDef>()
  for (const [name, f] of program.functions) functions.set(name, rewriteAll(f))
  const inv = new Map<string, FunctionDef>()
  for (const [name, f] of inverses) inv.set(name, rewriteAll(f))
  if (!changed) return { program, inverses }
  return { program: { ...program, functions }, inverses: inv }
}

/**
 * The statements that run call \`s\` of function \`g\` (the function, or its inverse for an uncall)
 * in place: g's body with its parameters replaced by the arguments and its locals renamed
 * \`prefix\` + name (a read-only argument that is a compound expression computed once into the
 * ancilla \`prefix\` + \`arg<i>\`), or undefined where inlining could change the call's meaning (an
 * argument reads what another lets g write; a written argument that is not a plain variable or
 * element). \`written\`: which parameters g writes (\`Program.writes\`).
 *
 * \`checks\` (run-time checks on, their asserts not placed yet): each element argument \`a[i]\`
 * is read once before the body, in argument order, into an ancilla \`prefix\` + \`chk<k>\` freed
 * unchecked right away, so that pass \`insert-checks\` places its bounds assert where the call
 * checks its arguments (the reference interpreter checks every element argument before the
 * callee runs, in argument order), not only where the body happens to read it: an element the
 * body never reads, or reads only in a branch, is still checked, and a failure in the body cannot
 * come first. The reads are left out where the body's first statements access the element
 * arguments themselves, in argument order, before any check of another kind (see
 * \`accessedFirst\`). Without \`checks\` nothing is added.
 */
export function inlineCall(
  s: Extract<Stmt, { kind: 'callstmt' }>,
  g: FunctionDef,
  written: readonly boolean[],
  prefix: string,
  checks = false,
): Stmt[] | undefined {
  const writtenRoots = new Set<string>()
  for (let i = 0; i < s.args.length; i++) {
    const a = s.args[i]!
    if (!written[i]) {
      if (a.kind === 'neg' || a.kind === 'field') return undefined
      continue
    }
    if (a.kind !== 'var' && a.kind !== 'index') return undefined
    writtenRoots.add(a.kind === 'var' ? a.name : a.array.name)
  }
  // no argument may read (in an index, or as a read-only value) what another argument lets g write
  for (let i = 0; i < s.args.length; i++) {
    const a = s.args[i]!
    const reads = a.kind === 'index' ? readNames(a.index) : written[i] ? new Set<string>() : readNames(a)
    for (const r of reads) if (writtenRoots.has(r)) return undefined
  }
  const params = new Map<string, Arg>()
  // a read-only argument that is a compound expression is computed once, into an ancilla
  const before: Stmt[] = [],
    after: Stmt[] = []
  const reads: Stmt[] = []
  g.params.forEach((p, i) => {
    const a = s.args[i]!
    if (checks && a.kind === 'index' && p.type.kind === 'scalar') {
      const read = boundsRead(a, p.type.name, `${prefix}chk${i}`, s)
      before.push(...read)
      reads.push(...read)
    }
    if (
      written[i] ||
      p.type.kind !== 'scalar' ||
      a.kind === 'var' ||
      a.kind === 'index' ||
      a.kind === 'num' ||
      a.kind === 'bool'
    ) {
      params.set(p.name, a)
      return
    }
    const name = `${prefix}arg${i}`
    const type = { kind: 'scalar' as const, name: p.type.name }
    before.push({ kind: 'alloc', name, value: a as Expr, type, declared: type, ...(s.loc ? { loc: s.loc } : {}) })
    // unchecked: the callee writes nothing the argument reads (refused above), so it cannot change
    after.unshift({
      kind: 'unchecked',
      body: [{ kind: 'dealloc', name, value: a as Expr, type, ...(s.loc ? { loc: s.loc } : {}) }],
    })
    params.set(p.name, { kind: 'var', name, type: p.type.name, shown: p.name })
  })
  const renames = new Map<string, string>()
  for (const n of localNames(g.body)) renames.set(n, `${prefix}${n}`)
  const body = new Substitution(params, renames).stmts(g.body)
  // (the reads of the element arguments are left out where the body itself accesses them first,
  // in argument order, before anything else that can fail: its own bounds checks are the same)
  const needed = reads.length && !accessedFirst(reads.filter((r) => r.kind === 'alloc').map(accesses), body)
  return [...(needed ? before : before.filter((b) => !reads.includes(b))), ...body, ...after]
}

/**
 * The element accesses whose bounds \`insert-checks\` checks for statement \`s\`, in its order (an
 * index's accesses before the access), or undefined where it checks anything else first, or
 * anything it checks may not be reached (a guarded operand of \`&&\`, a host call, a nested block).
 */
function accesses(s: Stmt): Expr[] | undefined {
  const out: Expr[] = []
  const visit = (e: Expr | Arg): boolean => {
    switch (e.kind) {
      case 'num':
      case 'bool':
      case 'var':
        return true
      case 'index':
        if (!visit(e.index)) return false
        out.push(e)
        return true
      case 'neg':
      case 'field':
        return visit(e.target)
      case 'unary':
        return visit(e.arg)
      case 'binary':
        return e.op !== '&&' && e.op !== '||' && visit(e.left) && visit(e.right)
      case 'call':
        return !e.callee.startsWith('$') && e.args.every(visit)
    }
  }
  switch (s.kind) {
    case 'update':
      return !s.distinct && visit(s.target) && visit(s.value) ? out : undefined
    case 'alloc':
      return s.value.kind !== 'emptystack' && s.type?.kind === 'scalar' && visit(s.value) ? out : undefined
    case 'callstmt':
      return s.target === 'bijection' && !s.distinct && s.args.every(visit) ? out : undefined
    default:
      return undefined
  }
}

/**
 * Whether \`body\`'s first statements check the bounds of \`wanted\` (the element arguments'
 * accesses) in that order, before any check of another kind (a deallocation, a factor, a branch's
 * condition). Other element accesses may come in between (the callee's own arrays: where one of
 * them and an argument are both out of range, the callee's may be reported, the order of two
 * independent failing checks, as passes \`interchange\` and \`pair-series\` may change it).
 */
function accessedFirst(wanted: Array<Expr[] | undefined>, body: Stmt[]): boolean {
  if (wanted.some((w) => w === undefined)) return false
  const want = (wanted as Expr[][]).flat().map(printExpr)
  let k = 0
  for (const st of body) {
    if (k === want.length) return true
    const got = accesses(st)
    if (!got) return false
    for (const e of got.map(printExpr)) {
      if (k < want.length && e === want[k]) k++
      // (an argument's access before an earlier argument's: not in argument order)
      else if (want.indexOf(e, k) > k) return false
    }
    // (after its bounds checks: the factor check of \`*=\` and \`/=\`, a bijection's own)
    if (k < want.length && !(st.kind === 'update' && (st.op === '+=' || st.op === '-=' || st.op === '^='))) {
      if (st.kind !== 'alloc') return false
    }
  }
  return k === want.length
}

/**
 * `name <- a` and, unchecked, `name -> a` (see `inlineCall`'s \`checks\`): a read of element
 * argument `a` that only asks \`insert-checks\` for its bounds asserts (with the location of the
 * argument, else the call's).
 */
function boundsRead(a: Extract<Expr, { kind: 'index' }>, typeName: ScalarTypeName, name: string, s: Stmt): Stmt[] {
  const type = { kind: 'scalar' as const, name: typeName }
  const loc = a.loc ?? s.loc
  return [
    { kind: 'alloc', name, value: a, type, declared: type, ...(loc ? { loc } : {}) },
    { kind: 'unchecked', body: [{ kind: 'dealloc', name, value: a, type, ...(loc ? { loc } : {}) }] },
  ]
}

/** How deep `inlineTopLevelCalls` follows calls into callees' own top-level calls. */
const MAX_TOP_LEVEL_DEPTH = 8

/**
 * `f` with the calls it makes exactly once per run inlined: a call statement at the top level of
 * its body (not in a loop, a branch or an `@unchecked` block), of a function of `functions` (not
 * an uncall), whose arguments are distinct plain variables, is replaced by the callee's body with
 * its parameters renamed to those variables and its locals renamed (`$top<k>$name`); the
 * callee's own top-level calls are inlined in turn (recursion stops a chain). Inlining a call
 * that runs once costs no run time and no code per iteration, and puts into one body what the
 * callees compute, so that the passes see across them: the two sweeps of a gradient program
 * (`f`, then its adjoint) become two loop nests of one function. A function with calls left
 * as they were is returned as it was. `first`: the number of the first inlined call's locals, above
 * those of an earlier inlining into `f` (whose `$top<k>$` locals may still be live around a call
 * it left).
 */
export function inlineTopLevelCalls(
  f: FunctionDef,
  functions: ReadonlyMap<string, FunctionDef>,
  first = 0,
): FunctionDef {
  let counter = first
  const expand = (body: Stmt[], stack: string[]): Stmt[] =>
    body.flatMap((s): Stmt[] => {
      // (a call the checker has not resolved yet has no target: a function of \`functions\` is one)
      if (s.kind !== 'callstmt' || s.target === 'bijection' || s.inverse || s.distinct) return [s]
      const g = functions.get(s.callee)
      if (!g || stack.includes(g.name) || stack.length > MAX_TOP_LEVEL_DEPTH) return [s]
      if (g.params.length !== s.args.length) return [s]
      const names = new Set<string>()
      for (const a of s.args) {
        if (a.kind !== 'var' || names.has(a.name)) return [s]
        names.add(a.name)
      }
      const params = new Map<string, Arg>(g.params.map((p, i) => [p.name, s.args[i]!]))
      const renames = new Map<string, string>()
      const k = counter++
      for (const n of localNames(g.body)) renames.set(n, `$top${k}$${n}`)
      return expand(new Substitution(params, renames).stmts(g.body), [...stack, g.name])
    })
  const body = expand(f.body, [f.name])
  return counter === first ? f : { ...f, body }
}
