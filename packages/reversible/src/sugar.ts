/**
 * The statement sugar that expands into core statements before routines are expanded:
 *
 * - `for x in arr { B }` → `for i in 0..len(arr) { B[x := arr[i]] }`, marked read-only (the
 *   checker rejects a body that writes `arr`);
 * - an elementwise statement `y[..] += a * x[..]` (or a call `f(y[..], x[..])`) → a loop over
 *   the elements, after a run-time check that every array it names has the length of the first;
 * - `top(s)` in a statement → the top is popped into a fresh ancilla, the statement reads the
 *   ancilla, and the value is pushed back (so the inverse and the adjoint need nothing new).
 *
 * Generated names start with `$`, which no source name can.
 */
import {
  SPREAD,
  TenetStaticError,
  type Arg,
  type Dataview,
  type Expr,
  type FunctionDef,
  type ScalarTypeName,
  type SourceLocation,
  type Stmt,
  type Type,
} from '@tenet/ir'
import { stmtExprs as ownExprs } from '@tenet/ir/backend'

const fail = (code: string, msg: string, loc?: SourceLocation): never => {
  throw new TenetStaticError(code, msg, loc)
}
const at = (loc: SourceLocation | undefined) => (loc ? { loc } : {})

/** Maps every expression of a tree (bottom up) with `f`; dataviews stay dataviews when `f` keeps them so. */
function mapExpr(e: Expr, f: (x: Expr) => Expr): Expr {
  switch (e.kind) {
    case 'index':
      return f({ ...e, index: mapExpr(e.index, f) })
    case 'field':
      return f({ ...e, target: mapExpr(e.target, f) })
    case 'unary':
      return f({ ...e, arg: mapExpr(e.arg, f) })
    case 'binary':
      return f({ ...e, left: mapExpr(e.left, f), right: mapExpr(e.right, f) })
    case 'call':
      return f({ ...e, args: e.args.map((a) => mapExpr(a, f)) })
    default:
      return f(e)
  }
}
function mapArg(a: Arg, f: (x: Expr) => Expr): Arg {
  return a.kind === 'neg' ? { ...a, target: mapArg(a.target, f) as Dataview } : mapExpr(a, f)
}

/** Whether some node of `e` satisfies `p`. */
function some(e: Expr | Arg, p: (x: Expr | Arg) => boolean): boolean {
  const todo: Array<Expr | Arg> = [e]
  while (todo.length) {
    const x = todo.pop()!
    if (p(x)) return true
    switch (x.kind) {
      case 'index':
        todo.push(x.index)
        break
      case 'field':
        todo.push(x.target)
        break
      case 'neg':
        todo.push(x.target)
        break
      case 'unary':
        todo.push(x.arg)
        break
      case 'binary':
        todo.push(x.left, x.right)
        break
      case 'call':
        todo.push(...x.args)
        break
    }
  }
  return false
}

const isSpread = (x: Expr | Arg): boolean => x.kind === 'index' && x.index.kind === 'var' && x.index.name === SPREAD
const isTop = (x: Expr | Arg): boolean => x.kind === 'call' && x.callee === 'top'

/** Applies `f` to every expression of one statement (not of its nested blocks). */
function mapOwn(s: Stmt, f: (x: Expr) => Expr): Stmt {
  const m = (e: Expr) => mapExpr(e, f)
  switch (s.kind) {
    case 'update':
      return { ...s, target: mapArg(s.target, f) as Dataview, value: m(s.value) }
    case 'callstmt':
      return { ...s, args: s.args.map((a) => mapArg(a, f)) }
    case 'alloc':
    case 'dealloc':
      return s.value.kind === 'emptystack' ? s : { ...s, value: m(s.value) }
    case 'if':
      return { ...s, pre: m(s.pre), post: s.post ? m(s.post) : null }
    case 'while':
      return { ...s, pre: m(s.pre), post: m(s.post) }
    case 'for':
      return {
        ...s,
        start: m(s.start),
        stop: m(s.stop),
        step: s.step ? m(s.step) : null,
        ...(s.each ? { each: m(s.each) as typeof s.each } : {}),
      }
    case 'push':
    case 'pop':
      return { ...s, value: mapArg(s.value, f) as Dataview }
    case 'safe':
      return { ...s, expr: m(s.expr) }
    default:
      return s
  }
}

/** Applies `f` to every expression of a block, nested blocks included. */
function mapBody(body: Stmt[], f: (x: Expr) => Expr): Stmt[] {
  return body.map((s0) => {
    const s = mapOwn(s0, f)
    switch (s.kind) {
      case 'if':
        return { ...s, then: mapBody(s.then, f), else: mapBody(s.else, f) }
      case 'while':
      case 'for':
      case 'unchecked':
      case 'routine':
      case 'invblock':
        return { ...s, body: mapBody(s.body, f) } as Stmt
      default:
        return s
    }
  })
}

function zeroOf(elem: ScalarTypeName, loc?: SourceLocation): Expr {
  if (elem === 'bool') return { kind: 'bool', value: false, ...at(loc) }
  return { kind: 'num', value: 0, isFloat: elem !== 'i32', ...at(loc) }
}

class Sugar {
  private count = 0
  /** Element types of the stacks named in the function (parameters and declared allocations). */
  private stacks = new Map<string, ScalarTypeName>()

  constructor(f: FunctionDef) {
    const note = (name: string, t: Type | undefined) => {
      if (t?.kind === 'stack') this.stacks.set(name, t.elem)
    }
    for (const p of f.params) note(p.name, p.type)
    const visit = (body: Stmt[]) => {
      for (const s of body) {
        if (s.kind === 'alloc') note(s.name, s.declared)
        if (s.kind === 'if') {
          visit(s.then)
          visit(s.else)
        } else if ('body' in s) visit(s.body)
      }
    }
    visit(f.body)
  }

  private fresh(what: string): string {
    return `$${what}${++this.count}`
  }

  body(body: Stmt[]): Stmt[] {
    return body.flatMap((s) => this.stmt(s))
  }

  private stmt(s0: Stmt): Stmt[] {
    let s = s0
    switch (s.kind) {
      case 'if':
        s = { ...s, then: this.body(s.then), else: this.body(s.else) }
        break
      case 'while':
      case 'unchecked':
      case 'routine':
      case 'invblock':
        s = { ...s, body: this.body(s.body) } as Stmt
        break
      case 'for':
        s = { ...s, body: this.body(s.body) }
        break
    }
    const own = ownExprs(s)
    if (own.some((e) => some(e, isSpread))) return this.spread(s)
    if (own.some((e) => some(e, isTop))) return this.top(s)
    if (s.kind === 'for' && s.each) return [this.forEach(s)]
    return [s]
  }

  /** `for x in arr { B }` → `for i in 0..len(arr) { B[x := arr[i]] }`, read-only in `arr`. */
  private forEach(s: Extract<Stmt, { kind: 'for' }>): Stmt {
    const arr = s.each!
    const x = s.variable
    const i = this.fresh('each')
    const clash = (body: Stmt[]): void => {
      for (const t of body) {
        if ((t.kind === 'alloc' || t.kind === 'dealloc') && t.name === x) {
          fail(
            'static/realloc',
            `\`${x}\` is the element of \`for ${x} in ${arr.name}\`; an ancilla in its body needs another name`,
            t.loc,
          )
        }
        if (t.kind === 'for' && t.variable === x)
          fail('static/realloc', `the loop variable \`${x}\` shadows the element of \`for ${x} in ${arr.name}\``, t.loc)
        if (t.kind === 'if') {
          clash(t.then)
          clash(t.else)
        } else if ('body' in t) clash(t.body)
      }
    }
    clash(s.body)
    const element = (loc?: SourceLocation): Expr => ({
      kind: 'index',
      array: { ...arr },
      index: { kind: 'var', name: i, ...at(loc) },
      ...at(loc),
    })
    const body = mapBody(s.body, (e) => (e.kind === 'var' && e.name === x ? element(e.loc) : e))
    const { each: _each, ...rest } = s
    return { ...rest, variable: i, readOnly: { array: arr.name, element: x }, body }
  }

  /** `y[..] op= e(x[..])` (or a call with `[..]` arguments) → a length check, then a loop. */
  private spread(s: Stmt): Stmt[] {
    if (s.kind !== 'update' && s.kind !== 'callstmt') {
      const e = ownExprs(s).find((x) => some(x, isSpread))!
      return fail(
        'static/spread',
        '`x[..]` (every element) can only be used in an update (`y[..] += a * x[..]`) or a call statement (`f(y[..], x[..])`)',
        e.loc ?? s.loc,
      )
    }
    if (ownExprs(s).some((e) => some(e, isTop)))
      fail('static/spread', '`top(s)` cannot be used in an elementwise statement; copy it into an ancilla first', s.loc)
    const arrays: Array<{ name: string; loc?: SourceLocation }> = []
    for (const e of ownExprs(s)) {
      some(e, (x) => {
        if (isSpread(x) && !arrays.some((a) => a.name === (x as { array: { name: string } }).array.name)) {
          const a = (x as Extract<Expr, { kind: 'index' }>).array
          arrays.push({ name: a.name, ...at(a.loc) })
        }
        return false
      })
    }
    const loc = s.loc
    const len = (name: string, l?: SourceLocation): Expr => ({
      kind: 'call',
      callee: 'len',
      args: [{ kind: 'var', name, ...at(l) }],
      ...at(l),
    })
    const out: Stmt[] = []
    const first = arrays[0]!
    const i32: Type = { kind: 'scalar', name: 'i32' }
    for (const a of arrays.slice(1)) {
      // the lengths must agree: an ancilla holding len(first) is checked against len(a)
      // (named `len(first)`, which no source name can be, so that a failure reads
      // "cannot deallocate `len(y)`: it holds 3, but `len(y) -> len(x)` expects 4")
      const n = `len(${first.name})`
      out.push(
        { kind: 'alloc', name: n, declared: i32, value: len(first.name, first.loc), ...at(loc) },
        { kind: 'dealloc', name: n, declared: i32, value: len(a.name, a.loc), ...at(a.loc ?? loc) },
      )
    }
    const i = this.fresh('elem')
    const body = mapOwn(s, (e) => (e.kind === 'var' && e.name === SPREAD ? { kind: 'var', name: i, ...at(e.loc) } : e))
    out.push({
      kind: 'for',
      variable: i,
      start: { kind: 'num', value: 0, isFloat: false, ...at(loc) },
      stop: len(first.name, first.loc),
      step: null,
      inclusive: false,
      body: [body],
      ...at(loc),
    })
    return out
  }

  /** A statement that reads `top(s)`: pop into an ancilla, the statement, push back. */
  private top(s: Stmt): Stmt[] {
    if (
      s.kind !== 'update' &&
      s.kind !== 'callstmt' &&
      s.kind !== 'alloc' &&
      s.kind !== 'dealloc' &&
      s.kind !== 'safe'
    ) {
      const e = ownExprs(s).find((x) => some(x, isTop))!
      return fail(
        'static/top',
        `\`top(s)\` cannot be used in the ${s.kind === 'for' ? 'range of a loop' : `condition of \`${s.kind}\``}; copy it into an ancilla first (\`t <- 0.0; pop(s, t); … push(s, t); t -> 0.0\`)`,
        e.loc ?? s.loc,
      )
    }
    const tops = new Map<string, string>()
    const before: Stmt[] = []
    const after: Stmt[] = []
    const body = mapOwn(s, (e) => {
      if (!isTop(e)) return e
      const c = e as Extract<Expr, { kind: 'call' }>
      const a = c.args[0]
      if (c.args.length !== 1 || a?.kind !== 'var')
        return fail('static/top', '`top` takes one stack, by name: `top(s)`', c.loc)
      const elem = this.stacks.get(a.name)
      if (elem === undefined)
        return fail(
          'static/top',
          `\`top(${a.name})\`: \`${a.name}\` is not a stack (a parameter \`${a.name}: stack<f64>\` or an ancilla \`${a.name}: stack<f64> <- []\`)`,
          a.loc,
        )
      let t = tops.get(a.name)
      if (!t) {
        t = this.fresh('top')
        tops.set(a.name, t)
        const l = c.loc
        const declared: Type = { kind: 'scalar', name: elem }
        const stack = { kind: 'var' as const, name: a.name, ...at(a.loc) }
        before.push(
          { kind: 'alloc', name: t, declared, value: zeroOf(elem, l), ...at(l) },
          { kind: 'pop', stack, value: { kind: 'var', name: t, ...at(l) }, ...at(l) },
        )
        after.unshift(
          { kind: 'push', stack: { ...stack }, value: { kind: 'var', name: t, ...at(l) }, ...at(l) },
          { kind: 'dealloc', name: t, declared, value: zeroOf(elem, l), ...at(l) },
        )
      }
      return { kind: 'var', name: t, ...at(c.loc) }
    })
    if (s.kind === 'callstmt') {
      for (const a of s.args) {
        if (a.kind === 'var' && tops.has(a.name))
          fail(
            'static/top',
            `\`top(${a.name})\` cannot be passed to a call that also takes the stack \`${a.name}\``,
            a.loc ?? s.loc,
          )
      }
    }
    return [...before, body, ...after]
  }
}

/** Expands `for x in arr`, elementwise statements (`[..]`) and `top(s)` in a function. */
export function expandSugar(f: FunctionDef): FunctionDef {
  return { ...f, body: new Sugar(f).body(f.body) }
}
