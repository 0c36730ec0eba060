/**
 * `@tenet/ir/backend`: compiler helpers for backend and transform authors — the IR walkers, the
 * inliner that backends run before code generation, the common-subexpression and array-promotion
 * analyses the cpu and wasm code generators share, the IR → IR optimisation passes they run
 * (`optimize`, see `passes/`), and the check of host-function results. Users
 * of Tenet need none of this; `@tenet/ir` itself exports the IR, the syntax, the registry and the
 * plugin interfaces.
 * @module
 */
export { walk, rootName, readNames, writtenParams } from './check.js'
export { inlineCall, inlineSmallCalls, inlineTopLevelCalls, userNames } from './inline.js'
export {
  flatten,
  forEachStatement,
  inRun,
  key,
  offsetOf,
  promotableElements,
  sharedSubexpressions,
  type Flat,
  type Promotion,
  type ArgumentUse,
  type RunStmt,
  type Shared,
  type LoweredValues,
} from './cse.js'
export { reusedLoads, type ReusedLoad, type LoadOccurrence } from './reused-loads.js'
export { nonzeroInLoops, type EnclosingLoop } from './loop-facts.js'
export { carriedElements, indexKey, polyKey, signFreeReads, type CarriedElement } from './carried-elements.js'
export { deadCarriedStores, lastKey } from './carried-stores.js'
export { runElements, type RunElement } from './run-elements.js'
export { hoistableAllocs } from './hoist-pools.js'
export { hostNumber } from './host-result.js'
export { exprChildren, stmtExprs, valueReads } from './stmt-exprs.js'
export { foldableBounds, loadFree, type FoldableBounds } from './foldable-bounds.js'
export {
  optimize,
  PASS_NAMES,
  CHECKED_PASSES,
  disabledPasses,
  jamLoops,
  unrollLoops,
  unrollBlock,
  literalTrips,
  scalarReplaceArrays,
  scalarArraysBlock,
  deadAncillas,
  dropDeadAncillaWrites,
  effectfulFunctions,
  replayUncalls,
  replayable,
  callsTape,
  RECORD,
  REPLAYED,
  REPLAY_SUFFIX,
  hoistInvariants,
  writtenNames,
  atomChanges,
  resizedNames,
  dropZeroUpdates,
  tabulate,
  forwardPureValues,
  tabulateSweeps,
  sweepTableCandidates,
  pureValueKeys,
  iterationVariant,
  loweredPureCalls,
  worthTabulating,
  writtenBy,
  rewriteBlock,
  rewriteExpr,
  type PassName,
  type DeadAncillasContext,
  type NodeRewriter,
  insertChecks,
  insertChecksFunction,
  inRange,
  callsHost,
  CHECK_CALLS,
  APART,
  hoistBounds,
  hoistBoundsFunction,
  provenBounds,
  provenBoundsFunction,
  impliedChecks,
  impliedChecksBlock,
  impliedChecksFunction,
  strictReads,
  plainBoundsExpr,
  HOIST_MAX_FACTOR,
  sinkAncillas,
  contractArrays,
  usedOnlyAtIndex,
  fuseLoops,
  fuseLoopsBlock,
  unrollSwaps,
  unrollCheckedSwaps,
  pairSeries,
  exactFunctions,
  PAIR_SERIES_LANES,
  PAIR_SERIES_MAX_STATEMENTS,
  polynomial,
  addPoly,
  mulPoly,
  constantDifference,
  type Poly,
} from './passes/index.js'
