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
 * With run-time checks on, a call of an exact function (integer bijections only, as pass
 * `exact-uncompute` decides it: `exactFunctions` of `@tenet/ir`) is inlined only after the IR
 * passes, with its checks placed (`compileToWasm` calls this twice: first with `inline` leaving
 * those callees out, then at the end with `inline` taking only them). The passes take such a call
 * as a whole, and an inlined body hid it: `exact-uncompute` turns its uncall under `~routine` into
 * `y -= y` (the uncall would pass through the call's states in reverse, and each of its checks
 * repeat one of the call's), and `hoist-lane-calls` (a step of `pair-series`, which the wasm
 * backend runs with checks on) computes it once before a map loop of series instead of once per
 * element, as on the cpu backend. Inlined after them, the call that is left costs nothing. Paper
 * 001's factorial under `~routine` (`ifactorial(fact_nu, nu)`), Bessel with checks on, wasm,
 * against the build before (in-process CPU time, medians of 9 alternating rounds, three
 * processes): single z 67.4–68.9 → 64.3–64.7 ns; the batch of 10⁵ z 5.46–5.66 → 5.20–5.30 ms
 * (2.92–3.04× → 2.75–2.86× the plain-TS objective). With checks off neither pass runs on such a
 * call (`dead-ancillas` drops the uncall, and map loops of series run in f64x2 lanes instead of
 * `pair-series`), so every such call is inlined at once. The late inlining takes only the exact
 * callees: a call that a pass left at the top level (a loop of one iteration unrolled) stays as
 * the passes left it.
 */
import type { FunctionDef, Program } from '@tenet/ir'
import { inlineTopLevelCalls } from '@tenet/ir/backend'

/**
 * The program with the calls each function and inverse makes once per run inlined (see the module
 * comment); the same objects when no function makes such a call. `inline`: which callees' calls
 * to inline (all by default; with run-time checks on, see the module comment).
 */
export function inlineOnceCalls(
  program: Program,
  inverses: Map<string, FunctionDef>,
  inline: (callee: string) => boolean = () => true,
): { program: Program; inverses: Map<string, FunctionDef> } {
  const all = program.functions
  // (a callee left out of the map is not inlined: `inlineTopLevelCalls` keeps its calls)
  const callees = new Map([...all].filter(([name]) => inline(name)))
  let changed = false
  const each = (f: FunctionDef): FunctionDef => {
    const g = inlineTopLevelCalls(f, callees, nextTopLevel(f))
    if (g !== f) changed = true
    return g
  }
  const functions = new Map([...all].map(([name, f]) => [name, each(f)]))
  const inv = new Map([...inverses].map(([name, f]) => [name, each(f)]))
  return changed ? { program: { ...program, functions }, inverses: inv } : { program, inverses }
}

/**
 * The number after the largest `k` of the `$top<k>$` locals of an earlier inlining in `f` (0
 * where there are none): the locals of a later inlining into `f` get names of their own, even
 * where a call it inlines sits inside an earlier inlined body whose locals are live there.
 */
function nextTopLevel(f: FunctionDef): number {
  let next = 0
  for (const m of JSON.stringify(f.body).matchAll(/\$top(\d+)\$/g)) next = Math.max(next, Number(m[1]) + 1)
  return next
}
