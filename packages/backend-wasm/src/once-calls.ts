/**
 * Calls made once per run, inlined before code generation: each function and inverse of the
 * program gets the calls at the top level of its body (not in a loop, a branch or an `@unchecked`
 * block; not uncalls) replaced by the callee's body, through `inlineTopLevelCalls` of `@tenet/ir`.
 *
 * Why on wasm: V8 (Node 20, V8 11.3) does not inline one wasm function into another, so each call
 * the small-call inliner leaves (it inlines a callee with a loop, or one that calls others, only
 * inside loops) stays a real call: arguments and results through registers and the stack, the
 * callee's own frame and stack check, and a multi-value return for every written scalar. On the
 * paper's Bessel series, whose body calls the factorial once, that call was about 1 ns of a 26 ns
 * call from JS (the body computing the same factorial inline took ~1 ns less; Node 20, loaded
 * 2-core machine). The cpu backend needs none of this: TurboFan inlines the generated JS
 * functions itself.
 *
 * Exactness: the callee's statements run on the caller's variables in the same order, as the call
 * ran them (`inlineTopLevelCalls` inlines only calls whose arguments are distinct plain variables,
 * so no argument aliases another); its run-time checks and their source locations are its own, and
 * its locals' names (`$top<k>$name`) are turned back into the user's in errors (`userNames`).
 */
import type { FunctionDef, Program } from '@tenet/ir'
import { inlineTopLevelCalls } from '@tenet/ir/backend'

/**
 * The program with the calls each function and inverse makes once per run inlined (see the module
 * comment); the same objects when no function makes such a call.
 */
export function inlineOnceCalls(
  program: Program,
  inverses: Map<string, FunctionDef>,
): { program: Program; inverses: Map<string, FunctionDef> } {
  const callees = program.functions
  let changed = false
  const each = (f: FunctionDef): FunctionDef => {
    const g = inlineTopLevelCalls(f, callees)
    if (g !== f) changed = true
    return g
  }
  const functions = new Map([...callees].map(([name, f]) => [name, each(f)]))
  const inv = new Map([...inverses].map(([name, f]) => [name, each(f)]))
  return changed ? { program: { ...program, functions }, inverses: inv } : { program, inverses }
}
