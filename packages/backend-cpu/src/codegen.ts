/**
 * Code generation: core IR → one specialised JavaScript function per (function, direction).
 * Scalars live in JS locals, arrays are typed arrays, scalar results go to a preallocated
 * Float64Array per function, so a call allocates nothing. Every identifier in the generated
 * code is generated here (`p0`, `v3`, `F2`), never copied from user text, and every constant
 * that is not a number goes through the runtime table `rt`, so no source string can inject code.
 */
import {
  InvertibilityError,
  RUNTIME_CHECKS,
  RUNTIME_CHECK_CODES,
  type RuntimeCheck,
  type Arg,
  type CompileOptions,
  type Dataview,
  type Expr,
  type FunctionDef,
  type Program,
  type ScalarTypeName,
  type SourceLocation,
  type Stmt,
  type Type,
} from '@tenet/ir'
import {
  callsHost,
  exprChildren,
  foldableBounds,
  flatten,
  hostNumber,
  inRun,
  polynomial,
  stmtExprs,
  userNames,
  effectfulFunctions,
  forEachStatement,
  key,
  promotableElements,
  readNames,
  reusedLoads,
  carriedElements,
  deadCarriedStores,
  lastKey,
  CHECKED_PASSES,
  disabledPasses,
  indexKey,
  writtenNames,
  walk,
  hoistableAllocs,
  type ArgumentUse,
  type EnclosingLoop,
  type Promotion,
  type LoadOccurrence,
  type Shared,
} from '@tenet/ir/backend'
import { replayBoundTest, replayBounds, type ReplayBound } from './replay-bound.js'
import { SUM_BOUND, sumBoundTest, sumBounds } from './sum-bound.js'

/**
 * The local a loop-carried element's write sets (see \`carriedElements\`), how many writes set it
 * in the iteration being emitted, whether it may hold the value before a first write's \`0 +\`
 * (\`signFree\`); where its stores are dead (see \`deadCarriedStores\`), the key of the element the
 * last iteration writes, and whether the writes emitted kept the value before the \`0 +\`.
 */
interface CarriedWrite {
  local: string
  emitted: number
  signFree: boolean
  dead?: string
  bare?: boolean | 'mixed'
}

/**
 * The most statements (nested ones included) of a loop body that the cpu backend runs two (or
 * {@link CALL_FREE_COPIES}) iterations per pass (see \`FunctionEmitter.copiesPerPass\`): each
 * copy adds the body's code again.
 */
export const PAIRED_MAX_STATEMENTS = 4

/**
 * The iterations per pass of a loop that \`FunctionEmitter.copiesPerPass\` runs more than once
 * per pass and whose body calls nothing (no primitive such as \`exp\` or \`max\`, no conversion, no host function): only
 * element reads and writes and arithmetic, where the per-pass work V8 adds (the loop's interrupt
 * check, then each typed-array parameter's map check and its length and data pointer loaded again)
 * costs as much as the body itself. A CSR product's row (\`y[col[q]] += val[q] * x[i]\`, five
 * elements a row), its adjoint's gather, a stencil's or a recurrence's adjoint. A body with a call
 * keeps two (see \`copiesPerPass\`): its code is larger and the call dominates.
 */
export const CALL_FREE_COPIES = 4

/**
 * The size (statements and expression nodes, nested ones included) from which a function's loops
 * may run two iterations per pass (see \`FunctionEmitter.copiesPerPass\`). A smaller function
 * may be small enough for V8 to inline into its caller (a gradient driver, a benchmark loop),
 * where its arguments can become constants; the copied bodies could push it past V8's inlining
 * limits (Table 1's sum-mat-vec gradient, 238 bytes of bytecode inlined into the driver and the
 * driver into its caller, became 387 and only the first: 2.42× → 2.72× the plain objective).
 *
 * Except a loop whose bounds read an array element (\`for q in rowptr[i]..rowptr[i + 1]\`: a row
 * of a sparse matrix, a node's adjacency list, a segment): it runs as many iterations as the data
 * say, often a handful (a CSR row of five), so V8's per-pass work is most of its cost, and it
 * runs several per pass in a function of any size. Called with arrays that are not constants, as
 * a compiled function mostly is (the bench's rows call \`core\` with an argument list), the
 * kernels' CSR transpose objective ran 2.55× → 1.95× the plain objective and sparse-mul's
 * objective, inverse and gradient 0.75× → 0.50×, 0.74× → 0.50× and 2.42× → 2.13×; inlined into a
 * caller whose arrays are constants, the CSR objective (344 bytes of bytecode, no longer inlined
 * with the copies) ran 4.1 → 5.6 µs instead (two copies stay inlined: 3.5 µs, but 6.5 µs
 * called with an argument list).
 */
export const PAIRED_MIN_NODES = 100

/** Whether expression \`e\` reads an array element. */
function readsElement(e: Expr): boolean {
  if (e.kind === 'index') return true
  for (const c of exprChildren(e)) if (readsElement(c)) return true
  return false
}

/** The statements and expression nodes of a body, nested ones included. */
function irNodes(body: Stmt[]): number {
  let n = 0
  const visit = (e: Expr): void => {
    n++
    for (const c of exprChildren(e)) visit(c)
  }
  walk(body, (s) => {
    n++
    for (const x of stmtExprs(s))
      if (x.kind !== 'neg' && x.kind !== 'field') visit(x as Expr)
      else visit((x as { target: Expr }).target)
  })
  return n
}

/** Run-time support shared by all generated functions of one program. */
export interface Runtime {
  hosts: unknown[]
  prims: Array<(...a: number[]) => number>
  bijections: Array<(...a: number[]) => number[]>
  fail: (site: number, ...values: unknown[]) => never
  /**
   * Empties the tape of pass \`replay-uncall\` (set by a module that uses one and never calls out):
   * called as a check fails, which unwinds every generated frame, so that the terms recorded before
   * it are not stacked up across failing host calls.
   */
  emptyTape?: () => void
  /** The number of terms on the tape of pass \`replay-uncall\` (set by a module that uses one), for tests. */
  tapeTop?: () => number
  /** The value of a host call in an expression, which must be a number (\`site\`: its location). */
  hostNumber: (value: unknown, index: number, site: number) => number
  near: (a: number, b: number) => boolean
  /** Whether a factor of \`*=\` / \`/=\` is nonzero and finite (\`$factor\` of a run-time check). */
  factor: (k: number) => boolean
  allZero: (a: ArrayLike<number>, n: number) => boolean
  allNear: (a: ArrayLike<number>, n: number) => boolean
  /** `n` when it is a valid array length (a whole number ≥ 0), else the `runtime/array-length` error of `site`. */
  length: (n: number, site: number) => number
}

interface Site {
  code: string
  loc?: SourceLocation
  message: (...v: unknown[]) => string
}

const num = (v: number): string =>
  Object.is(v, -0) ? '-0' : Number.isFinite(v) ? String(v) : v > 0 ? 'Infinity' : Number.isNaN(v) ? 'NaN' : '-Infinity'

/** Generates the JS source of a whole program; `sites` collects the run-time check messages. */
export class CodeGenerator {
  readonly sites: Site[] = []
  readonly prims: Array<(...a: number[]) => number> = []
  readonly bijections: Array<(...a: number[]) => number[]> = []
  private readonly primIndex = new Map<string, number>()
  private readonly fnIndex = new Map<string, number>()
  /** The functions with a host effect (see `effectfulFunctions`): no element load is reused across a call of one. */
  readonly effectful: ReadonlySet<string>

  constructor(
    private readonly program: Program,
    private readonly inverses: Map<string, FunctionDef>,
    private readonly options: CompileOptions,
  ) {
    let k = 0
    for (const name of program.functions.keys()) this.fnIndex.set(name, k++)
    this.effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
  }

  /** JS name of the compiled function for (name, direction). */
  fnName(name: string, inverse: boolean): string {
    return `${inverse ? 'B' : 'F'}${this.fnIndex.get(name)}`
  }

  /** The (name, direction) pairs that the program's own functions call by their internal name. */
  private readonly called = new Set<string>()
  /** The (name, direction) pairs that the program's own functions call, by either name. */
  private readonly callees = new Set<string>()

  /**
   * The JS name that a call from inside the program uses for (name, direction). A function with
   * scalar parameters it never writes has a second, internal copy that leaves their results out:
   * a caller inside the program reads back only the results of the parameters the callee
   * writes, while a host caller may read every one (`CompiledFunction.results`). The stores are
   * few, but they are code: without them a callee may fit V8's inlining budget where it did not
   * (the Bessel batch's per-element tangent did, and ran 10% faster inlined into its loop). A
   * function that writes one scalar has an internal copy too, which returns it (see
   * \`returnedScalar\`).
   */
  callName(name: string, inverse: boolean): string {
    this.callees.add(`${inverse ? '~' : ''}${name}`)
    if (!readOnlyScalars(this.program, name) && returnedScalar(this.program, name) < 0)
      return this.fnName(name, inverse)
    this.called.add(`${inverse ? '~' : ''}${name}`)
    return this.internalName(name, inverse)
  }

  /** The JS name of the internal copy of (name, direction) (see `callName`). */
  internalName(name: string, inverse: boolean): string {
    return `${inverse ? 'BI' : 'FI'}${this.fnIndex.get(name)}`
  }

  /**
   * The JS name of the lean copy of function \`name\` (forward direction): the host entry without
   * the result stores of the scalar parameters it never writes (see \`CompiledFunction.lean\`).
   */
  leanName(name: string): string {
    return `FL${this.fnIndex.get(name)}`
  }

  /**
   * Whether function \`name\` has a lean copy: every parameter is a scalar (a call that does so
   * little work that its stores count), one it never writes among them, and no function of the
   * program calls it (the programs that generated callers call, such as the forward-mode gradient
   * program of \`@tenet/ad\`, are such roots; a copy for every function with a read-only scalar
   * made the generated source of the bench's gradients ~40% longer). Known once every function is
   * emitted.
   */
  hasLean(name: string): boolean {
    const f = this.program.functions.get(name)
    return (
      !!f &&
      f.params.every((p) => p.type.kind === 'scalar') &&
      readOnlyScalars(this.program, name) &&
      !this.calledInternally(name, false) &&
      !this.calledInternally(name, true)
    )
  }

  /** Whether a call inside the program names (name, direction)'s internal copy (see `callName`). */
  calledInternally(name: string, inverse: boolean): boolean {
    return this.called.has(`${inverse ? '~' : ''}${name}`)
  }
  resultsName(name: string, inverse: boolean): string {
    return `${inverse ? 'RB' : 'RF'}${this.fnIndex.get(name)}`
  }

  site(code: string, loc: SourceLocation | undefined, message: (...v: unknown[]) => string): number {
    this.sites.push({ code, ...(loc ? { loc } : {}), message: (...v) => userNames(message(...v)) })
    return this.sites.length - 1
  }

  /**
   * A failure site of catalog check `check` (see `RUNTIME_CHECKS`): `args` turns the values the
   * generated code passes when it fails into the catalog message's arguments.
   */
  check<K extends RuntimeCheck>(
    check: K,
    loc: SourceLocation | undefined,
    args: (...v: unknown[]) => Parameters<(typeof RUNTIME_CHECKS)[K]>,
  ): number {
    const message = RUNTIME_CHECKS[check] as (...a: unknown[]) => string
    return this.site(RUNTIME_CHECK_CODES[check], loc, (...v) => message(...args(...v)))
  }

  /** The whole module: result buffers, every function in both directions, and an export table. */
  generate(): string {
    const parts: string[] = ['"use strict";']
    // x ** y for an exponent known only at run time: 2 and 1 (which the derivative n·x^(n−1) of
    // x^n meets) give the doubles Math.pow gives, without the call
    parts.push('function $pow(x, y) { return y === 2 ? x * x : y === 1 ? x : Math.pow(x, y); }')
    parts.push('function $sq(x) { return x * x; }')
    // the zeroing of a pooled array ancilla reused at the same length (see `pooled`)
    parts.push(...zeroHelpers())
    // the comparisons of the run-time checks (see `$near` and `$zeros` of `insert-checks.ts`), in
    // the module, so that V8 inlines them with this module's own type feedback
    if (this.options.checks) parts.push(...checkHelpers(this.options.tolerance))
    for (const f of this.program.functions.values()) {
      for (const inv of [false, true]) {
        parts.push(`const ${this.resultsName(f.name, inv)} = new Float64Array(${Math.max(1, f.params.length)});`)
      }
    }
    const emitted: EmittedFunction[] = []
    for (const f of this.program.functions.values()) {
      emitted.push(new FunctionEmitter(this, this.program, f, false, this.options).emit())
      emitted.push(new FunctionEmitter(this, this.program, this.inverses.get(f.name)!, true, this.options).emit())
    }
    const callsOut = new Set(emitted.filter((e) => e.callsOut).map((e) => e.name))
    const reentrant = reentrantFunctions(this.program, this.inverses, callsOut)
    // In a module that never calls out (so no generated frame is live while the host calls it, nor
    // after a throw), the tape is emptied where no terms of a live call can be on it: at the entry of
    // a copy that only the host calls (no function of the program calls it: a function called
    // between a recording call and its uncall must leave the tape as it was), and when a check
    // fails (see \`Runtime.emptyTape\`). So terms a failed check left behind are dropped, not
    // stacked up across host calls.
    // In a module that calls out, JS code (a host function, a plugin's primitive or bijection) may
    // call an entry while a generated frame below it holds terms on the tape, and catch what that
    // call throws: there an entry the host may call takes the tape's top when entered, and puts it
    // back when a throw leaves it (\`markTape\`), so that the terms of the failed call are dropped
    // and those of the frames below are kept. (A call that returns leaves the top where it found
    // it: its pairs balance.)
    const resets = this.tapeUsed && !callsOut.size
    const marks = this.tapeUsed && callsOut.size > 0
    const emptyTape = (code: string): string =>
      resets ? code.replace('{\n', '{\n  $tp = 0;\n') : marks ? markTape(code) : code
    if (resets) parts.push('rt.emptyTape = function () { $tp = 0; };')
    if (this.tapeUsed) parts.push('rt.tapeTop = function () { return $tp; };')
    for (const e of emitted) {
      const early = !reentrant.has(e.name)
      // the pooled array ancillas of a function that is never entered twice at once
      // (and each pool's flag: its array is all +0, left so by a passed deallocation check, see \`pooled\`)
      if (early) for (const p of e.pools) parts.push(`let ${p} = null, ${zeroedFlag(p)} = false;`)
      const called = this.callees.has(`${e.inverse ? '~' : ''}${e.name}`)
      const entry = e.render(early, false)
      // (in a module that calls out, every entry copy marks the tape: the host may call any of them)
      parts.push(called && !marks ? entry : emptyTape(entry))
      // (the internal copy shares the pools: it is the same function, entered the same way)
      if (this.calledInternally(e.name, e.inverse)) parts.push(e.render(early, true))
      // (the lean copy too; V8 compiles a function on its first call, so an unused copy costs its parsing)
      if (!e.inverse && this.hasLean(e.name)) parts.push(emptyTape(e.renderLean(early)))
    }
    const table = [...this.program.functions.keys()].map(
      // a computed key: a quoted `"__proto__": …` in an object literal would set the prototype
      (n) =>
        `[${JSON.stringify(n)}]: [${this.fnName(n, false)}, ${this.resultsName(n, false)}, ${this.fnName(n, true)}, ${this.resultsName(n, true)}${this.hasLean(n) ? `, ${this.leanName(n)}` : ''}]`,
    )
    // the caches of the \`$apart\` sites, and the test: no shared memory (not one array, not two
    // views of one buffer whose byte ranges overlap); anything else than a typed array is not apart.
    // An answer is cached only where it cannot change while the arrays stay the same objects: two
    // views of one resizable (or growable) buffer change their byte ranges as it resizes
    if (this.apartCount) {
      for (let k = 0; k < this.apartCount; k++) parts.push(`const AP${k} = [null, null, false];`)
      parts.push(
        'function $apart(c, a, b) { if (c[0] === a && c[1] === b) return c[2]; const v = ArrayBuffer.isView(a) && ArrayBuffer.isView(b); const r = a !== b && v && (a.buffer !== b.buffer || a.byteOffset + a.byteLength <= b.byteOffset || b.byteOffset + b.byteLength <= a.byteOffset); if (!v || a.buffer !== b.buffer || !(a.buffer.resizable || a.buffer.growable)) { c[0] = a; c[1] = b; c[2] = r; } return r; }',
      )
    }
    // the tape of pass \`replay-uncall\` of \`@tenet/ir\`: the terms a recording call pushes, which its
    // uncall pops; a stack, as calls and uncalls nest. Doubled when full (\`$grow\`; the function
    // that grows it holds the only other reference, its local copy, and takes the new one)
    if (this.tapeUsed) {
      // (\`$tv\`: the sum of the magnitudes of the terms the last recording call recorded, or of the
      // partial sums it left in its f32 array, see \`replay-bound.ts\`)
      parts.push('let $T = new Float64Array(1024), $tp = 0, $tv = 0;')
      parts.push('function $grow() { const t = new Float64Array(2 * $T.length); t.set($T); return ($T = t); }')
    }
    parts.push(`return {${table.join(', ')}};`)
    return parts.join('\n')
  }

  /** The index of a plugin bijection's \`apply\` in \`rt.bijections\` (one entry per function). */
  bijection(fn: (...a: number[]) => number[]): number {
    let k = this.bijections.indexOf(fn)
    if (k < 0) {
      k = this.bijections.length
      this.bijections.push(fn)
    }
    return k
  }

  /** Whether a function records or replays terms (pass \`replay-uncall\`): the module gets the tape. */
  tapeUsed = false

  private apartCount = 0
  /**
   * A fresh module-level name for the cache of one \`$apart(a, b)\` site (see \`apart.ts\` of
   * \`@tenet/ir\`): the last two arrays it saw and its answer for them (a typed array's buffer and
   * byte range never change; \`buffer\` and \`byteOffset\` are slow getters).
   */
  apartSite(): string {
    return `AP${this.apartCount++}`
  }

  private poolCount = 0
  /** A fresh module-level name for the pool of one array-allocation site. */
  pool(): string {
    return `PL${this.poolCount++}`
  }

  prim(name: string, fn: (...a: number[]) => number): number {
    let k = this.primIndex.get(name)
    if (k === undefined) {
      k = this.prims.length
      this.prims.push(fn)
      this.primIndex.set(name, k)
    }
    return k
  }
}

class FunctionEmitter {
  private lines: string[] = []
  private indent = 1
  private names = new Map<string, string>()
  private counter = 0
  private unchecked = 0

  constructor(
    private readonly gen: CodeGenerator,
    private readonly program: Program,
    private readonly f: FunctionDef,
    private readonly inverse: boolean,
    private readonly options: CompileOptions,
  ) {}

  private get checking() {
    return this.options.checks && this.unchecked === 0
  }
  private line(s: string) {
    this.lines.push('  '.repeat(this.indent) + s)
  }
  private fresh(prefix = 't') {
    return `${prefix}${this.counter++}`
  }
  private js(name: string): string {
    const n = this.names.get(name)
    if (!n) throw new Error(`codegen: unbound name ${name}`)
    return n
  }
  private bind(name: string, prefix = 'v'): string {
    const n = this.fresh(prefix)
    this.names.set(name, n)
    return n
  }

  /** The range locals (start, stop, step) of the loop of each variable that has last ended (`$start(v)`, …). */
  private ranges = new Map<string, [string, string, string]>()

  /** The pools of this function's array allocation sites (see `pooled`). */
  private pools: string[] = []
  /** The pool of each array ancilla allocated so far (its deallocation check may mark the pool zeroed, see \`pooled\`). */
  private poolOf = new Map<string, string>()

  /** The pool of each \`overwritten\` table allocated so far (see \`AllocStmt.overwritten\`), by IR name. */
  private tables = new Map<string, string>()

  /** The pools whose table was written by an \`init\` update emitted as \`0 + value\`: never zeroed. */
  private unzeroed = new Set<string>()
  /** Tables one of whose \`init\` updates read the element all the same (see \`pooled\`). */
  private zeroed = new Set<string>()

  /** The pools that need no zeroing: every \`init\` update of their table was emitted as \`0 + value\`. */
  private unzeroedTables(): Set<string> {
    return new Set([...this.unzeroed].filter((p) => !this.zeroed.has(p)))
  }

  /** The local that bounds-checked computed indices go through (declared when used). */
  private scratch: string | undefined
  /** The locals of the tape of pass \`replay-uncall\` (the array and its top), where the function records or replays terms. */
  private tapeLocals: [string, string] | undefined
  /**
   * The local copy of \`$tv\` of a recording function (see \`replay-bound.ts\`) and the local that
   * holds the term being recorded (f64) or the value a recorded update leaves in its element
   * (f32), named on first use.
   */
  private tapeSum: [string, string] | undefined
  /** The local that holds a term that calls out while it is pushed (see \`$record\`). */
  private tapeTerm: string | undefined

  /**
   * How \`e\`, a term \`$record(t)\` that an update adds to an element of the recorded array, is
   * summed for the bound of \`replay-bound.ts\` (checks on): an f64 term by its own magnitude
   * (\`'term'\`, in \`$record\`), an f32 one by the magnitude of the value the update leaves in the
   * element (\`'partial'\`, the partial sum, by the update: see \`replayBoundTest\` for why each).
   */
  private summedRecord(e: Expr): 'term' | 'partial' | undefined {
    if (
      e.kind !== 'call' ||
      e.callee !== '$record' ||
      !this.checking ||
      !CHECKED_PASSES.has('replay-bound') ||
      disabledPasses.has('replay-bound')
    )
      return undefined
    const t = e.args[0]!.type
    return t === 'f64' ? 'term' : t === 'f32' ? 'partial' : undefined
  }

  /** The tape's locals (see \`tapeLocals\`), named on first use. */
  private tape(): [string, string] {
    this.gen.tapeUsed = true
    return (this.tapeLocals ??= [this.fresh('tape'), this.fresh('top')])
  }

  /** The bounds asserts that the loads of the statement head being emitted may take over (see \`foldedBounds\`). */
  private fold: PendingBounds[] | undefined
  /** How many enclosing expressions of the head being emitted rule folding out (see \`foldsThrough\`). */
  private foldOff = 0
  /** The \`rt.fail(…)\` call of the assert emitted last (see \`assert\`). */
  private lastFail = ''

  /**
   * The function's code. A scalar the function never writes has its final value on entry, and
   * `render(true)` stores its result there, so the parameter need not stay live through the body
   * (a loop that keeps it in a register, or spills something else for it, runs slower).
   * `render(false)` stores every result at the end: for a function that may be entered again
   * before it returns (see `reentrantFunctions`), whose inner call stores into the same results
   * array.
   */
  emit(): EmittedFunction {
    const params = this.f.params.map((p, i) => {
      const n = `p${i}`
      this.names.set(p.name, n)
      return n
    })
    this.block(this.f.body)
    this.lines = this.lines.filter((l) => l !== DROPPED).map((l) => (l.includes(FOLD) ? unmark(l) : l))
    if (this.scratch) this.lines.unshift(`  let ${this.scratch} = 0;`)
    this.lines.unshift(...numberParams(this.f))
    if (this.tapeLocals) {
      // (no call in a recording or replaying function, nor a return: a failed check throws, and
      // leaves the module's top as it was)
      const [T, tp] = this.tapeLocals
      const [tv, t] = this.tapeSum ?? []
      // (the sum of the magnitudes from −0, a double to V8 where 0 would start it as a small
      // integer: the loop then ran ~30% slower, leapfrog with checks on)
      const sum = tv ? `${tv} = -0, ${t} = -0` : ''
      if (CALLS_OUT.test(this.lines.join('\n'))) {
        // a recording function whose terms call plugin code (a primitive, a bijection, a host
        // function) that may call into the module again: that call pushes and pops its own terms
        // on the module's tape, above this function's, so this one works on the module's \`$T\`
        // and \`$tp\` themselves (with a local top, the inner call pushed over the terms this one
        // had recorded; a local array would miss the inner call's \`$grow\`)
        const names = new RegExp(`\\b(${T}|${tp})\\b`, 'g')
        this.lines = this.lines.map((l) => l.replace(names, (n) => (n === T ? '$T' : '$tp')))
        if (tv || this.tapeTerm)
          this.lines.unshift(`  let ${[sum, this.tapeTerm && `${this.tapeTerm} = -0`].filter(Boolean).join(', ')};`)
        if (tv) this.lines.push(`  $tv = ${tv};`)
      } else {
        this.lines.unshift(`  let ${T} = $T, ${tp} = $tp${tv ? `, ${sum}` : ''};`)
        this.lines.push(`  $tp = ${tp};${tv ? ` $tv = ${tv};` : ''}`)
      }
    }
    const body = this.lines.join('\n')
    const R = this.gen.resultsName(this.f.name, this.inverse)
    const written = this.program.writes.get(this.f.name)
    const entry: string[] = [],
      exit: string[] = []
    this.f.params.forEach((p, i) => {
      if (p.type.kind !== 'scalar') return
      const store = `  ${R}[${i}] = ${p.type.name === 'bool' ? `(p${i} ? 1 : 0)` : `p${i}`};`
      if (written && !written[i]) entry.push(store)
      else exit.push(store)
    })
    const head = (name: string) => `function ${name}(${params.join(', ')}) {`
    const internalName = this.gen.internalName(this.f.name, this.inverse)
    // the one scalar result a caller inside the program reads: returned (see \`returnedScalar\`)
    const returned = returnedScalar(this.program, this.f.name)
    const internalExit = returned >= 0 ? [`  return p${returned};`] : exit
    return {
      name: this.f.name,
      inverse: this.inverse,
      // plugin code, host functions and \`@safe\` calls: JS that could call back into the program
      callsOut: CALLS_OUT.test(body),
      pools: this.pools,
      renderLean: (early) =>
        [head(this.gen.leanName(this.f.name)), pooled(body, early, this.unzeroedTables()), ...exit, '}'].join('\n'),
      render: (early, internal) =>
        internal
          ? [head(internalName), pooled(body, early, this.unzeroedTables()), ...internalExit, '}'].join('\n')
          : [
              head(this.gen.fnName(this.f.name, this.inverse)),
              ...(early ? entry : []),
              pooled(body, early, this.unzeroedTables()),
              ...(early ? [] : entry),
              ...exit,
              '}',
            ].join('\n'),
    }
  }

  // ---------- expressions ----------

  private round(t: ScalarTypeName | undefined, code: string): string {
    if (!t || t === 'bool') return code
    const r = this.program.registry.findNumberSystem(t)?.round
    if (!r) return code
    if (r.cpu) return r.cpu(code)
    return `rt.prims[${this.gen.prim(`$round$${t}`, r.evaluate)}](${code})`
  }

  /** JS code for the plain (host) number a value of type `t` stands for. */
  private decode(t: ScalarTypeName | undefined, code: string): string {
    const ns = t && t !== 'bool' ? this.program.registry.findNumberSystem(t) : undefined
    if (!ns?.toHost) return `(+${code})`
    return `rt.prims[${this.gen.prim(`$toHost$${t}`, ns.toHost)}](${code})`
  }

  private indexCode(arr: string, index: Expr, loc?: SourceLocation, arrName?: string): string {
    const i = this.expr(index)
    // with checks on, the assert before the statement checks the index (see `insert-checks.ts`),
    // but for an index that calls a host function, which an assert would call a second time
    if (!this.checking || !callsHost(index)) return i
    const site = this.gen.check('outOfBounds', loc, (v, n) => [arrName ?? arr, v, n])
    if (/^[\w$]+$/.test(i)) return `(${i} >>> 0 < ${arr}.length ? ${i} : rt.fail(${site}, ${i}, ${arr}.length))`
    // a computed index is evaluated once, into the function's scratch local (a nested index
    // finishes with it before the outer one assigns it)
    const x = (this.scratch ??= this.fresh('ix'))
    return `((${x} = ${i}) >>> 0 < ${arr}.length ? ${x} : rt.fail(${site}, ${x}, ${arr}.length))`
  }

  expr(e: Expr): string {
    if (this.fold && !foldsThrough(e)) {
      this.foldOff++
      try {
        return this.exprShared(e)
      } finally {
        this.foldOff--
      }
    }
    return this.exprShared(e)
  }

  private exprShared(e: Expr): string {
    const sh = this.shared?.get(e)
    if (!sh) return this.exprCode(e)
    if (sh.temp) {
      // an element this statement is the first to load for later statements (see `reusedLoads`),
      // whose value the run already holds (a bijection stored it: `Shared.stored`): the local takes it
      const o = e.kind === 'index' ? this.loads?.get(e) : undefined
      if (o?.define && o.load.local)
        this.line(`${o.load.flag ? `${o.load.flag} = true, ` : ''}${o.load.local} = ${sh.temp};`)
      return sh.temp
    }
    const code = this.exprCode(e)
    const t = this.fresh('c')
    this.line(`const ${t} = ${code};`)
    sh.temp = t
    return t
  }

  private exprCode(e: Expr): string {
    // an index that a running local of the loop holds (see \`affineIndices\`)
    const running = this.affine?.get(e)
    if (running !== undefined) return running
    switch (e.kind) {
      case 'num': {
        const ns = e.type && e.type !== 'bool' ? this.program.registry.findNumberSystem(e.type) : undefined
        if (ns?.fromHost) return num(ns.fromHost(e.value))
        return num(this.roundValue(e.type, e.value))
      }
      case 'bool':
        return e.value ? 'true' : 'false'
      case 'var':
        return this.js(e.name)
      case 'index': {
        // the element a loop's last iteration wrote, its store dropped (see \`deadCarriedStores\`)
        const last = this.lastCarried?.get(e.array.name)
        if (last) {
          if (lastKey(e.index) !== last.key || last.bare === 'mixed')
            throw new Error(
              'cpu backend: a read of an array whose carried stores were dropped, not at its last element',
            )
          const a = this.js(e.array.name)
          const value = last.bare === true ? `(0 + ${last.local})` : last.local
          return `(${last.ran} ? ${value} : ${a}[${this.indexCode(a, e.index, e.loc, e.array.shown ?? e.array.name)}])`
        }
        // (a kept element only where the block's reused loads do not load this occurrence: a later
        // occurrence may read the local that this one defines)
        const carried = this.carried?.reads.get(e.array.name)
        if (carried) {
          const k = indexKey(e.index)
          const r = k === undefined ? undefined : carried.get(k)
          if (r) return r
        }
        const local =
          this.promoted?.get(e.array.name)?.get(key(e.index)) ??
          (this.loads?.get(e) ? undefined : this.kept?.get(e.array.name)?.get(key(e.index))?.local)
        if (local) return local
        const a = this.js(e.array.name)
        let code = `${a}[${this.indexCode(a, e.index, e.loc, e.array.shown ?? e.array.name)}]`
        const reused = this.loads?.get(e)
        if (!reused || reused.define) code = this.foldedLoad(e, code)
        if (reused) code = this.reusedLoad(reused, code)
        return e.type === 'bool' ? `(${code} !== 0)` : code
      }
      case 'field': {
        const ns = this.program.registry.numberSystem(e.target.type as string)
        const get = ns.getField!
        const f = e.field
        return `rt.prims[${this.gen.prim(`$get$${ns.name}$${f}`, (v: number) => get(v, f))}](${this.expr(e.target)})`
      }
      case 'unary': {
        if (e.op === '!') return `(!${this.expr(e.arg)})`
        const neg =
          e.type && e.type !== 'bool' ? this.program.registry.findNumberSystem(e.type)?.arithmetic?.negate : undefined
        if (neg) return `rt.prims[${this.gen.prim(`$neg$${e.type}`, neg)}](${this.expr(e.arg)})`
        // (the negation of an f32 value is one: no rounding, see `exactOf`; not so for every
        // rounded number system: `fixed` of @tenet/numbers rounds -0 to +0)
        const negated = `(-(${this.expr(e.arg)}))`
        return e.type === 'f32' && this.representable(e.arg) ? negated : this.round(e.type, negated)
      }
      case 'binary':
        return this.binary(e)
      case 'call':
        return this.call(e)
    }
  }

  /**
   * Whether the code of \`e\` (of a float type whose arithmetic is rounded, f32) evaluates to a
   * value already in the representation, so that rounding it (\`Math.fround\`) changes nothing: a
   * literal (rounded when written), an element of the type's typed array, a local (every write of
   * one is rounded), and arithmetic or a call that the generator rounds itself. Not a parameter
   * (\`core\` takes its scalars as the caller passes them), a field, nor a host function's result.
   */
  private representable(e: Expr): boolean {
    const t = e.type
    if (typeof t !== 'string' || t === 'bool' || t === 'i32') return false
    const ns = this.program.registry.findNumberSystem(t)
    if (!ns?.float || !ns.round || ns.arithmetic) return false
    switch (e.kind) {
      case 'num':
      case 'index':
        return true
      case 'var':
        return !this.f.params.some((p) => p.name === e.name)
      case 'binary':
        return e.op === '+' || e.op === '-' || e.op === '*' || e.op === '/' || e.op === '%' || e.op === '**'
      case 'unary':
        return e.op === '-'
      case 'call':
        return !e.callee.startsWith('$host')
      default:
        return false
    }
  }

  /**
   * Whether the call \`e\` of a pure primitive whose JavaScript is \`emit\`, of a type whose
   * arithmetic is rounded (f32), gives a value already in the representation whenever its
   * arguments are in it, so that rounding it changes nothing: \`Math.abs\`, \`Math.min\` and
   * \`Math.max\` give one of their arguments (or its negation, or NaN), \`Math.sign\` gives ±1, ±0
   * or NaN, \`identity\` its argument (as the negation \`-x\` of such a value, see \`expr\`).
   * Arguments as \`representable\` takes them: not a parameter (passed unrounded).
   */
  private exactOf(e: Extract<Expr, { kind: 'call' }>, emit: (...args: string[]) => string): boolean {
    // (f32 only: another rounded number system's rounding may change a value of its own, as
    // `fixed` of @tenet/numbers turns -0 into +0)
    if (e.type !== 'f32') return false
    const names = e.args.map((_, k) => 'xyzw'[k] ?? `a${k}`)
    if (!EXACT_EMITS.has(emit(...names))) return false
    return e.args.every((a) => a.type === e.type && this.representable(a))
  }

  /**
   * Whether the value of \`e\` (f64 or f32, every operation of it rounded as the generator emits it)
   * is never −0 nor negative: NaN, +0, positive or +∞. A literal that is; a local of
   * \`nonNegative\`; the square \`x * x\` of one name or element (\`x ** n\` for an even literal n);
   * \`+\`, \`*\`, \`/\` of two such values; \`Math.sqrt\` of one (sqrt(−0) is −0), \`Math.abs\` and
   * \`Math.exp\` of anything. Rounding to f32 keeps the property (a positive value rounds to +0 or
   * more). Then \`0 + e\` is \`e\` bit for bit, since the sum differs from \`e\` only for \`e = −0\`.
   */
  private neverNegative(e: Expr): boolean {
    if (e.type !== 'f64' && e.type !== 'f32') return false
    switch (e.kind) {
      case 'num':
        return !(e.value < 0) && !Object.is(e.value, -0)
      case 'var':
        return this.nonNegative.has(e.name)
      case 'binary': {
        const same =
          (e.left.kind === 'var' || e.left.kind === 'index') &&
          e.left.kind === e.right.kind &&
          key(e.left) === key(e.right) &&
          !key(e.left).includes('$host')
        if (e.op === '*' && same) return true
        if (e.op === '**') return e.right.kind === 'num' && Number.isInteger(e.right.value) && e.right.value % 2 === 0
        if (e.op === '+' || e.op === '*' || e.op === '/')
          return this.neverNegative(e.left) && this.neverNegative(e.right)
        return false
      }
      case 'call': {
        if (e.args.length !== 1 || e.callee.startsWith('$')) return false
        const spec = this.program.registry.findPrimitive(e.callee)
        const emit = spec?.kind === 'pure' ? spec.emit?.cpu?.('x') : undefined
        if (emit === 'Math.abs(x)' || emit === 'Math.exp(x)') return true
        return emit === 'Math.sqrt(x)' && this.neverNegative(e.args[0]!)
      }
      default:
        return false
    }
  }

  private roundValue(t: ScalarTypeName | undefined, v: number): number {
    const r = t ? this.program.registry.findNumberSystem(t)?.round : undefined
    return r ? r.evaluate(v) : v
  }

  /**
   * A binary expression. Its left spine (`a + b - c + …`, the shape of a long chain) is walked in
   * a loop, not by recursion, and a run of plain float `+ -` (or `* / %`) is written without
   * nested parentheses (JS operators of one level associate to the left, as the tree does), so
   * neither this generator nor V8's parser recurses once per term.
   */
  private binary(e: Extract<Expr, { kind: 'binary' }>): string {
    const spine: Array<Extract<Expr, { kind: 'binary' }>> = [e]
    let n = e.left
    while (n.kind === 'binary' && !this.shared?.get(n)) {
      spine.push(n)
      n = n.left
    }
    let a = this.expr(n)
    let run: string[] | undefined
    let runLevel = 0
    for (let k = spine.length - 1; k >= 0; k--) {
      const node = spine[k]!
      const b = this.expr(node.right)
      const level = this.plainLevel(node)
      if (run && level === runLevel) {
        run.push(` ${node.op} `, b)
        continue
      }
      if (run) {
        a = `(${run.join('')})`
        run = undefined
      }
      if (level) {
        run = [a, ` ${node.op} `, b]
        runLevel = level
        continue
      }
      a = this.binaryCode(node, a, b)
    }
    return run ? `(${run.join('')})` : a
  }

  /** 1 for a float `+`/`-`, 2 for `*` `/` `%`, written `(a op b)` as they are; else 0. */
  private plainLevel(e: Extract<Expr, { kind: 'binary' }>): number {
    const level = e.op === '+' || e.op === '-' ? 1 : e.op === '*' || e.op === '/' || e.op === '%' ? 2 : 0
    if (!level || !e.type || e.type === 'bool' || e.type === 'i32') return 0
    const ns = this.program.registry.findNumberSystem(e.type)
    return ns && !ns.arithmetic && !ns.round ? level : 0
  }

  private binaryCode(e: Extract<Expr, { kind: 'binary' }>, a: string, b: string): string {
    const t = e.type
    switch (e.op) {
      case '&&':
      case '||':
      case '<':
      case '<=':
      case '>':
      case '>=':
        return `(${a} ${e.op} ${b})`
      case '==':
        return `(${a} === ${b})`
      case '!=':
        return `(${a} !== ${b})`
    }
    if (t === 'bool') {
      if (e.op === '^') return `(${a} !== ${b})`
      if (e.op === '&') return `(${a} && ${b})`
      if (e.op === '|') return `(${a} || ${b})`
    }
    const ar = t ? this.program.registry.findNumberSystem(t)?.arithmetic : undefined
    if (ar) {
      const op = e.op
      const bb = op === '**' && e.right.type === t ? this.decode(t, b) : b
      return `rt.prims[${this.gen.prim(`$op$${t}$${op}`, (x: number, y: number) => ar.binary(op, x, y))}](${a}, ${bb})`
    }
    if (t === 'i32') {
      switch (e.op) {
        case '*':
          return `Math.imul(${a}, ${b})`
        case '^':
        case '&':
        case '|':
          return `(${a} ${e.op} ${b})`
        case '**':
          return `(Math.pow(${a}, ${b}) | 0)`
        default:
          return `((${a} ${e.op} ${b}) | 0)`
      }
    }
    // x ** 2 is x * x, the same double without the call: inline for a name (a variable or a
    // shared value), else through $sq (evaluated where the expression is, as under && and ||)
    if (e.op === '**' && e.right.kind === 'num' && e.right.value === 2) {
      return this.round(t, /^[A-Za-z_$][\w$]*$/.test(a) ? `(${a} * ${a})` : `$sq(${a})`)
    }
    if (e.op === '**') return this.round(t, e.right.kind === 'num' ? `Math.pow(${a}, ${b})` : `$pow(${a}, ${b})`)
    return this.round(t, `(${a} ${e.op} ${b})`)
  }

  private call(e: Extract<Expr, { kind: 'call' }>): string {
    const args = () =>
      e.args.map((a) => (a.kind === 'var' && typeof a.type === 'object' ? this.js(a.name) : this.expr(a)))
    const name = e.callee
    if (name.startsWith('$host')) {
      // the value must be a number (see \`hostNumber\`): checked where the call site is known
      const k = Number(name.slice(5))
      const site = this.gen.site('runtime/host-result', e.loc, () => '')
      return `rt.hostNumber(rt.hosts[${k}](${args().join(', ')}), ${k}, ${site})`
    }
    switch (name) {
      case 'f64':
        return this.decode(e.args[0]!.type as ScalarTypeName, this.expr(e.args[0]!))
      case 'f32': {
        // (a literal converted here, once; a value already in f32's representation as it is)
        const x = e.args[0]!
        if (x.kind === 'num' && (x.type === 'i32' || x.type === 'f64' || x.type === 'f32'))
          return num(Math.fround(x.value))
        if (x.type === 'f32' && this.representable(x)) return this.expr(x)
        return `Math.fround(${this.decode(x.type as ScalarTypeName, this.expr(x))})`
      }
      case 'i32':
        return `(Math.trunc(${this.decode(e.args[0]!.type as ScalarTypeName, this.expr(e.args[0]!))}) | 0)`
      case 'div':
        return `(Math.trunc(${this.expr(e.args[0]!)} / ${this.expr(e.args[1]!)}) | 0)`
      case 'len':
        return `${this.js((e.args[0] as { name: string }).name)}.length`
      // two arrays share no memory (see \`apart.ts\` of \`@tenet/ir\`)
      case '$apart': {
        const [a, b] = args()
        return `$apart(${this.gen.apartSite()}, ${a}, ${b})`
      }
      // a term pushed on the tape, and the last one popped (see \`replay-uncall.ts\` of \`@tenet/ir\`)
      // (on the function's own copies of the tape and its top, taken at entry and given back at exit:
      // locals that V8 keeps in registers, where the module's \`let\` would be loaded and stored per term)
      case '$record': {
        const [T, tp] = this.tape()
        const term = this.expr(e.args[0]!)
        // (with checks on, the magnitudes of f64 terms summed too, for the bound of
        // \`replay-bound.ts\`; of f32 ones, the update sums the element's new value: see \`summedRecord\`)
        const summed = this.summedRecord(e)
        if (summed) this.tapeSum ??= [this.fresh('sum'), this.fresh('term')]
        if (CALLS_OUT.test(term)) {
          // a term that calls plugin code, which may call the module again and grow the tape:
          // the term first, then the slot (JS takes \`T[tp++]\`'s array and index before the
          // value it stores, so the term's value would land in the array the inner call replaced)
          const t = (this.tapeTerm ??= this.fresh('term'))
          const pushed = `(${t} = ${term}, (${tp} < ${T}.length || (${T} = $grow())), ${T}[${tp}++] = ${t})`
          return summed === 'term' ? `(${pushed}, ${this.tapeSum![0]} += Math.abs(${t}), ${t})` : pushed
        }
        const push = `((${tp} < ${T}.length || (${T} = $grow())), ${T}[${tp}++] = ${term})`
        if (summed !== 'term') return push
        const [sum, t] = this.tapeSum!
        return `(${t} = ${push}, ${sum} += Math.abs(${t}), ${t})`
      }
      case '$replayed': {
        const [T, tp] = this.tape()
        return `${T}[--${tp}]`
      }
      // the reserved calls of run-time checks (see `insert-checks.ts`)
      case '$inrange':
        return `(${this.expr(e.args[0]!)} >>> 0 < ${this.expr(e.args[1]!)})`
      case '$factor': {
        const f = this.expr(e.args[0]!)
        if (/^[\w$]+$/.test(f)) return `(${f} !== 0 && ${f} - ${f} === 0)`
        return `rt.factor(${f})`
      }
      case '$near': {
        // a local an undoing update set to +0 or NaN, against zero: equal to zero or not
        const [a0, b0] = e.args as [Expr, Expr]
        if (a0.kind === 'var' && b0.kind === 'num' && b0.value === 0 && this.undoneLocals.has(this.js(a0.name)))
          return `(${this.js(a0.name)} === 0)`
        // |a − b| ≤ tol · max(1, |b|) (or a === b), through the module's function, except against
        // a literal zero: in a large function (a batch of series, three lanes inlined; bundle
        // adjustment's loop over observations, 18 ancillas deallocated per observation) V8's
        // inlining budget is spent before the deallocation checks, and each $near was a call.
        // - a name: written a === 0 || |a| ≤ tol, the same test (a − 0 is a, max(1, |0|) is 1, any
        //   tolerance, NaN included) (Bessel batch with checks, in-process CPU time: 91 → 61 ns per
        //   z; single z 59 → 57 ns; as |a| ≤ tol alone the series ran its checks ~40% slower);
        // - another expression, in a loop, with a tolerance ≥ 0: |a| ≤ tol (a === 0 is |a| = 0 ≤ tol;
        //   NaN fails both) (bundle adjustment with checks: 2.2× → 1.3× the plain-TS objective).
        const a = this.expr(e.args[0]!)
        const b = e.args[1]!
        if (b.kind === 'num' && b.value === 0) {
          if (/^[\w$]+$/.test(a)) return `(${a} === 0 || Math.abs(${a}) <= ${TOLERANCE})`
          if (this.loops > 0 && this.options.tolerance >= 0) return `(Math.abs(${a}) <= ${TOLERANCE})`
        }
        return `$near(${a}, ${this.expr(b)})`
      }
      case SUM_BOUND: {
        // the test that a sum's uncompute would leave it within the tolerance (see \`sum-bound.ts\`)
        const [y, a, b, inclusive] = e.args as Expr[]
        return sumBoundTest(
          this.expr(y!),
          this.expr(a!),
          this.expr(b!),
          (inclusive as { value: number }).value,
          TOLERANCE,
        )
      }
      case '$zeros': {
        // one rule with scalar ancillas: float elements within the tolerance of zero, exact ones exactly zero
        const a = e.args[0] as Extract<Expr, { kind: 'var' }>
        const ens = this.program.registry.findNumberSystem((a.type as { elem: string }).elem)
        const helper = ens && !ens.exact ? '$allNear' : '$allZero'
        const v = this.js(a.name)
        const args = `${v}, ${this.expr(e.args[1]!)}`
        // (the deallocation check of a pooled array: where the function pools, it zeroes the array
        // as it checks it and marks the pool's array zeroed, see \`pooled\`)
        const pool = this.poolOf.get(a.name)
        if (pool === undefined || !/^\w+$/.test(v) || args.includes(ZCHECK)) return `${helper}(${args})`
        return `${ZCHECK}${pool}${ZCHECK}${helper}${ZCHECK}${v}${ZCHECK}${args}${ZCHECK}`
      }
      case '$start':
      case '$stop':
      case '$step': {
        const r = this.ranges.get((e.args[0] as { name: string }).name)!
        return r[name === '$start' ? 0 : name === '$stop' ? 1 : 2]
      }
      case 'convert': {
        const ns = this.program.registry.numberSystem(e.type!)
        const x = this.decode(e.args[0]!.type as ScalarTypeName, this.expr(e.args[0]!))
        if (!ns.fromHost) return this.round(e.type, x)
        const k = this.gen.prim(`$convert$${ns.name}`, ns.fromHost)
        return `rt.prims[${k}](${x})`
      }
    }
    const spec = this.program.registry.pure(name)
    const a = args()
    if (spec.emit?.cpu) {
      const code = `(${spec.emit.cpu(...a)})`
      return this.exactOf(e, spec.emit.cpu) ? code : this.round(e.type, code)
    }
    return this.round(e.type, `rt.prims[${this.gen.prim(name, spec.evaluate)}](${a.join(', ')})`)
  }

  /**
   * A load of the head being emitted that takes over the bounds assert just before the statement
   * (see \`foldedBounds\`): \`a[i] ?? rt.fail(…)\`, the assert's own failure, where an element of
   * a typed array reads \`undefined\` exactly when its index is out of range. Marked, so that
   * \`foldedBounds\` finds where it is in the statement's code.
   */
  private foldedLoad(e: Extract<Expr, { kind: 'index' }>, code: string): string {
    if (!this.fold || this.foldOff || !e.inBounds || e.checkedAs || !FOLD_TYPES.has(e.type as string)) return code
    const k = key(e.index)
    const i = this.fold.findIndex((p) => !p.taken && p.array === e.array.name && p.index === k)
    if (i < 0) return code
    this.fold[i]!.taken = true
    return `(${code} ?? ${this.fold[i]!.fail})${FOLD}${i}${FOLD}`
  }

  /**
   * An element load that several statements of the block read (see `reusedLoads`): made into its
   * local (and its flag set) in its first statement, read from the local after that — through the
   * flag while the load may not have been made, making it there when it was not.
   */
  private reusedLoad(o: LoadOccurrence, load: string): string {
    const { local, flag } = o.load
    if (!local) return load
    const made = flag ? `(${flag} = true, ${local} = ${load})` : `(${local} = ${load})`
    if (o.define) return made
    return flag && !o.loaded ? `(${flag} ? ${local} : ${made})` : local
  }

  // ---------- dataviews ----------

  private read(dv: Dataview | Arg): string {
    if (dv.kind === 'neg') return this.round(dv.type, `(-(${this.read(dv.target)}))`)
    return this.expr(dv as Expr)
  }

  /** Whether a dataview is an element stored in its typed array (not a local holding it for a loop). */
  private storedElement(dv: Dataview): boolean {
    return dv.kind === 'index' && !this.promoted?.get(dv.array.name)?.get(key(dv.index))
  }

  /**
   * Shared element addresses: an update `a[e] op= v` loads `a[e]` and stores it again, so a
   * computed index `e` would be written out twice (and computed twice: V8 does not merge the two
   * where e has a division, modulo or a call). Marks e as a value of the statement computed once
   * (see \`expr\`), unless the run already shares it or the element lives in a local.
   */
  private shareAddress(dv: Dataview | Arg): void {
    while (dv.kind === 'neg') dv = dv.target
    if (dv.kind !== 'index' || !this.shared || this.shared.has(dv.index)) return
    const i = dv.index
    if (i.kind === 'num' || i.kind === 'var' || i.kind === 'bool') return
    if (this.promoted?.get(dv.array.name)?.get(key(i))) return
    this.shared.set(i, {})
  }

  /**
   * Emits `dataview = value` (value is JS code already of the right type). `raw`: for the first
   * write `0 + e` of an element (\`value\` is \`(0 + e)\`), the code of e: a loop-carried
   * element whose reads allow it (\`CarriedElement.signFree\`) keeps e in its local and stores
   * \`0 + local\`, so the addition leaves the recurrence's chain.
   */
  private write(dv: Dataview | Arg, value: string, raw?: string, fresh = false): void {
    switch (dv.kind) {
      case 'var':
        this.line(`${this.js(dv.name)} = ${value};`)
        return
      case 'index': {
        const local = this.promoted?.get(dv.array.name)?.get(key(dv.index))
        if (local) {
          this.line(`${local} = ${value};`)
          const flag = this.promotedFlags?.get(local)
          if (flag) this.line(`${flag} = true;`)
          return
        }
        const a = this.js(dv.array.name)
        const carried = this.carried?.writes.get(dv.array.name)
        const k = carried && indexKey(dv.index)
        const w = k === undefined ? undefined : carried?.get(k)
        const bare = w?.signFree === true && raw !== undefined
        if (w) {
          // a loop-carried element (see \`carriedElements\`): the next iteration reads the local
          this.line(`${w.local} = ${bare ? raw : value};`)
          w.emitted++
          // (its store dead, see \`deadCarriedStores\`: only where the value did not read the element)
          if (w.dead !== undefined) {
            w.bare = w.bare === undefined || w.bare === bare ? bare : 'mixed'
            if (fresh) return
          }
        }
        this.line(
          `${a}[${this.indexCode(a, dv.index, dv.loc, dv.array.shown ?? dv.array.name)}] = ${w ? (bare ? `(0 + ${w.local})` : w.local) : value};`,
        )
        return
      }
      case 'neg':
        this.write(dv.target, this.round(dv.type, `(-(${value}))`))
        return
      case 'field': {
        const ns = this.program.registry.numberSystem(dv.target.type as string)
        const set = ns.setField
        if (!set) throw new Error(`cpu backend: the field \`.${dv.field}\` of ${ns.name} is read-only`)
        const f = dv.field
        const k = this.gen.prim(`$set$${ns.name}$${f}`, (v: number, x: number) => set(v, f, x))
        this.write(dv.target as Dataview, `rt.prims[${k}](${this.read(dv.target as Dataview)}, ${value})`)
        return
      }
      default:
        throw new Error(`cpu backend: cannot write to ${(dv as { kind: string }).kind}`)
    }
  }

  // ---------- statements ----------

  /** Index expressions of the loops being emitted that running locals hold (see \`affineIndices\`). */
  private affine: Map<Expr, string> | undefined

  /**
   * Strength reduction of a counting loop's element addresses: in a loop of step ±1 whose body is
   * one run of straight-line statements (updates, bijection calls, scalar ancillas; no checks),
   * each index \`q0 + q1·v + c\` (i32 polynomials; q0 and q1 of names the body never writes, v
   * the loop variable, c a constant, q1 reading a name) reads a local that holds q0 + q1·v,
   * set before the loop for its first value and stepped by ±q1 per iteration: the element
   * \`x[i + 1 + m·l]\` of a column loop reads \`(o + 1) | 0\`. i32 arithmetic wraps (\`| 0\`,
   * \`Math.imul\`), so the sum stepped is the polynomial evaluated, bit for bit. Returns the
   * lines to emit before the loop (\`first\`: the code of the loop variable's first value) and
   * the statement that steps the locals (\`up\`: whether v increases).
   */
  private affineIndices(
    s: Extract<Stmt, { kind: 'for' }>,
    first: string,
    up: boolean,
  ): { before: string[]; step: string } {
    const none = { before: [], step: '' }
    if (this.checking) return none
    const flat = flatten(s.body)
    if (!flat.length || !flat.every((f) => inRun(f.s) && f.s.kind !== 'assert')) return none
    const written = writtenNames(s.body, this.gen.effectful)
    if (!written) return none
    const v = s.variable
    // every index of the body's element accesses, by its base (q0, q1)
    const groups = new Map<string, { q0: Map<string, number>; q1: Map<string, number>; uses: Array<[Expr, number]> }>()
    const visit = (e: Expr): void => {
      if (e.kind === 'index') {
        const p = polynomial(e.index)
        if (p) {
          const q0 = new Map<string, number>(),
            q1 = new Map<string, number>()
          let c = 0,
            ok = true
          for (const [m, k] of p) {
            const names = m ? m.split('*') : []
            const at = names.indexOf(v)
            if (names.some((n, i) => (n === v && i !== at) || (n !== v && written.has(n)))) ok = false
            else if (at >= 0) q1.set(names.filter((_, i) => i !== at).join('*'), k)
            else if (m === '') c = k
            else q0.set(m, k)
          }
          // only where the stride reads a name (\`m·l\`): a constant stride (\`i·n + j\` in a loop
          // over j, \`2·j\`) is an add or a scaled add that V8 computes from the hoisted rest, and
          // a stepped local there only adds a value the loop carries (the gradients of Table 1's
          // sum-mat-vec and MLP measured 2.42× → 2.62× and 2.52× → 2.68× with it)
          if (ok && [...q1.keys()].some((m) => m !== '')) {
            const key = JSON.stringify([[...q0].sort(), [...q1].sort()])
            let g = groups.get(key)
            if (!g) groups.set(key, (g = { q0, q1, uses: [] }))
            g.uses.push([e.index, c])
          }
        }
      }
      for (const c of exprChildren(e)) visit(c)
    }
    for (const { s: st } of flat)
      for (const x of stmtExprs(st))
        if (x.kind !== 'neg' && x.kind !== 'field') visit(x as Expr)
        else visit((x as { target: Expr }).target)
    if (!groups.size) return none
    const term = (m: string, k: number): string => {
      const names = m ? m.split('*').map((n) => this.js(n)) : []
      let code = names.length ? names.reduce((a, b) => `Math.imul(${a}, ${b})`) : String(k)
      if (names.length && k !== 1) code = `Math.imul(${k}, ${code})`
      return code
    }
    const poly = (q: Map<string, number>): string =>
      q.size ? `((${[...q].map(([m, k]) => term(m, k)).join(' + ')}) | 0)` : '0'
    const before: string[] = []
    const steps: string[] = []
    this.affine = new Map(this.affine ?? [])
    for (const g of groups.values()) {
      const o = this.fresh('o'),
        d = this.fresh('d')
      before.push(`const ${d} = ${poly(g.q1)};`)
      before.push(`let ${o} = (${poly(g.q0)} + Math.imul(${d}, ${first})) | 0;`)
      steps.push(`${o} = (${o} ${up ? '+' : '-'} ${d}) | 0`)
      for (const [e, c] of g.uses) this.affine.set(e, c === 0 ? o : `((${o} ${c < 0 ? '-' : '+'} ${Math.abs(c)}) | 0)`)
    }
    return { before, step: steps.join(', ') }
  }

  /** Array elements held in locals while the current loop runs, by array name and index key (see cse.ts). */
  private promoted: Map<string, Map<string, string>> | undefined
  /**
   * The elements (\`array[key]\`) of \`promoted\` that a loop keeps in locals with checks on
   * (pass \`promote-checked\`, see \`unaliasedPromotions\`): their bounds asserts become loads of their own.
   */
  private promotedBounds: Set<string> | undefined
  /**
   * The locals of \`promoted\` that hold an f32 element that not every iteration of its loop
   * writes, with the flag each write sets (see \`forStmt\`): the store after the loop is made
   * only where the flag is set.
   */
  private promotedFlags: Map<string, string> | undefined
  /** The recording calls whose uncall \`replay-bound\` may leave out, with the local that keeps the tape's top before each. */
  private readonly replayCalls = new Map<Stmt, { top: string; sum: string } | undefined>()
  /** Those uncalls (see \`replay-bound.ts\`). */
  private readonly replayUncalls = new Map<Stmt, ReplayBound>()
  /**
   * The loop-carried elements of the loops being emitted (see \`carriedElements\`), by array and
   * index key: the local a read of the element takes (\`reads\`), the local the write of the
   * element sets (\`writes\`, with how many times it was emitted, and whether it may hold the
   * value of a first write before its \`0 +\`: \`CarriedElement.signFree\`).
   */
  private carried:
    | {
        reads: Map<string, Map<string, string>>
        writes: Map<string, Map<string, CarriedWrite>>
      }
    | undefined
  /**
   * The loops of the block being emitted whose carried elements' stores are dead (see
   * \`deadCarriedStores\`), by loop and array: the key of the element the last iteration writes.
   */
  private deadLoops: Map<Stmt, Map<string, string>> | undefined
  /**
   * The arrays whose carried stores a loop of the block dropped, until their deallocation: the
   * key of the element its last iteration wrote (the only one read after it), the code of whether
   * the loop ran, the local that holds what it wrote, and whether the store would have been \`0 +\`
   * that local.
   */
  private lastCarried:
    | Map<string, { key: string; ran: string; local: string; bare: boolean | 'mixed' | undefined }>
    | undefined

  /**
   * Elements a loop kept in locals and stored back when it ended (see \`forStmt\`): the local still
   * holds the element's value for the statements of the same block after the loop, until one
   * writes the array or a name of the index (or calls a function with host effects). Reads there
   * take the local instead of loading the element again (a store followed by a load of the same
   * element: \`q[e] += …\` in a loop over j, then \`sqrt(q[e])\`). By array, then index key: the
   * local and the names the index reads.
   */
  private kept: Map<string, Map<string, { local: string; names: Set<string> }>> | undefined
  /** Values computed once in the statement being emitted (see cse.ts). */
  private shared: Map<Expr, Shared> | undefined
  /** The element loads of the statement being emitted that other statements of its block read too (see `reusedLoads`). */
  private loads: Map<Expr, LoadOccurrence> | undefined
  /** The arrays of the current block that any of its reused loads reads (see `reusedLoads`). */
  private reusedArrays: Set<string> | undefined
  /**
   * The \`if\` statements at the top level of the \`while\` body being emitted whose \`else\` arm
   * leaves the loop (\`exits\`, set by pass \`unroll-swaps\`): they end that arm with \`break\`.
   */
  private exitIfs: Set<Stmt> | undefined
  /**
   * Of the block being emitted (see \`firstUpdatesOfZeros\`), by position in its flattened
   * statements: the updates \`x += e\` / \`x -= e\` of a scalar ancilla that holds zero where they
   * run, which add the value to a literal zero (and, where the value is already in the type's
   * representation, \`representable\`, write the sum without rounding it again), and the update
   * that undoes each.
   */
  private zeroMarks: ZeroMarks | undefined
  /** The position of the statement being emitted in its block's flattened statements. */
  private flatIndex = -1
  /**
   * Of the block being emitted, by position: for an undoing update (see \`zeroMarks\`), the shared
   * value (a \`const\` of the generated code) that the first update added to zero, exactly. Where
   * the undoing update subtracts that same value, the ancilla is then \`(0 + V) − V\`, which is
   * \`V − V\` bit for bit (+0, or NaN when V is not finite).
   */
  private addedToZero: Map<number, string> | undefined
  /**
   * The locals that an undoing update (see \`addedToZero\`) has just set to \`V − V\`, +0 or NaN,
   * and that nothing has written since (forgotten at any statement that is not an update, an
   * assert, an allocation or a deallocation): the deallocation check \`$near(x, 0)\` of one is
   * \`x === 0\`, the same answer for +0 and NaN whatever the tolerance.
   */
  private readonly undoneLocals = new Set<string>()
  /**
   * The float (f64, f32) scalar locals, by IR name, that hold a value that is never −0 nor
   * negative (see \`neverNegative\`) and that nothing has written since: a first update of a fresh
   * ancilla by such a value, or an undoing update (\`V − V\`, +0 or NaN). Forgotten as
   * \`undoneLocals\` are (at any statement other than an update, an assert, an allocation or a
   * deallocation) and at the end of every block.
   */
  private readonly nonNegative = new Set<string>()

  private block(body: Stmt[]): void {
    // (with checks on: the uncomputes of sums that a round-off bound may leave out, each as an \`if\`
    // of the bound's test over the uncompute itself, see \`sum-bound.ts\`)
    if (this.checking && CHECKED_PASSES.has('sum-bound') && !disabledPasses.has('sum-bound')) {
      const arrays = new Set(this.f.params.filter((p) => p.type.kind === 'array').map((p) => p.name))
      const bounded = sumBounds(body, this.program, arrays)
      if (bounded.size) body = body.map((s) => bounded.get(s) ?? s)
    }
    // runs of straight-line statements share their common subexpressions; the \`@unchecked\`
    // blocks are opened so that a run goes on through them (see \`forEachStatement\`); element
    // loads are shared across the whole block, conditions included (see \`reusedLoads\`)
    // (with checks on: the replayed uncalls the bound may leave out, see \`replay-bound.ts\`)
    if (this.checking && CHECKED_PASSES.has('replay-bound') && !disabledPasses.has('replay-bound'))
      for (const [u, b] of replayBounds(body, this.program)) {
        this.replayUncalls.set(u, b)
        this.replayCalls.set(b.call, undefined)
      }
    const loads = reusedLoads(body, this.gen.effectful)
    const saved = this.loads
    const savedArrays = this.reusedArrays
    this.reusedArrays = new Set(
      loads.flatMap((m) => [...m.keys()].flatMap((e) => (e.kind === 'index' ? [e.array.name] : []))),
    )
    const savedMarks = [this.zeroMarks, this.addedToZero, this.flatIndex] as const
    this.zeroMarks = firstUpdatesOfZeros(body)
    this.addedToZero = new Map()
    const savedDead = [this.deadLoops, this.lastCarried] as const
    this.deadLoops =
      this.checking || disabledPasses.has('carried-stores') || disabledPasses.has('carried-elements')
        ? undefined
        : deadCarriedStores(
            body,
            this.gen.effectful,
            new Set(this.f.params.filter((p) => p.type.kind === 'array').map((p) => p.name)),
          )
    let k = 0
    // (the elements kept after a loop of an enclosing block are not followed into this one)
    const savedKept = this.kept
    this.kept = undefined
    // the bounds asserts emitted just before the statement at hand (see \`foldedBounds\`)
    let pending: PendingBounds[] = []
    forEachStatement(
      body,
      (s, unchecked, shared) => {
        this.shared = shared
        this.flatIndex = k
        this.loads = loads[k++]
        this.forget(s)
        for (const o of this.loads!.values()) {
          if (!o.define || o.load.local) continue
          o.load.local = this.fresh('l')
          if (o.load.conditional) o.load.flag = this.fresh('h')
          this.line(`let ${o.load.local} = 0${o.load.flag ? `, ${o.load.flag} = false` : ''};`)
        }
        this.unchecked += unchecked
        const bounds = this.checking ? foldableBounds(s) : undefined
        if (bounds) {
          this.stmt(s)
          const cond = key((s as Extract<Stmt, { kind: 'assert' }>).cond)
          const line = this.lines.length - 1
          // the very check of an assert of the run just made: it cannot fail (nothing in between writes)
          if (pending.some((p) => p.cond === cond)) this.lines[line] = DROPPED
          else pending.push({ ...bounds, cond, line, fail: this.lastFail, taken: false })
        } else if (pending.length && this.checking && FOLDING_HEADS.has(s.kind) && !headCallsHost(s)) {
          const start = this.lines.length
          this.stmt(s, pending)
          this.foldedBounds(pending, start)
          pending = []
        } else {
          pending = []
          this.stmt(s)
        }
        this.unchecked -= unchecked
      },
      this.loweredValues,
      true,
      this.enclosing,
    )
    this.shared = undefined
    this.loads = saved
    this.reusedArrays = savedArrays
    this.kept = savedKept
    ;[this.deadLoops, this.lastCarried] = savedDead
    ;[this.zeroMarks, this.addedToZero, this.flatIndex] = savedMarks
    this.nonNegative.clear()
  }

  /**
   * Bounds asserts folded into the loads they guard. With checks on, \`insert-checks\` puts an
   * \`outOfBounds\` assert before a statement for each element its head reads (\`$inrange(i,
   * len(a))\`, under the condition that the read happens at all), then the statement reads the
   * element: two compares and a branch where V8's own bounds check of the load would do. An element
   * of a typed array reads \`undefined\` exactly when its index is out of range, so the load
   * \`a[i] ?? rt.fail(…)\` fails with the assert's own message, at the same site, with the same
   * values, exactly when the assert would: V8 folds the \`??\` away on a load it has only seen in
   * range. An assert is left out where the statement (\`start\`: its first line) loads its element
   * (\`foldedLoad\`) and the failures keep their order: the asserts left out are the last ones of
   * the run (those kept run first, as before), each loaded exactly once (not dropped, duplicated or
   * made conditional by the code around it: see \`foldsThrough\`), in the run's order. A load that
   * took over an assert that stays checks again what has just been checked (it never fails).
   */
  private foldedBounds(pending: PendingBounds[], start: number): void {
    const count = new Map<number, number>()
    const order: number[] = []
    for (let l = start; l < this.lines.length; l++) {
      const line = this.lines[l]!
      if (!line.includes(FOLD)) continue
      for (const m of line.matchAll(FOLD_MARK)) {
        const i = Number(m[1])
        count.set(i, (count.get(i) ?? 0) + 1)
        order.push(i)
      }
      this.lines[l] = unmark(line)
    }
    let first = pending.length
    while (first > 0 && count.get(first - 1) === 1) {
      if (first < pending.length && order.indexOf(first - 1) > order.indexOf(first)) break
      first--
    }
    for (let i = first; i < pending.length; i++) this.lines[pending[i]!.line] = DROPPED
  }

  /** Drops the kept elements (see \`kept\`) that statement \`s\` may change, before it is emitted. */
  private forget(s: Stmt): void {
    if (!this.kept) return
    const written = writtenNames([s], this.gen.effectful)
    if (!written) {
      this.kept = undefined
      return
    }
    for (const [array, elements] of this.kept) {
      if (written.has(array)) {
        this.kept.delete(array)
        continue
      }
      for (const [k, e] of elements) if ([...e.names].some((n) => written.has(n))) elements.delete(k)
    }
  }

  /** A run-time check (see `insert-checks.ts`): fails with its catalog entry unless \`cond\` holds. */
  private assert(s: Extract<Stmt, { kind: 'assert' }>, fold?: PendingBounds[]): void {
    // \`!c\` fails when c holds
    this.fold = fold
    const fails = s.cond.kind === 'unary' && s.cond.op === '!' ? this.expr(s.cond.arg) : `!${this.expr(s.cond)}`
    this.fold = undefined
    // the message's values, computed only when the check fails (so nothing shared is computed for them)
    const shared = this.shared
    this.shared = undefined
    const values = s.args.flatMap((a) => (typeof a === 'string' ? [] : [this.expr(a)]))
    this.shared = shared
    const message = RUNTIME_CHECKS[s.check as RuntimeCheck] as (...a: unknown[]) => string
    const site = this.gen.site(RUNTIME_CHECK_CODES[s.check as RuntimeCheck], s.loc, (...v) => {
      let k = 0
      return message(...s.args.map((a) => (typeof a === 'string' ? a : v[k++])))
    })
    this.lastFail = `rt.fail(${[site, ...values].join(', ')})`
    const promoted = this.promotedBounds?.size ? foldableBounds(s) : undefined
    if (promoted && this.promotedBounds!.has(`${promoted.array}[${promoted.index}]`) && s.cond.kind === 'call') {
      // the bounds assert of an element a loop keeps in a local (\`promote-checked\`): the
      // element's own load, \`undefined\` exactly when the index is out of range (a typed array),
      // as a folded load checks it (see \`foldedBounds\`): V8 keeps its bounds check and drops the load
      const [i] = s.cond.args
      this.line(`${this.js(promoted.array)}[${this.expr(i!)}] ?? ${this.lastFail};`)
      return
    }
    this.line(`if (${fails}) ${this.lastFail};`)
  }

  /** How many loops enclose the statement being emitted. */
  private loops = 0

  /** A loop's body (see \`loops\`). */
  private loopBody(body: Stmt[], loop?: Extract<Stmt, { kind: 'for' }>): void {
    this.loops++
    // (a counting loop's range tells its body something: see \`nonzeroInLoops\`)
    const facts = loop !== undefined && !disabledPasses.has('loop-facts') ? loop : undefined
    if (facts) this.enclosing.push({ loop: facts, written: this.writtenIn(facts) })
    try {
      this.block(body)
    } finally {
      this.loops--
      if (facts) this.enclosing.pop()
    }
  }

  /**
   * The counting loops around the code being generated, outermost first, with the names their
   * bodies may write: the runs' store-to-load forwarding keeps an element across a store to
   * another one that a loop's range proves different (see \`nonzeroInLoops\`).
   */
  private readonly enclosing: EnclosingLoop[] = []
  private readonly writtenInLoop = new Map<Stmt, Set<string> | undefined>()
  private writtenIn(loop: Extract<Stmt, { kind: 'for' }>): Set<string> | undefined {
    if (!this.writtenInLoop.has(loop)) this.writtenInLoop.set(loop, writtenNames(loop.body, this.gen.effectful))
    return this.writtenInLoop.get(loop)
  }

  /** \`f()\` with the loads of its expressions free to take over the asserts \`fold\` (see \`foldedBounds\`). */
  private folding<T>(fold: PendingBounds[] | undefined, f: () => T): T {
    this.fold = fold
    try {
      return f()
    } finally {
      this.fold = undefined
    }
  }

  /** Emits a statement; \`fold\`: the bounds asserts just before it that its head's loads may take over (see \`foldedBounds\`). */
  private stmt(s: Stmt, fold?: PendingBounds[]): void {
    if (s.kind !== 'update' && s.kind !== 'assert' && s.kind !== 'alloc' && s.kind !== 'dealloc') {
      this.undoneLocals.clear()
      this.nonNegative.clear()
    } else if (s.kind === 'alloc' || s.kind === 'dealloc') this.nonNegative.delete(s.name)
    switch (s.kind) {
      case 'update': {
        const t = (s.target as { type?: ScalarTypeName }).type
        this.shareAddress(s.target)
        // store-to-load forwarding (see `sharedSubexpressions`): the element's old value where the
        // run already holds it, its new value kept where later statements of the run read it
        // (an element a loop keeps in a local is a local already)
        const sh = s.target.kind === 'index' ? this.shared?.get(s.target) : undefined
        const local = s.target.kind === 'index' && this.promoted?.get(s.target.array.name)?.get(key(s.target.index))
        const stored = local ? undefined : sh?.stored
        const loaded =
          !local && sh?.loaded?.temp !== undefined && !this.loads?.has(s.target as Expr) ? sh.loaded.temp : undefined
        // the first write of an element known to hold zero (see \`UpdateStmt.init\`): zero plus the
        // value, without reading the element, so that a fresh table needs no zeroing
        const zeroOld = s.init === true && s.target.kind === 'index' && !local && loaded === undefined
        const table = s.init === true && s.target.kind === 'index' ? this.tables.get(s.target.array.name) : undefined
        // (a first write that reads the element after all, from a local or an earlier load, needs
        // the table zeroed: one such write keeps the fill)
        if (table !== undefined) (zeroOld ? this.unzeroed : this.zeroed).add(table)
        // a fresh scalar ancilla's first update (see \`zeroMarks\`): zero plus the value
        // (for the types whose zero is the number 0 and whose \`+=\` is JS addition: floats, i32)
        const zeroVar =
          this.zeroMarks?.first.has(this.flatIndex) === true &&
          (t === 'i32' ||
            (t !== undefined &&
              t !== 'bool' &&
              this.program.registry.findNumberSystem(t)?.float === true &&
              !this.program.registry.findNumberSystem(t)?.arithmetic))
        // (the value's loads take over its asserts where the update's code is the value once, in
        // place: not through a number system's own update or rounding code; and the load of the
        // element's old value, evaluated first, takes over the target's own assert, the first of
        // the statement's: `a[i] = ((a[i] ?? rt.fail(…)) + v)`)
        const plainUpdate =
          FOLD_TYPES.has(t as string) &&
          (s.op === '+=' || s.op === '-=' || s.op === '^=' || (t === 'f64' && (s.op === '*=' || s.op === '/=')))
        // (the zero the ancilla holds: -0.0 where it was allocated so, see \`ZeroMarks.negative\`)
        let old = this.zeroMarks?.negative.has(this.flatIndex) === true ? '-0' : '0'
        const v = this.folding(plainUpdate ? fold : undefined, () => {
          if (!zeroOld && !zeroVar) old = loaded ?? (sh ? this.exprCode(s.target as Expr) : this.read(s.target))
          return this.expr(s.value)
        })
        let code: string
        // (a `*=`, `/=` or `^=` may leave a local negative or −0: it no longer counts as never negative)
        if (s.op !== '+=' && s.op !== '-=' && s.target.kind === 'var') this.nonNegative.delete(s.target.name)
        switch (s.op) {
          case '+=':
          case '-=': {
            const float = t !== undefined && t !== 'bool' && this.program.registry.findNumberSystem(t)?.float === true
            const exact = zeroVar && float && (t === 'f64' || this.representable(s.value))
            // the ancilla back to zero from \`0 ± V\` by the same V (see \`addedToZero\`): V − V; and
            // \`y -= y\` (pass \`finite-uncompute\`): +0 or NaN, in the representation unrounded
            const undone =
              float &&
              (this.addedToZero?.get(this.flatIndex) === v ||
                ((t === 'f64' || t === 'f32') &&
                  s.op === '-=' &&
                  s.target.kind === 'var' &&
                  s.value.kind === 'var' &&
                  s.value.name === s.target.name &&
                  v === this.js(s.target.name)))
            // (0 + v is v, bit for bit, where v is never −0: see \`neverNegative\`; the add sat on the
            // chain of every routine's ancillas, r2 → r = sqrt(r2) → s = g·m / (r2·r))
            const plainFloat = t === 'f64' || t === 'f32'
            const bare = zeroVar && plainFloat && s.op === '+=' && this.neverNegative(s.value)
            // (-0 ± v is ±v, bit for bit, for every v: a gradient's zero, see \`ZeroMarks.negative\`)
            const negative = zeroVar && plainFloat && this.zeroMarks?.negative.has(this.flatIndex) === true
            const sum =
              bare || (negative && s.op === '+=') ? `(${v})` : negative ? `(-(${v}))` : `(${old} ${s.op[0]} ${v})`
            code =
              t === 'i32'
                ? `((${old} ${s.op[0]} ${v}) | 0)`
                : undone
                  ? `(${v} - ${v})`
                  : zeroVar && this.representable(s.value)
                    ? // (0 ± v is v, or −v, or +0 for v = −0: in the representation when v is, as rounding would leave it)
                      sum
                    : this.round(t, sum)
            if (s.target.kind === 'var') {
              if (plainFloat && (bare || undone)) this.nonNegative.add(s.target.name)
              else this.nonNegative.delete(s.target.name)
            }
            const undo = this.zeroMarks?.undoneBy.get(this.flatIndex)
            if (exact && undo !== undefined && /^c\d+$/.test(v)) this.addedToZero?.set(undo, v)
            if (s.target.kind === 'var') {
              const x = this.js(s.target.name)
              if (undone) this.undoneLocals.add(x)
              else this.undoneLocals.delete(x)
            }
            break
          }
          case '^=': {
            // a bool element is a byte: store the xor of two flags, each 0 or 1 (where `!==` of two
            // booleans gives a boolean the array must convert; a byte other than 0 or 1 is true)
            if (t === 'bool')
              code = this.storedElement(s.target) ? `((${old} ? 1 : 0) ^ (${v} ? 1 : 0))` : `(${old} !== ${v})`
            else code = `(${old} ^ ${v})`
            break
          }
          default: {
            const ns = this.program.registry.numberSystem(t!)
            const op = s.op
            if (ns.float) {
              // (with checks on, the factor is checked nonzero and finite by the assert before)
              const f = this.fresh('k')
              this.line(`const ${f} = ${v};`)
              code = this.round(t, `(${old} ${op[0]} ${f})`)
            } else if (ns.emitUpdate?.cpu) code = ns.emitUpdate.cpu(op, old, v)
            else
              code = `rt.prims[${this.gen.prim(`$update$${t}$${op}`, (a: number, b: number) => ns.update!(op, a, b))}](${old}, ${v})`
          }
        }
        if (this.summedRecord(s.value) === 'partial' && this.tapeSum) {
          // the magnitude of the element's new value summed (see \`replay-bound.ts\`): the value
          // this statement stores, rounded as the element holds it
          const [sum, w] = this.tapeSum
          code = `(${w} = ${code}, ${sum} += Math.abs(${w}), ${w})`
        }
        if (stored) {
          stored.temp = this.fresh('o')
          this.line(`const ${stored.temp} = ${code};`)
          code = stored.temp
          // a later update of the element starts from the kept value, and nothing reads the
          // element from memory before it: the store is dead (see \`Shared.overwrittenBy\`)
          // (not for an array whose elements the block's reused loads read: they may load it)
          if (sh?.overwrittenBy && !this.reusedArrays?.has((s.target as { array: { name: string } }).array.name)) return
        }
        // (a first write \`0 + v\` of an f64 element: a carried local may keep v, see \`write\`)
        const raw = zeroOld && t === 'f64' && s.op === '+=' && code === `(0 + ${v})` ? `(${v})` : undefined
        this.write(s.target, code, raw, zeroOld)
        return
      }
      case 'callstmt':
        return this.callStmt(s)
      case 'alloc': {
        const v = this.bind(s.name)
        if (s.value.kind === 'emptystack') this.line(`let ${v} = [];`)
        else if (s.value.kind === 'call' && s.value.callee === 'zeros') {
          const ctor = this.program.registry.numberSystem((s.type as { elem: string }).elem).arrayType
          const hoisted = this.hoisted.get(s)
          if (hoisted) {
            // the pool's array was taken before the loop (see \`hoistAllocs\`): zeroed here where it must be
            this.poolOf.set(s.name, hoisted.pool)
            if (s.overwritten) this.tables.set(s.name, hoisted.pool)
            this.line(`let ${v} = ${TAKE}${hoisted.pool}${TAKE}${ctor}${TAKE}${hoisted.n}${TAKE}${hoisted.h}${TAKE};`)
            return
          }
          // a length that is not a whole number ≥ 0 is the catalog's error, not a JS RangeError
          const site = this.gen.check('arrayLength', s.loc, (n) => [s.name, n])
          const n = this.fresh('n'),
            pool = this.gen.pool()
          this.pools.push(pool)
          this.poolOf.set(s.name, pool)
          if (s.overwritten) this.tables.set(s.name, pool)
          this.line(
            `const ${n} = rt.length(${this.expr((s.value as Extract<Expr, { kind: 'call' }>).args[0]!)}, ${site});`,
          )
          this.line(`let ${v} = ${POOL}${pool}${POOL}${ctor}${POOL}${n}${POOL};`)
        } else {
          const value = this.folding(FOLD_TYPES.has((s.type as { name: string }).name) ? fold : undefined, () =>
            this.expr(s.value as Expr),
          )
          this.line(
            `let ${v} = ${this.representable(s.value as Expr) ? value : this.round((s.type as { name: string }).name, value)};`,
          )
        }
        return
      }
      case 'dealloc': {
        // (checked by the assert before it: see \`insert-checks.ts\`)
        if (this.lastCarried?.has(s.name)) {
          this.lastCarried = new Map(this.lastCarried)
          this.lastCarried.delete(s.name)
        }
        this.names.delete(s.name)
        return
      }
      case 'if': {
        const pre = this.fresh('c')
        this.line(`const ${pre} = ${this.folding(fold, () => this.expr(s.pre))};`)
        // (only the condition is the statement's head: see \`reusedLoads\`)
        this.loads = undefined
        this.line(`if (${pre}) {`)
        this.indent++
        this.scoped(() => this.block(s.then))
        this.indent--
        if (s.else.length) {
          this.line('} else {')
          this.indent++
          this.scoped(() => this.block(s.else))
          if (this.exitIfs?.has(s)) this.line('break;')
          this.indent--
        }
        this.line('}')
        return
      }
      case 'while': {
        this.line(`while (${this.expr(s.pre)}) {`)
        this.indent++
        const saved = this.exitIfs
        this.exitIfs = new Set(s.body.filter((x) => x.kind === 'if' && x.exits && x.else.length))
        this.scoped(() => this.loopBody(s.body))
        this.exitIfs = saved
        this.indent--
        this.line('}')
        return
      }
      case 'for':
        return this.forStmt(s)
      case 'push': {
        const st = this.js(s.stack.name)
        this.line(`${st}.push(${this.read(s.value)});`)
        this.write(s.value, (s.value as { type?: string }).type === 'bool' ? 'false' : '0')
        return
      }
      case 'pop': {
        const st = this.js(s.stack.name)
        const site = this.gen.check('emptyStack', s.loc, () => [s.stack.shown ?? s.stack.name])
        this.line(`if (${st}.length === 0) rt.fail(${site});`)
        this.write(s.value, `${st}.pop()`)
        return
      }
      case 'safe': {
        // a host call's value is ignored, whatever it is
        const e = s.expr
        if (e.kind === 'call' && e.callee.startsWith('$host')) {
          const args = e.args.map((a) =>
            a.kind === 'var' && typeof a.type === 'object' ? this.js(a.name) : this.expr(a),
          )
          this.line(`rt.hosts[${Number(e.callee.slice(5))}](${args.join(', ')});`)
        } else this.line(`${this.expr(e)};`)
        return
      }
      case 'assert':
        return this.assert(s, fold)
      case 'unchecked': {
        // no JS block and no new scope: `@unchecked` only switches the checks off
        this.unchecked++
        this.block(s.body)
        this.unchecked--
        return
      }
      default:
        throw new Error(`cpu backend: \`${s.kind}\` is not core IR (preprocess first)`)
    }
  }

  private scoped(f: () => void): void {
    const saved = new Map(this.names)
    f()
    this.names = saved
  }

  /**
   * The iterations a counting loop runs per pass: more than one for a body of at most
   * {@link PAIRED_MAX_STATEMENTS} straight-line statements (updates, bijection calls, scalar
   * ancillas, run-time checks: no loop or branch) that reads or writes an array element at an
   * index of the loop variable: two, or {@link CALL_FREE_COPIES} where no statement calls anything
   * (no \`call\` expression, no bijection call; a bounds check \`$inrange\` is two comparisons). V8
   * checks a typed array's map and reloads its length and data pointer on every pass of a loop
   * whose arrays are parameters (once per array per pass; the graph embedding's adjoint
   * \`g[a + j] += s·(x[a + j] − x[b + j])\` checked \`x\` and \`g\` per element): the iterations of
   * one pass share them. The iterations run in their order, each as the loop ran it, so the result
   * is the same to the last bit. With checks on, each copy carries its iteration's asserts, at the
   * same places, on that iteration's values: a check fails in the iteration, with the message and
   * values, that it fails in without the copies, after the same writes (the body of a CSR
   * product's row with checks on is its scatter and the bounds check of \`y[col[q]]\`). Not in a
   * function smaller than {@link PAIRED_MIN_NODES}, but for a loop whose bounds read an element.
   */
  private copiesPerPass(s: Extract<Stmt, { kind: 'for' }>): number {
    // (in a small function, only a loop whose bounds read an element)
    if (!this.large && !readsElement(s.start) && !readsElement(s.stop)) return 1
    const flat = flatten(s.body)
    // (with checks on, a body's asserts go with it into every copy, and count as its statements)
    if (!flat.length || flat.length > PAIRED_MAX_STATEMENTS) return 1
    if (!flat.every((f) => inRun(f.s))) return 1
    let indexed = false
    let calls = false
    const visit = (e: Expr): void => {
      if (e.kind === 'index' && readNames(e.index).has(s.variable)) indexed = true
      if (e.kind === 'call') calls = true
      for (const c of exprChildren(e)) visit(c)
    }
    // an assert's condition: a bounds test `$inrange(i, len(a))` is two comparisons, no call
    // (its message's values are computed only where it fails)
    const visitCheck = (e: Expr): void => {
      if (e.kind === 'call' && (e.callee === '$inrange' || e.callee === 'len')) {
        for (const c of e.args) visitCheck(c)
        return
      }
      if (e.kind === 'index' && readNames(e.index).has(s.variable)) indexed = true
      if (e.kind === 'call') calls = true
      for (const c of exprChildren(e)) visitCheck(c)
    }
    for (const { s: st } of flat) {
      if (st.kind === 'assert') {
        visitCheck(st.cond)
        continue
      }
      if (st.kind !== 'update' && st.kind !== 'alloc' && st.kind !== 'dealloc') calls = true
      for (const x of stmtExprs(st))
        if (x.kind !== 'neg' && x.kind !== 'field') visit(x as Expr)
        else visit((x as { target: Expr }).target)
    }
    if (!indexed) return 1
    return calls ? 2 : CALL_FREE_COPIES
  }

  /** Whether this function is past {@link PAIRED_MIN_NODES} (see \`copiesPerPass\`). */
  private get large(): boolean {
    this.nodes ??= irNodes(this.f.body)
    return this.nodes >= PAIRED_MIN_NODES
  }
  private nodes: number | undefined

  /**
   * Declares, before loop \`s\` (whose variable starts at \`init\`), the locals of its loop-carried
   * elements (see \`carriedElements\`): each holds the element the first iteration reads, loaded
   * here, then what the previous iteration wrote; and sets \`carried\` for the body.
   */
  private carriedLocals(
    s: Extract<Stmt, { kind: 'for' }>,
    init: string,
  ): Array<{ array: string; read: string; write: CarriedWrite }> {
    if (disabledPasses.has('carried-elements')) return []
    const els = carriedElements(
      s,
      this.gen.effectful,
      new Set(this.f.params.filter((p) => p.type.kind === 'array').map((p) => p.name)),
    )
    if (!els.length) return []
    const reads = new Map(this.carried?.reads ?? [])
    const writes = new Map(this.carried?.writes ?? [])
    const out: Array<{ array: string; read: string; write: CarriedWrite }> = []
    const dead = this.deadLoops?.get(s)
    const v0 = this.fresh('f')
    this.line(`const ${v0} = ${init};`)
    for (const el of els) {
      const arr = this.js(el.array)
      let index = ''
      this.scoped(() => {
        this.names.set(s.variable, v0)
        index = this.expr(el.sample.index)
      })
      const r = this.fresh('r'),
        w = this.fresh('w')
      // (an index out of range reads undefined: the loop's own first read would, and with checks
      // on its assert fails before the value is used)
      this.line(`let ${r} = ${arr}[${index}], ${w} = 0;`)
      const rm = new Map(reads.get(el.array) ?? [])
      rm.set(el.read, r)
      reads.set(el.array, rm)
      const wm = new Map(writes.get(el.array) ?? [])
      const last = dead?.get(el.array)
      const write: CarriedWrite = {
        local: w,
        emitted: 0,
        signFree: el.signFree,
        ...(last !== undefined ? { dead: last } : {}),
      }
      wm.set(el.write, write)
      writes.set(el.array, wm)
      out.push({ array: el.array, read: r, write })
    }
    this.carried = { reads, writes }
    return out
  }

  /**
   * The promotions of loop \`s\` (see \`promotableElements\`) that stay right where the unchecked
   * entry (\`.core\`) is given one memory for two array parameters (the aliasing rule holds at the
   * checked entries only): an element of an array parameter the loop only reads, where the loop
   * writes no array parameter (the local would miss a write through the other name); an element of
   * one it writes, where the loop touches no other array parameter (reads through the other name
   * would miss the element's new value, and the store after the loop would undo writes through
   * it). The ancillas a function allocates are fresh memory. (With checks on, \`promote-checked\`.)
   */
  private unaliasedPromotions(s: Extract<Stmt, { kind: 'for' }>, found: Promotion[]): Promotion[] {
    if (!found.length) return found
    const params = new Set(this.f.params.filter((p) => p.type.kind === 'array').map((p) => p.name))
    const written = writtenNames(s.body, this.gen.effectful)
    if (!written) return []
    const used = new Set<string>(written)
    walk(s.body, (st) => {
      for (const e of stmtExprs(st)) readNames(e as Expr, used)
    })
    const usedParams = [...used].filter((n) => params.has(n))
    const writtenParams = [...written].filter((n) => params.has(n))
    return found.filter(
      ({ name, element }) =>
        // (an index that calls the host is not evaluated once more, before the loop)
        !callsHost(element.index) &&
        (!params.has(name) || (written.has(name) ? usedParams.every((n) => n === name) : writtenParams.length === 0)),
    )
  }

  private forStmt(s: Extract<Stmt, { kind: 'for' }>): void {
    const a = this.fresh('a'),
      b = this.fresh('b'),
      st = this.fresh('s'),
      n = this.fresh('n'),
      k = this.fresh('k')
    this.line(
      `const ${a} = ${this.expr(s.start)}, ${b} = ${this.expr(s.stop)}, ${st} = ${s.step ? this.expr(s.step) : '1'};`,
    )
    // (only the range is the statement's head: see \`reusedLoads\`)
    this.loads = undefined
    if (s.step && !(s.step.kind === 'num')) {
      const site = this.gen.check('zeroStep', s.loc, () => [])
      this.line(`if (${st} === 0) rt.fail(${site});`)
    }
    const stepConst = s.step?.kind === 'num' ? s.step.value : s.step ? undefined : 1
    // array elements the loop keeps in locals (with checks on, pass \`promote-checked\`: see \`unaliasedPromotions\`)
    const saved = this.promoted
    const savedBounds = this.promotedBounds
    const savedFlags = this.promotedFlags
    // (an f32 element is stored back only where the program wrote it: a float32 loaded as a double
    // and stored back unwritten would quiet a signalling NaN. Where a statement outside every
    // branch writes it, every iteration that runs writes it, and the store is made where the loop
    // ran; elsewhere each write of its local sets a flag, and the store is made where it is set)
    const stores: Array<[string, string | undefined]> = []
    let ran = 'true'
    const ranGuarded: number[] = []
    const keep: Array<[string, string, string, Set<string>]> = []
    const checkedPromotion =
      this.checking && CHECKED_PASSES.has('promote-checked') && !disabledPasses.has('promote-checked')
    if (!this.checking || checkedPromotion) {
      const found = promotableElements(s.variable, s.body, {
        branches: true,
        arguments: this.argumentUses,
        ...(this.checking ? { asserts: true, anyBranch: true } : {}),
      })
      const els = this.checking ? this.unaliasedPromotions(s, found) : found
      if (els.length) {
        const map = new Map(saved ?? [])
        const bounds = new Set(savedBounds ?? [])
        const flags = new Map(savedFlags ?? [])
        for (const { name, element, write } of els) {
          const arr = this.js(name),
            ix = this.fresh('x'),
            r = this.fresh('r')
          this.line(`const ${ix} = ${this.expr(element.index)};`)
          // (with checks on: an index out of range reads undefined, a number's 0 instead, never
          // used: the bounds assert of the first access fails before; the store after the loop drops it)
          this.line(`let ${r} = ${arr}[${ix}]${this.checking ? ' ?? 0' : ''};`)
          const m = new Map(map.get(name) ?? [])
          m.set(key(element.index), r)
          map.set(name, m)
          if (this.checking) bounds.add(`${name}[${key(element.index)}]`)
          if (write) {
            let guard: string | undefined
            if ((element as { type?: string }).type === 'f32') {
              if (writtenOnEveryIteration(s.body, name, key(element.index))) ranGuarded.push(stores.length)
              else {
                guard = this.fresh('w')
                this.line(`let ${guard} = false;`)
                flags.set(r, guard)
              }
            }
            stores.push([`${arr}[${ix}] = ${r};`, guard])
            if (!this.checking) keep.push([name, key(element.index), r, readNames(element.index)])
          }
        }
        this.promoted = map
        this.promotedBounds = bounds
        this.promotedFlags = flags
      }
    }
    const body = () => {
      this.indent++
      this.scoped(() => {
        this.names.set(s.variable, this.fresh('i'))
        const iv = this.js(s.variable)
        // int32 arithmetic keeps the index a small integer (a float index takes V8's generic,
        // allocating element-access path)
        this.line(
          `const ${iv} = ${s.reverse ? `(${a} + Math.imul(${n} - 1 - ${k}, ${st})) | 0` : `(${a} + Math.imul(${k}, ${st})) | 0`};`,
        )
        this.loopBody(s.body, s)
      })
      this.indent--
    }
    if (stepConst === 1 || stepConst === -1) {
      // the common cases: a plain counting loop, up or down (a reversed one the other way)
      const iv = this.fresh('i')
      const up = stepConst === 1 ? !s.reverse : s.reverse === true
      const first = !s.reverse ? a : stepConst === 1 ? (s.inclusive ? b : `(${b} - 1)`) : s.inclusive ? b : `(${b} + 1)`
      // element addresses stepped with the loop variable (see \`affineIndices\`)
      const savedAffine = this.affine
      const { before, step } = this.affineIndices(s, first, up)
      for (const l of before) this.line(l)
      // whether the loop goes on at value \`x\` of its variable
      const runs = (x: string) =>
        stepConst === 1 && !s.reverse
          ? `${x} ${s.inclusive ? '<=' : '<'} ${b}`
          : stepConst === 1
            ? `${x} >= ${a}`
            : !s.reverse
              ? `${x} ${s.inclusive ? '>=' : '>'} ${b}`
              : `${x} <= ${a}`
      const init = s.reverse ? first : a
      // several iterations per pass (see \`copiesPerPass\`): not with stepped addresses
      const copies = !before.length && !step ? this.copiesPerPass(s) : 1
      const paired = copies > 1
      const next = paired ? `${iv} ${up ? '+=' : '-='} ${copies}` : `${iv}${up ? '++' : '--'}${step ? `, ${step}` : ''}`
      // elements one iteration writes and the next reads, kept in locals (see \`carriedElements\`)
      const savedCarried = this.carried
      // (the index of the first read as the program computes it, not through the stepped addresses)
      const stepped = this.affine
      this.affine = savedAffine
      const carries = this.carriedLocals(s, init)
      this.affine = stepped
      ran = runs(init)
      this.hoistAllocs(s, ran)
      // A loop whose bounds read an element (a CSR row, an adjacency list: often a handful of
      // iterations) runs its first pass before the loop, in a labelled block that a \`break\` leaves
      // where the loop would have ended: that pass shares the map checks, lengths and data
      // pointers V8 loaded in the pass of the code around it (an outer loop's iteration), so a
      // row of at most \`copies\` elements costs no pass of its own. The iterations run in the same
      // order with the same values (the kernels' CSR transpose objective 1.93× → 1.6× the plain
      // objective, its gradient 4.5× → 3.8×, in-process).
      const peel = paired && (readsElement(s.start) || readsElement(s.stop)) ? this.fresh('pass') : undefined
      const copy = (x: string) =>
        this.scoped(() => {
          this.names.set(s.variable, x)
          this.loopBody(s.body, s)
          for (const { read, write } of carries) {
            this.line(`${read} = ${write.local};`)
            if (write.emitted !== 1)
              throw new Error(`cpu backend: a loop-carried element was written ${write.emitted} times in one iteration`)
            write.emitted = 0
          }
        })
      // (no \`| 0\`: a later value of the last pass may lie past the i32 range, where the loop
      // ends as the one-step loop does; each copy in a JS block of its own)
      const pass = (x: string, out: string) => {
        this.line('{')
        this.indent++
        copy(x)
        this.indent--
        this.line('}')
        for (let u = 1; u < copies; u++) {
          const jv = this.fresh('j')
          this.line(`const ${jv} = ${x} ${up ? '+' : '-'} ${u};`)
          this.line(`if (!(${runs(jv)})) ${out};`)
          this.line('{')
          this.indent++
          copy(jv)
          this.indent--
          this.line('}')
        }
      }
      if (peel) {
        this.line(`${peel}: if (${ran}) {`)
        this.indent++
        pass(init, `break ${peel}`)
        this.line(`for (let ${iv} = ${init} ${up ? '+' : '-'} ${copies}; ${runs(iv)}; ${next}) {`)
        this.indent++
        pass(iv, 'break')
        this.indent--
        this.line('}')
        this.indent--
        this.line('}')
      } else {
        this.line(`for (let ${iv} = ${init}; ${runs(iv)}; ${next}) {`)
        this.indent++
        if (paired) pass(iv, 'break')
        else copy(iv)
        this.indent--
        this.line('}')
      }
      this.affine = savedAffine
      this.carried = savedCarried
      // the arrays whose stores the loop dropped: reads after it take the local where it ran
      for (const { array, read, write } of carries) {
        if (write.dead === undefined) continue
        this.lastCarried = new Map(this.lastCarried ?? [])
        this.lastCarried.set(array, { key: write.dead, ran, local: read, bare: write.bare })
      }
    } else {
      // count of values a, a+st, ... before (or up to) b
      this.line(`let ${n} = 0;`)
      // integer arithmetic only (a float count makes V8 box values in the loop): the number of
      // values a, a+st, … before b (up to b when inclusive)
      const gap = s.inclusive ? '' : ' - 1'
      this.line(
        `if (${st} > 0) { if (${a} ${s.inclusive ? '<=' : '<'} ${b}) ${n} = (((${b} - ${a}${gap}) / ${st}) | 0) + 1; } else if (${a} ${s.inclusive ? '>=' : '>'} ${b}) ${n} = (((${a} - ${b}${gap}) / -${st}) | 0) + 1;`,
      )
      ran = `${n} > 0`
      this.hoistAllocs(s, ran)
      this.line(`for (let ${k} = 0; ${k} < ${n}; ${k}++) {`)
      body()
      this.line('}')
    }
    this.promoted = saved
    this.promotedBounds = savedBounds
    this.promotedFlags = savedFlags
    stores.forEach(([st, guard], i) =>
      this.line(guard ? `if (${guard}) ${st}` : ranGuarded.includes(i) ? `if (${ran}) ${st}` : st),
    )
    // the stored locals hold the elements for the statements after the loop (see \`kept\`); the
    // loop itself may have written any of the names (the caller forgets before each statement,
    // and this loop is the statement just emitted)
    if (keep.length) {
      const written = writtenNames([s], this.gen.effectful)
      if (written) {
        this.kept ??= new Map()
        for (const [array, k, local, names] of keep) {
          if ([...names].some((n) => written.has(n))) continue
          const m = this.kept.get(array) ?? new Map()
          m.set(k, { local, names })
          this.kept.set(array, m)
        }
      }
    }
    // the range the loop began with, for the `loopRange` assert after it
    this.ranges.set(s.variable, [a, b, st])
  }

  /** The array allocations taken out of the loops around the code being emitted (see \`hoistAllocs\`). */
  private hoisted = new Map<Stmt, { pool: string; n: string; h: string }>()

  /**
   * Hoists the array allocations that begin a loop's body out of the loop (\`hoist-pools\`): each
   * \`a <- zeros(n)\` of the body's leading run of allocations whose length \`n\` is loop-invariant
   * (see \`hoistableAllocs\` of \`@tenet/ir\`) has its length checked (\`rt.length\`, the allocation's own site and
   * message) and its pool's array taken (made where it has another length) once before the loop,
   * where the loop runs (\`ran\`); each iteration then takes that array as it is (a table never
   * zeroed) or zeroed as an allocation zeroes it (see \`pooled\`). Nothing runs in the first
   * iteration before these allocations, so a length that fails fails at the same point, with the
   * same message and nothing else done, as without the hoist. A function not pooled makes a new
   * array per iteration as before (its length checked once). The point loop of Horner's least
   * squares, a softmax's rows: any routine in a loop that keeps a small array ancilla.
   */
  private hoistAllocs(loop: Extract<Stmt, { kind: 'for' }>, ran: string): void {
    if (disabledPasses.has('hoist-pools')) return
    for (const s of hoistableAllocs(loop, this.gen.effectful)) {
      const ctor = this.program.registry.numberSystem((s.type as { elem: string }).elem).arrayType
      const site = this.gen.check('arrayLength', s.loc, (n) => [s.name, n])
      const n = this.fresh('n'),
        h = this.fresh('h'),
        pool = this.gen.pool()
      this.pools.push(pool)
      this.line(
        `const ${n} = (${ran}) ? rt.length(${this.expr((s.value as Extract<Expr, { kind: 'call' }>).args[0]!)}, ${site}) : 0;`,
      )
      this.line(`const ${h} = (${ran}) ? ${HOIST}${pool}${HOIST}${ctor}${HOIST}${n}${HOIST} : null;`)
      this.hoisted.set(s, { pool, n, h })
    }
  }

  /**
   * Common subexpressions of a bijection's emitted new values: a `Math` function of the same
   * argument locals that occurs more than once (ROT's `Math.cos(t)` and `Math.sin(t)`, twice
   * each) is computed once into a `const`. The arguments are the generated locals the emitter
   * was given, so the text identifies the value; every `Math` function but `random` is pure.
   */
  private shareMathCalls(values: string[]): string[] {
    const pattern = /\bMath\.([a-z][a-z0-9]*)\(([\w$]+(?:, ?[\w$]+)*)\)/g
    const counts = new Map<string, number>()
    for (const v of values)
      for (const m of v.matchAll(pattern)) if (m[1] !== 'random') counts.set(m[0], (counts.get(m[0]) ?? 0) + 1)
    const temps = new Map<string, string>()
    for (const [call, n] of counts) {
      if (n < 2) continue
      const t = this.fresh('m')
      this.line(`const ${t} = ${call};`)
      temps.set(call, t)
    }
    if (!temps.size) return values
    return values.map((v) => v.replace(pattern, (call) => temps.get(call) ?? call))
  }

  /** The pure calls of each bijection statement's lowering (see `loweredValues`). */
  private lowered = new Map<Stmt, LoweredCall[]>()

  /**
   * The values a bijection call's cpu lowering computes with a pure primitive: each `Math.f(x)`
   * of its emitted text, applied to one argument of type f64, that is exactly what the registered
   * primitive `f` emits for it (ROT's `Math.cos(θ)` is `cos(θ)`). As expression nodes over the
   * call's arguments, they join the value numbering of the run (see `sharedSubexpressions`), so
   * the call and the updates around it compute cos(θ) once between them.
   */
  private loweredValues = (
    s: Extract<Stmt, { kind: 'callstmt' }>,
  ): { values: readonly Expr[]; writes: readonly boolean[] } => {
    let spec = this.program.registry.bijection(s.callee)
    if (s.inverse && spec.inverse !== 'self') spec = this.program.registry.bijection(spec.inverse)
    // a bijection writes its inout arguments only
    const writes = spec.roles.map((r) => r === 'inout')
    let calls = this.lowered.get(s)
    if (!calls) {
      calls = []
      const emit = spec.emit?.cpu
      if (emit) {
        const slots = s.args.map((_, i) => `__arg${i}__`)
        const seen = new Set<string>()
        for (const m of emit(...slots)
          .join('\n')
          .matchAll(/\bMath\.([a-z][a-z0-9]*)\(__arg(\d+)__\)/g)) {
          const k = Number(m[2])
          const arg = s.args[k]
          const prim = this.program.registry.findPrimitive(m[1]!)
          if (seen.has(m[0]) || !arg || arg.kind === 'neg' || arg.type !== 'f64' || prim?.kind !== 'pure') continue
          const text = prim.emit?.cpu
          if (prim.arity !== 1 || !text || text(slots[k]!) !== m[0]) continue
          seen.add(m[0])
          // a value that a table holds (see the `tabulate` pass) is that table element
          const table = s.tabulated?.find((t) => t.callee === prim.name && t.arg === k)
          if (table) {
            calls.push({ node: table.read, arg: k, text, table: true })
            continue
          }
          calls.push({ node: { kind: 'call', callee: prim.name, args: [arg], type: 'f64' }, arg: k, text })
        }
      }
      this.lowered.set(s, calls)
    }
    return { values: calls.map((c) => c.node), writes }
  }

  /**
   * What the lowering of a bijection call does with each argument: writes its \`inout\` ones, reads
   * its \`in\` ones, except one that it reads only through values that tables hold (θ of a
   * tabulated ROT: \`'none'\`). Undefined for a call to a function.
   */
  private argumentUses = (s: Extract<Stmt, { kind: 'callstmt' }>): ArgumentUse[] | undefined => {
    if (s.target !== 'bijection') return undefined
    let spec = this.program.registry.bijection(s.callee)
    if (s.inverse && spec.inverse !== 'self') spec = this.program.registry.bijection(spec.inverse)
    this.loweredValues(s)
    const tabled = (this.lowered.get(s) ?? []).filter((c) => c.table)
    return s.args.map((_, i): ArgumentUse => {
      if (spec.roles[i] === 'inout') return 'write'
      if (!spec.emit?.cpu || !tabled.some((c) => c.arg === i)) return 'read'
      const slots = s.args.map((_, k) => `__arg${k}__`)
      let text = spec.emit.cpu(...slots).join('\n')
      for (const c of tabled) text = text.split(c.text(slots[c.arg]!)).join('')
      return text.includes(slots[i]!) ? 'read' : 'none'
    })
  }

  private callStmt(s: Extract<Stmt, { kind: 'callstmt' }>): void {
    if (s.target === 'bijection') {
      let spec = this.program.registry.bijection(s.callee)
      if (s.inverse && spec.inverse !== 'self') spec = this.program.registry.bijection(spec.inverse)
      // an argument the lowering reads only through values that tables hold (θ of a tabulated ROT) is not read
      const uses = this.argumentUses(s)!
      const temps = s.args.map((a, i) => {
        const t = this.fresh('t')
        if (uses[i] !== 'none') this.line(`const ${t} = ${this.read(a)};`)
        return t
      })
      const outs = s.args.flatMap((a, i) => (spec.roles[i] === 'inout' ? [a] : []))
      if (spec.emit?.cpu) {
        let emitted = spec.emit.cpu(...temps)
        // the pure values it shares with the statements around it (see `loweredValues`)
        for (const c of this.lowered.get(s) ?? []) {
          const sh = this.shared?.get(c.node)
          if (c.table) {
            // read from its table (once, shared with the statements around it when they read it too)
            let v = this.expr(c.node)
            if (!sh) {
              const t = this.fresh('c')
              this.line(`const ${t} = ${v};`)
              v = t
            }
            const call = c.text(temps[c.arg]!)
            emitted = emitted.map((x) => x.split(call).join(v))
            continue
          }
          if (!sh) continue
          const call = c.text(temps[c.arg]!)
          if (!sh.temp) {
            sh.temp = this.fresh('c')
            this.line(`const ${sh.temp} = ${call};`)
          }
          const temp = sh.temp
          emitted = emitted.map((v) => v.split(call).join(temp))
        }
        const vals = this.shareMathCalls(emitted)
        outs.forEach((a, j) => {
          const value = this.round((a as { type?: string }).type, vals[j]!)
          // a value that later statements of the run read again from the element: kept (see `Shared.stored`)
          const sh = this.shared?.get(a as Expr)
          const stored = sh?.stored
          if (!stored) return this.write(a, value)
          stored.temp = this.fresh('o')
          this.line(`const ${stored.temp} = ${value};`)
          // a later statement of the run rewrites the element from the kept value, and nothing
          // reads it from memory before: the store is dead (see \`Shared.overwrittenBy\`; not for
          // an element a loop keeps in a local, nor for an array the block's reused loads read)
          if (sh.overwrittenBy && a.kind === 'index' && this.storedElement(a) && !this.reusedArrays?.has(a.array.name))
            return
          this.write(a, stored.temp)
        })
      } else {
        const k = this.gen.bijection(spec.apply)
        const r = this.fresh('r')
        this.line(`const ${r} = rt.bijections[${k}](${temps.join(', ')});`)
        outs.forEach((a, j) => this.write(a, this.round((a as { type?: string }).type, `${r}[${j}]`)))
      }
      return
    }
    const callee = this.program.functions.get(s.callee)!
    const w = this.program.writes.get(s.callee)!
    const args = s.args.map((a, i) =>
      callee.params[i]!.type.kind === 'scalar' ? this.read(a) : this.js((a as { name: string }).name),
    )
    const name = this.gen.callName(s.callee, s.inverse)
    const returned = returnedScalar(this.program, s.callee)
    if (name === this.gen.internalName(s.callee, s.inverse) && returned >= 0) {
      // the internal copy returns the one scalar it writes (no store and load of its results):
      // assigned to a variable directly, to anything else after the call (nothing of the target,
      // an element's index, is evaluated before the call)
      const target = s.args[returned]!
      if (target.kind === 'var') this.write(target, `${name}(${args.join(', ')})`)
      else {
        const r = this.fresh('r')
        this.line(`const ${r} = ${name}(${args.join(', ')});`)
        this.write(target, r)
      }
      return
    }
    const bound = this.replayUncalls.get(s)
    const recorded = bound && this.replayCalls.get(bound.call)
    const recording = this.replayCalls.has(s)
    const top = recording ? this.fresh('m') : ''
    // the tape's top before a recording call whose uncall may be left out
    if (recording) this.line(`const ${top} = $tp;`)
    if (bound && recorded) {
      // the replay left out where the bound proves the deallocation check after it passes: the
      // ancilla zeroed, the call's terms popped (see \`replay-bound.ts\`)
      this.line(
        `if (${replayBoundTest(`($tp - ${recorded.top})`, recorded.sum, bound.type, TOLERANCE)}) { $tp = ${recorded.top}; ${this.js(bound.array)}.fill(0); } else ${name}(${args.join(', ')});`,
      )
    } else this.line(`${name}(${args.join(', ')});`)
    if (recording) {
      // the sum of the magnitudes of the call's terms or partial sums (\`$tv\`), read at once: a plugin's JS
      // between the call and its uncall may run a recording call of its own
      const sum = this.fresh('mv')
      this.line(`const ${sum} = $tv;`)
      this.replayCalls.set(s, { top, sum })
    }
    const R = this.gen.resultsName(s.callee, s.inverse)
    s.args.forEach((a, i) => {
      const p = callee.params[i]!
      if (!w[i] || p.type.kind !== 'scalar') return
      // a value held in 32 bits comes back with \`| 0\`: the same value, a small integer to V8
      // (read as it is, it is a double, and the caller's integer arithmetic on it runs in doubles)
      const int = p.type.name !== 'bool' && this.program.registry.numberSystem(p.type.name).arrayType === 'Int32Array'
      this.write(a, p.type.name === 'bool' ? `(${R}[${i}] !== 0)` : int ? `(${R}[${i}] | 0)` : `${R}[${i}]`)
    })
  }
}

/** A pure primitive call that a bijection's lowering makes (see `FunctionEmitter.loweredValues`). */
interface LoweredCall {
  node: Expr
  /** Which argument of the call it is applied to. */
  arg: number
  /** The primitive's cpu lowering. */
  text: (x: string) => string
  /** `node` is the element of a table that holds the value (see the `tabulate` pass). */
  table?: boolean
}

/** Marks an array allocation in emitted code until `pooled` decides how it allocates. */
/** A bounds assert emitted before a statement, which the statement's load of its element may take over (see \`foldedBounds\`). */
interface PendingBounds {
  /** The array and the key of the index the assert checks. */
  array: string
  index: string
  /** The key of the assert's condition (the same condition again in the run is the same check). */
  cond: string
  /** Where its \`if\` is in the function's lines. */
  line: number
  /** Its \`rt.fail(site, i, n)\` call. */
  fail: string
  /** Whether a load of the statement took it over. */
  taken: boolean
}

/** Marks a folded load in the code until \`foldedBounds\` has seen where it is. */
/** Generated code that calls plugin code, host functions or \`@safe\` calls: JS that could call back into the program. */
/**
 * The JavaScript of the primitives whose value, for arguments in a rounded type's representation
 * (f32), is in it too (see \`exactOf\`), as they read with the arguments named x, y.
 */
const EXACT_EMITS: ReadonlySet<string> = new Set([
  'Math.abs(x)',
  'Math.min(x, y)',
  'Math.max(x, y)',
  '(Math.sign(x) + 0)',
  '(x)',
])

const CALLS_OUT = /\brt\.(prims|bijections|hosts)\[/
const FOLD = '\u0002'
const FOLD_MARK = new RegExp(`${FOLD}(\\d+)${FOLD}`, 'g')
const unmark = (line: string): string => line.replace(FOLD_MARK, '')
/** A line left out of the function (an assert a load took over). */
const DROPPED = '\u0003'
/** Element types whose loads may take over a bounds assert: plain numbers and flags of typed arrays, no plugin code around them. */
const FOLD_TYPES: ReadonlySet<string> = new Set(['f64', 'f32', 'i32', 'bool'])
/** Statements whose head may take over the bounds asserts before it (see \`foldedBounds\`). */
const FOLDING_HEADS: ReadonlySet<Stmt['kind']> = new Set(['update', 'if', 'alloc', 'assert'])
/** Calls whose code evaluates each argument once, in order, where the call is (see \`foldsThrough\`). */
const FOLD_CALLS: ReadonlySet<string> = new Set(['f64', 'i32', 'div', 'len', '$inrange', '$near', '$factor'])

/**
 * Whether a load inside \`e\` may take over a bounds assert (see \`foldedBounds\`): \`e\` is of a
 * plain type and its code evaluates its operands where it stands, each once (a primitive's own
 * emitted code, a number system's rounding or arithmetic may drop an operand, repeat it or make
 * it conditional).
 */
function foldsThrough(e: Expr): boolean {
  if (e.type !== undefined && !FOLD_TYPES.has(e.type as string)) return false
  // a bool \`&\` or \`|\` evaluates both sides in Tenet, so the assert before the statement checks
  // both; written as JS \`&&\` / \`||\`, its right side's load would run only sometimes
  if (e.kind === 'binary' && (e.op === '&' || e.op === '|') && e.type === 'bool') return false
  if (e.kind === 'call') return FOLD_CALLS.has(e.callee)
  return e.kind !== 'field'
}

/** Whether the head of a statement calls a host function (whose failures would come before the folded loads'). */
function headCallsHost(s: Stmt): boolean {
  if (s.kind === 'assert') return callsHost(s.cond) || s.args.some((a) => typeof a !== 'string' && callsHost(a))
  return stmtExprs(s).some(callsHost)
}

const POOL = '\u0001'
/** Marks the taking of a pool's array before a loop (see \`hoistAllocs\`, \`pooled\`). */
const HOIST = '\u0006'
/** Marks an allocation in the loop of the array taken before it (see \`hoistAllocs\`, \`pooled\`). */
const TAKE = '\u0007'
/** Marks the deallocation check of a pooled array (see \`pooled\`). */
const ZCHECK = '\u0005'

/** The module-level flag of pool \`p\`: its array is all +0 (see \`pooled\`). */
const zeroedFlag = (p: string): string => `PZ${p.slice(2)}`

/**
 * The largest pooled array, in elements, that the allocation zeroes with a loop of stores rather
 * than \`fill(0)\`: \`fill\` is a call into the engine, which for an array of a few elements
 * allocated in every iteration of a loop (Horner's accumulator per point, softmax's running
 * maximum per row) costs more than the loop's work (the wasm backend's \`ZERO_STORES_MAX_BYTES\`).
 * (Node 20, a Float64Array reused: the loop 7.5 ns for 4 elements, 12 for 8, 18 for 16, 25 for 24,
 * 29 for 32; \`fill(0)\` 21–23 ns for any of them.)
 */
export const ZERO_STORES_MAX_ELEMENTS = 16

/** The array constructors of the registered number systems (see \`NumberSystem.arrayType\`). */
const ARRAY_TYPES = ['Float64Array', 'Float32Array', 'Int32Array', 'Uint8Array'] as const

/**
 * The module-level zeroing helpers, one per array type (so that each call site stays
 * monomorphic): \`$zeroFloat64Array(a)\` sets every element of \`a\` to +0 (a loop of stores
 * for at most \`ZERO_STORES_MAX_ELEMENTS\` elements, \`fill(0)\` above) and returns \`a\`.
 */
function zeroHelpers(): string[] {
  return ARRAY_TYPES.map(
    (t) =>
      `function $zero${t}(a) { const n = a.length; if (n > ${ZERO_STORES_MAX_ELEMENTS}) return a.fill(0); for (let i = 0; i < n; i++) a[i] = 0; return a; }`,
  )
}

/**
 * The code of a function with its array allocations (`zeros(n)`) written out. A function that is
 * never entered again before it returns (`pooled` true) reuses one array per allocation site, kept
 * in a module-level variable: zero-filled when the length is the same as last time, allocated
 * again otherwise. An array ancilla is deallocated before its site runs again and never escapes
 * the program (callees only write into it), so no two live ancillas share a pool; an ancilla in a
 * loop then costs a zeroing (\`$zero…\`: a loop of stores for a small array, \`fill(0)\` for a
 * large one) instead of an allocation per iteration; a table in \`unzeroed\` (every
 * element read was first set by an \`init\` update, see \`AllocStmt.overwritten\`) is not even
 * filled. Otherwise every allocation makes a new array.
 *
 * With run-time checks on, the deallocation check of a pooled array (\`$allNearZ\`, \`$allZeroZ\`)
 * of at most \`ZERO_STORES_MAX_ELEMENTS\` elements sets every element it passed to +0 as it goes,
 * and where all pass it sets the pool's flag (\`PZ…\`), if the array it checked is the pool's
 * (a larger array is checked as before, its flag left clear): the next allocation at the site then takes
 * the array as it is, with no zeroing, and clears the flag. Every allocation clears it (a new
 * array, or the pool's taken for a new ancilla), and only a check that passed sets it, so the
 * flag is set only while the pool's array is all +0: a check that fails, or a throw anywhere
 * between the allocation and the check, leaves it clear, and the next allocation zeroes the
 * array. Without pooling the check is the plain one.
 */
function pooled(body: string, pool: boolean, unzeroed: ReadonlySet<string>): string {
  const site = new RegExp(`${POOL}(\\w+)${POOL}(\\w+)${POOL}(\\w+)${POOL}`, 'g')
  const check = new RegExp(`${ZCHECK}(\\w+)${ZCHECK}(\\$\\w+)${ZCHECK}(\\w+)${ZCHECK}([^${ZCHECK}]*)${ZCHECK}`, 'g')
  const hoist = new RegExp(`${HOIST}(\\w+)${HOIST}(\\w+)${HOIST}(\\w+)${HOIST}`, 'g')
  const take = new RegExp(`${TAKE}(\\w+)${TAKE}(\\w+)${TAKE}(\\w+)${TAKE}(\\w+)${TAKE}`, 'g')
  return body
    .replace(hoist, (_m, p: string, ctor: string, n: string) => {
      if (!pool) return 'null'
      // (a new array is all +0: its flag set, the first iteration takes it as it is)
      if (unzeroed.has(p)) return `(${p} !== null && ${p}.length === ${n} ? ${p} : (${p} = new ${ctor}(${n})))`
      return `(${p} !== null && ${p}.length === ${n} ? ${p} : ((${p} = new ${ctor}(${n})), (${zeroedFlag(p)} = true), ${p}))`
    })
    .replace(take, (_m, p: string, ctor: string, n: string, h: string) => {
      if (!pool) return `new ${ctor}(${n})`
      if (unzeroed.has(p)) return h
      const z = zeroedFlag(p)
      return `(${z} ? ((${z} = false), ${h}) : $zero${ctor}(${h}))`
    })
    .replace(site, (_m, p: string, ctor: string, n: string) => {
      if (!pool) return `new ${ctor}(${n})`
      // (a table never zeroed has no checked deallocation, so its flag is never set)
      if (unzeroed.has(p)) return `(${p} !== null && ${p}.length === ${n} ? ${p} : (${p} = new ${ctor}(${n})))`
      const z = zeroedFlag(p)
      return `(${p} !== null && ${p}.length === ${n} ? (${z} ? ((${z} = false), ${p}) : $zero${ctor}(${p})) : ((${p} = new ${ctor}(${n})), (${z} = false), ${p}))`
    })
    .replace(check, (_m, p: string, helper: string, v: string, args: string) =>
      pool
        ? `(${helper}Z(${args}) && ((${zeroedFlag(p)} = ${v} === ${p} && ${v}.length <= ${ZERO_STORES_MAX_ELEMENTS}), true))`
        : `${helper}(${args})`,
    )
}

/** One generated function, before its read-only results are placed (see `FunctionEmitter.emit`). */
interface EmittedFunction {
  name: string
  /** Whether it is the inverse direction. */
  inverse: boolean
  /** The module-level pool variables of its array allocation sites. */
  pools: string[]
  /** Whether its code calls plugin, host or \`@safe\` JS, which could call the program again. */
  callsOut: boolean
  /** The code, `internal`: the copy that calls inside the program use (see `CodeGenerator.callName`). */
  render(early: boolean, internal: boolean): string
  /** The code of the lean copy (see \`CodeGenerator.leanName\`): every result store but those of read-only scalars. */
  renderLean(early: boolean): string
}

/**
 * The first lines of a generated function: \`p = +p;\` for each f64 or f32 scalar parameter that a
 * loop of the function writes (the identity on a JS number, −0 and NaN included). A caller passes
 * a parameter as whatever value it holds (a small integer literal is a Smi: the gradient driver's
 * seed 1 and zeroed adjoints, a bench's or user's \`0\` loss), and V8 then types the parameter as
 * any tagged value: a loop that adds into it (\`loss += e * e\` per point) keeps its running value
 * tagged, a heap number boxed on every iteration. After \`+p\` the value is a float from the entry
 * on, and it stays unboxed (Horner's least squares via \`.core\`: ~25% less time; the same loop in
 * plain JS with the accumulator started from a parameter: 2.25× the time of one started from
 * \`0\`, 1.64× with \`+p\`). Only where a loop writes it: elsewhere no loop carries the value, and
 * each line adds to the function's bytecode, which V8's inlining limit counts.
 */
function numberParams(f: FunctionDef): string[] {
  let inLoops: Set<string> | undefined = new Set()
  walk(f.body, (s) => {
    if ((s.kind !== 'for' && s.kind !== 'while') || !inLoops) return
    const w = writtenNames(s.body)
    if (!w) inLoops = undefined
    else for (const n of w) inLoops.add(n)
  })
  return f.params.flatMap((p, i) =>
    p.type.kind === 'scalar' &&
    (p.type.name === 'f64' || p.type.name === 'f32') &&
    (inLoops === undefined || inLoops.has(p.name))
      ? [`  p${i} = +p${i};`]
      : [],
  )
}

/** Whether function \`name\` has a scalar parameter it never writes (whose result only a host caller reads). */
/**
 * The index of the one scalar parameter that function \`name\` writes, when it writes exactly one
 * (and any number of arrays), else −1. Its internal copy returns that value, and a call inside
 * the program assigns it (\`v = FI3(v, n)\`): no store into the results array and no load from
 * it, which V8 keeps even where it inlines the callee (the factorial of the Bessel series).
 */
function returnedScalar(program: Program, name: string): number {
  const f = program.functions.get(name)
  const written = program.writes.get(name)
  if (!f || !written) return -1
  const scalars = f.params.flatMap((p, i) => (p.type.kind === 'scalar' && written[i] ? [i] : []))
  return scalars.length === 1 ? scalars[0]! : -1
}

function readOnlyScalars(program: Program, name: string): boolean {
  const f = program.functions.get(name)
  const written = program.writes.get(name)
  return !!f && !!written && f.params.some((p, i) => p.type.kind === 'scalar' && !written[i])
}

/**
 * The functions of \`program\` that may be entered again before they return: those that can reach
 * themselves through calls (in forward or inverse bodies), and those that can reach, or are, a
 * function in \`callsOut\`, whose JS callbacks could call any function of the program.
 */
function reentrantFunctions(program: Program, inverses: Map<string, FunctionDef>, callsOut: Set<string>): Set<string> {
  const callees = new Map<string, Set<string>>()
  for (const f of program.functions.values()) {
    const out = new Set<string>()
    for (const body of [f.body, inverses.get(f.name)?.body ?? []]) {
      walk(body, (s) => {
        if (s.kind === 'callstmt' && program.functions.has(s.callee)) out.add(s.callee)
      })
    }
    callees.set(f.name, out)
  }
  // strongly connected components (Tarjan's algorithm, without recursion): a function reaches
  // itself when its component has a cycle; components come out callees first, so whether one
  // reaches a function in `callsOut` is known from those it calls. Linear in the call graph.
  const index = new Map<string, number>(),
    low = new Map<string, number>()
  const stack: string[] = [],
    onStack = new Set<string>()
  const component = new Map<string, number>()
  const cyclic: boolean[] = [],
    reachesOut: boolean[] = []
  for (const root of callees.keys()) {
    if (index.has(root)) continue
    const frames: Array<{ name: string; next: Iterator<string> }> = []
    const open = (name: string) => {
      index.set(name, index.size)
      low.set(name, index.get(name)!)
      stack.push(name)
      onStack.add(name)
      frames.push({ name, next: callees.get(name)![Symbol.iterator]() })
    }
    open(root)
    while (frames.length) {
      const top = frames[frames.length - 1]!
      const step = top.next.next()
      if (!step.done) {
        const c = step.value
        if (!index.has(c)) open(c)
        else if (onStack.has(c)) low.set(top.name, Math.min(low.get(top.name)!, index.get(c)!))
        continue
      }
      frames.pop()
      const parent = frames[frames.length - 1]
      if (parent) low.set(parent.name, Math.min(low.get(parent.name)!, low.get(top.name)!))
      if (low.get(top.name) !== index.get(top.name)) continue
      const id = cyclic.length
      const members: string[] = []
      let m: string
      do {
        m = stack.pop()!
        onStack.delete(m)
        component.set(m, id)
        members.push(m)
      } while (m !== top.name)
      const cycle = members.length > 1 || callees.get(top.name)!.has(top.name)
      let out = false
      for (const f of members) {
        if (callsOut.has(f)) out = true
        for (const c of callees.get(f)!) if (component.get(c) !== id && reachesOut[component.get(c)!]) out = true
      }
      cyclic.push(cycle)
      reachesOut.push(out)
    }
  }
  const reentrant = new Set<string>()
  for (const name of callees.keys()) {
    const id = component.get(name)!
    if (cyclic[id] || reachesOut[id]) reentrant.add(name)
  }
  return reentrant
}

/** The name of the module constant that holds the tolerance of the float checks. */
const TOLERANCE = '$tol'

/**
 * The JavaScript sum of \`Math.abs\` of the eight elements \`a[i]\` … \`a[i + 7]\`, from −0, left to
 * right (see \`checkHelpers\`: the block test of the array deallocation checks). The −0 it starts
 * from changes no sum (−0 + x is x, +0 for x = +0) but makes every addition see a double: an
 * array of zeros (every element an uncompute left at +0) loads as small integers in V8's
 * interpreter, whose feedback would have the optimised code add them as 32-bit integers, each
 * magnitude converted and checked first (slower than the element loop it replaces).
 */
function blockMagnitude(): string {
  return `-0${[0, 1, 2, 3, 4, 5, 6, 7].map((k) => ` + Math.abs(a[i${k ? ` + ${k}` : ''}])`).join('')}`
}

/**
 * The module-level helpers of the run-time checks: the float tolerance as a constant, `$near`
 * (the comparison of a float deallocation), `$allNear` and `$allZero` (an array ancilla's
 * deallocation: its length, and every element within the tolerance of zero, or exactly zero).
 *
 * `$allNear` and `$allZero` pass eight elements at a time where the sum of their magnitudes is
 * within the tolerance (is zero): the sum of non-negative doubles, rounded to nearest after each
 * addition, is at least each of its terms (rounding is monotonic and the larger term is a double),
 * so such a block has every element within the tolerance (exactly ±0); a NaN element makes the
 * sum NaN, which no block passes, and an infinite element or an overflow makes it +∞, which
 * passes only an infinite tolerance (as every element but NaN does). At the first
 * block that does not pass, the element-by-element loop takes over from that block on, and decides
 * as before: the result is the one element by element, on every input (NaN and infinite elements,
 * a NaN, negative or infinite tolerance included), with one comparison per eight elements where
 * the blocks pass. An array of the heat stencil's history (4160 elements, all +0 after their
 * uncompute): about 4.1 → 1.9 µs a check (in-process micro-benchmark, loaded 2-core machine).
 */
export function checkHelpers(tolerance: number): string[] {
  const near = `(Math.abs(a[i]) <= ${TOLERANCE})`
  return [
    `const ${TOLERANCE} = ${tolerance};`,
    `function $near(a, b) { return a === b || Math.abs(a - b) <= ${TOLERANCE} * Math.max(1, Math.abs(b)); }`,
    `function $allNear(a, n) { if (a.length !== n) return false; let i = 0; for (; i + 7 < n; i += 8) if (!(${blockMagnitude()} <= ${TOLERANCE})) break; for (; i < n; i++) if (!${near}) return false; return true; }`,
    `function $allZero(a, n) { if (a.length !== n) return false; let i = 0; for (; i + 7 < n; i += 8) if (!(${blockMagnitude()} === 0)) break; for (; i < n; i++) if (a[i] !== 0) return false; return true; }`,
    // (the same checks of a pooled array, which set each element they passed to +0: see \`pooled\`)
    // (of at most ZERO_STORES_MAX_ELEMENTS elements: a larger one is checked as before, and zeroed
    // by \`fill(0)\` when allocated again, cheaper than its stores here)
    `function $allNearZ(a, n) { if (a.length !== n) return false; if (n > ${ZERO_STORES_MAX_ELEMENTS}) return $allNear(a, n); for (let i = 0; i < n; i++) { if (!${near}) return false; a[i] = 0; } return true; }`,
    `function $allZeroZ(a, n) { if (a.length !== n) return false; if (n > ${ZERO_STORES_MAX_ELEMENTS}) return $allZero(a, n); for (let i = 0; i < n; i++) { if (a[i] !== 0) return false; a[i] = 0; } return true; }`,
  ]
}

/**
 * A generated function (\`function name(…) {\n…\n}\`) that puts the tape's top back where it was
 * when entered, as a throw leaves it (see \`CodeGenerator.generate\`): the terms that the calls
 * it made pushed before the failure go, those pushed before it was entered stay.
 */
function markTape(code: string): string {
  const open = code.indexOf('{\n') + 2
  const body = code.slice(open, code.length - 1)
  return `${code.slice(0, open)}  const $tm = $tp;\n  try {\n${body}  } catch ($te) {\n    $tp = $tm;\n    throw $te;\n  }\n}`
}

/** The runtime object for a generated program. */
export function makeRuntime(gen: CodeGenerator, program: Program, options: CompileOptions): Runtime {
  const rt: Runtime = {
    hosts: program.hosts,
    prims: gen.prims,
    bijections: gen.bijections,
    fail(site: number, ...values: unknown[]): never {
      rt.emptyTape?.()
      const s = gen.sites[site]!
      throw new InvertibilityError(s.code, s.message(...values), s.loc)
    },
    hostNumber(value: unknown, index: number, site: number): number {
      return typeof value === 'number' ? value : hostNumber(value, index, gen.sites[site]!.loc)
    },
    factor(k: number) {
      return k !== 0 && k - k === 0
    },
    near(a: number, b: number) {
      return a === b || Math.abs(a - b) <= options.tolerance * Math.max(1, Math.abs(b))
    },
    length(n: number, site: number): number {
      if (Number.isInteger(n) && n >= 0) return n
      rt.emptyTape?.()
      const s = gen.sites[site]!
      throw new InvertibilityError(s.code, s.message(n), s.loc)
    },
    allZero(a: ArrayLike<number>, n: number) {
      if (a.length !== n) return false
      for (let i = 0; i < a.length; i++) if (a[i] !== 0) return false
      return true
    },
    allNear(a: ArrayLike<number>, n: number) {
      if (a.length !== n) return false
      for (let i = 0; i < a.length; i++) if (!(Math.abs(a[i]!) <= options.tolerance)) return false
      return true
    },
  }
  return rt
}

export type { Type }

/** The first updates of fresh zeros in a block and their undoing updates (see \`firstUpdatesOfZeros\`). */
export interface ZeroMarks {
  /** The positions of the first updates. */
  first: Set<number>
  /** The position of the update that undoes a first update, by the position of the first. */
  undoneBy: Map<number, number>
  /**
   * The positions of the first updates whose ancilla was allocated as -0.0 (a gradient's zero,
   * see \`gradientZero\` of \`@tenet/ad\`): -0 + e is e and -0 - e is -e for every e, so the
   * update is the value alone, with no add of a zero.
   */
  negative: Set<number>
}

/**
 * The updates \`x += e\` / \`x -= e\` that are the first statement of \`body\` (its \`@unchecked\`
 * blocks opened, as the generator emits them; by position there) to name a scalar ancilla \`x\`
 * that an earlier statement of the same block allocated as a literal zero: \`x\` holds zero there
 * (the idiom of a routine's ancilla, \`r <- 0.0; r += sqrt(r2)\`); and for each, the next statement
 * of the block that writes \`x\`, where that is an update by the opposite operator (\`r -= …\` of
 * the \`~routine\`). One pass over the block.
 */
export function firstUpdatesOfZeros(body: Stmt[]): ZeroMarks {
  const marks: ZeroMarks = { first: new Set(), undoneBy: new Map(), negative: new Set() }
  const fresh = new Set<string>()
  // (those of \`fresh\` allocated as -0.0)
  const negative = new Set<string>()
  // the ancillas whose first update was marked and that nothing wrote since, by name: its position
  const first = new Map<string, { at: number; op: string }>()
  const flat = flatten(body)
  for (let k = 0; k < flat.length; k++) {
    const s = flat[k]!.s
    if (first.size > 0) {
      // the next statement to write the ancilla: an update by the opposite operator undoes the first one
      if (
        s.kind === 'update' &&
        (s.op === '+=' || s.op === '-=') &&
        s.target.kind === 'var' &&
        first.has(s.target.name)
      ) {
        const f = first.get(s.target.name)!
        if (f.op !== s.op) marks.undoneBy.set(f.at, k)
      }
      // (statements that only read it leave it as the first update made it)
      const written = writtenNames([s])
      if (!written) first.clear()
      else for (const n of written) first.delete(n)
    }
    if (fresh.size > 0) {
      if (
        s.kind === 'update' &&
        (s.op === '+=' || s.op === '-=') &&
        s.target.kind === 'var' &&
        fresh.has(s.target.name)
      ) {
        marks.first.add(k)
        if (negative.has(s.target.name)) marks.negative.add(k)
        fresh.delete(s.target.name)
        first.set(s.target.name, { at: k, op: s.op })
        // (the walk below must not end the run this update starts)
        walk([s], (t) => {
          for (const e of stmtExprs(t)) for (const n of readNames(e)) fresh.delete(n)
        })
        continue
      }
      // any other statement that names a fresh ancilla (reads it, deallocates it, …) ends its run
      walk([s], (t) => {
        if (t.kind === 'alloc' || t.kind === 'dealloc') fresh.delete(t.name)
        for (const e of stmtExprs(t)) for (const n of readNames(e)) fresh.delete(n)
      })
    }
    if (s.kind === 'alloc' && s.type?.kind === 'scalar' && s.value.kind === 'num' && s.value.value === 0) {
      fresh.add(s.name)
      if (Object.is(s.value.value, -0)) negative.add(s.name)
      else negative.delete(s.name)
    }
  }
  return marks
}

/**
 * Whether a statement of \`body\` outside every branch and inner loop (\`@unchecked\` blocks
 * opened) writes element \`array[index]\` (\`index\` a key, see \`key\`) by an update.
 */
function writtenOnEveryIteration(body: readonly Stmt[], array: string, index: string): boolean {
  return body.some(
    (x) =>
      (x.kind === 'update' &&
        x.target.kind === 'index' &&
        x.target.array.name === array &&
        key(x.target.index) === index) ||
      (x.kind === 'unchecked' && writtenOnEveryIteration(x.body, array, index)),
  )
}
