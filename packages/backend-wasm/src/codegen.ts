/**
 * Code generation: core IR → one WebAssembly function per (function, direction). Scalars are
 * wasm locals (f64, f32, i32; bool as i32 0/1), an array parameter is two i32 locals (its byte
 * address in linear memory and its length), and a function returns the final values of its
 * scalar parameters as multiple results. Array ancillas (`zeros(n)`) are carved from a heap
 * whose top is the global `hp`. Run-time checks call the imported `fail(site, values…)`, which
 * throws the same `InvertibilityError` the cpu backend throws. What has no wasm lowering
 * (number systems with their own arithmetic, stacks, fields) is rejected at compile time with
 * a `RegistryError` (code `backend/unsupported`) that points at the construct.
 */
import {
  InvertibilityError,
  RegistryError,
  RUNTIME_CHECKS,
  RUNTIME_CHECK_CODES,
  type RuntimeCheck,
  type AllocStmt,
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
  type PurePrimitiveSpec,
  standardPrimitives,
} from '@tenet/ir'
import {
  effectfulFunctions,
  hostNumber,
  userNames,
  forEachStatement,
  key,
  offsetOf,
  promotableElements,
  carriedElements,
  deadCarriedStores,
  lastKey,
  disabledPasses,
  hoistableAllocs,
  indexKey,
  stmtExprs,
  readNames,
  reusedLoads,
  runElements,
  inRun,
  type RunElement,
  type CarriedElement,
  type LoadOccurrence,
  type ReusedLoad,
  type Shared,
  type Promotion,
} from '@tenet/ir/backend'
import {
  Bytes,
  F32,
  F64,
  I32,
  I64,
  Op,
  OpFc,
  OpFd,
  V128,
  type DefinedFunc,
  type FuncType,
  type ImportedFunc,
  type ValType,
} from './encoder.js'
import { eagerOperand } from './eager-operands.js'
import { peelsFirstIteration } from './peel-ones.js'
import {
  FOLDING_HEADS,
  foldableBounds,
  foldedSuffix,
  foldsThrough,
  headCallsHost,
  loadGuards,
} from './folded-bounds.js'
import { planPair, type LaneContext, type Lanes, type PairPlan, type VectorNative } from './lanes.js'
import { planLoopPairs, type LoopPairs } from './loop-pairs.js'
import { planCheckedRangeVersion, planRangeVersion, type RangeVersion } from './range-versions.js'
import { sincosPairs, type SincosPair } from './sincos-pairs.js'
import { LaneMemo } from './lane-memo.js'
import { LANE_QUADS_MAX_VALUES, laneQuads, touchesVarying, varyingWhile } from './lane-quads.js'
import { scheduleTwins, twinLocals, type TwinLocal } from './twins.js'
import {
  blockElementPairs,
  elementSpans,
  loopUniform,
  gatherIndex,
  planMapLanes,
  unreadElements,
  readAfter,
  reads,
  readsVarying,
  writtenNames,
  type LaneType,
  type MapLanesPlan,
} from './map-lanes.js'
import { MATH, emitNative, nativeOp, runLowering, type LoweringSink } from './primitive-lowering.js'
import { MathLibrary, inModule, inModuleByName, mathImport, vectorRoutine, type MathChoice } from './math/index.js'
import { mathBijection, type MathBijection } from './math/bijections.js'
import type { Ex } from './math/builder.js'

/**
 * The plan of a paired loop (see \`loop-pairs.ts\`), with the range check that lets its paired
 * iterations run without guards where the loop's own body still has them (null for none).
 */
type PairedLoop = LoopPairs & { range: RangeVersion | null }

/** A call whose target index is patched once the number of imports is known (see \`patchCalls\`). */
interface CallSite {
  body: Bytes
  at: number
  target: number
  kind: 'import' | 'fn'
}

/** A bounds assert emitted apart before a statement, which a load of its head may take over (see \`folded-bounds.ts\`). */
interface PendingBounds {
  /** The key of its condition. */
  cond: string
  assert: Extract<Stmt, { kind: 'assert' }>
  /** Its code. */
  bytes: Bytes
}

/** The folding of the bounds asserts before a statement into the loads of its head (see \`folded-bounds.ts\`). */
interface HeadFold {
  pending: PendingBounds[]
  /** The condition of the assert of each element access of the head (see \`loadGuards\`). */
  guards: Map<Expr, string>
  /** The asserts the head's loads took over, by position in \`pending\`, in the order of the loads. */
  order: number[]
  /** Whether a call was emitted: the head's later loads take over nothing. */
  closed: boolean
}

/**
 * One copy of a pair's code in lane quads (see \`mapLaneQuads\`): its lanes by name, and its own
 * shared values (scalar and in lanes), so that neither copy reads what the other computed.
 */
interface LaneCopy {
  lanes: Map<string, { local: number; type: LaneType }>
  locals: Map<Shared, [number, ValType]>
  laneValues: Map<Shared, [number, 'f64' | 'i32' | 'mask']>
}

/**
 * An array element a loop holds in a local: its own (lane −1) or one lane of an f64x2 local that
 * holds it and the element after it (lanes 0 and 1), so that lane pairs use the two as one value.
 */
interface Held {
  local: number
  lane: -1 | 0 | 1
  /**
   * An element a run holds (see \`runHeld\`): loaded into the local where the code first reads
   * it (\`loaded\` once that code is emitted), its checked address kept for the store; \`dirty\`
   * while the local holds a value not yet stored. A clean one is left to lane pairs, which read
   * and write memory (a pair that stores it makes the local stale: it is loaded again).
   */
  lazy?: { element: Extract<Expr, { kind: 'index' }>; addr: number; loaded: boolean; dirty: boolean }
}

/**
 * Of the elements a loop holds in locals, the f64 ones that go in f64x2 locals: an element at
 * constant offset c from a base index, paired with the one at c + 1 (ascending from the lowest
 * offset, as lane pairs pair the directions k and k + 1 of a tangent). Maps the first of each
 * pair to the second.
 */
function heldPairs(els: Promotion[], elemOf: (array: string) => string): Map<Promotion, Promotion> {
  const out = new Map<Promotion, Promotion>()
  const byBase = new Map<string, Array<[number, Promotion]>>()
  for (const p of els) {
    if (elemOf(p.name) !== 'f64') continue
    const [base, c] = offsetOf(p.element.index)
    const k = `${p.name}\u0000${base}`
    let g = byBase.get(k)
    if (!g) byBase.set(k, (g = []))
    g.push([c, p])
  }
  for (const g of byBase.values()) {
    g.sort((x, y) => x[0] - y[0])
    for (let i = 0; i + 1 < g.length; i++) {
      if (g[i + 1]![0] === g[i]![0] + 1) {
        out.set(g[i]![1], g[i + 1]![1])
        i++
      }
    }
  }
  return out
}

/** A run-time check: its error code, where it is, and its message from the values passed to `fail`. */
interface Site {
  code: string
  loc?: SourceLocation
  message: (...v: number[]) => string
}

/** Bytes of one array element and its load/store opcodes and alignment (log2). */
interface ElemInfo {
  size: number
  shift: number
  load: number
  store: number
  align: number
  vt: ValType
}
const ELEM: Record<string, ElemInfo> = {
  f64: { size: 8, shift: 3, load: Op.f64_load, store: Op.f64_store, align: 3, vt: F64 },
  f32: { size: 4, shift: 2, load: Op.f32_load, store: Op.f32_store, align: 2, vt: F32 },
  i32: { size: 4, shift: 2, load: Op.i32_load, store: Op.i32_store, align: 2, vt: I32 },
  bool: { size: 1, shift: 0, load: Op.i32_load8_u, store: Op.i32_store8, align: 0, vt: I32 },
}

/** The scalar types this backend lowers. */
export const WASM_TYPES = ['f64', 'f32', 'i32', 'bool'] as const

const unsupported = (what: string, loc?: SourceLocation): never => {
  throw new RegistryError(
    'backend/unsupported',
    `the wasm backend cannot compile ${what}; compile with the cpu backend instead`,
    loc,
  )
}

/** Value type of a scalar type name (rejecting the ones this backend does not lower). */
export function valType(t: ScalarTypeName | undefined, loc?: SourceLocation): ValType {
  switch (t) {
    case 'f64':
      return F64
    case 'f32':
      return F32
    case 'i32':
    case 'bool':
      return I32
  }
  return unsupported(`values of type \`${t}\` (it lowers f64, f32, i32 and bool)`, loc)
}

/** Element layout of an array type. */
export function elemInfo(t: ScalarTypeName, loc?: SourceLocation): ElemInfo {
  const e = Object.hasOwn(ELEM, t) ? ELEM[t] : undefined
  if (!e) unsupported(`arrays of \`${t}\``, loc)
  return e!
}

/** The wasm parameters of a Tenet parameter list: a scalar is one value, an array its address and length. */
export function wasmParams(params: FunctionDef['params']): ValType[] {
  return params.flatMap((p) => {
    if (p.type.kind === 'scalar') return [valType(p.type.name, p.loc)]
    if (p.type.kind === 'array') {
      elemInfo(p.type.elem, p.loc)
      return [I32, I32]
    }
    return unsupported(`the stack parameter \`${p.name}\``, p.loc)
  })
}

/** The wasm results of a function: the final value of each scalar parameter, in order. */
export function wasmResults(params: FunctionDef['params']): ValType[] {
  return params.filter((p) => p.type.kind === 'scalar').map((p) => valType((p.type as { name: string }).name))
}

/** The standard \`pow\` primitive (what \`**\` computes). */
const POW = standardPrimitives.find((p) => p.name === 'pow')
/** The standard pure primitives by name (to tell a user's override that copied one's lowering). */
const STANDARD_PURE = new Map(
  standardPrimitives.filter((p) => p.kind === 'pure').map((p) => [p.name, p as PurePrimitiveSpec]),
)

/**
 * The keys of the imports that run no code of the caller's: the built-in arithmetic (\`Math\`
 * functions, \`%\`, integer powers and conversions) that \`importOf\` registers under them.
 */
const BUILTIN_IMPORTS = /^(math:|rem:|pow:(i32|f64)$|toInt32$)/

/** What the code generator needs from the JS side: imports by key, run-time check sites. */
/** The local a loop-carried element's write sets (see \`carriedElements\`), and how many writes set it in the iteration being emitted. */
/**
 * The largest array ancilla, in bytes, that an allocation zeroes with a loop of f64 stores
 * rather than \`memory.fill\` (a call into the engine: for an array of a few elements allocated
 * per iteration, as Horner's accumulator is per point, it cost more than the loop's work).
 */
export const ZERO_STORES_MAX_BYTES = 256

interface CarriedWrite {
  w: number
  emitted: number
  sample: CarriedElement
  /**
   * Where the element's stores are dead (see \`deadCarriedStores\`): the key of the element the
   * loop's last iteration writes, and whether the writes emitted kept the value before the store's
   * \`+ 0\` in \`w\` (\`mixed\`: some did, some did not).
   */
  dead?: string
  bare?: boolean | 'mixed'
}
/** A loop-carried element's locals: the value \`r\`, its flag \`h\` (set from the second iteration on), its write. */
interface CarriedLocal {
  r: number
  h: number
  write: CarriedWrite
}

export class ModuleContext {
  readonly imports: ImportedFunc[] = []
  readonly importFns: Array<(...a: number[]) => unknown> = []
  /** The instance's memory, once instantiated (for host functions that receive arrays). */
  memory: WebAssembly.Memory | undefined
  readonly sites: Site[] = []
  private readonly importIndex = new Map<string, number>()
  readonly fnIndex = new Map<string, number>()
  /** How many pairs of updates ran as one f64x2 update (see `lanes.ts`). */
  lanePairs = 0
  /** Elements the runs of straight-line code keep in locals (see \`runHeld\`; a diagnostic). */
  runElements = 0
  /** Loop-carried elements whose stores a loop drops (see \`deadCarriedStores\`; a diagnostic). */
  carriedStores = 0
  /** Array allocations emitted without their zeroing (see \`ZeroingSite\`; a diagnostic). */
  unzeroedTables = 0
  /** Array allocations whose memory a loop around them takes once (see \`hoistAllocs\`; a diagnostic). */
  hoistedAllocs = 0
  /** How many map loops run two iterations at a time in lanes (see `map-lanes.ts`). */
  mapLanes = 0
  /** How many of those run two pairs at a time, their series as one joint loop (see \`lane-quads.ts\`; a diagnostic). */
  laneQuads = 0
  /** How many pairs of adjacent block elements of map loops load and store as whole v128s (see \`blockElementPairs\`; a diagnostic). */
  blockPairs = 0
  /** Gathered blocks whose lanes' bases map loops compute (see \`gatheredBlocks\` in \`map-lanes.ts\`). */
  gatheredBlocks = 0
  /** How many sin/cos calls in lanes read the values an earlier branch computed (see \`lane-memo.ts\`; a diagnostic). */
  laneSincosReused = 0
  /** How many divisions and math calls in lanes read the values an earlier branch computed (see \`lane-memo.ts\`; a diagnostic). */
  laneValuesReused = 0
  /** Whether twin statements are scheduled together and twin locals held as f64x2 locals (see `twins.ts`). */
  twins = false
  /** How many f64 locals are held as a lane of an f64x2 local (see `twins.ts`; a diagnostic). */
  twinLocals = 0
  /** How many names varying \`while\`s of map loops keep in a scalar local (see \`loopUniform\`). */
  loopUniform = 0
  /** How many powers with a uniform run-time exponent map lanes emit with the exponent's cases decided once for both lanes (see \`uniformPower\`). */
  uniformPowers = 0
  /** Whether loops check their affine indices once at their start and then run unguarded (see \`range-versions.ts\`). */
  rangeVersions = true
  /** How many loops have a range version (see \`range-versions.ts\`; a diagnostic). */
  rangeVersionLoops = 0
  /** Whether paired loops check their guarded affine indices once and run their pairs unguarded (see \`loopPairs\`). */
  pairRanges = true
  /** Whether map loops whose body runs a series run two pairs at a time (see \`WasmOptions.laneQuads\`). */
  quads = true
  /** The most varying names a series of lane quads may touch (see \`WasmOptions.laneQuadValues\`). */
  quadValues = LANE_QUADS_MAX_VALUES
  /** How many paired loops check their affine indices once before their pairs (a diagnostic). */
  pairRangeLoops = 0
  /** With checks on: whether loads take over the bounds asserts just before their statement (see \`folded-bounds.ts\`). */
  foldBounds = true
  /** How many bounds asserts loads took over (see \`folded-bounds.ts\`; a diagnostic). */
  foldedBounds = 0
  /** Whether counting loops from a literal ≥ 1 run their first iteration on their own (see \`peel-ones.ts\`). */
  peelOnes = true
  /** How many loops run their first iteration on its own (see \`peel-ones.ts\`; a diagnostic). */
  peeledLoops = 0
  /** The program's inverse functions (the bodies \`map-lanes\` inlines for an uncall). */
  inverses: ReadonlyMap<string, FunctionDef> | undefined
  /** Call sites whose target index is patched once the number of imports is known. */
  readonly calls: CallSite[] = []
  /** The math routines this module computes itself (defined after the functions and thunks). */
  readonly math: MathLibrary

  /**
   * @param simd whether consecutive f64 updates that do the same arithmetic run as one f64x2
   *   update (see `lanes.ts`); false where the engine has no SIMD
   */
  constructor(
    readonly program: Program,
    readonly options: CompileOptions,
    readonly simd = false,
    readonly mathChoice: MathChoice = 'auto',
  ) {
    let k = 0
    for (const name of program.functions.keys()) this.fnIndex.set(name, k++)
    this.math = new MathLibrary(4 * k, (body, at, target) => this.calls.push({ body, at, target, kind: 'fn' }))
  }

  private effectfulSet: ReadonlySet<string> | undefined
  /** The functions with a host effect (see `effectfulFunctions`): no element load is reused across a call of one. */
  get effectful(): ReadonlySet<string> {
    this.effectfulSet ??= effectfulFunctions(this.program.functions.values())
    return this.effectfulSet
  }

  /** Whether a function of the module can grow the memory (an array ancilla's \`memory.grow\`). */
  grows = false

  /**
   * Whether the module imports a function that may run the caller's code (a host function, a
   * plugin primitive or bijection): only through one can a call of the module call into the
   * memory's modules again before it returns. The other imports are the built-in arithmetic of
   * \`Math\` (see \`BUILTIN_IMPORTS\`); a failed check traps (see the generator's \`fail\`).
   */
  get callsOut(): boolean {
    for (const key of this.importIndex.keys()) if (!BUILTIN_IMPORTS.test(key)) return true
    return false
  }

  /** The index (among imports) of the import with this key, registering it on first use. */
  importOf(key: string, type: FuncType, fn: (...a: number[]) => unknown): number {
    let i = this.importIndex.get(key)
    if (i === undefined) {
      i = this.imports.length
      this.imports.push({ module: 'm', name: `i${i}`, type })
      this.importFns.push(fn)
      this.importIndex.set(key, i)
    }
    return i
  }

  site(code: string, loc: SourceLocation | undefined, message: (...v: number[]) => string): number {
    this.sites.push({ code, ...(loc ? { loc } : {}), message: (...v) => userNames(message(...v)) })
    return this.sites.length - 1
  }

  /**
   * A failure site of catalog check `check` (see `RUNTIME_CHECKS`): `args` turns the values the
   * module passes when it fails into the catalog message's arguments.
   */
  check<K extends RuntimeCheck>(
    check: K,
    loc: SourceLocation | undefined,
    args: (...v: number[]) => Parameters<(typeof RUNTIME_CHECKS)[K]>,
  ): number {
    const message = RUNTIME_CHECKS[check] as (...a: unknown[]) => string
    return this.site(RUNTIME_CHECK_CODES[check], loc, (...v) => message(...args(...v)))
  }

  /** Raises the error of a check site (for the trap a failed check leaves: see \`ProgramState.failure\`). */
  fail(site: number, values: number[]): never {
    const s = this.sites[site]!
    throw new InvertibilityError(s.code, s.message(...values), s.loc)
  }

  /**
   * The defined-function index of the in-module routine for the primitive \`spec\` (a standard
   * one: \`sin\`, \`exp\`, \`pow\`, …), or undefined where it calls out to JS (see \`math/\`).
   */
  mathRoutine(spec: unknown, name: string): number | undefined {
    return inModule(spec, name, this.mathChoice) ? this.math.use(name) : undefined
  }

  /** Index of the defined function (name, direction) among the module's defined functions. */
  definedIndex(name: string, inverse: boolean): number {
    return 2 * this.fnIndex.get(name)! + (inverse ? 1 : 0)
  }

  /** Writes every call's target (imports first, then the defined functions). */
  patchCalls(): void {
    const n = this.imports.length
    for (const c of this.calls) c.body.patchU32(c.at, c.kind === 'import' ? c.target : n + c.target)
  }
}

/** \`i8x16.shuffle\` lanes: the low f64 of each operand (x₀, y₀), and the high one (x₁, y₁). */
const LOW_LANES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
const HIGH_LANES = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]

/**
 * The globals of a module: 0 is the heap top (\`hp\`); 1–3 record an out-of-range access
 * without checks (its check site, index and length) before the function traps.
 */
export const OOB_SITE = 1,
  OOB_INDEX = 2,
  OOB_LENGTH = 3

/**
 * Globals 4–10 record a failed run-time check before the function traps (see the generator's
 * \`fail\`): its check site (−1 when none), then its values, as f64, in the next
 * \`FAIL_VALUE_COUNT\` globals.
 */
export const FAIL_SITE = 4,
  FAIL_VALUES = 5,
  FAIL_VALUE_COUNT = 6

/** A name in scope: a scalar local, or an array's address and length locals. */
type Binding =
  /** (\`vec\`, \`lane\`: an f64 held as one lane of an f64x2 local, see \`twins.ts\`) */
  | { kind: 'scalar'; local: number; type: ScalarTypeName; vec?: number; lane?: 0 | 1 }
  /** (\`hoisted\`: its memory taken before the enclosing loop and given back after it, see \`hoistAllocs\`) */
  | { kind: 'array'; ptr: number; len: number; elem: ScalarTypeName; zeroing?: ZeroingSite; hoisted?: boolean }

/**
 * The zeroing of one emitted allocation of a table marked \`overwritten\` (see
 * \`AllocStmt.overwritten\`; without run-time checks, in the function's own body): it runs under
 * \`if (i32.const 1)\`, whose constant byte at \`at\` becomes 0 when the function is emitted
 * (\`FunctionEmitter.emit\`) unless an \`init\` update of the table read the element's old value
 * after all (\`readsOld\`: an element held in a local, loaded before the update, or a pair or
 * lanes update that loads it): every \`init\` update emitted as zero plus the value, and every
 * other read of the table of an element an \`init\` update wrote before (the pass's proof), the
 * table's initial contents are never read.
 */
interface ZeroingSite {
  at: number
  readsOld: boolean
}

/**
 * Whether a uniform f64 expression of a map loop's lane code is computed in lanes rather than as
 * scalar code splat to both lanes: one that converts an i32 (\`f64(k) * f64(k + nu)\` of a loop's
 * counter), through f64 arithmetic (which rounds in an f64x2 lane as in the scalar instruction).
 * V8's scalar int-to-double conversion (\`vcvtsi2sd\`) merges into its scratch register, which
 * its SIMD code writes (a \`v128.bitselect\` without AVX-512), so in a loop of lane code every
 * iteration's conversion waited for the previous iteration's blends (the Bessel series' term
 * divisor then sat on the loop's chain: the objective ran 1.15× slower); the lane conversion
 * (\`f64x2.convert_low_i32x4_s\`) has no such input.
 */
function convertsInLanes(e: Expr): boolean {
  if (e.type !== 'f64') return false
  if (e.kind === 'call') return e.callee === 'f64' && e.args.length === 1 && e.args[0]!.type === 'i32'
  if (e.kind === 'unary') return e.op === '-' && convertsInLanes(e.arg as Expr)
  if (e.kind === 'binary' && '+-*/'.includes(e.op) && e.left.type === 'f64' && e.right.type === 'f64')
    return convertsInLanes(e.left) || convertsInLanes(e.right)
  return false
}

/** The typed array that views an array of each element type in linear memory. */
const VIEWS = { f64: Float64Array, f32: Float32Array, i32: Int32Array, bool: Uint8Array } as const

/** How an argument of a host call crosses into wasm: a scalar of its type, or an array of `elem`. */
type CrossingKind = ScalarTypeName | { elem: string }

/**
 * The JS arguments of a host call whose wasm arguments `raw` crossed as `kinds` say: an array (its
 * address and length) as a typed array viewing the module's memory, as the cpu backend passes
 * the array itself; a bool as a JS boolean; any other scalar as it is.
 */
function hostArgs(kinds: readonly CrossingKind[], ctx: ModuleContext, raw: number[]): unknown[] {
  const args: unknown[] = []
  let k = 0
  for (const t of kinds) {
    if (typeof t === 'object') {
      const ctor = VIEWS[t.elem as keyof typeof VIEWS]
      args.push(new ctor(ctx.memory!.buffer, raw[k]!, raw[k + 1]!))
      k += 2
    } else args.push(t === 'bool' ? raw[k++] !== 0 : raw[k++])
  }
  return args
}

/** The part of an import's key that names the kinds of its arguments (`f64[],i32`). */
const kindsKey = (kinds: readonly CrossingKind[]): string =>
  kinds.map((t) => (typeof t === 'object' ? `${t.elem}[]` : t)).join(',')

/** `fn` with its bool arguments (0/1 in wasm) passed as JS booleans, as the cpu backend passes them. */
function boolArgs<R>(fn: (...a: number[]) => R, types: ScalarTypeName[]): (...a: number[]) => R {
  if (!types.includes('bool')) return fn
  return (...a: number[]) => fn(...(a.map((v, i) => (types[i] === 'bool' ? v !== 0 : v)) as unknown as number[]))
}

/** Emits one function (one direction) as a wasm function body. */
export class FunctionEmitter {
  private readonly body = new Bytes()
  private readonly locals: ValType[] = []
  private nextLocal = 0
  private names = new Map<string, Binding>()
  private unchecked = 0
  /** The range locals (start, stop, step) of the loop of each variable that has last ended (\`$start(v)\`, …). */
  private ranges = new Map<string, [number, number, number]>()
  /** The zeroings of this function's \`overwritten\` tables (see \`ZeroingSite\`). */
  private readonly zeroings: ZeroingSite[] = []
  /** The scratch local of the bounds check of an element address without checks. */
  private boundsLocal: number | undefined
  /** The local holding `hp` on entry (when the function allocates arrays). */
  private heapMark: number | undefined
  /** The f64 locals held as lanes of f64x2 locals (see \`twins.ts\`). */
  private twins = new Map<string, TwinLocal>()
  /**
   * f64 variables splat into f64x2 locals by lane pairs of the run being emitted, by name: a
   * later pair of the run reuses the splat until the variable is written (any statement other than
   * an update, which may nest blocks or calls, forgets them all).
   */
  private splats = new Map<string, number>()

  constructor(
    private readonly ctx: ModuleContext,
    private readonly f: FunctionDef,
    private readonly inverse: boolean,
  ) {}

  private get program() {
    return this.ctx.program
  }
  private get checking() {
    return this.ctx.options.checks && this.unchecked === 0
  }

  emit(): DefinedFunc & { resultsFrom: number } {
    const params = wasmParams(this.f.params)
    this.nextLocal = params.length
    let k = 0
    for (const p of this.f.params) {
      if (p.type.kind === 'scalar') this.names.set(p.name, { kind: 'scalar', local: k++, type: p.type.name })
      else {
        this.names.set(p.name, { kind: 'array', ptr: k, len: k + 1, elem: (p.type as { elem: string }).elem })
        k += 2
      }
    }
    // without checks, with SIMD: twin statements next to each other, and twin locals held as the
    // lanes of f64x2 locals (see \`twins.ts\`)
    let body = this.f.body
    if (this.ctx.simd && this.ctx.twins && !this.ctx.options.checks) {
      body = scheduleTwins(body)
      this.twins = twinLocals(body)
      this.ctx.twinLocals += this.twins.size
    }
    this.block(body)
    // the zeroings no \`init\` update needs are left out (see \`ZeroingSite\`)
    for (const z of this.zeroings) {
      if (z.readsOld) continue
      this.body.patchByte(z.at, 0)
      this.ctx.unzeroedTables++
    }
    // the heap top on entry is restored on exit (when the function allocates arrays)
    let prologue: Bytes | undefined
    if (this.heapMark !== undefined) {
      prologue = new Bytes().byte(Op.global_get).u32(0).byte(Op.local_set).u32(this.heapMark)
      this.get(this.heapMark)
      this.out.byte(Op.global_set).u32(0)
    }
    const resultsFrom = this.body.length
    for (const p of this.f.params) {
      if (p.type.kind === 'scalar') this.get((this.names.get(p.name) as { local: number }).local)
    }
    return {
      type: { params, results: wasmResults(this.f.params) },
      locals: this.locals,
      ...(prologue ? { prologue } : {}),
      body: this.body,
      resultsFrom,
    }
  }

  private get out(): Bytes {
    return this.apart ?? this.body
  }

  /** The buffer code goes to while it is emitted apart (see \`emitApart\`). */
  private apart: Bytes | undefined

  /** The code \`f\` emits, in a buffer of its own (placed with \`place\`, or left out). */
  private emitApart(f: () => void): Bytes {
    const saved = this.apart
    const bytes = new Bytes()
    this.apart = bytes
    try {
      f()
    } finally {
      this.apart = saved
    }
    return bytes
  }

  /** The call sites of the code emitted apart, by buffer (see \`place\`). */
  private apartCalls = new Map<Bytes, CallSite[]>()

  /** Records a call site (and, in code emitted apart, which buffer holds it). */
  private callSite(c: CallSite): void {
    this.ctx.calls.push(c)
    this.heldApart(c)
  }

  /** Notes a call site of the buffer code is being emitted apart into (see \`place\`). */
  private heldApart(c: CallSite): void {
    if (!this.apart) return
    const held = this.apartCalls.get(this.apart)
    if (held) held.push(c)
    else this.apartCalls.set(this.apart, [c])
  }

  /** Appends code emitted apart (see \`emitApart\`), its call sites with it. */
  private place(bytes: Bytes): void {
    const to = this.out
    const offset = to.length
    to.bytes(bytes.view())
    const moved = this.apartCalls.get(bytes)
    if (!moved) return
    this.apartCalls.delete(bytes)
    for (const c of moved) {
      c.body = to
      c.at += offset
      // (into code still emitted apart: noted with the buffer it is in now)
      this.heldApart(c)
    }
  }

  private local(t: ValType): number {
    this.locals.push(t)
    return this.nextLocal++
  }
  private op(...bs: number[]): void {
    this.out.bytes(bs)
  }
  private get(l: number): void {
    this.out.byte(Op.local_get).u32(l)
  }
  private set(l: number): void {
    this.out.byte(Op.local_set).u32(l)
  }
  private tee(l: number): void {
    this.out.byte(Op.local_tee).u32(l)
  }
  private i32(v: number): void {
    this.out.byte(Op.i32_const).s32(v)
  }
  private f64c(v: number): void {
    this.out.byte(Op.f64_const).f64(v)
  }
  /** Where a primitive's own wasm lowering writes (see `primitive-lowering.ts`). */
  private readonly lowering: LoweringSink = {
    op: (code) => this.op(code),
    get: (l) => this.get(l),
    constant: (t, v) => {
      if (t === F32) this.out.byte(Op.f32_const).f32(v)
      else this.f64c(v)
    },
    math: (name, t) => {
      // f64 operands are on the stack: the module's routine where the benchmark chose it (math/)
      const routine = t === F64 && inModuleByName(name, this.ctx.mathChoice) ? this.ctx.math.use(name) : undefined
      if (routine !== undefined) return this.callDefined(routine)
      const f = MATH[name]
      this.callImport(
        this.ctx.importOf(
          `math:${name}:${t === F32 ? 'f32' : 'f64'}`,
          { params: Array.from({ length: f.arity }, () => t), results: [t] },
          f.js,
        ),
      )
    },
  }
  private callImport(i: number): void {
    this.out.byte(Op.call)
    this.callSite({ body: this.out, at: this.out.length, target: i, kind: 'import' })
    this.out.padU32()
  }
  /** Calls the defined function with this index (an in-module math routine). */
  private callDefined(index: number): void {
    this.out.byte(Op.call)
    this.callSite({ body: this.out, at: this.out.length, target: index, kind: 'fn' })
    this.out.padU32()
  }
  /** Evaluates \`args\` as f64 and calls the math routine \`index\`; the result has type \`rt\` (f64 or f32). */
  private callMath(index: number, args: Expr[], rt: ValType): ValType {
    for (const a of args) this.toF64(this.expr(a))
    this.callDefined(index)
    // rounded as an import's f32 result would be (round to nearest, ties to even)
    if (rt === F32) this.op(Op.f32_demote_f64)
    return rt
  }
  private callFn(name: string, inverse: boolean): void {
    this.out.byte(Op.call)
    this.callSite({
      body: this.out,
      at: this.out.length,
      target: this.ctx.definedIndex(name, inverse),
      kind: 'fn',
    })
    this.out.padU32()
  }

  /**
   * Fails at check site \`site\` with \`values\` (each pusher leaves one value of the given type):
   * records the values (as f64) and the site in globals and traps; the wrapper, or the caller of
   * a direct entry, turns the trap into the site's error (\`ProgramState.failure\`). The cold
   * path is kept free of calls: a call of the imported \`fail\` in a loop, even one never taken,
   * made TurboFan spill the loop's values around it on every iteration (the checked single-z
   * Bessel series stored five values to the stack per term), as \`address\`'s bounds checks
   * found for their own \`fail\` calls.
   */
  private fail(site: number, values: Array<[() => void, ValType]>): void {
    if (values.length > FAIL_VALUE_COUNT) throw new Error(`wasm backend: a check with ${values.length} values`)
    // every value is evaluated before any is recorded: evaluating one may call a host function
    // that re-enters the module and fails there, which would overwrite a value recorded earlier
    for (const [push, t] of values) {
      push()
      this.toF64(t)
    }
    for (let i = values.length - 1; i >= 0; i--) this.out.byte(Op.global_set).u32(FAIL_VALUES + i)
    this.i32(site)
    this.out.byte(Op.global_set).u32(FAIL_SITE)
    this.op(Op.unreachable)
  }

  /** \`$factor(x)\`: x ≠ 0 and x − x = 0 (false for ±∞ and NaN), for \`*=\` / \`/=\` on a float. */
  private factor(x: Expr): ValType {
    const vt = this.expr(x)
    const k = this.local(vt)
    this.set(k)
    const F = vt === F64
    this.get(k)
    if (F) this.f64c(0)
    else this.out.byte(Op.f32_const).f32(0)
    this.op(F ? Op.f64_ne : Op.f32_ne)
    this.get(k)
    this.get(k)
    this.op(F ? Op.f64_sub : Op.f32_sub)
    this.get(k)
    this.get(k)
    this.op(F ? Op.f64_sub : Op.f32_sub)
    this.op(F ? Op.f64_eq : Op.f32_eq, Op.i32_and)
    return I32
  }

  /**
   * \`$zeros(t, n)\`: t has length n and every element is zero (float elements within the
   * tolerance of zero, NaN not; exact ones exactly zero), for an array's deallocation.
   */
  private zeros(name: string, n: Expr, loc?: SourceLocation): ValType {
    const b = this.array(name, loc)
    const el = elemInfo(b.elem, loc)
    const ok = this.local(I32),
      i = this.local(I32)
    this.expr(n)
    this.get(b.len)
    this.op(Op.i32_eq)
    this.set(ok)
    this.i32(0)
    this.set(i)
    // while ok and i < len: ok = element i is zero; i += 1
    this.op(Op.block, 0x40, Op.loop, 0x40)
    this.get(ok)
    this.op(Op.i32_eqz, Op.br_if, 1)
    this.get(i)
    this.get(b.len)
    this.op(Op.i32_ge_s, Op.br_if, 1)
    this.get(b.ptr)
    this.get(i)
    if (el.shift) {
      this.i32(el.shift)
      this.op(Op.i32_shl)
    }
    this.op(Op.i32_add)
    this.load(el)
    const ens = this.program.registry.findNumberSystem(b.elem)
    const near = !!ens && !ens.exact
    if (el.vt === F64 || el.vt === F32) {
      if (el.vt === F32) this.op(Op.f64_promote_f32)
      if (near) {
        this.op(Op.f64_abs)
        this.f64c(this.ctx.options.tolerance)
        this.op(Op.f64_le)
      } else {
        this.f64c(0)
        this.op(Op.f64_eq)
      }
    } else {
      // i32 and bool elements: exactly zero
      this.op(Op.i32_eqz)
    }
    this.set(ok)
    this.get(i)
    this.i32(1)
    this.op(Op.i32_add)
    this.set(i)
    this.op(Op.br, 0, Op.end, Op.end)
    this.get(ok)
    return I32
  }

  /** \`$near(x, y)\`: equal, or within the tolerance relative to max(1, |y|) (a float deallocation). */
  private near(x: Expr, y: Expr): ValType {
    // y a finite constant (a scalar ancilla's deallocation to 0.0) and a tolerance ≥ 0: the bound
    // tol·max(1, |y|) is a constant ≥ 0, and x = y gives |x − y| = 0 within it, so the check is
    // |x − y| ≤ bound alone (the same answer for every x, NaN and ±∞ included), without a branch
    const tol = this.ctx.options.tolerance
    // (y as its own type gives it: an f32 literal rounded to f32, as \`expr\` emits it)
    const yt = y.kind === 'num' ? (y.type ?? (y.isFloat ? 'f64' : 'i32')) : undefined
    const c =
      y.kind !== 'num'
        ? NaN
        : yt === 'f64'
          ? y.value
          : yt === 'f32'
            ? Math.fround(y.value)
            : yt === 'i32'
              ? y.value | 0
              : NaN
    if (y.kind === 'num' && Number.isFinite(c) && tol >= 0) {
      this.toF64(this.expr(x))
      if (c !== 0) {
        this.f64c(c)
        this.op(Op.f64_sub)
      }
      this.op(Op.f64_abs)
      this.f64c(tol * Math.max(1, Math.abs(c)))
      this.op(Op.f64_le)
      return I32
    }
    const cur = this.local(F64),
      w = this.local(F64)
    this.toF64(this.expr(x))
    this.set(cur)
    this.toF64(this.expr(y))
    this.set(w)
    this.get(cur)
    this.get(w)
    this.op(Op.f64_eq, Op.if, I32)
    this.i32(1)
    this.op(Op.else)
    this.get(cur)
    this.get(w)
    this.op(Op.f64_sub, Op.f64_abs)
    this.f64c(this.ctx.options.tolerance)
    this.f64c(1)
    this.get(w)
    this.op(Op.f64_abs, Op.f64_max, Op.f64_mul, Op.f64_le)
    this.op(Op.end)
    return I32
  }

  private toF64(t: ValType): void {
    if (t === I32) this.i32ToF64()
    else if (t === F32) this.op(Op.f64_promote_f32)
  }
  /**
   * An i32 on the stack as an f64, exactly. With run-time checks on, by its bits rather than by
   * \`f64.convert_i32_s\`: V8 (x64) emits that as \`cvtsi2sd\`, which keeps the upper half of its
   * scratch register and so waits for the last write to it, and V8's register moves write that
   * register when they exchange two values (a \`SWAP\`, the unrolled swaps at a loop's exit). A
   * checked function runs its uncomputes after its computes, so the conversions of an uncompute's
   * loop waited for the end of the compute's loop: the checked single-z Bessel series, whose
   * reverse loop converts its index each term, ran about 11% slower than with this form once its
   * failure paths stopped calling out (see \`fail\`). Without checks the plain conversion stays
   * (this form costs a few instructions more, about 4% of the unchecked single-z series). The
   * bits: 1.5·2⁵² + x for |x| < 2⁵¹ is the double 0x4338000000000000 + x, and subtracting 1.5·2⁵²
   * from it is exact (0 gives +0, as the conversion does).
   */
  private i32ToF64(): void {
    if (!this.ctx.options.checks) return void this.op(Op.f64_convert_i32_s)
    this.op(Op.i64_extend_i32_s)
    this.out.byte(Op.i64_const).s64(0x4338000000000000n)
    this.op(Op.i64_add, Op.f64_reinterpret_i64)
    this.f64c(6755399441055744)
    this.op(Op.f64_sub)
  }

  // ---------- expressions ----------

  private binding(name: string, loc?: SourceLocation): Binding {
    const b = this.names.get(name)
    if (!b) throw new Error(`wasm codegen: unbound name ${name}${loc ? ` at ${loc.line}:${loc.column}` : ''}`)
    return b
  }
  /**
   * Leaves the enclosing block (`br_if 0`) when the two arrays' byte ranges overlap
   * (W.ptr < X.end && X.ptr < W.end): one typed array passed for two parameters.
   */
  private breakIfOverlapping(W: Extract<Binding, { kind: 'array' }>, X: Extract<Binding, { kind: 'array' }>): void {
    this.overlapping(W, X)
    this.op(Op.br_if, 0)
  }

  /** Pushes 1 when the two arrays' byte ranges overlap (W.ptr < X.end && X.ptr < W.end), else 0. */
  private overlapping(W: Extract<Binding, { kind: 'array' }>, X: Extract<Binding, { kind: 'array' }>): void {
    const end = (v: Extract<Binding, { kind: 'array' }>) => {
      this.get(v.ptr)
      this.get(v.len)
      this.i32(elemInfo(v.elem).size)
      this.op(Op.i32_mul, Op.i32_add)
    }
    this.get(W.ptr)
    end(X)
    this.op(Op.i32_lt_u)
    this.get(X.ptr)
    end(W)
    this.op(Op.i32_lt_u, Op.i32_and)
  }

  /**
   * Leaves the enclosing block when the memory of the first array of any pair overlaps the
   * second's. Of parameters only, whose memory stays put during the call, it is checked at the
   * first time of a call and the answer kept in a local (1 apart, 2 overlapping), so that a loop
   * entered many times (an inner loop) pays a comparison.
   */
  private breakIfAnyOverlapping(pairs: ReadonlyArray<readonly [string, string]>): void {
    if (!pairs.length) return
    const checks = () => {
      for (const [w, x] of pairs) this.breakIfOverlapping(this.array(w), this.array(x))
    }
    const isParam = (n: string) => this.f.params.some((p) => p.name === n && p.type.kind === 'array')
    if (!pairs.every(([w, x]) => isParam(w) && isParam(x))) return checks()
    const state = this.local(I32)
    this.get(state)
    this.op(Op.i32_eqz, Op.if, 0x40)
    this.i32(2)
    this.set(state)
    this.op(Op.block, 0x40)
    checks()
    this.i32(1)
    this.set(state)
    this.op(Op.end, Op.end)
    this.get(state)
    this.i32(1)
    this.op(Op.i32_ne, Op.br_if, 0)
  }

  private array(name: string, loc?: SourceLocation): Extract<Binding, { kind: 'array' }> {
    const b = this.binding(name, loc)
    if (b.kind !== 'array') throw new Error(`wasm codegen: \`${name}\` is not an array`)
    return b
  }

  /** Checks that the value type of `t` is lowered (f64, f32, i32, bool). */
  private vt(t: ScalarTypeName | undefined, loc?: SourceLocation): ValType {
    return valType(t, loc)
  }

  /**
   * Breaks out of the enclosing block unless the lane loop's range \`a\`..\`b\` (locals) lies in
   * every element array of \`plan\`: 0 ≤ a and b ≤ len.
   */
  private breakUnlessElementsInRange(a: number, b: number, plan: { elements: ReadonlyArray<{ array: string }> }): void {
    this.get(a)
    this.i32(0)
    this.op(Op.i32_lt_s, Op.br_if, 0)
    for (const el of plan.elements) {
      this.get(b)
      this.get(this.array(el.array).len)
      this.op(Op.i32_gt_s, Op.br_if, 0)
    }
  }

  /**
   * Pushes the byte address of an element (bounds-checked when checking) and returns its element
   * info. Without checks, an index
   * `base + c` (c a constant) is addressed as (array + c elements) + base elements: the elements
   * around one base (the w directions `t[i·w + k]` of a tangent) then share the scaled base, and
   * the engine hoists the constant part. The sum wraps in i32 like the plain one, so it is the same
   * address whatever the sign of the base (a memarg offset would not wrap). \`failSite\`: the
   * failure site of a guarded access (by default, one of its own at \`loc\`).
   */
  private address(
    arrName: string,
    index: Expr,
    loc?: SourceLocation,
    inBounds = false,
    shown = arrName,
    failSite?: number,
  ): ElemInfo {
    const a = this.array(arrName, loc)
    const el = elemInfo(a.elem, loc)
    if (inBounds) {
      // checked by the assert before the statement, or proven (see \`insert-checks.ts\`)
      this.get(a.ptr)
      this.expr(index)
    } else {
      // bounds are checked even with checks off (and in \`@unchecked\`): all arguments share one
      // linear memory, so an index out of range would read or write another argument
      const c =
        index.kind === 'binary' && index.op === '+' && index.right.kind === 'num' && Number.isInteger(index.right.value)
          ? index.right.value
          : 0
      // (one scratch local per function: nothing is evaluated between its set and its last get)
      const bx = (this.boundsLocal ??= this.local(I32))
      this.expr(c !== 0 ? (index as { left: Expr }).left : index)
      this.set(bx)
      const full = () => {
        this.get(bx)
        if (c !== 0) {
          this.i32(c)
          this.op(Op.i32_add)
        }
      }
      full()
      this.get(a.len)
      // the cold path is kept small (a call of \`fail\` with its seven arguments at every access
      // made the graph-embedding gradient about 1.6× slower): it records the site, the index and
      // the length in globals and traps; the wrapper turns the trap into the site's error
      this.op(Op.i32_ge_u, Op.if, 0x40)
      const site = failSite ?? this.ctx.check('outOfBounds', loc, (v, n) => [shown, v, n])
      this.i32(site)
      this.out.byte(Op.global_set).u32(OOB_SITE)
      full()
      this.out.byte(Op.global_set).u32(OOB_INDEX)
      this.get(a.len)
      this.out.byte(Op.global_set).u32(OOB_LENGTH)
      this.op(Op.unreachable, Op.end)
      this.get(a.ptr)
      if (c !== 0) {
        this.i32(Math.imul(c, el.size))
        this.op(Op.i32_add)
      }
      this.get(bx)
    }
    if (el.shift) {
      this.i32(el.shift)
      this.op(Op.i32_shl)
    }
    this.op(Op.i32_add)
    return el
  }

  private load(el: ElemInfo): void {
    this.out.byte(el.load).u32(el.align).u32(0)
  }
  /** A loaded bool element is any nonzero byte, as the cpu backend reads it: normalised to 0/1. */
  private boolByte(el: ElemInfo): void {
    if (el.size === 1) {
      this.i32(0)
      this.op(Op.i32_ne)
    }
  }
  private store(el: ElemInfo): void {
    this.out.byte(el.store).u32(el.align).u32(0)
  }

  /** The sin/cos calls of the runs of the block being emitted that one \`__sincos\` computes (see \`sincos-pairs.ts\`). */
  private sincos: Map<Expr, SincosPair> | undefined
  /** Values computed once in the run of statements being emitted (see `sharedSubexpressions`). */
  private shared: Map<Expr, Shared> | undefined
  /** The element loads of the statement being emitted that other statements of its block read too (see `reusedLoads`). */
  private loads: Map<Expr, LoadOccurrence> | undefined
  /** The local and the flag of each reused load, once its first statement is reached. */
  private loadLocals = new Map<ReusedLoad, { local: number; flag: number; type: ValType }>()
  /** Their locals, once computed. */
  private sharedLocals = new Map<Shared, [number, ValType]>()
  /** Array elements held in locals while the current loop runs, by array name and index key. */
  private promoted: Map<string, Map<string, Held>> | undefined
  /**
   * The loop-carried elements of the loops being emitted (see \`carriedElements\`), by array and
   * index key: a read takes the local \`r\` once the flag \`h\` is set (from the second iteration
   * on), a write also sets \`w\` (counted in \`emitted\`), which the end of the iteration moves to \`r\`.
   */
  private carried:
    | {
        reads: Map<string, Map<string, { r: number; h: number }>>
        writes: Map<string, Map<string, CarriedWrite>>
      }
    | undefined

  /**
   * The loops of the block being emitted whose carried elements' stores are dead (see
   * \`deadCarriedStores\`), by loop and array: the key of the element the last iteration writes.
   */
  private deadLoops: Map<Stmt, Map<string, string>> | undefined
  /**
   * The arrays whose carried stores a loop of the block dropped, until their deallocation: the key
   * of the element its last iteration wrote (the only one read after it), the loop's locals (\`h\`
   * set where it ran, \`r\` what it wrote), and whether the store would have been \`r + 0\`.
   */
  private lastCarried:
    | Map<string, { key: string; r: number; h: number; bare: boolean | 'mixed' | undefined }>
    | undefined

  /** Whether statement \`a\` or \`b\` mentions an array of \`lastCarried\`. */
  private readsDropped(a: Stmt, b: Stmt): boolean {
    const last = this.lastCarried
    if (!last?.size) return false
    const names = new Set<string>()
    for (const e of [...stmtExprs(a), ...stmtExprs(b)]) readNames(e, names)
    return [...last.keys()].some((n) => names.has(n))
  }

  /** Records how a dead carried write (see \`CarriedWrite.dead\`) left its value in \`w\`. */
  private static bare(cw: CarriedWrite, bare: boolean): void {
    cw.bare = cw.bare === undefined || cw.bare === bare ? bare : 'mixed'
  }

  /** The local of a carried write (see \`carried\`), when the element is the update's target. */
  private carriedWrite(base: Dataview): CarriedWrite | undefined {
    if (base.kind !== 'index') return undefined
    const m = this.carried?.writes.get(base.array.name)
    const k = m && indexKey(base.index)
    return k === undefined ? undefined : m?.get(k)
  }

  /** Pushes the value of an element held in a local. */
  private getHeld(h: Held): void {
    const lazy = h.lazy
    if (lazy && !lazy.loaded) {
      // (the address is evaluated without the run's shared values: it is the element's own)
      const shared = this.shared
      this.shared = undefined
      const el = this.address(
        lazy.element.array.name,
        lazy.element.index,
        lazy.element.loc,
        lazy.element.inBounds === true,
        lazy.element.array.shown,
      )
      this.shared = shared
      this.tee(lazy.addr)
      this.load(el)
      this.set(h.local)
      lazy.loaded = true
    }
    this.get(h.local)
    if (h.lane >= 0) {
      this.simd(OpFd.f64x2_extract_lane)
      this.out.byte(h.lane)
    }
  }

  /**
   * With checks on, the bounds asserts just before the statement whose head is being emitted, which
   * its loads may take over (see \`folded-bounds.ts\`), and what they took; \`headFold\` until
   * the head is reached (see \`folding\`).
   */
  private fold: HeadFold | undefined
  private headFold: HeadFold | undefined
  /** How many enclosing expressions of the head being emitted rule folding out (see \`foldsThrough\`). */
  private foldOff = 0

  /** Emits \`f\`, the code of \`head\` (a statement's head expression), with the folding set up for it (if any). */
  private folding<T>(head: Expr, f: () => T): T {
    const fold = this.headFold
    this.headFold = undefined
    if (!fold) return f()
    loadGuards(head, fold.guards)
    this.fold = fold
    try {
      return f()
    } finally {
      this.fold = undefined
    }
  }

  /**
   * The failure site of the bounds assert that a load of the head being emitted takes over (see
   * \`folded-bounds.ts\`): the assert of the same element under the same guard, not taken yet,
   * where the load runs exactly when its code is reached (not in a reused load's code for a clear
   * flag, not inside an expression that may repeat, drop or reorder it, not after a call).
   */
  private foldedLoad(e: Extract<Expr, { kind: 'index' }>): number | undefined {
    const f = this.fold
    if (!f || f.closed || this.foldOff > 0 || this.sometimes > 0 || e.inBounds !== true) return undefined
    const cond = f.guards.get(e)
    if (cond === undefined) return undefined
    const j = f.pending.findIndex((p, k) => p.cond === cond && !f.order.includes(k))
    if (j < 0) return undefined
    f.order.push(j)
    const a = f.pending[j]!.assert
    return this.ctx.check('outOfBounds', a.loc, (v, n) => [a.args[0] as string, v, n])
  }

  /**
   * Emits statement \`s\` of a block with checks on, given the bounds asserts emitted apart just
   * before it (\`pending\`), and returns those still pending after it (see \`folded-bounds.ts\`):
   * a foldable bounds assert joins them (emitted apart); a statement whose head may take them over
   * is emitted apart with its loads guarded by the asserts they take over, then the asserts that
   * must stay are placed before it; any other statement has them placed before it as they are.
   */
  private foldingStmt(s: Stmt, pending: PendingBounds[]): PendingBounds[] {
    const bounds = foldableBounds(s)
    if (bounds) {
      const cond = key((s as Extract<Stmt, { kind: 'assert' }>).cond)
      // the very check of an assert just made (nothing between them writes): it cannot fail
      if (pending.some((p) => p.cond === cond)) return pending
      // (computing no shared value, so that it can be left out)
      const shared = this.shared
      this.shared = undefined
      const bytes = this.emitApart(() => this.stmt(s))
      this.shared = shared
      return [...pending, { cond, assert: s as Extract<Stmt, { kind: 'assert' }>, bytes }]
    }
    if (!pending.length || !FOLDING_HEADS.has(s.kind) || headCallsHost(s)) {
      this.placeAsserts(pending, pending.length)
      this.stmt(s)
      return []
    }
    const fold: HeadFold = { pending, guards: new Map(), order: [], closed: false }
    this.headFold = fold
    const bytes = this.emitApart(() => this.stmt(s))
    this.headFold = undefined
    const kept = foldedSuffix(pending.length, fold.order)
    this.placeAsserts(pending, kept)
    this.ctx.foldedBounds += pending.length - kept
    this.place(bytes)
    return []
  }

  /** Places the first \`count\` of the asserts emitted apart (the rest are left out). */
  private placeAsserts(pending: PendingBounds[], count: number): void {
    for (let k = 0; k < count; k++) this.place(pending[k]!.bytes)
  }

  /**
   * Code that runs only on some paths is being emitted (the load a reused element makes when its
   * flag is clear): the shared values computed before are read there, but none is computed there,
   * since its local would then hold it on that path only and a later reuse would read it unset.
   */
  private sometimes = 0

  /** Pushes the value of `e`; returns its value type. */
  expr(e: Expr): ValType {
    const fold = this.fold
    if (fold && !foldsThrough(e)) {
      // (no load inside it takes over an assert; after a call, none of the head's later loads
      // does: the call might fail or call out before them, see \`folded-bounds.ts\`)
      this.foldOff++
      try {
        return this.exprShared(e)
      } finally {
        this.foldOff--
        if (e.kind === 'call') fold.closed = true
      }
    }
    return this.exprShared(e)
  }

  private exprShared(e: Expr): ValType {
    const sh = this.shared?.get(e)
    if (!sh) return this.exprCode(e)
    const have = this.sharedLocals.get(sh)
    if (have) {
      this.get(have[0])
      return have[1]
    }
    if (this.sometimes > 0) return this.exprCode(e)
    const t = this.exprCode(e)
    const l = this.local(t)
    this.tee(l)
    this.sharedLocals.set(sh, [l, t])
    return t
  }

  private exprCode(e: Expr): ValType {
    switch (e.kind) {
      case 'num': {
        const t = e.type ?? (e.isFloat ? 'f64' : 'i32')
        const vt = this.vt(t, e.loc)
        if (vt === F64) this.f64c(e.value)
        else if (vt === F32) this.out.byte(Op.f32_const).f32(e.value)
        else this.i32(t === 'bool' ? (e.value ? 1 : 0) : e.value | 0)
        return vt
      }
      case 'bool':
        this.i32(e.value ? 1 : 0)
        return I32
      case 'var': {
        const b = this.binding(e.name, e.loc)
        if (b.kind !== 'scalar') throw new Error(`wasm codegen: array \`${e.name}\` used as a value`)
        if (b.vec !== undefined) {
          this.get(b.vec)
          this.simd(OpFd.f64x2_extract_lane)
          this.out.byte(b.lane!)
          return F64
        }
        this.get(b.local)
        return this.vt(b.type, e.loc)
      }
      case 'index': {
        // the element a loop's last iteration wrote, its stores dropped (see \`deadCarriedStores\`):
        // the loop's local where it ran, else memory
        const last = this.lastCarried?.get(e.array.name)
        if (last) {
          if (lastKey(e.index) !== last.key || last.bare === 'mixed')
            throw new Error(
              'wasm codegen: a read of an array whose carried stores were dropped, not at its last element',
            )
          this.get(last.h)
          this.op(Op.if, F64)
          this.get(last.r)
          if (last.bare === true) {
            this.f64c(0)
            this.op(Op.f64_add)
          }
          this.op(Op.else)
          this.sometimes++
          const el = this.address(e.array.name, e.index, e.loc, e.inBounds === true, e.array.shown)
          this.load(el)
          this.sometimes--
          this.op(Op.end)
          return F64
        }
        const cm = this.carried?.reads.get(e.array.name)
        const ck = cm && indexKey(e.index)
        const c = ck === undefined ? undefined : cm?.get(ck)
        if (c) {
          // a loop-carried element (see \`carriedElements\`): the first iteration loads it
          this.get(c.h)
          this.op(Op.if, F64)
          this.get(c.r)
          this.op(Op.else)
          this.sometimes++
          const el = this.address(e.array.name, e.index, e.loc, e.inBounds === true, e.array.shown)
          this.load(el)
          this.sometimes--
          this.op(Op.end)
          return F64
        }
        const held = this.promoted?.get(e.array.name)?.get(key(e.index))
        if (held !== undefined) {
          this.getHeld(held)
          return elemInfo(this.array(e.array.name).elem).vt
        }
        const plain = (): ValType => {
          // (guarded, with the failure site of the bounds assert it takes over: see \`foldedLoad\`)
          const site = this.foldedLoad(e)
          const el = this.address(
            e.array.name,
            e.index,
            e.loc,
            e.inBounds === true && site === undefined,
            e.array.shown,
            site,
          )
          this.load(el)
          this.boolByte(el)
          return el.vt
        }
        const reused = this.loads?.get(e)
        return reused ? this.reusedLoad(reused, plain) : plain()
      }
      case 'field':
        return unsupported(`the field \`.${e.field}\``, e.loc)
      case 'unary': {
        const t = this.expr(e.arg)
        if (e.op === '!') {
          this.op(Op.i32_eqz)
          return I32
        }
        this.neg(t, e.type, e.loc)
        return t
      }
      case 'binary':
        return this.binary(e)
      case 'call':
        return this.call(e)
    }
  }

  /**
   * An element load that several statements of the block read (see `reusedLoads`): made, kept in
   * its local and its flag set in its first statement; after that, the local when the flag is
   * set, else made there. Every reuse tests the flag (a statement that runs as an f64x2 pair does
   * not make the loads it reads; its flags stay clear).
   */
  private reusedLoad(o: LoadOccurrence, plain: () => ValType): ValType {
    const held = this.loadLocals.get(o.load)
    if (!held) return plain()
    const make = (): ValType => {
      const t = plain()
      this.tee(held.local)
      this.i32(1)
      this.set(held.flag)
      return t
    }
    if (o.define) return make()
    this.get(held.flag)
    this.op(Op.if, held.type)
    this.get(held.local)
    this.op(Op.else)
    // (made only when the flag is clear: see \`sometimes\`)
    this.sometimes++
    make()
    this.sometimes--
    this.op(Op.end)
    return held.type
  }

  /** Negates the value on the stack. */
  private neg(t: ValType, type: ScalarTypeName | undefined, loc?: SourceLocation): void {
    this.numeric(type, loc)
    if (t === F64) this.op(Op.f64_neg)
    else if (t === F32) this.op(Op.f32_neg)
    else {
      this.i32(-1)
      this.op(Op.i32_mul)
    }
  }

  /** Rejects number systems with their own arithmetic or rounding (fixed, ulog, tropical). */
  private numeric(t: ScalarTypeName | undefined, loc?: SourceLocation): void {
    if (t === undefined || (WASM_TYPES as readonly string[]).includes(t)) return
    unsupported(`arithmetic on \`${t}\``, loc)
  }

  /** Whether a call is a pure primitive the scalar code emits as one wasm instruction (\`abs\`, \`sqrt\`...). */
  private nativeCall(call: Extract<Expr, { kind: 'call' }>): boolean {
    // (as \`call\` emits it: a standard primitive's own lowering, arguments and result one float type)
    const spec = this.program.registry.findPrimitive(call.callee)
    if (spec?.kind !== 'pure' || STANDARD_PURE.get(call.callee) !== spec) return false
    const t = call.type
    if ((t !== 'f64' && t !== 'f32') || !call.args.every((a) => a.type === t)) return false
    const op = spec.emit?.wasm
    return (
      (op === 'sqrt' || op === 'abs' || op === 'neg' || op === 'min' || op === 'max') &&
      nativeOp(op)!.arity === call.args.length
    )
  }

  private binary(e: Extract<Expr, { kind: 'binary' }>): ValType {
    const op = e.op
    if (op === '&&' || op === '||') {
      this.expr(e.left)
      // the right operand runs only sometimes: nothing computed there is shared
      const shared = this.shared
      this.shared = undefined
      // (one that cannot trap or call out runs always, without a branch: see \`eager-operands.ts\`)
      if (eagerOperand(e.right, (c) => this.nativeCall(c))) {
        this.expr(e.right)
        this.op(op === '&&' ? Op.i32_and : Op.i32_or)
        this.shared = shared
        return I32
      }
      this.op(Op.if, I32)
      if (op === '&&') {
        this.expr(e.right)
        this.op(Op.else)
        this.i32(0)
      } else {
        this.i32(1)
        this.op(Op.else)
        this.expr(e.right)
      }
      this.op(Op.end)
      this.shared = shared
      return I32
    }
    const lt = e.left.type as ScalarTypeName | undefined
    this.numeric(lt, e.loc)
    this.numeric(e.type, e.loc)
    if (op === '**') return this.power(e)
    // the left spine of a chain `a + b + c + …` in a loop: a long chain does not recurse per term
    const spine: Array<Extract<Expr, { kind: 'binary' }>> = [e]
    let n = e.left
    while (n.kind === 'binary' && !this.shared?.get(n) && n.op !== '&&' && n.op !== '||' && n.op !== '**') {
      this.numeric(n.left.type as ScalarTypeName | undefined, n.loc)
      this.numeric(n.type, n.loc)
      spine.push(n)
      n = n.left
    }
    let t = this.expr(n)
    for (let k = spine.length - 1; k >= 0; k--) t = this.binaryAfterLeft(spine[k]!, t)
    return t
  }

  /** The rest of a binary operation whose left operand (of value type `left`) is on the stack. */
  private binaryAfterLeft(e: Extract<Expr, { kind: 'binary' }>, left: ValType): ValType {
    const op = e.op
    const arithmetic = op === '+' || op === '-' || op === '*' || op === '/' || op === '%'
    // the type the operation runs in: the result's for arithmetic (`i32 / i32` is an f64
    // division), the wider operand's for a comparison; operands are converted as JS computes them
    const operand = (x: Expr) => this.vt((x.type as ScalarTypeName | undefined) ?? 'f64', x.loc)
    const [lv, rv] = [operand(e.left), operand(e.right)]
    const ta = arithmetic
      ? this.vt(e.type, e.loc)
      : lv === F64 || rv === F64
        ? F64
        : lv === F32 || rv === F32
          ? F32
          : I32
    this.convertValue(left, ta)
    if (op === '%' && ta !== I32) {
      // JS remainder on floats: no wasm instruction
      this.convertValue(this.expr(e.right), ta)
      const i = this.ctx.importOf(`rem:${ta}`, { params: [ta, ta], results: [ta] }, (a, b) => a % b)
      this.callImport(i)
      return ta
    }
    if (ta === I32 && (op === '/' || op === '%')) {
      // JS semantics ((a / b) | 0, (a % b) | 0): zero for b = 0, no trap on INT_MIN / -1
      const a = this.local(I32),
        b = this.local(I32)
      this.set(a)
      this.convertValue(this.expr(e.right), I32)
      this.set(b)
      this.get(b)
      this.op(Op.i32_eqz, Op.if, I32)
      this.i32(0)
      this.op(Op.else)
      if (op === '/') {
        this.get(b)
        this.i32(-1)
        this.op(Op.i32_eq, Op.if, I32)
        this.i32(0)
        this.get(a)
        this.op(Op.i32_sub, Op.else)
        this.get(a)
        this.get(b)
        this.op(Op.i32_div_s, Op.end)
      } else {
        this.get(a)
        this.get(b)
        this.op(Op.i32_rem_s)
      }
      this.op(Op.end)
      return I32
    }
    this.convertValue(this.expr(e.right), ta)
    const cmp = (i: number, f: number, g: number) => {
      this.op(ta === I32 ? i : ta === F32 ? f : g)
      return I32 as ValType
    }
    switch (op) {
      case '==':
        return cmp(Op.i32_eq, Op.f32_eq, Op.f64_eq)
      case '!=':
        return cmp(Op.i32_ne, Op.f32_ne, Op.f64_ne)
      case '<':
        return cmp(Op.i32_lt_s, Op.f32_lt, Op.f64_lt)
      case '<=':
        return cmp(Op.i32_le_s, Op.f32_le, Op.f64_le)
      case '>':
        return cmp(Op.i32_gt_s, Op.f32_gt, Op.f64_gt)
      case '>=':
        return cmp(Op.i32_ge_s, Op.f32_ge, Op.f64_ge)
      case '^':
        this.op(Op.i32_xor)
        return I32
      case '&':
        this.op(Op.i32_and)
        return I32
      case '|':
        this.op(Op.i32_or)
        return I32
      case '+':
        return this.arith(ta, Op.i32_add, Op.f32_add, Op.f64_add)
      case '-':
        return this.arith(ta, Op.i32_sub, Op.f32_sub, Op.f64_sub)
      case '*':
        return this.arith(ta, Op.i32_mul, Op.f32_mul, Op.f64_mul)
      case '/':
        return this.arith(ta, Op.i32_div_s, Op.f32_div, Op.f64_div)
    }
    return unsupported(`the operator \`${op}\``, e.loc)
  }
  /** Converts a value on the stack between value types (i32 → float exactly, f64 → f32 rounded). */
  private convertValue(from: ValType, to: ValType): void {
    if (from === to) return
    if (to === F64) this.toF64(from)
    else if (to === F32) this.op(from === I32 ? Op.f32_convert_i32_s : Op.f32_demote_f64)
    else throw new Error('wasm codegen: no implicit conversion to i32')
  }

  private arith(t: ValType, i: number, f: number, g: number): ValType {
    this.op(t === I32 ? i : t === F32 ? f : g)
    return t
  }

  private power(e: Extract<Expr, { kind: 'binary' }>): ValType {
    const t = this.vt(e.type, e.loc)
    if (t !== I32 && e.right.kind === 'num' && e.right.value === 2) {
      // x ** 2 is x * x: the same double as the cpu backend's
      this.expr(e.left)
      const x = this.local(t)
      this.tee(x)
      this.get(x)
      this.op(t === F32 ? Op.f32_mul : Op.f64_mul)
      return t
    }
    const routine = t !== I32 ? this.ctx.mathRoutine(POW, 'pow') : undefined
    if (routine !== undefined && e.right.kind === 'num') return this.callMath(routine, [e.left, e.right], t)
    const a = this.expr(e.left)
    this.toF64(a)
    const b = this.expr(e.right)
    this.toF64(b)
    if (t === I32) {
      const i = this.ctx.importOf('pow:i32', { params: [F64, F64], results: [I32] }, (x, y) => Math.pow(x, y) | 0)
      this.callImport(i)
      return I32
    }
    const pow = routine ?? this.ctx.importOf('pow:f64', { params: [F64, F64], results: [F64] }, Math.pow)
    const callPow = () => (routine !== undefined ? this.callDefined(pow) : this.callImport(pow))
    if (e.right.kind === 'num') callPow()
    else {
      // an exponent known only at run time: x ** 2 is x·x and x ** 1 is x, the doubles Math.pow
      // gives, without the call out of wasm (the derivative n·x^(n−1) of x^n meets both)
      const x = this.local(F64),
        y = this.local(F64)
      this.set(y)
      this.set(x)
      this.get(y)
      this.f64c(2)
      this.op(Op.f64_eq, Op.if, F64)
      this.get(x)
      this.get(x)
      this.op(Op.f64_mul)
      this.op(Op.else)
      this.get(y)
      this.f64c(1)
      this.op(Op.f64_eq, Op.if, F64)
      this.get(x)
      this.op(Op.else)
      this.get(x)
      this.get(y)
      callPow()
      this.op(Op.end, Op.end)
    }
    // rounded as the import's f32 result would be (round to nearest, ties to even)
    if (t === F32) this.op(Op.f32_demote_f64)
    return t
  }

  /** Converts the value on the stack (type `from`) to the value type of `to`, as JS does. */
  private convert(from: ScalarTypeName, to: 'f64' | 'f32' | 'i32', loc?: SourceLocation): void {
    this.numeric(from, loc)
    const src = this.vt(from, loc)
    if (to === 'f64') {
      this.toF64(src)
      return
    }
    if (to === 'f32') {
      if (src === I32) this.op(Op.f32_convert_i32_s)
      else if (src === F64) this.op(Op.f32_demote_f64)
      return
    }
    if (src === I32) return
    if (src === F32) this.op(Op.f64_promote_f32)
    // Math.trunc(x) | 0: saturating truncation where it agrees, the JS wrap-around elsewhere
    const x = this.local(F64)
    this.tee(x)
    this.op(Op.f64_abs)
    this.f64c(2147483648)
    this.op(Op.f64_lt, Op.if, I32)
    this.get(x)
    this.op(Op.prefix_fc)
    this.out.u32(OpFc.i32_trunc_sat_f64_s)
    this.op(Op.else)
    this.get(x)
    this.callImport(this.ctx.importOf('toInt32', { params: [F64], results: [I32] }, (v) => Math.trunc(v) | 0))
    this.op(Op.end)
  }

  private call(e: Extract<Expr, { kind: 'call' }>): ValType {
    const name = e.callee
    const argType = (i: number) => e.args[i]!.type as ScalarTypeName
    switch (name) {
      case 'f64':
      case 'f32':
      case 'i32':
      case 'convert': {
        const target = (name === 'convert' ? e.type : name) as string
        if (target !== 'f64' && target !== 'f32' && target !== 'i32')
          return unsupported(`conversions to \`${target}\``, e.loc)
        const to: 'f64' | 'f32' | 'i32' = target
        this.expr(e.args[0]!)
        this.convert(argType(0), to, e.loc)
        return this.vt(to)
      }
      case 'div': {
        // integer division of two i32, as `/` on i32
        return this.binary({
          kind: 'binary',
          op: '/',
          left: e.args[0]!,
          right: e.args[1]!,
          type: 'i32',
          ...(e.loc ? { loc: e.loc } : {}),
        })
      }
      case 'len': {
        this.get(this.array((e.args[0] as { name: string }).name, e.loc).len)
        return I32
      }
      // the reserved calls of run-time checks (see \`insert-checks.ts\`)
      case '$inrange':
        this.expr(e.args[0]!)
        this.expr(e.args[1]!)
        this.op(Op.i32_lt_u)
        return I32
      case '$start':
      case '$stop':
      case '$step':
        this.get(
          this.ranges.get((e.args[0] as { name: string }).name)![name === '$start' ? 0 : name === '$stop' ? 1 : 2],
        )
        return I32
      // two arrays share no memory (see \`apart.ts\` of \`@tenet/ir\`): their byte ranges do not
      // overlap (one typed array passed for two parameters is one region, see \`makeWrapper\`)
      case '$apart': {
        const [a, b] = e.args.map((x) => this.array((x as { name: string }).name, e.loc))
        this.overlapping(a!, b!)
        this.op(Op.i32_eqz)
        return I32
      }
      case '$factor':
        return this.factor(e.args[0]!)
      case '$near':
        return this.near(e.args[0]!, e.args[1]!)
      case '$zeros':
        return this.zeros((e.args[0] as { name: string }).name, e.args[1]!, e.loc)
      case 'zeros':
        return unsupported('`zeros` outside an array allocation', e.loc)
    }
    if (
      e.args.some((a) => a.kind === 'var' && typeof a.type === 'object') &&
      (name.startsWith('$host') || this.program.registry.findPrimitive(name)?.kind === 'pure')
    ) {
      return this.arrayCall(e)
    }
    const argTypes = e.args.map((a) => {
      if (a.kind === 'var' && typeof a.type === 'object')
        return unsupported(`passing the array \`${a.name}\` to \`${name}\``, a.loc)
      const t = a.type as ScalarTypeName
      this.numeric(t, a.loc)
      return t
    })
    const types = argTypes.map((t) => this.vt(t))
    const rt = this.vt(e.type, e.loc)
    if (name.startsWith('$host')) {
      const k = Number(name.slice(5))
      const h = this.program.hosts[k] as (...a: number[]) => unknown
      for (const a of e.args) this.expr(a)
      // one import per call site, so that a value that is not a number is reported where it was returned
      const at = e.loc ? `${e.loc.line}:${e.loc.column}` : ''
      const i = this.ctx.importOf(
        `${name}:${argTypes.join(',')}@${at}`,
        { params: types, results: [F64] },
        boolArgs((...a: number[]) => hostNumber(h(...a), k, e.loc), argTypes),
      )
      this.callImport(i)
      if (rt !== F64) unsupported(`a host call of type ${e.type}`, e.loc)
      return F64
    }
    const spec = this.program.registry.pure(name)
    this.numeric(e.type, e.loc)
    // sin and cos of one value in this run: both by one \`__sincos\` at the first of them (only
    // where the statement is evaluated whole: \`shared\` is unset under && and || and in a
    // failed check's message)
    const pair = this.shared && this.sincos?.get(e)
    if (pair) {
      if (!pair.locals) {
        this.expr(e.args[0]!)
        this.callDefined(this.ctx.math.use('__sincos'))
        const c = this.local(F64),
          s = this.local(F64)
        this.set(c)
        this.set(s)
        pair.locals = { sin: s, cos: c }
      }
      this.get(name === 'sin' ? pair.locals.sin : pair.locals.cos)
      return F64
    }
    // a standard transcendental function computed in the module (math/), where the benchmark chose it
    const routine = rt !== I32 && types.every((t) => t !== I32) ? this.ctx.mathRoutine(spec, name) : undefined
    if (routine !== undefined) return this.callMath(routine, e.args, rt)
    // the primitive's own lowering (its file's `emit.wasm`), where arguments and result share a float
    // type; a user's override that copied a standard primitive's lowering (`{ ...sin, evaluate }`)
    // has none of its own: its `evaluate` is what it means
    const standard = STANDARD_PURE.get(name)
    const lower = spec !== standard && standard?.emit?.wasm === spec.emit?.wasm ? undefined : spec.emit?.wasm
    if (lower !== undefined && rt !== I32 && types.every((t) => t === rt)) {
      const native = nativeOp(lower)
      if (native && native.arity === e.args.length) {
        for (const a of e.args) this.expr(a)
        emitNative(native, rt, (code) => this.op(code))
        return rt
      }
      if (typeof lower === 'object' && Object.hasOwn(MATH, lower.math) && MATH[lower.math].arity === e.args.length) {
        for (const a of e.args) this.expr(a)
        this.lowering.math(lower.math, rt)
        return rt
      }
      // a lowering function: f64 only (in f32 the JS function rounds once, as the cpu backend does)
      if (typeof lower === 'function' && rt === F64) {
        const args = e.args.map((a) => {
          this.expr(a)
          const l = this.local(rt)
          this.set(l)
          return l
        })
        runLowering(name, lower, rt, args, 1, this.lowering)
        return rt
      }
    }
    for (const a of e.args) this.expr(a)
    const i = this.ctx.importOf(
      `prim:${name}:${argTypes.join(',')}:${rt}`,
      { params: types, results: [rt] },
      boolArgs(mathImport(spec, name) ?? spec.evaluate, argTypes),
    )
    this.callImport(i)
    return rt
  }

  /**
   * Pushes the arguments of a host call or a call with array arguments: an array as its address
   * and length (two i32), a scalar as its value. Returns the wasm parameter types and how each
   * argument crossed (for {@link hostArgs}).
   */
  private crossingArgs(args: readonly Expr[]): { params: ValType[]; kinds: CrossingKind[] } {
    const params: ValType[] = []
    const kinds: CrossingKind[] = []
    for (const a of args) {
      if (a.kind === 'var' && typeof a.type === 'object') {
        const b = this.array(a.name, a.loc)
        this.get(b.ptr)
        this.get(b.len)
        params.push(I32, I32)
        kinds.push({ elem: b.elem })
        continue
      }
      const t = a.type as ScalarTypeName
      this.numeric(t, a.loc)
      this.expr(a)
      params.push(this.vt(t))
      kinds.push(t)
    }
    return { params, kinds }
  }

  /**
   * A call with array arguments (a host function, or a primitive with \`argKinds\`, as \`det(A)\`):
   * each array crosses as its address and length and reaches the JS function as a typed array
   * viewing the module's memory (as the cpu backend passes the array itself); the result is f64.
   */
  private arrayCall(e: Extract<Expr, { kind: 'call' }>): ValType {
    const { params, kinds } = this.crossingArgs(e.args)
    if (this.vt(e.type, e.loc) !== F64) unsupported(`a call with array arguments of type ${e.type}`, e.loc)
    const name = e.callee
    let fn: (...a: unknown[]) => number
    if (name.startsWith('$host')) {
      const k = Number(name.slice(5))
      const h = this.program.hosts[k] as (...a: unknown[]) => unknown
      fn = (...a) => hostNumber(h(...a), k, e.loc)
    } else fn = this.program.registry.pure(name).evaluate as unknown as (...a: unknown[]) => number
    const ctx = this.ctx
    const wrapper = (...raw: number[]): number => fn(...hostArgs(kinds, ctx, raw))
    // one import per call site, so that a value that is not a number is reported where it was returned
    const at = e.loc ? `${e.loc.line}:${e.loc.column}` : ''
    const key = `arrays:${name}:${kindsKey(kinds)}@${at}`
    this.callImport(this.ctx.importOf(key, { params, results: [F64] }, wrapper))
    return F64
  }

  /**
   * \`@safe e\`: a host call is imported without a result (its value is ignored, whatever it
   * is); any other expression is evaluated and dropped.
   */
  private safe(e: Expr): void {
    if (e.kind !== 'call' || !e.callee.startsWith('$host')) {
      this.expr(e)
      this.op(Op.drop)
      return
    }
    // an array argument crosses as its address and length, and reaches the host function as a
    // typed array viewing the module's memory (as the cpu backend passes the array itself)
    const { params, kinds } = this.crossingArgs(e.args)
    const h = this.program.hosts[Number(e.callee.slice(5))] as (...a: unknown[]) => unknown
    const ctx = this.ctx
    const host = (...raw: number[]): void => {
      h(...hostArgs(kinds, ctx, raw))
    }
    const key = `safe:${e.callee}:${kindsKey(kinds)}`
    this.callImport(this.ctx.importOf(key, { params, results: [] }, host))
  }

  // ---------- dataviews ----------

  /** Strips negations: the underlying variable or element and whether it is negated. */
  private base(dv: Dataview | Arg): { base: Dataview; negated: boolean } {
    let negated = false
    let d = dv as Dataview
    while (d.kind === 'neg') {
      negated = !negated
      d = d.target
    }
    if (d.kind === 'field') unsupported(`the field \`.${d.field}\``, d.loc)
    return { base: d, negated }
  }

  /**
   * Updates a dataview: `compute` receives the old value on the stack (or nothing when `old` is
   * false) and must leave the new value. Negated views are read and written negated.
   */
  private modify(dv: Dataview | Arg, t: ScalarTypeName, old: boolean, compute: () => void): void {
    const { base, negated } = this.base(dv)
    const vt = this.vt(t)
    const readNeg = () => {
      if (negated) this.neg(vt, t)
    }
    if (base.kind === 'var') {
      const b = this.binding(base.name, base.loc)
      if (b.kind !== 'scalar') throw new Error(`wasm codegen: cannot assign the array \`${base.name}\``)
      this.splats.delete(base.name)
      if (b.vec !== undefined) {
        // (a lane of an f64x2 local: the other lane is kept)
        this.get(b.vec)
        if (old) {
          this.get(b.vec)
          this.simd(OpFd.f64x2_extract_lane)
          this.out.byte(b.lane!)
          readNeg()
        }
        compute()
        readNeg()
        this.simd(OpFd.f64x2_replace_lane)
        this.out.byte(b.lane!)
        this.set(b.vec)
        return
      }
      if (old) {
        this.get(b.local)
        readNeg()
      }
      compute()
      readNeg()
      this.set(b.local)
      return
    }
    if (base.kind !== 'index') throw new Error(`wasm codegen: cannot write to ${base.kind}`)
    const held = this.promoted?.get(base.array.name)?.get(key(base.index))
    if (held !== undefined) {
      // (a lane of an f64x2 local: the other lane is kept)
      if (held.lane >= 0) this.get(held.local)
      if (old) {
        this.getHeld(held)
        readNeg()
      }
      compute()
      readNeg()
      if (held.lane >= 0) {
        this.simd(OpFd.f64x2_replace_lane)
        this.out.byte(held.lane)
      }
      this.set(held.local)
      if (held.lazy) held.lazy.dirty = true
      const cw = this.carriedWrite(base)
      if (cw) {
        this.get(held.local)
        if (held.lane >= 0) {
          this.simd(OpFd.f64x2_extract_lane)
          this.out.byte(held.lane)
        }
        this.set(cw.w)
        cw.emitted++
      }
      return
    }
    const dead = this.carriedWrite(base)
    if (dead?.dead !== undefined && !old) {
      // (a dead store, see \`deadCarriedStores\`: the value, which reads no element, in the local only;
      // the element's bounds guard stays where the index is not known in bounds)
      if (base.inBounds !== true) {
        this.address(base.array.name, base.index, base.loc, false, base.array.shown)
        this.op(Op.drop)
      }
      compute()
      readNeg()
      this.set(dead.w)
      dead.emitted++
      FunctionEmitter.bare(dead, false)
      return
    }
    const el = this.address(base.array.name, base.index, base.loc, base.inBounds === true, base.array.shown)
    const addr = this.local(I32)
    this.tee(addr)
    if (old) {
      this.get(addr)
      this.load(el)
      this.boolByte(el)
      readNeg()
    }
    compute()
    readNeg()
    const cw = this.carriedWrite(base)
    if (cw) {
      this.tee(cw.w)
      cw.emitted++
      if (cw.dead !== undefined) FunctionEmitter.bare(cw, false)
    }
    this.store(el)
  }

  /** Pushes the value of an argument or dataview. */
  private read(dv: Dataview | Arg): ValType {
    if (dv.kind === 'neg') {
      const t = this.read(dv.target)
      this.neg(t, dv.type)
      return t
    }
    return this.expr(dv as Expr)
  }

  // ---------- statements ----------

  private block(body: Stmt[]): void {
    if (this.lanesOf) {
      // a map loop's body in lanes: its runs share their common subexpressions and their sin/cos
      // pairs too (see \`laneRuns\`)
      const saved = this.shared
      this.laneRuns(body, (s) => this.vstmt(s))
      this.shared = saved
      return
    }
    // the loops whose carried stores are dead (see \`deadCarriedStores\`; checks off)
    const savedDead = [this.deadLoops, this.lastCarried] as const
    this.deadLoops =
      this.ctx.options.checks || disabledPasses.has('carried-stores') || disabledPasses.has('carried-elements')
        ? undefined
        : deadCarriedStores(
            body,
            this.ctx.effectful,
            new Set(this.f.params.filter((p) => p.type.kind === 'array').map((p) => p.name)),
          )
    // runs of straight-line statements share their common subexpressions; the \`@unchecked\`
    // blocks are opened so that a run goes on through them (see \`forEachStatement\`)
    const items: Array<[Stmt, number, Map<Expr, Shared> | undefined]> = []
    forEachStatement(
      body,
      (s, unchecked, shared) => {
        items.push([s, unchecked, shared])
      },
      this.tabulatedValues,
    )
    // the sin/cos pairs of each run (see \`runSincos\`)
    const outerSincos = this.sincos
    const sincos = this.runSincos(items)
    // element loads shared across the block, conditions included (see \`reusedLoads\`)
    const loads = reusedLoads(body, this.ctx.effectful)
    const saved = this.loads
    const start = (k: number): void => {
      // the flags of the loads first read here are cleared (the block may run again)
      for (const [e, o] of loads[k]!) {
        if (!o.define || this.loadLocals.has(o.load)) continue
        const type = elemInfo(this.array((e as Extract<Expr, { kind: 'index' }>).array.name).elem).vt
        const held = { local: this.local(type), flag: this.local(I32), type }
        this.loadLocals.set(o.load, held)
      }
      const cleared = new Set<ReusedLoad>()
      for (const o of loads[k]!.values()) {
        const held = o.define ? this.loadLocals.get(o.load) : undefined
        if (!held || cleared.has(o.load)) continue
        cleared.add(o.load)
        this.i32(0)
        this.set(held.flag)
      }
    }
    // elements each run keeps in locals from its first access to its last write (see \`runElements\`)
    const held = this.runHeld(items)
    const savedPromoted = this.promoted
    const savedSplats = this.splats
    this.splats = new Map()
    // with checks on, the bounds asserts just before the statement at hand (see \`foldingStmt\`)
    let pending: PendingBounds[] = []
    for (let i = 0; i < items.length; i++) {
      const [s, unchecked, shared] = items[i]!
      if (s.kind !== 'update' || !shared) this.splats.clear()
      this.shared = shared
      this.sincos = sincos[i]
      start(i)
      this.loads = loads[i]
      this.unchecked += unchecked
      held.enter(i)
      // two consecutive updates doing the same f64 arithmetic run as one f64x2 update (without
      // run-time checks: a failed check must name the element the scalar code would name)
      const next = items[i + 1]
      // (not of statements that read an array whose stores a loop dropped: its element is the
      // loop's local, see \`lastCarried\`)
      const plan =
        this.ctx.simd && next && next[1] === unchecked && !this.checking && !this.readsDropped(s, next[0])
          ? planPair(s, next[0], this.laneContext)
          : null
      if (plan) {
        // (a pair makes none of its loads: their flags stay clear)
        start(i + 1)
        this.loads = undefined
        this.pair(plan, s, next![0], shared, next![2])
        this.ctx.lanePairs++
        held.leave(i)
        i++
      } else if (this.checking && this.ctx.foldBounds) pending = this.foldingStmt(s, pending)
      else {
        this.placeAsserts(pending, pending.length)
        pending = []
        this.stmt(s)
      }
      held.leave(i)
      this.unchecked -= unchecked
      if (s.kind !== 'update') this.splats.clear()
    }
    this.placeAsserts(pending, pending.length)
    this.splats = savedSplats
    this.promoted = savedPromoted
    this.shared = undefined
    this.sincos = outerSincos
    this.loads = saved
    ;[this.deadLoops, this.lastCarried] = savedDead
  }

  /**
   * The elements the runs of a block keep in locals (see `runElements` of `@tenet/ir`; only
   * without run-time checks, and not in a map loop's lanes): `enter(k)` at the first statement of
   * a run holds its elements (as a loop holds its promoted elements: every access then reads or
   * writes the local), each loaded where the code first reads it (see `getHeld`: its address is
   * checked there, in the order of the scalar code); `leave(k)` after statement k stores those it
   * writes last and, at the end of a run, lets go of the run's elements.
   */
  private runHeld(items: Array<[Stmt, number, Map<Expr, Shared> | undefined]>): {
    enter(k: number): void
    leave(k: number): void
  } {
    const none = { enter() {}, leave() {} }
    if (this.checking || this.lanesOf) return none
    const starts = new Map<number, RunElement[]>()
    const lasts = new Map<number, RunElement[]>()
    const ends = new Set<number>()
    for (let i = 0; i < items.length; ) {
      if (!inRun(items[i]![0])) {
        i++
        continue
      }
      let j = i
      while (j < items.length && inRun(items[j]![0])) j++
      const els = runElements(
        items.slice(i, j).map((x) => x[0]),
        this.ctx.effectful,
      )
      if (els.length) {
        starts.set(i, els)
        ends.add(j - 1)
      }
      for (const e of els)
        if (e.lastWrite >= 0) {
          const l = lasts.get(i + e.lastWrite) ?? []
          l.push(e)
          lasts.set(i + e.lastWrite, l)
        }
      i = j
    }
    if (!starts.size) return none
    const holds = new Map<RunElement, Held>()
    const outer = this.promoted
    return {
      enter: (k) => {
        const els = starts.get(k)
        if (!els) return
        const map = new Map(outer ?? [])
        for (const e of els) {
          // (an array the loop holds elements of is the loop's: all its accesses are held)
          if (outer?.has(e.array)) continue
          const h: Held = {
            local: this.local(elemInfo(this.array(e.array).elem).vt),
            lane: -1,
            lazy: { element: e.element, addr: this.local(I32), loaded: false, dirty: false },
          }
          const m = new Map(map.get(e.array) ?? [])
          m.set(key(e.element.index), h)
          map.set(e.array, m)
          holds.set(e, h)
          this.ctx.runElements++
        }
        this.promoted = map
      },
      leave: (k) => {
        for (const e of lasts.get(k) ?? []) {
          const h = holds.get(e)
          if (!h?.lazy?.dirty) continue
          this.get(h.lazy.addr)
          this.get(h.local)
          this.store(elemInfo(this.array(e.array).elem))
          h.lazy.dirty = false
        }
        if (ends.has(k)) this.promoted = outer
      },
    }
  }

  // ---------- lane pairs (f64x2) ----------

  private simd(op: number): void {
    this.out.byte(Op.prefix_fd).u32(op)
  }

  private readonly laneContext: LaneContext = {
    elem: (name) => {
      const b = this.names.get(name)
      return b?.kind === 'array' ? b.elem : undefined
    },
    // (an element a run holds is left to memory while its local holds nothing newer: see \`Held\`)
    promoted: (name, index) => {
      const h = this.promoted?.get(name)?.get(key(index))
      return h !== undefined && (!h.lazy || h.lazy.dirty)
    },
    twinVars: (a, b) => {
      const x = this.names.get(a),
        y = this.names.get(b)
      return (
        x?.kind === 'scalar' &&
        y?.kind === 'scalar' &&
        x.vec !== undefined &&
        x.vec === y.vec &&
        x.lane === 0 &&
        y.lane === 1
      )
    },
    heldTogether: (name, a, b) => {
      const m = this.promoted?.get(name)
      const ha = m?.get(key(a)),
        hb = m?.get(key(b))
      return !!ha && !!hb && ha.local === hb.local && ha.lane === 0 && hb.lane === 1
    },
    native: (call) => {
      const spec = this.program.registry.findPrimitive(call.callee)
      const op = spec?.kind === 'pure' && typeof spec.emit?.wasm === 'string' ? spec.emit.wasm : undefined
      return op === 'sqrt' || op === 'abs' || op === 'neg' || op === 'min' || op === 'max'
        ? nativeOp(op)!.arity === call.args.length
          ? op
          : undefined
        : undefined
    },
    vectorMath: (call) => {
      // only where the scalar code calls the module's routine of that name (see \`expr\`)
      const routine = vectorRoutine(call.callee, this.ctx.mathChoice)
      if (!routine || call.type !== 'f64') return undefined
      const spec = this.program.registry.findPrimitive(call.callee)
      return spec?.kind === 'pure' && inModule(spec, call.callee, this.ctx.mathChoice) ? routine : undefined
    },
  }

  /** f64x2 values already computed in this run, by the shared subexpressions of their two lanes. */
  private readonly vectorShared = new Map<Shared, Map<Shared, number>>()

  /** Emits statements s and t as one f64x2 update (see `planPair`). */
  private pair(
    p: PairPlan,
    s: Stmt,
    t: Stmt,
    sa: Map<Expr, Shared> | undefined,
    sb: Map<Expr, Shared> | undefined,
  ): void {
    const add = p.op === '+=' ? OpFd.f64x2_add : OpFd.f64x2_sub
    // (each lane's update reads its element's old value, \`init\` or not: see \`ZeroingSite\`)
    for (const st of [s, t])
      if (st.kind === 'update' && st.target.kind === 'index') this.tableReadsOld(st.target.array.name)
    if (p.target.kind === 'vars') {
      // two locals held as the lanes of one f64x2 local (see \`twins.ts\`)
      const v = (this.names.get(p.target.name) as { vec: number }).vec
      this.get(v)
      this.lanes(p.value, sa, sb)
      this.simd(add)
      this.set(v)
    } else if (p.target.kind === 'held') {
      // two elements held as the lanes of one f64x2 local
      const v = this.promoted!.get(p.target.array)!.get(key(p.target.index))!.local
      this.get(v)
      this.lanes(p.value, sa, sb)
      this.simd(add)
      this.set(v)
    } else if (p.target.kind === 'elements') {
      const [ia, ib] = [s, t].map((st) => (st as Extract<Stmt, { kind: 'update' }>).target) as Array<
        Extract<Expr, { kind: 'index' }>
      >
      // the 16-byte access touches both elements: each index is checked as the scalar code would
      // check it, with its own statement's location, in the order the scalar code runs them
      const addr = this.local(I32)
      this.pairAddress(p.target.array, p.target.index, ia!, ib!, sa, sb)
      this.set(addr)
      this.get(addr)
      this.get(addr)
      this.simd(OpFd.v128_load)
      this.out.u32(3).u32(0)
      this.lanes(p.value, sa, sb)
      this.simd(add)
      this.simd(OpFd.v128_store)
      this.out.u32(3).u32(0)
      // (elements a run holds, clean: their locals are stale now)
      const m = this.promoted?.get(p.target.array)
      for (const st of [s, t]) {
        const h = m?.get(
          key(((st as Extract<Stmt, { kind: 'update' }>).target as Extract<Expr, { kind: 'index' }>).index),
        )
        if (h?.lazy) h.lazy.loaded = false
      }
    } else {
      this.lanes(p.value, sa, sb)
      const v = this.local(V128)
      this.set(v)
      const scalar = p.op === '+=' ? Op.f64_add : Op.f64_sub
      const write = (st: Stmt, lane: number, shared: Map<Expr, Shared> | undefined) => {
        this.shared = shared
        this.modify((st as Extract<Stmt, { kind: 'update' }>).target, 'f64', true, () => {
          this.get(v)
          this.simd(OpFd.f64x2_extract_lane)
          this.out.byte(lane)
          this.op(scalar)
        })
      }
      // (one place added into twice, in a downward loop's paired iterations: lane 1 is the
      // iteration the loop runs first)
      const st = s as Extract<Stmt, { kind: 'update' }>,
        tt = t as Extract<Stmt, { kind: 'update' }>
      if (this.pairsDown && st.target.kind === tt.target.kind && key(st.target as Expr) === key(tt.target as Expr)) {
        write(t, 1, sb)
        write(s, 0, sa)
      } else {
        write(s, 0, sa)
        write(t, 1, sb)
      }
    }
    this.shared = sa
  }

  /**
   * Pushes the address of \`array[index]\` for a 16-byte access of it and the element after it,
   * both indices bounds-checked (as the scalar code checks \`a\` and \`b\`, the two lanes'
   * accesses, each with its own location): lane 0 first, or lane 1 first in a downward loop's
   * paired iterations, where lane 1 is the iteration the scalar loop runs first.
   */
  private pairAddress(
    array: string,
    index: Expr,
    a: Extract<Expr, { kind: 'index' }>,
    b: Extract<Expr, { kind: 'index' }>,
    sa: Map<Expr, Shared> | undefined,
    sb: Map<Expr, Shared> | undefined,
  ): void {
    const second = () => {
      this.shared = sb
      this.address(array, b.index, b.loc, b.inBounds === true, b.array.shown)
      this.op(Op.drop)
    }
    if (this.pairsDown) second()
    this.shared = sa
    this.address(array, index, a.loc, a.inBounds === true, a.array.shown)
    if (!this.pairsDown) second()
    this.shared = sa
  }

  /** Pushes the f64x2 value of a lane plan. */
  private lanes(l: Lanes, sa: Map<Expr, Shared> | undefined, sb: Map<Expr, Shared> | undefined): void {
    if (l.kind === 'splat') {
      // (a variable splat earlier in the run and not written since: its f64x2 local)
      const name = l.expr.kind === 'var' && l.expr.type === 'f64' ? l.expr.name : undefined
      const have = name === undefined ? undefined : this.splats.get(name)
      if (have !== undefined) {
        this.get(have)
        return
      }
      this.shared = sa
      this.toF64(this.expr(l.expr))
      this.simd(OpFd.f64x2_splat)
      if (name !== undefined) {
        const v = this.local(V128)
        this.tee(v)
        this.splats.set(name, v)
      }
      return
    }
    // a pair of shared subexpressions computed before in this run is in a local
    const ka = sa?.get(l.a),
      kb = sb?.get(l.b)
    const cached = ka && kb ? this.vectorShared.get(ka)?.get(kb) : undefined
    if (cached !== undefined) {
      this.get(cached)
      return
    }
    switch (l.kind) {
      case 'scalars':
        this.shared = sa
        this.toF64(this.expr(l.a))
        this.simd(OpFd.f64x2_splat)
        this.shared = sb
        this.toF64(this.expr(l.b))
        this.simd(OpFd.f64x2_replace_lane)
        this.out.byte(1)
        break
      case 'load': {
        // both elements' indices checked, each with its own location (see \`pair\`)
        const [ea, eb] = [l.a, l.b] as Array<Extract<Expr, { kind: 'index' }>>
        this.pairAddress(l.array, l.index, ea!, eb!, sa, sb)
        this.simd(OpFd.v128_load)
        this.out.u32(3).u32(0)
        break
      }
      case 'held':
        this.get(this.promoted!.get(l.array)!.get(key(l.index))!.local)
        break
      case 'vars':
        this.get((this.names.get(l.name) as { vec: number }).vec)
        break
      case 'binary': {
        this.lanes(l.left, sa, sb)
        this.lanes(l.right, sa, sb)
        const ops = { '+': OpFd.f64x2_add, '-': OpFd.f64x2_sub, '*': OpFd.f64x2_mul, '/': OpFd.f64x2_div }
        this.simd(ops[l.op])
        break
      }
      case 'square': {
        this.lanes(l.arg, sa, sb)
        const x = this.local(V128)
        this.tee(x)
        this.get(x)
        this.simd(OpFd.f64x2_mul)
        break
      }
      case 'native': {
        for (const x of l.args) this.lanes(x, sa, sb)
        const ops: Record<VectorNative, number> = {
          neg: OpFd.f64x2_neg,
          sqrt: OpFd.f64x2_sqrt,
          abs: OpFd.f64x2_abs,
          min: OpFd.f64x2_min,
          max: OpFd.f64x2_max,
        }
        this.simd(ops[l.op])
        break
      }
      case 'math':
        for (const x of l.args) this.lanes(x, sa, sb)
        this.callDefined(this.ctx.math.use(l.routine))
        break
    }
    if (ka && kb) {
      const v = this.local(V128)
      this.tee(v)
      let m = this.vectorShared.get(ka)
      if (!m) this.vectorShared.set(ka, (m = new Map()))
      m.set(kb, v)
    }
  }

  private scoped(f: () => void): void {
    const saved = new Map(this.names)
    f()
    this.names = saved
  }

  /** A run-time check (see \`insert-checks.ts\`): fails with its catalog entry unless \`cond\` holds. */
  private assert(s: Extract<Stmt, { kind: 'assert' }>): void {
    this.folding(s.cond, () => this.expr(s.cond))
    this.op(Op.i32_eqz, Op.if, 0x40)
    // the message's values, computed only when the check fails (nothing shared is computed here)
    const values = s.args.filter((a): a is Expr => typeof a !== 'string')
    const types = values.map((a) => a.type as ScalarTypeName)
    const message = RUNTIME_CHECKS[s.check as RuntimeCheck] as (...a: unknown[]) => string
    const site = this.ctx.site(RUNTIME_CHECK_CODES[s.check as RuntimeCheck], s.loc, (...v) => {
      let k = 0
      return message(
        ...s.args.map((a) => {
          if (typeof a === 'string') return a
          const x = v[k]!
          return types[k++] === 'bool' ? x !== 0 : x
        }),
      )
    })
    const shared = this.shared
    this.shared = undefined
    this.fail(
      site,
      values.map((a) => [() => void this.expr(a), this.vt(a.type as ScalarTypeName, a.loc)] as [() => void, ValType]),
    )
    this.shared = shared
    this.op(Op.end)
  }

  private stmt(s: Stmt): void {
    switch (s.kind) {
      case 'update':
        return this.update(s)
      case 'callstmt':
        return this.callStmt(s)
      case 'alloc':
        return this.alloc(s)
      case 'dealloc':
        return this.dealloc(s)
      case 'if':
        return this.ifStmt(s)
      case 'while':
        return this.whileStmt(s)
      case 'for':
        return this.forStmt(s)
      case 'push':
      case 'pop':
        return unsupported('stacks', s.loc)
      case 'safe':
        return this.safe(s.expr)
      case 'assert':
        return this.assert(s)
      case 'unchecked': {
        this.unchecked++
        this.block(s.body)
        this.unchecked--
        return
      }
      default:
        throw new Error(`wasm backend: \`${s.kind}\` is not core IR (preprocess first)`)
    }
  }

  private update(s: Extract<Stmt, { kind: 'update' }>): void {
    const t = (s.target as { type?: ScalarTypeName }).type!
    this.numeric(t, s.loc)
    const vt = this.vt(t, s.loc)
    let opcode: number
    switch (s.op) {
      case '+=':
        opcode = vt === I32 ? Op.i32_add : vt === F32 ? Op.f32_add : Op.f64_add
        break
      case '-=':
        opcode = vt === I32 ? Op.i32_sub : vt === F32 ? Op.f32_sub : Op.f64_sub
        break
      case '^=':
        opcode = Op.i32_xor
        break
      case '*=':
      case '/=':
        if (vt !== F64 && vt !== F32) return unsupported(`\`${s.op}\` on \`${t}\``, s.loc)
        return this.scaleUpdate(s, t, vt)
      default:
        return unsupported(`\`${s.op}\` on \`${t}\``, s.loc)
    }
    // the first write of an f64 element known to hold zero (\`UpdateStmt.init\`; the allocation
    // zeroed it) of a loop-carried element whose reads allow it (\`CarriedElement.signFree\`): the
    // local keeps the value e, the store \`e + 0\` (the same bits as \`0 + e\`), so the addition
    // leaves the recurrence's chain and the old element is not loaded
    if (s.op === '+=' && vt === F64 && s.init === true && s.target.kind === 'index') {
      const cw = this.carriedWrite(s.target)
      if (cw?.sample.signFree && this.promoted?.get(s.target.array.name)?.get(key(s.target.index)) === undefined) {
        if (cw.dead !== undefined) {
          // (a dead store, see \`deadCarriedStores\`: e in the local only; the element's bounds
          // guard stays where the index is not known in bounds)
          if (s.target.inBounds !== true) {
            this.address(s.target.array.name, s.target.index, s.target.loc, false, s.target.array.shown)
            this.op(Op.drop)
          }
          this.folding(s.value, () => this.expr(s.value))
          this.set(cw.w)
          cw.emitted++
          FunctionEmitter.bare(cw, true)
          return
        }
        const el = this.address(
          s.target.array.name,
          s.target.index,
          s.target.loc,
          s.target.inBounds === true,
          s.target.array.shown,
        )
        this.folding(s.value, () => this.expr(s.value))
        this.tee(cw.w)
        cw.emitted++
        this.f64c(0)
        this.op(Op.f64_add)
        this.store(el)
        return
      }
    }
    // the first write of an element known to hold zero (\`UpdateStmt.init\`) of a table whose
    // zeroing may be left out: zero ± the value, the element not loaded (the same bits as from
    // the zero a zeroed table holds; see \`ZeroingSite\`); an element held in a local reads the
    // local (and keeps the zeroing), and other code is left as it was
    const held =
      s.target.kind === 'index' ? this.promoted?.get(s.target.array.name)?.get(key(s.target.index)) : undefined
    const binding = s.target.kind === 'index' ? this.names.get(s.target.array.name) : undefined
    if (
      s.init === true &&
      binding?.kind === 'array' &&
      binding.zeroing !== undefined &&
      held === undefined &&
      (s.op === '+=' || s.op === '-=')
    ) {
      this.modify(s.target, t, false, () => {
        if (vt === F64) this.f64c(0)
        else if (vt === F32) this.out.byte(Op.f32_const).f32(0)
        else this.i32(0)
        this.folding(s.value, () => this.expr(s.value))
        this.op(opcode)
      })
      return
    }
    this.initReadsOld(s)
    this.modify(s.target, t, true, () => {
      this.folding(s.value, () => this.expr(s.value))
      this.op(opcode)
    })
  }

  /**
   * Notes that the code of update \`s\` reads its element's old value: where \`s\` is an \`init\`
   * update of a table whose zeroing may be left out, the zeroing stays (see \`ZeroingSite\`).
   */
  private initReadsOld(s: Stmt): void {
    if (s.kind !== 'update' || s.init !== true || s.target.kind !== 'index') return
    this.tableReadsOld(s.target.array.name)
  }

  /** Keeps the zeroing of table \`name\` (if it is one whose zeroing may be left out, see \`ZeroingSite\`). */
  private tableReadsOld(name: string): void {
    const b = this.names.get(name)
    if (b?.kind === 'array' && b.zeroing) b.zeroing.readsOld = true
  }

  /** `y *= e` / `y /= e` on a float: e is evaluated once, checked nonzero and finite, then applied. */
  private scaleUpdate(s: Extract<Stmt, { kind: 'update' }>, t: ScalarTypeName, vt: ValType): void {
    this.initReadsOld(s)
    const k = this.local(vt)
    this.folding(s.value, () => this.expr(s.value))
    this.set(k)
    const opcode = s.op === '*=' ? (vt === F64 ? Op.f64_mul : Op.f32_mul) : vt === F64 ? Op.f64_div : Op.f32_div
    this.modify(s.target, t, true, () => {
      this.get(k)
      this.op(opcode)
    })
  }

  private alloc(s: Extract<Stmt, { kind: 'alloc' }>): void {
    const type = s.type as Type
    if (type.kind === 'stack' || s.value.kind === 'emptystack') return unsupported('stacks', s.loc)
    if (type.kind === 'array') {
      if (s.value.kind !== 'call' || s.value.callee !== 'zeros') return unsupported('this array allocation', s.loc)
      const hoisted = this.hoisted.get(s)
      if (hoisted) {
        // the memory was taken before the loop (see \`hoistAllocs\`): zeroed here as an allocation zeroes it
        const zeroing = this.zeroArray(s, type.elem, hoisted.ptr, hoisted.len, hoisted.top)
        this.names.set(s.name, {
          kind: 'array',
          ptr: hoisted.ptr,
          len: hoisted.len,
          elem: type.elem,
          hoisted: true,
          ...(zeroing ? { zeroing } : {}),
        })
        return
      }
      const { ptr, len, top } = this.takeArray(s, type.elem)
      const zeroing = this.zeroArray(s, type.elem, ptr, len, top)
      this.get(top)
      this.out.byte(Op.global_set).u32(0)
      this.names.set(s.name, { kind: 'array', ptr, len, elem: type.elem, ...(zeroing ? { zeroing } : {}) })
      return
    }
    this.numeric(type.name, s.loc)
    const vt = this.vt(type.name, s.loc)
    const twin = vt === F64 ? this.twins.get(s.name) : undefined
    if (twin) {
      // one lane of the f64x2 local its partner holds the other lane of (see \`twins.ts\`)
      const p = this.names.get(twin.partner)
      const vec = p?.kind === 'scalar' && p.vec !== undefined ? p.vec : this.local(V128)
      this.get(vec)
      this.toF64(this.expr(s.value as Expr))
      this.simd(OpFd.f64x2_replace_lane)
      this.out.byte(twin.lane)
      this.set(vec)
      this.names.set(s.name, { kind: 'scalar', local: -1, type: type.name, vec, lane: twin.lane })
      return
    }
    const l = this.local(vt)
    this.folding(s.value as Expr, () => this.expr(s.value as Expr))
    this.set(l)
    this.names.set(s.name, { kind: 'scalar', local: l, type: type.name })
  }

  /**
   * The code of an array allocation \`zeros(n)\` but its zeroing and the heap top's update: its
   * length \`len\` checked (a whole number, addressable), its address \`ptr\` the heap top and its
   * end \`top\` (8-byte aligned), the memory grown to hold it.
   */
  private takeArray(
    s: Extract<Stmt, { kind: 'alloc' }>,
    elem: ScalarTypeName,
  ): { ptr: number; len: number; top: number } {
    const el = elemInfo(elem, s.loc)
    this.heapMark ??= this.local(I32)
    const len = this.local(I32),
      ptr = this.local(I32),
      top = this.local(I32)
    this.expr((s.value as Extract<Expr, { kind: 'call' }>).args[0]!)
    this.tee(len)
    this.i32(0)
    this.op(Op.i32_lt_s, Op.if, 0x40)
    const bad = this.ctx.check('arrayLength', s.loc, (n) => [s.name, n])
    this.fail(bad, [[() => this.get(len), I32]])
    this.op(Op.end)
    // a size past 2 GiB cannot be addressed (and would wrap below)
    this.get(len)
    this.i32((0x7fffffff >> el.shift) - 8)
    this.op(Op.i32_gt_s, Op.if, 0x40)
    const huge = this.ctx.check('tooLarge', s.loc, (n) => [s.name, n])
    this.fail(huge, [[() => this.get(len), I32]])
    this.op(Op.end)
    // ptr = hp; top = ptr + round8(len << shift)
    this.out.byte(Op.global_get).u32(0)
    this.tee(ptr)
    this.get(len)
    if (el.shift) {
      this.i32(el.shift)
      this.op(Op.i32_shl)
    }
    this.i32(7)
    this.op(Op.i32_add)
    this.i32(-8)
    this.op(Op.i32_and, Op.i32_add)
    this.tee(top)
    // an end past 4 GiB (the heap top is an i32) wraps below the start: the memory cannot hold it
    this.get(ptr)
    this.op(Op.i32_lt_u, Op.if, 0x40)
    const wrapped = this.ctx.check('cannotGrow', s.loc, (n) => [s.name, n])
    this.fail(wrapped, [[() => this.get(len), I32]])
    this.op(Op.end)
    // grow the memory when the heap passes its end, in pages: the pages the heap needs,
    // ((top − 1) >>> 16) + 1 (top > 0: it is at least the heap start), against memory.size (the
    // size in bytes, memory.size << 16, is 0 in a full 4 GiB memory: review 19a)
    this.get(top)
    this.i32(1)
    this.op(Op.i32_sub)
    this.i32(16)
    this.op(Op.i32_shr_u)
    this.op(Op.memory_size, 0x00)
    this.op(Op.i32_ge_u, Op.if, 0x40)
    this.get(top)
    this.i32(1)
    this.op(Op.i32_sub)
    this.i32(16)
    this.op(Op.i32_shr_u)
    this.i32(1)
    this.op(Op.i32_add)
    this.op(Op.memory_size, 0x00)
    this.op(Op.i32_sub, Op.memory_grow, 0x00)
    this.ctx.grows = true
    this.i32(-1)
    this.op(Op.i32_eq, Op.if, 0x40)
    const oom = this.ctx.check('cannotGrow', s.loc, (n) => [s.name, n])
    this.fail(oom, [[() => this.get(len), I32]])
    this.op(Op.end, Op.end)
    return { ptr, len, top }
  }

  /**
   * Zeroes the array at \`ptr\` (\`len\` elements, its words to \`top\`) of allocation \`s\`: under
   * a \`ZeroingSite\` where it is a table whose zeroing may be left out (returned).
   */
  private zeroArray(
    s: Extract<Stmt, { kind: 'alloc' }>,
    elem: ScalarTypeName,
    ptr: number,
    len: number,
    top: number,
  ): ZeroingSite | undefined {
    const el = elemInfo(elem, s.loc)
    // a table whose elements are each written by an \`init\` update before anything reads them
    // (without checks: a checked deallocation reads every element) may skip the zeroing: under
    // \`if (i32.const 1)\`, the constant patched to 0 once the function is emitted where no
    // \`init\` update of it read the old element after all (see \`ZeroingSite\`)
    let zeroing: ZeroingSite | undefined
    if (s.overwritten === true && !this.ctx.options.checks && this.apart === undefined) {
      this.out.byte(Op.i32_const)
      zeroing = { at: this.out.length, readsOld: false }
      this.out.byte(1)
      this.op(Op.if, 0x40)
      this.zeroings.push(zeroing)
    }
    // zero it: memory.fill(ptr, 0, len << shift) for a large array; a small one (at most
    // ZERO_STORES_MAX_BYTES, its 8-byte words from ptr to top) by a loop of f64 stores of +0,
    // whose bits are all zero: memory.fill is a call into the engine, which for an array of a
    // few elements allocated in every iteration of a loop cost more than the loop's work
    this.get(top)
    this.get(ptr)
    this.op(Op.i32_sub)
    this.i32(ZERO_STORES_MAX_BYTES)
    this.op(Op.i32_gt_u, Op.if, 0x40)
    this.get(ptr)
    this.i32(0)
    this.get(len)
    if (el.shift) {
      this.i32(el.shift)
      this.op(Op.i32_shl)
    }
    this.op(Op.prefix_fc)
    this.out.u32(OpFc.memory_fill).byte(0x00)
    this.op(Op.else)
    const z = this.local(I32)
    this.get(ptr)
    this.set(z)
    this.op(Op.block, 0x40, Op.loop, 0x40)
    this.get(z)
    this.get(top)
    this.op(Op.i32_ge_u, Op.br_if, 1)
    this.get(z)
    this.f64c(0)
    this.out.byte(Op.f64_store).u32(3).u32(0)
    this.get(z)
    this.i32(8)
    this.op(Op.i32_add)
    this.set(z)
    this.op(Op.br, 0, Op.end, Op.end)
    this.op(Op.end)
    if (zeroing) this.op(Op.end)
    return zeroing
  }

  private dealloc(s: Extract<Stmt, { kind: 'dealloc' }>): void {
    if (this.lastCarried?.has(s.name)) {
      this.lastCarried = new Map(this.lastCarried)
      this.lastCarried.delete(s.name)
    }
    const b = this.binding(s.name, s.loc)
    if (s.value.kind === 'emptystack') return unsupported('stacks', s.loc)
    if (b.kind === 'array' && b.hoisted) {
      // (checked by the assert before it; its memory is given back after the loop: see \`hoistAllocs\`)
      this.names.delete(s.name)
      return
    }
    if (b.kind === 'array') {
      const el = elemInfo(b.elem, s.loc)
      // (checked by the assert before it: see \`insert-checks.ts\`)
      // give the memory back when it is the top of the heap
      this.get(b.ptr)
      this.get(b.len)
      if (el.shift) {
        this.i32(el.shift)
        this.op(Op.i32_shl)
      }
      this.i32(7)
      this.op(Op.i32_add)
      this.i32(-8)
      this.op(Op.i32_and, Op.i32_add)
      this.out.byte(Op.global_get).u32(0)
      this.op(Op.i32_eq, Op.if, 0x40)
      this.get(b.ptr)
      this.out.byte(Op.global_set).u32(0)
      this.op(Op.end)
      this.names.delete(s.name)
      return
    }
    // (a scalar's deallocation is checked by the assert before it: see \`insert-checks.ts\`)
    this.names.delete(s.name)
  }

  private ifStmt(s: Extract<Stmt, { kind: 'if' }>): void {
    const pre = this.local(I32)
    this.folding(s.pre, () => this.expr(s.pre))
    // (only the condition is the statement's head: see \`reusedLoads\`)
    this.loads = undefined
    this.tee(pre)
    this.op(Op.if, 0x40)
    this.scoped(() => this.block(s.then))
    if (s.else.length) {
      this.op(Op.else)
      // (the loop as written of hoist-bounds' two versions, which runs only to fail: not versioned again)
      const versioning = this.versioning
      if (s.failing) this.versioning = false
      this.scoped(() => this.block(s.else))
      this.versioning = versioning
      // (an arm after which the loop's condition is false: out of the loop's block, see \`exitIfs\`)
      if (this.exitIfs?.has(s)) this.op(Op.br, 2)
    }
    this.op(Op.end)
  }

  /**
   * The \`if\` statements at the top level of the \`while\` body being emitted (as \`whileStmt\`
   * emits it: block, loop, then the body) whose \`else\` arm leaves the loop (\`exits\`, set by pass
   * \`unroll-swaps\`): that arm ends with a branch out of the loop's block.
   */
  private exitIfs: Set<Stmt> | undefined

  private whileStmt(s: Extract<Stmt, { kind: 'while' }>): void {
    this.op(Op.block, 0x40, Op.loop, 0x40)
    this.expr(s.pre)
    this.op(Op.i32_eqz, Op.br_if, 1)
    const saved = this.exitIfs
    this.exitIfs = new Set(s.body.filter((x) => x.kind === 'if' && x.exits && x.else.length))
    this.scoped(() => this.block(s.body))
    this.exitIfs = saved
    this.op(Op.br, 0, Op.end, Op.end)
  }

  private forStmt(s: Extract<Stmt, { kind: 'for' }>): void {
    const a = this.local(I32),
      b = this.local(I32),
      st = this.local(I32),
      i = this.local(I32)
    this.expr(s.start)
    this.set(a)
    this.expr(s.stop)
    this.set(b)
    if (s.step) this.expr(s.step)
    else this.i32(1)
    this.set(st)
    // (only the range is the statement's head: see \`reusedLoads\`)
    this.loads = undefined
    if (s.step && s.step.kind !== 'num') {
      const site = this.ctx.check('zeroStep', s.loc, () => [])
      this.get(st)
      this.op(Op.i32_eqz, Op.if, 0x40)
      this.fail(site, [])
      this.op(Op.end)
    }
    const stepConst = s.step?.kind === 'num' ? s.step.value : s.step ? undefined : 1
    // the memory of the allocations that begin the body, taken once here (see \`hoistAllocs\`)
    const hoisted = this.hoistAllocs(s, a, b, stepConst)
    // affine indices checked once here, for the whole range, then a copy of the loop without
    // their guards; the loop as it is when one is out of range (see \`range-versions.ts\`)
    const version = this.rangeVersion(s, stepConst)
    // (the unguarded copy's allocations are copies of the loop's, in the same places)
    if (version) hoisted.forEach((h, k) => this.hoisted.set(version.body[k] as AllocStmt, h))
    if (version) {
      // block $done { block $guarded { checks (br_if $guarded); the unguarded loop; br $done }
      // the guarded loop }
      this.op(Op.block, 0x40, Op.block, 0x40)
      this.rangeCheck(version, s, a, b, stepConst === 1)
      // (neither copy versions the loops inside it, so that a nest's code at most doubles: inner
      // loops versioned too made the graph-embedding gradient's short inner loops (k = 2…4
      // iterations, which run guarded) slower, by more than they gained at k = 10; and the
      // diagnostics count each loop once, from the unguarded copy)
      this.versioning = false
      // (the unguarded copy drops the stores the loop does, in the locals both copies share: see \`carriedLocals\`)
      const copy = { ...s, body: version.body }
      this.versionCopy = [copy, s]
      this.loopOf(copy, a, b, st, i, stepConst)
      this.versionCopy = undefined
      this.op(Op.br, 1, Op.end)
      const counts = [this.ctx.lanePairs, this.ctx.runElements, this.ctx.mapLanes, this.ctx.loopUniform] as const
      const pairRangeLoops = this.ctx.pairRangeLoops,
        quadLoops = this.ctx.laneQuads
      this.guardedCopy = s
      this.loopOf(s, a, b, st, i, stepConst)
      this.guardedCopy = undefined
      this.versioning = true
      ;[this.ctx.lanePairs, this.ctx.runElements, this.ctx.mapLanes, this.ctx.loopUniform] = counts
      this.ctx.pairRangeLoops = pairRangeLoops
      this.ctx.laneQuads = quadLoops
      this.op(Op.end)
    } else this.loopOf(s, a, b, st, i, stepConst)
    this.releaseHoisted(hoisted, s, a, b, stepConst)
    // the arrays whose stores the loop dropped (in whichever copy ran): reads after it take the
    // local where it ran
    const dropped = this.droppedStores.get(s)
    if (dropped) {
      this.droppedStores.delete(s)
      this.lastCarried = new Map([...(this.lastCarried ?? []), ...dropped])
      this.ctx.carriedStores += dropped.size
    }
    // the range the loop began with, for the \`loopRange\` assert after it
    this.ranges.set(s.variable, [a, b, st])
  }

  /** The allocations whose memory a loop around them took (see \`hoistAllocs\`): its locals. */
  private readonly hoisted = new Map<AllocStmt, { ptr: number; len: number; top: number }>()

  /**
   * Takes the memory of the array allocations that begin the body of a loop of step ±1 before
   * the loop (\`hoist-pools\`, the cpu backend's \`hoistAllocs\`): each \`a <- zeros(n)\` of the
   * body's leading run of allocations of a loop-invariant length (\`hoistableAllocs\` of
   * \`@tenet/ir\`) has its length checked, its memory taken from the heap top and the memory
   * grown, once, where the loop runs (the start and end \`a\`, \`b\` say so); each iteration
   * then zeroes it as the allocation would (or not, a table whose zeroing is left out) and its
   * deallocation gives nothing back: \`releaseHoisted\` does after the loop. Nothing runs in the
   * first iteration before these allocations, so a length that fails (or memory that cannot
   * grow) fails at the same point, with the same message, as without. An allocation after them
   * in the body takes memory above them, as it would have in each iteration.
   */
  private hoistAllocs(
    s: Extract<Stmt, { kind: 'for' }>,
    a: number,
    b: number,
    stepConst: number | undefined,
  ): Array<{ ptr: number; len: number; top: number }> {
    if ((stepConst !== 1 && stepConst !== -1) || disabledPasses.has('hoist-pools') || this.lanesOf) return []
    const allocs = hoistableAllocs(s, this.ctx.effectful)
    if (!allocs.length) return []
    const out: Array<{ ptr: number; len: number; top: number }> = []
    this.runsCode(s, a, b, stepConst)
    this.op(Op.if, 0x40)
    for (const x of allocs) {
      const h = this.takeArray(x, (x.type as { elem: ScalarTypeName }).elem)
      this.get(h.top)
      this.out.byte(Op.global_set).u32(0)
      this.hoisted.set(x, h)
      this.ctx.hoistedAllocs++
      out.push(h)
    }
    this.op(Op.end)
    return out
  }

  /** Whether a loop of step \`stepConst\` (±1) from \`a\` to \`b\` runs an iteration (an i32 on the stack). */
  private runsCode(s: Extract<Stmt, { kind: 'for' }>, a: number, b: number, stepConst: number): void {
    this.get(a)
    this.get(b)
    if (stepConst === 1) this.op(s.inclusive ? Op.i32_le_s : Op.i32_lt_s)
    else this.op(s.inclusive ? Op.i32_ge_s : Op.i32_gt_s)
  }

  /**
   * Gives back, after the loop, the memory \`hoistAllocs\` took before it (where the loop ran),
   * last taken first, each where it is the heap top (as a deallocation does).
   */
  private releaseHoisted(
    hoisted: Array<{ ptr: number; len: number; top: number }>,
    s: Extract<Stmt, { kind: 'for' }>,
    a: number,
    b: number,
    stepConst: number | undefined,
  ): void {
    if (!hoisted.length || stepConst === undefined) return
    this.runsCode(s, a, b, stepConst)
    this.op(Op.if, 0x40)
    for (const h of [...hoisted].reverse()) {
      this.get(h.top)
      this.out.byte(Op.global_get).u32(0)
      this.op(Op.i32_eq, Op.if, 0x40)
      this.get(h.ptr)
      this.out.byte(Op.global_set).u32(0)
      this.op(Op.end)
    }
    this.op(Op.end)
  }

  /** The unguarded copy of a loop run in two versions being emitted, and the loop (see \`rangeVersion\`). */
  private versionCopy: [Stmt, Stmt] | undefined
  /**
   * The loops emitted whose carried stores are dead (see \`deadCarriedStores\`), by loop (the
   * statement of the block, for both copies of a versioned loop), until the loop's statement is
   * done: by array, the key of the element the last iteration writes, the locals both copies
   * share, and how the writes left the value (see \`CarriedWrite.bare\`).
   */
  private readonly droppedStores = new Map<
    Stmt,
    Map<string, { key: string; r: number; h: number; bare: boolean | 'mixed' | undefined }>
  >()

  /** The loop whose guarded copy (the one its range version's check falls back to) is being emitted. */
  private guardedCopy: Stmt | undefined

  /** Whether the loop being emitted may have a range version (not inside the copies of a versioned loop). */
  private versioning = true

  /**
   * The range version of a loop of step ±1 (see \`range-versions.ts\`): of its guarded accesses
   * without checks, of its bounds asserts with checks (\`planCheckedRangeVersion\`), or null.
   */
  private rangeVersion(s: Extract<Stmt, { kind: 'for' }>, stepConst: number | undefined): RangeVersion | null {
    if (!this.ctx.rangeVersions || !this.versioning || this.lanesOf) return null
    if (stepConst !== 1 && stepConst !== -1) return null
    const ctx = { writes: (callee: string) => this.program.writes.get(callee) }
    const plan = this.checking ? planCheckedRangeVersion(s, ctx) : planRangeVersion(s, ctx)
    if (plan) this.ctx.rangeVersionLoops++
    return plan
  }

  /**
   * Leaves the enclosing block (\`br_if 0\`) unless every index of the version's groups is in
   * range for every value the loop variable takes, and the loop is long enough to pay for it.
   * The values run from lo to hi (a to b − 1 or b upwards, b + 1 or b to a downwards), span =
   * hi − lo of them after the first. For a group c·v + D + k (k from low to high), p and q are its
   * indices at the two ends in wrapping i32 arithmetic, as the loop would compute them: when both
   * are in [0, len) and its exact spread |c|·span + high − low is below 2³¹, q is p plus that
   * spread without wrapping, so every index between is in range. (An empty loop may pass or
   * fail: it runs nothing either way.) A factor known only at run time (\`RangeGroup.scale\`) is
   * evaluated once, in wrapping i32 arithmetic as the body would; the guarded loop runs unless it
   * is ≥ 0 and its exact spread c·span + high − low, computed in i64, is below 2³¹.
   */
  private rangeCheck(
    version: RangeVersion,
    s: Extract<Stmt, { kind: 'for' }>,
    a: number,
    b: number,
    up: boolean,
  ): void {
    const lo = this.local(I32),
      hi = this.local(I32)
    const end = (x: number, by: number, into: number) => {
      this.get(x)
      if (by) {
        this.i32(by)
        this.op(Op.i32_add)
      }
      this.set(into)
    }
    end(up ? a : b, up || s.inclusive ? 0 : 1, lo)
    end(up ? b : a, up && !s.inclusive ? -1 : 0, hi)
    // too few iterations (a negative span: too many, or none) runs the guarded loop
    const span = () => {
      this.get(hi)
      this.get(lo)
      this.op(Op.i32_sub)
    }
    span()
    this.i32(version.minTrips - 1)
    this.op(Op.i32_lt_s, Op.br_if, 0)
    // every group's spread below 2³¹: span ≤ (2³¹ − 1 − (high − low)) / |c|
    let limit = 2 ** 31 - 1
    for (const g of version.groups)
      if (g.factor !== 0 && !g.scale)
        limit = Math.min(limit, Math.floor((2 ** 31 - 1 - (g.high - g.low)) / Math.abs(g.factor)))
    if (limit < 2 ** 31 - 1) {
      span()
      this.i32(limit)
      this.op(Op.i32_gt_u, Op.br_if, 0)
    }
    const base = this.local(I32)
    for (const g of version.groups) {
      // a factor known at run time: c = factor + scale (wrapping, as the body computes it), c ≥ 0,
      // and c·span + high − low ≤ 2³¹ − 1 exactly (in i64; span ≥ 0 here)
      let factor: number | null = null
      if (g.scale) {
        factor = this.local(I32)
        this.expr(g.scale)
        if (g.factor !== 0) {
          this.i32(g.factor)
          this.op(Op.i32_add)
        }
        this.tee(factor)
        this.i32(0)
        this.op(Op.i32_lt_s, Op.br_if, 0)
        this.get(factor)
        this.op(Op.i64_extend_i32_u)
        span()
        this.op(Op.i64_extend_i32_u, Op.i64_mul)
        this.out.byte(Op.i64_const).s32(2 ** 31 - 1 - (g.high - g.low))
        this.op(Op.i64_gt_s, Op.br_if, 0)
      }
      // the other terms (an expression of names, lengths and their products)
      if (g.terms) this.expr(g.terms)
      else this.i32(0)
      this.set(base)
      const at = (v: number | null, k: number) => {
        this.get(base)
        if (v !== null) {
          this.get(v)
          if (factor !== null) {
            this.get(factor)
            this.op(Op.i32_mul)
          } else if (g.factor !== 1) {
            this.i32(g.factor)
            this.op(Op.i32_mul)
          }
          this.op(Op.i32_add)
        }
        if (k !== 0) {
          this.i32(k)
          this.op(Op.i32_add)
        }
        this.get(this.array(g.array, s.loc).len)
        this.op(Op.i32_ge_u, Op.br_if, 0)
      }
      const still = g.factor === 0 && factor === null
      const rising = factor !== null || g.factor > 0
      at(still ? null : rising ? lo : hi, g.low)
      if (!still || g.high !== g.low) at(still ? null : rising ? hi : lo, g.high)
    }
  }

  /** The loop itself, from its range (locals a, b, st) and its variable's local i. */
  private loopOf(
    s: Extract<Stmt, { kind: 'for' }>,
    a: number,
    b: number,
    st: number,
    i: number,
    stepConst: number | undefined,
  ): void {
    // elements one iteration writes and the next reads, kept in locals (see \`carriedElements\`)
    // (set up below, once the loop is known to run one iteration at a time)
    const savedCarried = this.carried
    let carries: CarriedLocal[] = []
    const body = () =>
      this.scoped(() => {
        this.names.set(s.variable, { kind: 'scalar', local: i, type: 'i32' })
        this.block(s.body)
        for (const c of carries) this.endCarried(s, c)
      })
    const loop = (cond: () => void, next: () => void) => {
      this.op(Op.block, 0x40, Op.loop, 0x40)
      cond()
      this.op(Op.i32_eqz, Op.br_if, 1)
      body()
      next()
      this.op(Op.br, 0, Op.end, Op.end)
    }
    const inc = (d: number) => () => {
      this.get(i)
      this.i32(d)
      this.op(Op.i32_add)
      this.set(i)
    }
    // array elements the loop keeps in locals (only without checks, and only in the counting
    // loops below): loaded before the loop and stored after it when the loop runs at all
    const saved = this.promoted
    const stores: Array<() => void> = []
    const simple = stepConst === 1 || (stepConst === -1 && !s.reverse)
    const els = !this.checking && simple && !this.lanesOf ? promotableElements(s.variable, s.body) : []
    if (els.length) {
      const runs = this.local(I32)
      this.get(a)
      this.get(b)
      this.op(stepConst === 1 ? (s.inclusive ? Op.i32_le_s : Op.i32_lt_s) : s.inclusive ? Op.i32_ge_s : Op.i32_gt_s)
      this.set(runs)
      const map = new Map(saved ?? [])
      const lanes = this.ctx.simd
        ? heldPairs(els, (name) => this.array(name, s.loc).elem)
        : new Map<Promotion, Promotion>()
      const second = new Set(lanes.values())
      for (const p of els) {
        if (second.has(p)) continue
        const { name, element, write } = p
        const arr = this.array(name, s.loc)
        const el = elemInfo(arr.elem, s.loc)
        const next = lanes.get(p)
        const addr = this.local(I32),
          r = this.local(next ? V128 : el.vt)
        this.get(runs)
        this.op(Op.if, 0x40)
        // the address, bounds-checked (unless an assert before the loop checked it) only when
        // the loop runs: a loop of no iterations reads nothing
        this.address(name, element.index, element.loc ?? s.loc, element.inBounds === true, element.array.shown)
        this.set(addr)
        if (next) {
          this.address(
            name,
            next.element.index,
            next.element.loc ?? s.loc,
            next.element.inBounds === true,
            next.element.array.shown,
          )
          this.op(Op.drop)
        }
        this.get(addr)
        if (next) {
          this.simd(OpFd.v128_load)
          this.out.u32(3).u32(0)
        } else {
          this.load(el)
          this.boolByte(el)
        }
        this.set(r)
        this.op(Op.end)
        const m = new Map(map.get(name) ?? [])
        m.set(key(element.index), { local: r, lane: next ? 0 : -1 })
        if (next) m.set(key(next.element.index), { local: r, lane: 1 })
        map.set(name, m)
        if (write) {
          stores.push(() => {
            this.get(runs)
            this.op(Op.if, 0x40)
            this.get(addr)
            this.get(r)
            if (next) {
              this.simd(OpFd.v128_store)
              this.out.u32(3).u32(0)
            } else this.store(el)
            this.op(Op.end)
          })
        }
      }
      this.promoted = map
    }
    // the loops count as JS does, in doubles: no bound wraps around at ±2³¹
    const exitAt = (bound: number) => {
      this.get(i)
      this.get(bound)
      this.op(Op.i32_eq, Op.br_if, 1)
    }
    // iterations two at a time as f64x2 updates first (see \`loop-pairs.ts\`), then the rest
    const paired = stepConst === 1 && !s.inclusive ? this.loopPairs(s) : null
    // or, a map over independent elements, two iterations at a time in lanes (see \`map-lanes.ts\`)
    const mapped = stepConst === 1 && !s.inclusive && !paired ? this.mapLanes(s) : null
    // and one whose body runs a series, four at a time first (see \`lane-quads.ts\`)
    const quads = !!mapped && this.ctx.quads && laneQuads(mapped, this.ctx.quadValues)
    if (quads) this.ctx.laneQuads++
    if (!paired && !mapped) carries = this.carriedLocals(s, stepConst)
    if (stepConst === 1 && !s.reverse) {
      // a, a+1, …, before (or up to) b
      this.get(a)
      this.set(i)
      if (paired) this.pairedIterations(s, paired, i, a, b, false)
      if (quads) this.mapLaneQuads(mapped, i, a, b, false)
      if (mapped) this.mapLaneIterations(mapped, i, a, b, false)
      // the first iteration (i = a, a literal ≥ 1) on its own, where V8 folds \`x * i\` and \`x / i\` at 1 (see
      // \`peel-ones.ts\`); the loop then starts at a + 1, or does not run when the copy did not (not inside a map loop run in
      // lanes: the lane memo guards the whole \`for\`, so the copy's values would be read back by every
      // later iteration)
      if (
        this.ctx.peelOnes &&
        !this.lanesOf &&
        !paired &&
        !mapped &&
        !carries.length &&
        !els.length &&
        peelsFirstIteration(s)
      ) {
        this.get(i)
        this.get(b)
        this.op(s.inclusive ? Op.i32_le_s : Op.i32_lt_s, Op.if, 0x40)
        body()
        inc(1)()
        this.op(Op.end)
        this.ctx.peeledLoops++
      }
      loop(
        () => {
          this.get(i)
          this.get(b)
          this.op(s.inclusive ? Op.i32_le_s : Op.i32_lt_s)
        },
        () => {
          if (s.inclusive) exitAt(b)
          inc(1)()
        },
      )
    } else if (stepConst === 1) {
      // the same values downwards: b (or b-1), …, a
      this.get(b)
      this.set(i)
      if (paired) this.pairedIterations(s, paired, i, a, b, true)
      if (quads) this.mapLaneQuads(mapped, i, a, b, true)
      if (mapped) this.mapLaneIterations(mapped, i, a, b, true)
      if (s.inclusive)
        loop(
          () => {
            this.get(i)
            this.get(a)
            this.op(Op.i32_ge_s)
          },
          () => {
            exitAt(a)
            inc(-1)()
          },
        )
      else {
        this.op(Op.block, 0x40, Op.loop, 0x40)
        this.get(i)
        this.get(a)
        this.op(Op.i32_gt_s, Op.i32_eqz, Op.br_if, 1)
        inc(-1)()
        body()
        this.op(Op.br, 0, Op.end, Op.end)
      }
    } else if (stepConst === -1 && !s.reverse) {
      this.get(a)
      this.set(i)
      loop(
        () => {
          this.get(i)
          this.get(b)
          this.op(s.inclusive ? Op.i32_ge_s : Op.i32_gt_s)
        },
        () => {
          if (s.inclusive) exitAt(b)
          inc(-1)()
        },
      )
    } else if (stepConst === -1) {
      // a downward loop reversed, upwards: b (or b+1), …, a
      this.get(b)
      this.set(i)
      if (s.inclusive)
        loop(
          () => {
            this.get(i)
            this.get(a)
            this.op(Op.i32_le_s)
          },
          () => {
            exitAt(a)
            inc(1)()
          },
        )
      else {
        this.op(Op.block, 0x40, Op.loop, 0x40)
        this.get(i)
        this.get(a)
        this.op(Op.i32_lt_s, Op.i32_eqz, Op.br_if, 1)
        inc(1)()
        body()
        this.op(Op.br, 0, Op.end, Op.end)
      }
    } else {
      // the number of values a, a+st, … before (or up to) b, computed in doubles as JS does and
      // counted in i64 (it may pass 2³¹); the value is a + k·st in wrapping i32, as Math.imul gives
      const n = this.local(I64),
        k = this.local(I64)
      const gap = s.inclusive ? 0 : 1
      const count = (hi: number, lo: number, neg: boolean) => {
        this.get(hi)
        this.op(Op.f64_convert_i32_s)
        this.get(lo)
        this.op(Op.f64_convert_i32_s, Op.f64_sub)
        if (gap) {
          this.f64c(gap)
          this.op(Op.f64_sub)
        }
        this.get(st)
        this.op(Op.f64_convert_i32_s)
        if (neg) this.op(Op.f64_neg)
        this.op(Op.f64_div, Op.prefix_fc)
        this.out.u32(OpFc.i64_trunc_sat_f64_s)
        this.out.byte(Op.i64_const).s32(1)
        this.op(Op.i64_add)
        this.set(n)
      }
      this.out.byte(Op.i64_const).s32(0)
      this.set(n)
      this.get(st)
      this.i32(0)
      this.op(Op.i32_gt_s, Op.if, 0x40)
      this.get(a)
      this.get(b)
      this.op(s.inclusive ? Op.i32_le_s : Op.i32_lt_s, Op.if, 0x40)
      count(b, a, false)
      this.op(Op.end)
      this.op(Op.else)
      this.get(a)
      this.get(b)
      this.op(s.inclusive ? Op.i32_ge_s : Op.i32_gt_s, Op.if, 0x40)
      count(a, b, true)
      this.op(Op.end)
      this.op(Op.end)
      this.out.byte(Op.i64_const).s32(0)
      this.set(k)
      this.op(Op.block, 0x40, Op.loop, 0x40)
      this.get(k)
      this.get(n)
      this.op(Op.i64_lt_s, Op.i32_eqz, Op.br_if, 1)
      // i = a + (reverse ? n - 1 - k : k) * st
      this.get(a)
      if (s.reverse) {
        this.get(n)
        this.out.byte(Op.i64_const).s32(1)
        this.op(Op.i64_sub)
        this.get(k)
        this.op(Op.i64_sub)
      } else this.get(k)
      this.op(Op.i32_wrap_i64)
      this.get(st)
      this.op(Op.i32_mul, Op.i32_add)
      this.set(i)
      body()
      this.get(k)
      this.out.byte(Op.i64_const).s32(1)
      this.op(Op.i64_add)
      this.set(k)
      this.op(Op.br, 0, Op.end, Op.end)
    }
    this.promoted = saved
    for (const st of stores) st()
    this.carried = savedCarried
    // the arrays whose stores the loop dropped, for the reads after it (see \`droppedStores\`)
    const statement = this.versionCopy?.[0] === s ? this.versionCopy[1] : s
    for (const c of carries) {
      if (c.write.dead === undefined) continue
      const m = this.droppedStores.get(statement)!
      const before = m.get(c.write.sample.array)
      const bare = before === undefined || before.bare === c.write.bare ? c.write.bare : 'mixed'
      m.set(c.write.sample.array, { key: c.write.dead, r: c.r, h: c.h, bare })
    }
  }

  /**
   * The locals of loop \`s\`'s carried elements (see \`carriedElements\`), their flags cleared
   * here, before the loop; sets \`carried\` for its body. Not with checks off in lanes, nor for a
   * loop of another step.
   */
  private carriedLocals(s: Extract<Stmt, { kind: 'for' }>, stepConst: number | undefined): CarriedLocal[] {
    if (disabledPasses.has('carried-elements') || this.lanesOf || (stepConst !== 1 && stepConst !== -1)) return []
    const els = carriedElements(
      s,
      this.ctx.effectful,
      new Set(this.f.params.filter((p) => p.type.kind === 'array').map((p) => p.name)),
    )
    if (!els.length) return []
    const reads = new Map(this.carried?.reads ?? [])
    const writes = new Map(this.carried?.writes ?? [])
    const out: CarriedLocal[] = []
    // (the two copies of a loop run in two versions share the locals of its dead stores, whose
    // reads after the loop take them whichever copy ran: see \`rangeVersion\`)
    const loop = this.versionCopy?.[0] === s ? this.versionCopy[1] : s
    const dead = this.deadLoops?.get(loop)
    const dropped = dead && (this.droppedStores.get(loop) ?? new Map())
    if (dropped) this.droppedStores.set(loop, dropped)
    for (const el of els) {
      const last = dead?.get(el.array)
      const shared = last !== undefined ? dropped?.get(el.array) : undefined
      const r = shared?.r ?? this.local(F64),
        h = shared?.h ?? this.local(I32)
      const write: CarriedWrite = {
        w: this.local(F64),
        emitted: 0,
        sample: el,
        ...(last !== undefined ? { dead: last } : {}),
      }
      this.i32(0)
      this.set(h)
      const rm = new Map(reads.get(el.array) ?? [])
      rm.set(el.read, { r, h })
      reads.set(el.array, rm)
      const wm = new Map(writes.get(el.array) ?? [])
      wm.set(el.write, write)
      writes.set(el.array, wm)
      out.push({ r, h, write })
    }
    this.carried = { reads, writes }
    return out
  }

  /** The end of an iteration: the value written moves to the carried local, its flag set. */
  private endCarried(s: Extract<Stmt, { kind: 'for' }>, c: CarriedLocal): void {
    if (c.write.emitted !== 1)
      throw new Error(
        `wasm codegen: the loop-carried element \`${c.write.sample.array}\` of the loop at ${s.loc?.line}:${s.loc?.column} was written ${c.write.emitted} times in one iteration`,
      )
    c.write.emitted = 0
    this.get(c.write.w)
    this.set(c.r)
    this.i32(1)
    this.set(c.h)
  }

  /**
   * The paired plan of a loop of step 1 (see \`loop-pairs.ts\`), when every statement pair of it
   * makes one f64x2 update; only without run-time checks (a failed check must name the element the
   * scalar code would name) and where the engine has SIMD.
   */
  private loopPairs(s: Extract<Stmt, { kind: 'for' }>): PairedLoop | null {
    if (!this.ctx.simd || this.checking || this.lanesOf) return null
    // the affine accesses the loop still guards (it has no range version of its own, say inside
    // a versioned loop's copy): checked once at the start of the paired iterations, which then
    // run unguarded (see \`pairedIterations\`)
    const range = this.ctx.pairRanges
      ? planRangeVersion(s, { writes: (callee) => this.program.writes.get(callee) })
      : null
    // (the guarded copy of the loop's own range version runs only when that same check failed,
    // so its pairs would never run: it is left scalar)
    if (range && s === this.guardedCopy) return null
    // (a downward pair runs iterations i − 2, i − 1 in lanes 0, 1: \`pair\` adds an accumulator's
    // lane 1 first there, see \`pairsDown\`)
    const plan = planLoopPairs(s.variable, range?.body ?? s.body, (name) => this.laneContext.elem(name), true)
    if (!plan) return null
    for (let k = 0; k < plan.body.length; k += 2)
      if (!planPair(plan.body[k]!, plan.body[k + 1]!, this.laneContext)) return null
    if (range) this.ctx.pairRangeLoops++
    return { ...plan, range }
  }

  /**
   * Runs the iterations of a loop of step 1 two at a time while two are left and the plan's guards
   * hold, leaving i at the first iteration not run: upwards from i = a, or downwards from i = b
   * (a pair is then i − 2 and i − 1, in lanes 0 and 1).
   */
  private pairedIterations(
    loop: Extract<Stmt, { kind: 'for' }>,
    plan: PairedLoop,
    i: number,
    a: number,
    b: number,
    down: boolean,
  ): void {
    const variable = loop.variable
    // two iterations left: i < b and i + 1 < b (i + 1 cannot wrap when i < b); downwards i − 1 > a
    const twoLeft = () => {
      this.get(i)
      this.get(down ? a : b)
      this.op(down ? Op.i32_gt_s : Op.i32_lt_s)
      this.get(i)
      this.i32(down ? -1 : 1)
      this.op(Op.i32_add)
      this.get(down ? a : b)
      this.op(down ? Op.i32_gt_s : Op.i32_lt_s)
      this.op(Op.i32_and)
    }
    const bound = () => this.names.set(variable, { kind: 'scalar', local: i, type: 'i32' })
    this.op(Op.block, 0x40)
    twoLeft()
    this.op(Op.i32_eqz, Op.br_if, 0)
    // the indices the pairs would still guard, checked once for the loop's whole range (see
    // \`loopPairs\`): out of range, or too few iterations to pay for the check, and the scalar loop
    // runs them all, guarded, failing where it fails without pairs
    if (plan.range) this.rangeCheck(plan.range, loop, a, b, true)
    // one typed array passed for two parameters (one region): one iteration at a time
    this.breakIfAnyOverlapping(plan.apart)
    // indices p + j and q + j of one array that are neighbours in this run: one iteration at a time
    this.scoped(() => {
      bound()
      for (const [p, q] of plan.guards) {
        const d = this.local(I32)
        this.expr(p)
        this.expr(q)
        this.op(Op.i32_sub)
        this.tee(d)
        this.i32(1)
        this.op(Op.i32_eq)
        this.get(d)
        this.i32(-1)
        this.op(Op.i32_eq, Op.i32_or, Op.br_if, 0)
      }
    })
    this.op(Op.loop, 0x40)
    if (down) {
      this.get(i)
      this.i32(-2)
      this.op(Op.i32_add)
      this.set(i)
    }
    this.scoped(() => {
      bound()
      const saved = this.pairsDown
      this.pairsDown = down
      this.block(plan.body)
      this.pairsDown = saved
    })
    if (!down) {
      this.get(i)
      this.i32(2)
      this.op(Op.i32_add)
      this.set(i)
    }
    twoLeft()
    this.op(Op.br_if, 0)
    this.op(Op.end, Op.end)
  }

  // ---------- map lanes (see `map-lanes.ts`) ----------

  /** The varying values of the map loop being emitted in lanes, by name (undefined outside one). */
  private lanesOf: Map<string, { local: number; type: LaneType }> | undefined
  /**
   * Whether the statements being emitted are a downward loop's paired iterations (lane 0 is
   * iteration i − 2, lane 1 is i − 1, which the loop runs first): a pair that adds into one place
   * twice adds lane 1 first (see \`planLoopPairs\`' accumulators).
   */
  private pairsDown = false
  /** The lanes the statements being emitted run in (an i64x2 mask local), undefined for both. */
  private laneMask: number | undefined
  /**
   * The mask an update blends its new lanes with the old ones by (undefined: none). Inside a
   * varying \`while\` the body's updates run in every lane without a blend (a lane that has left
   * the loop computes values nothing keeps), and each value the loop carries is copied once per
   * iteration into a frozen copy in the lanes that ran it (see \`vstmt\`): the blends then stay off
   * the chain from one iteration to the next. An \`if\` blends by its lanes.
   */
  private blendMask: number | undefined

  /** The map-lanes plan of a loop of step 1, where one applies (without checks, with SIMD). */
  private mapLanes(s: Extract<Stmt, { kind: 'for' }>): MapLanesPlan | null {
    if (!this.ctx.simd || this.checking || this.lanesOf) return null
    const plan = planMapLanes(s.variable, s.body, {
      function: (name, inverse) => (inverse ? this.ctx.inverses?.get(name) : this.program.functions.get(name)),
      elem: (name) => {
        const b = this.names.get(name)
        return b?.kind === 'array' ? b.elem : undefined
      },
      isSwap: (callee) => {
        try {
          const wasm = this.program.registry.bijection(callee).emit?.wasm
          const p = typeof wasm === 'object' ? wasm.permute : undefined
          return !!p && p.length === 2 && p[0] === 1 && p[1] === 0
        } catch {
          return false
        }
      },
    })
    if (plan) {
      this.ctx.mapLanes++
      // (the lanes load the elements of the arrays the loop writes, \`init\` updates included,
      // and update them in locals: see \`ZeroingSite\`)
      for (const n of writtenNames(s)) this.tableReadsOld(n)
    }
    return plan
  }

  /**
   * Runs the iterations of a map loop two at a time in lanes while two are left (and every array
   * the pairs index holds both elements, and no written array overlaps another), leaving i at the
   * first iteration not run: upwards from i = a, or downwards from i = b (then i − 2 and i − 1).
   */
  private mapLaneIterations(plan: MapLanesPlan, i: number, a: number, b: number, down: boolean): void {
    // (every pair in range, otherwise the scalar loop runs and fails where it should)
    this.mapLanesEnter(plan, i, a, b, down, 2)
    // every iteration's block in range: 0 ≤ (u + a)·size and (u + b)·size ≤ len (u the block's
    // base, or 0), in i64 (no overflow)
    for (const bl of plan.blocks) {
      const bound = (x: number) => {
        this.get(x)
        this.op(Op.i64_extend_i32_s)
        if (bl.base !== undefined) {
          this.expr({ kind: 'var', name: bl.base, type: 'i32' } as Expr)
          this.op(Op.i64_extend_i32_s, Op.i64_add)
        }
      }
      if (bl.base !== undefined) {
        bound(a)
        this.op(Op.i64_const, 0x00, Op.i64_lt_s, Op.br_if, 0)
      }
      bound(b)
      this.op(Op.i64_const)
      this.out.s32(bl.size)
      this.op(Op.i64_mul)
      this.get(this.array(bl.array).len)
      this.op(Op.i64_extend_i32_s, Op.i64_gt_s, Op.br_if, 0)
    }
    // one typed array passed for two parameters (one region): one iteration at a time
    const written = [
      ...plan.elements.filter((el) => el.written).map((el) => el.array),
      ...plan.blockWrites,
      ...plan.accumulators,
    ]
    this.mapLanesLoop(plan, i, down, 2, written)
    const savedShared = this.shared
    this.shared = undefined
    this.scoped(() => {
      // each element is loaded just before the first top-level statement that names it and a
      // written one stored just after the last that writes it (see \`elementSpans\`)
      const spans = elementSpans(plan)
      // (elements whose old values nothing reads are not loaded: see \`unreadElements\`)
      const unread = unreadElements(plan, spans)
      const loadsAt = new Map<number, Array<() => void>>(),
        storesAt = new Map<number, Array<() => void>>()
      const schedule = (alias: string, load: () => void, store: (() => void) | undefined) => {
        const span = spans.get(alias)
        if (!span) return
        scheduleAt(loadsAt, span.first, load)
        if (store && span.last >= 0) scheduleAt(storesAt, span.last, store)
      }
      // (the addresses once per pair, before the body: the loads may sit in a branch-free spot later)
      const lanes = this.laneElements(plan, i, 0, spans, unread, loadsAt, storesAt)
      // the two blocks' addresses: array + i·size·8 and array + (i + 1)·size·8
      const bases = new Map<string, [number, number]>()
      for (const bl of plan.blocks) {
        const b0 = this.local(I32),
          b1 = this.local(I32)
        this.get(this.array(bl.array).ptr)
        this.get(i)
        if (bl.base !== undefined) {
          this.expr({ kind: 'var', name: bl.base, type: 'i32' } as Expr)
          this.op(Op.i32_add)
        }
        this.i32(bl.size * 8)
        this.op(Op.i32_mul, Op.i32_add)
        this.tee(b0)
        this.i32(bl.size * 8)
        this.op(Op.i32_add)
        this.set(b1)
        bases.set(`${bl.array}|${bl.offset}`, [b0, b1])
      }
      // the block elements: both lanes loaded into one f64x2 local (in range, checked above);
      // elements c and c + 1 of one block as a pair where both can be (see \`blockElementPairs\`)
      const pairs = blockElementPairs(plan, spans)
      for (const [el, mate] of pairs) {
        const [b0, b1] = bases.get(`${el.array}|${el.offset}`)!
        const v = this.local(V128),
          w = this.local(V128)
        const se = spans.get(el.alias)!,
          sm = spans.get(mate.alias)!
        if (!unread.has(el.alias) || !unread.has(mate.alias))
          scheduleAt(loadsAt, Math.min(se.first, sm.first), () => this.blockPairLoad(b0, b1, el.c, v, w))
        if (el.written) scheduleAt(storesAt, Math.max(se.last, sm.last), () => this.blockPairStore(b0, b1, el.c, v, w))
        lanes.set(el.alias, { local: v, type: 'f64' })
        lanes.set(mate.alias, { local: w, type: 'f64' })
        this.ctx.blockPairs++
      }
      const inPair = new Set(pairs.flat())
      for (const el of plan.blockElements) {
        if (inPair.has(el)) continue
        const [b0, b1] = bases.get(`${el.array}|${el.offset}`)!
        const v = this.local(V128)
        const load = () => {
          this.get(b1)
          this.get(b0)
          this.simd(OpFd.v128_load64_splat)
          this.out.u32(3).u32(8 * el.c)
          this.simd(OpFd.v128_load64_lane)
          this.out
            .u32(3)
            .u32(8 * el.c)
            .byte(1)
          this.set(v)
        }
        const store = () => {
          for (const [lane, base] of [
            [0, b0],
            [1, b1],
          ] as const) {
            this.get(base)
            this.get(v)
            this.simd(OpFd.f64x2_extract_lane)
            this.out.byte(lane)
            this.out
              .byte(Op.f64_store)
              .u32(3)
              .u32(8 * el.c)
          }
        }
        schedule(el.alias, unread.has(el.alias) ? () => {} : load, el.written ? store : undefined)
        lanes.set(el.alias, { local: v, type: 'f64' })
      }
      this.loopVariableLanes(plan, i, 0, lanes)
      this.lanesOf = lanes
      this.laneMemo = new LaneMemo()
      this.laneMask = undefined
      this.blendMask = undefined
      // the top-level statements (\`@unchecked\` blocks opened) in runs that share their common
      // subexpressions, as nested blocks do (see \`block\`); each statement's top-level index
      // places the element loads and stores
      const placed = elementSchedule(plan.body, loadsAt, storesAt)
      try {
        this.laneRuns(plan.body, (s) => {
          placed.before(s)
          this.vstmt(s, plan)
        })
        this.shared = undefined
        placed.end()
      } finally {
        this.lanesOf = undefined
        this.laneMemo = undefined
        this.gathered.clear()
      }
    })
    this.shared = savedShared
    this.mapLanesNext(i, a, b, down, 2)
  }

  /**
   * Runs the iterations of a map loop four at a time while four are left (every array they index
   * holding all four elements, no written array overlapping another): two pairs in two sets of
   * lanes, their series as one joint loop (see \`lane-quads.ts\`), leaving i at the first iteration
   * not run (the pair loop and the scalar loop run the rest): upwards from i = a, or downwards from
   * i = b (then i − 4 … i − 1, whose order does not matter: the iterations share nothing written).
   */
  private mapLaneQuads(plan: MapLanesPlan, i: number, a: number, b: number, down: boolean): void {
    // (every quad in range, otherwise the pairs and the scalar loop run and fail where they should)
    this.mapLanesEnter(plan, i, a, b, down, 4)
    this.mapLanesLoop(
      plan,
      i,
      down,
      4,
      plan.elements.filter((el) => el.written).map((el) => el.array),
    )
    const savedShared = this.shared,
      savedLocals = this.sharedLocals,
      savedLanes = this.laneShared
    this.shared = undefined
    this.scoped(() => {
      const spans = elementSpans(plan)
      const unread = unreadElements(plan, spans)
      const loadsAt = new Map<number, Array<() => void>>(),
        storesAt = new Map<number, Array<() => void>>()
      // each copy: its lanes (elements i + 2c and i + 2c + 1), and its own shared values
      const copies = [0, 1].map((c): LaneCopy => {
        const lanes = this.laneElements(plan, i, 2 * c, spans, unread, loadsAt, storesAt)
        this.loopVariableLanes(plan, i, 2 * c, lanes)
        return {
          lanes,
          locals: new Map<Shared, [number, ValType]>(),
          laneValues: new Map<Shared, [number, 'f64' | 'i32' | 'mask']>(),
        }
      })
      const use = (c: LaneCopy) => {
        this.lanesOf = c.lanes
        this.sharedLocals = c.locals
        this.laneShared = c.laneValues
      }
      use(copies[0]!)
      // (no lane memo: a copy must not read the values the other computed)
      this.laneMemo = undefined
      this.laneMask = undefined
      this.blendMask = undefined
      const placed = elementSchedule(plan.body, loadsAt, storesAt)
      try {
        this.laneRuns(plan.body, (s) => {
          placed.before(s)
          this.planOf = plan
          if (!touchesVarying(s, plan)) {
            // once, for the four lanes
            use(copies[0]!)
            this.vstmtCode(s, plan)
          } else if (varyingWhile(s, plan)) this.jointWhile(s, plan, copies, use)
          else
            for (const c of copies) {
              use(c)
              this.vstmtCode(s, plan)
            }
        })
        this.shared = undefined
        use(copies[0]!)
        placed.end()
      } finally {
        this.lanesOf = undefined
        this.gathered.clear()
      }
    })
    this.shared = savedShared
    this.sharedLocals = savedLocals
    this.laneShared = savedLanes
    this.mapLanesNext(i, a, b, down, 4)
  }

  /**
   * Pushes "at least \`k\` iterations left" of a map loop in lanes: i < b and i + k − 1 < b upwards,
   * i > a and i − (k − 1) > a downwards (two tests, no overflow).
   */
  private lanesLeft(i: number, a: number, b: number, down: boolean, k: number): void {
    const cmp = down ? Op.i32_gt_s : Op.i32_lt_s
    this.get(i)
    this.get(down ? a : b)
    this.op(cmp)
    this.get(i)
    this.i32(down ? 1 - k : k - 1)
    this.op(Op.i32_add)
    this.get(down ? a : b)
    this.op(cmp, Op.i32_and)
  }

  /**
   * Opens a map loop that runs \`k\` iterations at a time (lane pairs, k = 2; lane quads, k = 4):
   * a block left unless \`k\` iterations are left and every element they index is in range
   * (0 ≤ a and b ≤ len, see \`breakUnlessElementsInRange\`); the caller adds its own tests.
   */
  private mapLanesEnter(plan: MapLanesPlan, i: number, a: number, b: number, down: boolean, k: number): void {
    this.mapDown = down
    this.op(Op.block, 0x40)
    this.lanesLeft(i, a, b, down, k)
    this.op(Op.i32_eqz, Op.br_if, 0)
    this.breakUnlessElementsInRange(a, b, plan)
  }

  /**
   * Leaves the block of \`mapLanesEnter\` when two of the arrays \`written\` (and the others the
   * plan indexes) overlap (one iteration at a time then), and opens the loop of \`k\` iterations
   * at a time: downwards, i steps down by k first.
   */
  private mapLanesLoop(plan: MapLanesPlan, i: number, down: boolean, k: number, written: string[]): void {
    this.breakIfAnyOverlapping(overlapPairs(written, plan.arrays))
    this.op(Op.loop, 0x40)
    if (down) this.stepBy(i, -k)
  }

  /** Closes the loop of \`mapLanesLoop\`: upwards, i steps up by k; again while \`k\` are left. */
  private mapLanesNext(i: number, a: number, b: number, down: boolean, k: number): void {
    if (!down) this.stepBy(i, k)
    this.lanesLeft(i, a, b, down, k)
    this.op(Op.br_if, 0)
    this.op(Op.end, Op.end)
  }

  /** i += k. */
  private stepBy(i: number, k: number): void {
    this.get(i)
    this.i32(k)
    this.op(Op.i32_add)
    this.set(i)
  }

  /**
   * The lanes of a map loop's elements at iterations i + first and i + first + 1: each element's
   * address (computed here, once per pass), its load and store scheduled by its span (an element
   * whose old value nothing reads is not loaded, see \`unreadElements\`), and its v128 local; then
   * the loop variable's lanes where the body reads it as a value (see \`loopVariableLanes\`).
   */
  private laneElements(
    plan: MapLanesPlan,
    i: number,
    first: number,
    spans: ReturnType<typeof elementSpans>,
    unread: ReadonlySet<string>,
    loadsAt: Map<number, Array<() => void>>,
    storesAt: Map<number, Array<() => void>>,
  ): Map<string, { local: number; type: LaneType }> {
    const lanes = new Map<string, { local: number; type: LaneType }>()
    for (const el of plan.elements) {
      const arr = this.array(el.array)
      const addr = this.local(I32),
        v = this.local(V128)
      this.get(arr.ptr)
      this.get(i)
      if (first) {
        this.i32(first)
        this.op(Op.i32_add)
      }
      this.i32(el.elem === 'f64' ? 3 : 2)
      this.op(Op.i32_shl, Op.i32_add)
      this.set(addr)
      const span = spans.get(el.alias)
      if (span) {
        if (!unread.has(el.alias)) scheduleAt(loadsAt, span.first, () => this.laneElementLoad(el.elem, addr, v))
        if (el.written && span.last >= 0) scheduleAt(storesAt, span.last, () => this.laneElementStore(el.elem, addr, v))
      }
      lanes.set(el.alias, { local: v, type: el.elem })
    }
    return lanes
  }

  /** Where the body reads the loop variable as a value: its lanes i + first and i + first + 1, in \`lanes\`. */
  private loopVariableLanes(
    plan: MapLanesPlan,
    i: number,
    first: number,
    lanes: Map<string, { local: number; type: LaneType }>,
  ): void {
    if (!plan.varying.has(plan.variable)) return
    const v = this.local(V128)
    for (const lane of [0, 1]) {
      this.get(i)
      if (first + lane) {
        this.i32(first + lane)
        this.op(Op.i32_add)
      }
      this.op(Op.i64_extend_i32_s)
      if (lane) {
        this.simd(OpFd.i64x2_replace_lane)
        this.out.byte(1)
      } else this.simd(OpFd.i64x2_splat)
    }
    this.set(v)
    lanes.set(plan.variable, { local: v, type: 'i32' })
  }

  /** Loads both lanes of a map loop's element at \`addr\` into the local \`v\` (f64, or i32 sign-extended in i64 lanes). */
  private laneElementLoad(elem: LaneType, addr: number, v: number): void {
    this.get(addr)
    if (elem === 'f64') {
      this.simd(OpFd.v128_load)
      this.out.u32(3).u32(0)
    } else {
      this.simd(OpFd.i64x2_load32x2_s)
      this.out.u32(2).u32(0)
    }
    this.set(v)
  }

  /** Stores both lanes of the local \`v\` to a map loop's element at \`addr\` (see \`laneElementLoad\`). */
  private laneElementStore(elem: LaneType, addr: number, v: number): void {
    if (elem === 'f64') {
      this.get(addr)
      this.get(v)
      this.simd(OpFd.v128_store)
      this.out.u32(3).u32(0)
      return
    }
    for (const lane of [0, 1]) {
      this.get(addr)
      this.get(v)
      this.simd(OpFd.i64x2_extract_lane)
      this.out.byte(lane)
      this.op(Op.i32_wrap_i64)
      this.out
        .byte(Op.i32_store)
        .u32(2)
        .u32(4 * lane)
    }
  }

  /**
   * A top-level varying \`while\` of lane quads: the two copies' loops as one (see \`lane-quads.ts\`).
   * Each copy keeps what the pair loop keeps (its lanes still running, its loop-uniform scalars,
   * the frozen copies of what the loop carries); an iteration runs the body of each copy with a
   * lane still running, under that copy's mask, and the loop ends when no lane of either runs.
   */
  private jointWhile(
    s: Extract<Stmt, { kind: 'while' }>,
    plan: MapLanesPlan,
    copies: LaneCopy[],
    use: (c: LaneCopy) => void,
  ): void {
    const after = readAfter(plan, s)
    const names = [...loopUniform(plan, s)]
    const isUniform = new Set(names)
    const inner: MapLanesPlan = isUniform.size
      ? { ...plan, varying: new Map([...plan.varying].filter(([n]) => !isUniform.has(n))) }
      : plan
    const state = copies.map((c) => {
      use(c)
      const act = this.local(V128)
      this.allLanes()
      this.set(act)
      const uniform = names.map((n) => {
        const v = c.lanes.get(n)!
        const scalar = this.local(v.type === 'f64' ? F64 : I32)
        this.get(v.local)
        if (v.type === 'f64') this.simd(OpFd.f64x2_extract_lane)
        else this.simd(OpFd.i64x2_extract_lane)
        this.out.byte(0)
        if (v.type === 'i32') this.op(Op.i32_wrap_i64)
        this.set(scalar)
        return { name: n, v, scalar }
      })
      if (uniform.length) this.ctx.loopUniform += uniform.length
      const carried = [...writtenNames(s)].flatMap((n) => {
        const v = c.lanes.get(n)
        if (!v || (after && !after.has(n))) return []
        const frozen = this.local(V128)
        this.get(v.local)
        this.set(frozen)
        return [[v.local, frozen, uniform.find((u) => u.name === n)] as const]
      })
      for (const u of uniform) c.lanes.delete(u.name)
      return { copy: c, act, runs: this.local(I32), uniform, carried }
    })
    // each copy's loop-uniform names as its scalars while its code is emitted
    const enter = (st: (typeof state)[number]) => {
      use(st.copy)
      for (const u of st.uniform) this.names.set(u.name, { kind: 'scalar', local: u.scalar, type: u.v.type })
    }
    this.planOf = inner
    this.op(Op.block, 0x40, Op.loop, 0x40)
    for (const st of state) {
      enter(st)
      this.get(st.act)
      this.vmask(s.pre)
      this.simd(OpFd.v128_and)
      this.tee(st.act)
      this.simd(OpFd.v128_any_true)
      this.set(st.runs)
    }
    this.get(state[0]!.runs)
    this.get(state[1]!.runs)
    this.op(Op.i32_or, Op.i32_eqz, Op.br_if, 1)
    for (const st of state) {
      enter(st)
      this.get(st.runs)
      this.op(Op.if, 0x40)
      this.laneMask = st.act
      this.blendMask = undefined
      this.scoped(() => this.block(s.body))
      this.laneMask = undefined
      // the lanes that ran this iteration keep what it computed
      for (const [v, frozen, u] of st.carried) {
        if (u) this.splatScalar(u.scalar, u.v.type)
        else this.get(v)
        this.get(frozen)
        this.get(st.act)
        this.simd(OpFd.v128_bitselect)
        this.set(frozen)
      }
      this.op(Op.end)
    }
    this.op(Op.br, 0, Op.end, Op.end)
    this.planOf = plan
    for (const st of state) {
      use(st.copy)
      for (const u of st.uniform) {
        this.names.delete(u.name)
        st.copy.lanes.set(u.name, u.v)
      }
      for (const [v, frozen] of st.carried) {
        this.get(frozen)
        this.set(v)
      }
    }
  }

  /**
   * Loads elements c and c + 1 of a pair's two blocks (at byte addresses b0 and b1) into the
   * f64x2 locals v (element c of both blocks) and w (element c + 1): one v128 load per block and
   * two shuffles, instead of a load and a lane insert per element and block.
   */
  private blockPairLoad(b0: number, b1: number, c: number, v: number, w: number): void {
    const row0 = this.local(V128)
    this.get(b0)
    this.simd(OpFd.v128_load)
    this.out.u32(3).u32(8 * c)
    this.set(row0)
    const row1 = this.local(V128)
    this.get(b1)
    this.simd(OpFd.v128_load)
    this.out.u32(3).u32(8 * c)
    this.set(row1)
    for (const [lanes, to] of [
      [LOW_LANES, v],
      [HIGH_LANES, w],
    ] as const) {
      this.get(row0)
      this.get(row1)
      this.simd(OpFd.i8x16_shuffle)
      for (const k of lanes) this.out.byte(k)
      this.set(to)
    }
  }

  /** Stores the pair \`blockPairLoad\` loaded back: each block's elements c and c + 1 by one v128 store. */
  private blockPairStore(b0: number, b1: number, c: number, v: number, w: number): void {
    for (const [lanes, base] of [
      [LOW_LANES, b0],
      [HIGH_LANES, b1],
    ] as const) {
      this.get(base)
      this.get(v)
      this.get(w)
      this.simd(OpFd.i8x16_shuffle)
      for (const k of lanes) this.out.byte(k)
      this.simd(OpFd.v128_store)
      this.out.u32(3).u32(8 * c)
    }
  }

  private planOf: MapLanesPlan | undefined
  /** Whether the map loop being emitted runs downwards (its pair is i − 2, i − 1 in lanes 0, 1). */
  private mapDown = false

  /**
   * Whether a statement of a map loop's body must run in lanes: it reads or writes a varying name,
   * or it writes (at any depth) an accumulator or a block, which each lane updates for itself even
   * by a uniform value (run once for the pair, \`q[0] += 1.0\` in a uniform \`while\` added once
   * where the two iterations add twice).
   */
  private touchesVarying(s: Stmt, plan: MapLanesPlan): boolean {
    for (const n of writtenNames(s))
      if (plan.varying.has(n) || plan.accumulators.includes(n) || plan.blockWrites.includes(n)) return true
    let found = false
    const visit = (x: Stmt) => {
      if (found) return
      if (stmtExprs(x).some((e) => readsVarying(e, plan.varying))) found = true
      else if (x.kind === 'dealloc' && plan.varying.has(x.name)) found = true
      else if (x.kind === 'if') [...x.then, ...x.else].forEach(visit)
      else if (x.kind === 'while' || x.kind === 'for' || x.kind === 'unchecked') x.body.forEach(visit)
    }
    visit(s)
    return found
  }

  /**
   * An update of an element of each iteration's own block (see \`blockWrites\` of the plan), outside
   * varying control: the value in lanes, then lane by lane the scalar update (lane 0 first, as the
   * scalar loop runs iteration i first; the two write different elements).
   */
  private blockWrite(s: Extract<Stmt, { kind: 'update' }>): void {
    // (the old value is read, \`init\` or not: see \`ZeroingSite\`)
    if (s.target.kind === 'index') this.tableReadsOld(s.target.array.name)
    const lanes = this.lanesOf!
    const v = this.local(V128)
    this.vvalue(s.value, 'f64')
    this.set(v)
    // (an accumulation into one place of both lanes adds them in the scalar loop's order: lane 1
    // first in a downward loop, whose pair is i − 2 and i − 1)
    const names = [...reads(s.target as Expr, new Set())].filter((n) => lanes.has(n))
    for (const lane of this.mapDown ? [1, 0] : [0, 1]) {
      this.scoped(() => {
        for (const n of names) {
          const x = lanes.get(n)!
          const l = this.local(x.type === 'f64' ? F64 : I32)
          this.get(x.local)
          if (x.type === 'f64') this.simd(OpFd.f64x2_extract_lane)
          else this.simd(OpFd.i64x2_extract_lane)
          this.out.byte(lane)
          if (x.type === 'i32') this.op(Op.i32_wrap_i64)
          this.set(l)
          this.names.set(n, { kind: 'scalar', local: l, type: x.type })
        }
        const shared = this.shared
        this.lanesOf = undefined
        this.shared = undefined
        try {
          this.modify(s.target, 'f64', true, () => {
            this.get(v)
            this.simd(OpFd.f64x2_extract_lane)
            this.out.byte(lane)
            this.op(s.op === '+=' ? Op.f64_add : Op.f64_sub)
          })
        } finally {
          this.lanesOf = lanes
          this.shared = shared
        }
      })
    }
  }

  /**
   * Emits a statement of a map loop's body in lanes, keeping the lanes code's record of writes and
   * guards (see \`lane-memo.ts\`): a simple update, allocation or deallocation logs what it writes;
   * a varying \`if\` guards each of its branches (see \`vstmtCode\`) and its statements log their own
   * writes; anything else runs under an opaque guard and then logs every name it writes (any name,
   * for a call or a stack operation).
   */
  private vstmt(s: Stmt, plan: MapLanesPlan = this.planOf!): void {
    const memo = this.laneMemo
    if (!memo) return this.vstmtCode(s, plan)
    switch (s.kind) {
      case 'update':
        this.vstmtCode(s, plan)
        memo.wrote(s.target.kind === 'var' || s.target.kind === 'index' ? writtenNames(s) : '*')
        return
      case 'alloc':
      case 'dealloc':
        this.vstmtCode(s, plan)
        memo.wrote([s.name])
        return
      case 'assert':
      case 'unchecked':
        return this.vstmtCode(s, plan)
      case 'if':
        if (this.touchesVarying(s, plan) && readsVarying(s.pre, plan.varying)) return this.vstmtCode(s, plan)
        break
    }
    memo.under({ kind: 'opaque' }, () => this.vstmtCode(s, plan))
    memo.wrote(s.kind === 'if' || s.kind === 'while' || s.kind === 'for' ? writtenNames(s) : '*')
  }

  private vstmtCode(s: Stmt, plan: MapLanesPlan): void {
    this.planOf = plan
    if (!this.touchesVarying(s, plan)) return this.stmt(s)
    switch (s.kind) {
      case 'update': {
        if (s.target.kind === 'index') return this.blockWrite(s)
        const name = (s.target as { name: string }).name
        const x = this.lanesOf!.get(name)!
        this.get(x.local)
        this.vvalue(s.value, x.type)
        if (x.type === 'f64') {
          const ops = { '+=': OpFd.f64x2_add, '-=': OpFd.f64x2_sub, '*=': OpFd.f64x2_mul, '/=': OpFd.f64x2_div }
          const o = ops[s.op as keyof typeof ops]
          if (o === undefined) throw new Error(`wasm codegen: \`${s.op}\` on f64 lanes`)
          this.simd(o)
        } else if (s.op === '^=') this.simd(OpFd.v128_xor)
        else if (s.op === '+=' || s.op === '-=') {
          this.simd(s.op === '+=' ? OpFd.i64x2_add : OpFd.i64x2_sub)
          this.wrapLanes()
        } else throw new Error(`wasm codegen: \`${s.op}\` on i32 lanes`)
        this.blend(x.local)
        this.set(x.local)
        return
      }
      case 'alloc': {
        const t = plan.varying.get(s.name)!
        const l = this.local(V128)
        this.vvalue(s.value as Expr, t)
        this.set(l)
        this.lanesOf!.set(s.name, { local: l, type: t })
        for (const g of plan.gathers) if (g.offset === s.name) this.gatherBases(g, l)
        return
      }
      case 'dealloc':
        // (without checks a scalar's deallocation does nothing)
        this.names.delete(s.name)
        return
      case 'callstmt': {
        // SWAP (the planner admits no other call): the active lanes exchange
        const [p, q] = s.args.map((a) => this.lanesOf!.get((a as { name: string }).name)!)
        const m = this.blendMask
        if (m === undefined) {
          this.get(p!.local)
          this.get(q!.local)
          this.set(p!.local)
          this.set(q!.local)
          return
        }
        const t = this.local(V128)
        for (const [x, y] of [
          [q!, p!],
          [p!, q!],
        ] as const) {
          this.get(x.local)
          this.get(y.local)
          this.get(m)
          this.simd(OpFd.v128_bitselect)
        }
        this.set(t)
        this.set(p!.local)
        this.get(t)
        this.set(q!.local)
        return
      }
      case 'if': {
        if (!readsVarying(s.pre, plan.varying)) return this.ifStmt(s)
        const c = this.local(V128)
        this.vmask(s.pre)
        this.set(c)
        const saved = this.laneMask
        // (each emission of a branch under its guard, see \`lane-memo.ts\`)
        const memo = this.laneMemo
        const cond = memo?.condition(s.pre) ?? ''
        const guarded = (negated: boolean, both: boolean, f: () => void) =>
          memo ? memo.under({ kind: 'branch', cond, negated, both, outermost: saved === undefined }, f) : f()
        for (const [body, negate] of [
          [s.then, false],
          [s.else, true],
        ] as const) {
          if (!body.length) continue
          const m = this.local(V128)
          if (saved === undefined) {
            this.get(c)
            if (negate) this.simd(OpFd.v128_not)
          } else {
            this.get(saved)
            this.get(c)
            this.simd(negate ? OpFd.v128_andnot : OpFd.v128_and)
          }
          this.tee(m)
          this.simd(OpFd.v128_any_true)
          this.op(Op.if, 0x40)
          const savedBlend = this.blendMask
          // where both lanes take the branch (the common case of a rare branch), it runs without
          // masks and blends; else under the mask
          this.get(m)
          this.simd(OpFd.i64x2_all_true)
          this.op(Op.if, 0x40)
          this.laneMask = undefined
          this.blendMask = undefined
          guarded(negate, true, () => this.scoped(() => this.block(body)))
          this.op(Op.else)
          this.laneMask = m
          this.blendMask = m
          guarded(negate, false, () => this.scoped(() => this.block(body)))
          this.laneMask = saved
          this.blendMask = savedBlend
          this.op(Op.end, Op.end)
        }
        return
      }
      case 'while': {
        if (!readsVarying(s.pre, plan.varying)) return this.whileStmt(s)
        // the lanes still running: a lane leaves for good when its condition first fails
        const act = this.local(V128)
        const saved = this.laneMask,
          savedBlend = this.blendMask
        if (saved === undefined) this.allLanes()
        else this.get(saved)
        this.set(act)
        // the values the loop carries (written in it, bound before it), each with a frozen copy
        // (only those read after it: the others' lanes are dead once the loop is done)
        const after = readAfter(plan, s)
        // the loop-uniform names (see \`loopUniform\`): one scalar local each while the loop runs,
        // set from lane 0 at its entry
        const uniform = [...loopUniform(plan, s)].map((n) => {
          const v = this.lanesOf!.get(n)!
          const scalar = this.local(v.type === 'f64' ? F64 : I32)
          this.get(v.local)
          if (v.type === 'f64') this.simd(OpFd.f64x2_extract_lane)
          else this.simd(OpFd.i64x2_extract_lane)
          this.out.byte(0)
          if (v.type === 'i32') this.op(Op.i32_wrap_i64)
          this.set(scalar)
          return { name: n, v, scalar }
        })
        const isUniform = new Set(uniform.map((u) => u.name))
        if (uniform.length) this.ctx.loopUniform += uniform.length
        const carried = [...writtenNames(s)].flatMap((n) => {
          const v = this.lanesOf!.get(n)
          if (!v || (after && !after.has(n))) return []
          const frozen = this.local(V128)
          this.get(v.local)
          this.set(frozen)
          return [[v.local, frozen, uniform.find((u) => u.name === n)] as const]
        })
        const inner: MapLanesPlan = isUniform.size
          ? { ...plan, varying: new Map([...plan.varying].filter(([n]) => !isUniform.has(n))) }
          : plan
        for (const u of uniform) {
          this.lanesOf!.delete(u.name)
          this.names.set(u.name, { kind: 'scalar', local: u.scalar, type: u.v.type })
        }
        this.planOf = inner
        this.op(Op.block, 0x40, Op.loop, 0x40)
        this.get(act)
        this.vmask(s.pre)
        this.simd(OpFd.v128_and)
        this.tee(act)
        this.simd(OpFd.v128_any_true)
        this.op(Op.i32_eqz, Op.br_if, 1)
        this.laneMask = act
        this.blendMask = undefined
        this.scoped(() => this.block(s.body))
        this.laneMask = saved
        this.blendMask = savedBlend
        // the lanes that ran this iteration keep what it computed
        for (const [v, frozen, u] of carried) {
          if (u) this.splatScalar(u.scalar, u.v.type)
          else this.get(v)
          this.get(frozen)
          this.get(act)
          this.simd(OpFd.v128_bitselect)
          this.set(frozen)
        }
        this.op(Op.br, 0, Op.end, Op.end)
        this.planOf = plan
        for (const u of uniform) {
          this.names.delete(u.name)
          this.lanesOf!.set(u.name, u.v)
        }
        for (const [v, frozen] of carried) {
          this.get(frozen)
          this.set(v)
        }
        return
      }
      case 'for':
        return this.forStmt(s)
      case 'unchecked':
        this.unchecked++
        this.scoped(() => this.block(s.body))
        this.unchecked--
        return
      default:
        throw new Error(`wasm codegen: \`${s.kind}\` in map lanes`)
    }
  }

  /** Pushes a scalar local splat to both lanes (an i32 sign-extended in its i64 lanes). */
  private splatScalar(local: number, type: LaneType): void {
    this.get(local)
    if (type === 'f64') this.simd(OpFd.f64x2_splat)
    else {
      this.op(Op.i64_extend_i32_s)
      this.simd(OpFd.i64x2_splat)
    }
  }

  /** An i64x2 of all ones (both lanes active). */
  private allLanes(): void {
    this.simd(OpFd.v128_const)
    for (let k = 0; k < 16; k++) this.out.byte(0xff)
  }

  /** Keeps the old value (local `old`) in the lanes outside the current mask. */
  private blend(old: number): void {
    if (this.blendMask === undefined) return
    this.get(old)
    this.get(this.blendMask)
    this.simd(OpFd.v128_bitselect)
  }

  /** Wraps i64 lanes to the sign-extended i32 value (i32 arithmetic wraps). */
  private wrapLanes(): void {
    // the low halves side by side, sign-extended: two instructions on x64 (`pshufd`,
    // `pmovsxdq`) where `i64x2.shr_s` without AVX-512 is emulated by six
    const v = this.local(V128)
    this.tee(v)
    this.get(v)
    this.simd(OpFd.i8x16_shuffle)
    for (const k of [0, 1, 2, 3, 8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11]) this.out.byte(k)
    this.simd(OpFd.i64x2_extend_low_i32x4_s)
  }

  /** Pushes the lanes of `e` as type `t` (f64 or i32 lanes). */
  private vvalue(e: Expr, t: LaneType): void {
    const got = this.vexpr(e)
    if (got === t) return
    if (got === 'i32' && t === 'f64') return this.lanesToF64()
    throw new Error(`wasm codegen: lanes of ${got} where ${t} is wanted`)
  }

  /** Pushes the i64x2 mask of a condition. */
  private vmask(e: Expr): void {
    const got = this.vexpr(e)
    if (got !== 'mask') throw new Error('wasm codegen: a condition in lanes is not a mask')
  }

  /** f64 lanes of i32 ones (sign-extended in i64 lanes): the low halves, converted. */
  private lanesToF64(): void {
    const v = this.local(V128)
    this.tee(v)
    this.get(v)
    this.simd(OpFd.i8x16_shuffle)
    for (const k of [0, 1, 2, 3, 8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11]) this.out.byte(k)
    this.simd(OpFd.f64x2_convert_low_i32x4_s)
  }

  /**
   * Pushes the lanes of an expression of a map loop: f64 lanes, i32 lanes (sign-extended in i64
   * lanes) or a mask (a bool). Each lane is what the scalar code computes: the arithmetic with an
   * f64x2 or i64x2 instruction where one rounds as the scalar one does, else the scalar code once
   * per lane.
   */
  private vexpr(e: Expr): 'f64' | 'i32' | 'mask' {
    const sh = this.shared?.get(e)
    if (!sh) return this.vexprRecalled(e)
    const have = this.laneShared.get(sh)
    if (have) {
      this.get(have[0])
      return have[1]
    }
    const t = this.vexprRecalled(e)
    const l = this.local(V128)
    this.tee(l)
    this.laneShared.set(sh, [l, t])
    return t
  }

  /**
   * The lanes of a costly value (an f64 element, division or square root, or a call of an f64x2
   * routine of the module) that an earlier branch computed where this code runs (see \`lane-memo.ts\`), read
   * from its local; else computed and recorded for later branches.
   */
  private vexprRecalled(e: Expr): 'f64' | 'i32' | 'mask' {
    const memo = this.laneMemo
    const costly =
      e.type === 'f64' &&
      ((e.kind === 'binary' && e.op === '/') ||
        (e.kind === 'index' && this.onlyRead(e.array.name)) ||
        (e.kind === 'call' &&
          e.callee !== 'sin' &&
          e.callee !== 'cos' &&
          (this.laneContext.native(e) === 'sqrt' || this.laneContext.vectorMath(e) !== undefined)))
    if (!memo || !costly) return this.vexprCode(e)
    const known = memo.find('value', e)
    if (known && 'value' in known) {
      this.ctx.laneValuesReused++
      this.get(known.value)
      return known.type
    }
    const t = this.vexprCode(e)
    const l = this.local(V128)
    this.tee(l)
    memo.record('value', e, { value: l, type: t })
    return t
  }

  /**
   * Whether the map loop being emitted only reads \`array\` where its body names it (no element
   * held in an alias and stored after the body, no block or accumulator written through it), so
   * that every write of it is an update of the array by name (see \`lane-memo.ts\`).
   */
  private onlyRead(array: string): boolean {
    const plan = this.planOf
    if (!plan) return false
    return (
      !plan.elements.some((el) => el.array === array && el.written) &&
      !plan.blockElements.some((el) => el.array === array && el.written) &&
      !plan.blockWrites.includes(array) &&
      !plan.accumulators.includes(array)
    )
  }

  /** The lanes of the shared subexpressions already computed (see \`vexpr\`; one map per copy of lane quads). */
  private laneShared = new Map<Shared, [number, 'f64' | 'i32' | 'mask']>()

  /** The sin/cos calls of the lanes run being emitted that one \`__sincos_f64x2\` computes (see \`laneRuns\`). */
  private laneSincos: Map<Expr, SincosPair> | undefined
  /** The sin/cos values of the lanes code being emitted that later branches may read (see \`lane-memo.ts\`). */
  private laneMemo: LaneMemo<{ sin: number; cos: number } | { value: number; type: 'f64' | 'i32' | 'mask' }> | undefined

  /**
   * The sin/cos pairs of each item's run (see \`sincosPairs\`): one map for each run of
   * consecutive items with a shared-values map, given to every item of the run; none outside runs.
   */
  private runSincos(
    items: ReadonlyArray<[Stmt, number, Map<Expr, Shared> | undefined]>,
  ): Array<Map<Expr, SincosPair> | undefined> {
    const pairs: Array<Map<Expr, SincosPair> | undefined> = items.map(() => undefined)
    const standard = (name: 'sin' | 'cos') =>
      inModule(this.program.registry.findPrimitive(name), name, this.ctx.mathChoice)
    for (let i = 0; i < items.length; ) {
      if (!items[i]![2]) {
        i++
        continue
      }
      let j = i
      while (j < items.length && items[j]![2]) j++
      const run = sincosPairs(
        items.slice(i, j).map((x) => x[0]),
        standard,
      )
      for (let k = i; k < j; k++) pairs[k] = run
      i = j
    }
    return pairs
  }

  /**
   * Emits the statements of a map loop's body in lanes (\`@unchecked\` blocks opened) with the
   * state of their run: the common subexpressions it shares (\`shared\`, see \`forEachStatement\`)
   * and its sin/cos pairs (\`laneSincos\`, see \`sincosPairs\`; fresh pairs on every emission, as a
   * branch's body is emitted once with masks and once without).
   */
  private laneRuns(body: Stmt[], visit: (s: Stmt) => void): void {
    const items: Array<[Stmt, number, Map<Expr, Shared> | undefined]> = []
    forEachStatement(body, (s, unchecked, shared) => items.push([s, unchecked, shared]), this.tabulatedValues)
    const pairs = this.runSincos(items)
    const savedSincos = this.laneSincos
    try {
      items.forEach(([s, unchecked, shared], k) => {
        this.shared = shared
        this.laneSincos = pairs[k]
        this.unchecked += unchecked
        visit(s)
        this.unchecked -= unchecked
      })
    } finally {
      this.laneSincos = savedSincos
    }
  }

  /**
   * Pushes sin or cos of a varying f64 in lanes, both lanes by one call of \`__sincos_f64x2\` (the
   * scalar routines' doubles, see \`math/sincos-f64x2.ts\`), where the scalar code calls the
   * module's routine; the other of the two is kept for a call of the same value in the run
   * (\`laneSincos\`). Returns false where the scalar code calls out.
   */
  private laneTrig(e: Extract<Expr, { kind: 'call' }>): boolean {
    const name = e.callee as 'sin' | 'cos'
    if (!inModule(this.program.registry.findPrimitive(name), name, this.ctx.mathChoice)) return false
    const pair = this.laneSincos?.get(e)
    if (!pair?.locals) {
      const arg = e.args[0]!
      // (computed by an earlier branch that ran wherever this code runs: see \`lane-memo.ts\`)
      const known = this.laneMemo?.find('sincos', arg)
      if (known && 'sin' in known) {
        this.ctx.laneSincosReused++
        if (pair) pair.locals = known
        this.get(name === 'sin' ? known.sin : known.cos)
        return true
      }
      this.vvalue(arg, 'f64')
      this.callDefined(this.ctx.math.use('__sincos_f64x2'))
      const c = this.local(V128),
        sn = this.local(V128)
      this.set(c)
      this.set(sn)
      if (pair) pair.locals = { sin: sn, cos: c }
      this.laneMemo?.record('sincos', arg, { sin: sn, cos: c })
      this.get(name === 'sin' ? sn : c)
      return true
    }
    this.get(name === 'sin' ? pair.locals.sin : pair.locals.cos)
    return true
  }

  private vexprCode(e: Expr): 'f64' | 'i32' | 'mask' {
    const lanes = this.lanesOf!
    if (e.kind === 'num' && (e.type === 'f64' || e.type === 'i32')) {
      // a constant: both lanes at once
      const bytes = new Uint8Array(16)
      const view = new DataView(bytes.buffer)
      for (const lane of [0, 8])
        if (e.type === 'f64') view.setFloat64(lane, e.value, true)
        else view.setBigInt64(lane, BigInt(e.value | 0), true)
      this.simd(OpFd.v128_const)
      for (const b of bytes) this.out.byte(b)
      return e.type as LaneType
    }
    if (!readsVarying(e, lanes) && !convertsInLanes(e)) {
      const t = this.expr(e)
      if (e.type === 'bool') {
        this.op(Op.i64_extend_i32_u)
        this.simd(OpFd.i64x2_splat)
        this.simd(OpFd.i64x2_neg)
        return 'mask'
      }
      if (t === F64) {
        this.simd(OpFd.f64x2_splat)
        return 'f64'
      }
      if (t === I32) {
        this.op(Op.i64_extend_i32_s)
        this.simd(OpFd.i64x2_splat)
        return 'i32'
      }
      throw new Error('wasm codegen: an f32 value in lanes')
    }
    const kind = (x: Expr) => (x.type === 'f64' ? 'f64' : x.type === 'i32' ? 'i32' : x.type === 'bool' ? 'bool' : '')
    switch (e.kind) {
      case 'var': {
        const v = lanes.get(e.name)!
        this.get(v.local)
        return v.type
      }
      case 'unary':
        if (e.op === '!' && kind(e.arg) === 'bool') {
          this.vmask(e.arg)
          this.simd(OpFd.v128_not)
          return 'mask'
        }
        if (e.op === '-' && kind(e.arg) === 'f64' && e.type === 'f64') {
          this.vvalue(e.arg, 'f64')
          this.simd(OpFd.f64x2_neg)
          return 'f64'
        }
        break
      case 'binary': {
        const l = kind(e.left),
          r = kind(e.right)
        const arith = { '+': 0, '-': 1, '*': 2, '/': 3 } as Record<string, number>
        if (e.type === 'f64' && l === 'f64' && r === 'f64' && e.op in arith) {
          this.vvalue(e.left, 'f64')
          this.vvalue(e.right, 'f64')
          this.simd([OpFd.f64x2_add, OpFd.f64x2_sub, OpFd.f64x2_mul, OpFd.f64x2_div][arith[e.op]!]!)
          return 'f64'
        }
        if (e.type === 'f64' && l === 'f64' && e.op === '**' && e.right.kind === 'num' && e.right.value === 2) {
          // x ** 2 is x · x, as the scalar code computes it
          this.vvalue(e.left, 'f64')
          const x = this.local(V128)
          this.tee(x)
          this.get(x)
          this.simd(OpFd.f64x2_mul)
          return 'f64'
        }
        if (
          e.type === 'f64' &&
          l === 'f64' &&
          e.op === '**' &&
          e.right.kind !== 'num' &&
          (r === 'f64' || r === 'i32') &&
          !readsVarying(e.right, lanes)
        ) {
          this.uniformPower(e)
          return 'f64'
        }
        if (e.type === 'i32' && l === 'i32' && r === 'i32' && (e.op === '+' || e.op === '-' || e.op === '*')) {
          this.vvalue(e.left, 'i32')
          this.vvalue(e.right, 'i32')
          // (a product's low 32 bits by `i32x4.mul` of the low halves, one x64 instruction where
          // `i64x2.mul` without AVX-512 is emulated by several; the wrap keeps only those bits)
          this.simd(e.op === '+' ? OpFd.i64x2_add : e.op === '-' ? OpFd.i64x2_sub : OpFd.i32x4_mul)
          this.wrapLanes()
          return 'i32'
        }
        const cmp = ['<', '>', '<=', '>=', '==', '!='].indexOf(e.op)
        if (cmp >= 0 && e.type === 'bool' && l === r && (l === 'f64' || l === 'i32')) {
          this.vvalue(e.left, l)
          this.vvalue(e.right, l)
          const ops =
            l === 'f64'
              ? [OpFd.f64x2_lt, OpFd.f64x2_gt, OpFd.f64x2_le, OpFd.f64x2_ge, OpFd.f64x2_eq, OpFd.f64x2_ne]
              : [OpFd.i64x2_lt_s, OpFd.i64x2_gt_s, OpFd.i64x2_le_s, OpFd.i64x2_ge_s, OpFd.i64x2_eq, OpFd.i64x2_ne]
          this.simd(ops[cmp]!)
          return 'mask'
        }
        if ((e.op === '&&' || e.op === '||') && l === 'bool' && r === 'bool') {
          this.vmask(e.left)
          this.vmask(e.right)
          this.simd(e.op === '&&' ? OpFd.v128_and : OpFd.v128_or)
          return 'mask'
        }
        break
      }
      case 'call': {
        const arg = e.args[0]
        if (e.callee === 'f64' && arg && e.args.length === 1 && e.type === 'f64') {
          if (kind(arg) === 'f64') return this.vexpr(arg)
          if (kind(arg) === 'i32') {
            if (!readsVarying(arg, lanes)) {
              // a uniform i32 (see \`convertsInLanes\`): converted in lanes from its splat
              this.expr(arg)
              this.simd(OpFd.i32x4_splat)
              this.simd(OpFd.f64x2_convert_low_i32x4_s)
              return 'f64'
            }
            this.vvalue(arg, 'i32')
            this.lanesToF64()
            return 'f64'
          }
          break
        }
        const spec = this.program.registry.findPrimitive(e.callee)
        const wasm = spec?.kind === 'pure' ? spec.emit?.wasm : undefined
        if (wasm === 'identity' && e.args.length === 1 && arg && kind(arg) === e.type && e.type !== 'bool')
          return this.vexpr(arg)
        if (
          (e.callee === 'sin' || e.callee === 'cos') &&
          e.type === 'f64' &&
          e.args.length === 1 &&
          kind(arg!) === 'f64' &&
          this.laneTrig(e)
        )
          return 'f64'
        const native =
          e.type === 'f64' && e.args.every((x) => kind(x) === 'f64') ? this.laneContext.native(e) : undefined
        if (native) {
          for (const x of e.args) this.vvalue(x, 'f64')
          const ops: Record<VectorNative, number> = {
            neg: OpFd.f64x2_neg,
            sqrt: OpFd.f64x2_sqrt,
            abs: OpFd.f64x2_abs,
            min: OpFd.f64x2_min,
            max: OpFd.f64x2_max,
          }
          this.simd(ops[native])
          return 'f64'
        }
        break
      }
      case 'index': {
        // an element of a gathered block (see \`gatheredBlocks\`): from the two lanes' bases where
        // both lanes' blocks are in range (checked at the offset's allocation), else as before
        const at = gatherIndex(e.index)
        const g =
          at && e.type === 'f64' && this.laneMask === undefined && this.gathered.get(`${e.array.name}|${at.offset}`)
        if (!g) break
        this.get(g.ok)
        this.op(Op.if, V128)
        this.get(g.b1)
        this.get(g.b0)
        this.simd(OpFd.v128_load64_splat)
        this.out.u32(3).u32(8 * at!.c)
        this.simd(OpFd.v128_load64_lane)
        this.out
          .u32(3)
          .u32(8 * at!.c)
          .byte(1)
        this.op(Op.else)
        this.laneByLane(e)
        this.op(Op.end)
        return 'f64'
      }
    }
    return this.laneByLane(e)
  }

  /**
   * The gathered blocks whose bases the pair being emitted has computed (see \`gatherBases\`), by
   * \`array|offset\`: each lane's byte address of \`array[offset]\`, and whether both lanes' blocks
   * are in range.
   */
  private readonly gathered = new Map<string, { b0: number; b1: number; ok: number }>()

  /**
   * Right after the allocation of a gathered block's offset x (lanes in \`lanes\`): each lane's base
   * address \`array + 8·x\`, and the flag that both lanes' \`array[x]\` … \`array[x + max]\` are in
   * range (0 ≤ x < len − max, compared unsigned; false where len ≤ max).
   */
  private gatherBases(g: { array: string; offset: string; max: number }, lanes: number): void {
    const arr = this.array(g.array)
    const limit = this.local(I32),
      ok = this.local(I32)
    this.get(arr.len)
    this.i32(g.max)
    this.op(Op.i32_sub)
    this.tee(limit)
    this.i32(0)
    this.op(Op.i32_gt_s)
    this.set(ok)
    const bases: number[] = []
    for (const lane of [0, 1]) {
      const x = this.local(I32),
        b = this.local(I32)
      this.get(lanes)
      this.simd(OpFd.i64x2_extract_lane)
      this.out.byte(lane)
      this.op(Op.i32_wrap_i64)
      this.tee(x)
      this.get(limit)
      this.op(Op.i32_lt_u)
      this.get(ok)
      this.op(Op.i32_and)
      this.set(ok)
      this.get(arr.ptr)
      this.get(x)
      this.i32(3)
      this.op(Op.i32_shl, Op.i32_add)
      this.set(b)
      bases.push(b)
    }
    this.gathered.set(`${g.array}|${g.offset}`, { b0: bases[0]!, b1: bases[1]!, ok })
    this.ctx.gatheredBlocks++
  }

  /**
   * The lanes of \`x ** y\` with a uniform exponent known only at run time (\`halfz ** nu\` in a map
   * over z): the scalar code's own cases, decided once for both lanes — y = 2 is x · x
   * (\`f64x2.mul\`), y = 1 is x, any other y the scalar code once per lane (\`laneByLane\`, which
   * computes x again) — so each lane is the scalar code's double bit for bit, where every case ran
   * the scalar code per lane before (two extractions, two branches on y and a rebuild per lane).
   * x's lanes are computed before the branches, in the straight-line code, so that a subexpression
   * shared with later statements is set wherever it is read.
   */
  private uniformPower(e: Extract<Expr, { kind: 'binary' }>): void {
    this.ctx.uniformPowers++
    this.vvalue(e.left, 'f64')
    const x = this.local(V128)
    this.set(x)
    const y = this.local(F64)
    this.toF64(this.expr(e.right))
    this.set(y)
    this.get(y)
    this.f64c(2)
    this.op(Op.f64_eq, Op.if, V128)
    this.get(x)
    this.get(x)
    this.simd(OpFd.f64x2_mul)
    this.op(Op.else)
    this.get(y)
    this.f64c(1)
    this.op(Op.f64_eq, Op.if, V128)
    this.get(x)
    this.op(Op.else)
    this.laneByLane(e)
    this.op(Op.end, Op.end)
  }

  /** The scalar code of `e` once per lane, from the lanes of the varying values it reads. */
  private laneByLane(e: Expr): 'f64' | 'i32' | 'mask' {
    const lanes = this.lanesOf!
    const t = e.type
    if (t !== 'f64' && t !== 'i32' && t !== 'bool') throw new Error(`wasm codegen: a ${t} value in lanes`)
    const names = [...reads(e, new Set())].filter((n) => lanes.has(n))
    for (const lane of [0, 1]) {
      this.scoped(() => {
        for (const n of names) {
          const v = lanes.get(n)!
          const l = this.local(v.type === 'f64' ? F64 : I32)
          this.get(v.local)
          if (v.type === 'f64') {
            this.simd(OpFd.f64x2_extract_lane)
            this.out.byte(lane)
          } else {
            this.simd(OpFd.i64x2_extract_lane)
            this.out.byte(lane)
            this.op(Op.i32_wrap_i64)
          }
          this.set(l)
          this.names.set(n, { kind: 'scalar', local: l, type: v.type })
        }
        // (nothing shared: a value computed for one lane is not the other's)
        const shared = this.shared
        this.lanesOf = undefined
        this.shared = undefined
        // a lane that does not run here computes nothing (an element it would read may be out
        // of range, a primitive it would call may throw): 0 stands for its value
        const mask = this.laneMask
        if (mask !== undefined) {
          this.get(mask)
          this.simd(OpFd.i64x2_extract_lane)
          this.out.byte(lane)
          this.op(Op.i64_eqz, Op.if, t === 'f64' ? F64 : I32)
          if (t === 'f64') this.f64c(0)
          else this.i32(0)
          this.op(Op.else)
        }
        try {
          this.expr(e)
        } finally {
          this.lanesOf = lanes
          this.shared = shared
        }
        if (mask !== undefined) this.op(Op.end)
      })
      if (t === 'f64') {
        this.simd(lane === 0 ? OpFd.f64x2_splat : OpFd.f64x2_replace_lane)
        if (lane === 1) this.out.byte(1)
      } else {
        this.op(Op.i64_extend_i32_s)
        this.simd(lane === 0 ? OpFd.i64x2_splat : OpFd.i64x2_replace_lane)
        if (lane === 1) this.out.byte(1)
      }
    }
    if (t === 'bool') {
      this.simd(OpFd.i64x2_neg)
      return 'mask'
    }
    return t as LaneType
  }

  private callStmt(s: Extract<Stmt, { kind: 'callstmt' }>): void {
    if (s.target === 'bijection') return this.bijection(s)
    const callee = this.program.functions.get(s.callee)!
    const w = this.program.writes.get(s.callee)!
    s.args.forEach((a, i) => {
      const p = callee.params[i]!
      if (p.type.kind === 'scalar') {
        this.read(a)
        return
      }
      const arr = this.array((a as { name: string }).name, s.loc)
      this.get(arr.ptr)
      this.get(arr.len)
    })
    this.callFn(s.callee, s.inverse)
    // the results (every scalar parameter's final value) into locals, last first
    const scalars = callee.params.map((p, i) => [p, i] as const).filter(([p]) => p.type.kind === 'scalar')
    const temps = scalars.map(([p]) => this.local(this.vt((p.type as { name: string }).name)))
    for (let j = temps.length - 1; j >= 0; j--) this.set(temps[j]!)
    scalars.forEach(([p, i], j) => {
      if (!w[i]) return
      this.modify(s.args[i]!, (p.type as { name: string }).name, false, () => this.get(temps[j]!))
    })
  }

  /**
   * The outputs of a bijection computed in the module (see \`math/bijections.ts\`): the arguments
   * as f64, sin and cos of the angle (the third argument) from one reduction, each output rounded to its
   * argument's type (as an import's result would be). Returns the locals holding the outputs.
   */
  private mathBijection(
    lowered: MathBijection,
    temps: number[],
    types: ValType[],
    outs: number[],
    tabulated?: { sin: number; cos: number },
  ): number[] {
    const arg = (i: number): Ex => ({
      t: 'f64',
      w: (o) => {
        o.byte(Op.local_get).u32(temps[i]!)
        if (types[i] === F32) o.byte(Op.f64_promote_f32)
        else if (types[i] === I32) o.byte(Op.f64_convert_i32_s)
      },
    })
    const args = temps.map((_, i) => arg(i))
    let sin: Ex = args[0]!,
      cos: Ex = args[0]!
    if (lowered.angle && tabulated) {
      // both read from tables (locals holding the elements)
      sin = {
        t: 'f64',
        w: (o) => {
          o.byte(Op.local_get).u32(tabulated.sin)
        },
      }
      cos = {
        t: 'f64',
        w: (o) => {
          o.byte(Op.local_get).u32(tabulated.cos)
        },
      }
    } else if (lowered.angle) {
      // both from one argument reduction
      const s = this.local(F64),
        c = this.local(F64)
      args[2]!.w(this.out)
      this.callDefined(this.ctx.math.use('__sincos'))
      this.set(c)
      this.set(s)
      sin = {
        t: 'f64',
        w: (o) => {
          o.byte(Op.local_get).u32(s)
        },
      }
      cos = {
        t: 'f64',
        w: (o) => {
          o.byte(Op.local_get).u32(c)
        },
      }
    }
    const values = lowered.outputs(args, sin, cos)
    const results = outs.map((i, j) => {
      values[j]!.w(this.out)
      if (types[i] === F32) this.op(Op.f32_demote_f64)
      const l = this.local(types[i] === F32 ? F32 : F64)
      this.set(l)
      return l
    })
    return results
  }

  /**
   * The values a bijection call reads from tables (see the `tabulate` pass of `@tenet/ir`) take
   * part in the value numbering of their run, so the updates around the call that read the same
   * table elements share one load with it; a bijection writes its `inout` arguments only.
   */
  private tabulatedValues = (
    s: Extract<Stmt, { kind: 'callstmt' }>,
  ): { values: readonly Expr[]; writes: readonly boolean[] } => {
    let spec = this.program.registry.bijection(s.callee)
    if (s.inverse && spec.inverse !== 'self') spec = this.program.registry.bijection(spec.inverse)
    return { values: s.tabulated?.map((t) => t.read) ?? [], writes: spec.roles.map((r) => r === 'inout') }
  }

  private bijection(s: Extract<Stmt, { kind: 'callstmt' }>): void {
    let spec = this.program.registry.bijection(s.callee)
    if (s.inverse && spec.inverse !== 'self') spec = this.program.registry.bijection(spec.inverse)
    const types = s.args.map((a) => {
      const t = (a as { type?: ScalarTypeName }).type!
      this.numeric(t, a.loc)
      return t
    })
    const temps = s.args.map((a, i) => {
      const l = this.local(this.vt(types[i]))
      this.read(a)
      this.set(l)
      return l
    })
    const outs = s.args.map((a, i) => [a, i] as const).filter(([, i]) => spec.roles[i] === 'inout')
    const wasm = spec.emit?.wasm
    let results: number[]
    const lowered = mathBijection(spec, this.ctx.mathChoice)
    if (typeof wasm === 'object' && wasm.permute) {
      results = wasm.permute.map((j) => temps[j]!)
    } else if (lowered && types.every((t) => this.vt(t) !== I32)) {
      // a standard bijection computed in the module (math/bijections.ts), with the cpu backend's arithmetic
      // sin and cos of the angle from tables where the `tabulate` pass made them
      const table = (callee: string): number | undefined => {
        const t = s.tabulated?.find((x) => x.callee === callee && x.arg === 2)
        if (!t || this.vt(types[2]) !== F64) return undefined
        const l = this.local(F64)
        this.expr(t.read)
        this.set(l)
        return l
      }
      const tables = lowered.angle ? { sin: table('sin'), cos: table('cos') } : undefined
      results = this.mathBijection(
        lowered,
        temps,
        types.map((t) => this.vt(t)),
        outs.map(([, i]) => i),
        tables?.sin !== undefined && tables.cos !== undefined ? { sin: tables.sin, cos: tables.cos } : undefined,
      )
    } else if (typeof wasm === 'function' && types.every((t) => t === 'f64')) {
      // the bijection's own lowering (f64: in f32 the JS function rounds once, as the cpu backend does)
      runLowering(spec.name, wasm, F64, temps, outs.length, this.lowering)
      results = outs.map(() => this.local(F64))
      for (let j = results.length - 1; j >= 0; j--) this.set(results[j]!)
    } else if (typeof wasm === 'function' && types.every((t) => t === 'i32')) {
      // on i32 (INC(k)), the lowering in f64 (exact on i32 values) and each result converted
      // back as the imported `apply`'s result would be (JS's ToInt32), with no call out
      const wide = temps.map((l) => {
        const d = this.local(F64)
        this.get(l)
        this.op(Op.f64_convert_i32_s)
        this.set(d)
        return d
      })
      runLowering(spec.name, wasm, F64, wide, outs.length, this.lowering)
      const doubles = outs.map(() => this.local(F64))
      for (let j = doubles.length - 1; j >= 0; j--) this.set(doubles[j]!)
      results = doubles.map((d) => {
        this.get(d)
        this.convert('f64', 'i32', s.loc)
        const r = this.local(I32)
        this.set(r)
        return r
      })
    } else {
      // the registered `apply`, imported with the argument and result types (JS converts them as the cpu backend rounds)
      const params = types.map((t) => this.vt(t))
      const res = outs.map(([, i]) => params[i]!)
      const apply = boolArgs(spec.apply, types)
      // one result: take it out of the array (JS would convert the array through its string form)
      const call = res.length === 1 ? (...a: number[]) => apply(...a)[0] : apply
      const k = this.ctx.importOf(`bij:${spec.name}:${types.join(',')}`, { params, results: res }, call)
      for (const l of temps) this.get(l)
      this.callImport(k)
      results = res.map((t) => this.local(t))
      for (let j = results.length - 1; j >= 0; j--) this.set(results[j]!)
    }
    outs.forEach(([a, i], j) => {
      this.modify(a, types[i]!, false, () => this.get(results[j]!))
      // a value that later statements of the run read again from the element: its local (see `Shared.stored`)
      const stored = this.shared?.get(a as Expr)?.stored
      if (stored && types[i] === 'f64' && this.vt(types[i]!) === F64) this.sharedLocals.set(stored, [results[j]!, F64])
    })
  }
}

/**
 * Whether scalar parameter `p`'s result is its argument as the call converted it (the function
 * never writes it, and its type is f64, f32 or i32, whose conversion the JS wrapper repeats:
 * ToNumber, \`Math.fround\`, \`| 0\`): the wrapper sets that result itself, and the thunk does not
 * store it (a store in wasm and a load in JS fewer per parameter and call).
 */
export function passedThrough(p: FunctionDef['params'][number], written: boolean | undefined): boolean {
  if (written !== false || p.type.kind !== 'scalar') return false
  const t = p.type.name
  return t === 'f64' || t === 'f32' || t === 'i32'
}

/**
 * The scalar parameter whose final value the exported entry of \`f\` returns (as an f64) rather
 * than stores, or −1: the last one that is not \`passedThrough\` (given \`writes\`, which parameters
 * it writes). A JS caller takes a returned number for free, where a stored one costs a store in
 * wasm and a load in JS after the call, whose view the call may have detached. The last, since
 * generated programs put what a caller reads most, such as a gradient program's loss, last.
 */
export function returnedParam(f: FunctionDef, writes: readonly boolean[] | undefined): number {
  for (let i = f.params.length - 1; i >= 0; i--) {
    const p = f.params[i]!
    if (p.type.kind === 'scalar' && !(writes && passedThrough(p, writes[i]))) return i
  }
  return -1
}

/**
 * The end of an exported entry, with the final value of each scalar parameter \`i\` in local
 * \`local(i)\`: stores each as an f64 at byte address \`resultsAt\` + 8·i, except those
 * \`passedThrough\` and the \`returned\` one, which it leaves on the stack.
 */
function storeResults(
  body: Bytes,
  f: FunctionDef,
  local: (i: number) => number,
  resultsAt: number,
  writes: readonly boolean[] | undefined,
  returned: number,
): void {
  const asF64 = (i: number) => {
    body.byte(Op.local_get).u32(local(i))
    const t = valType((f.params[i]!.type as { name: ScalarTypeName }).name)
    if (t === I32) body.byte(Op.f64_convert_i32_s)
    else if (t === F32) body.byte(Op.f64_promote_f32)
  }
  f.params.forEach((p, i) => {
    if (p.type.kind !== 'scalar' || i === returned || (writes && passedThrough(p, writes[i]))) return
    body.byte(Op.i32_const).s32(resultsAt + 8 * i)
    asF64(i)
    body.byte(Op.f64_store).u32(3).u32(0)
  })
  if (returned >= 0) asF64(returned)
}

/** Per parameter of \`f\`: its first wasm parameter (a scalar's value, an array's address; its length follows). */
function paramLocals(f: FunctionDef, first: number): number[] {
  let k = first
  return f.params.map((p) => {
    const at = k
    k += p.type.kind === 'scalar' ? 1 : 2
    return at
  })
}

/**
 * A function that no other function of its module calls, made its own exported entry (a closed
 * module's, which passes no heap top): the same parameters; the pushes of its results at the end
 * of the body give way to the stores of the thunk (\`storeResults\`), and it returns the
 * \`returnedParam\` as an f64. One call into wasm instead of the thunk's call and the function's
 * (whose results came back through the stack). \`emitted\` is changed in place (call sites
 * recorded in its body stay valid: only its tail changes).
 */
export function ownEntry(
  emitted: DefinedFunc & { resultsFrom: number },
  f: FunctionDef,
  exportName: string,
  resultsAt: number,
  writes: readonly boolean[] | undefined,
): DefinedFunc {
  const returned = returnedParam(f, writes)
  const at = paramLocals(f, 0)
  const body = emitted.body
  body.length = emitted.resultsFrom
  storeResults(body, f, (i) => at[i]!, resultsAt, writes, returned)
  return {
    type: { params: emitted.type.params, results: returned >= 0 ? [F64] : [] },
    locals: emitted.locals,
    ...(emitted.prologue ? { prologue: emitted.prologue } : {}),
    body,
    export: exportName,
  }
}

/**
 * The exported thunk of a function: takes the heap top (unless not \`setsHeap\`: a closed module's,
 * which never allocates), then the function's parameters; sets \`hp\` (\`setsHeap\`), calls the
 * function, stores the final value of scalar parameter i as an f64 at byte address
 * \`resultsAt\` + 8·i (where the JS wrapper reads its results), except those \`passedThrough\`
 * (given \`writes\`, which parameters the function writes), and returns the \`returnedParam\`.
 */
export function thunk(
  ctx: ModuleContext,
  f: FunctionDef,
  inverse: boolean,
  exportName: string,
  resultsAt = 0,
  writes?: readonly boolean[],
  setsHeap = true,
): DefinedFunc {
  const params = wasmParams(f.params)
  const results = wasmResults(f.params)
  const at = f.params.flatMap((p, i) => (p.type.kind === 'scalar' ? [i] : []))
  const first = setsHeap ? 1 : 0
  const body = new Bytes()
  if (setsHeap) body.byte(Op.local_get).u32(0).byte(Op.global_set).u32(0)
  params.forEach((_, i) => body.byte(Op.local_get).u32(i + first))
  body.byte(Op.call)
  ctx.calls.push({ body, at: body.length, target: ctx.definedIndex(f.name, inverse), kind: 'fn' })
  body.padU32()
  const base = params.length + first
  for (let j = results.length - 1; j >= 0; j--) body.byte(Op.local_set).u32(base + j)
  const returned = returnedParam(f, writes)
  storeResults(body, f, (i) => base + at.indexOf(i), resultsAt, writes, returned)
  return {
    type: { params: setsHeap ? [I32, ...params] : params, results: returned >= 0 ? [F64] : [] },
    locals: results.slice(),
    body,
    export: exportName,
  }
}

/** Adds \`f\` to the emitters scheduled at top-level statement \`k\` (element loads or stores of a lane loop). */
function scheduleAt(m: Map<number, Array<() => void>>, k: number, f: () => void): void {
  const fs = m.get(k)
  if (fs) fs.push(f)
  else m.set(k, [f])
}

/**
 * When a lane body's element loads and stores run: those of \`loadsAt\`/\`storesAt\` keyed by the
 * top-level index (in \`body\`, \`@unchecked\` blocks opened) of the statement that first reads or
 * last writes the element. \`before(s)\` runs the stores due after the statements before \`s\` and
 * the loads due before it; \`end()\` runs the rest.
 */
function elementSchedule(
  body: Stmt[],
  loadsAt: Map<number, Array<() => void>>,
  storesAt: Map<number, Array<() => void>>,
): { before(s: Stmt): void; end(): void } {
  const top = new Map<Stmt, number>()
  const mark = (x: Stmt, k: number): void => {
    top.set(x, k)
    if (x.kind === 'unchecked') for (const y of x.body) mark(y, k)
  }
  body.forEach(mark)
  let reached = -1
  const reach = (k: number) => {
    for (; reached < k; reached++) {
      if (reached >= 0) for (const f of storesAt.get(reached) ?? []) f()
      for (const f of loadsAt.get(reached + 1) ?? []) f()
    }
  }
  return { before: (s) => reach(top.get(s)!), end: () => reach(body.length) }
}

/** The pairs of a written array and another array of a lane loop, whose memories must not overlap. */
function overlapPairs(written: readonly string[], arrays: readonly string[]): Array<[string, string]> {
  return written.flatMap((w) => arrays.filter((x) => x !== w).map((x) => [w, x] as [string, string]))
}
