/**
 * The IR → IR optimisation passes the code generators (cpu, wasm) run after inlining, each a
 * small module named for what it does, each testable on its own:
 *
 * - `unroll` — short loops with a literal range become copies of their body (always: exact);
 * - `idle-first` — a counting loop whose first iteration provably changes nothing (a factorial by
 *   the approximate multiplier from a zero ancilla, a product from 1) starts at its second (checks
 *   off; see `idle-first.ts`);
 * - `scalar-arrays` — small array ancillas used at literal positions become scalars (always: with
 *   checks on, the array's deallocation check stays one check over its elements, see
 *   `DeallocStmt.element`);
 * - `cancel-uncompute` — inside `@unchecked`, a loop followed by the exact inverse of its part that
 *   writes what that inverse writes (a branch keeper and index counters, and their uncompute) runs
 *   on copies of those names, and the inverse goes (checks on only: with checks off,
 *   `sink-ancillas` and `dead-ancillas` drop such uncomputes; see `cancel-uncompute.ts`);
 * - `finite-uncompute` — the uncompute `y -= e` of an f64 or f32 ancilla computed from zero by `y += e`
 *   (nothing between writing y or what e reads, but elements a nonzero constant away from those e
 *   reads, an integrator's next history elements; in one block, or in one branch of two `if (c, ~)`)
 *   becomes `y -= y`, the same bits, so e is not evaluated again (checks on only: with checks off,
 *   `dead-ancillas` drops such uncomputes; see `finite-uncompute.ts`);
 * - `finite-history` — the inverse loop `for v in reverse R { A[w] -= e }` of a history loop
 *   `for v in R { A[w] += e }` (or a nest of two, rows apart) into a fresh f64 or f32 `zeros`
 *   array (w = ±v + c, so each element is written once, from zero; e reads A only at elements of
 *   earlier iterations) becomes
 *   `A[w] -= A[w]`, the same bits, so e is not evaluated again (checks on only; see
 *   `finite-history.ts`);
 * - `finite-steps` — the same for a loop whose steps also compute and uncompute scalars of their
 *   own (an integrator's stages, a routine called per step): the inverse loop of
 *   `for v in R { P; A[w_j] += e_j …; Q }` (w_j = a·v + c + d_j, each element written once, from
 *   zero; P and Q read A only at elements of earlier iterations) becomes `A[w_j] -= A[w_j]` alone,
 *   without P and Q (checks on only; see `finite-steps.ts`);
 * - `finite-cells` — the same for a loop (or nest of two) whose body computes cells of its own
 *   iteration in other zeros arrays (an RNN's pre-activation) before its last statement, the
 *   history update `A[w] += e` from them: the first statement `A[w] -= e` of its inverse becomes
 *   `A[w] -= A[w]`, the cells' uncompute stays (checks on only; see `finite-cells.ts`);
 * - `exact-uncompute` — the uncall `~f(y, x)` of an exact function (integer bookkeeping, such as a
 *   factorial by the integer approximate multiplier) that undoes a call `f(y, x)` of the same block
 *   from a zero integer ancilla `y` becomes `y -= y`: the uncall would restore 0 bit for bit, and
 *   every check in it holds because the call's did (checks on only: with checks off,
 *   `dead-ancillas` drops such uncomputes; see `exact-uncompute.ts`);
 * - `interchange` — a loop whose iterations provably touch disjoint memory, around a nest that
 *   does the same in every iteration, moves innermost, around the statements that depend on it
 *   (always: with checks on, only the order in which two failing checks are reached changes; see
 *   `interchange.ts` for the dependence test);
 * - `jam` — a loop of step ±1 around one inner loop whose work touches disjoint columns runs two
 *   consecutive iterations per pass of the inner loop (unroll-and-jam), so what they share stays
 *   in registers (always: as `interchange`; see `jam.ts` for the dependence test);
 * - `hoist-calls` — expensive pure calls of values a loop never writes, a bijection's lowered
 *   cos θ and sin θ included, are computed once before the loop (always: with checks on, without
 *   the uncompute, see `hoist-calls.ts`);
 * - `hoist-invariants` — pure expressions of values a `for` loop never writes are computed once,
 *   into an ancilla, before the loop, and uncomputed after it (always: exact; with checks on, the
 *   guarded uncompute, in `@unchecked`, is left out);
 * - `tabulate-sweeps` — an expensive pure primitive that two or more statements of a function's
 *   body (the two sweeps of a gradient program) apply to elements of an array parameter it never
 *   writes is computed once per element, into a table, before the body, when they evaluate more
 *   than the table costs (checks off; see `tabulate-sweeps.ts`);
 * - `tabulate` — an expensive pure primitive that a loop applies, in every iteration, to the same
 *   elements of an array it never writes is computed once per element, into a table, before the
 *   loop, when the loop evaluates more than the table costs (always: a table read keeps the bounds
 *   check of the element it replaces, see `IndexExpr.checkedAs`; see `tabulate.ts` and
 *   `tabulate-cost.ts`);
 * - `forward-pure-values` — a pure unary primitive that one loop applies at its index and a later
 *   loop over the same range applies again, to an element nothing changed in between, is kept in
 *   a table by the first loop and read by the second (checks off; see `forward-pure-values.ts`);
 * - `zero-updates` — updates by a value known to be zero go (checks off; finite values assumed);
 * - `dead-ancillas` — statements that only change ancillas nobody reads again go, the uncompute
 *   of a `~routine` first among them (checks off);
 * - `sink-ancillas` — an array ancilla that every iteration of a loop restores (a branch keeper
 *   and its uncompute) is allocated per iteration (checks off; runs before `hoist-invariants`, so
 *   that `dead-ancillas` then drops the uncompute);
 * - `sink-scalars` — a scalar ancilla that a loop's body only computes and uncomputes in pairs
 *   (`x -= e` … `x += e`, a routine and its `~routine`) is allocated per iteration, so that
 *   `dead-ancillas` drops the closing update (checks off; finite values assumed);
 * - `fuse-loops` — a loop over the same range as an earlier loop of its block joins it where no
 *   dependence forbids it (checks off; see `fuse-loops.ts` for the dependence test);
 * - `contract-arrays` — an array ancilla used only at one loop's index becomes a scalar per
 *   iteration, and so does a scratch parameter (`Param.scratch`: zeros at entry, nothing read
 *   back) (checks off);
 * - `first-writes` — an array ancilla written in order (a first element, then a loop extending the
 *   written range by one element per iteration) and read only where written is marked so that a
 *   backend skips its zeroing (checks off; see `first-writes.ts`);
 * - `jam-iterations` — a loop of step ±1 whose iterations are independent (each computes in
 *   ancillas of its own around an inner recurrence, such as Horner's rule per point) runs four
 *   iterations interleaved, statement by statement, their inner loops fused, bit for bit the same
 *   (always: with checks on it runs earlier, after `jam` and before `hoist-invariants`, whose
 *   guarded hoisting of an inner loop's invariant reads would put the inner loops under \`if\`s
 *   that it does not fuse, on bodies of at most \`JAM_ITERATIONS_MAX_CHECKED_STATEMENTS\`
 *   statements; and, as `interchange`, it may change the order in which two
 *   independent failing checks are reached: the checks of iteration j + 1 run before iteration
 *   j's later statements; see `jam-iterations.ts` for the dependence test);
 * - `unroll-swaps` — a `while` loop whose body exchanges scalars with `SWAP` runs two iterations
 *   per pass, the second under the exchanged names, so no value moves at the back edge (always:
 *   runs last; with checks on, after the asserts are placed, see `unrollCheckedSwaps`; see
 *   `unroll-swaps.ts`);
 * - `zero-sums` (runs last) — the first update `y += a ± b` of a float scalar ancilla that holds
 *   +0 becomes `y += a; y ±= b` (the same bits: `0 + (a ± b) = (0 + a) ± b`), so the addition of
 *   the zero leaves the path from `b` (always: with checks on, each update gets the bounds asserts
 *   of its own term's reads, in the same order; see `zero-sums.ts`);
 * - `implied-checks` — with checks on, run by the backends on the placed asserts: the deallocation
 *   check of a float ancilla that a passed check of a value computed from it already decided
 *   (`y -= y` after `finite-uncompute` tests that y was finite; `r ← sqrt(r2)` finite means r2
 *   was) is left out, and so is the entry check `!c` of a loop run backwards right after the loop
 *   `while (c, p)` it undoes, which that loop's exit decided (see `implied-checks.ts`);
 * - `replay-uncall` — with checks on, run by the cpu backend on optimize's result: the uncall
 *   `~f(a, x…)` of a call `f(a, x…)` of the same block, where `f` only adds terms to one float
 *   array `a` and `~f` subtracts the same terms in reverse order, subtracts the terms the call
 *   recorded instead of computing them again (see `replay-uncall.ts`);
 * - `carried-elements` — not an IR rewrite: the cpu and wasm code generators keep an f64 element
 *   that one iteration of a counting loop writes and the next reads back in a local (checks on
 *   and off: every bounds assert stays; see `carriedElements` in `carried-elements.ts`).
 *
 * Those that run only without checks would weaken what a check sees (an uncompute is what a
 * deallocation check verifies) or change which check fails first, or where (a reordered loop).
 * Those in `CHECKED_PASSES` run with checks on too: with them every program that violates a
 * check still fails, at the construct that failed, and every check that fires without them fires
 * with them, except that `interchange`, `jam`, `jam-iterations` and `hoist-calls` may change the
 * order in which two independent failing checks are reached (see their module comments).
 */
import type { CompileOptions, Program } from '../plugin.js'
import type { FunctionDef, Stmt } from '../ast.js'
import { unrollLoops } from './unroll.js'
import { idleFirst } from './idle-first.js'
import { cancelUncompute } from './cancel-uncompute.js'
import { finiteUncompute } from './finite-uncompute.js'
import { finiteHistory } from './finite-history.js'
import { finiteSteps } from './finite-steps.js'
import { finiteCells } from './finite-cells.js'
import { exactFunctions, exactUncompute } from './exact-uncompute.js'
import { scalarReplaceArrays } from './scalar-arrays.js'
import { deadAncillas, effectfulFunctions } from './dead-ancillas.js'
import { hoistInvariants } from './hoist-invariants.js'
import { dropZeroUpdates } from './zero-updates.js'
import { tabulate } from './tabulate.js'
import { tabulateSweeps } from './tabulate-sweeps.js'
import { forwardPureValues } from './forward-pure-values.js'
import { sinkAncillas } from './sink-ancillas.js'
import { sinkScalars } from './sink-scalars.js'
import { contractArrays } from './contract-arrays.js'
import { firstWrites } from './first-writes.js'
import { fuseLoops } from './fuse-loops.js'
import { interchangeLoops } from './interchange.js'
import { hoistCalls } from './hoist-calls.js'
import { jamLoops } from './jam.js'
import { JAM_ITERATIONS_MAX_CHECKED_STATEMENTS, jamIterations } from './jam-iterations.js'
import { calledInCountingLoops, unrollSwaps } from './unroll-swaps.js'
import { zeroSums } from './zero-sums.js'
export { pairSeries, PAIR_SERIES_LANES, PAIR_SERIES_MAX_STATEMENTS } from './pair-series.js'
export { hoistLaneCalls, exactLaneFunctions, type HoistedLaneCalls } from './hoist-lane-calls.js'

export { cancelUncompute } from './cancel-uncompute.js'
export { finiteUncompute } from './finite-uncompute.js'
export { finiteHistory } from './finite-history.js'
export { finiteSteps } from './finite-steps.js'
export { finiteCells } from './finite-cells.js'
export { exactFunctions, exactUncompute } from './exact-uncompute.js'
export { idleFirst } from './idle-first.js'
export { unrollLoops, unrollBlock, literalTrips, UNROLL_MAX_TRIPS, UNROLL_MAX_STATEMENTS } from './unroll.js'
export { scalarReplaceArrays, scalarArraysBlock, elementName, SCALAR_ARRAY_MAX_LENGTH } from './scalar-arrays.js'
export { deadAncillas, dropDeadAncillaWrites, effectfulFunctions, type DeadAncillasContext } from './dead-ancillas.js'
export { atomChanges, hoistInvariants, resizedNames, writtenNames } from './hoist-invariants.js'
export { dropZeroUpdates, isZero } from './zero-updates.js'
export { tabulate, iterationVariant, loweredPureCalls, worthTabulating, writtenBy } from './tabulate.js'
export { forwardPureValues } from './forward-pure-values.js'
export { tabulateSweeps, sweepTableCandidates, pureValueKeys } from './tabulate-sweeps.js'
export { evaluationCount, type CountOptions } from './tabulate-cost.js'
export { rewriteBlock, rewriteExpr, type NodeRewriter } from './rewrite.js'
export { insertChecks, insertChecksFunction, inRange, callsHost, CHECK_CALLS } from './insert-checks.js'
export { impliedChecks, impliedChecksBlock, impliedChecksFunction, strictReads } from './implied-checks.js'
export { provenBounds, provenBoundsFunction } from './proven-bounds.js'
export { hoistBounds, hoistBoundsFunction, HOIST_MAX_FACTOR, plain as plainBoundsExpr } from './hoist-bounds.js'
export { sinkAncillas, sinkAncillasBlock, restores } from './sink-ancillas.js'
export { sinkScalars, sinkScalarsBlock, restoredInPairs } from './sink-scalars.js'
export { contractArrays, contractArraysBlock, contractedName, usedOnlyAtIndex } from './contract-arrays.js'
export { firstWrites, firstWritesBlock, indexPolynomial } from './first-writes.js'
export { fuseLoops, fuseLoopsBlock } from './fuse-loops.js'
export {
  interchangeLoops,
  interchangeBlock,
  polynomial,
  provedNonNegative,
  addPoly,
  mulPoly,
  constantDifference,
  type Poly,
} from './interchange.js'
export { hoistCalls } from './hoist-calls.js'
export { jamLoops, jamBlock } from './jam.js'
export {
  jamIterations,
  jamIterationsBlock,
  JAM_ITERATIONS_LANES,
  JAM_ITERATIONS_MAX_ANCILLA,
  JAM_ITERATIONS_MAX_CHECKED_STATEMENTS,
  JAM_ITERATIONS_MAX_STATEMENTS,
} from './jam-iterations.js'
export { APART, apartPairs, arraysAccessed, knownApart, withApart, withKnown, type KnownApart } from './apart.js'
export { calledInCountingLoops, unrollSwaps, unrollSwapsBlock } from './unroll-swaps.js'
export { zeroSums } from './zero-sums.js'
export {
  replayUncalls,
  replayable,
  recording,
  replaying,
  callsTape,
  RECORD,
  REPLAYED,
  REPLAY_SUFFIX,
} from './replay-uncall.js'

/** The names of the passes, in the order `optimize` runs them. */
export const PASS_NAMES = [
  'unroll',
  'idle-first',
  'scalar-arrays',
  'cancel-uncompute',
  'finite-uncompute',
  'finite-history',
  'finite-steps',
  'finite-cells',
  'exact-uncompute',
  'interchange',
  'jam',
  'sink-ancillas',
  'sink-scalars',
  'hoist-invariants',
  'hoist-calls',
  'tabulate-sweeps',
  'tabulate',
  'forward-pure-values',
  'zero-updates',
  'dead-ancillas',
  'fuse-loops',
  'contract-arrays',
  'first-writes',
  'jam-iterations',
  'unroll-swaps',
  'zero-sums',
  // (not run by `optimize`: the cpu backend runs it on optimize's result, see `pairSeries`)
  'pair-series',
  // (a step of `pair-series`: see `hoist-lane-calls.ts`)
  'hoist-lane-calls',
  // (not run by `optimize`: with checks on, the backends run it on the placed asserts, see `impliedChecks`)
  'implied-checks',
  // (not run by `optimize`: with checks on, the backends run it on the placed asserts, see `provenBounds`)
  'proven-bounds',
  // (not run by `optimize`: with checks on, the cpu backend runs it on optimize's result, see `replayUncalls`)
  'replay-uncall',
  // (not run by \`optimize\`: the backends' code generators keep loop-carried elements in locals, see \`carriedElements\`)
  'carried-elements',
  // (not run by \`optimize\`: with checks off, the code generators drop a carried element's dead stores, see \`deadCarriedStores\`)
  'carried-stores',
  // (not run by \`optimize\`: the cpu code generator's forwarding of elements across stores a loop's range proves elsewhere, see \`nonzeroInLoops\`)
  'loop-facts',
  // (not run by \`optimize\`: the cpu code generator keeps elements in locals with checks on, see \`promotableElements\`)
  'promote-checked',
  // (not run by \`optimize\`: with checks on, the cpu code generator leaves out a replayed uncall that a round-off bound proves, see its \`replay-bound.ts\`)
  'replay-bound',
  // (not run by \`optimize\`: the cpu code generator takes a loop's leading array allocations' pooled arrays before it, see \`hoistAllocs\`)
  'hoist-pools',
  'sum-bound',
] as const
export type PassName = (typeof PASS_NAMES)[number]

/**
 * The passes that run with run-time checks on too: each leaves every check with the same
 * condition, message and location (see the module comment).
 */
export const CHECKED_PASSES: ReadonlySet<PassName> = new Set<PassName>([
  'unroll',
  'scalar-arrays',
  'cancel-uncompute',
  'finite-uncompute',
  'finite-history',
  'finite-steps',
  'finite-cells',
  'exact-uncompute',
  'hoist-invariants',
  'tabulate',
  'unroll-swaps',
  'pair-series',
  'hoist-lane-calls',
  'interchange',
  'jam',
  'hoist-calls',
  'implied-checks',
  'replay-uncall',
  'carried-elements',
  'loop-facts',
  'proven-bounds',
  'promote-checked',
  'replay-bound',
  'hoist-pools',
  'sum-bound',
  'jam-iterations',
  'zero-sums',
])

/**
 * Passes switched off for the whole process, whatever the options: for A/B comparisons of a
 * pass's effect and for bisecting a miscompile (empty normally). Filled from the environment
 * variable `TENET_DISABLE_PASSES` (comma-separated pass names) where there is one.
 */
export const disabledPasses: Set<PassName> = new Set(
  ((globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.TENET_DISABLE_PASSES ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n): n is PassName => (PASS_NAMES as readonly string[]).includes(n)),
)

/**
 * `body` without the loops that take a `tabulate` table back to zeros before its unchecked
 * deallocation (`ForStmt.tableUncompute`), at any depth: with run-time checks on, where
 * `dead-ancillas` does not run, they would evaluate every table value a second time.
 */
export function withoutTableUncomputes(body: Stmt[]): Stmt[] {
  return body
    .filter((s) => !(s.kind === 'for' && s.tableUncompute))
    .map((s): Stmt => {
      switch (s.kind) {
        case 'if':
          return { ...s, then: withoutTableUncomputes(s.then), else: withoutTableUncomputes(s.else) }
        case 'for':
        case 'while':
        case 'unchecked':
          return { ...s, body: withoutTableUncomputes(s.body) } as Stmt
        default:
          return s
      }
    })
}

/**
 * Runs the optimisation passes on a checked program and its inverses (every function of both):
 * those that apply under `options` (see the module comment), or only those named in `only`.
 */
export function optimize(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
  only?: readonly PassName[],
): { program: Program; inverses: Map<string, FunctionDef> } {
  const on = (p: PassName) =>
    !disabledPasses.has(p) && (only ? only.includes(p) : CHECKED_PASSES.has(p) || !options.checks)
  const each = (f: (d: FunctionDef) => FunctionDef) => {
    program = { ...program, functions: new Map([...program.functions].map(([n, d]) => [n, f(d)])) }
    inverses = new Map([...inverses].map(([n, d]) => [n, f(d)]))
  }
  if (on('unroll')) each(unrollLoops)
  if (on('idle-first') && !options.checks) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    each((f) => idleFirst(f, effectful))
  }
  // (with checks, the elements' check is the array's only for a tolerance ≥ 0: below it, or NaN,
  // an array of zeros fails its check where a scalar zero passes, `a === b` in `$near`)
  if (on('scalar-arrays') && !(options.checks && !(options.tolerance >= 0))) each(scalarReplaceArrays)
  if (on('cancel-uncompute') && options.checks) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    each((f) => cancelUncompute(f, effectful))
  }
  if (on('finite-uncompute') && options.checks) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    each((f) => finiteUncompute(f, effectful, program.writes))
  }
  if (on('finite-history') && options.checks) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    each((f) => finiteHistory(f, effectful))
  }
  if (on('finite-steps') && options.checks) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    each((f) => finiteSteps(f, effectful))
  }
  if (on('finite-cells') && options.checks) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    each((f) => finiteCells(f, effectful))
  }
  if (on('exact-uncompute') && options.checks) {
    const all = [...program.functions.values(), ...inverses.values()]
    const effectful = effectfulFunctions(all)
    // (exactness is decided on the functions as written: an inverse is exact where its function is)
    const exact = exactFunctions(program.functions.values())
    const writes = program.writes
    each((f) => exactUncompute(f, exact, writes, effectful))
  }
  if (on('interchange')) {
    const registry = program.registry
    each((f) => interchangeLoops(f, registry))
  }
  if (on('jam')) {
    const registry = program.registry
    each((f) => jamLoops(f, registry))
  }
  // (with checks on, before \`hoist-invariants\`: see \`jam-iterations\` in the module comment; with
  // checks off it runs after \`first-writes\`, on the loops that the passes before it simplified)
  if (on('jam-iterations') && options.checks)
    each((f) => jamIterations(f, JAM_ITERATIONS_MAX_CHECKED_STATEMENTS, JAM_ITERATIONS_MAX_CHECKED_STATEMENTS))
  if (on('sink-ancillas')) each(sinkAncillas)
  if (on('sink-scalars')) each(sinkScalars)
  if (on('hoist-invariants')) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    each((f) => hoistInvariants(f, effectful, options.checks))
  }
  if (on('hoist-calls')) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    const registry = program.registry
    const writes = program.writes
    each((f) => hoistCalls(f, registry, effectful, writes, options.checks))
  }
  if (on('tabulate-sweeps')) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    const registry = program.registry
    const writes = program.writes
    each((f) => tabulateSweeps(f, registry, effectful, writes))
  }
  if (on('tabulate')) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    const registry = program.registry
    const writes = program.writes
    each((f) => tabulate(f, registry, effectful, writes))
    // (with checks off `dead-ancillas` drops the tables' uncomputes, see `ForStmt.tableUncompute`)
    if (options.checks) each((f) => ({ ...f, body: withoutTableUncomputes(f.body) }))
  }
  if (on('forward-pure-values')) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    const registry = program.registry
    const writes = program.writes
    // (a scratch parameter is zero at the function's entry, not at its inverse's: see contract-arrays)
    program = {
      ...program,
      functions: new Map(
        [...program.functions].map(([n, d]) => [n, forwardPureValues(d, registry, effectful, writes, true)]),
      ),
    }
    inverses = new Map([...inverses].map(([n, d]) => [n, forwardPureValues(d, registry, effectful, writes)]))
  }
  if (on('zero-updates')) {
    const writes = program.writes
    each((d) => dropZeroUpdates(d, writes))
  }
  if (on('dead-ancillas')) ({ program, inverses } = deadAncillas(program, inverses, options.checks))
  if (on('fuse-loops')) each(fuseLoops)
  if (on('contract-arrays')) {
    // a scratch parameter is zero at the function's entry, not at its inverse's
    program = { ...program, functions: new Map([...program.functions].map(([n, d]) => [n, contractArrays(d, true)])) }
    inverses = new Map([...inverses].map(([n, d]) => [n, contractArrays(d)]))
  }
  if (on('first-writes')) each(firstWrites)
  // (with checks on it ran before \`hoist-invariants\`, see above)
  if (on('jam-iterations') && !options.checks) each(jamIterations)
  // (with checks on it runs after the asserts are placed: see `unrollCheckedSwaps`)
  if (on('unroll-swaps') && !options.checks) {
    // (not the swap loops of a function a counting loop calls: see `unrollSwapsBlock`)
    const batched = calledInCountingLoops([...program.functions.values(), ...inverses.values()])
    each((d) => unrollSwaps(d, batched.has(d.name)))
  }
  if (on('zero-sums')) {
    const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
    each((f) => zeroSums(f, effectful, options.checks))
  }
  return { program, inverses }
}

/**
 * Pass `unroll-swaps` with run-time checks on, run by a backend on the program and inverses whose
 * asserts are placed (after `insertChecks`, and `hoistBounds`): a swap loop's body carries the
 * asserts of its iteration (`postWhileIteration` last, the bounds asserts of its condition), and
 * each of the two copies keeps them, renamed with the rest of its statements, so every check is
 * evaluated where it was, on the same values, in the same order, with the same message (the
 * message's text is the source's, its values renamed). The entry check (`postWhileStart`) stays
 * before the loop. Placed before the asserts, the copies' `if` would get `postIf` asserts that
 * do not hold (see `unroll-swaps.ts`), so `optimize` leaves the pass to this function when checks
 * are on. Returns its arguments unchanged with checks off, or where the pass is switched off.
 */
export function unrollCheckedSwaps(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  if (!options.checks || !CHECKED_PASSES.has('unroll-swaps') || disabledPasses.has('unroll-swaps'))
    return { program, inverses }
  // (not the swap loops of a function a counting loop calls: see `unrollSwapsBlock`)
  const batched = calledInCountingLoops([...program.functions.values(), ...inverses.values()])
  return {
    program: {
      ...program,
      functions: new Map([...program.functions].map(([n, d]) => [n, unrollSwaps(d, batched.has(n))])),
    },
    inverses: new Map([...inverses].map(([n, d]) => [n, unrollSwaps(d, batched.has(n))])),
  }
}
