/**
 * Lane quads: a map loop in lanes (see \`map-lanes.ts\`) whose body runs a series — a `while` with
 * a varying condition at its top level, such as the Bessel batch's `for i in 0..len(z) {
 * ibesselj(out[i], nu, z[i]) }` — runs two pairs of iterations at once, i, i + 1 in one f64x2 and
 * i + 2, i + 3 in another, and their `while` loops as one joint loop:
 *
 *     P(A); P(B)                        (the statements before: each copy's; uniform ones once)
 *     loop {
 *       act_A &= c(A); act_B &= c(B)    (each copy's lanes still running)
 *       if none of the four runs: leave
 *       if act_A has a lane: B(A)      (the body under A's mask, as the pair loop runs it)
 *       if act_B has a lane: B(B)
 *     }
 *     Q(A); Q(B)
 *
 * Why: a series whose next term waits for a division of the last one (the paper's approximate
 * multiplier, \`anc += out·x; out -= anc/x\`) runs at the latency of that chain; the pair loop has
 * two chains in flight in one f64x2, and the joint loop two f64x2 chains, which the divider
 * overlaps. This is the lanes' form of pass \`pair-series\` of \`@tenet/ir\` (the cpu backend's).
 *
 * Exactness: each copy runs the pair loop's code on its own lanes and locals (its own loop-uniform
 * scalars, its own frozen copies of what the loop carries), in the same order within the copy, so
 * every lane computes the scalar loop's doubles. A copy's condition, once false in a lane, stays
 * false there: the lane's values change only while it runs (the pair loop's own argument for
 * leaving a lane for good). A copy none of whose lanes runs is skipped, so it computes nothing
 * past its end (no index of a finished series is formed). Statements that touch no varying value
 * run once, for all four lanes, as they run once per pair.
 *
 * Applies (\`laneQuads\`) only where the copies share nothing but uniform values: every top-level
 * statement of the body that touches a varying value writes only varying names and names it
 * allocates itself (so running it once per copy writes nothing twice); the plan has no blocks,
 * block elements, gathers or accumulators (whose addressing is per pair); the body has no sin or
 * cos (whose lane pairs a run shares); and some top-level `while` has a varying condition (the
 * series the quads are for), touching at most \`LANE_QUADS_MAX_VALUES\` varying names. The code generator runs the quads while four iterations are left,
 * then the pair loop and the scalar loop for the rest (upwards or downwards: with nothing written
 * that two iterations share, their order does not matter).
 */
import type { Arg, Expr, Stmt } from '@tenet/ir'
import { stmtExprs } from '@tenet/ir/backend'
import { type MapLanesPlan, reads, readsVarying, writtenNames } from './map-lanes.js'

/** The top-level statements of a body, \`@unchecked\` blocks opened. */
function opened(body: readonly Stmt[]): Stmt[] {
  return body.flatMap((s) => (s.kind === 'unchecked' ? opened(s.body) : [s]))
}

/** Every statement of a body, nested ones included. */
function nested(body: readonly Stmt[], f: (s: Stmt) => void): void {
  for (const s of body) {
    f(s)
    if (s.kind === 'if') {
      nested(s.then, f)
      nested(s.else, f)
    } else if (s.kind === 'while' || s.kind === 'for' || s.kind === 'unchecked') nested(s.body, f)
  }
}

/** Whether an expression calls \`sin\` or \`cos\` anywhere in it. */
function callsTrig(e: Expr | Arg): boolean {
  switch (e.kind) {
    case 'call':
      return e.callee === 'sin' || e.callee === 'cos' || e.args.some((a) => callsTrig(a))
    case 'unary':
      return callsTrig(e.arg)
    case 'binary':
      return callsTrig(e.left) || callsTrig(e.right)
    case 'index':
      return callsTrig(e.index)
    case 'neg':
    case 'field':
      return callsTrig(e.target)
    default:
      return false
  }
}

/**
 * Whether a top-level statement of a map body runs in lanes (the code generator's test): it reads
 * or writes a varying name, at any depth.
 */
export function touchesVarying(s: Stmt, plan: MapLanesPlan): boolean {
  for (const n of writtenNames(s)) if (plan.varying.has(n)) return true
  let found = false
  nested([s], (x) => {
    if (found) return
    if (stmtExprs(x).some((e) => readsVarying(e, plan.varying))) found = true
    else if (x.kind === 'dealloc' && plan.varying.has(x.name)) found = true
  })
  return found
}

/** Whether a `while` statement's condition is varying (the series a joint loop runs). */
export function varyingWhile(s: Stmt, plan: MapLanesPlan): s is Extract<Stmt, { kind: 'while' }> {
  return s.kind === 'while' && readsVarying(s.pre, plan.varying)
}

/**
 * The most varying names (read or written, the loop-uniform counter included) a series' \`while\`
 * may touch for lane quads: each copy keeps its lanes of them in f64x2 registers while the joint
 * loop runs, and x64 has 16. The Bessel series touches 6 (its four terms and residues, (z/2)², k);
 * its tangent, 9 to 11, and the tangent of its adjoint 19, whose quads ran slower than pairs (the
 * Hessian-vector product of the Bessel batch: 1.07–1.34× the time with quads on every series).
 */
export const LANE_QUADS_MAX_VALUES = 6

/** How many varying names a \`while\` reads or writes, nested statements included. */
export function whileValues(s: Stmt, plan: MapLanesPlan): number {
  const names = new Set<string>()
  nested([s], (x) => {
    for (const e of stmtExprs(x)) reads(e, names)
    for (const n of writtenNames(x)) names.add(n)
  })
  let count = 0
  for (const n of names) if (plan.varying.has(n)) count++
  return count
}

/** Whether a map-lanes plan runs two pairs at a time with joint series (see the module comment). */
export function laneQuads(plan: MapLanesPlan, maxValues = LANE_QUADS_MAX_VALUES): boolean {
  if (
    plan.blocks.length ||
    plan.blockElements.length ||
    plan.gathers.length ||
    plan.accumulators.length ||
    plan.blockWrites.length
  )
    return false
  let trig = false
  nested(plan.body, (s) => {
    if (!trig && stmtExprs(s).some((e) => callsTrig(e))) trig = true
  })
  if (trig) return false
  const top = opened(plan.body)
  if (!top.some((s) => varyingWhile(s, plan))) return false
  // (few enough lane values for two copies of the loop to stay in registers)
  for (const s of top) if (varyingWhile(s, plan) && whileValues(s, plan) > maxValues) return false
  for (const s of top) {
    if (!touchesVarying(s, plan)) continue
    // the names it allocates inside itself (each emission has its own)
    const own = new Set<string>()
    nested([s], (x) => {
      if (x !== s && x.kind === 'alloc') own.add(x.name)
    })
    // (a \`for\` inside counts with a variable of its own, which it declares)
    for (const n of writtenNames(s)) if (!plan.varying.has(n) && !own.has(n)) return false
  }
  return true
}
