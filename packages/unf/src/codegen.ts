/**
 * Code generation: a lambda-free target term (what partial evaluation leaves) → one JS function
 * built with `new Function`. Tuples are flattened into locals (no allocation), arrays of reals
 * are Float64Arrays, arrays of tuples are tuples of arrays, arrays of arrays are JS arrays of
 * Float64Arrays; `map`/`reduce`/`fold`/`scan`/`mapAccum` become loops, scalar lets become
 * `const` locals. Every name in the generated code is generated (`p0`, `t12`, `f3`): no source
 * string reaches the code, so none can inject any.
 */
import { UnfError } from './errors.js'
import { BOOL_OPS, BUILTIN_OPS, type OpTable } from './ops.js'
import { fastExp } from './fast-exp.js'
import { fastTanh } from './fast-tanh.js'
import { inPlaceMaps, trimmedScans } from './in-place-maps.js'
import { hoistInvariants } from './hoist.js'
import {
  alignedMapOverScan,
  blockedLast,
  blockedView,
  emitBlockedScanl,
  fixUpBlockedScan,
  usedOnlyInScope,
  type BlockedScan,
} from './blocked-scans.js'
import { bidirectionalMap, bidirectionalPair } from './bidirectional-scans.js'
import { scanRead, scannedArray, type ScanRead } from './exclusive-scans.js'
import { selectFold, selectJs } from './select-folds.js'
import { pushNegations } from './push-negation.js'
import { shareScans } from './share-scans.js'
import { children, freeVars, type Term } from './term.js'
import { arrayType, B, R, tupleType, printType, type Type } from './types.js'

const BUILTIN_EXP = BUILTIN_OPS.get('exp')
const BUILTIN_TANH = BUILTIN_OPS.get('tanh')

/** Marks an allocation whose elements are all written before they are read. */
const FILL = '/*fill*/'
/** Marks a zero array (accumulated into in place): reusable like a filled one, cleared on reuse. */
const ZERO = '/*zero*/'

/**
 * Buffer reuse: an array the generated code fills completely and only ever reads by index (or
 * through a shifted view read by index) never escapes the call or the loop iteration that made
 * it, so its storage is kept by the compiled function and reused by the next call or iteration
 * (reallocated when the length changes). Everything else is a fresh allocation.
 */
function reuseBuffers(source: string, reuseResults = false): string {
  const rows = reuseRows(source)
  source = rows.source
  const decl = /^( *)const ([oz]\d+) = new Float64Array\(([^;]*)\) \/\*(fill|zero)\*\/;/gm
  let k = rows.next
  return source
    .replace(decl, (whole, indent: string, name: string, size: string, kind: string) => {
      // with `reuseResults`, an array allocated once per call (outside every loop) may escape
      // into the result: the next call overwrites it
      const once = reuseResults && indent.length === 2
      if (!once && !onlyIndexed(source, name)) return whole.replace(` /*${kind}*/`, '')
      const b = `bufs[${k++}]`
      const decl = `${indent}const ${name} = ${b} !== undefined && ${b}.length === ${size} ? ${b} : (${b} = new Float64Array(${size}));`
      if (kind !== 'zero') return decl
      // a zero is cleared: a short one by a loop (inlined; \`fill\` is a call, which costs more than
      // a few stores in a loop over data points), a long one by \`fill\`
      const q = `z${name.slice(1)}q`
      return `${decl}\n${indent}if (${name}.length > 16) ${name}.fill(0); else for (let ${q} = 0; ${q} < ${name}.length; ${q}++) ${name}[${q}] = 0;`
    })
    .replaceAll(` ${FILL}`, '')
    .replaceAll(` ${ZERO}`, '')
}

/**
 * Each top-level loop that contains other loops becomes an arrow function called at once. V8
 * optimises a long first call's loop on the stack (OSR) before the code after the loop has run;
 * that code then deoptimises the cached loop code on every later call (seen on the GMM gradient:
 * hundreds of deoptimisations, 2–3× slower). In a function of its own, nothing follows the loop.
 * The loop's counter is declared in its header; what it reads and writes outside are the
 * function's locals (arrays, and the few accumulators of the outer loop).
 */
function outlineOuterLoops(source: string): string {
  const lines = source.split('\n')
  const out: string[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^ {2}for \(let .*\{$/.test(lines[i]!)) {
      out.push(lines[i]!)
      continue
    }
    let end = i + 1
    while (end < lines.length && lines[end] !== '  }') end++
    const loop = lines.slice(i, end + 1)
    if (loop.slice(1).some((l) => /\bfor \(/.test(l))) out.push('  (() => {', ...loop.map((l) => `  ${l}`), '  })();')
    else out.push(...loop)
    i = end
  }
  return out.join('\n')
}

/** Marks an array of rows (arrays of reals) that a loop fills, one row per element. */
const ROWS = '/*rows*/'

/**
 * Buffer reuse for arrays of rows: an array of rows whose uses are stores of rows the loop has
 * just filled (`o[j] = r`), reads of rows that are themselves only indexed, and its length, keeps
 * its storage and its rows across calls and iterations: each row is refilled in place. Returns
 * the source and the next free buffer index.
 */
function reuseRows(source: string): { source: string; next: number } {
  const decl = /^( *)const (o\d+) = new Array\(([^;]*)\) \/\*rows\*\/;/gm
  let k = 0
  const edits: Array<[string | RegExp, string]> = []
  for (const m of source.matchAll(decl)) {
    const [whole, indent, name, size] = m as unknown as [string, string, string, string]
    const rest = source.replace(whole, '')
    const stores: Array<{ row: string; at: string }> = []
    let ok = true
    for (const u of rest.matchAll(new RegExp(`\\b${name}\\b`, 'g'))) {
      const after = rest.slice(u.index! + name.length)
      const before = rest.slice(Math.max(0, u.index! - 40), u.index!)
      const store = /^\[(\w+)\] = (o\d+);/.exec(after)
      if (store) {
        stores.push({ row: store[2]!, at: store[1]! })
        continue
      }
      const read = /const (e\d+) = $/.exec(before)
      if (read && /^\[\w+\];/.test(after) && onlyIndexed(source.replace(`const ${read[1]!} = `, ''), read[1]!)) continue
      if (after.startsWith('.length')) continue
      ok = false
      break
    }
    const rowDecl = (row: string) =>
      new RegExp(`const ${row} = new Float64Array\\(([^;]*)\\) \\/\\*fill\\*\\/;`).exec(source)
    ok &&=
      stores.length > 0 &&
      stores.every(
        ({ row, at }) => rowDecl(row) !== null && onlyIndexed(source.replace(`${name}[${at}] = ${row};`, ''), row),
      )
    if (!ok) continue
    const b = `bufs[${k++}]`
    edits.push([
      whole,
      `${indent}const ${name} = ${b} !== undefined && ${b}.length === ${size} ? ${b} : (${b} = new Array(${size}));`,
    ])
    for (const { row, at } of stores) {
      const d = rowDecl(row)!
      const r = `${name}[${at}]`
      edits.push([
        d[0],
        `const ${row} = ${r} !== undefined && ${r}.length === ${d[1]} ? ${r} : (${r} = new Float64Array(${d[1]}));`,
      ])
      // the row is in place already (taken from there, or stored there when allocated): the store
      // after the loop would only write it again (a store of an object into a JS array, with its
      // write barrier, per element)
      edits.push([new RegExp(`^ *${r.replace(/[[\]]/g, '\\$&')} = ${row};\n`, 'm'), ''])
    }
  }
  for (const [from, to] of edits) source = source.replace(from, to)
  return { source: source.replaceAll(` ${ROWS}`, ''), next: k }
}

/** Whether every use of `name` is `name[…]`, `name.length`, or a shifted view that is itself only indexed. */
function onlyIndexed(source: string, name: string): boolean {
  const view = new RegExp(
    `const (t\\d+) = ${name}\\.subarray \\? ${name}\\.subarray\\([^)]*\\) : ${name}\\.slice\\([^)]*\\);`,
    'g',
  )
  const views = [...source.matchAll(view)].map((m) => m[1]!)
  const rest = source.replace(view, '').replace(new RegExp(`const ${name} = new Float64Array\\([^;]*;`), '')
  const uses = (n: string) => [...rest.matchAll(new RegExp(`\\b${n}\\b(.?)`, 'g'))]
  const ok = (n: string) =>
    uses(n).every((m) => m[1] === '[' || rest.slice(m.index! + n.length, m.index! + n.length + 7) === '.length')
  return ok(name) && views.every(ok)
}

/** The marker of a zero whose shape is not known statically (a lazily allocated accumulator). */
const SHAPELESS = '/*shapeless zero*/null'

/** A compile-time value: a JS local or literal per leaf, tuples as lists. */
type CV = string | CV[]
interface TV {
  v: CV
  t: Type
}

/** The generated function and its source (for inspection and tests). */
export interface GeneratedFunction {
  /** the compiled function: arguments in parameter order, result as `toHost` would give it */
  fn: (...args: unknown[]) => unknown
  /** the JS source of the function body */
  source: string
}

/**
 * Compiles a lambda-free term over typed parameters into a JS function. With `reuseResults`,
 * arrays of reals allocated once per call are kept by the function and reused by the next call,
 * also when they are part of the result (which the next call then overwrites).
 * `bidirectionalScans: false` turns off the fusion of a map's scanl and scanr into one loop
 * (`bidirectional-scans.ts`; for comparisons).
 */
export function generate(
  term: Term,
  params: Array<{ name: string; type: Type }>,
  ops: OpTable,
  options: { reuseResults?: boolean; fastExp?: boolean; fastTanh?: boolean; bidirectionalScans?: boolean } = {},
): GeneratedFunction {
  const g = new Gen(ops)
  g.fastExp = options.fastExp ?? true
  g.fastTanh = options.fastTanh ?? true
  g.bidirectionalScans = options.bidirectionalScans ?? true
  const env = new Map<string, TV>()
  const argNames = params.map((_, i) => `p${i}`)
  params.forEach((p, i) => {
    g.checkArg(argNames[i]!, p.type, i)
    env.set(p.name, { v: g.unpack(argNames[i]!, p.type), t: p.type })
  })
  const final = shareScans(hoistInvariants(pushNegations(term)))
  g.inPlace = inPlaceMaps(final)
  g.trimScans = trimmedScans(final)
  const r = g.emit(final, env)
  g.line(`return ${g.pack(r.v, r.t)};`)
  const source = outlineOuterLoops(reuseBuffers(g.lines.join('\n'), options.reuseResults))
  if (source.includes(SHAPELESS))
    throw new UnfError('unf/internal', 'code generation: a zero array without a known shape is used')
  const factory = new Function(
    'fns',
    'err',
    'shapeErr',
    'bufs',
    'fexp',
    'ftanh',
    `return function unfGenerated(${argNames.join(', ')}) {\n${source}\n}`,
  ) as (
    fns: Array<(...a: number[]) => number>,
    err: (i: number, what: string) => never,
    shapeErr: (what: string) => never,
    bufs: Float64Array[],
    fexp: (x: number) => number,
    ftanh: (x: number) => number,
  ) => (...args: unknown[]) => unknown
  const inner = factory(
    g.fns,
    (i, what) => {
      throw new UnfError('unf/shape', `argument ${i + 1}: ${what}`)
    },
    (what) => {
      throw new UnfError('unf/shape', what)
    },
    [],
    fastExp,
    fastTanh,
  )
  return { fn: withFeedbackWarmUp(inner, params, argNames), source }
}

/** How many calls on truncated arguments precede the first call (see {@link withFeedbackWarmUp}). */
const WARM_UP_CALLS = 12
/** The length each array of the arguments is cut to for those calls. */
const WARM_UP_LENGTH = 17

/**
 * The generated function behind an entry that, on its first call, first calls it
 * {@link WARM_UP_CALLS} times on the arguments cut short: every array (at every level) to its
 * first {@link WARM_UP_LENGTH} elements, copies of the same kinds (`slice`). V8 gives a function
 * its type feedback only after several calls (lazy feedback allocation), so a long first call
 * optimises its first loop on the stack (OSR) before the code after that loop has any feedback;
 * that OSR code deoptimises where it reaches that code, on every later call too (the cached OSR
 * code is entered again from the interpreter, thousands of calls in a row where it was traced):
 * seen on the `unf` workload's prod and logsumexp, value and gradient alike, 5–15× slower, in
 * some processes and not others (whether the background compiler finishes within the first
 * call). After short calls every part of the function that short arrays reach (unrolled loops,
 * their remainders, the blocked scans with four non-empty blocks, the `fill` of zeros longer than
 * 16) has its feedback first. A short call that throws (arguments of other shapes than the
 * program takes, whose real call then reports the error) ends the warm-up; the outlined outer
 * loops (`outlineOuterLoops`) remain for what short arrays do not reach.
 */
function withFeedbackWarmUp(
  inner: (...args: unknown[]) => unknown,
  params: Array<{ name: string; type: Type }>,
  argNames: string[],
): (...args: unknown[]) => unknown {
  const warmUp = (...args: unknown[]) => {
    try {
      const cut = { any: false }
      const short = args.map((a, i) => (i < params.length ? cutShort(a, params[i]!.type, cut) : a))
      // (no array longer than the cut: the short runs would be the real call again, calling the
      // program's primitives 13 times as often — review 18e — for feedback a short call gives)
      if (!cut.any) return
      for (let k = 0; k < WARM_UP_CALLS; k++) inner(...short)
    } catch {
      // the real call reports what is wrong with the arguments
    }
  }
  const names = argNames.join(', ')
  return new Function(
    'inner',
    'warmUp',
    `let cold = true;\nreturn function unfEntry(${names}) {\n  if (cold) {\n    cold = false;\n    warmUp(${names});\n  }\n  return inner(${names});\n}`,
  )(inner, warmUp) as (...args: unknown[]) => unknown
}

/**
 * An argument with each of its arrays cut to its first {@link WARM_UP_LENGTH} elements (copies, as
 * typed: a typed array or a plain array of numbers, which the generated code accepts for the rows
 * of an \`R[][]\` — review 18e: left whole, the short runs went over whole rows); \`cut.any\` is set
 * where an array was longer.
 */
function cutShort(x: unknown, t: Type, cut: { any: boolean }): unknown {
  if (t.kind === 'array') {
    if (!Array.isArray(x) && !(x instanceof Float64Array)) return x
    if (x.length > WARM_UP_LENGTH) cut.any = true
    // `slice` keeps the array's elements kind (packed or holey), so the feedback sees its map
    const s = x.slice(0, WARM_UP_LENGTH)
    if (t.elem.kind !== 'R') for (let i = 0; i < s.length; i++) (s as unknown[])[i] = cutShort(s[i], t.elem, cut)
    return s
  }
  if (t.kind === 'tuple' && Array.isArray(x)) {
    const s = x.slice()
    for (let i = 0; i < Math.min(s.length, t.items.length); i++) s[i] = cutShort(s[i], t.items[i]!, cut)
    return s
  }
  return x
}

class Gen {
  lines: string[] = []
  fns: Array<(...a: number[]) => number> = []
  /** the built-in `exp` as `fexp` (`fast-exp.ts`, inlined by V8) instead of `Math.exp` */
  fastExp = true
  /** the built-in `tanh` as `ftanh` (`fast-tanh.ts`, inlined by V8) instead of `Math.tanh` */
  fastTanh = true
  /** a map over a scanl and a scanr runs both in one loop (`bidirectional-scans.ts`) */
  bidirectionalScans = true
  /** maps that may write their result into one of their arrays (`in-place-maps.ts`) */
  inPlace = new Map<Term, number>()
  /** stored scans whose last state is not stored (`trimmedScans`, in-place-maps.ts) */
  trimScans = new Set<Term>()
  /** locals holding arrays of reals allocated for a map's result or a scan's states (what an in-place map may overwrite) */
  mapArrays = new Set<string>()
  /** the blocked scans whose arrays lack their last state, by local (kept after their fix-up) */
  private trimmed = new Map<string, BlockedScan>()
  private fnIndex = new Map<string, number>()
  private n = 0
  private depth = 1
  private messages: string[] = []
  /** the length of each array the code allocates for a loop's output (a local or an expression over locals) */
  lengths = new Map<string, string>()
  /** locals holding freshly allocated zero arrays nobody else references yet */
  fresh_ = new Set<string>()
  /**
   * A map about to be emitted and the reductions of its result found in the let's scope, which
   * the map's loop computes too (`let t = map f A in … reduce (+) 0 t …`: one pass, not two).
   */
  private pending: { map: Term; reductions: Reduction[] } | undefined
  /** the reductions computed by a map's loop: the map's output local → reduction key → local */
  private fusedReductions = new Map<string, Map<string, string>>()
  /** stored scans emitted in blocks whose states are not yet combined with their offsets (`blocked-scans.ts`) */
  blockedScans = new Map<string, BlockedScan>()
  constructor(private readonly ops: OpTable) {}

  /** The value of `let name = value in body`, a map computing the reductions of itself in body. */
  private bindValue(name: string, value: Term, body: Term, env: ReadonlyMap<string, TV>): TV {
    const scanOp = value.k === 'scanl' ? associativeOp(value) : undefined
    if (value.k === 'scanl' && scanOp && usedOnlyInScope(body, name)) {
      const blocked = emitBlockedScanl(this, value, scanOp, env, this.trimScans.has(value))
      if (blocked) {
        this.blockedScans.set(blocked.scan.states, blocked.scan)
        this.mapArrays.add(blocked.scan.states)
        if (blocked.scan.trimmed) this.trimmed.set(blocked.scan.states, blocked.scan)
        return blocked.value
      }
    }
    if (value.k === 'map') {
      const reductions = reductionsOf(name, body)
      if (reductions.length > 0) this.pending = { map: value, reductions }
    }
    try {
      return this.emit(value, env)
    } finally {
      this.pending = undefined
    }
  }

  /**
   * The array a map marked in place writes its result into, when it is one a map or a stored
   * scan of ours allocated: B itself, or S for `shift1R S` when S's array lacks its last state
   * (then it has the map's length).
   */
  inPlaceOutput(x: Term, env: ReadonlyMap<string, TV>, elem: Type): string | undefined {
    const at = this.inPlace.get(x)
    if (at === undefined || elem.kind !== 'R' || x.k !== 'map') return undefined
    const a = x.arrays[at]!
    const shifted = a.k === 'shift1R'
    const inner = shifted ? a.array : a
    const b = inner.k === 'var' ? env.get(inner.name) : undefined
    if (typeof b?.v !== 'string' || !this.mapArrays.has(b.v)) return undefined
    return this.trimmed.has(b.v) === shifted ? b.v : undefined
  }

  fresh(base = 't'): string {
    return `${base}${++this.n}`
  }
  line(s: string) {
    this.lines.push('  '.repeat(this.depth) + s)
  }
  indent<T>(f: () => T): T {
    this.depth++
    try {
      return f()
    } finally {
      this.depth--
    }
  }

  /** A run-time input check (only fixed messages: the type text is printed from our own types). */
  checkArg(name: string, t: Type, i: number) {
    const what = (msg: string) => {
      this.messages.push(msg)
      return JSON.stringify(msg)
    }
    if (t.kind === 'R')
      this.line(`if (typeof ${name} !== 'number') err(${i}, ${what(`expected a number (${printType(t)})`)});`)
    else if (t.kind === 'array' && t.elem.kind === 'R')
      this.line(`if (!(${name} instanceof Float64Array)) err(${i}, ${what('expected a Float64Array (R[])')});`)
    else if (t.kind === 'array' || t.kind === 'tuple')
      this.line(`if (!Array.isArray(${name})) err(${i}, ${what(`expected an array for ${printType(t)}`)});`)
  }

  /** The CV of a host argument: tuples (JS arrays) are split into locals; arrays of tuples into arrays per component. */
  unpack(name: string, t: Type): CV {
    if (t.kind === 'tuple')
      return t.items.map((it, i) => {
        const l = this.fresh()
        this.line(`const ${l} = ${name}[${i}];`)
        return this.unpack(l, it)
      })
    if (t.kind === 'array' && t.elem.kind === 'tuple')
      throw new UnfError('unf/unsupported', 'arrays of tuples as arguments: pass one array per component')
    return name
  }

  /** The host value of a CV: tuples become JS arrays. */
  pack(v: CV, t: Type): string {
    if (typeof v === 'string') return v
    const items = (leafTuple(t) as { items: Type[] }).items
    return `[${v.map((x, i) => this.pack(x, items[i]!)).join(', ')}]`
  }

  local(expr: string, base = 't'): string {
    const l = this.fresh(base)
    this.line(`const ${l} = ${expr};`)
    return l
  }

  emit(x: Term, env: ReadonlyMap<string, TV>): TV {
    switch (x.k) {
      case 'const':
        return {
          v: Number.isFinite(x.value)
            ? x.value < 0 || Object.is(x.value, -0)
              ? `(${x.value})`
              : String(x.value)
            : x.value > 0
              ? 'Infinity'
              : x.value < 0
                ? '(-Infinity)'
                : 'NaN',
          t: R,
        }
      case 'bool':
        return { v: String(x.value), t: B }
      case 'var': {
        const b = env.get(x.name)
        if (!b) throw new UnfError('unf/unbound', `code generation: unbound variable \`${x.name}\``)
        const blocked = typeof b.v === 'string' ? this.blockedScans.get(b.v) : undefined
        if (blocked) {
          // read as an array: its states made true first, once (blocked-scans.ts)
          fixUpBlockedScan(this, blocked)
          this.blockedScans.delete(blocked.states)
        }
        return b
      }
      case 'let': {
        const val = this.bindValue(x.name, x.value, x.body, env)
        for (const l of leaves(val.v)) this.fresh_.delete(l) // a bound value may be read again: not ours to mutate
        return this.emit(x.body, new Map(env).set(x.name, val))
      }
      case 'tuple': {
        const items = x.items.map((i) => this.emit(i, env))
        return { v: items.map((i) => i.v), t: tupleType(...items.map((i) => i.t)) }
      }
      case 'proj': {
        const of = this.emit(x.of, env)
        const t = leafTuple(of.t) as { items: Type[] }
        return { v: (of.v as CV[])[x.index]!, t: t.items[x.index]! }
      }
      case 'op': {
        const args = x.args.map((a) => this.emit(a, env).v as string)
        const b = BOOL_OPS.get(x.op)
        if (b) return { v: this.local(b.js(...args), 'b'), t: B }
        const o = this.ops.get(x.op)
        if (this.fastExp && o === BUILTIN_EXP) return { v: this.local(`fexp(${args[0]!})`), t: R }
        if (this.fastTanh && o === BUILTIN_TANH) return { v: this.local(`ftanh(${args[0]!})`), t: R }
        if (o.js) return { v: this.local(o.js(...args)), t: o.result }
        return {
          v: this.local(`${this.fnRef(o.name, o.evaluate as (...a: number[]) => number)}(${args.join(', ')})`),
          t: o.result,
        }
      }
      case 'if': {
        const cond = this.emit(x.cond, env).v as string
        const outs: string[] = []
        let type: Type = R
        const assign = (r: TV) => {
          leaves(r.v).forEach((l, i) => this.line(`${outs[i]} = ${l};`))
        }
        // the result's shape is known after emitting a branch: emit `then` into a buffer first
        const saved = this.lines
        this.lines = []
        const thenR = this.indent(() => this.emit(x.then, env))
        type = thenR.t
        for (let i = 0; i < leaves(thenR.v).length; i++) outs.push(this.fresh('r'))
        this.indent(() => assign(thenR))
        const thenLines = this.lines
        this.lines = saved
        this.line(`let ${outs.join(', ')};`)
        this.line(`if (${cond}) {`)
        this.lines.push(...thenLines)
        this.line('} else {')
        this.indent(() => assign(this.emit(x.else, env)))
        this.line('}')
        return { v: rebuild(thenR.v, outs), t: type }
      }
      case 'map': {
        const reductions = this.pending?.map === x ? this.pending.reductions : []
        this.pending = undefined
        const keep = keptArrays(x.params, x.body, x.arrays)
        // an array kept only for its length (a user variable whose element the body never reads)
        // has no element read in the loop
        const reads = freeVars(x.body)
        // one scan among the arrays is not materialised: its states are produced by the map's
        // own loop, run in the scan's direction (map–scan fusion)
        // (or an exclusive scan, `shift1R (scanl …)` / `shift1L (scanr …)`: exclusive-scans.ts)
        // a scanl and a scanr among the arrays: one loop from both ends (bidirectional-scans.ts)
        const pair = this.bidirectionalScans ? bidirectionalPair(x, keep, reads) : undefined
        if (pair) {
          const fused = bidirectionalMap(this, x, env, keep, reads, pair)
          if (fused) return fused
        }
        const scanAt = x.arrays.findIndex((a, i) => keep.includes(i) && scanRead(a) !== undefined)
        if (scanAt >= 0 && associativeOp(scanRead(x.arrays[scanAt]!)!.scan)) {
          const blocked = this.blockedMapOverScan(x, env, keep, scanAt)
          if (blocked) return blocked
        }
        const arrays = x.arrays.map((a, i) =>
          !keep.includes(i) ? undefined : i === scanAt ? this.scanSource(scanRead(a)!, env) : this.source(a, env),
        )
        const n = this.sourceLength(arrays.filter((a): a is Source => a !== undefined))
        const j = this.fresh('j')
        const saved = this.lines
        this.lines = []
        const body = this.indent(() =>
          this.indent(() => {
            const e = new Map(env)
            x.params.forEach((p, i) => {
              if (arrays[i] && reads.has(p)) e.set(p, arrays[i]!.elem(j))
            })
            return this.emit(x.body, e)
          }),
        )
        const bodyLines = this.lines
        this.lines = saved
        const out = (scanAt < 0 ? this.inPlaceOutput(x, env, body.t) : undefined) ?? this.allocate(arrayType(body.t), n)
        if (body.t.kind === 'R' && typeof out === 'string') this.mapArrays.add(out)
        const scan = scanAt >= 0 ? arrays[scanAt]! : undefined
        if (!scan && !bodyLines.some((l) => /\bfor \(/.test(l))) {
          // a loop-free body is unrolled by four (its elements are independent); the reductions
          // of the result later in its scope are computed in the same loop (four partial
          // results each, grouped as `unrolledReduce` groups them)
          const fused = body.t.kind === 'R' ? reductions : []
          const accs = fused.map((r) => {
            const a = [0, 1, 2, 3].map(() => this.fresh('acc'))
            const unit = r.op === '+' ? '0' : '1'
            this.line(`let ${a[0]} = ${constJs(r.init)}, ${a[1]} = ${unit}, ${a[2]} = ${unit}, ${a[3]} = ${unit};`)
            return a
          })
          const element = (at: string, k: number) => {
            const e = new Map(env)
            x.params.forEach((p, i) => {
              if (arrays[i] && reads.has(p)) e.set(p, arrays[i]!.elem(at))
            })
            const r = this.emit(x.body, e).v
            this.store(out, r, at)
            fused.forEach((f, q) => this.line(`${accs[q]![k]} = ${accs[q]![k]} ${f.op} ${r as string};`))
          }
          this.line(`let ${j} = 0;`)
          this.line(`for (; ${j} + 3 < ${n}; ${j} += 4) {`)
          this.indent(() => {
            for (let k = 0; k < 4; k++) element(k === 0 ? j : `${j} + ${k}`, k)
          })
          this.line('}')
          this.line(`for (; ${j} < ${n}; ${j}++) {`)
          this.indent(() => element(j, 0))
          this.line('}')
          if (fused.length > 0) {
            const results = new Map<string, string>()
            fused.forEach((f, q) => {
              const a = accs[q]!
              results.set(reductionKey(f), this.local(`(${a[0]} ${f.op} ${a[1]}) ${f.op} (${a[2]} ${f.op} ${a[3]})`))
            })
            this.fusedReductions.set(out as string, results)
          }
          return { v: out, t: arrayType(body.t) }
        }
        this.line(
          scan?.dir === 'R'
            ? `for (let ${j} = ${n} - 1; ${j} >= 0; ${j}--) {`
            : `for (let ${j} = 0; ${j} < ${n}; ${j}++) {`,
        )
        this.lines.push(...bodyLines)
        this.indent(() => {
          this.store(out, body.v, j)
          scan?.advance?.(j)
        })
        this.line('}')
        return { v: out, t: arrayType(body.t) }
      }
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr': {
        if (x.k === 'reduce') {
          const op = associativeOp(x)
          const of = x.array.k === 'var' ? env.get(x.array.name) : undefined
          if (op && x.init.k === 'const' && typeof of?.v === 'string') {
            const r = this.fusedReductions.get(of.v)?.get(reductionKey({ op, init: x.init.value }))
            if (r) return { v: r, t: R } // computed by the loop of the map it reduces
          }
          const u = this.unrolledReduce(x, env)
          if (u) return u
        }
        if (x.k === 'fold' && selectFold(x)) {
          // a maximum or minimum: a reduction (select-folds.ts)
          const u = this.unrolledReduce(x, env)
          if (u) return u
        }
        const init = this.emit(x.init, env)
        const arr = this.source(x.array, env)
        const n = this.sourceLength([arr])
        const acc = leaves(init.v).map((l) => {
          const a = this.fresh('acc')
          this.line(`let ${a} = ${l};`)
          return a
        })
        const accCV = rebuild(init.v, acc)
        const scan = x.k === 'scanl' || x.k === 'scanr'
        let states: CV = ''
        if (scan) {
          states = this.allocate(arrayType(init.t), `${n} + 1`)
          this.store(states, accCV, x.k === 'scanl' ? '0' : n)
        }
        const j = this.fresh('j')
        const loop =
          x.k === 'scanr'
            ? `for (let ${j} = ${n} - 1; ${j} >= 0; ${j}--) {`
            : `for (let ${j} = 0; ${j} < ${n}; ${j}++) {`
        this.line(loop)
        this.indent(() => {
          const e = new Map(env).set(x.acc, { v: accCV, t: init.t }).set(x.elem, arr.elem(j))
          const r = this.emit(x.body, e)
          this.assignAll(acc, leaves(r.v))
          if (scan) this.store(states, accCV, x.k === 'scanl' ? `${j} + 1` : j)
        })
        this.line('}')
        return scan ? { v: states, t: arrayType(init.t) } : { v: accCV, t: init.t }
      }
      case 'shift1L':
      case 'shift1R': {
        const a = this.emit(x.array, env)
        // the first m states of a scan whose array holds only those
        if (x.k === 'shift1R' && typeof a.v === 'string' && this.trimmed.has(a.v)) return a
        const v = mapLeaves(a.v, (l) =>
          this.local(
            x.k === 'shift1L'
              ? `${l}.subarray ? ${l}.subarray(1) : ${l}.slice(1)`
              : `${l}.subarray ? ${l}.subarray(0, ${l}.length - 1) : ${l}.slice(0, -1)`,
          ),
        )
        return { v, t: a.t }
      }
      case 'pad1L':
      case 'pad1R': {
        const a = this.emit(x.array, env)
        const elemLeaves = leafTypes((a.t as { elem: Type }).elem)
        const v = mapLeaves(a.v, (l, i) => {
          const out = this.fresh('pad')
          if (elemLeaves[i]!.kind === 'R') {
            this.line(`const ${out} = new Float64Array(${l}.length + 1);`)
            this.line(`${out}.set(${l}, ${x.k === 'pad1L' ? 1 : 0});`)
          } else {
            const z = this.zeroLikeExpr(`${l}[0]`, elemLeaves[i]!)
            this.line(`const ${out} = ${x.k === 'pad1L' ? `[${z}, ...${l}]` : `[...${l}, ${z}]`};`)
          }
          return out
        })
        return { v, t: a.t }
      }
      case 'prefix': {
        // a view of the first |L| elements (a loop reads the array itself, see `source`)
        const a = this.emit(x.array, env)
        const n = this.prefixLength(x, a, env)
        const v = mapLeaves(a.v, (l) => this.local(`${l}.subarray ? ${l}.subarray(0, ${n}) : ${l}.slice(0, ${n})`))
        return { v, t: a.t }
      }
      case 'padTo': {
        const c = this.emit(x.array, env)
        const len = this.source(x.len, env).length
        const elemLeaves = leafTypes((c.t as { elem: Type }).elem)
        const v = mapLeaves(c.v, (l, i) => {
          this.line(`if (${l}.length > ${len}) shapeErr('padding an array to a shorter length');`)
          if (elemLeaves[i]!.kind === 'R') {
            const out = this.local(`new Float64Array(${len})`, 'pad')
            this.line(`${out}.set(${l});`)
            return out
          }
          // zeros shaped like the padded-to array's elements, one per missing element
          const like = firstLeaf(this.emit(x.len, env).v)
          const z = this.zeroLikeExpr('q', elemLeaves[i]!)
          return this.local(`[...${l}, ...${like}.slice(${l}.length).map((q) => ${z})]`, 'pad')
        })
        return { v, t: c.t }
      }
      case 'first':
      case 'last': {
        const bound = x.k === 'last' && x.array.k === 'var' ? env.get(x.array.name)?.v : undefined
        const blocked =
          typeof bound === 'string' ? (this.blockedScans.get(bound) ?? this.trimmed.get(bound)) : undefined
        if (blocked) return { v: blockedLast(this, blocked), t: R }
        const a = this.emit(x.array, env)
        const idx = (l: string) => (x.k === 'first' ? '0' : `${l}.length - 1`)
        return { v: mapLeaves(a.v, (l) => this.local(`${l}[${idx(l)}]`)), t: (a.t as { elem: Type }).elem }
      }
      case 'zero': {
        if (!x.like) return { v: SHAPELESS, t: x.type } // only a mapAccum sum accepts it
        const like = this.emit(x.like, env)
        if (x.type.kind === 'array' && x.type.elem.kind === 'R') {
          const z = this.local(`new Float64Array(${firstLeaf(like.v)}.length) ${ZERO}`, 'z')
          this.fresh_.add(z)
          return { v: z, t: x.type }
        }
        const lt = leafTypes(like.t)
        const v = mapLeaves(like.v, (l, i) => {
          const z = this.local(this.zeroLikeExpr(l, lt[i]!))
          // a zero array of arrays is fresh to its rows (each row allocated here): owned like a flat one
          if (lt[i]!.kind === 'array') this.fresh_.add(z)
          return z
        })
        return { v, t: x.type }
      }
      case 'add': {
        const a = this.emit(x.a, env),
          b = this.emit(x.b, env)
        const lt = leafTypes(a.t)
        const bl = leaves(b.v)
        return { v: mapLeaves(a.v, (l, i) => this.addLeaf(l, bl[i]!, lt[i]!)), t: a.t }
      }
      case 'mapAccum':
        return this.mapAccum(x, env)
      case 'lam':
      case 'app':
        throw new UnfError('unf/internal', 'code generation needs a lambda-free term (run partialEvaluate first)')
    }
  }

  /**
   * A sweep. `dest` (output index → accumulator) makes an output add into an accumulator of the
   * enclosing sweep instead of being stored (destination passing: a per-element gradient that is
   * only summed is never materialised).
   */
  private mapAccum(
    x: Extract<Term, { k: 'mapAccum' }>,
    env: ReadonlyMap<string, TV>,
    destIn: ReadonlyMap<number, { acc: string; elem: Type }> = new Map(),
    sumDest: ReadonlyMap<number, string> = new Map(),
  ): TV {
    // an accumulator given as an element of an enclosing one (`s[j]`) is looked up once, not per element
    const dest = new Map(
      [...destIn].map(([k, d]) => [k, /^\w+$/.test(d.acc) ? d : { ...d, acc: this.local(d.acc, 'row') }]),
    )
    const carry0 = this.emit(x.carryInit, env)
    // a sum from zero that an enclosing sweep only adds into its accumulator is that accumulator
    // (destination passing of a sum: no zero array, no pass that adds it)
    const routed = new Map<number, string>()
    const sum0 = sumDest.size === 0 ? this.emit(x.sumInit, env) : this.routedSums(x.sumInit, env, sumDest, routed)
    const keep = keptArrays(x.params, x.body, x.arrays)
    const arrays = x.arrays.map((a, i) => (keep.includes(i) ? this.source(a, env) : undefined))
    const n = this.sourceLength(arrays.filter((a): a is Source => a !== undefined))
    const carry = leaves(carry0.v).map((l) => {
      const c = this.fresh('c')
      this.line(`let ${c} = ${l};`)
      return c
    })
    const sumTypes = leafTypes(sum0.t)
    // sums are owned accumulators: a copy of the initial value, added to in place
    const sums = leaves(sum0.v).map((l, i) => {
      const r = routed.get(i)
      if (r !== undefined) return r
      const s = this.fresh('s')
      if (l === SHAPELESS)
        this.line(`let ${s} = null;`) // allocated from the first contribution
      else if (this.fresh_.has(l)) {
        this.fresh_.delete(l)
        return l
      } // a fresh zero array is owned already
      else this.line(sumTypes[i]!.kind === 'R' ? `let ${s} = ${l};` : `const ${s} = ${this.copyExpr(l, sumTypes[i]!)};`)
      return s
    })
    const lazy = leaves(sum0.v).map((l) => l === SHAPELESS)
    const j = this.fresh('j')
    const saved = this.lines
    this.lines = []
    // sums given as a tuple literal are accumulated term by term, so that a `map` term adds into
    // the accumulator in place (no per-element array)
    let deferred: { terms: Array<Term | undefined>; env: ReadonlyMap<string, TV> } | undefined
    let destTerms: { terms: Map<number, Term>; env: ReadonlyMap<string, TV>; handled: Set<number> } | undefined
    const sumsFlat =
      leaves(sum0.v).length === sumTypes.length &&
      (sum0.t.kind !== 'tuple' || sum0.t.items.length === sumTypes.length) &&
      !lazy.some(Boolean)
    const body = this.indent(() =>
      this.indent(() => {
        let e: ReadonlyMap<string, TV> = new Map(env).set(x.carry, { v: rebuild(carry0.v, carry), t: carry0.t })
        const reads = freeVars(x.body)
        x.params.forEach((p, i) => {
          if (arrays[i] && reads.has(p)) (e as Map<string, TV>).set(p, arrays[i]!.elem(j))
        })
        let b = x.body
        const final = finalOf(b)
        const st = final.k === 'tuple' && final.items.length === 3 ? final.items[1] : undefined
        const useDeferred = st?.k === 'tuple' && st.items.length === sumTypes.length && sumsFlat
        const sumItems: Array<Term | undefined> = useDeferred ? [...(st as { items: Term[] }).items] : []
        // outputs of ours that add into an enclosing accumulator (destination passing)
        const outFinal = final.k === 'tuple' && final.items[2]?.k === 'tuple' ? final.items[2].items : []
        const destItems: Array<Term | undefined> = outFinal.map((t, k) => (dest.has(k) ? t : undefined))
        const handledDest = new Set<number>()
        /** the parts of sweep `name` that t adds: `π_k (π₃ name)` (outputs) and `π_i (π₂ name)` (sums) */
        const partsOf = (t: Term | undefined, name: string): Array<{ out: boolean; index: number }> | undefined => {
          if (!t) return undefined
          if (t.k === 'add') {
            const a = partsOf(t.a, name),
              c = partsOf(t.b, name)
            return a && c ? [...a, ...c] : undefined
          }
          if (t.k !== 'proj' || t.of.k !== 'proj' || t.of.of.k !== 'var' || t.of.of.name !== name) return undefined
          if (t.of.index === 2) return [{ out: true, index: t.index }]
          return t.of.index === 1 ? [{ out: false, index: t.index }] : undefined
        }
        while (b.k === 'let') {
          // an inner sweep whose outputs are only accumulated here adds them into the accumulators directly
          const inner = new Map<number, { acc: string; elem: Type }>()
          const innerSums = new Map<number, string>()
          if (useDeferred && b.value.k === 'mapAccum') {
            const name = b.name
            const rest = b.body
            const sweep = b.value
            // a sum of the inner sweep can be routed when it starts from zero (every sum does, one leaf each)
            const zeroSums =
              sweep.sumInit.k === 'tuple' &&
              sweep.sumInit.items.every((z) => z.k === 'zero' && z.like && leafTypes(z.type).length === 1)
            const picks = [
              ...sumItems.map((t, i) => ({
                parts: partsOf(t, name),
                type: sumTypes[i]!,
                acc: sums[i]!,
                done: () => {
                  sumItems[i] = undefined
                },
              })),
              ...destItems.map((t, k) => ({
                parts: partsOf(t, name),
                type: dest.get(k)?.elem ?? R,
                acc: dest.has(k) ? `${dest.get(k)!.acc}[${j}]` : '',
                done: () => {
                  handledDest.add(k)
                },
              })),
            ].filter(
              (q) =>
                q.parts !== undefined &&
                q.type.kind === 'array' &&
                (q.parts.every((p) => p.out) || (zeroSums && leafTypes(q.type).length === 1)),
            )
            const all = picks.flatMap((q) => q.parts!)
            const outs = all.filter((p) => p.out).map((p) => p.index)
            const sumParts = all.filter((p) => !p.out).map((p) => p.index)
            if (
              picks.length > 0 &&
              new Set(outs).size === outs.length &&
              new Set(sumParts).size === sumParts.length &&
              outs.every((k) => countOutUse(rest, name, k) === 1) &&
              sumParts.every((i) => countPartUse(rest, name, 1, i) === 1) &&
              !bareUse(rest, name)
            ) {
              for (const q of picks) {
                for (const p of q.parts!) {
                  if (p.out) inner.set(p.index, { acc: q.acc, elem: (q.type as { elem: Type }).elem })
                  else innerSums.set(p.index, q.acc)
                }
                q.done()
              }
            }
          }
          const val =
            b.value.k === 'mapAccum' && (inner.size > 0 || innerSums.size > 0)
              ? this.mapAccum(b.value, e, inner, innerSums)
              : this.bindValue(b.name, b.value, b.body, e)
          e = new Map(e).set(b.name, val)
          b = b.body
        }
        if (useDeferred && b.k === 'tuple') {
          const c = this.emit(b.items[0]!, e)
          const outItems = b.items[2]!
          let o: TV
          if (dest.size > 0 && outItems.k === 'tuple') {
            const terms = new Map<number, Term>()
            const vs = outItems.items.map((t, k) => {
              if (dest.has(k)) {
                terms.set(k, t)
                return { v: [] as CV, t: dest.get(k)!.elem }
              }
              return this.emit(t, e)
            })
            destTerms = { terms, env: e, handled: handledDest }
            o = { v: vs.map((q) => q.v), t: tupleType(...vs.map((q) => q.t)) }
          } else o = this.emit(outItems, e)
          deferred = { terms: sumItems, env: e }
          return { v: [c.v, [], o.v], t: tupleType(c.t, sum0.t, o.t) }
        }
        if (dest.size > 0)
          throw new UnfError('unf/internal', 'code generation: destination passing into a sweep of unexpected shape')
        return this.emit(b, e)
      }),
    )
    const bodyLines = this.lines
    this.lines = saved
    const [cOut, sOut, oOut] = body.v as CV[]
    const outTypes = ((leafTuple(body.t) as { items: Type[] }).items[2] as { items: Type[] }).items
    const outs = (oOut as CV[]).map((o, i) =>
      dest.has(i) ? dest.get(i)!.acc : this.allocate(arrayType(outTypes[i]!), n),
    )
    this.line(
      x.dir === 'R' ? `for (let ${j} = ${n} - 1; ${j} >= 0; ${j}--) {` : `for (let ${j} = 0; ${j} < ${n}; ${j}++) {`,
    )
    this.lines.push(...bodyLines)
    this.indent(() => {
      if (deferred) {
        const d = deferred
        d.terms.forEach((t, i) => {
          if (!t) return // added by an inner sweep
          if (sumTypes[i]!.kind === 'R') this.line(`${sums[i]} += ${this.emit(t, d.env).v as string};`)
          else this.accumulateTerm(sums[i]!, t, d.env)
        })
      } else
        leaves(sOut!).forEach((l, i) => {
          if (sumTypes[i]!.kind === 'R') this.line(`${sums[i]} += ${l};`)
          else if (lazy[i]) {
            this.line(`if (${sums[i]} === null) ${sums[i]} = ${this.copyExpr(l, sumTypes[i]!)}; else {`)
            this.indent(() => this.accumulate(sums[i]!, l, sumTypes[i]!))
            this.line('}')
          } else this.accumulate(sums[i]!, l, sumTypes[i]!)
        })
      ;(oOut as CV[]).forEach((o, i) => {
        if (!dest.has(i)) {
          this.store(outs[i]! as CV, o, j)
          return
        }
        if (destTerms!.handled.has(i)) return // added by an inner sweep
        const term = destTerms!.terms.get(i)!
        const d = dest.get(i)!
        if (d.elem.kind === 'R') this.line(`${d.acc}[${j}] += ${this.emit(term, destTerms!.env).v as string};`)
        else this.accumulateTerm(this.local(`${d.acc}[${j}]`, 'row'), term, destTerms!.env)
      })
      this.assignAll(carry, leaves(cOut!))
    })
    this.line('}')
    const resultType = tupleType(carry0.t, sum0.t, tupleType(...outTypes.map((t) => arrayType(t))))
    return { v: [rebuild(carry0.v, carry), rebuild(sum0.v, sums), outs], t: resultType }
  }

  /**
   * The initial sums of a sweep some of whose sums (`sumDest`: sum index → accumulator) are an
   * enclosing sweep's accumulator: each starts from zero (checked by the caller), so the
   * accumulator is used as it is, after a check that the shapes agree; `routed` gets leaf → local.
   */
  private routedSums(
    init: Term,
    env: ReadonlyMap<string, TV>,
    sumDest: ReadonlyMap<number, string>,
    routed: Map<number, string>,
  ): TV {
    const items = (init as Extract<Term, { k: 'tuple' }>).items.map((z, i) => {
      const acc = sumDest.get(i)
      if (acc === undefined) return this.emit(z, env)
      const zero = z as Extract<Term, { k: 'zero' }>
      const like = this.emit(zero.like!, env)
      const a = /^\w+$/.test(acc) ? acc : this.local(acc, 'row')
      this.line(`if (${firstLeaf(like.v)}.length !== ${a}.length) shapeErr('adding arrays of different lengths');`)
      routed.set(i, a)
      return { v: a, t: zero.type }
    })
    return { v: items.map((q) => q.v), t: tupleType(...items.map((q) => q.t)) }
  }

  /** Parallel assignment `targets := values` (a value may name another target). */
  private assignAll(targets: string[], values: string[]) {
    const clash = values.some((v, i) => targets.includes(v) && targets[i] !== v)
    if (!clash) {
      values.forEach((v, i) => {
        if (targets[i] !== v) this.line(`${targets[i]} = ${v};`)
      })
      return
    }
    const tmps = values.map((v) => this.local(v, 'tmp'))
    tmps.forEach((t, i) => this.line(`${targets[i]} = ${t};`))
  }

  private fnRef(name: string, f: (...a: number[]) => number): string {
    let i = this.fnIndex.get(name)
    if (i === undefined) {
      i = this.fns.length
      this.fns.push(f)
      this.fnIndex.set(name, i)
    }
    return `fns[${i}]`
  }

  /**
   * An array read element by element by a loop. A `map` term is not materialised: its body is
   * evaluated inside the consumer's loop (fusion of `reduce f z (map g A)` and `map f (map g A)`).
   * A map's body runs once per element of the consumer, which reads each element once.
   */
  source(a: Term, env: ReadonlyMap<string, TV>): Source {
    if (a.k === 'map') {
      const keep = keptArrays(a.params, a.body, a.arrays)
      // a map over a scanl and a scanr: computed by one loop from both ends into its array
      // (bidirectional-scans.ts), which is then read by index, where the two scans' states were
      const pair = this.bidirectionalScans ? bidirectionalPair(a, keep, freeVars(a.body)) : undefined
      const fused = pair ? bidirectionalMap(this, a, env, keep, freeVars(a.body), pair) : undefined
      if (fused) {
        const out = fused.v as string
        return { length: this.lengths.get(out)!, elem: (j) => this.element(fused, j) }
      }
      const inner = a.arrays.map((b, i) => (keep.includes(i) ? this.source(b, env) : undefined))
      const length = this.sourceLength(inner.filter((b): b is Source => b !== undefined))
      const reads = freeVars(a.body)
      return {
        length,
        elem: (j) => {
          const e = new Map(env)
          a.params.forEach((p, i) => {
            if (inner[i] && reads.has(p)) e.set(p, inner[i]!.elem(j))
          })
          return this.emit(a.body, e)
        },
      }
    }
    if (a.k === 'add') {
      // a sum of two arrays read by index: added element by element, never stored
      const l = this.source(a.a, env),
        r = this.source(a.b, env)
      if (l.dir || r.dir) throw new UnfError('unf/internal', 'code generation: a scan inside a sum')
      this.line(`if (${r.length} !== ${l.length}) shapeErr('adding arrays of different lengths');`)
      return {
        length: l.length,
        elem: (j) => {
          const x = l.elem(j),
            y = r.elem(j)
          if (x.t.kind !== 'R') return { v: this.addLeaf(x.v as string, y.v as string, x.t), t: x.t }
          return { v: this.local(`${x.v as string} + ${y.v as string}`), t: R }
        },
      }
    }
    if (a.k === 'prefix') {
      // a prefix read by index: the array itself, over the prefix's length (no view); a prefix
      // of a map evaluates the map's body for the prefix's elements only, in the reading loop
      if (a.array.k === 'map') {
        const inner = this.source(a.array, env)
        const length = this.source(a.len, env).length
        this.line(`if (${length} > ${inner.length}) shapeErr('a prefix longer than its array');`)
        return { length, elem: inner.elem }
      }
      const inner = this.emit(a.array, env)
      const length = this.prefixLength(a, inner, env)
      return { length, elem: (j) => this.element(inner, j) }
    }
    if (a.k === 'shift1L' || a.k === 'shift1R') {
      // a shifted array read by index: an offset into the array, no view
      const inner = this.emit(a.array, env)
      const trimmed = a.k === 'shift1R' && typeof inner.v === 'string' ? this.trimmed.get(inner.v) : undefined
      if (trimmed) return { length: trimmed.m, elem: (j) => this.element(inner, j) } // its array is the view
      // (the length of a view: an empty array stays empty)
      const length = this.local(`${firstLeaf(inner.v)}.length > 0 ? ${firstLeaf(inner.v)}.length - 1 : 0`, 'n')
      return { length, elem: (j) => this.element(inner, a.k === 'shift1L' ? `${j} + 1` : j) }
    }
    const v = arrayOfTuples(this.emit(a, env))
    if (v.t.kind !== 'array')
      throw new UnfError('unf/type', `code generation: expected an array, got ${printType(v.t)}`)
    // an array this code allocated has a length known as a local: no property read (a read of
    // `.length` after a long loop is what V8's on-stack-replaced code of that loop lacks type
    // feedback for, and deoptimises on, call after call)
    const known = this.lengths.get(firstLeaf(v.v))
    return { length: known ?? this.local(`${firstLeaf(v.v)}.length`, 'n'), elem: (j) => this.element(v, j) }
  }

  /**
   * `reduce (+)` and `reduce (·)` over loop-free elements: four partial results, so that the
   * additions (or multiplications) of successive elements do not wait for each other. The
   * paper's `reduce` takes an associative operator (its rule for the gradient relies on it), so
   * any grouping is its meaning; the result differs from a left-to-right loop by rounding only.
   */
  private unrolledReduce(x: ScanTerm, env: ReadonlyMap<string, TV>): TV | undefined {
    // ⊕ is + or ·, or the selection of a maximum or minimum (select-folds.ts)
    const sel = selectFold(x)
    const op = associativeOp(x)
    if (!sel && !op) return undefined
    const step = sel ? (a: string, e: string) => selectJs(sel, a, e) : (a: string, e: string) => `${a} ${op} ${e}`
    const unit = sel ? sel.unit : op === '+' ? '0' : '1'
    const saved = this.lines
    const pending = new Map(this.blockedScans) // fix-ups in discarded lines are undone with them
    this.lines = []
    const init = this.emit(x.init, env)
    const arr = this.source(x.array, env)
    const n = this.sourceLength([arr])
    const setup = this.lines
    // the element's code must be loop-free (it is emitted five times)
    this.lines = []
    const probe = arr.elem('0')
    const loopFree = !this.lines.some((l) => /\bfor \(/.test(l)) && init.t.kind === 'R' && probe.t.kind === 'R'
    this.lines = saved
    if (!loopFree) {
      this.blockedScans = pending
      return undefined
    }
    this.lines.push(...setup)
    const a = [this.fresh('acc'), this.fresh('acc'), this.fresh('acc'), this.fresh('acc')]
    this.line(`let ${a[0]} = ${init.v as string}, ${a[1]} = ${unit}, ${a[2]} = ${unit}, ${a[3]} = ${unit};`)
    const j = this.fresh('j')
    this.line(`let ${j} = 0;`)
    this.line(`for (; ${j} + 3 < ${n}; ${j} += 4) {`)
    this.indent(() => {
      for (let k = 0; k < 4; k++) {
        const e = arr.elem(k === 0 ? j : `${j} + ${k}`).v as string
        this.line(`${a[k]} = ${step(a[k]!, e)};`)
      }
    })
    this.line('}')
    this.line(`for (; ${j} < ${n}; ${j}++) {`)
    this.indent(() => {
      const e = arr.elem(j).v as string
      this.line(`${a[0]} = ${step(a[0]!, e)};`)
    })
    this.line('}')
    if (sel) return { v: this.local(step(this.local(step(a[0]!, a[1]!)), this.local(step(a[2]!, a[3]!)))), t: R }
    return { v: this.local(`(${a[0]} ${op} ${a[1]}) ${op} (${a[2]} ${op} ${a[3]})`), t: R }
  }

  /**
   * `map f (scan ⊕ z A) …` with ⊕ one of + and ·, f and the elements loop-free: the map's loop
   * runs four blocks of indices at once, each with its own chain of scan states, so that no
   * operation waits for the previous element's state (one chain is latency-bound: each state
   * needs the one before). A block's chain starts from z combined with the total of the blocks
   * before it in the scan's direction, computed first by three interleaved reductions (no state
   * is stored, as in the one-chain fusion). As for `reduce`, the operator is associative, so this
   * is the scan's meaning; the states differ from one left-to-right chain by rounding only.
   */
  private blockedMapOverScan(
    x: Extract<Term, { k: 'map' }>,
    env: ReadonlyMap<string, TV>,
    keep: number[],
    scanAt: number,
  ): TV | undefined {
    const read = scanRead(x.arrays[scanAt]!)!
    const scan = read.scan
    const op = associativeOp(scan)!
    // a blocked stored scan among the arrays: the map runs over its blocks (blocked-scans.ts)
    const views = new Map<number, BlockedScan>()
    keep.forEach((i) => {
      const w = i === scanAt ? undefined : blockedView(x.arrays[i]!, (name) => this.blockedOf(env, name))
      if (w) views.set(i, w)
    })
    if (views.size > 0) {
      const aligned = alignedMapOverScan(this, x, env, keep, scanAt, read, op, views)
      if (aligned) return aligned
    }
    const unit = op === '+' ? '0' : '1'
    const left = scan.k === 'scanl'
    const saved = this.lines
    const pending = new Map(this.blockedScans) // fix-ups in discarded lines are undone with them
    this.lines = []
    const init = this.emit(scan.init, env)
    const arr = scannedArray(this, read, env)
    const m = arr.length
    const states = this.local(`${m} + 1`, 'n')
    const others = x.arrays.map((a, i) => (keep.includes(i) && i !== scanAt ? this.source(a, env) : undefined))
    const n = this.sourceLength([
      { length: states, elem: () => init },
      ...others.filter((o): o is Source => o !== undefined),
    ])
    const setup = this.lines
    // the element and the body must be loop-free (each is emitted several times)
    this.lines = []
    const probeEnv = new Map(env).set(x.params[scanAt]!, { v: 'probe', t: R })
    others.forEach((o, i) => {
      if (o) probeEnv.set(x.params[i]!, o.elem('0'))
    })
    const elem = arr.elem('0')
    const body = this.emit(x.body, probeEnv)
    const loopFree = !this.lines.some((l) => /\bfor \(/.test(l))
    this.lines = saved
    if (!loopFree || init.t.kind !== 'R' || elem.t.kind !== 'R' || arr.dir) {
      this.blockedScans = pending
      return undefined
    }
    this.lines.push(...setup)
    const run = this.local(`${n} >> 2`, 'n')
    const lastRun = this.local(`${n} - 3 * ${run}`, 'n')
    // the map index of step i of block k: scanl k·B + i, scanr m − k·B − i
    const start = [0, 1, 2, 3].map((k) =>
      left
        ? k === 0
          ? ''
          : this.local(k === 1 ? run : `${k} * ${run}`, 'b')
        : this.local(k === 0 ? m : k === 1 ? `${m} - ${run}` : `${m} - ${k} * ${run}`, 'b'),
    )
    const at = (k: number, i: string) => (left ? (k === 0 ? i : `${start[k]} + ${i}`) : `${start[k]} - ${i}`)
    // the element that advances the state at index j: A[j] (scanl), A[j − 1] (scanr)
    const next = (k: number, i: string) => arr.elem(left ? at(k, i) : `${at(k, i)} - 1`).v as string
    const total = [0, 1, 2].map(() => this.fresh('acc'))
    this.line(`let ${total.map((t) => `${t} = ${unit}`).join(', ')};`)
    const i0 = this.fresh('j')
    this.line(`for (let ${i0} = 0; ${i0} < ${run}; ${i0}++) {`)
    this.indent(() => total.forEach((t, k) => this.line(`${t} = ${t} ${op} ${next(k, i0)};`)))
    this.line('}')
    const chain = [0, 1, 2, 3].map(() => this.fresh('acc'))
    this.line(`let ${chain[0]} = ${init.v as string};`)
    for (let k = 1; k < 4; k++) this.line(`let ${chain[k]} = ${chain[k - 1]} ${op} ${total[k - 1]};`)
    const out = this.inPlaceOutput(x, env, body.t) ?? this.allocate(arrayType(body.t), n)
    const element = (k: number, i: string) => {
      const j = at(k, i)
      const e = new Map(env).set(x.params[scanAt]!, { v: chain[k]!, t: R })
      others.forEach((o, q) => {
        if (o) e.set(x.params[q]!, o.elem(j))
      })
      const r = this.emit(x.body, e).v
      // the last block reaches the scan's end, whose state has no successor (an exclusive
      // scan's last advance reads an element of X: no guard)
      const guarded = k === 3 && !read.exclusive
      // an unguarded advance reads its element before the store (loadsFirst, blocked-scans.ts)
      const early = guarded ? undefined : next(k, i)
      this.store(out, r, j)
      if (guarded) this.line(left ? `if (${j} < ${m}) {` : `if (${j} > 0) {`)
      const adv = () => this.line(`${chain[k]} = ${chain[k]} ${op} ${early ?? next(k, i)};`)
      if (guarded) {
        this.indent(adv)
        this.line('}')
      } else adv()
    }
    const i = this.fresh('j')
    this.line(`for (let ${i} = 0; ${i} < ${run}; ${i}++) {`)
    this.indent(() => {
      for (let k = 0; k < 4; k++) element(k, i)
    })
    this.line('}')
    this.line(`for (let ${i} = ${run}; ${i} < ${lastRun}; ${i}++) {`)
    this.indent(() => element(3, i))
    this.line('}')
    return { v: out, t: arrayType(body.t) }
  }

  /** The blocked scan whose states `name` is bound to, if they still need their offsets. */
  private blockedOf(env: ReadonlyMap<string, TV>, name: string): BlockedScan | undefined {
    const b = env.get(name)?.v
    return typeof b === 'string' ? this.blockedScans.get(b) : undefined
  }

  /**
   * The states of a scan as a source for a map that runs in the scan's direction: the state of
   * index j is a local, advanced after the map's iteration j (the states are never stored).
   */
  scanSource(read: ScanRead, env: ReadonlyMap<string, TV>): Source {
    const x = read.scan
    const init = this.emit(x.init, env)
    const arr = scannedArray(this, read, env)
    const m = arr.length
    const acc = leaves(init.v).map((l) => {
      const a = this.fresh('acc')
      this.line(`let ${a} = ${l};`)
      return a
    })
    const accCV = rebuild(init.v, acc)
    const left = x.k === 'scanl'
    return {
      length: this.local(`${m} + 1`, 'n'),
      dir: left ? 'L' : 'R',
      elem: () => ({ v: accCV, t: init.t }),
      advance: (j) => {
        // scanl: state j+1 = f(state j, A[j]); scanr: state j-1 = f(state j, A[j-1]) (no guard
        // for an exclusive scan: its last advance reads an element of the array)
        const adv = () => {
          const e = new Map(env).set(x.acc, { v: accCV, t: init.t }).set(x.elem, arr.elem(left ? j : `${j} - 1`))
          this.assignAll(acc, leaves(this.emit(x.body, e).v))
        }
        if (read.exclusive) return adv()
        this.line(left ? `if (${j} < ${m}) {` : `if (${j} > 0) {`)
        this.indent(adv)
        this.line('}')
      },
    }
  }

  /** The length of `prefix A L` (L's), checked against A's. */
  private prefixLength(x: Extract<Term, { k: 'prefix' }>, a: TV, env: ReadonlyMap<string, TV>): string {
    const n = this.source(x.len, env).length
    this.line(`if (${n} > ${firstLeaf(a.v)}.length) shapeErr('a prefix longer than its array');`)
    return n
  }

  sourceLength(sources: Source[]): string {
    const n = sources[0]!.length
    for (const s of sources.slice(1)) {
      this.line(`if (${s.length} !== ${n}) shapeErr('arrays of different lengths mapped together');`)
    }
    return n
  }

  /** The common length of arrays mapped together (checked once, outside the loop). */
  private length(arrays: TV[]): string {
    const n = this.local(`${firstLeaf(arrays[0]!.v)}.length`, 'n')
    for (const a of arrays.slice(1)) {
      this.line(`if (${firstLeaf(a.v)}.length !== ${n}) shapeErr('arrays of different lengths mapped together');`)
    }
    return n
  }

  /** The element `j` of an array value (per leaf). */
  private element(a: TV, j: string): TV {
    const elem = (a.t as { elem: Type }).elem
    return { v: mapLeaves(a.v, (l) => this.local(`${l}[${j}]`, 'e')), t: elem }
  }

  /** Output storage for an array of `t` of length n: one array per leaf of the element type. */
  allocate(t: Type, n: string): CV {
    const elem = (t as { elem: Type }).elem
    const build = (et: Type): CV => {
      if (et.kind === 'tuple') return et.items.map(build)
      // FILL marks an array whose every element the loop writes (a candidate for buffer reuse)
      const rows = et.kind === 'array' && et.elem.kind === 'R' ? ` ${ROWS}` : ''
      const o = this.local(et.kind === 'R' ? `new Float64Array(${n}) ${FILL}` : `new Array(${n})${rows}`, 'o')
      this.lengths.set(o, n)
      return o
    }
    return build(elem)
  }

  store(out: CV, v: CV, j: string) {
    const o = leaves(out),
      vs = leaves(v)
    o.forEach((l, i) => this.line(`${l}[${j}] = ${vs[i]};`))
  }

  private zeroLikeExpr(l: string, t: Type): string {
    if (t.kind === 'R') return '0'
    if (t.kind === 'B') return 'false'
    if (t.kind === 'array' && t.elem.kind === 'R') return `new Float64Array(${l}.length)`
    return `${l}.map((q) => ${this.zeroLikeExpr('q', (t as { elem: Type }).elem)})`
  }

  private copyExpr(l: string, t: Type): string {
    if (t.kind === 'array' && t.elem.kind === 'R') return `Float64Array.from(${l})`
    if (t.kind === 'array') return `${l}.map((q) => ${this.copyExpr('q', t.elem)})`
    return l
  }

  private addLeaf(a: string, b: string, t: Type): string {
    if (t.kind === 'R') return this.local(`${a} + ${b}`)
    if (t.kind === 'array' && t.elem.kind === 'R') {
      const out = this.local(`new Float64Array(${a}.length) ${FILL}`, 'o')
      const q = this.fresh('q')
      this.line(`if (${b}.length !== ${a}.length) shapeErr('adding arrays of different lengths');`)
      this.line(`for (let ${q} = 0; ${q} < ${a}.length; ${q}++) ${out}[${q}] = ${a}[${q}] + ${b}[${q}];`)
      return out
    }
    const elem = (t as { elem: Type }).elem
    const out = this.local(`new Array(${a}.length)`, 'o')
    const q = this.fresh('q')
    this.line(`for (let ${q} = 0; ${q} < ${a}.length; ${q}++) {`)
    this.indent(() => {
      const r = this.addLeaf(`${a}[${q}]`, `${b}[${q}]`, elem)
      this.line(`${out}[${q}] = ${r};`)
    })
    this.line('}')
    return out
  }

  /**
   * `acc +̂= term` in place, fusing the term's loops: a `map` adds element by element (its body
   * evaluated in the accumulation loop), lets are emitted, zeros add nothing.
   */
  private accumulateTerm(acc: string, term: Term, env: ReadonlyMap<string, TV>, prefixOnly = false) {
    // prefixOnly: the term may be shorter than acc and adds into acc's first elements (`padTo`)
    const fits = prefixOnly ? '>' : '!=='
    switch (term.k) {
      case 'zero':
        return
      case 'let': {
        const val = this.bindValue(term.name, term.value, term.body, env)
        this.accumulateTerm(acc, term.body, new Map(env).set(term.name, val), prefixOnly)
        return
      }
      case 'add':
        this.accumulateTerm(acc, term.a, env, prefixOnly)
        this.accumulateTerm(acc, term.b, env, prefixOnly)
        return
      case 'padTo': {
        // `acc +̂= padTo C L`: C adds into acc's first |C| elements, the zeros add nothing
        const len = this.source(term.len, env).length
        this.line(`if (${len} ${fits} ${acc}.length) shapeErr('adding arrays of different lengths');`)
        this.accumulateTerm(acc, term.array, env, true)
        return
      }
      case 'map': {
        const keep = keptArrays(term.params, term.body, term.arrays)
        const sources = term.arrays.map((a, i) => (keep.includes(i) ? this.source(a, env) : undefined))
        const n = this.sourceLength(sources.filter((b): b is Source => b !== undefined))
        this.line(`if (${n} ${fits} ${acc}.length) shapeErr('adding arrays of different lengths');`)
        const q = this.fresh('q')
        const reads = freeVars(term.body)
        const element = (at: string) => {
          const e = new Map(env)
          term.params.forEach((p, i) => {
            if (sources[i] && reads.has(p)) e.set(p, sources[i]!.elem(at))
          })
          let b = term.body
          let be: ReadonlyMap<string, TV> = e
          while (b.k === 'let') {
            const val = this.emit(b.value, be)
            be = new Map(be).set(b.name, val)
            b = b.body
          }
          if (b.k === 'map' || b.k === 'add' || b.k === 'zero') {
            const row = this.local(`${acc}[${at}]`, 'row')
            this.accumulateTerm(row, b, be)
          } else {
            const r = this.emit(b, be)
            if (r.t.kind === 'R') this.line(`${acc}[${at}] += ${r.v as string};`)
            else this.accumulate(`${acc}[${at}]`, r.v as string, r.t)
          }
        }
        // a loop-free element is unrolled by four (the additions into the accumulator are
        // independent: fewer loop tests and increments per element)
        const saved = this.lines
        this.lines = []
        element(q)
        const loopFree = !this.lines.some((l) => /\bfor \(/.test(l))
        this.lines = saved
        if (loopFree) {
          this.line(`let ${q} = 0;`)
          this.line(`for (; ${q} + 3 < ${n}; ${q} += 4) {`)
          this.indent(() => {
            for (let k = 0; k < 4; k++) element(k === 0 ? q : `${q} + ${k}`)
          })
          this.line('}')
          this.line(`for (; ${q} < ${n}; ${q}++) {`)
          this.indent(() => element(q))
          this.line('}')
          return
        }
        this.line(`for (let ${q} = 0; ${q} < ${n}; ${q}++) {`)
        this.indent(() => element(q))
        this.line('}')
        return
      }
      default: {
        const r = this.emit(term, env)
        if (!prefixOnly) {
          this.accumulate(acc, r.v as string, r.t)
          return
        }
        // into acc's first |r| elements (the rows themselves must agree)
        const v = r.v as string
        const q = this.fresh('q')
        this.line(`if (${v}.length > ${acc}.length) shapeErr('adding arrays of different lengths');`)
        if (r.t.kind === 'array' && r.t.elem.kind === 'R') {
          this.line(`for (let ${q} = 0; ${q} < ${v}.length; ${q}++) ${acc}[${q}] += ${v}[${q}];`)
          return
        }
        this.line(`for (let ${q} = 0; ${q} < ${v}.length; ${q}++) {`)
        this.indent(() => this.accumulate(`${acc}[${q}]`, `${v}[${q}]`, (r.t as { elem: Type }).elem))
        this.line('}')
      }
    }
  }

  /** `acc += v` in place on an owned accumulator. */
  private accumulate(acc: string, v: string, t: Type) {
    const q = this.fresh('q')
    if (t.kind === 'array' && t.elem.kind === 'R') {
      this.line(`for (let ${q} = 0; ${q} < ${acc}.length; ${q}++) ${acc}[${q}] += ${v}[${q}];`)
      return
    }
    this.line(`for (let ${q} = 0; ${q} < ${acc}.length; ${q}++) {`)
    this.indent(() => this.accumulate(`${acc}[${q}]`, `${v}[${q}]`, (t as { elem: Type }).elem))
    this.line('}')
  }
}

/**
 * The arrays of a loop that must be read: those whose parameter the body reads, and user
 * variables (their lengths are checked); a computed array whose elements are unused only gave
 * a length, which another array gives too.
 */
function keptArrays(params: string[], body: Term, arrays: Term[]): number[] {
  const fv = freeVars(body)
  const keep = arrays.map((a, i) => (fv.has(params[i]!) || a.k === 'var' ? i : -1)).filter((i) => i >= 0)
  return keep.length > 0 ? keep : [0]
}

/**
 * `+` or `*` when a scan's (or reduce's) body is that operator applied to its accumulator and
 * its element (either order: both commute exactly in floating point); otherwise undefined.
 */
function associativeOp(x: Term): '+' | '*' | undefined {
  if (x.k !== 'reduce' && x.k !== 'fold' && x.k !== 'scanl' && x.k !== 'scanr') return undefined
  const b = x.body
  if (b.k !== 'op' || (b.op !== '+' && b.op !== '*') || b.args.length !== 2) return undefined
  const names = b.args.map((a) => (a.k === 'var' ? a.name : ''))
  return names.includes(x.acc) && names.includes(x.elem) && x.acc !== x.elem ? b.op : undefined
}

/** A reduction `reduce ⊕ init` with ⊕ one of + and · and a constant initial value. */
interface Reduction {
  op: '+' | '*'
  init: number
}
const reductionKey = (r: Reduction) => `${r.op} ${r.init}`

/** The distinct reductions `reduce ⊕ c name` (⊕ one of + and ·, c a constant) in t. */
function reductionsOf(name: string, t: Term): Reduction[] {
  const found = new Map<string, Reduction>()
  const go = (x: Term) => {
    if (x.k === 'reduce' && x.array.k === 'var' && x.array.name === name && x.init.k === 'const') {
      const op = associativeOp(x)
      if (op) found.set(reductionKey({ op, init: x.init.value }), { op, init: x.init.value })
    }
    children(x).forEach(go)
  }
  go(t)
  return [...found.values()]
}

/** A constant as JS (negative numbers parenthesised, non-finite by name). */
function constJs(x: number): string {
  if (Number.isNaN(x)) return 'NaN'
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '(-Infinity)'
  return x < 0 || Object.is(x, -0) ? `(${x})` : String(x)
}

function finalOf(t: Term): Term {
  while (t.k === 'let') t = t.body
  return t
}

/** Occurrences of `π_{i+1} (π_{of+1} name)` in t. */
function countPartUse(t: Term, name: string, of: number, i: number): number {
  if (
    t.k === 'proj' &&
    t.index === i &&
    t.of.k === 'proj' &&
    t.of.index === of &&
    t.of.of.k === 'var' &&
    t.of.of.name === name
  )
    return 1
  return children(t).reduce((s, c) => s + countPartUse(c, name, of, i), 0)
}

/** Occurrences of `π_{k+1} (π3 name)` in t. */
function countOutUse(t: Term, name: string, k: number): number {
  if (
    t.k === 'proj' &&
    t.index === k &&
    t.of.k === 'proj' &&
    t.of.index === 2 &&
    t.of.of.k === 'var' &&
    t.of.of.name === name
  )
    return 1
  return children(t).reduce((s, c) => s + countOutUse(c, name, k), 0)
}

/** Whether `name` occurs other than under a projection `πᵢ (πⱼ name)`. */
function bareUse(t: Term, name: string): boolean {
  if (t.k === 'proj' && t.of.k === 'proj' && t.of.of.k === 'var' && t.of.of.name === name) return false
  if (t.k === 'var') return t.name === name
  return children(t).some((c) => bareUse(c, name))
}

/** An array consumed by a loop: its length, and its element `j` (emitted at the point of use). */
interface Source {
  length: string
  elem: (j: string) => TV
  /** a scan's states: the loop must run in this direction and call `advance` after each element */
  dir?: 'L' | 'R'
  advance?: (j: string) => void
}

type ScanTerm = Extract<Term, { k: 'reduce' | 'fold' | 'scanl' | 'scanr' }>

/** A type with arrays of tuples turned into tuples of arrays (the representation). */
function leafTuple(t: Type): Type {
  if (t.kind === 'array') {
    const e = leafTuple(t.elem)
    if (e.kind === 'tuple') return tupleType(...e.items.map((i) => leafTuple(arrayType(i))))
    return arrayType(e)
  }
  if (t.kind === 'tuple') return tupleType(...t.items.map(leafTuple))
  return t
}

/**
 * An array of tuples typed as its representation (a tuple of arrays, as a projection of a sweep's
 * outputs gives it) retyped as the array it is, so that a loop can read it element by element.
 */
function arrayOfTuples(x: TV): TV {
  const asArray = (t: Type): Type | undefined => {
    if (t.kind === 'array') return t
    if (t.kind !== 'tuple') return undefined
    const items = t.items.map(asArray)
    return items.every((i) => i !== undefined)
      ? arrayType(tupleType(...items.map((i) => (i as { elem: Type }).elem)))
      : undefined
  }
  if (x.t.kind !== 'tuple' || leaves(x.v).length === 0) return x
  const t = asArray(x.t)
  return t ? { v: x.v, t } : x
}

/** The leaf types of a representation, in order. */
function leafTypes(t: Type): Type[] {
  const r = leafTuple(t)
  return r.kind === 'tuple' ? r.items.flatMap(leafTypes) : [r]
}

function leaves(v: CV): string[] {
  return typeof v === 'string' ? [v] : v.flatMap(leaves)
}
function firstLeaf(v: CV): string {
  const l = leaves(v)
  if (l.length === 0) throw new UnfError('unf/internal', 'an array of empty tuples has no length')
  return l[0]!
}
function rebuild(shape: CV, flat: string[]): CV {
  let i = 0
  const go = (s: CV): CV => (typeof s === 'string' ? flat[i++]! : s.map(go))
  return go(shape)
}
function mapLeaves(v: CV, f: (l: string, i: number) => string): CV {
  let i = 0
  const go = (s: CV): CV => (typeof s === 'string' ? f(s, i++) : s.map(go))
  return go(v)
}
