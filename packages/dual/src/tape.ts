/**
 * The arena of one differentiated call: every scalar the call computes is a node, numbered by a
 * per-call counter, with its value and its contribution edges (which earlier nodes it was computed
 * from, and the local partial derivative along each edge). Edges are stored structure-of-arrays in
 * typed arrays: two inline slots per node (enough for every unary and binary operation), and a
 * spill area for n-ary nodes (sums, dot products, registry primitives of higher arity). The arrays
 * grow by doubling and are kept between calls, so a call that fits allocates nothing.
 *
 * The reverse sweep walks the nodes from the highest id down: a node's adjoint is complete when the
 * sweep reaches it, because every node that read it was created later (has a higher id). This is
 * seed 003's "resolve from the highest ID" and replaces a topological sort.
 */
import { DualError } from './errors.js'

/**
 * A differentiable scalar inside a dual-engine function: a small integer handle into the arena of
 * the current call (not its value: read that with `d.value(x)`). The brand keeps plain numbers from
 * being passed where a handle is expected; use `d.constant(c)` (or `d.scale`, `d.offset`) for
 * constants.
 */
export type Real = number & { readonly __tenetDualReal: unique symbol }

/**
 * Handles are offset so that a stray plain number (0, 1, 2.5) is never a valid handle. 2²⁹ keeps
 * every handle a small integer (V8 Smis are 31-bit with pointer compression): a handle never boxes.
 */
export const HANDLE_BASE = 1 << 29

/** `t0[i]` markers: no edges, spilled edges, a custom rule. Non-negative values are node indices. */
export const NO_EDGES = -1
export const SPILLED = -2
export const CUSTOM = -3

/** A custom rule's pullback for one call: reads output cotangents, accumulates input cotangents. */
export type Pullback = (ybar: Float64Array, xbar: Float64Array) => void

/**
 * A primitive given by its own forward and reverse rule (the shape of JAX's `custom_vjp` and
 * ChainRules' `rrule`): `forward` computes the outputs from the inputs; the reverse rule maps the
 * outputs' cotangents to the inputs' cotangents. Inside a dual-engine function it is one node: its
 * internals are never recorded. See `defineRule`.
 */
export interface DualRule {
  /** For error messages. */
  readonly name: string
  /** Number of scalar inputs. */
  readonly inputs: number
  /** Number of scalar outputs. */
  readonly outputs: number
  /**
   * Writes the outputs for the inputs `x` into `y`. May return a pullback for this call (closing
   * over residuals); otherwise the rule's `pullback` is used.
   */
  forward(x: Float64Array, y: Float64Array): Pullback | void
  /**
   * The reverse rule when `forward` returns none: given the inputs `x`, the outputs `y` and the
   * outputs' cotangents `ybar`, adds the inputs' cotangents into `xbar` (which arrives zeroed).
   */
  pullback?(x: Float64Array, y: Float64Array, ybar: Float64Array, xbar: Float64Array): void
}

/** A rule with its scratch buffers (owned by the rule object, reused by every call). */
interface RuleScratch {
  x: Float64Array
  y: Float64Array
  ybar: Float64Array
  xbar: Float64Array
}
const scratch = new WeakMap<DualRule, RuleScratch>()
function scratchOf(rule: DualRule): RuleScratch {
  let s = scratch.get(rule)
  if (!s) {
    s = {
      x: new Float64Array(rule.inputs),
      y: new Float64Array(rule.outputs),
      ybar: new Float64Array(rule.outputs),
      xbar: new Float64Array(rule.inputs),
    }
    scratch.set(rule, s)
  }
  return s
}

const INITIAL_NODES = 1024
const INITIAL_SPILL = 1024

/**
 * The per-call arena and the reverse sweep. Users meet it as the first argument `d` of a
 * dual-engine function (see `Dual`); `grad`, `vjp` and friends drive it.
 */
export class Tape {
  /** Node values. */
  val: Float64Array
  /** First edge: target node index, or `NO_EDGES` / `SPILLED` / `CUSTOM`. */
  t0: Int32Array
  /** First edge's partial. */
  p0: Float64Array
  /** Second edge: target node index, or -1; for `SPILLED`/`CUSTOM` nodes, the record's start. */
  t1: Int32Array
  /** Second edge's partial. */
  p1: Float64Array
  /** Adjoints, filled by `sweep`. */
  adj: Float64Array
  /** Spilled edges of n-ary nodes: at a record's start, the edge count; then the edges. */
  spillT: Int32Array
  spillP: Float64Array
  /** Custom-rule calls: the rule and its pullback closure (if `forward` returned one). */
  rules: Array<DualRule | undefined> = []
  pullbacks: Array<Pullback | undefined> = []
  /** Number of nodes (the per-call id counter). */
  top = 0
  /** Nodes below this index are inputs (no edges): the sweep stops here. */
  floor = 0
  spillTop = 0
  ruleTop = 0
  /** Edges followed by the last sweep (an operation count, for tests). */
  edgesSwept = 0
  /** Bumped by `reset`: pullbacks handed out for an earlier call refuse to run. */
  generation = 0
  private cap: number

  constructor(nodes = INITIAL_NODES) {
    this.cap = nodes
    this.val = new Float64Array(nodes)
    this.t0 = new Int32Array(nodes)
    this.p0 = new Float64Array(nodes)
    this.t1 = new Int32Array(nodes)
    this.p1 = new Float64Array(nodes)
    this.adj = new Float64Array(nodes)
    this.spillT = new Int32Array(INITIAL_SPILL)
    this.spillP = new Float64Array(INITIAL_SPILL)
  }

  /** Starts a new call: forgets every node (the arrays are kept). */
  reset(): void {
    this.top = 0
    this.floor = 0
    this.spillTop = 0
    for (let i = 0; i < this.ruleTop; i++) {
      this.rules[i] = undefined
      this.pullbacks[i] = undefined
    }
    this.ruleTop = 0
    this.generation++
  }

  /** Doubles the node arrays (keeping their contents). */
  grow(): void {
    const cap = this.cap * 2
    if (cap > HANDLE_BASE)
      throw new DualError(
        'dual/too-large',
        `a call of more than ${HANDLE_BASE} scalar operations does not fit the arena`,
      )
    const f = (a: Float64Array) => {
      const b = new Float64Array(cap)
      b.set(a)
      return b
    }
    const n = (a: Int32Array) => {
      const b = new Int32Array(cap)
      b.set(a)
      return b
    }
    this.val = f(this.val)
    this.p0 = f(this.p0)
    this.p1 = f(this.p1)
    this.adj = new Float64Array(cap)
    this.t0 = n(this.t0)
    this.t1 = n(this.t1)
    this.cap = cap
  }

  /** Makes room for `k` more spilled entries. */
  reserveSpill(k: number): void {
    if (this.spillTop + k <= this.spillT.length) return
    let cap = this.spillT.length * 2
    while (cap < this.spillTop + k) cap *= 2
    const t = new Int32Array(cap)
    t.set(this.spillT)
    this.spillT = t
    const p = new Float64Array(cap)
    p.set(this.spillP)
    this.spillP = p
  }

  /**
   * Claims the next node index (growing the arena when full) and returns it; the caller writes the
   * node's value and edges. Ops write the typed arrays themselves rather than passing doubles to a
   * helper: a double argument of a call V8 does not inline is boxed, one allocation per operation.
   */
  next(): number {
    const i = this.top
    if (i === this.cap) this.grow()
    this.top = i + 1
    return i
  }

  /** Writes a one-edge node's edge (small-integer partials only: see `next`). */
  edge1(i: number, a: number, pa: number): Real {
    this.t0[i] = a
    this.p0[i] = pa
    this.t1[i] = -1
    return (i + HANDLE_BASE) as Real
  }

  /** Writes a two-edge node's edges (small-integer partials only: see `next`). */
  edges2(i: number, a: number, pa: number, b: number, pb: number): Real {
    this.t0[i] = a
    this.p0[i] = pa
    this.t1[i] = b
    this.p1[i] = pb
    return (i + HANDLE_BASE) as Real
  }

  /** Records the values of `v` as `v.length` input nodes (no edges); returns the first index. */
  inputs(v: Float64Array): number {
    const i = this.top,
      n = v.length
    while (i + n > this.cap) this.grow()
    const val = this.val,
      t0 = this.t0
    if (n <= 32) {
      // a builtin call costs more than a short loop
      for (let k = 0; k < n; k++) {
        val[i + k] = v[k]!
        t0[i + k] = NO_EDGES
      }
    } else {
      val.set(v, i)
      t0.fill(NO_EDGES, i, i + n)
    }
    this.top = i + n
    return i
  }

  /** A node with no edges (an input or a constant). */
  leaf(v: number): Real {
    const i = this.top
    if (i === this.cap) this.grow()
    this.val[i] = v
    this.t0[i] = NO_EDGES
    this.top = i + 1
    return (i + HANDLE_BASE) as Real
  }

  /** A node with one edge: value `v`, ∂v/∂a = `pa`. */
  unary(v: number, a: number, pa: number): Real {
    const i = this.top
    if (i === this.cap) this.grow()
    this.val[i] = v
    this.t0[i] = a
    this.p0[i] = pa
    this.t1[i] = -1
    this.top = i + 1
    return (i + HANDLE_BASE) as Real
  }

  /** A node with two edges (node indices `a`, `b`, partials `pa`, `pb`). */
  binary(v: number, a: number, pa: number, b: number, pb: number): Real {
    const i = this.top
    if (i === this.cap) this.grow()
    this.val[i] = v
    this.t0[i] = a
    this.p0[i] = pa
    this.t1[i] = b
    this.p1[i] = pb
    this.top = i + 1
    return (i + HANDLE_BASE) as Real
  }

  /**
   * Opens an n-ary node of `n` edges: returns the spill index of its first edge; write the edges
   * with `spillT[k]`/`spillP[k]` for k in [start, start + n), then call `closeSpilled(v, start)`.
   */
  openSpilled(n: number): number {
    this.reserveSpill(n + 1)
    const s = this.spillTop
    this.spillT[s] = n
    this.spillTop = s + n + 1
    return s + 1
  }

  /** Closes the n-ary node opened by `openSpilled` with value `v`. */
  closeSpilled(v: number, start: number): Real {
    const i = this.top
    if (i === this.cap) this.grow()
    this.val[i] = v
    this.t0[i] = SPILLED
    this.t1[i] = start - 1
    this.top = i + 1
    return (i + HANDLE_BASE) as Real
  }

  /**
   * Calls a custom rule on the nodes `xs` (handles): records one node per output, the last of
   * which carries the rule; writes the output handles into `ys` and returns it.
   */
  custom(rule: DualRule, xs: ArrayLike<Real>, ys: Real[]): Real[] {
    if (xs.length !== rule.inputs)
      throw new DualError('dual/rule-arity', `the rule \`${rule.name}\` takes ${rule.inputs} inputs, got ${xs.length}`)
    const s = scratchOf(rule)
    const val = this.val
    for (let k = 0; k < rule.inputs; k++) s.x[k] = val[xs[k]! - HANDLE_BASE]!
    const pb = rule.forward(s.x, s.y)
    if (!pb && !rule.pullback)
      throw new DualError(
        'dual/rule-no-pullback',
        `the rule \`${rule.name}\` returned no pullback from \`forward\` and has no \`pullback\``,
      )
    // inputs in the spill area: [count, inputs…]
    this.reserveSpill(rule.inputs + 1)
    const start = this.spillTop
    this.spillT[start] = rule.inputs
    for (let k = 0; k < rule.inputs; k++) this.spillT[start + 1 + k] = xs[k]! - HANDLE_BASE
    this.spillTop = start + 1 + rule.inputs
    const r = this.ruleTop++
    this.rules[r] = rule
    this.pullbacks[r] = pb || undefined
    const m = rule.outputs
    for (let k = 0; k < m; k++) {
      const i = this.top
      if (i === this.cap) this.grow()
      this.val[i] = s.y[k]!
      if (k < m - 1) this.t0[i] = NO_EDGES
      else {
        this.t0[i] = CUSTOM
        this.t1[i] = start
        this.p1[i] = r
      }
      this.top = i + 1
      ys[k] = (i + HANDLE_BASE) as Real
    }
    return ys
  }

  /** Zeroes the adjoints of every node of this call. */
  clearAdjoints(): void {
    const top = this.top,
      adj = this.adj
    if (top <= 64) for (let i = 0; i < top; i++) adj[i] = 0
    else adj.fill(0, 0, top)
  }

  /**
   * The reverse sweep: from the highest node down, pushes each node's adjoint along its edges.
   * Seed the outputs' adjoints (after `clearAdjoints`) first; afterwards `adj[i]` is the derivative
   * of the seeded combination of outputs with respect to node i.
   */
  sweep(): void {
    const adj = this.adj,
      t0 = this.t0,
      p0 = this.p0,
      t1 = this.t1,
      p1 = this.p1
    let edges = 0
    const floor = this.floor
    for (let i = this.top - 1; i >= floor; i--) {
      const a = t0[i]!
      if (a >= 0) {
        const g = adj[i]!
        if (g === 0) continue
        adj[a] += g * p0[i]!
        const b = t1[i]!
        if (b >= 0) {
          adj[b] += g * p1[i]!
          edges += 2
        } else edges++
      } else if (a === SPILLED) {
        const g = adj[i]!
        if (g === 0) continue
        const st = this.spillT,
          sp = this.spillP
        const s = t1[i]!
        const n = st[s]!
        for (let k = s + 1; k <= s + n; k++) adj[st[k]!] += g * sp[k]!
        edges += n
      } else if (a === CUSTOM) {
        edges += this.pullCustom(i)
      }
    }
    this.edgesSwept = edges
  }

  /** Runs the pullback of the custom-rule call whose last output is node `i`. */
  private pullCustom(i: number): number {
    const r = this.p1[i]!
    const rule = this.rules[r]!
    const s = scratchOf(rule)
    const m = rule.outputs
    const first = i - m + 1
    let any = false
    for (let k = 0; k < m; k++) {
      const g = this.adj[first + k]!
      s.ybar[k] = g
      if (g !== 0) any = true
    }
    if (!any) return 0
    const st = this.spillT
    const start = this.t1[i]!
    const n = rule.inputs
    s.xbar.fill(0)
    const pb = this.pullbacks[r]
    if (pb) pb(s.ybar, s.xbar)
    else {
      for (let k = 0; k < n; k++) s.x[k] = this.val[st[start + 1 + k]!]!
      for (let k = 0; k < m; k++) s.y[k] = this.val[first + k]!
      rule.pullback!(s.x, s.y, s.ybar, s.xbar)
    }
    for (let k = 0; k < n; k++) this.adj[st[start + 1 + k]!] += s.xbar[k]!
    return n
  }
}
