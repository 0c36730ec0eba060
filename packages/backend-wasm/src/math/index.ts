/**
 * The math routines a wasm module computes itself (no call out to JS): their registry, keyed by
 * name, and the library that emits the routines a module uses, each once, with the routines
 * they call.
 */
import { standardPrimitives } from '@tenet/ir'
import { Bytes, type DefinedFunc } from '../encoder.js'
import { Routine, type T } from './builder.js'
import { withPool } from './constants.js'
import { buildAsin, buildAcos } from './asin.js'
import { buildAtan, buildAtan2 } from './atan.js'
import { buildExp, buildExpm1 } from './exp.js'
import { buildExpF64x2 } from './exp-f64x2.js'
import { buildSincosF64x2 } from './sincos-f64x2.js'
import { buildCosh, buildSinh, buildTanh } from './hyperbolic.js'
import { buildLog } from './log.js'
import { buildLogF64x2 } from './log-f64x2.js'
import { buildPow } from './pow.js'
import { build2opi, buildCos, buildRemPio2Huge, buildSin, buildSincos, buildTan } from './trig.js'

/** One routine: its wasm signature and the builder of its body. */
export interface MathRoutine {
  readonly params: T[]
  readonly results: T[]
  readonly build: (r: Routine) => void
}

const f1: Pick<MathRoutine, 'params' | 'results'> = { params: ['f64'], results: ['f64'] }

/**
 * Every routine, the helpers (names starting with `__`) included. The public ones are f64 → f64
 * (f64 × f64 → f64 for `atan2` and `pow`) with the results of `Math.<name>`.
 */
export const MATH_ROUTINES: Readonly<Record<string, MathRoutine>> = {
  sin: { ...f1, build: buildSin },
  cos: { ...f1, build: buildCos },
  tan: { ...f1, build: buildTan },
  exp: { ...f1, build: buildExp },
  expm1: { ...f1, build: buildExpm1 },
  log: { ...f1, build: buildLog },
  atan: { ...f1, build: buildAtan },
  atan2: { params: ['f64', 'f64'], results: ['f64'], build: buildAtan2 },
  asin: { ...f1, build: buildAsin },
  acos: { ...f1, build: buildAcos },
  sinh: { ...f1, build: buildSinh },
  cosh: { ...f1, build: buildCosh },
  tanh: { ...f1, build: buildTanh },
  pow: { params: ['f64', 'f64'], results: ['f64'], build: buildPow },
  __sincos: { params: ['f64'], results: ['f64', 'f64'], build: buildSincos },
  __rem_pio2_huge: { params: ['f64'], results: ['i32', 'f64', 'f64'], build: buildRemPio2Huge },
  __2opi: { params: ['i32'], results: ['i64'], build: build2opi },
  __exp_f64x2: { params: ['v128'], results: ['v128'], build: buildExpF64x2 },
  __log_f64x2: { params: ['v128'], results: ['v128'], build: buildLogF64x2 },
  __sincos_f64x2: { params: ['v128'], results: ['v128', 'v128'], build: buildSincosF64x2 },
}

/**
 * The f64x2 routine of a math function, where there is one: it computes both lanes as the
 * scalar routine does (the same doubles), for lane pairs (\`lanes.ts\`) and paired loops. \`auto\`:
 * used under the default choice (\`'auto'\`), where a paired loop measured faster than the scalar
 * routine twice (\`bench/math.bench.mjs\`, see the README); \`'module'\` uses every one.
 */
export const VECTOR_MATH: Readonly<Record<string, { routine: string; auto: boolean }>> = {
  exp: { routine: '__exp_f64x2', auto: true },
  // a paired loop of log measured no faster than the scalar routine (median ratios 1.01–1.13)
  log: { routine: '__log_f64x2', auto: false },
}

/** The f64x2 routine standing for math function \`name\` under \`choice\`, if any. */
export function vectorRoutine(name: string, choice: MathChoice): string | undefined {
  if (!Object.hasOwn(VECTOR_MATH, name) || choice === 'import') return undefined
  const v = VECTOR_MATH[name]!
  return choice === 'module' || v.auto ? v.routine : undefined
}

/** The JS function each public routine stands for. */
export const MATH_REFERENCE: Readonly<Record<string, (...a: number[]) => number>> = {
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  exp: Math.exp,
  expm1: Math.expm1,
  log: Math.log,
  atan: Math.atan,
  atan2: Math.atan2,
  asin: Math.asin,
  acos: Math.acos,
  sinh: Math.sinh,
  cosh: Math.cosh,
  tanh: Math.tanh,
  pow: Math.pow,
}

/**
 * The routines of one module. `use(name)` gives a routine's index among the module's defined
 * functions (they follow the `base` functions defined before them); `functions()` builds the
 * bodies of all those used, and of the routines they call, in index order. Each call between
 * routines is reported to `onCall` (its placeholder and the callee's defined-function index) to
 * be patched with the module's other calls.
 */
export class MathLibrary {
  private readonly used: string[] = []
  private readonly index = new Map<string, number>()

  constructor(
    private readonly base: number,
    private readonly onCall: (body: Bytes, at: number, target: number) => void,
  ) {}

  /** The defined-function index of the routine `name` (registering it on first use). */
  use(name: string): number {
    if (!Object.hasOwn(MATH_ROUTINES, name)) throw new Error(`wasm math: no routine \`${name}\``)
    let k = this.index.get(name)
    if (k === undefined) {
      k = this.used.length
      this.used.push(name)
      this.index.set(name, k)
    }
    return this.base + k
  }

  /** The names of the routines used so far, in index order. */
  names(): string[] {
    return [...this.used]
  }

  /** The bodies of the routines used (and of those they call), in index order. */
  functions(): DefinedFunc[] {
    const out: DefinedFunc[] = []
    for (let k = 0; k < this.used.length; k++) {
      const built = builtRoutine(this.used[k]!)
      // a copy of the body, its calls pointed at this module's routines
      const body = new Bytes().bytes(built.bytes)
      for (const c of built.calls) this.onCall(body, c.at, this.use(c.name))
      out.push({ type: built.type, locals: built.locals, body })
    }
    return out
  }
}

/** A routine's body as built once (the same bytes in every module but for its call targets). */
interface Built {
  type: DefinedFunc['type']
  locals: DefinedFunc['locals']
  bytes: Uint8Array
  calls: Array<{ at: number; name: string }>
}
const BUILT = new Map<string, Built>()

/** The body of the routine \`name\`, built on first use (about a millisecond for sin's family). */
function builtRoutine(name: string): Built {
  let b = BUILT.get(name)
  if (!b) {
    const spec = MATH_ROUTINES[name]!
    const r = new Routine(spec.params, spec.results)
    // (its double literals read from the constants table, see \`constants.ts\`)
    const f = withPool(() => {
      spec.build(r)
      return r.done()
    })
    b = {
      type: f.type,
      locals: f.locals,
      bytes: f.body.view().slice(),
      calls: r.calls.map((c) => ({ at: c.at, name: c.name })),
    }
    BUILT.set(name, b)
  }
  return b
}

/**
 * Which transcendental functions a module computes itself: `'auto'` those that measured faster
 * in the module than through a call out to JS (`IN_MODULE`), `'module'` all of them, `'import'`
 * none (every one calls `Math.*` through an import).
 */
export type MathChoice = 'auto' | 'module' | 'import'

/**
 * The per-function choice of `'auto'`, from `bench/math.bench.mjs` (see the README): true where
 * the in-module routine was not slower than the call out (within the noise of a loaded machine).
 */
export const IN_MODULE: Readonly<Record<string, boolean>> = {
  sin: true,
  cos: true,
  tan: true,
  exp: true,
  log: true,
  atan2: true,
  asin: true,
  acos: true,
  sinh: true,
  cosh: true,
  tanh: true,
  // the call out to Math.atan measured faster (median ratio 1.12); Math.pow no slower, and the
  // routine's pow is not Math.pow's double in about 2.6% of cases (1 ulp)
  atan: false,
  pow: false,
}

const STANDARD = new Map(standardPrimitives.map((p) => [p.name, p]))

/**
 * Whether the primitive `spec` (named `name`) is computed by an in-module routine under
 * `choice`: only the standard primitive of that name (a user's override keeps its own
 * `evaluate`), and only a routine the choice selects.
 */
/**
 * Whether math function `name` is computed in the module under `choice`, whoever asks: a
 * primitive file's `emit.wasm` that names it (`{ math: 'sin' }`, or `w.math('sin')` in an emitter).
 */
export function inModuleByName(name: string, choice: MathChoice): boolean {
  if (choice === 'import' || !Object.hasOwn(IN_MODULE, name)) return false
  return choice === 'module' || IN_MODULE[name] === true
}

export function inModule(spec: unknown, name: string, choice: MathChoice): boolean {
  if (choice === 'import' || STANDARD.get(name) !== spec || !Object.hasOwn(IN_MODULE, name)) return false
  return choice === 'module' || IN_MODULE[name] === true
}

/**
 * For a standard transcendental primitive that calls out to JS, the \`Math\` function itself
 * (the same results as its \`evaluate\`; importing \`Math.sin\`, \`Math.exp\`, \`Math.pow\`, …
 * themselves measured 2–3× faster per call than importing \`evaluate\`, a closure, though not
 * for sinh, cosh and tanh, as if V8 called the former directly).
 */
export function mathImport(spec: unknown, name: string): ((...a: number[]) => number) | undefined {
  return STANDARD.get(name) === spec && Object.hasOwn(MATH_REFERENCE, name) ? MATH_REFERENCE[name] : undefined
}
