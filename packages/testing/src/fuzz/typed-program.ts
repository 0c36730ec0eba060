/**
 * A seeded generator of random, valid, reversible Tenet programs over a real-valued scalar
 * type (`f64`, `f32` or `fixed`), for the fuzzer and the conformance runs of backends without f64. It complements `randomProgram` (i32, every
 * construct, exact): here the values are reals, so the programs also exercise the float
 * semantics of each backend (`sin`, `cos`, products, rotations) and can be differentiated.
 *
 * Every program has an entry function
 *
 *   fn f(w0: T, w1: T, w2: T, p: T, n: i32, x: T[])
 *
 * where `w0..w2` and the elements of `x` are written, `p` and `n` are only read (so a condition
 * on them has the same value in the forward and the inverse run, whatever the rounding), and
 * `x` has `ARRAY_LENGTH` elements. It may call a helper `g(a: T, b: T, v: T[])` (calls and
 * uncalls) and a recursive `r(d: i32, a: T, b: T)`. Constructs: `+=`/`-=` with pure
 * expressions, `SWAP`, `NEG`, `ROT` (f64, f32), `for` over the array (with `x[i]`), `if` on `p`, `n`
 * and loop variables, `while` with an i32 counter, ancillas computed in `routine { } ~routine`,
 * stacks (`push`/`pop`, when `stacks` is on), calls, uncalls and recursion.
 *
 * Conditions never read a value the program writes, so forward and inverse runs take the same
 * branches; an expression never reads the variable it updates; a routine only writes its own
 * ancillas, and what it reads is frozen until `~routine`.
 */
import { Random } from '../random.js'

/** The real-valued scalar types the generator writes programs over. */
export type RealType = 'f64' | 'f32' | 'fixed'

/** Options of `randomRealProgram`. */
export interface RealProgramOptions {
  /** Scalar type of every value (default `f64`). */
  type?: RealType
  /** Emit stacks (`push`/`pop`); backends without stacks need it off. Default true. */
  stacks?: boolean
  /** Emit the recursive helper `r`. Default true. */
  recursion?: boolean
  /** Statement budget of `f` (default 14). */
  maxStatements?: number
  /**
   * The unary functions expressions call (default `['sin', 'cos']`). A wider set (`exp`,
   * `tanh`, `atan`, …) exercises more of a backend's math library. An entry with `#` is a
   * template, `#` standing for the argument (`'sqrt(1.0 + # * #)'`): a function kept inside
   * its domain.
   */
  functions?: string[]
  /** Also emit `/` in expressions (default false; a division by a value near 0 grows fast). */
  division?: boolean
  /**
   * Only programs `@tenet/ad` can differentiate (default false): calls pass variables and
   * literals, never expressions, as real arguments.
   */
  differentiable?: boolean
}

/** A generated real-valued program. */
export interface RealProgram {
  seed: number
  type: RealType
  source: string
  entry: 'f'
  /** Number of elements of the array parameter `x`. */
  arrayLength: number
}

/** Elements of the entry's array parameter. */
export const ARRAY_LENGTH = 4

interface Scope {
  /** Writable scalars of type T (not frozen). */
  writable: string[]
  /** Readable scalars of type T (writable ones included). */
  readable: string[]
  /** i32 values that are constant here (loop variables, `n`), with their value ranges. */
  ints: Map<string, [number, number]>
  /** The array `x` (or the helper's `v`) may be written here. */
  arrayWritable: boolean
  array: string
  depth: number
}

class RealGenerator {
  private counter = 0
  private budget: number

  constructor(
    private readonly rng: Random,
    private readonly type: RealType,
    private readonly opts: Required<Omit<RealProgramOptions, 'type'>>,
    budget: number,
    private readonly callees: { g: boolean; r: boolean },
  ) {
    this.budget = budget
  }

  private fresh(prefix: string): string {
    return `${prefix}${this.counter++}`
  }

  literal(): string {
    const v = this.rng.pick([0.5, 0.25, 1.5, -0.75, 2.0, -1.25, 0.125, 3.0])
    return Number.isInteger(v) ? `${v}.0` : String(v)
  }

  /** An in-bounds index of the array: a constant or a loop variable (plus a constant). */
  private index(s: Scope): string {
    const loops = [...s.ints].filter(([name, [lo, hi]]) => name !== 'n' && lo >= 0 && hi < ARRAY_LENGTH)
    if (loops.length && this.rng.chance(0.7)) {
      const [name, [lo, hi]] = this.rng.pick(loops)
      const offs = [0, 1, -1, 2].filter((o) => lo + o >= 0 && hi + o < ARRAY_LENGTH)
      const o = this.rng.pick(offs)
      return o === 0 ? name : o > 0 ? `${name} + ${o}` : `${name} - ${-o}`
    }
    return String(this.rng.int(0, ARRAY_LENGTH - 1))
  }

  /** A pure expression of type T; `noArray` keeps it off the array (when an element is the target). */
  expr(s: Scope, depth: number, avoid: string, noArray = false): string {
    noArray ||= !s.array
    if (depth > 0 && this.rng.chance(0.55)) {
      const k = this.rng.int(0, 9)
      if (k < 2) {
        const f = this.rng.pick(this.opts.functions)
        const arg = this.expr(s, depth - 1, avoid, noArray)
        return f.includes('#') ? f.replaceAll('#', `(${arg})`) : `${f}(${arg})`
      }
      const op = this.rng.pick(this.opts.division ? ['+', '-', '*', '*', '/'] : ['+', '-', '*', '*'])
      return `(${this.expr(s, depth - 1, avoid, noArray)} ${op} ${this.expr(s, depth - 1, avoid, noArray)})`
    }
    const vars = s.readable.filter((v) => v !== avoid)
    const r = this.rng.next()
    if (r < 0.25 || (!vars.length && noArray)) return this.literal()
    if (!noArray && (r < 0.45 || !vars.length)) return `${s.array}[${this.index(s)}]`
    return this.rng.pick(vars.length ? vars : [this.literal()])
  }

  body(s: Scope): string[] {
    const out: string[] = []
    while (this.budget > 0) out.push(...this.stmt(s))
    return out
  }

  private seq(s: Scope, max = 3): string[] {
    const out: string[] = []
    const n = this.rng.int(1, max)
    for (let k = 0; k < n && this.budget > 0; k++) out.push(...this.stmt(s))
    return out.length ? out : this.update(s)
  }

  private stmt(s: Scope): string[] {
    this.budget--
    const nest = s.depth < 3 && this.budget > 1
    type Kind = 'update' | 'swap' | 'neg' | 'rot' | 'for' | 'if' | 'while' | 'routine' | 'stack' | 'g' | 'r'
    const kind = this.rng.weighted<Kind>([
      ['update', 6],
      ['swap', s.writable.length >= 2 ? 1 : 0],
      ['neg', s.writable.length ? 0.6 : 0],
      ['rot', this.type !== 'fixed' && s.writable.length >= 2 ? 0.8 : 0],
      ['for', nest && s.array ? 1.6 : 0],
      ['if', nest ? 1.2 : 0],
      ['while', nest ? 0.6 : 0],
      ['routine', nest ? 1 : 0],
      ['stack', nest && this.opts.stacks && s.writable.length ? 0.6 : 0],
      ['g', this.callees.g && s.writable.length && s.arrayWritable ? 1 : 0],
      ['r', this.callees.r && s.writable.length ? 0.7 : 0],
    ])
    return this[kind](s)
  }

  private update(s: Scope): string[] {
    const op = this.rng.pick(['+=', '-=', '+='])
    const scalars = s.writable
    if (s.arrayWritable && (!scalars.length || this.rng.chance(0.35))) {
      return [`${s.array}[${this.index(s)}] ${op} ${this.expr(s, this.rng.int(0, 2), '', true)}`]
    }
    if (!scalars.length) return []
    const t = this.rng.pick(scalars)
    return [`${t} ${op} ${this.expr(s, this.rng.int(0, 2), t)}`]
  }

  private swap(s: Scope): string[] {
    const a = this.rng.pick(s.writable)
    const b = this.rng.pick(s.writable.filter((v) => v !== a))
    return [this.rng.chance(0.5) ? `SWAP(${a}, ${b})` : `${a} <-> ${b}`]
  }

  private neg(s: Scope): string[] {
    return [`NEG(${this.rng.pick(s.writable)})`]
  }

  private rot(s: Scope): string[] {
    const a = this.rng.pick(s.writable)
    const b = this.rng.pick(s.writable.filter((v) => v !== a))
    const theta = this.rng.pick([...s.readable.filter((v) => v !== a && v !== b), this.literal()])
    return [`${this.rng.pick(['ROT', 'IROT'])}(${a}, ${b}, ${theta})`]
  }

  private for(s: Scope): string[] {
    const i = this.fresh('i')
    const down = this.rng.chance(0.3)
    const ints = new Map(s.ints).set(i, [0, ARRAY_LENGTH - 1] as [number, number])
    const head = down
      ? `for ${i} in ${ARRAY_LENGTH - 1}..=0 by -1`
      : this.rng.chance(0.5)
        ? `for ${i} in 0..len(${s.array})`
        : `for ${i} in 0..${ARRAY_LENGTH}`
    return [`${head} {`, ...this.seq({ ...s, ints, depth: s.depth + 1 }).map((l) => `  ${l}`), '}']
  }

  private cond(s: Scope): string {
    const ints = [...s.ints.keys()]
    const real = s.readable.includes('p') ? ['p'] : []
    return this.rng.weighted<() => string>([
      [
        () => `${this.rng.pick(ints)} ${this.rng.pick(['>', '<', '==', '!=', '>='])} ${this.rng.int(0, 3)}`,
        ints.length ? 2 : 0,
      ],
      [() => `${real[0]} ${this.rng.pick(['>', '<'])} ${this.literal()}`, real.length ? 2 : 0],
      [() => 'true', ints.length || real.length ? 0 : 1],
    ])()
  }

  private if(s: Scope): string[] {
    const inner = { ...s, depth: s.depth + 1 }
    const then = this.seq(inner)
    const lines = [`if (${this.cond(s)}, ~) {`, ...then.map((l) => `  ${l}`)]
    if (this.rng.chance(0.5)) lines.push('} else {', ...this.seq(inner).map((l) => `  ${l}`))
    lines.push('}')
    return lines
  }

  private while(s: Scope): string[] {
    const k = this.fresh('k')
    const m = this.rng.int(1, 3)
    const ints = new Map(s.ints)
    const body = this.seq({ ...s, ints, depth: s.depth + 1 })
    return [
      `${k}: i32 <- 0`,
      `while (${k} < ${m}, ${k} > 0) {`,
      ...body.map((l) => `  ${l}`),
      `  ${k} += 1`,
      '}',
      `${k} -> ${m}`,
    ]
  }

  /** `routine { t <- 0; t += e } S ~routine`: S may read t but writes neither t nor what e reads. */
  private routine(s: Scope): string[] {
    const t = this.fresh('t')
    const reads = new Set<string>()
    const e = this.expr({ ...s, readable: s.readable }, this.rng.int(1, 2), '')
    for (const v of s.readable) if (new RegExp(`\\b${v}\\b`).test(e)) reads.add(v)
    const readsArray = e.includes(`${s.array}[`)
    const zero = this.type === 'fixed' ? '0.0' : '0.0'
    const middle = this.seq({
      ...s,
      writable: s.writable.filter((v) => !reads.has(v)),
      readable: [...s.readable, t],
      arrayWritable: s.arrayWritable && !readsArray,
      depth: s.depth + 1,
    })
    return ['routine {', `  ${t}: ${this.type} <- ${zero}`, `  ${t} += ${e}`, '}', ...middle, '~routine']
  }

  /** A value moved onto a stack (zeroed there) and back; in between it is frozen. */
  private stack(s: Scope): string[] {
    const st = this.fresh('s')
    const a = this.rng.pick(s.writable)
    const inner = { ...s, writable: s.writable.filter((v) => v !== a), depth: s.depth + 1 }
    return [
      `${st}: stack<${this.type}> <- []`,
      `push(${st}, ${a})`,
      ...this.seq(inner),
      `pop(${st}, ${a})`,
      `${st} -> []`,
    ]
  }

  private g(s: Scope): string[] {
    const a = this.rng.pick(s.writable)
    // an expression argument has no variable for its gradient: the AD transform rejects it
    const b =
      this.rng.chance(0.5) && !this.opts.differentiable
        ? this.expr(s, 1, a, true)
        : this.rng.pick([...s.readable.filter((v) => v !== a), this.literal()])
    return [`${this.rng.chance(0.3) ? '~' : ''}g(${a}, ${b}, ${s.array})`]
  }

  private r(s: Scope): string[] {
    const a = this.rng.pick(s.writable)
    const b = this.rng.pick([...s.readable.filter((v) => v !== a), this.literal()])
    return [`${this.rng.chance(0.3) ? '~' : ''}r(${this.rng.int(0, 4)}, ${a}, ${b})`]
  }
}

/**
 * A random real-valued program (see the module comment). The same seed and options always
 * give the same program.
 */
export function randomRealProgram(seed: number, options: RealProgramOptions = {}): RealProgram {
  const type = options.type ?? 'f64'
  const opts = {
    stacks: options.stacks ?? true,
    recursion: options.recursion ?? true,
    maxStatements: options.maxStatements ?? 14,
    functions: options.functions ?? ['sin', 'cos'],
    division: options.division ?? false,
    differentiable: options.differentiable ?? false,
  }
  const rng = new Random(seed)
  const fns: string[] = []
  const useG = rng.chance(0.5),
    useR = opts.recursion && rng.chance(0.4)
  if (useG) {
    const gen = new RealGenerator(rng, type, { ...opts, stacks: opts.stacks }, rng.int(2, 5), { g: false, r: false })
    const body = gen.body({
      writable: ['a'],
      readable: ['a', 'b'],
      ints: new Map(),
      arrayWritable: true,
      array: 'v',
      depth: 1,
    })
    fns.push(`fn g(a: ${type}, b: ${type}, v: ${type}[]) {`, ...body.map((l) => `  ${l}`), '}', '')
  }
  if (useR) {
    const gen = new RealGenerator(rng, type, { ...opts, stacks: false }, rng.int(1, 3), { g: false, r: false })
    const body = gen.body({
      writable: ['a'],
      readable: ['a', 'b'],
      ints: new Map([['d', [0, 4]]]),
      arrayWritable: false,
      array: '',
      depth: 2,
    })
    // the recursive call comes first or last in the branch, so the uncall mirrors it
    const call = 'r(d - 1, a, b)'
    const inner = rng.chance(0.5) ? [...body, call] : [call, ...body]
    fns.push(
      `fn r(d: i32, a: ${type}, b: ${type}) {`,
      '  if (d > 0, ~) {',
      ...inner.map((l) => `    ${l}`),
      '  }',
      '}',
      '',
    )
  }
  const gen = new RealGenerator(rng, type, opts, opts.maxStatements, { g: useG, r: useR })
  const body = gen.body({
    writable: ['w0', 'w1', 'w2'],
    readable: ['w0', 'w1', 'w2', 'p'],
    ints: new Map([['n', [0, 3]]]),
    arrayWritable: true,
    array: 'x',
    depth: 0,
  })
  fns.push(
    `fn f(w0: ${type}, w1: ${type}, w2: ${type}, p: ${type}, n: i32, x: ${type}[]) {`,
    ...body.map((l) => `  ${l}`),
    '}',
  )
  return { seed, type, source: fns.join('\n'), entry: 'f', arrayLength: ARRAY_LENGTH }
}

/** A random argument list for a generated real program: small reals, `n` in 0..3. */
export function randomRealArgs(
  program: RealProgram,
  seed: number,
): [number, number, number, number, number, Float64Array] {
  const rng = new Random(seed)
  const real = () => Math.round((rng.next() * 2 - 1) * 2 ** 20) / 2 ** 20 // on every fixed grid too
  return [real(), real(), real(), real(), rng.int(0, 3), Float64Array.from({ length: program.arrayLength }, real)]
}

/** Smooth functions kept inside their domains: the default of `randomRealExpressions`. */
export const SMOOTH_FUNCTIONS = [
  'sin',
  'cos',
  'tanh',
  'atan',
  'exp(0.3 * tanh(#))',
  'sqrt(1.0 + # * #)',
  'log(2.0 + sin(#))',
]

/** What `randomRealExpressions` returns. */
export interface RealExpressions {
  /** A random pure expression over the names in `vars` (which may be array elements, `x[i]`), nested up to `depth`. */
  expr(vars: readonly string[], depth: number): string
  /** A uniform number in [0, 1) from the same seeded stream. */
  rnd(): number
  /** One of `items`, from the same stream. */
  pick<T>(items: readonly T[]): T
}

/**
 * Random real-valued expressions from the generator of `randomRealProgram` (the same
 * expressions its statements use), for tests that write their own program around them. The
 * default functions are smooth everywhere (`SMOOTH_FUNCTIONS`), so every expression is
 * differentiable at every point.
 */
export function randomRealExpressions(
  seed: number,
  options: Pick<RealProgramOptions, 'type' | 'functions' | 'division'> = {},
): RealExpressions {
  const rng = new Random(seed)
  const opts = {
    stacks: false,
    recursion: false,
    maxStatements: 0,
    functions: options.functions ?? SMOOTH_FUNCTIONS,
    division: options.division ?? false,
    differentiable: true,
  }
  const gen = new RealGenerator(rng, options.type ?? 'f64', opts, 0, { g: false, r: false })
  return {
    expr: (vars, depth) =>
      gen.expr(
        { writable: [], readable: [...vars], ints: new Map(), arrayWritable: false, array: '', depth: 0 },
        depth,
        '',
        true,
      ),
    rnd: () => rng.next(),
    pick: (items) => rng.pick(items),
  }
}
