/**
 * `replay-bound` (cpu code generator, run-time checks on): the replayed uncall of a fresh float
 * array ancilla (f64 or f32) whose deallocation check follows it is left out where a bound on the
 * round-off of the replay proves that check passes.
 *
 * Shape (a block of the caller, after pass `replay-uncall` of `@tenet/ir`):
 *
 * ```
 * a: f64[] <- zeros(n)          // a fresh f64 (or f32) array, exactly +0 everywhere
 * f$replay(a, x…)               // adds terms t₁ … t_N to elements of a (a[i] += $record(e)), recording them
 * …                             // statements that do not write a (nor call out)
 * ~f$replay(a, x…)              // subtracts them again, in reverse order: a[i] -= $replayed()
 * assert deallocArray($zeros(a, n))   // every |a[k]| <= tol
 * ```
 *
 * For one element k with m of the terms, the call and the replay are the recursive summation of
 * the 2m numbers ±t₁ … ±t_m, ∓t_m … ∓t₁ from an exact +0: their exact sum is 0, so the element the
 * replay leaves holds only round-off. Two bounds of it, each proved for every element at once:
 *
 * - By the terms (f64): |a[k]| <= γ₂ₘ₋₁ · 2 Σ|tⱼ| (Higham, Accuracy and Stability of Numerical
 *   Algorithms, (4.4); γₙ = n·u / (1 − n·u), u the unit round-off, 2⁻⁵³ for f64). Summed over all
 *   N terms of the call (m <= N, Σ over k's terms <= V = Σ|tⱼ| over all), with N <= 2²⁰ (so
 *   2N·u <= 1/8): |a[k]| <= (8/7)·2N·u·2V < 4.58·N·u·V. The recording function sums the
 *   magnitudes of the terms it records, and the test is \`5 · N · u · V̂ <= tol\`.
 * - By the partial sums (f32): the call computes Sⱼ = fl(Sⱼ₋₁ ± tⱼ) from S₀ = +0, the replay
 *   B₀ = Sₘ, Bᵢ = fl(Bᵢ₋₁ ∓ tₘ₊₁₋ᵢ). Each rounded sum is the exact one plus an error at most u
 *   times the rounded result (round to nearest: fl(z) = z / (1 + δ), |δ| <= u; u = 2⁻²⁴ for
 *   f32, whose sums the cpu backend rounds correctly from a double's; a sum that underflows is
 *   exact, one that overflows leaves an infinite magnitude, below): Sⱼ = Sⱼ₋₁ ± tⱼ + ηⱼ,
 *   |ηⱼ| <= u|Sⱼ|, and Bᵢ = Bᵢ₋₁ ∓ tₘ₊₁₋ᵢ + ζᵢ, |ζᵢ| <= u|Bᵢ|. Unrolled, Bₘ = Σηⱼ + Σζᵢ, and
 *   Bᵢ = Sₘ₋ᵢ + (the η of the last i terms) + (ζ₁ … ζᵢ), so with E = Σ|ηⱼ| + Σ|ζᵢ| and
 *   Q = Σⱼ|Sⱼ|: |Bᵢ| <= |Sₘ₋ᵢ| + E, E <= u·Q + u·(Q + m·E), hence |Bₘ| <= E <= 2u·Q / (1 − m·u).
 *   With m <= N <= 2²⁰ (m·u <= 1/16), every element's residual is at most (32/15)·u·P < 2.14·u·P,
 *   P the sum of the magnitudes of every partial sum of every element — the value each recorded
 *   update leaves in its element. The recording function sums those, and the test is
 *   \`3 · u · P̂ <= tol\`. This bound is at least twice as tight as the other (P <= N·V) and in
 *   practice far tighter: the float32 leapfrog's, 216 terms a step, is ~5e-9 where the terms'
 *   read 2.0e-7 to 2.8e-7 over 1000 steps, 20 to 28 times the default tolerance. f64 keeps the
 *   terms' bound, which passes wherever f64's is used here: summing the partial sums hangs each
 *   addition of the sum on the element's update, the end of the chain, and made the float64
 *   leapfrog with checks on ~5% slower.
 *
 * The sum is taken in doubles from −0 and left in \`$tv\` as the recording function returns (a
 * recording function calls nothing: V <= V̂·(1 + 2⁻³⁰), P <= P̂·(1 + 2⁻³⁰) for N <= 2²⁰), and
 * each test (a product that rounds by less than the margin; a tolerance below 1e-300 is never
 * tested, so an underflowing product cannot pass wrongly; a NaN or infinite sum fails it, the sum
 * being at most 2¹²⁷ (f32) or 2¹⁰²³ (f64) being part of the test, an infinite tolerance included)
 * proves every element within the tolerance. That limit is what keeps the model of each rounded
 * sum above true for the replay's sums too: every |Bᵢ| is at most |Sₘ₋ᵢ| + E <= P·(1 + 2.14·u)
 * (f32; V for f64), below the largest finite value, so none overflows. (Without it, a tolerance
 * of 1.2e32 or more let an f32 replay pass whose first sum, FLT_MAX + 2¹⁰³ after a tie rounded
 * up, overflowed to +∞: review 19b.) The code then zeroes \`a\` and pops the call's terms instead of replaying
 * them; the check that follows passes as it would have. Where the test fails, the replay runs as
 * before. (The caller reads \`$tv\` into a local as the call returns: a plugin primitive or
 * bijection between the call and the uncall runs JS, which may call the module and record again.)
 *
 * The checks the replay would make besides are those of `~f` that `replay-uncall` keeps: loop
 * ranges, `if` conditions and the bounds of `a[i]`. They read no element of `a` (required of
 * `f$replay` here: `a` only as an update target, `len(a)` aside) and only values that nothing
 * between the call and the uncall writes (required of `replay-uncall`), so they see what the
 * call's own checks saw, which passed; and the elements of `a` it touches are the call's, which
 * passed their bounds checks. So no check that could fail is left out, and none moves.
 */
import type { Expr, FunctionDef, Program, Stmt } from '@tenet/ir'
import {
  callsHost,
  exprChildren,
  key,
  readNames,
  REPLAY_SUFFIX,
  stmtExprs,
  walk,
  writtenNames,
} from '@tenet/ir/backend'

/** A replayed uncall that may be left out (see the module's comment). */
export interface ReplayBound {
  /** The recording call of the pair (before it, the code keeps the tape's top). */
  call: Extract<Stmt, { kind: 'callstmt' }>
  /** The local array ancilla the call adds to. */
  array: string
  /** Its element type. */
  type: 'f64' | 'f32'
}

/** Whether `e` reads an element of `name`, or `name` whole (its length aside). */
function readsElements(e: Expr, name: string): boolean {
  if (e.kind === 'var') return e.name === name
  if (e.kind === 'index' && e.array.name === name) return true
  if (e.kind === 'call' && e.callee === 'len' && e.args[0]?.kind === 'var') return false
  return exprChildren(e).some((c) => readsElements(c, name))
}

/** Whether `f` touches its parameter `a` only as the target array of updates whose index and value do not read it. */
function onlyUpdated(f: FunctionDef, a: string): boolean {
  let ok = true
  walk(f.body, (s) => {
    if (!ok) return
    if (s.kind === 'update') {
      const t = s.target
      if (t.kind === 'index' && t.array.name === a) {
        if (readsElements(t.index, a) || readsElements(s.value, a)) ok = false
      } else if (readsElements(t as Expr, a) || readsElements(s.value, a)) ok = false
      return
    }
    const exprs: Expr[] =
      s.kind === 'assert'
        ? [s.cond, ...s.args.filter((x): x is Expr => typeof x !== 'string')]
        : (stmtExprs(s) as Expr[])
    if (exprs.some((e) => readsElements(e, a))) ok = false
  })
  return ok
}

/** Whether any statement of `body` calls a function other than a bijection, or the host. */
function callsOut(body: Stmt[]): boolean {
  let out = false
  walk(body, (s) => {
    if (s.kind === 'callstmt' && s.target !== 'bijection') out = true
    const exprs = s.kind === 'assert' ? [s.cond] : stmtExprs(s)
    if (exprs.some((e) => callsHost(e as Expr))) out = true
  })
  return out
}

/** Whether `name` occurs in `s` at all (read, written, passed). */
function mentions(s: Stmt, name: string): boolean {
  let found = false
  walk([s], (x) => {
    if ((x.kind === 'alloc' || x.kind === 'dealloc') && x.name === name) found = true
    const exprs =
      x.kind === 'assert' ? [x.cond, ...x.args.filter((y): y is Expr => typeof y !== 'string')] : stmtExprs(x)
    if (exprs.some((e) => readsElements(e as Expr, name) || mentionsLength(e as Expr, name))) found = true
  })
  return found
}
function mentionsLength(e: Expr, name: string): boolean {
  if (e.kind === 'call' && e.callee === 'len' && e.args[0]?.kind === 'var' && e.args[0].name === name) return true
  return exprChildren(e).some((c) => mentionsLength(c, name))
}

/**
 * The replayed uncalls of `body` (its own statements, not those of nested blocks) that may be
 * left out where the bound passes, by uncall statement (see the module's comment).
 */
export function replayBounds(body: Stmt[], program: Program): Map<Stmt, ReplayBound> {
  const out = new Map<Stmt, ReplayBound>()
  body.forEach((s, c) => {
    if (s.kind !== 'callstmt' || s.target === 'bijection' || s.inverse || !s.callee.endsWith(REPLAY_SUFFIX)) return
    const f = program.functions.get(s.callee)
    const written = program.writes.get(s.callee)
    if (!f || !written) return
    // the one parameter the call writes: a float array
    const ps = f.params.flatMap((_, i) => (written[i] ? [i] : []))
    if (ps.length !== 1) return
    const p = ps[0]!
    const param = f.params[p]!
    const elem = param.type.kind === 'array' ? (param.type as { elem: string }).elem : undefined
    if (elem !== 'f64' && elem !== 'f32') return
    const arg = s.args[p]!
    if (arg.kind !== 'var') return
    const a = arg.name
    if (!onlyUpdated(f, param.name)) return
    // a fresh zeros allocation of a before the call, nothing in between touching it
    let k = c - 1
    while (k >= 0 && !(body[k]!.kind === 'alloc' && (body[k] as { name: string }).name === a)) {
      if (mentions(body[k]!, a)) return
      k--
    }
    const alloc = body[k]
    if (alloc?.kind !== 'alloc' || alloc.value.kind !== 'call' || alloc.value.callee !== 'zeros') return
    // the uncall: the first inverse call of the same function with the same arguments
    const args = s.args.map((x) => key(x as Expr))
    let d = c + 1
    for (; d < body.length; d++) {
      const u = body[d]!
      if (
        u.kind === 'callstmt' &&
        u.target !== 'bijection' &&
        u.inverse &&
        u.callee === s.callee &&
        u.args.length === args.length &&
        u.args.every((x, i) => key(x as Expr) === args[i])
      )
        break
    }
    if (d >= body.length) return
    const between = body.slice(c + 1, d)
    const w = writtenNames(between)
    if (!w || w.has(a) || callsOut(between)) return
    // (nor anything else the call reads: \`replay-uncall\` pairs only such calls; checked again here)
    const read = new Set<string>()
    for (const x of s.args) readNames(x, read)
    if ([...read].some((n) => n !== a && w.has(n))) return
    // the deallocation check of a right after the uncall
    const check = body[d + 1]
    if (
      check?.kind !== 'assert' ||
      check.cond.kind !== 'call' ||
      check.cond.callee !== '$zeros' ||
      check.cond.args[0]?.kind !== 'var' ||
      check.cond.args[0].name !== a
    )
      return
    out.set(body[d]!, { call: s, array: a, type: elem })
  })
  return out
}

/**
 * The test (JavaScript source) that a replay leaves every element within the tolerance (see the
 * module's comment): \`n\` the number of terms the call recorded, \`v\` the sum the recording
 * function took (\`$tv\`): of the terms' magnitudes for f64, of the partial sums' for f32;
 * \`tolerance\` the module constant.
 */
export function replayBoundTest(n: string, v: string, type: 'f64' | 'f32', tolerance: string): string {
  // (\`v <= 2^e\`: an infinite or NaN sum never passes, an infinite tolerance included, and no sum
  // of the replay can overflow where it does: review 19b)
  const head = `${n} <= 1048576 && ${tolerance} >= 1e-300 && ${v} <= ${type === 'f64' ? 2 ** 1023 : 2 ** 127}`
  return type === 'f64'
    ? `${head} && 5 * ${n} * ${2 ** -53} * ${v} <= ${tolerance}`
    : `${head} && 3 * ${2 ** -24} * ${v} <= ${tolerance}`
}
