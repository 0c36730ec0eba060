export * from './ast.js'
export * from './loc.js'
export * from './errors.js'
export { tokenize, type Token, type TokenKind } from './lexer.js'
export { parse, toDataview, NESTING_LIMITS, RESERVED_WORDS, SPREAD } from './parser.js'
export { printExpr, printStmt, printStmts, printFunction, printModule } from './printer.js'
export * from './plugin.js'
export { Registry, emptyRegistry } from './registry.js'
export { check, BUILTIN_FUNCTIONS, type DistinctPair } from './check.js'
/** @deprecated compiler helpers live in `@tenet/ir/backend`; these root re-exports go in the next minor release. */
export { walk, rootName, readNames, writtenParams } from './check.js'
export { standardPrimitives, standardNumberSystems } from './stdlib/index.js'
// array primitives, registered by the user (their names are common function names)
export { det, dot, logsumexp } from './stdlib/index.js'
export { createRegistry } from './create-registry.js'
export * as build from './builder.js'
export {
  pure,
  unary,
  binary,
  bijection,
  selfInverse,
  type PureOptions,
  type BijectionOptions,
  type PiecewisePartial,
} from './primitive.js'
/** @deprecated compiler helpers live in `@tenet/ir/backend`; these root re-exports go in the next minor release. */
export { inlineSmallCalls, userNames } from './inline.js'
/** @deprecated compiler helpers live in `@tenet/ir/backend`; these root re-exports go in the next minor release. */
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
  type RunStmt,
  type Shared,
  type LoweredValues,
} from './cse.js'
/** @deprecated compiler helpers live in `@tenet/ir/backend`; these root re-exports go in the next minor release. */
export { hostNumber } from './host-result.js'
export { arrayPrimitive, type ArgKind, type ArgValues, type ArrayPrimitiveDef } from './array-primitive.js'
export { RUNTIME_CHECKS, RUNTIME_CHECK_CODES, runtimeError, validLength, type RuntimeCheck } from './runtime-checks.js'
