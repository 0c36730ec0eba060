/**
 * Staging: turns one recorded call (a `Tracer`'s arena) into a JS function that recomputes the
 * forward values and runs the reverse sweep for new inputs of the same shape, without calling the
 * user's function or recording anything — seed 003's staging, done at run time since JS has no
 * Template Haskell. The recorded nodes become instructions (operation, node ids, constants in a
 * pool), the instruction sequence is rerolled into loops (`reroll.ts`), and the loops are printed
 * as JS: forward in id order, then the reverse sweep in descending id order, with the partials
 * recomputed from the stored values. Only nodes the result depends on take part in the sweep; an
 * adjoint's first contribution is assigned rather than added, so no adjoint array is cleared.
 *
 * The generated function checks every recorded guard (`d.sign`, `d.compare`) on the new values and
 * returns false, before the sweep, as soon as one disagrees: the caller then re-traces. Additions
 * are performed in the interpreter's order, so gradients agree with it to the last bit.
 */
import { SPILLED } from './tape.js'
import { reroll, Keys, type Ins, type Item } from './reroll.js'
import { Op, type Tracer } from './trace.js'

/** What to print for one instruction. */
interface Tmpl {
  /** An `Op`, or 0 for a guard. */
  op: number
  /** Guards: the expected sign / comparison. */
  expected?: number
  /** Whether the node is in the sweep (the result depends on it). */
  live: boolean
  /** Edge flags, one bit per inline edge: 1 = assign (first contribution), 0 = add. */
  flags: number
  /** n-ary nodes: term count, operand strides (affine operands), or a table of operands. */
  n?: number
  sa?: number
  sb?: number
  table?: number
  /** n-ary nodes: 0 = assign every edge, 1 = add every edge, 2 = mixed (zero `zero` first, then add). */
  mode?: number
  zero?: number
}

/** A compiled gradient program for one input shape and one set of guard outcomes. */
export interface StagedProgram {
  /** Runs forward and reverse on `v[0 … inputs)`; false if a guard failed (nothing valid then). */
  readonly run: () => boolean
  /** Values: the inputs first (write them before `run`), then every node. */
  readonly v: Float64Array
  /** Adjoints after `run`: the gradient of the inputs is `g[0 … inputs)`. */
  readonly g: Float64Array
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

const UNARY = new Set<number>([Op.Neg, Op.Scale, Op.Offset, Op.Square, Op.Inv, Op.PowConst, Op.Sin, Op.Cos, Op.Tan, Op.Exp, Op.Log, Op.Sqrt, Op.Sinh, Op.Cosh, Op.Tanh, Op.Asin, Op.Acos, Op.Atan, Op.Abs])
const BINARY = new Set<number>([Op.Add, Op.Sub, Op.Mul, Op.Div, Op.AddScaled, Op.Combine, Op.Pow, Op.Atan2, Op.Min, Op.Max])

/** The edge targets of node `i`, in sweep order (the interpreter's order). */
function edgesOf(t: Tracer, i: number, out: number[]): number[] {
  out.length = 0
  const a = t.t0[i]!
  if (a >= 0) { out.push(a); const b = t.t1[i]!; if (b >= 0) out.push(b) }
  else if (a === SPILLED) {
    const s = t.t1[i]!, n = t.spillT[s]!
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

/** The constant pool: scalars interned by value, coefficient blocks by content. */
class Pool {
  readonly values: number[] = []
  private readonly scalars = new Map<number | string, number>()
  private readonly blocks = new Map<string, number>()
  scalar(c: number): number {
    const key = Object.is(c, -0) ? '-0' : c
    let k = this.scalars.get(key)
    if (k === undefined) { k = this.values.length; this.values.push(c); this.scalars.set(key, k) }
    return k
  }
  block(cs: number[]): number {
    const key = cs.join(',')
    let k = this.blocks.get(key)
    if (k === undefined) { k = this.values.length; this.values.push(...cs); this.blocks.set(key, k) }
    return k
  }
}

/**
 * Compiles the trace recorded by `t` (inputs `[0, t.floor)`, result node `out`) into a staged
 * program, or returns why it cannot (an unrecorded node, code generation disabled).
 */
export function compileTrace(t: Tracer, out: number, makeFunction: FunctionMaker = defaultMaker): StagedProgram | string {
  if (t.unstageable) return t.unstageable
  const F = t.floor, top = t.top
  for (let i = F; i < top; i++) if (!t.ops[i]) return 'a node was made outside the scalar API'
  if (out < 0 || out >= top) return 'the result is not a node of this call'
  for (const gd of t.guards) if (gd.expected !== gd.expected) return 'a guard compared NaN'

  // liveness: the nodes the result depends on
  const live = new Uint8Array(top)
  live[out] = 1
  const edges: number[] = []
  for (let i = out; i >= F; i--) if (live[i]) for (const a of edgesOf(t, i, edges)) live[a] = 1

  // first contributions, in sweep order: bit k of inlineSet[i] for node i's inline edge k, spillSet
  // for spilled edges (1 = assign)
  const assigned = new Uint8Array(top)
  assigned[out] = 1
  const inlineSet = new Uint8Array(top), spillSet = new Uint8Array(t.spillTop)
  for (let i = out; i >= F; i--) {
    if (!live[i]) continue
    const a = t.t0[i]!
    if (a >= 0) {
      if (!assigned[a]) { inlineSet[i] = 1; assigned[a] = 1 }
      const b = t.t1[i]!
      if (b >= 0 && !assigned[b]) { inlineSet[i] |= 2; assigned[b] = 1 }
    } else if (a === SPILLED) {
      const s = t.t1[i]!, n = t.spillT[s]!
      for (let k = s + 1; k <= s + n; k++) { const e = t.spillT[k]!; if (!assigned[e]) { spillSet[k] = 1; assigned[e] = 1 } }
    }
  }

  const pool = new Pool()
  const tables: Int32Array[] = []
  const table = (xs: number[]): number => { tables.push(Int32Array.from(xs)); return tables.length - 1 }
  const keys = new Keys()
  const items: Item<Tmpl>[] = []
  const ins = (tmpl: Tmpl, params: number[]): void => {
    const key = keys.id(`${tmpl.op}|${tmpl.expected}|${tmpl.live ? 1 : 0}|${tmpl.flags}|${tmpl.n}|${tmpl.sa}|${tmpl.sb}|${tmpl.table}|${tmpl.mode}|${tmpl.zero}`)
    items.push({ kind: 'ins', key, params, tmpl })
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
    if (op === Op.Const) { ins({ op, live: false, flags: 0 }, [i, pool.scalar(t.k0[i]!)]); continue }
    if (UNARY.has(op) || BINARY.has(op)) {
      const a = t.t0[i]!, b = t.t1[i]!
      const flags = inlineSet[i]!
      const params = BINARY.has(op) ? [i, a, b] : [i, a]
      if (op === Op.Scale || op === Op.Offset || op === Op.PowConst || op === Op.AddScaled) params.push(pool.scalar(t.k0[i]!))
      if (op === Op.Combine) params.push(pool.scalar(t.k0[i]!), pool.scalar(t.k1[i]!))
      ins({ op, live: isLive, flags }, params)
      continue
    }
    // n-ary: sum, dot, linear
    const s = t.t1[i]!, m = t.spillT[s]!
    const targets: number[] = [], coeffs: number[] = [], fl: number[] = []
    for (let k = s + 1; k <= s + m; k++) { targets.push(t.spillT[k]!); coeffs.push(t.spillP[k]!); fl.push(spillSet[k]!) }
    let mode = 0
    let zero: number | undefined
    if (isLive) {
      const sets = fl.filter((f) => f === 1).length
      mode = sets === fl.length ? 0 : sets === 0 ? 1 : 2
      if (mode === 2) zero = table(targets.filter((_, k) => fl[k] === 1))
    }
    const tmpl: Tmpl = { op, live: isLive, flags: 0, mode, ...(zero === undefined ? {} : { zero }) }
    if (op === Op.Dot) {
      const xs = targets.filter((_, k) => k % 2 === 0), ys = targets.filter((_, k) => k % 2 === 1)
      const sa = strideOf(xs), sb = strideOf(ys)
      tmpl.n = xs.length
      if (sa !== undefined && sb !== undefined && xs.length > 0) { tmpl.sa = sa; tmpl.sb = sb; ins(tmpl, [i, xs[0]!, ys[0]!]) }
      else { tmpl.table = table(targets); ins(tmpl, [i]) }
    } else {
      const sa = strideOf(targets)
      tmpl.n = targets.length
      const extra = op === Op.Linear ? [pool.block(coeffs)] : []
      if (sa !== undefined && targets.length > 0) { tmpl.sa = sa; ins(tmpl, [i, targets[0]!, ...extra]) }
      else { tmpl.table = table(targets); ins(tmpl, [i, ...extra]) }
    }
  }
  emitGuards(top)

  const rolled = reroll(items, keys)
  const C = Float64Array.from(pool.values)
  const printer = new Printer(C)
  const forward = printer.forward(rolled)
  const reverse = printer.reverse(rolled)
  // inputs the result does not depend on get a zero gradient
  const unused: string[] = []
  for (let j = 0; j < F; j++) {
    if (assigned[j]) continue
    let k = j
    while (k + 1 < F && !assigned[k + 1]) k++
    unused.push(k === j ? `g[${j}] = 0;` : `g.fill(0, ${j}, ${k + 1});`)
    j = k
  }
  const body = `'use strict';\nreturn function staged() {\n${forward}${unused.join('\n')}\ng[${out}] = 1;\n${reverse}return true;\n};`
  const v = new Float64Array(top), gArr = new Float64Array(top)
  const made = makeFunction(['v', 'g', 'C', 'T'], body)
  if (typeof made === 'string') return made
  const run = made(v, gArr, C, tables) as () => boolean
  return { run, v, g: gArr, out, inputs: F, instructions: printer.instructions, loops: printer.loops, sourceLength: body.length, source: body }
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
    if (e instanceof EvalError) { codegen = false; return 'code generation from strings is disallowed in this process' }
    throw e
  }
}

/** Prints rerolled items as JS. */
class Printer {
  instructions = 0
  loops = 0
  private depth = 0
  constructor(private readonly C: Float64Array) {}

  /** A constant: its literal when the pool index is known, else a pool read. */
  private k(e: string): string {
    if (/^\d+$/.test(e)) {
      const c = this.C[Number(e)]!
      if (Number.isFinite(c) && !Object.is(c, -0)) return `(${String(c)})`
    }
    return `C[${e}]`
  }

  forward(items: Item<Tmpl>[]): string {
    let s = ''
    for (const it of items) s += it.kind === 'loop' ? this.loop(it.params.map(String), it, 'forward') : this.fwd(it, it.params.map(String))
    return s
  }

  reverse(items: Item<Tmpl>[]): string {
    let s = ''
    for (let j = items.length - 1; j >= 0; j--) {
      const it = items[j]!
      s += it.kind === 'loop' ? this.loop(it.params.map(String), it, 'reverse') : this.rev(it, it.params.map(String))
    }
    return s
  }

  private loop(P: string[], it: Extract<Item<Tmpl>, { kind: 'loop' }>, dir: 'forward' | 'reverse'): string {
    const k = `k${this.depth}`
    const E = P.map((p, m) => {
      const d = it.deltas[m]!
      return d === 0 ? p : d > 0 ? `${p} + ${d} * ${k}` : `${p} - ${-d} * ${k}`
    })
    this.depth++
    if (dir === 'forward') this.loops++
    // body parameter slices
    const parts: string[][] = []
    let m = 0
    for (const b of it.body) { parts.push(E.slice(m, m + b.params.length)); m += b.params.length }
    let inner = ''
    const order = dir === 'forward' ? it.body.map((_, j) => j) : it.body.map((_, j) => it.body.length - 1 - j)
    for (const j of order) {
      const b = it.body[j]!
      if (b.kind === 'loop') inner += this.loop(parts[j]!, b, dir)
      else inner += dir === 'forward' ? this.fwd(b, parts[j]!) : this.rev(b, parts[j]!)
    }
    this.depth--
    return dir === 'forward'
      ? `for (let ${k} = 0; ${k} < ${it.count}; ${k}++) {\n${inner}}\n`
      : `for (let ${k} = ${it.count - 1}; ${k} >= 0; ${k}--) {\n${inner}}\n`
  }

  /** The forward statement of one instruction. */
  private fwd(it: Ins<Tmpl>, P: string[]): string {
    const t = it.tmpl
    this.instructions++
    if (t.op === 0) {
      const e = t.expected!
      const cond = t.flags === 1
        ? (e > 0 ? `v[${P[0]}] > 0` : e < 0 ? `v[${P[0]}] < 0` : `v[${P[0]}] === 0`)
        : (e > 0 ? `v[${P[0]}] > v[${P[1]}]` : e < 0 ? `v[${P[0]}] < v[${P[1]}]` : `v[${P[0]}] === v[${P[1]}]`)
      return `if (!(${cond})) return false;\n`
    }
    const o = `v[${P[0]}]`, a = `v[${P[1]}]`, b = `v[${P[2]}]`
    switch (t.op) {
      case Op.Const: return `${o} = ${this.k(P[1]!)};\n`
      case Op.Neg: return `${o} = -${a};\n`
      case Op.Scale: return `${o} = ${this.k(P[2]!)} * ${a};\n`
      case Op.Offset: return `${o} = ${a} + ${this.k(P[2]!)};\n`
      case Op.Add: return `${o} = ${a} + ${b};\n`
      case Op.Sub: return `${o} = ${a} - ${b};\n`
      case Op.Mul: return `${o} = ${a} * ${b};\n`
      case Op.Div: return `${o} = ${a} / ${b};\n`
      case Op.AddScaled: return `${o} = ${a} + ${this.k(P[3]!)} * ${b};\n`
      case Op.Combine: return `${o} = ${this.k(P[3]!)} * ${a} + ${this.k(P[4]!)} * ${b};\n`
      case Op.Square: return `{ const x = ${a}; ${o} = x * x; }\n`
      case Op.Inv: return `${o} = 1 / ${a};\n`
      case Op.PowConst: return `${o} = Math.pow(${a}, ${this.k(P[2]!)});\n`
      case Op.Pow: return `${o} = Math.pow(${a}, ${b});\n`
      case Op.Sin: return `${o} = Math.sin(${a});\n`
      case Op.Cos: return `${o} = Math.cos(${a});\n`
      case Op.Tan: return `${o} = Math.tan(${a});\n`
      case Op.Exp: return `${o} = Math.exp(${a});\n`
      case Op.Log: return `${o} = Math.log(${a});\n`
      case Op.Sqrt: return `${o} = Math.sqrt(${a});\n`
      case Op.Sinh: return `${o} = Math.sinh(${a});\n`
      case Op.Cosh: return `${o} = Math.cosh(${a});\n`
      case Op.Tanh: return `${o} = Math.tanh(${a});\n`
      case Op.Asin: return `${o} = Math.asin(${a});\n`
      case Op.Acos: return `${o} = Math.acos(${a});\n`
      case Op.Atan: return `${o} = Math.atan(${a});\n`
      case Op.Abs: return `${o} = Math.abs(${a});\n`
      case Op.Atan2: return `${o} = Math.atan2(${a}, ${b});\n`
      case Op.Min: return `{ const x = ${a}, y = ${b}; ${o} = x <= y ? x : y; }\n`
      case Op.Max: return `{ const x = ${a}, y = ${b}; ${o} = x >= y ? x : y; }\n`
      case Op.Sum: case Op.Dot: case Op.Linear: return this.naryForward(t, P)
    }
    throw new Error(`unknown opcode ${t.op}`)
  }

  private naryForward(t: Tmpl, P: string[]): string {
    const n = t.n!
    let term: string, pre = ''
    if (t.table === undefined) {
      const x = `v[${P[1]} + ${t.sa} * j]`
      if (t.op === Op.Sum) term = x
      else if (t.op === Op.Dot) term = `${x} * v[${P[2]} + ${t.sb} * j]`
      else term = `C[${P[2]} + j] * ${x}`
    } else {
      pre = `const tb = T[${t.table}]; `
      if (t.op === Op.Sum) term = 'v[tb[j]]'
      else if (t.op === Op.Dot) term = 'v[tb[2 * j]] * v[tb[2 * j + 1]]'
      else term = `C[${P[1]} + j] * v[tb[j]]`
    }
    return `{ ${pre}let s = 0; for (let j = 0; j < ${n}; j++) s += ${term}; v[${P[0]}] = s; }\n`
  }

  /** The reverse step of one instruction: push its adjoint along its edges. */
  private rev(it: Ins<Tmpl>, P: string[]): string {
    const t = it.tmpl
    if (!t.live || t.op === 0 || t.op === Op.Const) return ''
    if (t.op === Op.Sum || t.op === Op.Dot || t.op === Op.Linear) return this.naryReverse(t, P)
    const o = `v[${P[0]}]`, a = `v[${P[1]}]`, b = `v[${P[2]}]`
    const ga = `g[${P[1]}]`, gb = `g[${P[2]}]`
    const setA = (t.flags & 1) !== 0, setB = (t.flags & 2) !== 0
    const e = (target: string, set: boolean, val: string) => `${target} ${set ? '=' : '+='} ${val};`
    let pre = '', body: string
    switch (t.op) {
      case Op.Neg: body = e(ga, setA, '-gi'); break
      case Op.Scale: body = e(ga, setA, `gi * ${this.k(P[2]!)}`); break
      case Op.Offset: body = e(ga, setA, 'gi'); break
      case Op.Add: body = e(ga, setA, 'gi') + e(gb, setB, 'gi'); break
      case Op.Sub: body = e(ga, setA, 'gi') + e(gb, setB, '-gi'); break
      case Op.Mul: body = e(ga, setA, `gi * ${b}`) + e(gb, setB, `gi * ${a}`); break
      case Op.Div: pre = `const y = ${b}; `; body = e(ga, setA, 'gi * (1 / y)') + e(gb, setB, `gi * (-${o} / y)`); break
      case Op.AddScaled: body = e(ga, setA, 'gi') + e(gb, setB, `gi * ${this.k(P[3]!)}`); break
      case Op.Combine: body = e(ga, setA, `gi * ${this.k(P[3]!)}`) + e(gb, setB, `gi * ${this.k(P[4]!)}`); break
      case Op.Square: body = e(ga, setA, `gi * (2 * ${a})`); break
      case Op.Inv: pre = `const r = ${o}; `; body = e(ga, setA, 'gi * (-r * r)'); break
      case Op.PowConst: pre = `const p = ${this.k(P[2]!)}; `; body = e(ga, setA, `gi * (p === 0 ? 0 : p * Math.pow(${a}, p - 1))`); break
      case Op.Pow: pre = `const x = ${a}, p = ${b}; `; body = e(ga, setA, 'gi * (p * Math.pow(x, p - 1))') + e(gb, setB, `gi * (x > 0 ? ${o} * Math.log(x) : 0)`); break
      case Op.Sin: body = e(ga, setA, `gi * Math.cos(${a})`); break
      case Op.Cos: body = e(ga, setA, `gi * -Math.sin(${a})`); break
      case Op.Tan: pre = `const r = ${o}; `; body = e(ga, setA, 'gi * (1 + r * r)'); break
      case Op.Exp: body = e(ga, setA, `gi * ${o}`); break
      case Op.Log: body = e(ga, setA, `gi * (1 / ${a})`); break
      case Op.Sqrt: body = e(ga, setA, `gi * (0.5 / ${o})`); break
      case Op.Sinh: body = e(ga, setA, `gi * Math.cosh(${a})`); break
      case Op.Cosh: body = e(ga, setA, `gi * Math.sinh(${a})`); break
      case Op.Tanh: pre = `const r = ${o}; `; body = e(ga, setA, 'gi * (1 - r * r)'); break
      case Op.Asin: pre = `const x = ${a}; `; body = e(ga, setA, 'gi * (1 / Math.sqrt(1 - x * x))'); break
      case Op.Acos: pre = `const x = ${a}; `; body = e(ga, setA, 'gi * (-1 / Math.sqrt(1 - x * x))'); break
      case Op.Atan: pre = `const x = ${a}; `; body = e(ga, setA, 'gi * (1 / (1 + x * x))'); break
      case Op.Abs: pre = `const x = ${a}; `; body = e(ga, setA, 'gi * (x > 0 ? 1 : x < 0 ? -1 : 0)'); break
      case Op.Atan2: pre = `const y = ${a}, x = ${b}, r = x * x + y * y; `; body = e(ga, setA, 'gi * (x / r)') + e(gb, setB, 'gi * (-y / r)'); break
      case Op.Min: pre = `const f = ${a} <= ${b}; `; body = e(ga, setA, 'gi * (f ? 1 : 0)') + e(gb, setB, 'gi * (f ? 0 : 1)'); break
      case Op.Max: pre = `const f = ${a} >= ${b}; `; body = e(ga, setA, 'gi * (f ? 1 : 0)') + e(gb, setB, 'gi * (f ? 0 : 1)'); break
      default: throw new Error(`unknown opcode ${t.op}`)
    }
    // a zero adjoint is not propagated (as in the interpreter: 0 · ∞ would make NaN); first
    // contributions are then zeros
    const zeros = (setA ? `${ga} = 0;` : '') + (setB && BINARY.has(t.op) ? `${gb} = 0;` : '')
    return `{ const gi = g[${P[0]}]; if (gi !== 0) { ${pre}${body} }${zeros ? ` else { ${zeros} }` : ''} }\n`
  }

  private naryReverse(t: Tmpl, P: string[]): string {
    const n = t.n!
    const op = t.mode === 0 ? '=' : '+='
    let pre = '', body: string, zeroBody: string
    if (t.table === undefined) {
      const ia = `${P[1]} + ${t.sa} * j`
      if (t.op === Op.Sum) { body = `g[${ia}] ${op} gi;`; zeroBody = `g[${ia}] = 0;` }
      else if (t.op === Op.Dot) {
        const ib = `${P[2]} + ${t.sb} * j`
        body = `const x = v[${ia}], y = v[${ib}]; g[${ia}] ${op} gi * y; g[${ib}] ${op} gi * x;`
        zeroBody = `g[${ia}] = 0; g[${ib}] = 0;`
      } else { body = `g[${ia}] ${op} gi * C[${P[2]} + j];`; zeroBody = `g[${ia}] = 0;` }
    } else {
      pre = `const tb = T[${t.table}]; `
      if (t.op === Op.Sum) { body = `g[tb[j]] ${op} gi;`; zeroBody = 'g[tb[j]] = 0;' }
      else if (t.op === Op.Dot) {
        body = `const a = tb[2 * j], b = tb[2 * j + 1], x = v[a], y = v[b]; g[a] ${op} gi * y; g[b] ${op} gi * x;`
        zeroBody = 'g[tb[2 * j]] = 0; g[tb[2 * j + 1]] = 0;'
      } else { body = `g[tb[j]] ${op} gi * C[${P[1]} + j];`; zeroBody = 'g[tb[j]] = 0;' }
    }
    // mixed: the first contributions are zeroed first (also when the adjoint is zero), then all add
    const zeroFirst = t.mode === 2 ? `{ const zt = T[${t.zero}]; for (let j = 0; j < zt.length; j++) g[zt[j]] = 0; } ` : ''
    const onZero = t.mode === 0 ? ` else { ${pre}for (let j = 0; j < ${n}; j++) { ${zeroBody} } }` : ''
    return `{ ${zeroFirst}const gi = g[${P[0]}]; if (gi !== 0) { ${pre}for (let j = 0; j < ${n}; j++) { ${body} } }${onZero} }\n`
  }
}
