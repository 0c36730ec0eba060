export * from './ast.js'
export * from './loc.js'
export * from './errors.js'
export { tokenize, type Token, type TokenKind } from './lexer.js'
export { parse, toDataview, NESTING_LIMITS, RESERVED_WORDS } from './parser.js'
export { printExpr, printStmt, printStmts, printFunction, printModule } from './printer.js'
export * from './plugin.js'
export { Registry, emptyRegistry } from './registry.js'
export { check, walk, rootName, readNames, writtenParams, BUILTIN_FUNCTIONS, type DistinctPair } from './check.js'
export { standardPrimitives, standardNumberSystems } from './stdlib/index.js'
export { createRegistry } from './create-registry.js'
export * as build from './builder.js'
export { inlineSmallCalls, userNames } from './inline.js'
export { flatten, forEachStatement, inRun, key, offsetOf, promotableElements, sharedSubexpressions, type Flat, type Promotion, type RunStmt, type Shared } from './cse.js'
export { hostNumber } from './host-result.js'
export {
  optimize, PASS_NAMES, unrollLoops, unrollBlock, literalTrips, scalarReplaceArrays, scalarArraysBlock, deadAncillas,
  dropDeadAncillaWrites, effectfulFunctions, rewriteBlock, rewriteExpr, type PassName, type DeadAncillasContext, type NodeRewriter,
} from './passes/index.js'
