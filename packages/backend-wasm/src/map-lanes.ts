/**
 * Map lanes (vectorising a map loop by two, SPMD style): a counting loop whose iterations are
 * independent scalar programs over element i of its arrays, such as `for i in 0..len(z) {
 * ibesselj(out[i], nu, z[i]) }`, runs iterations i and i + 1 together, each value the body computes
 * held in one lane of an f64x2 (an i32 as the sign-extended low half of an i64x2 lane). The calls
 * of the body are inlined (a function, or an inverse, with its locals renamed), so control flow
 * with data-dependent trip counts is met in lanes: a `while` or `if` whose condition differs
 * between the lanes runs under a lane mask (the loop goes on while some lane's condition holds;
 * an update writes only the active lanes, a blend with the old value), and one whose condition is
 * the same in both lanes runs as scalar code.
 *
 * A value is *uniform* when it is the same in both lanes: computed only from the loop's other
 * scalars and array elements at uniform indices, and written only under uniform control. Uniform
 * statements run once per pair as the scalar code generator emits them (a factorial of ν, say).
 * Every varying value is computed lane by lane with the instruction the scalar code uses, so each
 * lane is the scalar loop's double bit for bit; what has no f64x2 instruction (`**` other than
 * `x ** 2`, transcendental functions, integer division) is computed by the scalar code once per
 * lane from the extracted lanes.
 *
 * Applies without run-time checks only (a failed check must name the iteration it fails in), and
 * only where every array the body indexes with the loop variable is indexed by exactly the loop
 * variable (`a[i]`) or through a block offset of the iteration's own block (see \`blockOffsets\`;
 * such elements are written by \`+=\`/\`-=\` or swapped with a scalar by SWAP, outside varying
 * control), no other array is written, no scalar of the enclosing function is written,
 * and the body has no effects (`@safe`, stacks, host functions), array ancillas, or loops whose
 * range is varying. Reads through a varying offset of the body's own (\`a[x + c]\`, a gather) are
 * planned as gathered blocks (see \`gatheredBlocks\`). This module only plans; the code generator
 * emits the pairs and then runs the scalar loop for what is left.
 */
import type { Arg, Dataview, Expr, FunctionDef, ScalarTypeName, Stmt } from '@tenet/ir'
import { offsetOf, stmtExprs } from '@tenet/ir/backend'

/** The lane type of a varying value: f64 lanes, or i32 sign-extended in i64 lanes. */
export type LaneType = 'f64' | 'i32'

/** The plan of a map loop run two iterations at a time. */
export interface MapLanesPlan {
  /** The loop body with its calls inlined and each `a[i]` replaced by its alias variable. */
  body: Stmt[]
  /** The elements `a[i]` the body reads or writes, each held in a varying alias variable. */
  elements: Array<{ array: string; alias: string; elem: LaneType; written: boolean }>
  /** The varying scalars (aliases, the loop variable if read, the varying locals), by lane type. */
  varying: Map<string, LaneType>
  /** The name the loop variable has in the body. */
  variable: string
  /** Every array the body names (for the overlap checks of the written ones). */
  arrays: string[]
  /**
   * Arrays the body writes block by block (see \`blockOffsets\`): each iteration adds into its
   * own elements \`a[o + c]\`, lane by lane.
   */
  blockWrites: string[]
  /**
   * The blocks the body reads or writes through a block offset (see \`blockOffsets\`): \`array\`'s
   * elements \`array[offset + c]\`, 0 ≤ c < size, of arrays the body only reads or only writes block
   * by block. The code generator checks once per loop that every iteration's block is in range and
   * addresses them from two bases per pair (no extract, no check per access).
   */
  blocks: Array<{ array: string; offset: string; size: number; base?: string }>
  /** The block offsets (see \`blockOffsets\`), with the blocks \`a[u + i]\` of one element as \`#u\`. */
  offsets: Map<string, BlockOffset>
  /**
   * Arrays the body adds into at indices the same in both lanes (a reduction over the loop, such
   * as an adjoint's gradient of a shared input), each element by one update: lane by lane, in the
   * order the scalar loop adds them.
   */
  accumulators: string[]
  /**
   * The elements \`array[offset + c]\` of the blocks (see \`blocks\`), each replaced in the body by an
   * alias variable: loaded for both lanes from the pair's two block addresses before the body,
   * held in one f64x2 local while it runs, stored after it when written.
   */
  blockElements: Array<{ array: string; offset: string; c: number; alias: string; written: boolean }>
  /**
   * Gathered blocks (see \`gatheredBlocks\`): the f64 elements \`array[offset + c]\`, 0 ≤ c ≤ max, that
   * the body reads through a varying i32 local \`offset\` of its own, such as BA's camera
   * \`cams[co + c]\` with \`co <- 11 * obs[2 * i]\`.
   */
  gathers: Array<{ array: string; offset: string; max: number }>
}

/** A block offset \`o <- (u + v) · size\` (\`base\` u, a name the loop does not write) or \`o <- v · size\`. */
export interface BlockOffset {
  size: number
  base?: string
}

/**
 * The block offsets of a loop body: i32 locals allocated at its top level as \`o <- v * s\` (or
 * \`s * v\`, or \`(u + v) * s\` of a name u the body neither declares nor writes) of the loop
 * variable v and a positive constant s, and never written after. An element \`a[o + c]\` with
 * 0 ≤ c < s is then iteration v's own (block v, or u + v, of a batched array: see
 * \`batchOverBlocks\` of \`@tenet/ad\`), different for every iteration.
 */
export function blockOffsets(
  variable: string,
  body: readonly Stmt[],
  uniform: (name: string) => boolean,
): Map<string, BlockOffset> {
  const out = new Map<string, BlockOffset | null>()
  for (const s of body) {
    if (s.kind !== 'alloc' || s.value.kind !== 'binary' || s.value.op !== '*') continue
    const t = s.declared ?? s.type
    if (t?.kind !== 'scalar' || t.name !== 'i32') continue
    const { left, right } = s.value
    const [v, c] = right.kind === 'num' ? [left, right] : [right, left]
    if (c.kind !== 'num' || !Number.isInteger(c.value) || c.value <= 0) continue
    const base = v.kind === 'var' && v.name === variable ? null : uniformPlus(v, variable, uniform)
    if (base === undefined) continue
    out.set(s.name, out.has(s.name) ? null : { size: c.value, ...(base ? { base } : {}) })
  }
  forEachNested(body, (s) => {
    if (s.kind === 'update' || s.kind === 'callstmt') for (const n of writtenNames(s)) out.delete(n)
    else if (s.kind === 'alloc' && !body.includes(s)) out.delete(s.name)
  })
  const result = new Map<string, BlockOffset>()
  for (const [n, k] of out) if (k) result.set(n, k)
  return result
}

/** Whether an index is \`x + v\` or \`v + x\` of the loop variable v and another variable x, or a stride's (see \`strided\`). */
function plusVariable(e: Expr, variable: string): boolean {
  return uniformPlus(e, variable, () => true) !== undefined || strided(e, variable) !== undefined
}

/** s and c of an index \`v * s + c\` (or \`s * v\`, \`c + s * v\`, …) with constants s > 0 and 0 ≤ c < s. */
function strided(e: Expr, variable: string): { size: number; c: number } | undefined {
  let m: Expr = e,
    c = 0
  if (e.kind === 'binary' && e.op === '+') {
    const [x, y] = e.right.kind === 'num' ? [e.left, e.right] : [e.right, e.left]
    if (y.kind !== 'num' || !Number.isInteger(y.value)) return undefined
    m = x
    c = y.value
  }
  if (m.kind !== 'binary' || m.op !== '*' || m.type !== 'i32') return undefined
  const [v, k] = m.right.kind === 'num' ? [m.left, m.right] : [m.right, m.left]
  if (v.kind !== 'var' || v.name !== variable || k.kind !== 'num' || !Number.isInteger(k.value) || k.value <= 0)
    return undefined
  return c >= 0 && c < k.value ? { size: k.value, c } : undefined
}

/** u of \`u + v\` or \`v + u\` (v the loop variable, u a uniform name), else undefined. */
function uniformPlus(e: Expr, variable: string, uniform: (name: string) => boolean): string | undefined {
  if (e.kind !== 'binary' || e.op !== '+' || e.type !== 'i32') return undefined
  const { left, right } = e
  if (left.kind === 'var' && right.kind === 'var') {
    if (left.name === variable && right.name !== variable && uniform(right.name)) return right.name
    if (right.name === variable && left.name !== variable && uniform(left.name)) return left.name
  }
  return undefined
}

/**
 * An index of the iteration's own block: \`o + c\` (or \`c + o\`, or \`o\`) of a block offset o and
 * a constant 0 ≤ c < its size, \`v * s + c\` (offset \`*s\`), or \`u + v\` (a block of one element,
 * offset \`#u\`): the offset's
 * name and c, else undefined. \`offsets\` gains the one-element blocks it meets.
 */
export function blockIndex(
  index: Expr,
  offsets: Map<string, BlockOffset>,
  variable: string,
  uniform: (name: string) => boolean,
): { offset: string; c: number } | undefined {
  const u = uniformPlus(index, variable, uniform)
  if (u !== undefined) {
    offsets.set(`#${u}`, { size: 1, base: u })
    return { offset: `#${u}`, c: 0 }
  }
  // (\`v * s + c\` written out: the block of offset \`*s\`)
  const st = strided(index, variable)
  if (st) {
    offsets.set(`*${st.size}`, { size: st.size })
    return { offset: `*${st.size}`, c: st.c }
  }
  let o: Expr = index,
    c = 0
  if (index.kind === 'binary' && index.op === '+') {
    const [x, y] = index.right.kind === 'num' ? [index.left, index.right] : [index.right, index.left]
    if (y.kind !== 'num' || !Number.isInteger(y.value)) return undefined
    o = x
    c = y.value
  }
  const size = o.kind === 'var' ? offsets.get(o.name)?.size : undefined
  return size !== undefined && c >= 0 && c < size ? { offset: (o as { name: string }).name, c } : undefined
}

/** What the planner needs to know of the program and the code generator's scope. */
export interface MapLanesContext {
  function(name: string, inverse: boolean): FunctionDef | undefined
  /** The element type of an array in scope (undefined for a name that is not one). */
  elem(name: string): ScalarTypeName | undefined
  /** Whether a callee names a registered bijection that is `SWAP`. */
  isSwap(callee: string): boolean
}

class Refused extends Error {}
const refuse = (): never => {
  throw new Refused()
}

/** The largest inlined body (statements, nested ones included) the planner accepts. */
const MAX_STATEMENTS = 4000
const MAX_DEPTH = 12

/** Names read by an expression (variables and arrays). */
export function reads(e: Expr | Arg, out: Set<string>): Set<string> {
  switch (e.kind) {
    case 'var':
      out.add(e.name)
      break
    case 'index':
      out.add(e.array.name)
      reads(e.index, out)
      break
    case 'unary':
      reads(e.arg, out)
      break
    case 'binary':
      reads(e.left, out)
      reads(e.right, out)
      break
    case 'call':
      for (const a of e.args) reads(a, out)
      break
    case 'field':
    case 'neg':
      reads(e.target, out)
      break
  }
  return out
}

/**
 * Inlines calls and renames: `rename` maps the names of the body being copied to names of the
 * result (a name without an entry is kept: the loop's scope).
 */
class Inliner {
  count = 0
  fresh = 0
  constructor(
    private readonly ctx: MapLanesContext,
    private readonly variable: string,
    private readonly elements: Map<string, string>,
  ) {}

  private name(n: string, rename: Map<string, string>): string {
    return rename.get(n) ?? n
  }

  expr<E extends Expr | Arg>(e: E, rename: Map<string, string>): E {
    switch (e.kind) {
      case 'num':
      case 'bool':
        return { ...e }
      case 'var':
        return { ...e, name: this.name(e.name, rename) }
      case 'index': {
        const array = this.name(e.array.name, rename)
        if (e.index.kind === 'var' && this.name(e.index.name, rename) === this.variable) {
          const elem = this.ctx.elem(array)
          if (elem !== 'f64' && elem !== 'i32') return refuse()
          let alias = this.elements.get(array)
          if (!alias) this.elements.set(array, (alias = `${array}[${this.variable}]#lane`))
          return { kind: 'var', name: alias, type: elem, ...(e.loc ? { loc: e.loc } : {}) } as E
        }
        const index = this.expr(e.index, rename)
        // (\`u + i\`: a block of one element where u is uniform, see \`blockIndex\`; the planner decides)
        if (reads(index, new Set()).has(this.variable) && !plusVariable(index, this.variable)) return refuse()
        const { inBounds: _, ...rest } = e
        return { ...rest, array: { ...e.array, name: array }, index } as E
      }
      case 'unary':
        return { ...e, arg: this.expr(e.arg, rename) }
      case 'binary':
        return { ...e, left: this.expr(e.left, rename), right: this.expr(e.right, rename) }
      case 'call':
        if (e.callee.startsWith('$')) return refuse()
        return { ...e, args: e.args.map((a) => this.expr(a, rename)) }
      default:
        return refuse()
    }
  }

  body(body: readonly Stmt[], rename: Map<string, string>, depth: number): Stmt[] {
    const out: Stmt[] = []
    for (const s of body) this.stmt(s, rename, depth, out)
    return out
  }

  private local(n: string, rename: Map<string, string>, depth: number): string {
    if (depth === 0) return n
    const m = `${n}#${this.fresh++}`
    rename.set(n, m)
    return m
  }

  private stmt(s: Stmt, rename: Map<string, string>, depth: number, out: Stmt[]): void {
    if (++this.count > MAX_STATEMENTS) refuse()
    switch (s.kind) {
      case 'update':
        if (s.target.kind !== 'var' && s.target.kind !== 'index') refuse()
        out.push({ ...s, target: this.expr(s.target, rename) as Dataview, value: this.expr(s.value, rename) })
        return
      case 'alloc':
      case 'dealloc': {
        if (s.value.kind === 'emptystack' || (s.declared ?? s.type)?.kind === 'array') refuse()
        const value = this.expr(s.value as Expr, rename)
        const name = s.kind === 'alloc' ? this.local(s.name, rename, depth) : this.name(s.name, rename)
        out.push({ ...s, name, value } as Stmt)
        return
      }
      case 'if':
        out.push({
          ...s,
          pre: this.expr(s.pre, rename),
          post: s.post && this.expr(s.post, rename),
          then: this.body(s.then, new Map(rename), depth),
          else: this.body(s.else, new Map(rename), depth),
        })
        return
      case 'while':
        out.push({
          ...s,
          pre: this.expr(s.pre, rename),
          post: this.expr(s.post, rename),
          body: this.body(rolled(s.body), new Map(rename), depth),
        })
        return
      case 'for': {
        if (s.each) refuse()
        const start = this.expr(s.start, rename),
          stop = this.expr(s.stop, rename),
          step = s.step && this.expr(s.step, rename)
        const inner = new Map(rename)
        const variable = this.local(s.variable, inner, depth + 1)
        out.push({ ...s, variable, start, stop, step, body: this.body(s.body, inner, depth) })
        return
      }
      case 'unchecked':
        out.push({ ...s, body: this.body(s.body, new Map(rename), depth) })
        return
      case 'callstmt': {
        const args = s.args.map((a) => this.expr(a, rename))
        if (s.target === 'bijection') {
          // (an element argument other than \`a[i]\` must be of the iteration's own block: the planner checks)
          if (!this.ctx.isSwap(s.callee) || args.some((a) => a.kind !== 'var' && a.kind !== 'index')) refuse()
          out.push({ ...s, args })
          return
        }
        const f = this.ctx.function(s.callee, s.inverse)
        if (!f || depth >= MAX_DEPTH || f.params.length !== args.length) return refuse()
        // by reference: every argument a distinct variable or array
        const inner = new Map<string, string>()
        const seen = new Set<string>()
        f.params.forEach((p, k) => {
          const a = args[k]!
          if (a.kind !== 'var' || seen.has(a.name)) refuse()
          seen.add((a as { name: string }).name)
          inner.set(p.name, (a as { name: string }).name)
        })
        out.push({ kind: 'unchecked', body: this.body(f.body, inner, depth + 1) })
        return
      }
      default:
        refuse()
    }
  }
}

/** Calls \`f\` on every element access of an expression. */
function walkIndices(e: Expr | Arg, f: (x: Extract<Expr, { kind: 'index' }>) => void): void {
  if (e.kind === 'index') {
    f(e)
    walkIndices(e.index, f)
  } else if (e.kind === 'unary') walkIndices(e.arg, f)
  else if (e.kind === 'binary') {
    walkIndices(e.left, f)
    walkIndices(e.right, f)
  } else if (e.kind === 'call') for (const a of e.args) walkIndices(a, f)
  else if (e.kind === 'neg' || e.kind === 'field') walkIndices(e.target, f)
}

/** Every statement of a body, nested ones included, with whether it is under varying control. */
function forEachNested(body: readonly Stmt[], f: (s: Stmt) => void): void {
  for (const s of body) {
    f(s)
    if (s.kind === 'if') {
      forEachNested(s.then, f)
      forEachNested(s.else, f)
    } else if (s.kind === 'while' || s.kind === 'for' || s.kind === 'unchecked') forEachNested(s.body, f)
  }
}

/** The names a statement (nested ones included) writes. */
export function writtenNames(s: Stmt): Set<string> {
  const out = new Set<string>()
  forEachNested([s], (x) => {
    if (x.kind === 'update')
      out.add(
        (x.target as { name?: string; array?: { name: string } }).array?.name ?? (x.target as { name: string }).name,
      )
    else if (x.kind === 'alloc') out.add(x.name)
    else if (x.kind === 'callstmt')
      for (const a of x.args)
        if (a.kind === 'var') out.add(a.name)
        else if (a.kind === 'index') out.add(a.array.name)
  })
  return out
}

/** Whether an expression reads a varying name. */
export function readsVarying(e: Expr | Arg, varying: ReadonlyMap<string, unknown>): boolean {
  for (const n of reads(e, new Set())) if (varying.has(n)) return true
  return false
}

/**
 * Plans a counting loop over `variable` with this body as map lanes, or returns null where it does
 * not apply (see the module comment).
 */
export function planMapLanes(variable: string, body: readonly Stmt[], ctx: MapLanesContext): MapLanesPlan | null {
  const elements = new Map<string, string>()
  const inliner = new Inliner(ctx, variable, elements)
  let flat: Stmt[]
  try {
    flat = inliner.body(body, new Map(), 0)
  } catch (e) {
    if (e instanceof Refused) return null
    throw e
  }
  // only where the body is more than updates (which loop pairing takes, see \`loop-pairs.ts\`):
  // a call, a loop or a branch
  const declared = new Set<string>(elements.values())
  forEachNested(flat, (s) => {
    if (s.kind === 'alloc') declared.add(s.name)
    if (s.kind === 'for') declared.add(s.variable)
  })
  const varying = new Map<string, LaneType>()
  for (const [array, alias] of elements) varying.set(alias, ctx.elem(array) as LaneType)
  const typeOf = new Map<string, ScalarTypeName>()
  forEachNested(flat, (s) => {
    if (s.kind === 'alloc') typeOf.set(s.name, ((s.declared ?? s.type) as { name: ScalarTypeName }).name)
  })
  let loopVarRead = false
  forEachNested(flat, (s) => {
    for (const e of stmtExprs(s)) if (reads(e, new Set()).has(variable)) loopVarRead = true
  })
  if (loopVarRead) varying.set(variable, 'i32')
  const arrays = new Set<string>(elements.keys())
  let ok = true
  // (uniform: neither declared nor written in the body)
  const writtenInBody = new Set<string>()
  for (const s of flat) for (const n of writtenNames(s)) writtenInBody.add(n)
  // an array whose own element (`a[i]`, now its lane alias) the body writes is written: another
  // lane's read of it through any other index (`a[x]`) must not see it early, or late
  for (const [array, alias] of elements) if (writtenInBody.has(alias)) writtenInBody.add(array)
  const uniform = (n: string) => !declared.has(n) && !writtenInBody.has(n) && ctx.elem(n) === undefined
  const offsets = blockOffsets(variable, flat, uniform)
  const blockWrites = new Set<string>()
  const accumulators = new Set<string>()
  const indexUpdates: Array<Extract<Stmt, { kind: 'update' }>> = []
  const mark = (name: string) => {
    if (varying.has(name)) return false
    if (!declared.has(name)) {
      ok = false
      return false
    }
    const t = typeOf.get(name)
    if (t !== 'f64' && t !== 'i32') {
      ok = false
      return false
    }
    varying.set(name, t as LaneType)
    return true
  }
  // the fixed point: a name is varying when written from a varying value or under varying control
  let changed = true
  const visit = (stmts: readonly Stmt[], control: boolean): void => {
    for (const s of stmts) {
      for (const e of stmtExprs(s))
        for (const n of reads(e, new Set())) if (ctx.elem(n) !== undefined && !elements.has(n)) arrays.add(n)
      switch (s.kind) {
        case 'update': {
          const t = s.target
          if (t.kind === 'index') {
            // an element of an array at a uniform index: only read, never written; one of the
            // iteration's own block, outside varying control: written lane by lane
            // (or an accumulation at a uniform index: sorted out after the fixed point)
            if (control || (s.op !== '+=' && s.op !== '-=') || t.type !== 'f64') ok = false
            else if (blockIndex(t.index, offsets, variable, uniform)) blockWrites.add(t.array.name)
            else if (!indexUpdates.includes(s)) indexUpdates.push(s)
            break
          }
          if (control || readsVarying(s.value, varying)) changed = mark((t as { name: string }).name) || changed
          break
        }
        case 'alloc':
          if (control || readsVarying(s.value as Expr, varying)) changed = mark(s.name) || changed
          break
        case 'callstmt': {
          // a SWAP with an element of the iteration's own block (such as a block Jacobian's store
          // of an entry, \`SWAP(J[o + c], d)\`): written lane by lane as its alias, outside varying
          // control; the other arguments then hold that element's values, varying
          const elems = s.args.filter((a): a is Extract<Expr, { kind: 'index' }> => a.kind === 'index')
          for (const t of elems)
            if (control || t.type !== 'f64' || !blockIndex(t.index, offsets, variable, uniform)) ok = false
            else blockWrites.add(t.array.name)
          const names = s.args.flatMap((a) => (a.kind === 'var' ? [a.name] : []))
          if (control || elems.length > 0 || names.some((n) => varying.has(n)))
            for (const n of names) changed = mark(n) || changed
          break
        }
        case 'if': {
          const c = control || readsVarying(s.pre, varying)
          visit(s.then, c)
          visit(s.else, c)
          break
        }
        case 'while':
          visit(s.body, control || readsVarying(s.pre, varying))
          break
        case 'for':
          if ([s.start, s.stop, ...(s.step ? [s.step] : [])].some((e) => readsVarying(e, varying))) ok = false
          visit(s.body, control)
          break
        case 'unchecked':
          visit(s.body, control)
          break
      }
    }
  }
  while (changed && ok) {
    changed = false
    visit(flat, false)
  }
  if (!ok) return null
  // the other element updates: accumulations at uniform indices, each element by one update
  const accumulated = new Map<string, Set<string>>()
  for (const u of indexUpdates) {
    const t = u.target as Extract<Expr, { kind: 'index' }>
    if (readsVarying(t.index, varying) || blockWrites.has(t.array.name)) return null
    accumulators.add(t.array.name)
    const keys = accumulated.get(t.array.name) ?? new Set<string>()
    const [base, c] = offsetOf(t.index)
    // (one base, different constants: different elements)
    if (keys.size && ![...keys].every((k) => k.startsWith(`${base}|`))) return null
    if (keys.has(`${base}|${c}`)) return null
    keys.add(`${base}|${c}`)
    accumulated.set(t.array.name, keys)
  }
  // an array written block by block is read only in its own blocks, an accumulated one nowhere,
  // and neither is an a[i]
  let stray = false
  const own = (e: Expr | Arg): void => {
    if (e.kind === 'index') {
      const n = e.array.name
      if (accumulators.has(n)) stray = true
      if (blockWrites.has(n) && !blockIndex(e.index, offsets, variable, uniform)) stray = true
      own(e.index)
    } else if (e.kind === 'unary') own(e.arg)
    else if (e.kind === 'binary') {
      own(e.left)
      own(e.right)
    } else if (e.kind === 'call') for (const a of e.args) own(a)
    else if (e.kind === 'neg' || e.kind === 'field') own(e.target)
    else if (e.kind === 'var' && (accumulators.has(e.name) || blockWrites.has(e.name))) stray = true
  }
  forEachNested(flat, (s) => {
    const exprs = s.kind === 'update' && s.target.kind === 'index' ? [s.value, s.target.index] : stmtExprs(s)
    for (const e of exprs) own(e)
  })
  for (const w of [...blockWrites, ...accumulators]) if (elements.has(w)) stray = true
  // a written array's blocks through one offset (blocks of two strides overlap across iterations)
  const writtenThrough = new Map<string, Set<string>>()
  forEachNested(flat, (s) => {
    for (const e of stmtExprs(s))
      walkIndices(e, (x) => {
        if (!blockWrites.has(x.array.name)) return
        const b = blockIndex(x.index, offsets, variable, uniform)
        if (!b) return
        const set = writtenThrough.get(x.array.name) ?? new Set<string>()
        set.add(b.offset)
        writtenThrough.set(x.array.name, set)
      })
  })
  for (const set of writtenThrough.values()) if (set.size > 1) stray = true
  // an index that reads the loop variable other than a[i] is a block's (\`u + i\` of a uniform u);
  // a varying index other than a block's is of an array the body does not write (the lanes would
  // not see each other's writes), a block's of one not written or written only by blocks
  forEachNested(flat, (s) => {
    for (const e of stmtExprs(s))
      walkIndices(e, (x) => {
        if (!readsVarying(x.index, varying)) return
        const n = x.array.name
        const own = blockIndex(x.index, offsets, variable, uniform)
        if (!own && (reads(x.index, new Set()).has(variable) || writtenInBody.has(n))) stray = true
        else if (own && writtenInBody.has(n) && !blockWrites.has(n)) stray = true
      })
  })
  if (stray) return null
  // nothing of the enclosing scope is written (besides the elements a[i], the block writes and accumulators)
  for (const s of flat)
    for (const n of writtenNames(s)) if (!declared.has(n) && !blockWrites.has(n) && !accumulators.has(n)) return null
  // a body of updates only (no call, loop or branch) is loop pairing's (see \`loop-pairs.ts\`)
  // unless it reads or writes blocks
  let blocky = blockWrites.size > 0
  let strided = false
  forEachNested(flat, (s) => {
    for (const e of stmtExprs(s))
      walkIndices(e, (x) => {
        const b = blockIndex(x.index, offsets, variable, uniform)
        if (!b) return
        blocky = true
        if (offsets.get(b.offset)!.size > 1 && x.type === 'f64') strided = true
      })
  })
  if (!blocky && !body.some((s) => s.kind === 'callstmt' || s.kind === 'while' || s.kind === 'for' || s.kind === 'if'))
    return null
  // no f64 block of more than one element (only \`a[u + i]\`, unit stride, or i32 blocks such as
  // an edge list's \`pairs[2 * e]\`): left to loop pairing and the scalar loop, as before blocks
  // (the graph-embedding gradient's loops, short, over gathered elements, measured no faster)
  if (blocky && !strided) return null
  const written = new Set<string>()
  for (const s of flat) for (const n of writtenNames(s)) written.add(n)
  // the blocks: of the block writes, and of the f64 reads at own-block indices of arrays not written
  const blocks = new Map<string, { array: string; offset: string; size: number; base?: string }>()
  const block = (array: string, index: Expr) => {
    const b = blockIndex(index, offsets, variable, uniform)
    if (b) blocks.set(`${array}|${b.offset}`, { array, offset: b.offset, ...offsets.get(b.offset)! })
  }
  const readIndices = (e: Expr | Arg): void => {
    if (e.kind === 'index') {
      if (e.type === 'f64' && (!written.has(e.array.name) || blockWrites.has(e.array.name)))
        block(e.array.name, e.index)
      readIndices(e.index)
    } else if (e.kind === 'unary') readIndices(e.arg)
    else if (e.kind === 'binary') {
      readIndices(e.left)
      readIndices(e.right)
    } else if (e.kind === 'call') for (const a of e.args) readIndices(a)
    else if (e.kind === 'neg' || e.kind === 'field') readIndices(e.target)
  }
  forEachNested(flat, (s) => {
    if (s.kind === 'update' && s.target.kind === 'index' && blockWrites.has(s.target.array.name)) {
      block(s.target.array.name, s.target.index)
      readIndices(s.value)
    } else for (const e of stmtExprs(s)) readIndices(e)
  })
  // the block elements as lane variables
  const blockElements = new Map<string, { array: string; offset: string; c: number; alias: string; written: boolean }>()
  const aliasOf = (x: Extract<Expr, { kind: 'index' }>): Expr | undefined => {
    const n = x.array.name
    if (x.type !== 'f64' || (writtenInBody.has(n) && !blockWrites.has(n))) return undefined
    const b = blockIndex(x.index, offsets, variable, uniform)
    if (!b) return undefined
    const key = `${n}|${b.offset}|${b.c}`
    let el = blockElements.get(key)
    if (!el) {
      el = { array: n, offset: b.offset, c: b.c, alias: `${n}[${b.offset} + ${b.c}]#lane`, written: false }
      blockElements.set(key, el)
      varying.set(el.alias, 'f64')
    }
    return { kind: 'var', name: el.alias, type: 'f64', ...(x.loc ? { loc: x.loc } : {}) } as Expr
  }
  const aliasExpr = <E extends Expr | Arg>(e: E): E => {
    switch (e.kind) {
      case 'index':
        return (aliasOf(e) ?? { ...e, index: aliasExpr(e.index) }) as E
      case 'unary':
        return { ...e, arg: aliasExpr(e.arg) }
      case 'binary':
        return { ...e, left: aliasExpr(e.left), right: aliasExpr(e.right) }
      case 'call':
        return { ...e, args: e.args.map(aliasExpr) }
      default:
        return e
    }
  }
  const aliasBody = (list: readonly Stmt[]): Stmt[] =>
    list.map((s): Stmt => {
      switch (s.kind) {
        case 'update': {
          const target = aliasExpr(s.target as Expr) as Dataview
          if (target.kind === 'var' && target !== s.target)
            for (const el of blockElements.values()) if (el.alias === target.name) el.written = true
          return { ...s, target, value: aliasExpr(s.value) }
        }
        case 'alloc':
        case 'dealloc':
          return s.value.kind === 'emptystack' ? s : ({ ...s, value: aliasExpr(s.value) } as Stmt)
        case 'if':
          return {
            ...s,
            pre: aliasExpr(s.pre),
            post: s.post && aliasExpr(s.post),
            then: aliasBody(s.then),
            else: aliasBody(s.else),
          }
        case 'while':
          return { ...s, pre: aliasExpr(s.pre), post: aliasExpr(s.post), body: aliasBody(s.body) }
        case 'for':
          return {
            ...s,
            start: aliasExpr(s.start),
            stop: aliasExpr(s.stop),
            ...(s.step ? { step: aliasExpr(s.step) } : {}),
            body: aliasBody(s.body),
          }
        case 'unchecked':
          return { ...s, body: aliasBody(s.body) }
        case 'callstmt': {
          const args = s.args.map(aliasExpr)
          // (a SWAP writes its block elements)
          args.forEach((a, k) => {
            if (a !== s.args[k] && a.kind === 'var')
              for (const el of blockElements.values()) if (el.alias === a.name) el.written = true
          })
          return { ...s, args }
        }
        default:
          return s
      }
    })
  const aliased = aliasBody(flat)
  const gathers = gatheredBlocks(aliased, varying, offsets, ctx)
  return {
    body: aliased,
    elements: [...elements].map(([array, alias]) => ({
      array,
      alias,
      elem: ctx.elem(array) as LaneType,
      written: written.has(alias),
    })),
    varying,
    variable,
    arrays: [...arrays],
    blockWrites: [...blockWrites],
    blocks: [...blocks.values()],
    offsets,
    accumulators: [...accumulators],
    blockElements: [...blockElements.values()],
    gathers,
  }
}

/** x and c of an index \`x + c\`, \`c + x\` or \`x\` (x a variable, c an integer constant ≥ 0). */
export function gatherIndex(e: Expr): { offset: string; c: number } | undefined {
  if (e.kind === 'var' && e.type === 'i32') return { offset: e.name, c: 0 }
  if (e.kind !== 'binary' || e.op !== '+' || e.type !== 'i32') return undefined
  const [x, k] = e.right.kind === 'num' ? [e.left, e.right] : [e.right, e.left]
  if (x.kind !== 'var' || k.kind !== 'num' || !Number.isInteger(k.value) || k.value < 0) return undefined
  return { offset: x.name, c: k.value }
}

/**
 * The gathered blocks of a map body: per array the body reads but never writes (f64) and per
 * varying i32 local x allocated once, at the body's top level, and never written after (not a
 * block offset), the largest c of the reads \`a[x + c]\` (c a constant ≥ 0). The code generator checks,
 * right after x's allocation, that both lanes' \`a[x]\` … \`a[x + max]\` are in range, and then reads
 * each element with two loads from two bases, where it would extract x's lanes and load each lane
 * guarded (it still does so, at the same place, when a lane is out of range).
 */
export function gatheredBlocks(
  body: readonly Stmt[],
  varying: ReadonlyMap<string, LaneType>,
  offsets: ReadonlyMap<string, BlockOffset>,
  ctx: MapLanesContext,
): Array<{ array: string; offset: string; max: number }> {
  const allocs = new Map<string, number>()
  const written = new Set<string>()
  forEachNested(body, (s) => {
    if (s.kind === 'alloc') allocs.set(s.name, (allocs.get(s.name) ?? 0) + 1)
    else if (s.kind === 'update' || s.kind === 'callstmt') for (const n of writtenNames(s)) written.add(n)
  })
  const candidates = new Set<string>()
  for (const s of body)
    if (
      s.kind === 'alloc' &&
      allocs.get(s.name) === 1 &&
      !written.has(s.name) &&
      !offsets.has(s.name) &&
      varying.get(s.name) === 'i32'
    )
      candidates.add(s.name)
  const out = new Map<string, { array: string; offset: string; max: number }>()
  forEachNested(body, (s) => {
    for (const e of stmtExprs(s))
      walkIndices(e, (x) => {
        if (x.type !== 'f64' || written.has(x.array.name) || ctx.elem(x.array.name) !== 'f64') return
        const g = gatherIndex(x.index)
        if (!g || !candidates.has(g.offset)) return
        const key = `${x.array.name}|${g.offset}`
        const had = out.get(key)
        if (!had) out.set(key, { array: x.array.name, offset: g.offset, max: g.c })
        else had.max = Math.max(had.max, g.c)
      })
  })
  return [...out.values()]
}

/**
 * The names a map body may read after the statement `loop` (a `while` of it) has run: every name
 * read outside it, and the elements (stored after the body); undefined (every name) where the loop
 * sits inside another loop, whose next iteration may read what it leaves.
 */
export function readAfter(plan: MapLanesPlan, loop: Stmt): Set<string> | undefined {
  const out = new Set<string>(plan.elements.map((e) => e.alias))
  let nested = false
  const visit = (body: readonly Stmt[], inLoop: boolean) => {
    for (const s of body) {
      if (s === loop) {
        if (inLoop) nested = true
        continue
      }
      for (const e of stmtExprs(s)) reads(e, out)
      if (s.kind === 'if') {
        visit(s.then, inLoop)
        visit(s.else, inLoop)
      } else if (s.kind === 'while' || s.kind === 'for') visit(s.body, true)
      else if (s.kind === 'unchecked') visit(s.body, inLoop)
    }
  }
  visit(plan.body, false)
  return nested ? undefined : out
}

/**
 * Where each element alias of a map body (\`elements\` and \`blockElements\`) is needed: \`first\`, the
 * index of the first top-level statement of the body that reads or writes it (nested statements
 * count for the top-level one that holds them), and \`last\`, that of the last one that writes it
 * (−1 where none does). Aliases the body never names are left out. The code generator loads each
 * element just before \`first\` and stores a written one just after \`last\`, rather than all of them
 * before and after the whole body: an f64x2 local loaded at the top and used much later lives
 * across the body, and with more such values than the machine has vector registers V8 spills each
 * one to the stack and reloads it (the GMM data term's pair loaded about 100 block elements up
 * front). The order of the accesses does not matter to the results: every access of these
 * elements in the body goes through the alias, and each is the iteration's own.
 */
export function elementSpans(plan: MapLanesPlan): Map<string, { first: number; last: number }> {
  const aliases = new Set([...plan.elements.map((e) => e.alias), ...plan.blockElements.map((e) => e.alias)])
  const out = new Map<string, { first: number; last: number }>()
  plan.body.forEach((s, k) => {
    const named = new Set<string>()
    forEachNested([s], (x) => {
      for (const e of stmtExprs(x)) reads(e, named)
    })
    const written = writtenNames(s)
    for (const n of written) named.add(n)
    for (const n of named) {
      if (!aliases.has(n)) continue
      const span = out.get(n)
      if (!span) out.set(n, { first: k, last: written.has(n) ? k : -1 })
      else if (written.has(n)) span.last = k
    }
  })
  return out
}

/**
 * The element aliases of a map body (\`elements\` and \`blockElements\`) whose values from before the
 * body nothing reads, so that the code generator need not load them: the first statement that
 * names one (see \`elementSpans\`) is a top-level SWAP of it with a scalar of the body that no
 * later statement names (a block Jacobian's stored entry, \`SWAP(J[o + c], d)\`: the old entry goes
 * into the dead derivative d). The scalar is the body's own (the planner admits no write of
 * another), allocated afresh in every iteration, so its value after the body is nobody's either.
 */
export function unreadElements(
  plan: MapLanesPlan,
  spans: ReadonlyMap<string, { first: number; last: number }>,
): Set<string> {
  const aliases = new Set([...plan.elements.map((e) => e.alias), ...plan.blockElements.map((e) => e.alias)])
  const out = new Set<string>()
  plan.body.forEach((s, k) => {
    // (the only calls a plan's body keeps are SWAPs: the others are inlined)
    if (s.kind !== 'callstmt' || s.args.length !== 2) return
    const [a, b] = s.args as [Arg, Arg]
    for (const [el, other] of [
      [a, b],
      [b, a],
    ] as const) {
      if (el.kind !== 'var' || other.kind !== 'var' || !aliases.has(el.name) || aliases.has(other.name)) continue
      if (other.name === el.name || other.name === plan.variable || spans.get(el.name)?.first !== k) continue
      let named = false
      forEachNested(plan.body.slice(k + 1), (x) => {
        for (const e of stmtExprs(x)) if (reads(e, new Set()).has(other.name)) named = true
      })
      if (!named) out.add(el.name)
    }
  })
  return out
}

/** A block element of a map-lanes plan (see \`MapLanesPlan.blockElements\`). */
export type BlockElement = MapLanesPlan['blockElements'][number]

/**
 * Pairs of adjacent elements \`array[offset + c]\` and \`array[offset + c + 1]\` of one block that
 * the code generator loads (and, written, stores) together: per block of the pair of iterations,
 * one v128 load of the two elements and a shuffle per element, in place of a load and a lane
 * insert per element and block (and one shuffle and one v128 store per block in place of an
 * extract and a store per element and block).
 *
 * A pair is loaded before the first statement that names either element and stored after the
 * last that writes either. That is the same as loading and storing each element at its own
 * statement (see \`elementSpans\`): the body reaches a block element only through its alias, the
 * blocks of the two iterations are their own (checked in range and apart before the loop), so no
 * statement in between reads or writes the memory of the element moved. Both elements must be
 * named by the body and both written or both only read; each element is in at most one pair,
 * taken in order of c.
 */
export function blockElementPairs(
  plan: MapLanesPlan,
  spans: ReadonlyMap<string, { first: number; last: number }>,
): Array<[BlockElement, BlockElement]> {
  const key = (el: { array: string; offset: string; c: number }) => `${el.array}|${el.offset}|${el.c}`
  const byKey = new Map(plan.blockElements.map((el) => [key(el), el]))
  const used = new Set<BlockElement>()
  const out: Array<[BlockElement, BlockElement]> = []
  const usable = (el: BlockElement) => {
    const span = spans.get(el.alias)
    return span !== undefined && (!el.written || span.last >= 0)
  }
  for (const el of [...plan.blockElements].sort((x, y) => x.c - y.c)) {
    if (used.has(el) || !usable(el)) continue
    const mate = byKey.get(key({ ...el, c: el.c + 1 }))
    if (!mate || used.has(mate) || !usable(mate) || mate.written !== el.written) continue
    used.add(el)
    used.add(mate)
    out.push([el, mate])
  }
  return out
}

/**
 * The loop-uniform names of a varying `while` of a map body (a counter such as the series' `k`):
 * the varying scalars that hold the same value in both lanes on every iteration of the loop, so
 * that the code generator keeps them in one scalar local while the loop runs (their arithmetic
 * once per pair, not an i64x2 sequence per lane) and only their final values, which differ
 * between lanes that leave the loop at different iterations, in the lanes.
 *
 * Inside a varying `while` every lane runs every top-level update without a blend (see the code
 * generator), so a name stays the same in both lanes while the loop runs when it is the same in
 * both at the loop's entry and every update of it reads only uniform values and loop-uniform
 * names. Here the entry value is the same by construction: the name is allocated from a uniform
 * value by a statement of the list that holds the loop, before it, and written nowhere else than
 * by updates at the loop body's top level (`@unchecked` blocks opened). Each execution of the loop
 * then follows that allocation, with nothing else writing the name in between.
 */
export function loopUniform(plan: MapLanesPlan, loop: Extract<Stmt, { kind: 'while' }>): Set<string> {
  // the statement list holding the loop
  let list: readonly Stmt[] | undefined
  const find = (body: readonly Stmt[]): void => {
    if (list) return
    if (body.includes(loop)) list = body
    else
      for (const s of body) {
        if (s.kind === 'if') {
          find(s.then)
          find(s.else)
        } else if (s.kind === 'while' || s.kind === 'for' || s.kind === 'unchecked') find(s.body)
      }
  }
  find(plan.body)
  if (!list) return new Set()
  // the updates at the top level of the loop body
  const top = new Map<string, Array<Extract<Stmt, { kind: 'update' }>>>()
  const collect = (body: readonly Stmt[]): void => {
    for (const s of body)
      if (s.kind === 'update' && s.target.kind === 'var') {
        const n = s.target.name
        top.set(n, [...(top.get(n) ?? []), s])
      } else if (s.kind === 'unchecked') collect(s.body)
  }
  collect(loop.body)
  const candidates = new Set<string>()
  for (const n of top.keys()) {
    const t = plan.varying.get(n)
    if ((t === 'f64' || t === 'i32') && n !== plan.variable && !plan.elements.some((e) => e.alias === n))
      candidates.add(n)
  }
  // the allocation: in the loop's list, before it, from a uniform value; the only one of the name
  const at = list.indexOf(loop)
  const allocs = new Map<string, number>()
  const topUpdates = new Set<Stmt>([...top.values()].flat())
  forEachNested(plan.body, (s) => {
    if (s.kind === 'alloc') allocs.set(s.name, (allocs.get(s.name) ?? 0) + 1)
    else if (s.kind === 'update' || s.kind === 'callstmt')
      for (const n of writtenNames(s)) if (candidates.has(n) && !topUpdates.has(s)) candidates.delete(n)
  })
  for (const n of [...candidates]) {
    const k = list.findIndex((s) => s.kind === 'alloc' && s.name === n)
    const alloc = list[k]
    if (
      allocs.get(n) !== 1 ||
      k < 0 ||
      k > at ||
      alloc?.kind !== 'alloc' ||
      alloc.value.kind === 'emptystack' ||
      readsVarying(alloc.value as Expr, plan.varying)
    )
      candidates.delete(n)
  }
  // the fixed point: an update reads only uniform values and loop-uniform names
  let changed = true
  while (changed) {
    changed = false
    for (const n of [...candidates])
      for (const u of top.get(n)!)
        for (const r of reads(u.value, new Set()))
          if (plan.varying.has(r) && !candidates.has(r)) {
            candidates.delete(n)
            changed = true
          }
  }
  return candidates
}

/**
 * A \`while\` body that pass \`unroll-swaps\` unrolled, as one iteration again (see \`IfStmt.exits\`):
 * in lanes the \`if\` between the two copies is on a varying condition, whose arms both run under
 * masks, so the unrolled loop does more work per iteration than it saves.
 */
function rolled(body: readonly Stmt[]): readonly Stmt[] {
  const last = body[body.length - 1]
  return last?.kind === 'if' && last.exits ? [...body.slice(0, -1), ...last.else] : body
}
