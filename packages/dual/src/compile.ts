/**
 * Staging: turns one recorded call (a `Tracer`'s arena) into a JS function that recomputes the
 * forward values and runs the reverse sweep for new inputs of the same shape, without calling the
 * user's function or recording anything — seed 003's staging, done at run time since JS has no
 * Template Haskell. The recorded nodes become instructions (operation, node ids, constants in a
 * pool), the instruction sequence is rerolled into loops (`reroll.ts`), and the loops are printed
 * as JS: forward in id order, then the reverse sweep in descending id order, with the partials
 * recomputed from the stored values (or, inside loops, from registers: `print.ts`). Only nodes the result depends on take part in the sweep; an
 * adjoint's first contribution is assigned rather than added, so no adjoint array is cleared.
 *
 * The generated function checks every recorded guard (`d.sign`, `d.compare`) on the new values and
 * returns false, before the sweep, as soon as one disagrees: the caller then re-traces. Additions
 * are performed in the interpreter's order, so gradients agree with it to the last bit.
 */
import { SPILLED } from './tape.js'
import { reroll, Keys, type Item } from './reroll.js'
import { BINARY, MixedAccess, Printer, type Tmpl } from './print.js'
import { Op, type Tracer } from './trace.js'

/** A compiled gradient program for one input shape and one set of guard outcomes. */
export interface StagedProgram {
  /**
   * Runs forward and reverse for the flat inputs `x` (length `inputs`), writing their gradient into
   * `gx`; false if a guard failed (then nothing written is valid).
   */
  readonly run: (x: Float64Array, gx: Float64Array) => boolean
  /** Node values after `run` (the result is `v[out]`). */
  readonly v: Float64Array
  /** Scratch inputs and gradient, for callers whose arguments are not one flat `Float64Array`. */
  readonly xin: Float64Array
  readonly gin: Float64Array
  /** The result's node. */
  readonly out: number
  readonly inputs: number
  /** Size of the generated code, for diagnostics. */
  readonly instructions: number
  readonly loops: number
  readonly sourceLength: number
  /** The generated source (diagnostics). */
  readonly source: string
}

const UNARY = new Set<number>([
  Op.Neg,
  Op.Scale,
  Op.Offset,
  Op.Square,
  Op.Inv,
  Op.PowConst,
  Op.Sin,
  Op.Cos,
  Op.Tan,
  Op.Exp,
  Op.Log,
  Op.Sqrt,
  Op.Sinh,
  Op.Cosh,
  Op.Tanh,
  Op.Asin,
  Op.Acos,
  Op.Atan,
  Op.Abs,
])

/** The edge targets of node `i`, in sweep order (the interpreter's order). */
function edgesOf(t: Tracer, i: number, out: number[]): number[] {
  out.length = 0
  const a = t.t0[i]!
  if (a >= 0) {
    out.push(a)
    const b = t.t1[i]!
    if (b >= 0) out.push(b)
  } else if (a === SPILLED) {
    const s = t.t1[i]!,
      n = t.spillT[s]!
    for (let k = s + 1; k <= s + n; k++) out.push(t.spillT[k]!)
  }
  return out
}

/** The stride of an arithmetic sequence, or undefined. */
function strideOf(xs: number[]): number | undefined {
  if (xs.length < 2) return 0
  const s = xs[1]! - xs[0]!
  for (let k = 2; k < xs.length; k++) if (xs[k]! - xs[k - 1]! !== s) return undefined
  return s
}

/**
 * The constant pool: every constant in trace order, so that the constants of a loop body advance
 * affinely and the body rerolls even when its constants differ per iteration (the printer turns a
 * constant that is the same on every iteration back into a literal).
 */
class Pool {
  readonly values: number[] = []
  scalar(c: number): number {
    this.values.push(c)
    return this.values.length - 1
  }
  block(cs: number[]): number {
    const k = this.values.length
    for (const c of cs) this.values.push(c)
    return k
  }
}

/**
 * Compiles the trace recorded by `t` (inputs `[0, t.floor)`, result node `out`) into a staged
 * program, or returns why it cannot (an unrecorded node, code generation disabled).
 */
export function compileTrace(
  t: Tracer,
  out: number,
  makeFunction: FunctionMaker = defaultMaker,
): StagedProgram | string {
  if (t.unstageable) return t.unstageable
  const F = t.floor,
    top = t.top
  for (let i = F; i < top; i++) if (!t.ops[i]) return 'a node was made outside the scalar API'
  if (out < 0 || out >= top) return 'the result is not a node of this call'
  for (const gd of t.guards) if (Number.isNaN(gd.expected)) return 'a guard compared NaN'

  // liveness: the nodes the result depends on
  const live = new Uint8Array(top)
  live[out] = 1
  const edges: number[] = []
  for (let i = out; i >= F; i--) if (live[i]) for (const a of edgesOf(t, i, edges)) live[a] = 1

  // first contributions, in sweep order: bit k of inlineSet[i] for node i's inline edge k, spillSet
  // for spilled edges (1 = assign)
  const assigned = new Uint8Array(top)
  assigned[out] = 1
  const inlineSet = new Uint8Array(top),
    spillSet = new Uint8Array(t.spillTop)
  for (let i = out; i >= F; i--) {
    if (!live[i]) continue
    const a = t.t0[i]!
    if (a >= 0) {
      if (!assigned[a]) {
        inlineSet[i] = 1
        assigned[a] = 1
      }
      const b = t.t1[i]!
      if (b >= 0 && !assigned[b]) {
        inlineSet[i] |= 2
        assigned[b] = 1
      }
    } else if (a === SPILLED) {
      const s = t.t1[i]!,
        n = t.spillT[s]!
      for (let k = s + 1; k <= s + n; k++) {
        const e = t.spillT[k]!
        if (!assigned[e]) {
          spillSet[k] = 1
          assigned[e] = 1
        }
      }
    }
  }

  const pool = new Pool()
  const tables: Int32Array[] = []
  const table = (xs: number[]): number => {
    tables.push(Int32Array.from(xs))
    return tables.length - 1
  }
  const keys = new Keys()
  const items: Item<Tmpl>[] = []
  const ins = (tmpl: Tmpl, params: number[]): void => {
    const key = keys.id(
      `${tmpl.op}|${tmpl.expected}|${tmpl.live ? 1 : 0}|${tmpl.flags}|${tmpl.n}|${tmpl.sa}|${tmpl.sb}|${tmpl.table}|${tmpl.ma}|${tmpl.mb}|${tmpl.zero}`,
    )
    items.push({ kind: 'ins', key, params, tmpl })
  }
  // unary and binary nodes: one template and key per (operation, liveness, flags), made once
  const simple: Array<{ tmpl: Tmpl; key: number } | undefined> = []
  const simpleIns = (op: number, isLive: boolean, flags: number, params: number[]): void => {
    const code = op * 8 + (isLive ? 4 : 0) + flags
    const c = simple[code]
    if (!c) {
      const tmpl: Tmpl = { op, live: isLive, flags }
      ins(tmpl, params)
      simple[code] = { tmpl, key: items[items.length - 1]!.key }
      return
    }
    items.push({ kind: 'ins', key: c.key, params, tmpl: c.tmpl })
  }
  let g = 0
  const guards = t.guards
  const emitGuards = (upTo: number): void => {
    for (; g < guards.length && guards[g]!.at <= upTo; g++) {
      const gd = guards[g]!
      ins({ op: 0, expected: gd.expected, live: false, flags: gd.b < 0 ? 1 : 2 }, gd.b < 0 ? [gd.a] : [gd.a, gd.b])
    }
  }
  for (let i = F; i < top; i++) {
    emitGuards(i)
    const op = t.ops[i]!
    const isLive = live[i] === 1
    if (op === Op.Const) {
      ins({ op, live: false, flags: 0 }, [i, pool.scalar(t.k0[i]!)])
      continue
    }
    if (UNARY.has(op) || BINARY.has(op)) {
      const a = t.t0[i]!,
        b = t.t1[i]!
      const flags = inlineSet[i]!
      const params = BINARY.has(op) ? [i, a, b] : [i, a]
      if (op === Op.Scale || op === Op.Offset || op === Op.PowConst || op === Op.AddScaled)
        params.push(pool.scalar(t.k0[i]!))
      if (op === Op.Combine) params.push(pool.scalar(t.k0[i]!), pool.scalar(t.k1[i]!))
      simpleIns(op, isLive, flags, params)
      continue
    }
    // n-ary: sum, dot, linear
    const s = t.t1[i]!,
      m = t.spillT[s]!
    const targets: number[] = [],
      coeffs: number[] = [],
      fl: number[] = []
    for (let k = s + 1; k <= s + m; k++) {
      targets.push(t.spillT[k]!)
      coeffs.push(t.spillP[k]!)
      fl.push(spillSet[k]!)
    }
    // per operand list (a dot product has two): 0 = every edge assigns, 1 = every edge adds,
    // 2 = mixed (its assigning targets are zeroed first, from a table, and every edge adds)
    const dot = op === Op.Dot
    const listOf = (k: number): number => (dot ? k % 2 : 0)
    const modes = [0, 0]
    const zeros: number[] = []
    if (isLive) {
      for (const l of dot ? [0, 1] : [0]) {
        const fs = fl.filter((_, k) => listOf(k) === l)
        const sets = fs.filter((f) => f === 1).length
        modes[l] = sets === fs.length ? 0 : sets === 0 ? 1 : 2
        if (modes[l] === 2)
          targets.forEach((e, k) => {
            if (listOf(k) === l && fl[k] === 1) zeros.push(e)
          })
      }
    }
    const tmpl: Tmpl = {
      op,
      live: isLive,
      flags: 0,
      ma: modes[0]!,
      mb: modes[1]!,
      ...(zeros.length ? { zero: table(zeros) } : {}),
    }
    if (op === Op.Dot) {
      const xs = targets.filter((_, k) => k % 2 === 0),
        ys = targets.filter((_, k) => k % 2 === 1)
      const sa = strideOf(xs),
        sb = strideOf(ys)
      tmpl.n = xs.length
      if (sa !== undefined && sb !== undefined && xs.length > 0) {
        tmpl.sa = sa
        tmpl.sb = sb
        ins(tmpl, [i, xs[0]!, ys[0]!])
      } else {
        tmpl.table = table(targets)
        ins(tmpl, [i])
      }
    } else {
      const sa = strideOf(targets)
      tmpl.n = targets.length
      const extra = op === Op.Linear ? [pool.block(coeffs)] : []
      if (sa !== undefined && targets.length > 0) {
        tmpl.sa = sa
        ins(tmpl, [i, targets[0]!, ...extra])
      } else {
        tmpl.table = table(targets)
        ins(tmpl, [i, ...extra])
      }
    }
  }
  emitGuards(top)

  // what the printer may keep in registers: nodes read only by later nodes of their own loop
  // iteration (not by guards, n-ary nodes or the caller)
  const lastRead = new Int32Array(top),
    pinned = new Uint8Array(top),
    reads = new Int32Array(top),
    liveRead = new Int32Array(top).fill(-1),
    firstRead = new Int32Array(top).fill(top)
  // pinnedBy: 1 = only by guards (values), 2 = by an n-ary node or the caller (adjoints too)
  const pinnedBy = new Uint8Array(top)
  pinned[out] = 1
  pinnedBy[out] = 2
  for (const gd of guards)
    for (const e of gd.b >= 0 ? [gd.a, gd.b] : [gd.a]) {
      pinned[e] = 1
      if (!pinnedBy[e]) pinnedBy[e] = 1
    }
  for (let i = F; i < top; i++) {
    const a = t.t0[i]!
    if (a >= 0) {
      lastRead[a] = i
      reads[a]++
      if (firstRead[a] === top) firstRead[a] = i
      if (live[i]) liveRead[a] = i
      const b = t.t1[i]!
      if (b >= 0) {
        lastRead[b] = i
        reads[b]++
        if (live[i]) liveRead[b] = i
        if (firstRead[b] === top) firstRead[b] = i
      }
    } else if (a === SPILLED) {
      const s = t.t1[i]!,
        n = t.spillT[s]!
      for (let k = s + 1; k <= s + n; k++) {
        pinned[t.spillT[k]!] = 1
        pinnedBy[t.spillT[k]!] = 2
      }
    }
  }
  const rolled = reroll(items, keys)
  const C = Float64Array.from(pool.values)
  const finite = C.every((c) => Number.isFinite(c))
  const print = (direct: boolean): { source: string; printer: Printer } => {
    const printer = new Printer(
      C,
      tables,
      F,
      direct,
      finite,
      lastRead,
      pinned,
      reads,
      liveRead,
      out,
      firstRead,
      pinnedBy,
    )
    const gIn = direct ? 'GX' : 'g'
    // inputs the result does not depend on get a zero gradient; then the seed
    let seed = ''
    for (let j = 0; j < F; j++) {
      if (assigned[j]) continue
      let k = j
      while (k + 1 < F && !assigned[k + 1]) k++
      seed += k === j ? `${gIn}[${j}] = 0;\n` : `${gIn}.fill(0, ${j}, ${k + 1});\n`
      j = k
    }
    seed += `${out < F ? gIn : 'g'}[${out}] = 1;`
    const prologue = direct ? '' : `for (let i = 0; i < ${F}; i++) v[i] = X[i];\n`
    let epilogue = direct ? '' : `for (let i = 0; i < ${F}; i++) GX[i] = g[i];\n`
    if (out < F) epilogue += `v[${out}] = X[${out}];\n`
    return { source: printer.program(rolled, prologue, seed, epilogue), printer }
  }
  let printed: { source: string; printer: Printer }
  try {
    printed = print(true)
  } catch (e) {
    if (!(e instanceof MixedAccess)) throw e
    printed = print(false)
  }
  const v = new Float64Array(top),
    gArr = new Float64Array(top)
  const made = makeFunction(['V', 'G', 'K', 'T'], printed.source)
  if (typeof made === 'string') return made
  const run = made(v, gArr, C, tables) as (x: Float64Array, gx: Float64Array) => boolean
  const { printer, source } = printed
  return {
    run,
    v,
    xin: new Float64Array(F),
    gin: new Float64Array(F),
    out,
    inputs: F,
    instructions: printer.instructions,
    loops: printer.loops,
    sourceLength: source.length,
    source,
  }
}

/** Makes a function from source, or says why it cannot (code generation from strings disallowed). */
export type FunctionMaker = (params: string[], body: string) => ((...args: unknown[]) => unknown) | string

let codegen: boolean | undefined
/** `new Function`, unless the process forbids code generation from strings (then a reason). */
export const defaultMaker: FunctionMaker = (params, body) => {
  if (codegen === false) return 'code generation from strings is disallowed in this process'
  try {
    const f = new Function(...params, body) as (...args: unknown[]) => unknown
    codegen = true
    return f
  } catch (e) {
    if (e instanceof EvalError) {
      codegen = false
      return 'code generation from strings is disallowed in this process'
    }
    throw e
  }
}
