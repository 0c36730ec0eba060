/**
 * Value holders: the updates `y += e` (`y −= e`) of a function whose target `y` is provably zero
 * every time the update runs, so that right after it `y` holds `e` (`−e`). The adjoint transform
 * uses them (see `FunctionAdjoint.update`): the partial derivatives of `e` often contain `e`
 * itself (`∂ tanh(x) = 1 − tanh(x)²`, `∂ exp(x) = exp(x)`, `∂ sqrt(x) = 0.5 / sqrt(x)`), and the
 * adjoint of the update runs where the values are those just after the update, so it can read `y`
 * instead of evaluating `e` again. A history array filled once by a loop nest (an RNN's hidden
 * states `h[(t + 1) * H + i] += tanh(pre[t * H + i])`, a trajectory of `exp` or `sqrt` values) no
 * longer recomputes its transcendental functions in the backward sweep.
 *
 * An update `S` is a holder when its target is
 *
 * - a scalar f64 ancilla `x <- 0.0` and `S` is the first statement after the allocation, in the
 *   same block, that writes `x` (`x += e` or `x −= e`); or
 * - an element `A[idx]` of an f64 array ancilla `A <- zeros(n)`, `S` lies in the first statement
 *   after the allocation (in its block) that writes `A`, is the only statement there that writes
 *   `A`, and is reached from there through `for` loops (and `if` / `@unchecked` blocks) whose
 *   iterations write distinct elements: every loop's step is 1 or −1, its bounds are integer
 *   polynomials of names that nothing in the nest writes, and `idx = Σ c_v·v + r` is linear in
 *   the loop variables v with coefficients forming mixed radices — in some order of the loops
 *   (nesting order, or its reverse) the last coefficient is a positive constant and each
 *   coefficient exceeds by a positive constant the sum of `c_u · span_u` over the loops after
 *   it (`span_u` the largest difference of two values of u). Then two iterations that first
 *   differ at loop v differ in idx by at least `c_v − Σ c_u·span_u > 0`, so `S` writes each
 *   element at most once, and before it nothing wrote it: it held the zero of the allocation.
 *
 * Every coefficient must be an i32 as written (`65536 * 65536` is 0 in i32 arithmetic: refused).
 * The update must not sit under an `if` inside the nest: the argument above takes the index as an
 * exact integer, and i32 indices wrap, so two iterations whose exact indices differ by a multiple
 * of 2³² write one element; where every iteration writes, the wrapped index of one of them is
 * out of bounds (the arrays of the host boundary hold at most 2³¹ − 1 elements), and an `if`
 * could skip exactly those iterations.
 *
 * Exactness: after `S`, `y = 0 + e` is `e` bit for bit except that −0 becomes +0 (for `−=`:
 * `y = 0 − e`, read back as `0 − y`, the same caveat). The adjoint reads `y` where it would evaluate `e` on the values
 * of that point; in exact arithmetic they agree, in floating point `y` holds `e` as computed when
 * `y` was last written — the recomputed values differ only by the drift that `grad`'s uncompute
 * check measures.
 */
import type { Expr, ForStmt, Stmt } from '@tenet/ir'
import {
  addPoly,
  atomChanges,
  mulPoly,
  type Poly,
  polynomial,
  resizedNames,
  rootName,
  writtenNames,
} from '@tenet/ir/backend'

/** An update statement. */
export type UpdateStmt = Extract<Stmt, { kind: 'update' }>

const atoms = (p: Poly): string[] => [...p.keys()].flatMap((m) => (m ? m.split('*') : []))

/** `len(a)` as an atom of its own (an array's length never changes). */
const withLen = (e: Expr): Poly | undefined =>
  polynomial(e, (x) =>
    x.kind === 'call' && x.callee === 'len' && x.args.length === 1 && x.args[0]?.kind === 'var'
      ? new Map([[`len(${x.args[0].name})`, 1]])
      : undefined,
  )

/** A positive integer constant. */
const positiveConstant = (p: Poly): boolean => p.size === 1 && (p.get('') ?? 0) > 0

const isZero = (e: Expr | Extract<Stmt, { kind: 'alloc' }>['value']): boolean => e.kind === 'num' && e.value === 0

/** What the analysis needs of the program: which functions have host effects, which parameters each writes. */
export interface HolderContext {
  effectful: ReadonlySet<string>
  writes: ReadonlyMap<string, readonly boolean[]>
}

/** The value holders of `body` (see the module comment), by identity of their update statements. */
export function valueHolders(body: Stmt[], cx: HolderContext): Set<UpdateStmt> {
  const out = new Set<UpdateStmt>()
  const written = (s: Stmt): Set<string> | undefined => writtenNames([s], cx.effectful, cx.writes)
  const block = (b: Stmt[]): void => {
    b.forEach((s, i) => {
      if (s.kind === 'alloc') {
        const t = s.type ?? s.declared
        if (t?.kind === 'scalar' && t.name === 'f64' && isZero(s.value)) scalar(b, i, s.name)
        else if (
          t?.kind === 'array' &&
          t.elem === 'f64' &&
          s.value.kind === 'call' &&
          s.value.callee === 'zeros' &&
          s.value.args.length === 1
        )
          array(b, i, s.name)
      }
      switch (s.kind) {
        case 'if':
          block(s.then)
          block(s.else)
          break
        case 'for':
        case 'while':
        case 'unchecked':
          block(s.body)
          break
      }
    })
  }
  const scalar = (b: Stmt[], i: number, name: string): void => {
    for (let j = i + 1; j < b.length; j++) {
      const x = b[j]!
      if (x.kind === 'update' && x.target.kind === 'var' && x.target.name === name) {
        if (x.op === '+=' || x.op === '-=') out.add(x)
        return
      }
      const w = written(x)
      if (!w || w.has(name)) return
    }
  }
  const array = (b: Stmt[], i: number, name: string): void => {
    for (let j = i + 1; j < b.length; j++) {
      const w = written(b[j]!)
      if (!w) return
      if (!w.has(name)) continue
      const s = onlyWriter(b[j]!, name)
      if (s) out.add(s)
      return
    }
  }
  /** The single update of `nest` that writes `name`, when its iterations write distinct elements. */
  const onlyWriter = (nest: Stmt, name: string): UpdateStmt | undefined => {
    const writesName = (y: Stmt): boolean => {
      const w = written(y)
      return !w || w.has(name)
    }
    let found: { s: UpdateStmt; loops: ForStmt[] } | undefined
    let ok = true
    const visit = (stmts: Stmt[], loops: ForStmt[]): void => {
      for (const y of stmts) {
        if (!ok) return
        switch (y.kind) {
          case 'update':
            if (rootName(y.target) === name) {
              if (found) ok = false
              else found = { s: y, loops }
            }
            break
          case 'for':
            visit(y.body, [...loops, y])
            break
          case 'if':
            // (a write under an \`if\` is refused: see the module comment)
            if (writesName(y)) ok = false
            break
          case 'unchecked':
            visit(y.body, loops)
            break
          default: {
            const w = written(y)
            if (!w || w.has(name)) ok = false
          }
        }
      }
    }
    visit([nest], [])
    if (!ok || !found) return undefined
    const { s, loops } = found
    if ((s.op !== '+=' && s.op !== '-=') || s.target.kind !== 'index' || s.target.array.name !== name) return undefined
    const nestWritten = written(nest)
    if (!nestWritten) return undefined
    // (len(X) changes only where the nest allocates X again)
    const nestResized = resizedNames([nest])
    const invariant = (p: Poly) => atoms(p).every((a) => !atomChanges(a, nestWritten, nestResized))
    const vars = loops.map((l) => l.variable)
    const spans: Poly[] = []
    for (const l of loops) {
      const step = l.step ? withLen(l.step) : new Map([['', 1]])
      const start = withLen(l.start),
        stop = withLen(l.stop)
      if (!step || !start || !stop || !invariant(start) || !invariant(stop)) return undefined
      const dir = step.size === 1 ? step.get('') : undefined
      if (dir !== 1 && dir !== -1) return undefined
      const diff = dir === 1 ? addPoly(stop, start, -1) : addPoly(start, stop, -1)
      spans.push(l.inclusive ? diff : addPoly(diff, new Map([['', 1]]), -1))
    }
    const idx = withLen(s.target.index)
    if (!idx) return undefined
    // idx = Σ c_v·v + r, linear in the loop variables
    const coef = new Map<string, Poly>()
    let rest: Poly = new Map()
    for (const [m, c] of idx) {
      const factors = m ? m.split('*') : []
      const inLoop = factors.filter((f) => vars.includes(f))
      if (inLoop.length > 1) return undefined
      const others: Poly = new Map([[factors.filter((f) => !vars.includes(f)).join('*'), c]])
      if (inLoop.length === 0) rest = addPoly(rest, others)
      else coef.set(inLoop[0]!, addPoly(coef.get(inLoop[0]!) ?? new Map(), others))
    }
    if (!invariant(rest) || [...coef.values()].some((p) => !invariant(p))) return undefined
    if (vars.some((v) => (coef.get(v)?.size ?? 0) === 0)) return undefined
    // (each coefficient an i32 value as the program computes it: \`65536 * 65536 * k\` is 0 · k)
    if ([...coef.values()].some((p) => [...p.values()].some((c) => c !== (c | 0)))) return undefined
    const radices = (order: number[]): boolean => {
      let sum: Poly = new Map()
      for (let k = order.length - 1; k >= 0; k--) {
        const c = coef.get(vars[order[k]!]!)!
        if (!positiveConstant(addPoly(c, sum, -1))) return false
        sum = addPoly(sum, mulPoly(c, spans[order[k]!]!))
      }
      return true
    }
    const order = vars.map((_, k) => k)
    return radices(order) || radices([...order].reverse()) ? s : undefined
  }
  block(body)
  return out
}
