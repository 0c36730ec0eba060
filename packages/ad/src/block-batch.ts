/**
 * IR → IR rewrites for blocked programs: a function written for one block of data (`f(r, cam,
 * pt)` for one observation) run over n blocks laid out one after another in batched arrays, in one
 * compiled loop. Used by `blockJacobian`, which batches a per-block derivative program (f and its
 * adjoint, or f's tangent) so that one call computes the Jacobian blocks of many blocks.
 *
 * - `renameLocals`: a body with its ancillas and loop variables renamed, so that two bodies over
 *   the same parameters can be concatenated (f's and its adjoint's).
 * - `batchOverBlocks`: `for $b in 0..$n { body of block $b }`, where an array parameter `x` of
 *   block length L is read as `x[$b·L + e]`, a batched scalar `s` as `s[$b]`, and `len(x)` is L.
 */
import { TenetError, type Arg, type Dataview, type Expr, type FunctionDef, type Param, type Stmt } from '@tenet/ir'
import { ref } from './expr.js'

const unsupported = (msg: string): never => {
  throw new TenetError('ad/unsupported', msg)
}

const num = (value: number): Expr => ({ kind: 'num', value, isFloat: false })
const I32 = { kind: 'scalar', name: 'i32' } as const

/** Maps every variable name (ancillas, loop variables, parameters) and every read of a variable. */
interface NameMap {
  /** A read or write of variable `name` (a dataview, so it may become an element). */
  variable(v: Extract<Expr, { kind: 'var' }>): Dataview
  /** `a[index]` of array `a`, the index already mapped. */
  element(array: string, index: Expr, node: Extract<Expr, { kind: 'index' }>): Dataview
  /** The new name of a declared local (ancilla, loop variable). */
  local(name: string): string
  /** `len(a)`: an expression, or undefined to keep the call. */
  length(array: string): Expr | undefined
  /** A call argument that is a whole array or stack variable. */
  wholeArgument(name: string, callee: string): void
}

function mapExpr(e: Expr, m: NameMap): Expr {
  switch (e.kind) {
    case 'num':
    case 'bool':
      return e
    case 'var':
      return m.variable(e) as Expr
    case 'index':
      return m.element(e.array.name, mapExpr(e.index, m), e) as Expr
    case 'field':
      return { ...e, target: mapExpr(e.target, m) }
    case 'unary':
      return { ...e, arg: mapExpr(e.arg, m) }
    case 'binary':
      return { ...e, left: mapExpr(e.left, m), right: mapExpr(e.right, m) }
    case 'call': {
      if (e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var') {
        const l = m.length(e.args[0]!.name)
        if (l) return l
      }
      return { ...e, args: e.args.map((a) => mapExpr(a, m)) }
    }
  }
}

function mapView(d: Dataview, m: NameMap): Dataview {
  switch (d.kind) {
    case 'var':
      return m.variable(d)
    case 'index':
      return m.element(d.array.name, mapExpr(d.index, m), d)
    case 'field':
      return { ...d, target: mapExpr(d.target, m) }
    case 'neg':
      return { ...d, target: mapView(d.target, m) }
  }
}

function mapArg(a: Arg, m: NameMap, callee: string): Arg {
  if (a.kind === 'var' && typeof a.type === 'object' && a.type.kind !== 'scalar') {
    m.wholeArgument(a.name, callee)
    return m.variable(a) as Arg
  }
  return a.kind === 'neg' ? mapView(a, m) : mapExpr(a as Expr, m)
}

function mapStmts(body: Stmt[], m: NameMap): Stmt[] {
  return body.map((s) => mapStmt(s, m))
}

function mapStmt(s: Stmt, m: NameMap): Stmt {
  switch (s.kind) {
    case 'update':
      return { ...s, target: mapView(s.target, m), value: mapExpr(s.value, m) }
    case 'callstmt':
      return { ...s, args: s.args.map((a) => mapArg(a, m, s.callee)) }
    case 'alloc':
    case 'dealloc':
      return {
        ...s,
        name: m.local(s.name),
        value: s.value.kind === 'emptystack' ? s.value : mapExpr(s.value, m),
      } as Stmt
    case 'if':
      return {
        ...s,
        pre: mapExpr(s.pre, m),
        post: s.post === null ? null : mapExpr(s.post, m),
        then: mapStmts(s.then, m),
        else: mapStmts(s.else, m),
      }
    case 'while':
      return { ...s, pre: mapExpr(s.pre, m), post: mapExpr(s.post, m), body: mapStmts(s.body, m) }
    case 'for': {
      const out: Extract<Stmt, { kind: 'for' }> = {
        ...s,
        variable: m.local(s.variable),
        start: mapExpr(s.start, m),
        stop: mapExpr(s.stop, m),
        step: s.step === null ? null : mapExpr(s.step, m),
        body: mapStmts(s.body, m),
      }
      if (s.each) out.each = m.variable(s.each) as Extract<Expr, { kind: 'var' }>
      if (s.readOnly) out.readOnly = { array: m.local(s.readOnly.array), element: m.local(s.readOnly.element) }
      return out
    }
    case 'push':
    case 'pop':
      return { ...s, stack: m.variable(s.stack) as Extract<Expr, { kind: 'var' }>, value: mapView(s.value, m) }
    case 'safe':
      return { ...s, expr: mapExpr(s.expr, m) }
    case 'unchecked':
      return { ...s, body: mapStmts(s.body, m) }
    default:
      return unsupported(`a \`${s.kind}\` statement cannot be batched (the body must be core IR)`)
  }
}

/** The names a body declares: its ancillas and loop variables. */
function declared(body: Stmt[], out = new Set<string>()): Set<string> {
  for (const s of body) {
    if (s.kind === 'alloc') out.add(s.name)
    else if (s.kind === 'for') {
      out.add(s.variable)
      declared(s.body, out)
    } else if (s.kind === 'if') {
      declared(s.then, out)
      declared(s.else, out)
    } else if (s.kind === 'while' || s.kind === 'unchecked') declared(s.body, out)
  }
  return out
}

/** `body` with every ancilla and loop variable `x` renamed `<prefix>x` (parameters keep their names). */
export function renameLocals(body: Stmt[], prefix: string): Stmt[] {
  const locals = declared(body)
  const name = (n: string) => (locals.has(n) ? prefix + n : n)
  return mapStmts(body, {
    variable: (v) => (locals.has(v.name) ? { ...v, name: name(v.name) } : v),
    element: (a, index, node) => ({ ...node, array: { ...node.array, name: name(a) }, index }),
    local: name,
    length: () => undefined,
    wholeArgument: () => {},
  })
}

/** How one parameter of a block program is laid out over the blocks. */
export type BlockLayout =
  /** one value for all blocks (an integer or bool scalar the program only reads, a sink) */
  | { kind: 'shared' }
  /** an array of `length` elements per block: block b is elements [b·length, (b+1)·length) */
  | { kind: 'array'; length: number }
  /** a scalar per block: a batched array of n, block b's at index b */
  | { kind: 'scalar' }

/** The loop variable and block count of a batched program. */
export const BLOCK = '$b'
export const BLOCKS = '$n'

/**
 * `f` run over `$n` blocks: a function `<name>` with parameters `$n: i32` and then f's, each laid
 * out by `layouts` (batched arrays and scalars become arrays of all blocks), whose body is
 * `for $b in 0..$n { … f's body on block $b … }`. f's array parameters may only be read and
 * written element by element or measured by `len` (a call that passes one whole is an
 * `ad/unsupported` error: its elements would have to be offset inside the callee).
 */
export function batchOverBlocks(f: FunctionDef, layouts: readonly BlockLayout[], name: string): FunctionDef {
  const byName = new Map<string, BlockLayout>()
  f.params.forEach((p, i) => byName.set(p.name, layouts[i]!))
  const locals = declared(f.body)
  for (const n of [BLOCK, BLOCKS])
    if (byName.has(n) || locals.has(n)) unsupported(`\`${f.name}\` uses the name \`${n}\``)
  const offset = (p: string) => `$o$${p}`
  const offsets: Stmt[] = []
  const params: Param[] = [{ name: BLOCKS, type: I32 }]
  f.params.forEach((p, i) => {
    const l = layouts[i]!
    if (l.kind === 'shared') params.push({ name: p.name, type: p.type })
    else if (l.kind === 'scalar') {
      if (p.type.kind !== 'scalar') return unsupported(`parameter \`${p.name}\` of \`${f.name}\` is not a scalar`)
      params.push({ name: p.name, type: { kind: 'array', elem: p.type.name } })
    } else {
      if (p.type.kind !== 'array') unsupported(`parameter \`${p.name}\` of \`${f.name}\` is not an array`)
      params.push({ name: p.name, type: p.type })
      if (l.length !== 1)
        offsets.push({
          kind: 'alloc',
          name: offset(p.name),
          declared: I32,
          value: { kind: 'binary', op: '*', left: ref(BLOCK), right: num(l.length) },
        })
    }
  })
  const body = mapStmts(f.body, {
    variable(v) {
      const l = byName.get(v.name)
      if (l?.kind === 'scalar') return { kind: 'index', array: ref(v.name), index: ref(BLOCK) }
      if (l?.kind === 'array')
        unsupported(
          `\`${f.name}\` uses its array \`${v.name}\` whole: a blocked program may only use a block's arrays element by element (and \`len\`)`,
        )
      return v
    },
    element(a, index, node) {
      const l = byName.get(a)
      if (l?.kind !== 'array') return { ...node, index }
      const base = ref(l.length === 1 ? BLOCK : offset(a))
      return { ...node, index: { kind: 'binary', op: '+', left: base, right: index } }
    },
    local: (n) => n,
    length(a) {
      const l = byName.get(a)
      return l?.kind === 'array' ? num(l.length) : undefined
    },
    wholeArgument(a, callee) {
      if (byName.get(a)?.kind === 'array')
        unsupported(
          `\`${f.name}\` passes its array \`${a}\` whole to \`${callee}\`: a blocked program may only use a block's arrays element by element`,
        )
    },
  })
  const closing = offsets
    .map((s) => ({ ...(s as Extract<Stmt, { kind: 'alloc' }>), kind: 'dealloc' }) as Stmt)
    .reverse()
  return {
    kind: 'fn',
    name,
    params,
    body: [
      {
        kind: 'for',
        variable: BLOCK,
        start: num(0),
        stop: ref(BLOCKS),
        step: null,
        inclusive: false,
        body: [...offsets, ...body, ...closing],
      },
    ],
  }
}

/** The value of an integer expression of literals (`3 * 2 + 1`), or undefined. */
function literalIndex(e: Expr): number | undefined {
  if (e.kind === 'num') return Number.isInteger(e.value) ? e.value : undefined
  if (e.kind !== 'binary' || (e.op !== '+' && e.op !== '-' && e.op !== '*')) return undefined
  const a = literalIndex(e.left),
    b = literalIndex(e.right)
  if (a === undefined || b === undefined) return undefined
  return e.op === '+' ? a + b : e.op === '-' ? a - b : a * b
}

/** The name of element k of a scalarized array `a`. */
const elementName = (a: string, k: number) => `$s$${a}$${k}`

/**
 * Scalar replacement in a block program: each f64 scalar parameter named in `scalars` becomes an
 * ancilla (`$s$<x>$0`), and each array of `arrays` (name → length) that `f` reads
 * and writes only at literal indices becomes one f64 ancilla per element (`$s$<a>$<k>`, allocated
 * at 0.0 at the start of the body and freed at 0.0 at its end), so that its elements live in
 * registers and the dead-update analysis, which sees an array as one variable, sees each element
 * as its own. Only for arrays that start at zero and are not read after `f` (a per-block
 * workspace, or its gradient): the caller's array is then not touched. Returns `f` unchanged for
 * the arrays that do not qualify, and which were replaced.
 */
export function scalarizeArrays(
  f: FunctionDef,
  arrays: ReadonlyMap<string, number>,
  scalars: ReadonlySet<string> = new Set(),
): { f: FunctionDef; replaced: Set<string> } {
  const ok = new Set(arrays.keys())
  const probe: NameMap = {
    variable: (v) => {
      ok.delete(v.name)
      return v
    },
    element: (a, index, node) => {
      const k = literalIndex(index)
      if (arrays.has(a) && !(k !== undefined && k >= 0 && k < arrays.get(a)!)) ok.delete(a)
      return { ...node, index }
    },
    local: (n) => n,
    length: () => undefined,
    wholeArgument: (a) => ok.delete(a),
  }
  mapStmts(f.body, probe)
  for (const p of f.params) {
    if (!ok.has(p.name)) continue
    if (p.type.kind !== 'array' || p.type.elem !== 'f64') ok.delete(p.name)
  }
  const held = new Set(
    f.params.filter((p) => scalars.has(p.name) && p.type.kind === 'scalar' && p.type.name === 'f64').map((p) => p.name),
  )
  if (!ok.size && !held.size) return { f, replaced: ok }
  const used = new Map<string, Set<number>>([...ok].map((a) => [a, new Set<number>()]))
  const body = mapStmts(f.body, {
    variable: (v) => (held.has(v.name) ? ref(elementName(v.name, 0)) : v),
    element: (a, index, node) => {
      if (!ok.has(a)) return { ...node, index }
      const k = literalIndex(index)!
      used.get(a)!.add(k)
      return ref(elementName(a, k))
    },
    local: (n) => n,
    length: (a) => (ok.has(a) ? num(arrays.get(a)!) : undefined),
    wholeArgument: () => {},
  })
  const zero: Expr = { kind: 'num', value: 0, isFloat: true }
  const F64 = { kind: 'scalar', name: 'f64' } as const
  const opens: Stmt[] = [...held].map((a) => ({ kind: 'alloc', name: elementName(a, 0), declared: F64, value: zero }))
  for (const [a, ks] of used)
    for (const k of [...ks].sort((x, y) => x - y))
      opens.push({ kind: 'alloc', name: elementName(a, k), declared: F64, value: zero })
  const closes = opens.map((s) => ({ ...(s as Extract<Stmt, { kind: 'alloc' }>), kind: 'dealloc' }) as Stmt).reverse()
  for (const a of held) ok.add(a)
  return { f: { ...f, body: [...opens, ...body, ...closes] }, replaced: ok }
}
