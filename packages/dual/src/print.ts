/**
 * Prints a rerolled staged program as JS source. Parameters are affine in the enclosing loop
 * counters (`c + Σ tₗ·kₗ`), so each access knows its range: node ids below the input count read the
 * caller's input array `X` (and write its gradient array `GX`) directly, the others the program's own
 * value and adjoint arrays `v` and `g`. A pool constant that is the same on every iteration prints as
 * a literal. The code is split into chunks of bounded size, each its own function: V8 optimises a
 * function only up to a bytecode size, and an unoptimised chunk would run ten times slower.
 */
import type { Item, Ins, Loop } from './reroll.js'
import { Op } from './trace.js'

/** What to print for one instruction (see `compile.ts`). */
export interface Tmpl {
  /** An `Op`, or 0 for a guard. */
  op: number
  /** Guards: the expected sign / comparison. */
  expected?: number
  /** Whether the node is in the sweep (the result depends on it). */
  live: boolean
  /** Edge flags, one bit per inline edge: 1 = assign (first contribution), 0 = add. Guards: 1 = sign, 2 = compare. */
  flags: number
  /** n-ary nodes: term count, operand strides (affine operands), or a table of operands. */
  n?: number
  sa?: number
  sb?: number
  table?: number
  /**
   * n-ary nodes, per operand list (`mb`: a dot product's second): 0 = every edge assigns, 1 = every
   * edge adds, 2 = mixed (the assigning targets, table `zero`, are zeroed first; every edge adds).
   */
  ma?: number
  mb?: number
  zero?: number
}

/** A loop-carried node of an innermost body (see `carriedOf`). */
interface Carried {
  j: number
  o: Aff
  prev: Aff
  fromG: boolean
  uid: number
  /** Whether the reverse sweep reads its values (else only the last iteration's is stored, after the loop). */
  store: boolean
}

/** An affine parameter: `c + Σ t[l]·k_l` over the enclosing loop counters. */
interface Aff {
  c: number
  t: number[]
}

/** Thrown when an access mixes inputs and other nodes: print again with the inputs copied into `v`. */
export class MixedAccess extends Error {}

export const BINARY = new Set<number>([
  Op.Add,
  Op.Sub,
  Op.Mul,
  Op.Div,
  Op.AddScaled,
  Op.Combine,
  Op.Pow,
  Op.Atan2,
  Op.Min,
  Op.Max,
])
/** Operations whose partials are constants: a zero adjoint gives zero contributions without a test. */
const LINEAR = new Set<number>([
  Op.Neg,
  Op.Scale,
  Op.Offset,
  Op.Add,
  Op.Sub,
  Op.AddScaled,
  Op.Combine,
  Op.Sum,
  Op.Linear,
])

/** Operations whose reverse step reads their own value, or their operands' values. */
const USES_OUTPUT = new Set<number>([Op.Div, Op.Inv, Op.Tan, Op.Exp, Op.Sqrt, Op.Tanh, Op.Pow])
const USES_OPERANDS = new Set<number>([
  Op.Mul,
  Op.Div,
  Op.Square,
  Op.PowConst,
  Op.Pow,
  Op.Sin,
  Op.Cos,
  Op.Log,
  Op.Sinh,
  Op.Cosh,
  Op.Asin,
  Op.Acos,
  Op.Atan,
  Op.Abs,
  Op.Atan2,
  Op.Min,
  Op.Max,
])

const CHUNK = 6000

/** Prints rerolled items as JS (see the module comment). */
export class Printer {
  instructions = 0
  loops = 0
  private counts: number[] = []

  /**
   * @param C the constant pool
   * @param tables operand tables of non-affine n-ary nodes
   * @param F the number of inputs
   * @param direct whether inputs are read from `X` (else they are copied into `v` first)
   * @param finite whether every pool constant is finite (then linear steps need no zero test)
   */
  /** In an innermost loop body: the nodes kept in local variables (affine id → local index). */
  private locals: Map<string, number> | undefined
  /** In an innermost loop body: loop-carried nodes (their own and their previous-iteration affine ids → index). */
  private carried: Map<string, number> | undefined
  private own: Set<string> | undefined
  /** In an innermost loop body, reverse: inputs read only by this iteration (their adjoints are locals). */
  private inputs: Map<string, number> | undefined
  /**
   * In an innermost loop body: the input values it reads, each read once at the top of the body
   * into a constant. Inputs are never written, so the read can move; V8 does not merge repeated
   * typed-array reads itself once the body stores into an array, and re-reads them all.
   */
  private hoisted: Map<string, { name: string; read: string }> | undefined
  private dir: 'forward' | 'reverse' = 'forward'
  private uid = 0
  private counting = true

  /**
   * @param C the constant pool
   * @param tables operand tables of non-affine n-ary nodes
   * @param F the number of inputs
   * @param direct whether inputs are read from `X` (else they are copied into `v` first)
   * @param finite whether every pool constant is finite (then linear steps need no zero test)
   * @param lastRead per node: the highest node that reads it (forward), or more when it must be stored
   * @param pinned per node: 1 when it must live in `v`/`g` (read by a guard, an n-ary node, the caller)
   * @param reads per node: how many inline edges read it
   * @param liveRead per node: the highest live node that reads it (-1: none)
   * @param out the result node
   * @param firstRead per node: the lowest node that reads it
   * @param pinnedBy per node: 1 when only guards pin it
   */
  constructor(
    private readonly C: Float64Array,
    private readonly tables: Int32Array[],
    private readonly F: number,
    private readonly direct: boolean,
    private readonly finite: boolean,
    private readonly lastRead: Int32Array,
    private readonly pinned: Uint8Array,
    private readonly reads: Int32Array,
    private readonly liveRead: Int32Array,
    private readonly out: number,
    private readonly firstRead: Int32Array,
    private readonly pinnedBy: Uint8Array,
  ) {}

  /** Whether a pinned node is pinned only because a guard reads it (its adjoint is unaffected). */
  private guardOnly(node: number): boolean {
    return this.pinnedBy[node] === 1
  }

  /** Calls `f` for every combination of the enclosing counters but the innermost, with the offset of `a` there. */
  private outer(a: Aff, f: (offset: number, combo: number[]) => boolean): boolean {
    const n = this.counts.length - 1
    const combo: number[] = []
    const walk = (l: number, off: number): boolean => {
      if (l === n) return f(off, combo)
      for (let k = 0; k < this.counts[l]!; k++) {
        combo[l] = k
        if (!walk(l + 1, off + (a.t[l] ?? 0) * k)) return false
      }
      return true
    }
    return walk(0, a.c)
  }

  /**
   * The values (affine ids) the reverse loop of an innermost body reads: for a reverse step's
   * partials, and, transitively, to recompute those of them that are locals.
   */
  private neededOf(body: Ins<Tmpl>[], parts: Aff[][]): Set<string> {
    const need = new Set<string>()
    for (let j = body.length - 1; j >= 0; j--) {
      const t = body[j]!.tmpl,
        ps = parts[j]!
      if (t.op === 0) continue
      const key = this.str(ps[0]!)
      if (t.live && USES_OUTPUT.has(t.op)) need.add(key)
      if (t.live && USES_OPERANDS.has(t.op)) for (const q of operandSlots(t)) need.add(this.str(ps[q]!))
      if (need.has(key)) for (const q of operandSlots(t)) need.add(this.str(ps[q]!))
    }
    return need
  }

  /**
   * The inputs an innermost body reads that no other iteration (and nothing else) reads, such as
   * the quaternion of one rotation: in the reverse loop their adjoints accumulate in locals and are
   * written once per iteration.
   */
  private inputsOf(body: Ins<Tmpl>[], parts: Aff[][]): Map<string, Aff> {
    const l = this.counts.length - 1
    const outs: Aff[] = []
    body.forEach((b, j) => {
      if (b.tmpl.op !== 0) outs.push(parts[j]![0]!)
    })
    const found = new Map<string, Aff>()
    if (outs.length === 0) return found
    const first = outs[0]!,
      last = outs[outs.length - 1]!
    const seen = new Set<string>()
    body.forEach((b, i) => {
      for (const q of operandSlots(b.tmpl)) {
        const a = parts[i]![q]!,
          key = this.str(a)
        if (seen.has(key) || b.tmpl.op === 0) continue
        seen.add(key)
        const [lo, hi] = this.range(a)
        if (lo < 0 || hi >= this.F) continue
        const ok = this.outer(a, (off) => {
          for (let k = 0; k < this.counts[l]!; k++) {
            const node = off + (a.t[l] ?? 0) * k,
              shift = off - a.c
            const start = first.c + shift + first.t[l]! * k,
              end = last.c + shift + last.t[l]! * k
            if (this.pinned[node] || this.firstRead[node]! < start || this.lastRead[node]! > end) return false
          }
          return true
        })
        if (ok) found.set(key, a)
      }
    })
    return found
  }

  /**
   * The loop-carried nodes of an innermost body: node j of iteration k is read only in iterations k
   * and k + 1 (a running sum, a state updated every step), its readers in k + 1 come no later than j
   * in the body, and the node it replaces (iteration -1's, made before the loop) is read only by the
   * body's first iteration. Forward, the value stays in a register across iterations (and is stored
   * for the reverse sweep); in reverse, its adjoint does, so neither chain waits on memory.
   */
  private carriedOf(body: Ins<Tmpl>[], parts: Aff[][], locals: Map<string, number>, need: Set<string>): Carried[] {
    const l = this.counts.length - 1
    const count = this.counts[l]!
    const outs: Aff[] = []
    body.forEach((b, j) => {
      if (b.tmpl.op !== 0) outs.push(parts[j]![0]!)
    })
    const result: Carried[] = []
    if (outs.length === 0 || count < 2) return result
    const lastOut = outs[outs.length - 1]!
    const step = lastOut.t[l]!
    body.forEach((b, j) => {
      if (b.tmpl.op === 0 || b.tmpl.op === Op.Sum || b.tmpl.op === Op.Dot || b.tmpl.op === Op.Linear) return
      const o = parts[j]![0]!
      const key = this.str(o)
      const d = o.t[l]!
      if (locals.has(key) || d !== step) return
      const prev: Aff = { c: o.c - d, t: o.t }
      const prevKey = this.str(prev)
      // readers of the previous iteration's node: operand parameters equal to `prev`, none after j
      let edges = 0
      for (let i = 0; i < body.length; i++) {
        const ps = parts[i]!
        const nodeParams = operandSlots(body[i]!.tmpl)
        for (const q of nodeParams)
          if (this.str(ps[q]!) === prevKey) {
            if (i > j || body[i]!.tmpl.op === 0) return
            edges++
          }
      }
      if (edges === 0) return
      // (every output of the body has the same outer offsets)
      let fromG: boolean | undefined
      const ok = this.outer(o, (off) => {
        const init = off - d
        // (no reader but these edges: not an n-ary node, not the caller; a guard reads values only)
        if (init < 0 || this.reads[init] !== edges || (this.pinned[init] && !this.guardOnly(init))) return false
        for (let k = 0; k < count - 1; k++) {
          const node = off + d * k,
            end = lastOut.c + (off - o.c) + step * (k + 1)
          if (this.pinned[node] || this.lastRead[node]! > end) return false
        }
        // the last iteration's node: does a live reader after the loop (or the caller) give it an adjoint?
        const last = off + d * (count - 1),
          end = lastOut.c + (off - o.c) + step * (count - 1)
        const g = last === this.out || this.liveRead[last]! > end
        if (fromG === undefined) fromG = g
        return fromG === g
      })
      // values the reverse loop reads (directly, or to recompute a local): stored every iteration
      const store = need.has(key) || need.has(prevKey)
      if (ok) result.push({ j, o, prev, fromG: fromG!, uid: this.uid++, store })
    })
    return result
  }

  /**
   * The nodes of an innermost loop body that every iteration both makes and consumes: they become
   * local variables (registers) instead of `v`/`g` entries. The reverse loop recomputes their
   * values from the stored ones at the start of each iteration (cheaper than a store and a load).
   */
  private localsOf(body: Ins<Tmpl>[], parts: Aff[][]): Map<string, number> {
    const outs: Aff[] = []
    body.forEach((b, j) => {
      if (b.tmpl.op !== 0) outs.push(parts[j]![0]!)
    })
    const locals = new Map<string, number>()
    if (outs.length === 0) return locals
    const last = outs[outs.length - 1]!
    body.forEach((b, j) => {
      if (b.tmpl.op === 0) return
      const o = parts[j]![0]!
      // every iteration (every combination of the enclosing counters): read only inside it
      let ok = true
      const walk = (l: number, node: number, end: number): void => {
        if (!ok) return
        if (l === this.counts.length) {
          if (this.pinned[node] || this.lastRead[node]! > end) ok = false
          return
        }
        for (let k = 0; k < this.counts[l]! && ok; k++)
          walk(l + 1, node + (o.t[l] ?? 0) * k, end + (last.t[l] ?? 0) * k)
      }
      walk(0, o.c, last.c)
      if (ok) locals.set(this.str(o), j)
    })
    return locals
  }

  private str(a: Aff): string {
    let s = String(a.c)
    a.t.forEach((t, l) => {
      if (t > 0) s += ` + ${t} * k${l}`
      else if (t < 0) s += ` - ${-t} * k${l}`
    })
    return s
  }

  private range(a: Aff, j = 0, n = 1): [number, number] {
    let lo = a.c,
      hi = a.c
    a.t.forEach((t, l) => {
      const span = t * (this.counts[l]! - 1)
      if (span < 0) lo += span
      else hi += span
    })
    const span = j * (n - 1)
    if (span < 0) lo += span
    else hi += span
    return [lo, hi]
  }

  /** The array holding nodes in [lo, hi]: `X`/`GX` for inputs when direct, else `v`/`g`. */
  private arr(lo: number, hi: number, adj: boolean): string {
    if (this.direct && hi < this.F) return adj ? 'GX' : 'X'
    if (!this.direct || lo >= this.F) return adj ? 'g' : 'v'
    throw new MixedAccess()
  }

  private local(a: Aff): number | undefined {
    return this.locals?.get(this.str(a))
  }
  private arrV(a: Aff): string {
    const [lo, hi] = this.range(a)
    return `${this.arr(lo, hi, false)}[${this.str(a)}]`
  }
  private arrG(a: Aff): string {
    const [lo, hi] = this.range(a)
    return `${this.arr(lo, hi, true)}[${this.str(a)}]`
  }
  private V(a: Aff): string {
    const l = this.local(a)
    if (l !== undefined) return `l${l}`
    if (this.hoisted !== undefined) {
      const [lo, hi] = this.range(a)
      if (lo >= 0 && hi < this.F) {
        const key = this.str(a)
        let h = this.hoisted.get(key)
        if (h === undefined) {
          h = { name: `x${this.uid++}`, read: this.arrV(a) }
          this.hoisted.set(key, h)
        }
        return h.name
      }
    }
    if (this.dir === 'forward') {
      const c = this.carried?.get(this.str(a))
      if (c !== undefined) return `c${c}`
    }
    return this.arrV(a)
  }
  private G(a: Aff): string {
    const l = this.local(a)
    if (l !== undefined) return `m${l}`
    const n = this.inputs?.get(this.str(a))
    if (n !== undefined) return `n${n}`
    const c = this.carried?.get(this.str(a))
    if (c !== undefined) return `b${c}`
    return this.arrG(a)
  }
  /** Reads an instruction's adjoint into `gi` (a carried adjoint then restarts at zero for the previous iteration). */
  private readAdj(o: Aff): string {
    const g = this.G(o)
    return this.own?.has(this.str(o)) ? `const gi = ${g}; ${g} = 0;` : `const gi = ${g};`
  }

  /** A pool constant: a literal when it is the same on every iteration, else a pool read. */
  private k(a: Aff): string {
    const C = this.C
    let first: number | undefined,
      same = true,
      combos = 1
    for (let l = 0; l < a.t.length; l++) if (a.t[l] !== 0) combos *= this.counts[l]!
    if (combos <= 4096) {
      const walk = (l: number, idx: number): void => {
        if (!same) return
        if (l === a.t.length) {
          const c = C[idx]!
          if (first === undefined) first = c
          else if (!Object.is(c, first)) same = false
          return
        }
        const t = a.t[l]!
        if (t === 0) walk(l + 1, idx)
        else for (let k = 0; k < this.counts[l]!; k++) walk(l + 1, idx + t * k)
      }
      walk(0, a.c)
    } else same = false
    if (same && first !== undefined && Number.isFinite(first) && !Object.is(first, -0)) return `(${String(first)})`
    return `C[${this.str(a)}]`
  }

  /** The whole program body: chunks, then the function that runs them. */
  program(items: Item<Tmpl>[], prologue: string, seed: string, epilogue: string): string {
    const top = items.map((it) => ({ it, P: it.params.map((c): Aff => ({ c, t: [] })) }))
    const chunks: string[] = []
    const calls: string[] = []
    let cur = ''
    const flush = (kind: 'f' | 'r'): void => {
      if (!cur) return
      const name = `${kind}${chunks.length}`
      chunks.push(
        `function ${name}(X, GX) {\nconst v = V, g = G, C = K;\n${cur}${kind === 'f' ? 'return true;\n' : ''}}\n`,
      )
      calls.push(kind === 'f' ? `if (!${name}(X, GX)) return false;` : `${name}(X, GX);`)
      cur = ''
    }
    for (const { it, P } of top) {
      cur += it.kind === 'loop' ? this.loop(P, it, 'forward') : this.fwd(it, P)
      if (cur.length > CHUNK) flush('f')
    }
    flush('f')
    calls.push(seed)
    for (let j = top.length - 1; j >= 0; j--) {
      const { it, P } = top[j]!
      cur += it.kind === 'loop' ? this.loop(P, it, 'reverse') : this.rev(it, P)
      if (cur.length > CHUNK) flush('r')
    }
    flush('r')
    return `'use strict';\n${chunks.join('')}return function staged(X, GX) {\nconst v = V, g = G;\n${prologue}${calls.join('\n')}\n${epilogue}return true;\n};`
  }

  private loop(P: Aff[], it: Loop<Tmpl>, dir: 'forward' | 'reverse'): string {
    const l = this.counts.length
    const k = `k${l}`
    const E = P.map((p, m): Aff => {
      const t = p.t.slice()
      while (t.length < l) t.push(0)
      t.push(it.deltas[m]!)
      return { c: p.c, t }
    })
    this.counts.push(it.count)
    if (dir === 'forward') this.loops++
    const parts: Aff[][] = []
    let m = 0
    for (const b of it.body) {
      parts.push(E.slice(m, m + b.params.length))
      m += b.params.length
    }
    let inner = '',
      before = '',
      after = '',
      closing = ''
    const saved = this.locals,
      savedCarried = this.carried,
      savedOwn = this.own,
      savedInputs = this.inputs,
      savedHoisted = this.hoisted
    const innermost = it.body.every((b) => b.kind === 'ins')
    this.dir = dir
    let carried: Carried[] = []
    let need = new Set<string>()
    if (innermost) {
      const body = it.body as Ins<Tmpl>[]
      const locals = this.localsOf(body, parts)
      need = this.neededOf(body, parts)
      carried = this.carriedOf(body, parts, locals, need)
      this.locals = locals
      this.hoisted = new Map()
      this.carried = new Map()
      this.own = new Set()
      for (const c of carried) {
        this.carried.set(this.str(c.o), c.uid)
        this.carried.set(this.str(c.prev), c.uid)
        this.own.add(this.str(c.o))
      }
      // (around the loop, the counter of this loop does not exist: outer parts only)
      const at = (a: Aff, k: number): Aff => ({ c: a.c + a.t[l]! * k, t: a.t.slice(0, l) })
      this.counts.pop()
      for (const c of carried) {
        if (dir === 'forward') {
          before += `let c${c.uid} = ${this.arrV(at(c.prev, 0))};\n`
          if (!c.store) after += `${this.arrV(at(c.o, it.count - 1))} = c${c.uid};\n`
        } else {
          // the last iteration's node: its adjoint so far comes from readers after the loop (if any are live)
          before += `let b${c.uid} = ${c.fromG ? this.arrG(at(c.o, it.count - 1)) : '0'};\n`
          // the node before the loop: every reader of it was this loop's first iteration
          after += `${this.arrG(at(c.prev, 0))} = b${c.uid};\n`
        }
      }
      this.counts.push(it.count)
      if (dir === 'reverse') {
        const ins = this.inputsOf(body, parts)
        this.inputs = new Map()
        for (const [key, a] of ins) {
          const id = this.uid++
          this.inputs.set(key, id)
          inner += `let n${id} = 0;\n`
          closing += `${this.arrG(a)} = n${id};\n`
        }
      }
      if (locals.size > 0) {
        const names = [...locals.values()]
        inner += `let ${names.map((j) => `l${j} = 0`).join(', ')};\n`
        if (dir === 'reverse') {
          inner += `let ${names.map((j) => `m${j} = 0`).join(', ')};\n`
          // recompute the local values of this iteration
          this.counting = false
          this.dir = 'forward'
          const cs = this.carried
          this.carried = undefined
          it.body.forEach((b, j) => {
            const key = this.str(parts[j]![0]!)
            if (locals.has(key) && need.has(key) && b.tmpl.op !== 0) inner += this.fwd(b as Ins<Tmpl>, parts[j]!)
          })
          this.carried = cs
          this.dir = dir
          this.counting = true
        }
      }
    }
    for (let q = 0; q < it.body.length; q++) {
      const j = dir === 'forward' ? q : it.body.length - 1 - q
      const b = it.body[j]!
      if (b.kind === 'loop') inner += this.loop(parts[j]!, b, dir)
      else {
        inner += dir === 'forward' ? this.fwd(b, parts[j]!) : this.rev(b, parts[j]!)
        const c = dir === 'forward' ? carried.find((c) => c.j === j) : undefined
        if (c && c.store) inner += `${this.arrV(parts[j]![0]!)} = c${c.uid};\n`
      }
    }
    inner += closing
    if (this.hoisted !== undefined && this.hoisted.size > 0)
      inner = `const ${[...this.hoisted.values()].map((h) => `${h.name} = ${h.read}`).join(', ')};\n${inner}`
    this.hoisted = savedHoisted
    this.locals = saved
    this.carried = savedCarried
    this.own = savedOwn
    this.inputs = savedInputs
    this.counts.pop()
    return dir === 'forward'
      ? `${before}for (let ${k} = 0; ${k} < ${it.count}; ${k}++) {\n${inner}}\n${after}`
      : `${before}for (let ${k} = ${it.count - 1}; ${k} >= 0; ${k}--) {\n${inner}}\n${after}`
  }

  /** The forward statement of one instruction. */
  private fwd(it: Ins<Tmpl>, P: Aff[]): string {
    const t = it.tmpl
    if (this.counting) this.instructions++
    if (t.op === 0) {
      const e = t.expected!
      const a = this.V(P[0]!),
        b = t.flags === 1 ? '0' : this.V(P[1]!)
      return `if (!(${a} ${e > 0 ? '>' : e < 0 ? '<' : '==='} ${b})) return false;\n`
    }
    if (t.op === Op.Sum || t.op === Op.Dot || t.op === Op.Linear) return this.naryForward(t, P)
    const o = this.V(P[0]!),
      a = P.length > 1 ? this.V(P[1]!) : ''
    const b = BINARY.has(t.op) ? this.V(P[2]!) : ''
    switch (t.op) {
      case Op.Const:
        return `${o} = ${this.k(P[1]!)};\n`
      case Op.Neg:
        return `${o} = -${a};\n`
      case Op.Scale:
        return `${o} = ${this.k(P[2]!)} * ${a};\n`
      case Op.Offset:
        return `${o} = ${a} + ${this.k(P[2]!)};\n`
      case Op.Add:
        return `${o} = ${a} + ${b};\n`
      case Op.Sub:
        return `${o} = ${a} - ${b};\n`
      case Op.Mul:
        return `${o} = ${a} * ${b};\n`
      case Op.Div:
        return `${o} = ${a} / ${b};\n`
      case Op.AddScaled:
        return `${o} = ${a} + ${this.k(P[3]!)} * ${b};\n`
      case Op.Combine:
        return `${o} = ${this.k(P[3]!)} * ${a} + ${this.k(P[4]!)} * ${b};\n`
      case Op.Square:
        return `{ const x = ${a}; ${o} = x * x; }\n`
      case Op.Inv:
        return `${o} = 1 / ${a};\n`
      case Op.PowConst:
        return `${o} = Math.pow(${a}, ${this.k(P[2]!)});\n`
      case Op.Pow:
        return `${o} = Math.pow(${a}, ${b});\n`
      case Op.Sin:
        return `${o} = Math.sin(${a});\n`
      case Op.Cos:
        return `${o} = Math.cos(${a});\n`
      case Op.Tan:
        return `${o} = Math.tan(${a});\n`
      case Op.Exp:
        return `${o} = Math.exp(${a});\n`
      case Op.Log:
        return `${o} = Math.log(${a});\n`
      case Op.Sqrt:
        return `${o} = Math.sqrt(${a});\n`
      case Op.Sinh:
        return `${o} = Math.sinh(${a});\n`
      case Op.Cosh:
        return `${o} = Math.cosh(${a});\n`
      case Op.Tanh:
        return `${o} = Math.tanh(${a});\n`
      case Op.Asin:
        return `${o} = Math.asin(${a});\n`
      case Op.Acos:
        return `${o} = Math.acos(${a});\n`
      case Op.Atan:
        return `${o} = Math.atan(${a});\n`
      case Op.Abs:
        return `${o} = Math.abs(${a});\n`
      case Op.Atan2:
        return `${o} = Math.atan2(${a}, ${b});\n`
      case Op.Min:
        return `{ const x = ${a}, y = ${b}; ${o} = x <= y ? x : y; }\n`
      case Op.Max:
        return `{ const x = ${a}, y = ${b}; ${o} = x >= y ? x : y; }\n`
    }
    throw new Error(`unknown opcode ${t.op}`)
  }

  /** `arr[base + stride·j]` for the j-th term of an affine n-ary operand list. */
  private term(base: Aff, stride: number, n: number, adj: boolean): string {
    const [lo, hi] = this.range(base, stride, n)
    return `${this.arr(lo, hi, adj)}[${this.str(base)} + ${stride} * j]`
  }

  /** The array of a table's nodes. */
  private tableArr(id: number, adj: boolean): string {
    const tb = this.tables[id]!
    let lo = Infinity,
      hi = -Infinity
    for (const e of tb) {
      if (e < lo) lo = e
      if (e > hi) hi = e
    }
    return this.arr(lo, hi, adj)
  }

  private naryForward(t: Tmpl, P: Aff[]): string {
    const n = t.n!
    let term: string,
      pre = ''
    if (t.table === undefined) {
      const x = this.term(P[1]!, t.sa!, n, false)
      if (t.op === Op.Sum) term = x
      else if (t.op === Op.Dot) term = `${x} * ${this.term(P[2]!, t.sb!, n, false)}`
      else term = `C[${this.str(P[2]!)} + j] * ${x}`
    } else {
      const va = this.tableArr(t.table, false)
      pre = `const tb = T[${t.table}]; `
      if (t.op === Op.Sum) term = `${va}[tb[j]]`
      else if (t.op === Op.Dot) term = `${va}[tb[2 * j]] * ${va}[tb[2 * j + 1]]`
      else term = `C[${this.str(P[1]!)} + j] * ${va}[tb[j]]`
    }
    return `{ ${pre}let s = 0; for (let j = 0; j < ${n}; j++) s += ${term}; ${this.V(P[0]!)} = s; }\n`
  }

  /** The reverse step of one instruction: push its adjoint along its edges. */
  private rev(it: Ins<Tmpl>, P: Aff[]): string {
    const t = it.tmpl
    if (!t.live || t.op === 0 || t.op === Op.Const) return ''
    if (t.op === Op.Sum || t.op === Op.Dot || t.op === Op.Linear) return this.naryReverse(t, P)
    const bin = BINARY.has(t.op)
    const o = this.V(P[0]!),
      a = this.V(P[1]!),
      b = bin ? this.V(P[2]!) : ''
    const ga = this.G(P[1]!),
      gb = bin ? this.G(P[2]!) : ''
    const setA = (t.flags & 1) !== 0,
      setB = (t.flags & 2) !== 0
    // a carried adjoint restarts at zero every iteration and always adds; a body's own locals (`m`,
    // `n`) take their first contribution by assignment, as the arrays do (they are read by this
    // iteration only, so its first contribution there is the node's first)
    const isLocal = (target: string) => /^b\d+$/.test(target)
    const e = (target: string, set: boolean, val: string) => `${target} ${set && !isLocal(target) ? '=' : '+='} ${val};`
    let pre = '',
      body: string
    switch (t.op) {
      case Op.Neg:
        body = e(ga, setA, '-gi')
        break
      case Op.Scale:
        body = e(ga, setA, `gi * ${this.k(P[2]!)}`)
        break
      case Op.Offset:
        body = e(ga, setA, 'gi')
        break
      case Op.Add:
        body = e(ga, setA, 'gi') + e(gb, setB, 'gi')
        break
      case Op.Sub:
        body = e(ga, setA, 'gi') + e(gb, setB, '-gi')
        break
      case Op.Mul:
        body = e(ga, setA, `gi * ${b}`) + e(gb, setB, `gi * ${a}`)
        break
      case Op.Div:
        pre = `const y = ${b}; `
        body = e(ga, setA, 'gi * (1 / y)') + e(gb, setB, `gi * (-${o} / y)`)
        break
      case Op.AddScaled:
        body = e(ga, setA, 'gi') + e(gb, setB, `gi * ${this.k(P[3]!)}`)
        break
      case Op.Combine:
        body = e(ga, setA, `gi * ${this.k(P[3]!)}`) + e(gb, setB, `gi * ${this.k(P[4]!)}`)
        break
      case Op.Square:
        body = e(ga, setA, `gi * (2 * ${a})`)
        break
      case Op.Inv:
        pre = `const r = ${o}; `
        body = e(ga, setA, 'gi * (-r * r)')
        break
      case Op.PowConst:
        pre = `const p = ${this.k(P[2]!)}; `
        body = e(ga, setA, `gi * (p === 0 ? 0 : p * Math.pow(${a}, p - 1))`)
        break
      case Op.Pow:
        pre = `const x = ${a}, p = ${b}; `
        body = e(ga, setA, 'gi * (p * Math.pow(x, p - 1))') + e(gb, setB, `gi * (x > 0 ? ${o} * Math.log(x) : 0)`)
        break
      case Op.Sin:
        body = e(ga, setA, `gi * Math.cos(${a})`)
        break
      case Op.Cos:
        body = e(ga, setA, `gi * -Math.sin(${a})`)
        break
      case Op.Tan:
        pre = `const r = ${o}; `
        body = e(ga, setA, 'gi * (1 + r * r)')
        break
      case Op.Exp:
        body = e(ga, setA, `gi * ${o}`)
        break
      case Op.Log:
        body = e(ga, setA, `gi * (1 / ${a})`)
        break
      case Op.Sqrt:
        body = e(ga, setA, `gi * (0.5 / ${o})`)
        break
      case Op.Sinh:
        body = e(ga, setA, `gi * Math.cosh(${a})`)
        break
      case Op.Cosh:
        body = e(ga, setA, `gi * Math.sinh(${a})`)
        break
      case Op.Tanh:
        pre = `const r = ${o}; `
        body = e(ga, setA, 'gi * (1 - r * r)')
        break
      case Op.Asin:
        pre = `const x = ${a}; `
        body = e(ga, setA, 'gi * (1 / Math.sqrt(1 - x * x))')
        break
      case Op.Acos:
        pre = `const x = ${a}; `
        body = e(ga, setA, 'gi * (-1 / Math.sqrt(1 - x * x))')
        break
      case Op.Atan:
        pre = `const x = ${a}; `
        body = e(ga, setA, 'gi * (1 / (1 + x * x))')
        break
      case Op.Abs:
        pre = `const x = ${a}; `
        body = e(ga, setA, 'gi * (x > 0 ? 1 : x < 0 ? -1 : 0)')
        break
      case Op.Atan2:
        pre = `const y = ${a}, x = ${b}, r = x * x + y * y; `
        body = e(ga, setA, 'gi * (x / r)') + e(gb, setB, 'gi * (-y / r)')
        break
      case Op.Min:
        pre = `const f = ${a} <= ${b}; `
        body = e(ga, setA, 'gi * (f ? 1 : 0)') + e(gb, setB, 'gi * (f ? 0 : 1)')
        break
      case Op.Max:
        pre = `const f = ${a} >= ${b}; `
        body = e(ga, setA, 'gi * (f ? 1 : 0)') + e(gb, setB, 'gi * (f ? 0 : 1)')
        break
      default:
        throw new Error(`unknown opcode ${t.op}`)
    }
    // constant partials: a zero adjoint contributes zeros, no test needed
    if (this.finite && LINEAR.has(t.op)) return `{ ${this.readAdj(P[0]!)} ${body} }\n`
    // otherwise a zero adjoint is not propagated (as in the interpreter: 0 · ∞ would be NaN), and
    // first contributions are then zeros
    const zeros = (setA && !isLocal(ga) ? `${ga} = 0;` : '') + (setB && bin && !isLocal(gb) ? `${gb} = 0;` : '')
    return `{ ${this.readAdj(P[0]!)} if (gi !== 0) { ${pre}${body} }${zeros ? ` else { ${zeros} }` : ''} }\n`
  }

  private naryReverse(t: Tmpl, P: Aff[]): string {
    const n = t.n!
    const opA = t.ma === 0 ? '=' : '+=',
      opB = t.mb === 0 ? '=' : '+='
    let pre = '',
      body: string,
      zeroA: string,
      zeroB = ''
    if (t.table === undefined) {
      const ga = this.term(P[1]!, t.sa!, n, true)
      zeroA = `${ga} = 0;`
      if (t.op === Op.Sum) body = `${ga} ${opA} gi;`
      else if (t.op === Op.Dot) {
        const gb = this.term(P[2]!, t.sb!, n, true)
        body = `const x = ${this.term(P[1]!, t.sa!, n, false)}, y = ${this.term(P[2]!, t.sb!, n, false)}; ${ga} ${opA} gi * y; ${gb} ${opB} gi * x;`
        zeroB = `${gb} = 0;`
      } else body = `${ga} ${opA} gi * C[${this.str(P[2]!)} + j];`
    } else {
      const va = this.tableArr(t.table, false),
        ga = this.tableArr(t.table, true)
      pre = `const tb = T[${t.table}]; `
      if (t.op === Op.Sum) {
        body = `${ga}[tb[j]] ${opA} gi;`
        zeroA = `${ga}[tb[j]] = 0;`
      } else if (t.op === Op.Dot) {
        body = `const a = tb[2 * j], b = tb[2 * j + 1], x = ${va}[a], y = ${va}[b]; ${ga}[a] ${opA} gi * y; ${ga}[b] ${opB} gi * x;`
        zeroA = `${ga}[tb[2 * j]] = 0;`
        zeroB = `${ga}[tb[2 * j + 1]] = 0;`
      } else {
        body = `${ga}[tb[j]] ${opA} gi * C[${this.str(P[1]!)} + j];`
        zeroA = `${ga}[tb[j]] = 0;`
      }
    }
    // mixed lists: their first contributions are zeroed first (also when the adjoint is zero)
    const zeroFirst =
      t.zero === undefined
        ? ''
        : `{ const zt = T[${t.zero}]; for (let j = 0; j < zt.length; j++) ${this.tableArr(t.zero, true)}[zt[j]] = 0; } `
    const gi = this.readAdj(P[0]!)
    if (this.finite && LINEAR.has(t.op))
      return `{ ${zeroFirst}${gi} ${pre}for (let j = 0; j < ${n}; j++) { ${body} } }\n`
    const onZeroBody = (t.ma === 0 ? zeroA : '') + (t.op === Op.Dot && t.mb === 0 ? zeroB : '')
    const onZero = onZeroBody ? ` else { ${pre}for (let j = 0; j < ${n}; j++) { ${onZeroBody} } }` : ''
    return `{ ${zeroFirst}${gi} if (gi !== 0) { ${pre}for (let j = 0; j < ${n}; j++) { ${body} } }${onZero} }\n`
  }
}

/** The parameter positions of an instruction that are node operands (not its output, not constants). */
function operandSlots(t: Tmpl): number[] {
  if (t.op === 0) return t.flags === 1 ? [0] : [0, 1]
  if (t.op === Op.Const) return []
  if (t.op === Op.Sum || t.op === Op.Dot || t.op === Op.Linear) return []
  return BINARY.has(t.op) ? [1, 2] : [1]
}
