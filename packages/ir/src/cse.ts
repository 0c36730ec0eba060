/**
 * Common subexpressions of a straight-line run of updates, and array elements a loop can keep in
 * locals: analyses for the backends' code generators (cpu, wasm).
 *
 * Within a run of consecutive `y op= e` statements (with the bijection calls, scalar ancilla
 * allocations and deallocations between them, `@unchecked` blocks opened), an expression that occurs again before any
 * statement writes a variable or array it reads has the same value both times (expressions are
 * pure, and distinct names are distinct memory: the checker rejects aliased writes, and the
 * drivers never pass one array twice). A code generator computes it once (the cpu backend into a `const`, the wasm backend into a local). This is
 * what V8 cannot do by itself across stores into typed arrays (it cannot prove that two arrays
 * do not alias), and it is where reverse and forward-over-reverse programs repeat themselves: the
 * uncompute of `q += (x[a] - x[b]) ** 2` and its two gradient updates all read `x[a] - x[b]`,
 * and a tangent at width w repeats each partial derivative w times.
 */
import type { Arg, Expr, Stmt } from './ast.js'
import { readNames, rootName } from './check.js'
import { polynomial } from './passes/interchange.js'
import { exprChildren, stmtExprs } from './stmt-exprs.js'
import { type EnclosingLoop, nonzeroInLoops } from './loop-facts.js'

/** One shared value: the generated `const` once the first occurrence has been emitted. */
export interface Shared {
  temp?: string
  /**
   * On the element an `inout` argument of a bijection call names: the value the call stores
   * there, which later statements of the run read again (store-to-load forwarding: a backend that
   * keeps the stored value, `temp`, saves the load; one that does not loads it, as before).
   */
  stored?: Shared
  /**
   * On the target of an update (see `forwardUpdates` of `sharedSubexpressions`): the value its
   * element holds before the update, which the run already has (the value an earlier update
   * stored there, or an earlier load of the element).
   */
  loaded?: Shared
  /**
   * On the target of an update whose stored value is `stored` (see `forwardUpdates`), or on the
   * element an `inout` argument of a bijection call names whose stored value is `stored`: the
   * target of a later update of the same element in the run that starts from that value, or the
   * argument of a later bijection call that rewrites it, with no read of the element from memory
   * in between (every read of it takes the kept value, and nothing else reads the array where the
   * element may be, or may fail). The element's store is then dead: a code generator that starts
   * that later statement from the kept value (`loaded`, or the argument's shared value) skips it.
   */
  overwrittenBy?: Expr
}

type Update = Extract<Stmt, { kind: 'update' }>
type Bijection = Extract<Stmt, { kind: 'callstmt' }>
type Alloc = Extract<Stmt, { kind: 'alloc' }>
type Dealloc = Extract<Stmt, { kind: 'dealloc' }>
type Assert = Extract<Stmt, { kind: 'assert' }>
/** A statement of a run. */
export type RunStmt = Update | Bijection | Alloc | Dealloc | Assert

/** A statement of a block with the `@unchecked` blocks around it opened: how many there were. */
export interface Flat {
  s: Stmt
  unchecked: number
}

/**
 * The statements of `body` with its `@unchecked` blocks opened (recursively; they make no JS
 * scope), each with the number of `@unchecked` blocks it sat in.
 */
export function flatten(body: Stmt[], depth = 0, out: Flat[] = []): Flat[] {
  for (const s of body) {
    if (s.kind === 'unchecked') flatten(s.body, depth + 1, out)
    else out.push({ s, unchecked: depth })
  }
  return out
}

const scalarAlloc = (s: Alloc | Dealloc): boolean =>
  s.value.kind !== 'emptystack' && !(s.value.kind === 'call' && s.value.callee === 'zeros')

/**
 * Whether a statement belongs in a run: an update, a bijection call (`SWAP`, `ROT`, …) that only
 * writes its arguments, the allocation or deallocation of a scalar ancilla, or a run-time check
 * (an `assert` writes nothing; its condition shares with the statement it guards).
 */
export function inRun(s: Stmt): s is RunStmt {
  return (
    s.kind === 'update' ||
    s.kind === 'assert' ||
    (s.kind === 'callstmt' && s.target === 'bijection') ||
    ((s.kind === 'alloc' || s.kind === 'dealloc') && scalarAlloc(s))
  )
}

/** A structural key of an expression (kind, operator, type and children). */
export function key(e: Expr): string {
  switch (e.kind) {
    case 'num':
      // (-0 is not 0: 1.0 / -0.0 is -Infinity)
      return `${Object.is(e.value, -0) ? '-0' : e.value}${e.isFloat ? 'f' : ''}:${e.type ?? ''}`
    case 'bool':
      return String(e.value)
    case 'var':
      return `$${e.name}`
    case 'index':
      return `${e.array.name}[${key(e.index)}]:${e.type ?? ''}`
    case 'field':
      return `(${key(e.target)}).${e.field}`
    case 'unary':
      return `${e.op}(${key(e.arg)}):${e.type ?? ''}`
    case 'binary':
      return `(${key(e.left)} ${e.op} ${key(e.right)}):${e.type ?? ''}`
    case 'call':
      return `${e.callee}(${e.args.map(key).join(', ')}):${e.type ?? ''}`
  }
}

/** Whether an expression is worth a `const` (a load or arithmetic, not a name or literal). */
function candidate(e: Expr): boolean {
  switch (e.kind) {
    case 'index':
    case 'binary':
      return true
    case 'unary':
      return e.op === '-' && e.arg.kind !== 'num' && e.arg.kind !== 'var'
    case 'call':
      // (not a term recorded or replayed on the tape of pass \`replay-uncall\`: each call is one push or pop)
      return !e.callee.startsWith('$host') && e.callee !== 'len' && e.callee !== '$record' && e.callee !== '$replayed'
    default:
      return false
  }
}

/**
 * The pure values that a backend's lowering of a bijection call computes from the call's
 * arguments (ROT(a, b, θ) computes cos(θ) and sin(θ)), as expression nodes over the argument
 * expressions, the same nodes every time for the same statement: they take part in the value
 * numbering of their run as if the call read them before writing its arguments, so an update
 * next to the call that computes cos(θ) shares it with the call's lowering (see the cpu backend).
 * `writes[i]` false: the call never writes argument i (θ of ROT), whose values stay available
 * after it (absent: the call may write any argument).
 */
export type LoweredValues = (s: Bijection) => { values: readonly Expr[]; writes?: readonly boolean[] }

/**
 * For each statement of `run`, the nodes of its value to compute once: nodes that map to the
 * same `Shared` have the same value. Only values that occur at least twice are returned.
 *
 * Value numbering: a node's key is made of its operator, its type and the numbers of its
 * children, and a variable's or array's key carries the count of writes to it so far in the run.
 * A write therefore retires every expression that read the old value without a scan of them,
 * and keys stay short however deep the expression is: the whole run takes linear time.
 *
 * With `forwardUpdates`, an update of an f64 element `a[e] op= v` takes part too (store-to-load
 * forwarding of updates): its target's `Shared` has `stored` when a later statement of the run
 * reads `a[e]` before anything writes `a` or what e reads (the code generator keeps the value
 * the update stores, and that read is it), and `loaded` when the run already holds the old value
 * (an earlier update stored it, or an earlier statement loaded it). Distinct names are distinct
 * memory (see the module comment), so only writes to `a` itself end the forwarding, and a write
 * to `a[e']` keeps the value of `a[e]` where the indices provably differ: by a nonzero constant,
 * or (given `loops`, the loops around the run, outermost first) by `±x + c` where a loop's range
 * shows that x is not the one value that makes them equal (see `nonzeroInLoops`).
 */
export function sharedSubexpressions(
  run: RunStmt[],
  lowered?: LoweredValues,
  forwardUpdates = false,
  loops?: readonly EnclosingLoop[],
): Array<Map<Expr, Shared>> {
  interface Entry {
    shared: Shared
    count: number
  }
  const available = new Map<string, Entry>()
  const versions = new Map<string, number>()
  const numbers = new Map<string, number>()
  const perStmt: Array<Map<Expr, Entry>> = []
  const nameKey = (name: string) => `${name}#${versions.get(name) ?? 0}`
  const intern = (k: string): string => {
    let n = numbers.get(k)
    if (n === undefined) numbers.set(k, (n = numbers.size))
    return `@${n}`
  }
  const forwards: Array<[Entry, Entry]> = []
  /** A store of the run that a later statement may overwrite before anything reads it from memory. */
  interface Store {
    overwrittenBy?: Expr
  }
  // the updates of f64 elements (with \`forwardUpdates\`): where their old value comes from, and their new one
  const updates: Array<{
    node: Expr
    stmt: number
    loaded?: Entry | undefined
    stored?: Entry
    overwrittenBy?: Expr
  }> = []
  // (with \`forwardUpdates\`) the f64 elements of each array whose values the run holds, so that an
  // update of another, provably different element keeps them, and the updates of each array whose
  // stores nothing has read from memory yet (see \`Shared.overwrittenBy\`)
  interface TrackedElement {
    poly: Map<string, number> | undefined
    indexKey: string
    type: string
    entry: Entry
    /** The versions of the names its index reads, when it was tracked. */
    names: Array<[string, number]>
  }
  const elements = new Map<string, TrackedElement[]>()
  const pending = new Map<string, Array<{ element: TrackedElement; store: Store }>>()
  // (with \`forwardUpdates\`) the values bijection calls store that later statements read: the
  // load of the argument (whose \`Shared\` the code generator consults) and whether it is overwritten
  const callStores: Array<{ load: Entry; stored: Entry; store: Store }> = []
  const element = (index: Expr, type: string, entry: Entry): TrackedElement => ({
    poly: polynomial(index),
    indexKey: keys.get(index)!,
    type,
    entry,
    names: [...readNames(index)].map((n): [string, number] => [n, versions.get(n) ?? 0]),
  })
  const addPending = (array: string, el: TrackedElement, store: Store): void => {
    let list = pending.get(array)
    if (!list) pending.set(array, (list = []))
    list.push({ element: el, store })
  }
  const track = (array: string, index: Expr, type: string, entry: Entry): TrackedElement => {
    const el = element(index, type, entry)
    let list = elements.get(array)
    if (!list) elements.set(array, (list = []))
    list.push(el)
    return el
  }
  /** Whether a tracked element is provably not the element at \`index\` now (polynomial indices a nonzero constant apart). */
  const different = (el: TrackedElement, index: Expr): boolean => {
    const q = polynomial(index)
    if (!el.poly || !q || el.names.some(([n, v]) => (versions.get(n) ?? 0) !== v)) return false
    const d = new Map(el.poly)
    for (const [m, c] of q) d.set(m, (d.get(m) ?? 0) - c)
    const rest = [...d].filter(([, c]) => c !== 0)
    // (a constant difference: different elements unless it is a multiple of 2³², i32 indices wrap)
    if (rest.length === 1 && rest[0]![0] === '') return (rest[0]![1] | 0) !== 0
    // (a difference the enclosing loops' ranges prove nonzero: see \`nonzeroInLoops\`)
    return loops !== undefined && rest.length > 0 && nonzeroInLoops(new Map(rest), loops)
  }
  /** A read of \`array\` from memory (at \`index\`; anywhere when undefined): the pending stores it may read are needed. */
  const observe = (array: string, index?: Expr): void => {
    const list = pending.get(array)
    if (!list) return
    const left = index === undefined ? [] : list.filter((p) => different(p.element, index))
    if (left.length) pending.set(array, left)
    else pending.delete(array)
  }
  let keys = new Map<Expr, string>()
  for (const s of run) {
    // the keys of every node of the statement, children before parents (no recursion)
    keys = new Map<Expr, string>()
    const keyOf = (root: Expr): void => {
      const todo: Array<[Expr, boolean]> = [[root, false]]
      while (todo.length) {
        const [e, ready] = todo.pop()!
        if (keys.has(e)) continue
        if (!ready) {
          todo.push([e, true])
          for (const c of exprChildren(e)) if (!keys.has(c)) todo.push([c, false])
          continue
        }
        const t = `:${e.type ?? ''}`
        let k: string
        switch (e.kind) {
          case 'num':
            k = `${Object.is(e.value, -0) ? '-0' : e.value}${e.isFloat ? 'f' : ''}${t}`
            break
          case 'bool':
            k = String(e.value)
            break
          case 'var':
            k = `$${nameKey(e.name)}`
            break
          case 'index':
            k = `${nameKey(e.array.name)}[${keys.get(e.index)}]${t}`
            break
          case 'field':
            k = `(${keys.get(e.target)}).${e.field}`
            break
          case 'unary':
            k = `${e.op}(${keys.get(e.arg)})${t}`
            break
          case 'binary':
            k = `(${keys.get(e.left)} ${e.op} ${keys.get(e.right)})${t}`
            break
          case 'call':
            k = `${e.callee}(${e.args.map((a) => keys.get(a)).join(', ')})${t}`
            break
        }
        keys.set(e, intern(k))
      }
    }
    const nodes = new Map<Expr, Entry>()
    // pre-order, left to right; a node found again is not entered
    const visit = (root: Expr): void => {
      keyOf(root)
      const todo: Expr[] = [root]
      while (todo.length) {
        const e = todo.pop()!
        // the right operand of && and || is not always evaluated: nothing below them moves
        if (e.kind === 'binary' && (e.op === '&&' || e.op === '||')) {
          // (what they read is read from memory)
          if (forwardUpdates) for (const n of readNames(e)) observe(n)
          continue
        }
        if (candidate(e)) {
          const k = keys.get(e)!
          const hit = available.get(k)
          if (hit) {
            hit.count++
            nodes.set(e, hit)
            continue
          }
          const entry: Entry = { shared: {}, count: 1 }
          available.set(k, entry)
          nodes.set(e, entry)
          if (forwardUpdates && e.kind === 'index') {
            // a load from memory, which the run holds from now on
            observe(e.array.name, e.index)
            if (e.type === 'f64') track(e.array.name, e.index, e.type, entry)
          }
        }
        // a whole array read (an array primitive's argument) reads every element from memory
        if (forwardUpdates && e.kind === 'var') observe(e.name)
        const cs = exprChildren(e)
        for (let i = cs.length - 1; i >= 0; i--) todo.push(cs[i]!)
      }
    }
    // the index of an updated element is read too (for the load and the store)
    const visitAddress = (dv: Update['target']): void => {
      if (dv.kind === 'index') visit(dv.index)
      else if (dv.kind === 'neg' || dv.kind === 'field') visitAddress(dv.target as Update['target'])
    }
    // (a deallocation's value is only evaluated by its check: nothing of it is shared)
    let target: Extract<Expr, { kind: 'index' }> | undefined
    if (s.kind === 'update') {
      visitAddress(s.target)
      // store-to-load forwarding of updates: the old value of an f64 element this run already
      // holds (an earlier update stored it, or an earlier statement loaded it)
      const a = s.target
      if (forwardUpdates && a.kind === 'index' && a.type === 'f64' && !readNames(a.index).has(a.array.name)) {
        target = a
        const hit = available.get(elementKey(a))
        if (hit) hit.count++
        updates.push({ node: a, stmt: perStmt.length, loaded: hit })
        // the value a pending store of this element stored: that store is overwritten unread
        const list = pending.get(a.array.name)
        const same = hit && list?.find((p) => p.element.entry === hit)
        if (same) {
          same.store.overwrittenBy = a
          list!.splice(list!.indexOf(same), 1)
        } else if (!hit) observe(a.array.name, a.index)
      } else if (forwardUpdates) {
        // an element or variable read from memory before the update writes it
        const r = rootName(s.target)
        if (r !== undefined) observe(r)
      }
      visit(s.value)
    } else if (s.kind === 'alloc') visit(s.value as Expr)
    // (an assert's message arguments are evaluated only when it fails: nothing of them is shared)
    else if (s.kind === 'assert') visit(s.cond)
    if (forwardUpdates && s.kind !== 'update') {
      // a check may fail and leave the arrays to the caller, a deallocation's check reads its
      // value: their stores are needed; a bijection call reads an element argument as its visit
      // below finds it (from memory only where the run does not hold it), anything else of its
      // arguments (a negated or field view, the names of an index) from memory
      if (s.kind === 'assert') pending.clear()
      else if (s.kind === 'callstmt')
        for (const e of stmtExprs(s))
          for (const n of readNames(e.kind === 'index' && e.type === 'f64' ? e.index : e)) observe(n)
      else for (const e of stmtExprs(s)) for (const n of readNames(e)) observe(n)
    }
    const low = s.kind === 'callstmt' ? lowered?.(s) : undefined
    // the pure values its lowering computes from the arguments, before it writes any of them
    if (low) for (const e of low.values) visit(e)
    // a bijection reads its arguments (an element at its index) before it writes any of them
    if (s.kind === 'callstmt')
      for (const a of s.args) {
        if (a.kind === 'neg' || a.kind === 'field') visitAddress(a as Update['target'])
        else visit(a)
      }
    // an element the call rewrites that a pending store of the run stored, read from the value the
    // run holds (after every read of the call's arguments: one from memory kept the store): that
    // store is overwritten unread
    if (forwardUpdates && s.kind === 'callstmt')
      s.args.forEach((a, i) => {
        if (a.kind !== 'index' || a.type !== 'f64' || !low?.writes?.[i]) return
        const list = pending.get(a.array.name)
        const entry = nodes.get(a)
        const same = entry && list?.find((p) => p.element.entry === entry)
        if (!same) return
        same.store.overwrittenBy = a
        list!.splice(list!.indexOf(same), 1)
      })
    perStmt.push(nodes)
    // a bijection may write any of its arguments (nothing of it is shared); an allocation or
    // deallocation (re)binds its name; either way the name's next version starts
    // (an argument that is not a dataview is a value, never written)
    const written =
      s.kind === 'update'
        ? [rootName(s.target)]
        : s.kind === 'callstmt'
          ? s.args.map((a, i) => (low?.writes && !low.writes[i] ? undefined : rootName(a)))
          : s.kind === 'assert'
            ? []
            : [s.name]
    for (const w of written) if (w !== undefined) versions.set(w, (versions.get(w) ?? 0) + 1)
    if (forwardUpdates)
      for (const w of written) {
        if (w === undefined) continue
        // the elements of an array an update writes that are provably other elements keep their
        // values, under their keys at the array's new version; any other write ends them all
        const t = target
        const kept = t && w === t.array.name ? (elements.get(w) ?? []).filter((el) => different(el, t.index)) : []
        for (const el of kept) available.set(intern(`${nameKey(w)}[${el.indexKey}]:${el.type}`), el.entry)
        if (kept.length) elements.set(w, kept)
        else elements.delete(w)
      }
    if (s.kind === 'callstmt') forward(s, nodes, written)
    else if (target) {
      // the value the update stores, under the element's key at the array's new version
      const stored: Entry = { shared: {}, count: 1 }
      available.set(elementKey(target), stored)
      updates[updates.length - 1]!.stored = stored
      if (forwardUpdates)
        addPending(
          target.array.name,
          track(target.array.name, target.index, 'f64', stored),
          updates[updates.length - 1]!,
        )
    }
  }
  // store-to-load forwarding: an element a call stored and a later statement reads
  for (const [load, stored] of forwards)
    if (stored.count > 1) {
      load.shared.stored = stored.shared
      load.count = Math.max(load.count, 2)
    }
  for (const { load, stored, store } of callStores)
    if (stored.count > 1 && store.overwrittenBy) load.shared.overwrittenBy = store.overwrittenBy
  const outs = perStmt.map((nodes) => {
    const out = new Map<Expr, Shared>()
    for (const [e, entry] of nodes) if (entry.count > 1) out.set(e, entry.shared)
    return out
  })
  // an update's target: a node of its own (its old value and its new one)
  for (const u of updates) {
    const sh: Shared = {}
    if (u.stored && u.stored.count > 1) sh.stored = u.stored.shared
    if (sh.stored && u.overwrittenBy) sh.overwrittenBy = u.overwrittenBy
    if (u.loaded) sh.loaded = u.loaded.shared
    if (sh.stored || sh.loaded) outs[u.stmt]!.set(u.node, sh)
  }
  return outs

  /** The key of an f64 element `a[e]` at the current version of `a` (the keys of e are known). */
  function elementKey(a: Extract<Expr, { kind: 'index' }>): string {
    return intern(`${nameKey(a.array.name)}[${keys.get(a.index)}]:${a.type ?? ''}`)
  }
  /**
   * After a bijection call: each f64 element it writes holds the value it stored, under the
   * element's key at the new version of its array, where the index reads nothing the call wrote
   * and the elements it writes of that array are provably different (polynomial indices whose
   * difference is a nonzero constant).
   */
  function forward(s: Bijection, nodes: Map<Expr, Entry>, written: Array<string | undefined>): void {
    const outs = s.args.filter(
      (a, i): a is Extract<Expr, { kind: 'index' }> => a.kind === 'index' && written[i] !== undefined,
    )
    const changed = new Set(written.filter((w): w is string => w !== undefined))
    for (const a of outs) {
      if (a.type !== 'f64' || [...readNames(a.index)].some((n) => changed.has(n)) || !nodes.has(a)) continue
      const same = outs.filter((b) => b !== a && b.array.name === a.array.name)
      const pa = polynomial(a.index)
      if (
        !same.every((b) => {
          const pb = pa && polynomial(b.index)
          if (!pa || !pb) return false
          const d = new Map(pa)
          for (const [m, c] of pb) d.set(m, (d.get(m) ?? 0) - c)
          const rest = [...d].filter(([, c]) => c !== 0)
          return rest.length === 1 && rest[0]![0] === ''
        })
      )
        continue
      // the element's key at the array's new version (its index's keys are unchanged)
      const k = intern(`${nameKey(a.array.name)}[${keys.get(a.index)}]:${a.type ?? ''}`)
      const entry: Entry = { shared: {}, count: 1 }
      available.set(k, entry)
      forwards.push([nodes.get(a)!, entry])
      // (with \`forwardUpdates\`) a store that a later statement may overwrite unread
      if (forwardUpdates) {
        const store: Store = {}
        addPending(a.array.name, element(a.index, 'f64', entry), store)
        callStores.push({ load: nodes.get(a)!, stored: entry, store })
      }
    }
  }
}

/**
 * Walks the statements of a block in order for a code generator, with its `@unchecked` blocks
 * opened: `visit(s, unchecked, shared)` gets each statement, how many `@unchecked` blocks it sat
 * in, and, for a statement of a run, the common subexpressions it shares with the rest of its run
 * (see `sharedSubexpressions`; undefined outside runs). `lowered`: the values the backend's
 * lowering of a bijection call computes (see `LoweredValues`).
 * `forwardUpdates`: forward the values that updates of f64 elements store to later reads of
 * those elements in the run too (see `sharedSubexpressions`). `loops`: the loops around `body`,
 * outermost first, whose ranges may prove two indices different (see `nonzeroInLoops`).
 */
export function forEachStatement(
  body: Stmt[],
  visit: (s: Stmt, unchecked: number, shared: Map<Expr, Shared> | undefined) => void,
  lowered?: LoweredValues,
  forwardUpdates = false,
  loops?: readonly EnclosingLoop[],
): void {
  const flat = flatten(body)
  for (let i = 0; i < flat.length; ) {
    if (!inRun(flat[i]!.s)) {
      visit(flat[i]!.s, flat[i]!.unchecked, undefined)
      i++
      continue
    }
    let j = i
    while (j < flat.length && inRun(flat[j]!.s)) j++
    const maps = sharedSubexpressions(
      flat.slice(i, j).map((x) => x.s as RunStmt),
      lowered,
      forwardUpdates,
      loops,
    )
    for (let k = i; k < j; k++) visit(flat[k]!.s, flat[k]!.unchecked, maps[k - i])
    i = j
  }
}

/**
 * Adds to `out` the keys (`array[index]`) of the elements statement `s` accesses whenever it
 * runs: an update's target, the element reads of an update's or an allocation's value and of a
 * bijection's arguments outside the right operand of `&&` and `||`.
 */
function sureAccesses(s: Stmt, out: Set<string>): void {
  const reads = (root: Expr | Arg) => {
    const todo: Array<Expr | Arg> = [root]
    while (todo.length) {
      const e = todo.pop()!
      switch (e.kind) {
        case 'index':
          out.add(`${e.array.name}[${key(e.index)}]`)
          todo.push(e.index)
          break
        case 'field':
          todo.push(e.target)
          break
        case 'unary':
          todo.push(e.arg)
          break
        case 'neg':
          todo.push(e.target)
          break
        case 'binary':
          todo.push(e.left)
          if (e.op !== '&&' && e.op !== '||') todo.push(e.right)
          break
        case 'call':
          todo.push(...e.args)
          break
      }
    }
  }
  if (s.kind === 'update') {
    reads(s.target as Arg)
    reads(s.value)
  } else if (s.kind === 'alloc' && s.value.kind !== 'emptystack') reads(s.value)
  else if (s.kind === 'callstmt') for (const a of s.args) reads(a)
}

/**
 * What a backend's lowering of a bijection call does with one argument (see `promotableElements`):
 * writes it (`inout`), reads it, or neither (an `in` argument read only through tables).
 */
export type ArgumentUse = 'write' | 'read' | 'none'

/** An array element that a loop keeps in a local while it runs; `write`: stored back after the loop. */
export interface Promotion {
  name: string
  element: Extract<Expr, { kind: 'index' }>
  write: boolean
}

/**
 * An index as base + constant offset (the key of the base; a constant index has the empty base),
 * the offset reduced modulo 2³² to an i32 as index arithmetic wraps: two indices with the same
 * base and different offsets are different elements.
 */
export function offsetOf(e: Expr): [string, number] {
  const [base, c] = exactOffsetOf(e)
  // (reduced as i32 arithmetic reduces it: \`k - -2147483648\` and \`k + -2147483648\` are one element)
  return [base, c | 0]
}

function exactOffsetOf(e: Expr): [string, number] {
  if (e.kind === 'num' && Number.isInteger(e.value)) return ['', e.value]
  if (e.kind === 'binary' && e.op === '+') {
    if (e.right.kind === 'num' && Number.isInteger(e.right.value)) return [key(e.left), e.right.value]
    if (e.left.kind === 'num' && Number.isInteger(e.left.value)) return [key(e.right), e.left.value]
  }
  if (e.kind === 'binary' && e.op === '-' && e.right.kind === 'num' && Number.isInteger(e.right.value))
    return [key(e.left), -e.right.value]
  return [key(e), 0]
}

/** Whether an index is made of variables, integer literals and `+`, `-`, `*` only (it calls nothing, and cannot fail). */
function plainIndex(e: Expr): boolean {
  if (e.kind === 'var') return true
  if (e.kind === 'num') return Number.isInteger(e.value)
  if (e.kind === 'binary')
    return (e.op === '+' || e.op === '-' || e.op === '*') && plainIndex(e.left) && plainIndex(e.right)
  return false
}

/**
 * Array elements of a loop that can live in locals while it runs (scalar promotion): in a loop
 * body made of updates, bijection calls (each may write every dataview argument) and scalar
 * ancillas only (`@unchecked` blocks opened), the elements of an
 * array that the body touches only through elements whose indices read neither the loop variable
 * nor anything the body writes. An array the body writes qualifies when its elements are provably
 * different (one base index plus distinct constant offsets, as in the w directions `t[i·w + k]`
 * of a tangent): the accumulation `q[e] += …` of an inner loop then runs in registers instead of
 * through memory (V8 must otherwise assume that the stores may alias the other arrays' loads). Of
 * an array the body only reads, the elements with such indices are loaded once before the loop.
 *
 * With `branches`, the body may also hold `if` statements of such statements (their conditions
 * read, their branches walked): an element then qualifies only where a statement outside every
 * branch accesses it, so that the loop reads it on every iteration anyway (a written array: all
 * its elements so, or none). The loop that accumulates `q[e] += (x[a + j] − x[b + j]) ** 2` and
 * adds to a tangent's unit-seeded direction under `if 0 <= a + j − o && …` keeps `q[e]` in a
 * local. A backend whose out-of-range access traps (wasm) should not ask: an element read before
 * a loop that runs zero times is not read by the program.
 *
 * With `arguments`, what a bijection call does with each argument as the backend lowers it:
 * `'write'` (an `inout` one), `'read'` (an `in` one that the lowering reads), `'none'` (an `in` one
 * that it never reads: θ of a ROT whose cos θ and sin θ tables hold, see the `tabulate` pass);
 * without it, or where it gives undefined, every argument may be written. An element that the
 * loop only passes as `in` arguments then stays an element it only reads (loaded once before the
 * loop, never stored back), and one it never reads is not loaded at all.
 *
 * With `asserts` (run-time checks on), the body may also hold `assert` statements, in branches
 * too: they write nothing, and what they read counts as read (an assert that reads an array
 * whole, `$zeros(a, n)` or `$apart(a, b)`, rules the array out; `$inrange(i, len(a))` reads `i`
 * and the length only). With `anyBranch`, an element qualifies even where only branches access
 * it: for a backend whose load before the loop cannot fail (the cpu backend: an index out of
 * range reads `undefined`, and the store after the loop drops it) and whose store after the
 * loop puts back the value loaded where no iteration wrote it. Its index is then one of
 * variables, literals and integer `+`, `-`, `*` only (evaluated once more, before the loop, it
 * calls nothing).
 */
export function promotableElements(
  loopVariable: string,
  body: Stmt[],
  options: {
    branches?: boolean
    arguments?: (s: Bijection) => readonly ArgumentUse[] | undefined
    asserts?: boolean
    anyBranch?: boolean
  } = {},
): Promotion[] {
  // every statement, those in branches included, and the `if` conditions, read
  const flat: Stmt[] = []
  const conditions: Expr[] = []
  // keys (`array[index]`) of the elements that a statement outside every branch accesses
  const sure = new Set<string>()
  const branches = options.branches === true
  const allowed = (s: Stmt): boolean =>
    s.kind === 'update' ||
    (s.kind === 'callstmt' && s.target === 'bijection') ||
    ((s.kind === 'alloc' || s.kind === 'dealloc') && scalarAlloc(s))
  // (with \`asserts\`: the asserts' expressions, read)
  const checked: Expr[] = []
  const collect = (stmts: Stmt[], top: boolean): boolean => {
    for (const { s } of flatten(stmts)) {
      if (s.kind === 'assert' && options.asserts) {
        checked.push(s.cond, ...s.args.filter((a): a is Expr => typeof a !== 'string'))
        continue
      }
      if (s.kind === 'if' && branches) {
        conditions.push(s.pre)
        if (s.post) conditions.push(s.post)
        if (!collect(s.then, false) || !collect(s.else, false)) return false
        continue
      }
      if (!allowed(s)) return false
      flat.push(s)
      if (top) sureAccesses(s, sure)
    }
    return true
  }
  if (!collect(body, true) || flat.length === 0) return []
  const written = new Set<string>([loopVariable])
  const isView = (a: Arg): a is Update['target'] =>
    a.kind === 'var' || a.kind === 'index' || a.kind === 'field' || a.kind === 'neg'
  const uses = new Map<Stmt, readonly ArgumentUse[] | undefined>()
  for (const s of flat) if (s.kind === 'callstmt') uses.set(s, options.arguments?.(s))
  for (const s of flat) {
    if (s.kind === 'callstmt') {
      // a bijection may write any of its dataview arguments (where its lowering is not known, its
      // `in` ones are counted too)
      const use = uses.get(s)
      for (const [i, a] of (s as Bijection).args.entries()) {
        if (!isView(a) || (use && use[i] !== 'write')) continue
        const r = rootName(a)
        if (r === undefined) return []
        written.add(r)
      }
      continue
    }
    if (s.kind !== 'update') {
      written.add((s as Alloc).name)
      continue
    }
    const r = rootName(s.target)
    if (r === undefined) return []
    written.add(r)
  }
  // every element of each array the body uses, by key ('' for a use that is not an element)
  const elements = new Map<string, Map<string, Extract<Expr, { kind: 'index' }>>>()
  const bare = new Set<string>()
  const visit = (e: Expr): void => {
    switch (e.kind) {
      case 'var':
        bare.add(e.name)
        break
      case 'index': {
        let u = elements.get(e.array.name)
        if (!u) elements.set(e.array.name, (u = new Map()))
        u.set(key(e.index), e)
        visit(e.index)
        break
      }
      case 'field':
        visit(e.target)
        break
      case 'unary':
        visit(e.arg)
        break
      case 'binary':
        visit(e.left)
        visit(e.right)
        break
      case 'call':
        // (an array's length is not a use of its elements)
        if (e.callee !== 'len') for (const a of e.args) visit(a)
        break
    }
  }
  const visitTarget = (dv: Update['target']): void => {
    switch (dv.kind) {
      case 'neg':
        visitTarget(dv.target)
        break
      case 'var':
        bare.add(dv.name)
        break
      case 'index':
        visit(dv)
        break
      default:
        bare.add(rootName(dv) ?? '')
    }
  }
  for (const c of conditions) visit(c)
  for (const c of checked) visit(c)
  for (const s of flat) {
    if (s.kind === 'update') {
      visitTarget(s.target)
      visit(s.value)
    } else if (s.kind === 'alloc') visit(s.value as Expr)
    else if (s.kind === 'callstmt') {
      const c = s as Bijection
      const use = uses.get(s)
      for (const [i, a] of c.args.entries()) {
        // (an argument the lowering never reads is no use; its index is evaluated by nobody)
        if (use?.[i] === 'none') continue
        if (isView(a)) visitTarget(a)
        else visit(a)
      }
      for (const t of c.tabulated ?? []) visit(t.read)
    }
  }
  const out: Promotion[] = []
  for (const [name, els] of elements) {
    const all = [...els.values()]
    const invariant = (e: Extract<Expr, { kind: 'index' }>) =>
      e.type !== 'bool' && ![...readNames(e.index)].some((n) => written.has(n))
    const write = written.has(name)
    // (with branches: only elements the loop accesses on every iteration)
    const every = (e: Extract<Expr, { kind: 'index' }>) =>
      !branches || sure.has(`${name}[${key(e.index)}]`) || (options.anyBranch === true && plainIndex(e.index))
    // an array the body writes: all its elements or none; one it only reads: its invariant ones
    const list = write ? all : all.filter((e) => invariant(e) && every(e))
    if (write && !list.every(every)) continue
    if (bare.has(name) || !list.every(invariant)) continue
    if (write && list.length > 1) {
      const parts = list.map((e) => offsetOf(e.index))
      if (new Set(parts.map((p) => p[0])).size !== 1 || new Set(parts.map((p) => p[1])).size !== parts.length) continue
    }
    for (const element of list) out.push({ name, element, write })
  }
  return out
}
