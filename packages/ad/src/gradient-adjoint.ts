/**
 * The adjoint of a function reduced to its gradients: for drivers that read back only the
 * gradients of an adjoint run (a checkpointing schedule's vector–Jacobian product, for one),
 * the value updates the adjoint makes to uncompute f's outputs are dead, and so, often, is every
 * read of those outputs. Then the driver need not recompute the outputs before the adjoint runs:
 * `reads` says which arguments' values the reduced program still looks at.
 */
import { TenetError, type Stmt } from '@tenet/ir'
import type { TenetFunction } from '@tenet/reversible'
import { compileAdjoint, compileGenerated, infoOf, type CompiledAdjoint } from './compile.js'
import { dropDeadUpdatesIn } from './dead.js'
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

const cache = new WeakMap<TenetFunction, Map<string, CompiledGradientAdjoint | null>>()

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
 *
 * `observe` (indices of f's parameters, default all) names the gradients the caller reads back:
 * the final values of the others are left unspecified too, so the work that only accumulates
 * into them is dropped (a chain step's extra arguments, say, whose gradients a driver ignores).
 * Their gradient parameters stay in the signature, and must still be passed. An index that is
 * not a parameter is an `ad/argument` error.
 */
export function compileGradientAdjoint(f: TenetFunction, observe?: readonly number[]): CompiledGradientAdjoint | null {
  const nParams = f.ir.params.length
  for (const i of observe ?? [])
    if (!Number.isInteger(i) || i < 0 || i >= nParams)
      throw new TenetError(
        'ad/argument',
        `\`observe\` lists argument ${String(i)}, but \`${f.name}\` has arguments 0..${nParams - 1}`,
      )
  const key = observe ? [...new Set(observe)].sort((a, b) => a - b).join(',') : '*'
  let byKey = cache.get(f)
  if (byKey?.has(key)) return byKey.get(key)!
  const info = infoOf(f)
  let out: CompiledGradientAdjoint | null = null
  if (info.options.checks === false && !info.inverse && !f.ir.params.some((p) => p.type.kind === 'stack')) {
    const full = compileAdjoint(f)
    // the registry the adjoint was compiled with (the generated snippet helpers are registered there)
    const adjInfo = infoOf(full.adjoint)
    const entry = full.functions.find((g) => g.name === adjInfo.name)!
    const wanted = observe ? new Set(observe) : null
    const observed = new Set<string>()
    full.slots.forEach((slot, i) => {
      if (slot && (!wanted || wanted.has(i))) observed.add(entry.params[slot.index]!.name)
    })
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
  if (!byKey) cache.set(f, (byKey = new Map()))
  byKey.set(key, out)
  return out
}
