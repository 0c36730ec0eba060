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
 *
 * With run-time checks on (`keepExact`), a call of an exact function (integer bijections only, as
 * pass `exact-uncompute` decides it: `exactFunctions` of `@tenet/ir`) stays a call, as on the cpu
 * backend: the passes that follow take such a call as a whole, and an inlined body hides it.
 * `exact-uncompute` then turns its uncall under `~routine` into `y -= y` (the uncall would pass
 * through the call's states in reverse, and each of its checks repeat one of the call's), and
 * `hoist-lane-calls` (a step of `pair-series`, which the wasm backend runs with checks on) computes
 * it once before a map loop of series instead of once per element. Paper 001's factorial under
 * `~routine` (`ifactorial(fact_nu, nu)`): the Bessel batch of 10⁵ z with checks on, inlined per
 * element (a loop of `nu` integer divisions forwards and another backwards) → hoisted out of the
 * grouped loop, 5.51–5.56 → 5.33–5.44 ms (three alternating processes, in-process CPU time,
 * 2.91–2.99× → 2.74–2.88× the plain-TS objective); the single-z objective with checks on
 * unchanged (67–68 ns either way: the call costs about what the uncall's loop did). With checks
 * off neither pass runs on such a call (`dead-ancillas` drops the uncall, and map loops of series
 * run in f64x2 lanes instead of `pair-series`), so every such call is inlined.
 */
import type { FunctionDef, Program } from '@tenet/ir'
import { exactFunctions, inlineTopLevelCalls } from '@tenet/ir/backend'

/**
 * The program with the calls each function and inverse makes once per run inlined (see the module
 * comment); the same objects when no function makes such a call. `keepExact`: calls of exact
 * functions stay calls (with run-time checks on, see the module comment).
 */
export function inlineOnceCalls(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: { keepExact?: boolean } = {},
): { program: Program; inverses: Map<string, FunctionDef> } {
  const all = program.functions
  // (a callee left out of the map is not inlined: \`inlineTopLevelCalls\` keeps its calls)
  const exact = options.keepExact ? exactFunctions(all.values()) : new Set<string>()
  const callees = exact.size ? new Map([...all].filter(([name]) => !exact.has(name))) : all
  let changed = false
  const each = (f: FunctionDef): FunctionDef => {
    const g = inlineTopLevelCalls(f, callees)
    if (g !== f) changed = true
    return g
  }
  const functions = new Map([...all].map(([name, f]) => [name, each(f)]))
  const inv = new Map([...inverses].map(([name, f]) => [name, each(f)]))
  return changed ? { program: { ...program, functions }, inverses: inv } : { program, inverses }
}
