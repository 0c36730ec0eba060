/**
 * The adjoint of a function reduced to its gradients: for drivers that read back only the
 * gradients of an adjoint run (a checkpointing schedule's vector–Jacobian product, for one),
 * the value updates the adjoint makes to uncompute f's outputs are dead, and so, often, is every
 * read of those outputs. Then the driver need not recompute the outputs before the adjoint runs:
 * `reads` says which arguments' values the reduced program still looks at.
 */
import type { Arg, Expr, Stmt } from '@tenet/ir'
import type { TenetFunction } from '@tenet/reversible'
import { compileAdjoint, compileGenerated, infoOf, type CompiledAdjoint } from './compile.js'
import { dropDeadUpdatesIn } from './dead.js'
import { SINK } from './transform.js'
import { valueReads } from '@tenet/ir/backend'

/** A gradient-only adjoint (see `compileGradientAdjoint`). */
export interface CompiledGradientAdjoint extends CompiledAdjoint {
  /**
   * Per parameter of f: whether the program reads its value (element or scalar; `len` of an
   * array does not count). An argument it does not read may be passed with any content of the
   * right length (an array) or any number (a scalar).
   */
  reads: boolean[]
}

const cache = new WeakMap<TenetFunction, CompiledGradientAdjoint | null>()

/** Every name whose value a statement list mentions: read, written, passed to a call, pushed or popped. */
function mentions(body: readonly Stmt[], out: Set<string>): Set<string> {
  for (const s of body) {
    switch (s.kind) {
      case 'update':
        valueReads(s.target, out)
        valueReads(s.value, out)
        break
      case 'callstmt':
        for (const a of s.args) valueReads(a, out)
        break
      case 'alloc':
      case 'dealloc':
        out.add(s.name)
        if (s.value.kind !== 'emptystack') valueReads(s.value, out)
        break
      case 'if':
        valueReads(s.pre, out)
        if (s.post) valueReads(s.post, out)
        mentions(s.then, out)
        mentions(s.else, out)
        break
      case 'while':
        valueReads(s.pre, out)
        valueReads(s.post, out)
        mentions(s.body, out)
        break
      case 'for':
        valueReads(s.start, out)
        valueReads(s.stop, out)
        if (s.step) valueReads(s.step, out)
        mentions(s.body, out)
        break
      case 'push':
      case 'pop':
        out.add(s.stack.name)
        valueReads(s.value, out)
        break
      case 'safe':
        valueReads(s.expr, out)
        break
      case 'unchecked':
      case 'routine':
      case 'invblock':
        mentions(s.body, out)
        break
      case 'unroutine':
        break
    }
  }
  return out
}

/**
 * The adjoint of `f` (forward direction, width 1) without the updates that its gradients do not
 * need: only the gradient parameters are read back after it, so the values it would restore
 * (uncompute) are left unspecified and the updates that restore them are dropped (see
 * `dropDeadUpdatesIn`). Null when `f` was compiled with run-time checks (whose adjoint must
 * uncompute, since its deallocations check), is an inverse, or has a stack parameter. Its
 * parameters are the adjoint's (see `compileAdjoint`); `reads` says which of f's arguments it
 * still reads, so that a driver which would recompute an output only for the adjoint to
 * uncompute it can skip that.
 */
export function compileGradientAdjoint(f: TenetFunction): CompiledGradientAdjoint | null {
  if (cache.has(f)) return cache.get(f)!
  const info = infoOf(f)
  let out: CompiledGradientAdjoint | null = null
  if (info.options.checks === false && !info.inverse && !f.ir.params.some((p) => p.type.kind === 'stack')) {
    const full = compileAdjoint(f)
    // the registry the adjoint was compiled with (the generated snippet helpers are registered there)
    const adjInfo = infoOf(full.adjoint)
    const entry = full.functions.find((g) => g.name === adjInfo.name)!
    const observed = new Set(
      entry.params
        .slice(f.ir.params.length)
        .map((p) => p.name)
        .filter((n) => n !== SINK),
    )
    const reduced = dropDeadUpdatesIn(full.functions, entry, observed, adjInfo.registry)
    const used = mentions(reduced.entry.body, new Set())
    const adjoint = compileGenerated(info, adjInfo.registry, reduced.functions)[reduced.entry.name]!
    out = {
      ...full,
      adjoint,
      functions: reduced.functions,
      reads: f.ir.params.map((p) => used.has(p.name)),
    }
  }
  cache.set(f, out)
  return out
}
