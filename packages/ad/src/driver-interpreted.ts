/**
 * The gradient driver without code generation, for where `new Function` is forbidden (a page
 * with a strict Content-Security-Policy, `node --disallow-code-generation-from-strings`). It
 * does what the generated driver of `driver.ts` does — check and convert the arguments, run the
 * forward core, seed and zero the gradients, run the adjoint (or the fused or forward-mode
 * program) and read the scalar gradients — by looping over the parameters at run time instead
 * of specialising a function for them. Slower, and it allocates its argument lists per call;
 * the results are the same.
 */
import { TenetError, type Type } from '@tenet/ir'
import { isDetached, MAX_ARRAY_LENGTH } from '@tenet/reversible'
import type { DriverContext } from './driver.js'
import type { CompiledForwardGradient } from './compile.js'
import type { GradientSlot } from './transform.js'

let allowed: boolean | undefined

/** Whether this realm lets code be generated from strings (cached after the first probe). */
export function evalAllowed(): boolean {
  if (allowed === undefined) {
    try {
      allowed = typeof new Function('return 1') === 'function'
    } catch {
      allowed = false
    }
  }
  return allowed
}

/** For tests: pretend code generation is (not) allowed; `undefined` probes again. */
export function setEvalAllowedForTesting(value: boolean | undefined): void {
  allowed = value
}

/** What the interpreted driver needs to know about the gradient program it drives. */
export interface InterpretedDriverSpec {
  ctx: DriverContext
  params: ReadonlyArray<{ name: string; type: Type }>
  slots: ReadonlyArray<GradientSlot | null>
  loss: number
  /** The fused program is driven (forward part and adjoint in one core); its loss is at `lossSlot` of its results. */
  fused: boolean
  lossSlot: number
  forward: CompiledForwardGradient | null
  /** Per parameter: an array the adjoint only reads, passed as it is. */
  shared: boolean[]
  /** The array constructor of each array parameter. */
  ctors: Array<(new (n: number) => Float64Array | Float32Array | Int32Array | Uint8Array) | undefined>
  /** Whether the forward-mode input's gradient is an f32 value. */
  forwardF32: boolean
  resident: boolean
  /**
   * With the uncompute check on (`GradOptions`'s policy): which parameters `f` writes, whose
   * recomputed inputs are compared with the caller's values after the sweep; null when off.
   */
  checkWritten: readonly boolean[] | null
  /** Per parameter: a scratch argument (see \`GradOptions.scratch\`): zero values in its place, its gradient kept out of \`buffers\`. */
  scratch: readonly boolean[]
}

/** The driver's `run` for `spec`, without generated code. */
export function interpretedDriver(spec: InterpretedDriverSpec): (...a: unknown[]) => void {
  const { ctx, params, slots, loss, fused, forward, shared, ctors, checkWritten, scratch } = spec
  if (spec.resident) {
    throw new TenetError(
      'ad/eval-free',
      "a gradient on a backend with resident memory (wasm) needs generated driver code, which this page or process forbids (new Function): use the interpreter backend, rev.with({ backend: 'interpreter' })",
    )
  }
  const n = params.length
  return function run(...a: unknown[]): void {
    if (a.length !== n) ctx.bad(-1, a.length)
    if (ctx.disposed) ctx.bad(-2, null)
    const vals = new Array<unknown>(n)
    for (let i = 0; i < n; i++) {
      const p = params[i]!,
        x = a[i]
      if (p.type.kind === 'scalar') {
        if (p.type.name === 'bool') {
          if (typeof x !== 'boolean') ctx.bad(i, x)
        } else if (typeof x !== 'number') ctx.bad(i, x)
        vals[i] = p.type.name !== 'bool' && ctx.fromHost[i] ? ctx.fromHost[i]!(x as number) : x
      } else if (p.type.kind === 'array') {
        const C = ctors[i]!
        if (
          !(x instanceof C) ||
          ((x as Float64Array).length === 0 && isDetached(x as Float64Array)) ||
          (x as Float64Array).length > MAX_ARRAY_LENGTH
        )
          ctx.bad(i, x)
        if (scratch[i]) {
          // zeros in the caller's array's place, whatever it holds
          const len = (x as Float64Array).length
          let v = ctx.sv[i]
          if (v === undefined || v.length !== len) v = ctx.sv[i] = new C(len)
          else v.fill(0)
          vals[i] = v
        } else if (shared[i]) vals[i] = x
        else if (ctx.fromHost[i]) vals[i] = ctx.array(i, x)
        else {
          const src = x as Float64Array
          let v = ctx.values[i]
          if (v === undefined || v.length !== src.length) v = ctx.values[i] = new C(src.length)
          v.set(src)
          vals[i] = v
        }
      } else vals[i] = ctx.stack(i, x)
    }
    ctx.overlap?.check(a)
    const S = ctx.scalars
    if (forward) {
      const argv = [...vals]
      for (let i = 0; i < n; i++) if (forward.tangentAt[i]! >= 0) argv.push(i === forward.input ? 1 : 0)
      ctx.adj(...argv)
      const Q = ctx.adj.results
      ctx.loss[0] = ctx.toHost[loss] ? ctx.toHost[loss]!(Q[loss]!) : Q[loss]!
      S[loss] = 1
      const g = Q[forward.tangentAt[loss]!]!
      S[forward.input] = spec.forwardF32 ? Math.fround(g) : g
      return
    }
    if (!fused) {
      ctx.fwd(...vals)
      const R = ctx.fwd.results
      for (let i = 0; i < n; i++) {
        const p = params[i]!
        if (p.type.kind === 'scalar') vals[i] = p.type.name === 'bool' ? R[i] !== 0 : R[i]
      }
      ctx.loss[0] = ctx.toHost[loss] ? ctx.toHost[loss]!(vals[loss] as number) : (vals[loss] as number)
    }
    const grads: unknown[] = []
    for (let i = 0; i < n; i++) {
      const s = slots[i]
      if (!s) continue
      if (s.kind === 'scalar') grads.push(i === loss ? 1 : 0)
      else if (s.kind === 'array') {
        const v = vals[i] as Float64Array | Float32Array
        // a scratch argument's gradient is the sweep's own, kept out of \`buffers\`
        let g = scratch[i] ? ctx.gv[i] : ctx.buffers[i]
        if (g !== undefined && g.length === v.length) g.fill(0)
        else if (scratch[i])
          g = ctx.gv[i] = v instanceof Float32Array ? new Float32Array(v.length) : new Float64Array(v.length)
        else g = ctx.gradBuffer(i, v)
        grads.push(g)
      } else grads.push(new Array((vals[i] as unknown[]).length).fill(0))
    }
    const Q = ctx.adj.results
    if (fused) {
      ctx.adj(...vals, ...grads, 0, 0)
      ctx.loss[0] = ctx.toHost[loss] ? ctx.toHost[loss]!(Q[spec.lossSlot]!) : Q[spec.lossSlot]!
    } else ctx.adj(...vals, ...grads, 0)
    if (checkWritten) {
      // the sweep recomputed the inputs of every argument f writes: compare with the caller's
      for (let i = 0; i < n; i++) {
        if (!checkWritten[i]) continue
        const p = params[i]!
        if (p.type.kind === 'scalar' && p.type.name !== 'bool') {
          const want = a[i] as number
          const got = ctx.toHost[i] ? ctx.toHost[i]!(Q[i]!) : Q[i]!
          if (!(got === want || Math.abs(got - want) <= ctx.tol * Math.max(1, Math.abs(want))))
            ctx.uncomputed(i, -1, got, want)
        } else if (p.type.kind === 'array' && scratch[i]) {
          // a scratch argument started at zero
          const v = vals[i] as Float64Array
          ctx.checkArray(i, v, new Float64Array(v.length))
        } else if (p.type.kind === 'array' && !shared[i])
          ctx.checkArray(i, vals[i] as Float64Array, a[i] as Float64Array)
      }
    }
    for (let i = 0; i < n; i++) {
      const s = slots[i]
      if (s?.kind === 'scalar') S[i] = Q[s.index]!
    }
  }
}
