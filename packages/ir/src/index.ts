export * from './ast.js'
export * from './loc.js'
export * from './errors.js'
export { tokenize, type Token, type TokenKind } from './lexer.js'
export { parse, toDataview, NESTING_LIMITS, RESERVED_WORDS, SPREAD } from './parser.js'
export { printExpr, printStmt, printStmts, printFunction, printModule } from './printer.js'
export * from './plugin.js'
export { Registry, emptyRegistry } from './registry.js'
export { check, BUILTIN_FUNCTIONS, type DistinctPair } from './check.js'
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
  type TaylorText,
  type BijectionTaylorText,
} from './primitive.js'
export { arrayPrimitive, type ArgKind, type ArgValues, type ArrayPrimitiveDef } from './array-primitive.js'
export { RUNTIME_CHECKS, RUNTIME_CHECK_CODES, runtimeError, validLength, type RuntimeCheck } from './runtime-checks.js'
