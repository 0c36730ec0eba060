/**
 * The compilation scheme of seed 004 (Fig. 1, bottom): Source → UNF → D⃖_ρ → UNF⁻¹ → partial
 * evaluation. Each stage's result is kept, so that it can be printed and tested on its own.
 */
import { checkSource } from './check.js'
import { OpTable } from './ops.js'
import { partialEvaluate, type PartialEvalOptions } from './partial-eval.js'
import { reverseUnf, type TargetUnf } from './reverse.js'
import { children, uniquify, type Term } from './term.js'
import type { Type } from './types.js'
import { fromUnf } from './unf-inverse.js'
import { toUnf, type Slot, type UnfProgram } from './unf.js'

/** Every stage of the reverse transform of one term. */
export interface ReverseStages {
  /** the source term (binders made unique) */
  source: Term
  /** Source UNF (Fig. 9) */
  unf: UnfProgram
  /** Target UNF, D⃖_ρ(UNF(e)) (Fig. 8) */
  target: TargetUnf
  /** the target term UNF⁻¹(D⃖_ρ(UNF(e))) applied to ⟨0, seed⟩: continuations and all (Fig. 10) */
  inverse: Term
  /** after partial evaluation (§5.1, Fig. 12): lambda-free, SSA-like ⟨value, cotangents⟩ */
  optimized: Term
}

/**
 * Runs the whole scheme on `body` in context `ctx` with output cotangent `seed` (a constant
 * `1` for a gradient, a variable for a vector–Jacobian product). The result evaluates to
 * ⟨value, ⟨cotangent of each slot of ctx⟩⟩.
 */
export function reverseStages(
  body: Term,
  ctx: Slot[],
  seed: Term,
  ops: OpTable,
  options: PartialEvalOptions = {},
): ReverseStages {
  checkSource(
    body,
    ctx.map((s) => [s.name, s.type] as const),
    ops,
  )
  const source = needsRenaming(body, ctx) ? uniquify(body) : body
  const unf = toUnf(source, ctx, ops)
  const target = reverseUnf(unf)
  const vjp = (b: Term, c: Slot[], s: Term) => reverseStages(b, c, s, ops, options).optimized
  const inverse = fromUnf(target, seed, ops, vjp)
  const optimized = partialEvaluate(inverse, options)
  return { source, unf, target, inverse, optimized }
}

/** Whether some binder repeats or shadows a context name (then binders are renamed apart). */
function needsRenaming(t: Term, ctx: Slot[]): boolean {
  const seen = new Set(ctx.map((s) => s.name))
  let clash = false
  const go = (x: Term) => {
    const bound: string[] =
      x.k === 'let'
        ? [x.name]
        : x.k === 'map' || x.k === 'lam'
          ? x.params
          : x.k === 'reduce' || x.k === 'fold' || x.k === 'scanl' || x.k === 'scanr'
            ? [x.acc, x.elem]
            : []
    for (const b of bound) {
      if (seen.has(b)) clash = true
      seen.add(b)
    }
    children(x).forEach(go)
  }
  go(t)
  return clash
}

/** A typed source program: named, typed parameters and a body. */
export interface SourceProgram {
  params: Slot[]
  body: Term
  result: Type
}

/** Type-checks a program; `registry` primitives may be called by name. */
export function defineProgram(params: Array<[string, Type]>, body: Term, ops: OpTable = new OpTable()): SourceProgram {
  const slots = params.map(([name, type]) => ({ name, type }))
  const result = checkSource(body, params, ops)
  return { params: slots, body, result }
}
