/**
 * The run-time check catalog: every check a Tenet program makes while it runs — its error code
 * and its message — written once. The interpreter, the cpu backend and the wasm backend raise
 * these and only these (a parity test in `tenet` runs one program per check on all three and
 * compares code and message). Each entry takes what the message needs: names and printed
 * expressions known when compiling, values known only when the check fails.
 *
 * | code | the check |
 * |---|---|
 * | `runtime/out-of-bounds` | an index outside its array |
 * | `runtime/alias` | `x[i] += f(x[j])` with i = j (the statement would read what it writes) |
 * | `runtime/dealloc` | `t -> v` when t does not hold v (an ancilla not returned to its value) |
 * | `runtime/post-condition` | an `if`'s post-condition disagrees with its pre-condition; a `while`'s is wrong at the start or after an iteration |
 * | `runtime/empty-stack`, `runtime/pop-nonzero` | `pop` from an empty stack, or into a non-zero variable |
 * | `runtime/zero-step`, `runtime/loop-range` | a loop step of 0; a range changed by the loop body |
 * | `runtime/array-length`, `runtime/out-of-memory` | `zeros(n)` with n < 0 (or not an integer); too large |
 * | `runtime/host-result` | a host function's value is not a number (see `host-result.ts`) |
 * | `runtime/zero-factor` | `y *= e` or `y /= e` on an f64 with e zero or not finite (it could not be undone) |
 */
import { InvertibilityError } from './errors.js'
import type { SourceLocation } from './loc.js'

/** The message of each run-time check, by code. */
export const RUNTIME_CHECKS = {
  /** index `index` of `array` (of length `length`) does not exist */
  outOfBounds: (array: string, index: unknown, length: unknown) =>
    `index ${index} is out of bounds for \`${array}\` (length ${length})`,
  /** two printed indices `a`, `b` of one statement name the same element `index` */
  alias: (a: string, b: string, index: unknown) =>
    `\`[${a}]\` and \`[${b}]\` are the same element (index ${index}), so the statement would read the memory it writes`,
  /** a scalar ancilla holds `holds` where `name -> shown` expects `expects` (both as the user knows them) */
  dealloc: (name: string, shown: string, holds: unknown, expects: unknown) =>
    `cannot deallocate \`${name}\`: it holds ${holds}, but \`${name} -> ${shown}\` expects ${expects}`,
  /** an array ancilla is not zeros(n) (or has another length) */
  deallocArray: (name: string, shown: string, n: unknown) =>
    `cannot deallocate \`${name}\`: it holds an array that is not zeros(${n}), but \`${name} -> ${shown}\` expects zeros(${n})`,
  /** a stack ancilla is not empty */
  deallocStack: (name: string, count: unknown) =>
    `cannot deallocate \`${name}\`: it holds a stack of ${count} values, but \`${name} -> []\` expects an empty stack`,
  /** an `if`'s post-condition `post` (the pre-condition again when `tilde`) is `value` after a branch, where the pre-condition was `pre` */
  postIf: (post: string, tilde: boolean, value: unknown, pre: unknown) =>
    `the post-condition \`${post}\`${tilde ? ' (`~`: the pre-condition again)' : ''} of this \`if\` is ${value} after the ${pre ? 'then' : 'else'} branch, but the pre-condition was ${pre}`,
  /** a `while`'s post-condition holds before the first iteration */
  postWhileStart: (post: string) =>
    `the post-condition \`${post}\` of this \`while\` must be false when the loop starts`,
  /** a `while`'s post-condition is false after an iteration */
  postWhileIteration: (post: string) =>
    `the post-condition \`${post}\` of this \`while\` must be true after every iteration`,
  emptyStack: (stack: string) => `pop from the empty stack \`${stack}\``,
  /** `pop(stack, value)` into a variable holding `holds` */
  popNonzero: (stack: string, value: string, holds: unknown) =>
    `\`pop(${stack}, ${value})\` needs \`${value}\` to be zero, but it holds ${holds}`,
  zeroStep: () => 'the loop step is 0',
  loopRange: (a0: unknown, b0: unknown, s0: unknown, a1: unknown, b1: unknown, s1: unknown) =>
    `the loop range changed while the loop ran (from ${a0}..${b0} by ${s0} to ${a1}..${b1} by ${s1}); a reversible loop must leave its range unchanged`,
  arrayLength: (name: string, n: unknown) => `cannot allocate \`${name}\`: zeros(${n}) needs a whole number ≥ 0`,
  tooLarge: (name: string, n: unknown) => `cannot allocate \`${name}\` (zeros(${n})): too large for the wasm memory`,
  cannotGrow: (name: string, n: unknown) =>
    `cannot allocate \`${name}\` (zeros(${n})): the wasm memory cannot grow further`,
  /** `y *= e` / `y /= e` on a float (printed `stmt`) by a factor that is zero or not finite */
  zeroFactor: (stmt: string, factor: unknown) =>
    `\`${stmt}\`: the factor is ${factor === 0 ? 'zero' : factor}, so this could not be undone (a float is multiplied or divided only by a nonzero finite factor)`,
} as const

/** The code of each catalog entry. */
export const RUNTIME_CHECK_CODES = {
  outOfBounds: 'runtime/out-of-bounds',
  alias: 'runtime/alias',
  dealloc: 'runtime/dealloc',
  deallocArray: 'runtime/dealloc',
  deallocStack: 'runtime/dealloc',
  postIf: 'runtime/post-condition',
  postWhileStart: 'runtime/post-condition',
  postWhileIteration: 'runtime/post-condition',
  emptyStack: 'runtime/empty-stack',
  popNonzero: 'runtime/pop-nonzero',
  zeroStep: 'runtime/zero-step',
  loopRange: 'runtime/loop-range',
  arrayLength: 'runtime/array-length',
  tooLarge: 'runtime/out-of-memory',
  cannotGrow: 'runtime/out-of-memory',
  zeroFactor: 'runtime/zero-factor',
} as const satisfies Record<keyof typeof RUNTIME_CHECKS, string>

/** A catalog entry's name. */
export type RuntimeCheck = keyof typeof RUNTIME_CHECKS

/** The error (an `InvertibilityError`) of check `check` with the message's arguments, at `loc`. */
export function runtimeError<K extends RuntimeCheck>(
  check: K,
  loc: SourceLocation | undefined,
  ...args: Parameters<(typeof RUNTIME_CHECKS)[K]>
): InvertibilityError {
  const message = (RUNTIME_CHECKS[check] as (...a: unknown[]) => string)(...args)
  return new InvertibilityError(RUNTIME_CHECK_CODES[check], message, loc)
}

/** Whether `n` is a valid array length for `zeros(n)` (a whole number ≥ 0). */
export const validLength = (n: unknown): boolean => typeof n === 'number' && Number.isInteger(n) && n >= 0
