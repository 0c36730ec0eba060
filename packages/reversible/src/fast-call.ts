/**
 * The public call `m.f(a, b, …)` of a function whose call needs no per-call bookkeeping besides
 * checking its arguments: JavaScript generated for its parameter list, in place of the general
 * wrapper of `compile.ts`.
 *
 * The general wrapper takes its arguments as a rest array, copies them into a second array and
 * calls the backend's core with a spread; on Node 20 that costs about 100 ns a call, 40 times the
 * core of a one-line function. Here each parameter is a named argument, each check is written out
 * for its parameter's kind, the core is called with its arguments listed, and the only allocation
 * is the result array. The behaviour is the general wrapper's: the same checks in the same order,
 * the same errors (the same functions raise them), the aliasing rule (its fast path inline, the
 * full test only when an array changed since the last call that passed it), nested calls tested
 * against the running ones, the running-call count put back by a store.
 *
 * With run-time checks on, each written array is copied before the call into a snapshot kept from
 * call to call (one set per depth of re-entry), and put back when the call fails, as the general
 * wrapper does. Used only where the
 * general wrapper would do nothing else: no array converted on entry or exit (fixed, ulog,
 * tropical arrays), no memory that can grow under the arguments, no host function that may call
 * Tenet again (`makeFunction` decides). Where `new Function` is not allowed (a content security policy
 * without 'unsafe-eval'), `fastCall` returns undefined and the general wrapper is used.
 */
import type { CompiledFunction, Param } from '@tenet/ir'
import {
  MAX_ARRAY_LENGTH,
  argumentError,
  arityError,
  isDetached,
  type HostParam,
  type OverlapGuard,
} from './host-boundary.js'
import { RUNNING, checkNested, type CallShape } from './running-calls.js'

/** What the generated call needs (all of it fixed when the function is compiled). */
export interface FastCallParts {
  /** The JavaScript function's name (`f`, `f_inverse`). */
  name: string
  /** The name errors use for the function (`f`, `f.inverse`). */
  label: string
  /** The IR function's name (argument errors name it, as `checkArgument`'s callers do). */
  irName: string
  params: readonly Param[]
  hps: readonly HostParam[]
  /** Per scalar parameter with a host conversion back (ulog): result, representation passed, argument → host value. */
  back: ReadonlyArray<((r: number, v: unknown, a: unknown) => unknown) | undefined>
  core: CompiledFunction
  life: { disposed: boolean }
  overlap: OverlapGuard | undefined
  shape: CallShape
  /**
   * The written array parameters to snapshot before the call and restore when it fails (run-time
   * checks on); empty with checks off.
   */
  snapshot: readonly number[]
  /** Throws the error of a call of a disposed module. */
  disposed: () => never
  /** The error to throw for what the core threw. */
  failed: (e: unknown) => unknown
}

/** The generated call, or undefined where JavaScript cannot be generated here. */
export function fastCall(p: FastCallParts): ((...args: unknown[]) => unknown[]) | undefined {
  const n = p.params.length
  const args = Array.from({ length: n }, (_, i) => `a${i}`)
  const vals = Array.from({ length: n }, (_, i) => `v${i}`)
  const lines: string[] = []
  lines.push('if (life.disposed) disposed()')
  lines.push(`if (arguments.length !== ${n}) arity(arguments.length)`)
  for (let i = 0; i < n; i++) {
    const hp = p.hps[i]!
    const a = args[i]
    // (the tests of `checkArgument`, per kind, in its order)
    if (hp.kind === 'number') lines.push(`if (typeof ${a} !== 'number') bad(${i}, ${a})`)
    else if (hp.kind === 'boolean') lines.push(`if (typeof ${a} !== 'boolean') bad(${i}, ${a})`)
    else if (hp.kind === 'array')
      lines.push(
        `if (!(${a} instanceof C[${i}]) || (${a}.length === 0 && isDetached(${a})) || ${a}.length > MAX) bad(${i}, ${a})`,
      )
    else lines.push(`if (!Array.isArray(${a})) bad(${i}, ${a})`)
    // (converted right after its check, as the general wrapper does: a conversion that throws, a
    // fixed-point scalar out of range, comes before the check of a later argument)
    lines.push(`const v${i} = ${hp.kind === 'number' && hp.fromHost ? `F[${i}](${a})` : a}`)
  }
  const ov = p.overlap
  if (ov) {
    const changed = ov.arrays.map((j, k) => `v${j} !== seen[${k}]`).join(' || ')
    lines.push(`if (${changed}) ov.check([${vals.join(', ')}])`)
  }
  lines.push(`if (R.count > 0) nested(shape, [${vals.join(', ')}])`)
  // the snapshots a failed checked call restores from, one per written array, in a frame per depth
  // of re-entry (a primitive's JavaScript \`evaluate\`, or a getter of an argument that the
  // snapshot, the interpreter or the restore reads, may call this function again while it runs),
  // reused call after call. The depth is raised before the first snapshot and put back only after
  // the restore, so a call from inside either uses the next frame; put back by a store on every path.
  const restore: string[] = []
  const framed = p.snapshot.length > 0
  if (framed) lines.push('const d = D.n', 'D.n = d + 1', 'let Fr = S[d]', 'if (Fr === undefined) Fr = S[d] = []')
  const take: string[] = []
  for (const i of p.snapshot) {
    if (p.hps[i]!.kind === 'stack') {
      take.push(`Fr[${i}] = v${i}.slice()`)
      // (element by element: a spread of a long stack as arguments overflows the JS stack)
      restore.push(`putStack(v${i}, Fr[${i}]);`)
    } else {
      // (the argument passed its check as an instance of the parameter's typed array: a snapshot
      // of that type and the argument's length takes its bits, whichever array it was made for)
      take.push(
        `const n${i} = v${i}.length`,
        `let s${i} = Fr[${i}]`,
        `if (s${i} === undefined || s${i}.length !== n${i}) s${i} = Fr[${i}] = new C[${i}](n${i})`,
        // (\`set\` between arrays of one type copies the bits: an element loop would read each
        // element as a double, and a float32 signalling NaN would come back quieted)
        `s${i}.set(v${i})`,
      )
      // (the typed arrays' own \`set\`, not one a subclass of the argument redefines)
      restore.push(`SET.call(v${i}, Fr[${i}]);`)
    }
  }
  if (framed) lines.push(`try { ${take.join('; ')} } catch (e) { D.n = d; throw e }`)
  lines.push('const running = R.count')
  lines.push(
    `try { core(${vals.join(', ')}) } catch (e) { R.count = running; ${framed ? `try { ${restore.join(' ')} } finally { D.n = d }` : ''} throw failed(e) }`,
  )
  lines.push(framed ? 'R.count = running; D.n = d' : 'R.count = running')
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const t = p.params[i]!.type
    if (t.kind !== 'scalar') out.push(`a${i}`)
    else if (t.name === 'bool') out.push(`res[${i}] !== 0`)
    else if (p.back[i]) out.push(`B[${i}](res[${i}], v${i}, a${i})`)
    else out.push(`res[${i}]`)
  }
  if (n > 0) lines.push('const res = core.results')
  lines.push(`return [${out.join(', ')}]`)
  // (a method: named by its key, not constructible and without a \`prototype\`, as the general
  // wrapper's arrow; unlike an arrow it has \`arguments\`)
  const body = `'use strict'\nreturn { [name](${args.join(', ')}) {\n  ${lines.join('\n  ')}\n} }[name]`
  const C = p.hps.map((hp) => hp.ctor)
  const F = p.hps.map((hp) => hp.fromHost)
  const bad = (i: number, a: unknown): never => argumentError(p.irName, p.params, p.hps[i]!, i, a)
  const arity = (got: number): never => arityError(p.label, p.params, got)
  try {
    const make = new Function(
      'name',
      'life',
      'disposed',
      'arity',
      'bad',
      'C',
      'F',
      'B',
      'isDetached',
      'MAX',
      'ov',
      'seen',
      'R',
      'nested',
      'shape',
      'core',
      'failed',
      'S',
      'D',
      'SET',
      'putStack',
      body,
    )
    return make(
      p.name,
      p.life,
      p.disposed,
      arity,
      bad,
      C,
      F,
      p.back,
      isDetached,
      MAX_ARRAY_LENGTH,
      ov,
      ov?.seen,
      RUNNING,
      checkNested,
      p.shape,
      p.core,
      p.failed,
      [],
      { n: 0 },
      TYPED_SET,
      putStack,
    ) as (...args: unknown[]) => unknown[]
  } catch {
    // (no code generation allowed here: the general wrapper does the same work)
    return undefined
  }
}

/** \`%TypedArray%.prototype.set\`: the restore copies bits with it whatever the argument's class redefines. */
export const TYPED_SET = Object.getPrototypeOf(Int8Array.prototype).set as (this: unknown, a: ArrayLike<number>) => void

/** Puts stack \`v\` back to the values of \`snap\` (in place: the caller's array object). */
export function putStack(v: unknown[], snap: readonly unknown[]): void {
  v.length = 0
  for (let j = 0; j < snap.length; j++) v.push(snap[j])
}
