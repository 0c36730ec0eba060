/**
 * A seeded generator of random, valid, reversible Tenet programs over `i32`.
 *
 * Every program it emits passes the static checker and runs without a run-time
 * reversibility error on every input: the generator only writes patterns whose
 * reversibility it can see locally. It keeps, for each point of the program, the set of
 * "frozen" variables (read by a condition, a loop range, an ancilla's initial value, a
 * routine, ...) that must not change there, the known value interval of loop variables and
 * counters (so that array indices are provably in bounds and distinct), and what each
 * sub-block reads and writes (so that `routine { R } S ~routine` and `B S ~{ B }` only run
 * S on memory that R and B do not touch). If the checker ever rejects a generated program,
 * that is a bug in the generator or in the core.
 */
import { Random } from './random.js'

/** A scalar parameter (`name: i32`). */
export interface ScalarParamSpec {
  name: string
  type: 'i32'
}
/** An array parameter (`name: i32[]`); for a helper, `length` is the minimum length it accepts. */
export interface ArrayParamSpec {
  name: string
  type: 'i32[]'
  length: number
  /** Largest length the function was generated for (entry arrays: equal to `length`). */
  maxLength: number
}
export type ParamSpec = ScalarParamSpec | ArrayParamSpec

/** The parameters of one generated function, in order. */
export interface Signature {
  name: string
  params: ParamSpec[]
}

/** Constructs the generator may use (all on by default). */
export interface GeneratorFeatures {
  arrays: boolean
  swap: boolean
  /** `NEG`, `INC`, `DEC` */
  unary: boolean
  /** Negated dataviews: `-x += e`, `g(-x)`. */
  negViews: boolean
  if: boolean
  for: boolean
  while: boolean
  /** `t: i32 <- e ... t -> e` */
  ancilla: boolean
  routine: boolean
  /** `B ... ~{ B }` */
  inverseBlock: boolean
  /** Calls and uncalls of a second, generated helper function. */
  call: boolean
  stack: boolean
  unchecked: boolean
}

export interface RandomProgramOptions {
  /** Statement budget of the entry function (the helper gets a third of it). Default 24. */
  maxStatements?: number
  /** Maximum block nesting. Default 3. */
  maxDepth?: number
  /** Upper bound on the product of the trip counts of nested loops. Default 48. */
  maxTrips?: number
  features?: Partial<GeneratorFeatures>
}

export interface RandomProgram {
  seed: number
  /** Tenet source text of every function. */
  source: string
  /** The function to call (`f`). */
  entry: string
  /** The entry function's parameters. */
  signature: Signature
  /** Every generated function (the entry and, when present, the helper `g`). */
  functions: Signature[]
}

const ALL_FEATURES: GeneratorFeatures = {
  arrays: true,
  swap: true,
  unary: true,
  negViews: true,
  if: true,
  for: true,
  while: true,
  ancilla: true,
  routine: true,
  inverseBlock: true,
  call: true,
  stack: true,
  unchecked: true,
}

/** Largest array length any generated function is written for. */
const MAX_ARRAY_LENGTH = 6

// ---------------------------------------------------------------------------------------------
// model

interface Var {
  name: string
  kind: 'scalar' | 'array'
  /** Array length bounds (equal for the entry's arrays). */
  minLength?: number
  maxLength?: number
  /** Loop variable: never writable. */
  loop?: boolean
  /** Value range while the variable cannot change (loop variables, frozen counters). */
  interval?: [number, number]
  /** Arrays this variable indexes in bounds, with the allowed constant offsets. */
  indexes?: Map<string, [number, number]>
}

interface Index {
  /** Variable the index is based on (undefined: a constant index). */
  base?: string
  offset: number
  text: string
  /** Range of its value (±Infinity when unknown). */
  lo: number
  hi: number
}

/** A memory reference (a dataview): `x`, `a[i + 1]`, `-x`, or a whole array `a`. */
interface Ref {
  root: string
  index?: Index
  whole?: boolean
  text: string
}

interface Ctx {
  vars: Map<string, Var>
  frozen: ReadonlySet<string>
  depth: number
  trips: number
  loopDepth: number
  /** Statements here may call the helper. */
  calls: boolean
}

interface HelperInfo {
  signature: Signature
  written: boolean[]
}

interface Expr {
  text: string
  literalOnly: boolean
}

/** Two references that never denote the same memory (statically, or by the known index ranges). */
function distinct(a: Ref, b: Ref): boolean {
  if (a.root !== b.root) return true
  if (a.whole || b.whole || !a.index || !b.index) return false
  const x = a.index,
    y = b.index
  if (x.base === y.base) return x.offset !== y.offset
  return x.hi < y.lo || y.hi < x.lo
}

function indent(lines: string[], by = '  '): string[] {
  return lines.map((l) => by + l)
}

function block(lines: string[]): string[] {
  return lines.length ? ['{', ...indent(lines), '}'] : ['{ }']
}

/** Joins a header (`if (...)`) and a block: `if (...) {` ... `}`. */
function withBlock(head: string, body: string[], tail = ''): string[] {
  const b = block(body)
  if (b.length === 1) return [`${head} ${b[0]}${tail}`]
  return [`${head} ${b[0]}`, ...b.slice(1, -1), `${b[b.length - 1]}${tail}`]
}

/** `if ... }` followed by ` else ` and the first line of `els` (a block or a nested `if`), then its other lines. */
function withElse(lines: string[], els: string[]): string[] {
  return [...lines.slice(0, -1), `${lines[lines.length - 1]} else ${els[0]}`, ...els.slice(1)]
}

// ---------------------------------------------------------------------------------------------
// one function

class FunctionGenerator {
  private counter = 0
  private budget: number
  private readonly trackers: Set<string>[] = []
  /** Roots written anywhere in the function (for the helper's written parameters). */
  readonly written = new Set<string>()

  constructor(
    private readonly rng: Random,
    private readonly features: GeneratorFeatures,
    budget: number,
    private readonly maxDepth: number,
    private readonly maxTrips: number,
    private readonly helper: HelperInfo | undefined,
  ) {
    this.budget = budget
  }

  private fresh(prefix: string): string {
    return `${prefix}${this.counter++}`
  }

  private read(root: string): void {
    for (const t of this.trackers) t.add(root)
  }
  private wrote(root: string): void {
    this.written.add(root)
    for (const t of this.trackers) t.add(root)
  }
  private readRef(r: Ref): void {
    this.read(r.root)
    if (r.index?.base) this.read(r.index.base)
  }
  /** Runs `f` and returns (with its result) every root it read or wrote. */
  private tracked<T>(f: () => T): [T, Set<string>] {
    const set = new Set<string>()
    this.trackers.push(set)
    try {
      const r = f()
      return [r, set]
    } finally {
      this.trackers.pop()
    }
  }

  body(ctx: Ctx): string[] {
    const out: string[] = []
    while (this.budget > 0) out.push(...this.stmt(ctx))
    if (!out.length) out.push(...this.update(ctx))
    return out
  }

  private seq(ctx: Ctx, max = 3): string[] {
    const n = this.rng.int(1, max)
    const out: string[] = []
    for (let k = 0; k < n && this.budget > 0; k++) out.push(...this.stmt(ctx))
    return out
  }

  // ---------- references and expressions ----------

  private scalars(ctx: Ctx): Var[] {
    return [...ctx.vars.values()].filter((v) => v.kind === 'scalar')
  }
  private arrays(ctx: Ctx): Var[] {
    return [...ctx.vars.values()].filter((v) => v.kind === 'array')
  }

  /** In-bounds indices of array `a` here. */
  private indices(ctx: Ctx, a: Var): Index[] {
    const out: Index[] = []
    for (let k = 0; k < a.minLength!; k++) out.push({ offset: k, text: String(k), lo: k, hi: k })
    for (const v of this.scalars(ctx)) {
      if (!v.loop && !ctx.frozen.has(v.name)) continue
      const offs = new Set<number>()
      const tagged = v.indexes?.get(a.name)
      if (tagged) for (let o = tagged[0]; o <= tagged[1]; o++) offs.add(o)
      if (v.interval) {
        for (let o = -2; o <= 2; o++) if (v.interval[0] + o >= 0 && v.interval[1] + o <= a.minLength! - 1) offs.add(o)
      }
      for (const o of offs) {
        const text = o === 0 ? v.name : o > 0 ? `${v.name} + ${o}` : `${v.name} - ${-o}`
        const [lo, hi] = v.interval ?? [-Infinity, Infinity]
        out.push({ base: v.name, offset: o, text, lo: lo + o, hi: hi + o })
      }
    }
    return out
  }

  /** The scalars and in-bounds array elements of the variables `use` accepts, distinct from every reference in `avoid`. */
  private refs(ctx: Ctx, avoid: Ref[], use: (v: Var) => boolean): Ref[] {
    const cands: Ref[] = []
    for (const v of ctx.vars.values()) {
      if (!use(v)) continue
      if (v.kind === 'scalar') cands.push({ root: v.name, text: v.name })
      else for (const i of this.indices(ctx, v)) cands.push({ root: v.name, index: i, text: `${v.name}[${i.text}]` })
    }
    return cands.filter((c) => avoid.every((a) => distinct(a, c)))
  }

  /** A readable reference that is distinct from every reference in `avoid`. */
  private readable(ctx: Ctx, avoid: Ref[]): Ref | undefined {
    const ok = this.refs(ctx, avoid, () => true)
    return ok.length ? this.rng.pick(ok) : undefined
  }

  /** A writable reference distinct from `avoid`; `neg` allows a negated view. */
  private writable(ctx: Ctx, avoid: Ref[], neg = false): Ref | undefined {
    const ok = this.refs(ctx, avoid, (v) => !v.loop && !ctx.frozen.has(v.name))
    if (!ok.length) return undefined
    const r = this.rng.pick(ok)
    if (neg && this.features.negViews && this.rng.chance(0.08)) return { ...r, text: `-${r.text}` }
    return r
  }

  private literal(): string {
    return String(
      this.rng.weighted<() => number>([
        [() => this.rng.int(-9, 9), 8],
        [() => this.rng.int(10, 300), 1],
        [() => this.rng.pick([2147483647, -2147483648, 65535, 1 << 20]), 0.3],
      ])(),
    )
  }

  /**
   * A pure i32 expression that reads nothing in `avoid` (`literalOnly`: it reads no variable).
   * Integer literals, and literal-only sub-expressions such as `(1 ^ 2)`, take their type from
   * the other operand or from context, so the same expressions serve update right-hand sides,
   * arguments, conditions and the inside of `f64(...)`.
   */
  private expr(ctx: Ctx, depth: number, avoid: Ref[]): Expr {
    if (depth > 0 && this.rng.chance(0.5)) {
      if (this.rng.chance(0.1)) {
        const a = this.expr(ctx, depth - 1, avoid)
        if (!a.literalOnly) return { text: `-(${a.text})`, literalOnly: false }
      }
      if (this.rng.chance(0.12)) {
        // integer division and remainder by a non-zero literal, small powers, a float round
        // trip; the argument of `div` and `f64` may be negated (`div(-(x), 3)`, `f64(-(x))`)
        const d = this.rng.pick([2, 3, 7, -5])
        const a = this.expr(ctx, depth - 1, avoid)
        return this.rng.weighted<() => Expr>([
          [() => ({ text: `(${a.text} % ${d})`, literalOnly: a.literalOnly }), 1],
          [() => ({ text: `div(${a.text}, ${d})`, literalOnly: a.literalOnly }), 1],
          // never a literal-only base: `**` is not an integer constant to the checker, so where
          // no type is expected `(3 ** 2)` is f64 and `(3 ** 2) + x > 0` is rejected
          // ("`+` between f64 and i32"), unlike `(3 * 2) + x > 0`
          [() => ({ text: `(${a.text} ** ${this.rng.pick([2, 3])})`, literalOnly: false }), a.literalOnly ? 0 : 0.5],
          [() => ({ text: `i32(f64(${a.text}) / ${d}.5)`, literalOnly: a.literalOnly }), 0.5],
        ])()
      }
      const op = this.rng.pick(['+', '-', '*', '^', '&', '|', '+', '-'])
      const l = this.expr(ctx, depth - 1, avoid)
      const r = this.expr(ctx, depth - 1, avoid)
      return { text: `(${l.text} ${op} ${r.text})`, literalOnly: l.literalOnly && r.literalOnly }
    }
    if (this.rng.chance(0.25)) return { text: this.literal(), literalOnly: true }
    const ref = this.readable(ctx, avoid)
    if (!ref) return { text: this.literal(), literalOnly: true }
    this.readRef(ref)
    return { text: ref.text, literalOnly: false }
  }

  /** An expression that reads at least one variable (for conditions and loop bounds). */
  private varExpr(ctx: Ctx, depth: number): Expr | undefined {
    for (let tries = 0; tries < 4; tries++) {
      const e = this.expr(ctx, depth, [])
      if (!e.literalOnly) return e
    }
    const ref = this.readable(ctx, [])
    if (!ref) return undefined
    this.readRef(ref)
    return { text: ref.text, literalOnly: false }
  }

  /** A boolean condition; returns its text and the roots it reads. */
  private cond(ctx: Ctx): [string, Set<string>] | undefined {
    const [text, roots] = this.tracked(() => {
      const one = (): string | undefined => {
        // sometimes deep enough for a literal-only operand: `((2 + 3) * x) > 0`
        const e = this.varExpr(ctx, this.rng.chance(0.25) ? 2 : 1)
        if (!e) return undefined
        return this.rng.weighted<() => string>([
          [() => `${e.text} ${this.rng.pick(['<', '<=', '>', '>=', '==', '!='])} ${this.rng.int(-5, 5)}`, 4],
          [() => `(${e.text} & ${this.rng.pick([1, 2, 3])}) == 0`, 2],
          [() => `${e.text} != ${this.literal()}`, 1],
        ])()
      }
      const a = one()
      if (!a || !this.rng.chance(0.2)) return a
      const b = one()
      if (!b) return a
      return this.rng.weighted<() => string>([
        [() => `(${a}) && (${b})`, 1],
        [() => `(${a}) || (${b})`, 1],
        [() => `!(${a})`, 0.5],
      ])()
    })
    return text === undefined ? undefined : [text, roots]
  }

  private child(ctx: Ctx, patch: Partial<Ctx> & { addVars?: Var[]; freeze?: Iterable<string> }): Ctx {
    const vars = new Map(ctx.vars)
    for (const v of patch.addVars ?? []) vars.set(v.name, v)
    const frozen = new Set(ctx.frozen)
    for (const f of patch.freeze ?? []) frozen.add(f)
    return {
      vars,
      frozen,
      depth: patch.depth ?? ctx.depth + 1,
      trips: patch.trips ?? ctx.trips,
      loopDepth: patch.loopDepth ?? ctx.loopDepth,
      calls: patch.calls ?? ctx.calls,
    }
  }

  // ---------- statements ----------

  private stmt(ctx: Ctx): string[] {
    this.budget--
    const f = this.features
    const nest = ctx.depth < this.maxDepth && this.budget > 1
    type Kind =
      | 'update'
      | 'swap'
      | 'unary'
      | 'if'
      | 'flagif'
      | 'for'
      | 'while'
      | 'ancilla'
      | 'routine'
      | 'invblock'
      | 'call'
      | 'stack'
      | 'unchecked'
    const kind = this.rng.weighted<Kind>([
      ['update', 6],
      ['swap', f.swap ? 1.2 : 0],
      ['unary', f.unary ? 1.2 : 0],
      ['if', f.if && nest ? 1.3 : 0],
      ['flagif', f.if && f.ancilla && nest ? 0.5 : 0],
      ['for', f.for && nest && ctx.trips < this.maxTrips ? 1.5 : 0],
      ['while', f.while && f.ancilla && nest && ctx.trips < this.maxTrips ? 0.7 : 0],
      ['ancilla', f.ancilla && nest ? 0.8 : 0],
      ['routine', f.routine && f.ancilla && nest ? 0.9 : 0],
      ['invblock', f.inverseBlock && f.ancilla && nest ? 0.6 : 0],
      ['call', f.call && ctx.calls && this.helper ? 1.6 : 0],
      ['stack', f.stack && nest ? 0.6 : 0],
      ['unchecked', f.unchecked && nest ? 0.2 : 0],
    ])
    const out = this[kind](ctx)
    return out ?? this.update(ctx)
  }

  private update(ctx: Ctx): string[] {
    const t = this.writable(ctx, [], true)
    if (!t) return [] // nothing writable here (every variable frozen)
    this.wrote(t.root)
    if (t.index?.base) this.read(t.index.base)
    const e = this.expr(ctx, this.rng.int(0, 2), [t])
    return [`${t.text} ${this.rng.pick(['+=', '-=', '^=', '+=', '-='])} ${e.text}`]
  }

  private swap(ctx: Ctx): string[] | undefined {
    const a = this.writable(ctx, [], true)
    if (!a) return undefined
    const b = this.writable(ctx, [a], true)
    if (!b) return undefined
    this.wrote(a.root)
    this.wrote(b.root)
    this.readRef(a)
    this.readRef(b)
    return [this.rng.chance(0.5) ? `SWAP(${a.text}, ${b.text})` : `${a.text} <-> ${b.text}`]
  }

  private unary(ctx: Ctx): string[] | undefined {
    const a = this.writable(ctx, [], true)
    if (!a) return undefined
    this.wrote(a.root)
    this.readRef(a)
    return [`${this.rng.pick(['NEG', 'INC', 'DEC'])}(${a.text})`]
  }

  private if(ctx: Ctx): string[] | undefined {
    const c = this.cond(ctx)
    if (!c) return undefined
    const [text, roots] = c
    const inner = this.child(ctx, { freeze: roots })
    const post = this.rng.chance(0.2) ? text : '~'
    const then = this.seq(inner)
    const head = `if (${text}, ${post})`
    if (this.rng.chance(0.35)) return withBlock(head, then)
    if (this.rng.chance(0.25) && ctx.depth + 1 < this.maxDepth) {
      // else if: the nested `if` lives in the else branch
      const nested = this.if(inner)
      if (nested) return withElse(withBlock(head, then), nested)
    }
    return withElse(withBlock(head, then), block(this.seq(inner)))
  }

  /** An `if` whose post-condition differs from its pre-condition (a flag ancilla). */
  private flagif(ctx: Ctx): string[] | undefined {
    const c = this.cond(ctx)
    if (!c) return undefined
    const [text, roots] = c
    const flag = this.fresh('t')
    const inner = this.child(ctx, {
      freeze: [...roots, flag],
      addVars: [{ name: flag, kind: 'scalar', interval: [0, 1] }],
    })
    const then = this.seq(inner)
    const els = this.rng.chance(0.5) ? this.seq(inner) : []
    const head = withBlock(`if (${text}, ${flag} == 1)`, [`${flag} += 1`, ...then])
    const first = els.length ? withElse(head, block(els)) : head
    return [`${flag}: i32 <- 0`, ...first, ...withBlock(`if (${flag} == 1, ${text})`, [`${flag} -= 1`]), `${flag} -> 0`]
  }

  private bound(
    ctx: Ctx,
    role: 'low' | 'high',
  ): { text: string; lo: number; hi: number; roots: string[]; len?: [string, number] } {
    const arrays = this.arrays(ctx)
    const loops = this.scalars(ctx).filter((v) => v.loop && v.interval && v.interval[0] >= 0 && v.interval[1] <= 6)
    const frozenable = this.scalars(ctx)
    return this.rng.weighted<() => ReturnType<FunctionGenerator['bound']>>([
      [
        () => {
          const v = role === 'low' ? this.rng.int(-1, 2) : this.rng.int(0, 5)
          return { text: String(v), lo: v, hi: v, roots: [] }
        },
        4,
      ],
      [
        () => {
          const a = this.rng.pick(arrays)
          const off = role === 'low' ? 0 : this.rng.pick([0, -1])
          return {
            text: off ? `len(${a.name}) - ${-off}` : `len(${a.name})`,
            lo: a.minLength! + off,
            hi: a.maxLength! + off,
            roots: [],
            len: [a.name, off],
          }
        },
        arrays.length ? 3 : 0,
      ],
      [
        () => {
          const v = this.rng.pick(loops)
          const off = this.rng.int(0, 1)
          return {
            text: off ? `${v.name} + ${off}` : v.name,
            lo: v.interval![0] + off,
            hi: v.interval![1] + off,
            roots: [v.name],
          }
        },
        loops.length ? 1.5 : 0,
      ],
      [
        () => {
          const v = this.rng.pick(frozenable)
          const m = this.rng.pick([1, 3])
          return { text: `(${v.name} & ${m})`, lo: 0, hi: m, roots: [v.name] }
        },
        frozenable.length ? 1 : 0,
      ],
    ])()
  }

  private for(ctx: Ctx): string[] | undefined {
    const down = this.rng.chance(0.35)
    let step = down ? this.rng.pick([-1, -1, -2]) : this.rng.pick([1, 1, 1, 2, 3])
    // sometimes a step computed at run time, from a variable frozen in the loop
    let stepText: string | undefined
    const stepRoots: string[] = []
    const scal = this.scalars(ctx)
    if (scal.length && this.rng.chance(0.12)) {
      const sv = this.rng.pick(scal)
      stepText = down ? `(-1 - (${sv.name} & 1))` : `((${sv.name} & 1) + 1)`
      step = down ? -1 : 1 // the smallest step in magnitude bounds the trip count
      stepRoots.push(sv.name)
    }
    const inclusive = this.rng.chance(0.4)
    // counting up: start is the low bound; counting down: start is the high bound
    const start = this.bound(ctx, down ? 'high' : 'low')
    const stop = this.bound(ctx, down ? 'low' : 'high')
    let lo: number, hi: number, trips: number
    if (!down) {
      lo = start.lo
      hi = stop.hi - (inclusive ? 0 : 1)
      trips = Math.max(0, Math.floor((hi - start.lo) / step) + 1)
    } else {
      lo = stop.lo + (inclusive ? 0 : 1)
      hi = start.hi
      trips = Math.max(0, Math.floor((start.hi - lo) / -step) + 1)
    }
    if (!Number.isFinite(trips)) return undefined
    if (ctx.trips * Math.max(1, trips) > this.maxTrips) return undefined
    const name = `i${ctx.loopDepth}`
    const v: Var = { name, kind: 'scalar', loop: true }
    if (lo <= hi && Number.isFinite(lo) && Number.isFinite(hi)) v.interval = [lo, hi]
    // loops over the length of an array of unknown length index it in bounds
    if (!down && stop.len && start.roots.length === 0 && start.lo >= 0 && start.lo === start.hi) {
      const [arr, off] = stop.len
      const o1 = -start.lo,
        o2 = -off - (inclusive ? 1 : 0)
      if (o1 <= o2) v.indexes = new Map([[arr, [Math.max(o1, -2), Math.min(o2, 2)]]])
    } else if (down && start.len && stop.roots.length === 0 && stop.lo === stop.hi) {
      const [arr, off] = start.len
      const first = stop.lo + (inclusive ? 0 : 1)
      const o1 = -first,
        o2 = -off - 1
      if (o1 <= o2) v.indexes = new Map([[arr, [Math.max(o1, -2), Math.min(o2, 2)]]])
    }
    const roots = [...start.roots, ...stop.roots, ...stepRoots]
    for (const r of roots) this.read(r)
    const inner = this.child(ctx, {
      addVars: [v],
      freeze: roots,
      trips: ctx.trips * Math.max(1, trips),
      loopDepth: ctx.loopDepth + 1,
    })
    const body = this.seq(inner)
    const by = stepText !== undefined ? ` by ${stepText}` : step === 1 && this.rng.chance(0.7) ? '' : ` by ${step}`
    // `in reverse` runs the same values backwards (how inverses print; also legal source),
    // also before a start that begins with `(`: `for i in reverse (x & 1)..4`
    const rev = this.rng.chance(0.1) ? 'reverse ' : ''
    return withBlock(`for ${name} in ${rev}${start.text}${inclusive ? '..=' : '..'}${stop.text}${by}`, body)
  }

  private while(ctx: Ctx): string[] | undefined {
    const w = this.fresh('w')
    let n: string,
      nHi: number,
      roots: string[] = []
    const scal = this.scalars(ctx)
    if (scal.length && this.rng.chance(0.5)) {
      const v = this.rng.pick(scal)
      nHi = this.rng.pick([1, 3])
      n = `(${v.name} & ${nHi})`
      roots = [v.name]
      this.read(v.name)
    } else {
      nHi = this.rng.int(0, 4)
      n = String(nHi)
    }
    if (ctx.trips * Math.max(1, nHi) > this.maxTrips) return undefined
    const up = this.rng.chance(0.6)
    const before = this.rng.chance(0.5) // change the counter before the body instead of after
    const interval: [number, number] = up ? (before ? [1, nHi] : [0, nHi - 1]) : before ? [0, nHi - 1] : [1, nHi]
    const counter: Var = { name: w, kind: 'scalar' }
    if (interval[0] <= interval[1]) counter.interval = interval
    const inner = this.child(ctx, { addVars: [counter], freeze: [...roots, w], trips: ctx.trips * Math.max(1, nHi) })
    const body = this.seq(inner)
    const bump = up ? `${w} += 1` : `${w} -= 1`
    const lines = before ? [bump, ...body] : [...body, bump]
    if (up) {
      const [pre, post] = this.rng.chance(0.5) ? [`${w} < ${n}`, `${w} > 0`] : [`${w} != ${n}`, `${w} != 0`]
      return [`${w}: i32 <- 0`, ...withBlock(`while (${pre}, ${post})`, lines), `${w} -> ${n}`]
    }
    return [`${w}: i32 <- ${n}`, ...withBlock(`while (${w} > 0, ${w} < ${n})`, lines), `${w} -> 0`]
  }

  private ancilla(ctx: Ctx): string[] | undefined {
    const t = this.fresh('t')
    const [e, roots] = this.tracked(() => this.expr(ctx, this.rng.int(0, 2), []))
    const inner = this.child(ctx, { addVars: [{ name: t, kind: 'scalar' }], freeze: [...roots, t] })
    const body = this.seq(inner)
    return [`${t}: i32 <- ${e.text}`, ...body, `${t} -> ${e.text}`]
  }

  private routine(ctx: Ctx): string[] | undefined {
    const t = this.fresh('t')
    const [r, touched] = this.tracked(() => {
      const init = this.rng.chance(0.5) ? '0' : (this.varExpr(ctx, 1)?.text ?? '0')
      const inner = this.child(ctx, { addVars: [{ name: t, kind: 'scalar' }] })
      return [`${t}: i32 <- ${init}`, ...this.seq(inner, 2)]
    })
    touched.add(t)
    const after = this.child(ctx, { addVars: [{ name: t, kind: 'scalar' }], freeze: touched, depth: ctx.depth })
    const s = this.seq(after, 2)
    return [...withBlock('routine', r), ...s, '~routine']
  }

  private invblock(ctx: Ctx): string[] | undefined {
    const t = this.fresh('t')
    const withT = this.child(ctx, { addVars: [{ name: t, kind: 'scalar' }], depth: ctx.depth })
    const [b, touched] = this.tracked(() => this.seq(withT, 2))
    touched.add(t)
    const after = this.child(ctx, { addVars: [{ name: t, kind: 'scalar' }], freeze: touched, depth: ctx.depth })
    const s = this.seq(after, 2)
    return [
      `${t}: i32 <- 0`,
      ...b,
      ...s,
      ...withBlock('~', b).map((l, i) => (i === 0 ? l.replace('~ {', '~{') : l)),
      `${t} -> 0`,
    ]
  }

  private call(ctx: Ctx): string[] | undefined {
    const h = this.helper!
    const params = h.signature.params
    const args: string[] = new Array(params.length)
    // memory the call writes: written scalars (distinct writable references) and written arrays
    const written: Ref[] = []
    for (const [i, p] of params.entries()) {
      if (p.type !== 'i32' || !h.written[i]) continue
      const r = this.writable(ctx, written, true)
      if (!r) return undefined
      written.push(r)
      this.wrote(r.root)
      this.readRef(r)
      args[i] = r.text
    }
    const passed = new Set<string>()
    for (const [i, p] of params.entries()) {
      if (p.type !== 'i32[]') continue
      // an array passed whole: no written argument may live in it, and a written one is passed once
      const ok = this.arrays(ctx).filter(
        (a) =>
          a.minLength! >= p.length &&
          a.maxLength! <= p.maxLength &&
          !passed.has(a.name) &&
          (!h.written[i] || !ctx.frozen.has(a.name)) &&
          written.every((r) => r.root !== a.name),
      )
      if (!ok.length) return undefined
      const a = this.rng.pick(ok)
      passed.add(a.name)
      if (h.written[i]) {
        written.push({ root: a.name, whole: true, text: a.name })
        this.wrote(a.name)
      } else this.read(a.name)
      args[i] = a.name
    }
    // read-only scalars: any expression that reads nothing the call writes
    for (const [i, p] of params.entries()) {
      if (p.type !== 'i32' || h.written[i]) continue
      // (`-(x)` here is a negated dataview, also of a loop variable or a frozen variable)
      args[i] = this.expr(ctx, this.rng.int(0, 1), written).text
    }
    return [`${this.rng.chance(0.3) ? '~' : ''}g(${args.join(', ')})`]
  }

  private stack(ctx: Ctx): string[] | undefined {
    const s = this.fresh('s')
    const a = this.writable(ctx, [])
    if (!a) return undefined
    const b = this.rng.chance(0.4) ? this.writable(ctx, []) : undefined
    const pushed = b ? [a, b] : [a]
    for (const r of pushed) {
      this.wrote(r.root)
      this.readRef(r)
    }
    const inner = this.child(ctx, { freeze: pushed.map((r) => r.root), depth: ctx.depth })
    const body = this.seq(inner, 2)
    return [
      `${s}: stack<i32> <- []`,
      ...pushed.map((r) => `push(${s}, ${r.text})`),
      ...body,
      ...[...pushed].reverse().map((r) => `pop(${s}, ${r.text})`),
      `${s} -> []`,
    ]
  }

  private unchecked(ctx: Ctx): string[] | undefined {
    return withBlock('@unchecked', this.seq(this.child(ctx, {})))
  }
}

// ---------------------------------------------------------------------------------------------

function paramText(p: ParamSpec): string {
  return `${p.name}: ${p.type}`
}

/** The variables of a function's parameters. */
function paramVars(params: readonly ParamSpec[]): Map<string, Var> {
  return new Map(
    params.map((p): [string, Var] => [
      p.name,
      p.type === 'i32'
        ? { name: p.name, kind: 'scalar' }
        : { name: p.name, kind: 'array', minLength: p.length, maxLength: p.maxLength },
    ]),
  )
}

/**
 * Generates a random valid reversible program over i32 from `seed`: an entry function `f`
 * and usually a helper `g` that `f` calls and uncalls. The same seed and options always give
 * the same program.
 */
export function randomProgram(seed: number, opts: RandomProgramOptions = {}): RandomProgram {
  const rng = new Random(seed)
  const features = { ...ALL_FEATURES, ...opts.features }
  const budget = opts.maxStatements ?? 24
  const maxDepth = opts.maxDepth ?? 3
  const maxTrips = opts.maxTrips ?? 48

  // the helper g(y0.., c0?)
  let helper: HelperInfo | undefined
  let helperText: string | undefined
  if (features.call && rng.chance(0.75)) {
    const params: ParamSpec[] = []
    const nScalars = rng.int(1, 3)
    for (let k = 0; k < nScalars; k++) params.push({ name: `y${k}`, type: 'i32' })
    if (features.arrays && rng.chance(0.4)) {
      const min = rng.int(1, 3)
      params.splice(rng.int(0, params.length), 0, {
        name: 'c0',
        type: 'i32[]',
        length: min,
        maxLength: MAX_ARRAY_LENGTH,
      })
    }
    const vars = paramVars(params)
    const gen = new FunctionGenerator(
      rng,
      features,
      Math.max(2, Math.round(budget / 3)),
      Math.min(maxDepth, 2),
      Math.max(4, Math.round(maxTrips / 4)),
      undefined,
    )
    const body = gen.body({ vars, frozen: new Set(), depth: 0, trips: 1, loopDepth: 0, calls: false })
    const signature: Signature = { name: 'g', params }
    helper = { signature, written: params.map((p) => gen.written.has(p.name)) }
    helperText = [`fn g(${params.map(paramText).join(', ')}) {`, ...indent(body), '}'].join('\n')
  }

  // the entry f(x0.., a0..)
  const params: ParamSpec[] = []
  const nScalars = rng.int(1, 4)
  for (let k = 0; k < nScalars; k++) params.push({ name: `x${k}`, type: 'i32' })
  if (features.arrays) {
    const nArrays = rng.int(0, 2)
    for (let k = 0; k < nArrays; k++) {
      const n = rng.int(1, MAX_ARRAY_LENGTH)
      params.splice(rng.int(0, params.length), 0, { name: `a${k}`, type: 'i32[]', length: n, maxLength: n })
    }
  }
  const vars = paramVars(params)
  const gen = new FunctionGenerator(rng, features, budget, maxDepth, maxTrips, helper)
  const body = gen.body({ vars, frozen: new Set(), depth: 0, trips: 1, loopDepth: 0, calls: helper !== undefined })
  const fText = [`fn f(${params.map(paramText).join(', ')}) {`, ...indent(body), '}'].join('\n')
  const signature: Signature = { name: 'f', params }
  const texts = helperText ? (rng.chance(0.5) ? [helperText, fText] : [fText, helperText]) : [fText]
  return {
    seed,
    source: texts.join('\n\n') + '\n',
    entry: 'f',
    signature,
    functions: helper ? [signature, helper.signature] : [signature],
  }
}

/**
 * Random arguments for `signature`: numbers for scalars, `Int32Array`s for arrays (of the
 * declared length, or for a helper's minimum length up to its maximum).
 */
export function randomArgs(signature: Signature, seed: number): Array<number | Int32Array> {
  const rng = new Random(seed ^ 0x5bd1e995)
  return signature.params.map((p) => {
    if (p.type === 'i32') return rng.int32()
    const n = rng.int(p.length, Math.max(p.length, p.maxLength))
    const a = new Int32Array(n)
    for (let i = 0; i < n; i++) a[i] = rng.int32()
    return a
  })
}
