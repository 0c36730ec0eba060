/**
 * The gradient drivers: a generated fixed-arity function per adjoint (arguments in locals, both
 * programs called positionally, nothing allocated per call), or the code-free driver of
 * `driver-interpreted.ts` where code generation is blocked. `grad` wraps one.
 */
import { TenetError, type CompiledFunction, type ResidentArray } from '@tenet/ir'
import {
  argumentError,
  arityError,
  hostParams,
  isDetached,
  MAX_ARRAY_LENGTH,
  overlapGuard,
  type OverlapGuard,
} from '@tenet/reversible'
import type { CompiledAdjoint, CompiledForwardGradient } from './compile.js'
import { gradientScalar } from './expr.js'
import { evalAllowed, interpretedDriver } from './driver-interpreted.js'
import { copyIn, CTORS, hostConversions, scalarReadBack, sharedArrays, type TypedArray } from './arguments.js'
import { directApplies, directDriverBody, overlapLines } from './driver-direct.js'
import { copyOf, zeroOf } from './short-arrays.js'

/** Support object of a generated gradient driver. */
export interface DriverContext {
  fwd: CompiledFunction
  adj: CompiledFunction
  fromHost: Array<((x: number) => number) | undefined>
  toHost: Array<((x: number) => number) | undefined>
  scalars: Float64Array
  loss: Float64Array
  buffers: Array<Float64Array | Float32Array | undefined>
  /** The driver's copies of the array arguments; on a backend with resident memory, the views of \`res\` of the last call. */
  values: Array<TypedArray | undefined>
  /** The generated driver's JavaScript (empty where eval is forbidden), for tests and debugging. */
  source: string
  /**
   * The aliasing rule of the differentiated function (see \`overlapGuard\` of \`@tenet/reversible\`):
   * an array it writes shares no memory with another array argument; undefined where there is nothing to test.
   */
  overlap: OverlapGuard | undefined
  bad(i: number, a: unknown): never
  array(i: number, a: unknown): TypedArray
  gradBuffer(i: number, v: TypedArray): Float64Array | Float32Array
  stack(i: number, a: unknown): unknown[]
  /** Per array parameter on a backend with resident memory (`CompiledFunction.resident`): its values there. */
  res: Array<ResidentArray | undefined>
  /**
   * The gradients of the array parameters on such a backend: one resident block (so that one
   * \`fill\` zeroes them all), its byte view \`gz\`, the lengths it was laid out for, and the
   * current view of each gradient in it (\`gv[i]\`). The direct driver keeps the values of the
   * scratch arguments there too, after the gradients (their lengths \`gslens\`, views \`sv[i]\`).
   */
  gblock: ResidentArray | undefined
  gz: Uint8Array | undefined
  glens: number[]
  gslens: number[]
  gv: Array<Float64Array | Float32Array | undefined>
  /**
   * Lays the gradient block out for these lengths (one per parameter, −1 for none: of its
   * gradient, and of its values where it is a scratch argument kept in the block), reusing it
   * when they are those of the last call, and takes fresh views of it, all zero.
   */
  gradients(lens: number[], scratchLens?: number[]): void
  /** The byte offset of each gradient in the block, then of each scratch argument's values. */
  gat: number[]
  gsat: number[]
  /** Takes fresh views of the block (after a call that grew the memory), keeping the contents. */
  gviews(): void
  /** Replaces \`res[i]\` with a zero array of n elements; returns its view. */
  resize(i: number, n: number): TypedArray
  /** Whether `resize` allocated since the driver last took its views (the memory may have grown). */
  moved: boolean
  /** Releases every resident array of the driver (see `GradientFunction.release`). */
  release(): void
  /**
   * On the cpu backend (no resident memory): the gradients of the array parameters and the zero
   * arrays that stand for the scratch arguments (see \`GradOptions.scratch\`) in one block, so that
   * one \`fill\` per call zeroes them all: the block as doubles (\`hb\`), the view of each gradient
   * in it (\`gv[i]\`, also in \`buffers[i]\` for an argument that is not scratch) and of each
   * scratch argument's values (\`sv[i]\`).
   */
  hb: Float64Array | undefined
  /**
   * The part of \`hb\` that a call zeroes: all of it, but for the arrays the program writes before
   * it reads them (\`CompiledFunction.overwritten\`), which the block holds after the others.
   */
  hz: Float64Array | undefined
  sv: Array<TypedArray | undefined>
  /**
   * Lays the host block out for these lengths (per parameter, −1 for none: of its gradient, of
   * its scratch values), all zero, and takes the views. The arrays marked in \`kept\` (per
   * parameter: of its gradient, of its scratch values) go last, outside \`hz\`.
   */
  hostBlock(gradLens: number[], scratchLens: number[], kept?: { grads: boolean[]; scratch: boolean[] }): void
  /** Set by \`dispose\`: later calls throw. */
  disposed: boolean
  /**
   * The resident arrays the driver holds, in an object of their own: what the finalizer frees
   * when the gradient function is collected (it must not reach the function, or it never is).
   */
  held: HeldMemory
  /** The object whose collection frees \`held\`: referenced by the driver and by every gradient view it hands out. */
  token: object
  /**
   * Checks that array i came back to the caller's values \`a\` after the adjoint sweep (see
   * \`GradOptions.uncompute\`); the generated driver inlines the same loop.
   */
  checkArray(i: number, v: ArrayLike<number>, a: ArrayLike<number>): void
  /** Raises (or warns about) argument i, element e (−1 for a scalar), which came back as \`got\`, not \`want\`. */
  uncomputed(i: number, e: number, got: number, want: number): void
  /** The relative tolerance of the uncompute check. */
  tol: number
}

/**
 * The length from which the generated driver copies an argument and zeroes a gradient with the
 * \`set\` and \`fill\` builtins (memcpy and memset), below which with a loop: a loop of JIT code
 * costs about 1 ns per element, the builtins a call (tens of ns) and then little. Measured
 * in-process on a loaded 2-core machine (Node 20): a copy and a zeroing of n doubles took the
 * same at n ≈ 12, 0.07 µs by loop and 0.05 µs by builtin at 16, 0.25 µs and 0.05 µs at 64; the
 * unitary gradient at M = 16 (five arrays of 120–256 elements) spent ~1.2 µs of ~19 µs in them.
 */
export const SHORT = 16

/**
 * Generates a fixed-arity driver for one adjoint: arguments stay in locals and both cores are
 * called positionally, so a gradient sweep allocates nothing (no argument arrays, no boxing).
 * Identifiers are generated here; no user text reaches the generated source.
 */
export function makeDriver(
  c: CompiledAdjoint,
  loss: number,
  fused: CompiledFunction | null = null,
  forward: CompiledForwardGradient | null = null,
  check: UncomputeCheck = { policy: 'off', tolerance: 0 },
  scratch: readonly number[] = [],
): { run: (...a: unknown[]) => void; ctx: DriverContext } {
  const params = c.params
  const n = params.length
  const isScratch = params.map((_, i) => scratch.includes(i))
  const registry = c.info.registry
  const shared = sharedArrays(c)
  const hps = hostParams(registry, params)
  // which array parameters have f32 gradients (the rest f64), for the gradient block
  const gradF32 = params.map((p) => p.type.kind === 'array' && gradientScalar(p.type.elem) === 'f32')
  /** The typed array constructor of array parameter i's values. */
  const valueCtor = (i: number) => CTORS[registry.numberSystem((params[i]!.type as { elem: string }).elem).arrayType]
  const ctx: DriverContext = {
    fwd: c.forward,
    adj: forward?.core ?? fused ?? c.adjoint.core,
    fromHost: params.map((_, i) => hostConversions(c, i).fromHost),
    toHost: params.map((_, i) => hostConversions(c, i).toHost),
    scalars: new Float64Array(n),
    loss: new Float64Array(1),
    buffers: new Array(n).fill(undefined),
    values: new Array(n).fill(undefined),
    source: '',
    overlap: overlapGuard(
      `${c.info.name}${c.info.inverse ? '.inverse' : ''}`,
      params,
      c.info.program.writes.get(c.info.name) ?? [],
    ),
    bad(i, a) {
      if (i === -2)
        throw new TenetError(
          'ad/disposed',
          `this gradient function of \`${c.info.name}\` was disposed; make a new one with \`grad\``,
        )
      if (i < 0) return arityError(c.info.name, params, a as number)
      return argumentError(c.info.name, params, hps[i]!, i, a)
    },
    array(i, a) {
      const p = params[i]!
      const ctor = CTORS[registry.numberSystem((p.type as { elem: string }).elem).arrayType]
      if (!(a instanceof ctor) || (a as TypedArray).length > MAX_ARRAY_LENGTH) ctx.bad(i, a)
      let b = ctx.values[i]
      if (!b || b.length !== (a as TypedArray).length) b = ctx.values[i] = new ctor((a as TypedArray).length)
      copyIn(b, a as TypedArray, ctx.fromHost[i])
      return b
    },
    gradBuffer(i, v) {
      // a new zero buffer (the driver zeroes a reused one itself)
      return (ctx.buffers[i] = v instanceof Float32Array ? new Float32Array(v.length) : new Float64Array(v.length))
    },
    stack(i, a) {
      if (!Array.isArray(a)) ctx.bad(i, a)
      return (a as unknown[]).slice()
    },
    moved: false,
    res: new Array(n).fill(undefined),
    gblock: undefined,
    gz: undefined,
    glens: [],
    gv: new Array(n).fill(undefined),
    gradients(lens, scratchLens = []) {
      // 16-byte aligned places, as the backend gives separate arrays
      const at: number[] = []
      const sat: number[] = []
      let bytes = 0
      lens.forEach((len, i) => {
        at[i] = bytes
        if (len >= 0) bytes += Math.ceil((len * (gradF32[i] ? 4 : 8)) / 16) * 16
      })
      scratchLens.forEach((len, i) => {
        sat[i] = bytes
        if (len >= 0) bytes += Math.ceil((len * valueCtor(i).BYTES_PER_ELEMENT) / 16) * 16
      })
      const same = (a: number[], b: number[]) => a.length === b.length && a.every((len, i) => len === b[i])
      if (!ctx.gblock || !same(lens, ctx.glens) || !same(scratchLens, ctx.gslens)) {
        // never empty, so that a detached view shows in its length (0) even when every gradient is
        // (allocated before the old block is given back: an allocation that throws, as one from a
        // host function during a call of the module does, leaves the driver as it was)
        const block = memory!.allocate('bool', Math.max(bytes, 16))
        ctx.gblock?.release()
        ctx.gblock = ctx.held.gblock = block
        ctx.glens = lens.slice()
        ctx.gslens = scratchLens.slice()
        ctx.moved = true
      }
      ctx.gat = at
      ctx.gsat = sat
      ctx.gviews()
      ctx.gz!.fill(0)
    },
    gat: [],
    gsat: [],
    gslens: [],
    hb: undefined,
    hz: undefined,
    sv: new Array(n).fill(undefined),
    hostBlock(gradLens, scratchLens, kept) {
      // 8-byte aligned places, every gradient and scratch array of the call in one buffer
      const size = (i: number, grad: boolean) =>
        grad
          ? gradF32[i]
            ? 4
            : 8
          : CTORS[registry.numberSystem((params[i]!.type as { elem: string }).elem).arrayType].BYTES_PER_ELEMENT
      const at: Array<[number, number, boolean]> = []
      let bytes = 0
      const place = (i: number, len: number, grad: boolean) => {
        if (len < 0) return
        at.push([i, bytes, grad])
        bytes += Math.ceil((len * size(i, grad)) / 8) * 8
      }
      // those zeroed per call first, then those the program writes before reading them
      gradLens.forEach((len, i) => kept?.grads[i] || place(i, len, true))
      scratchLens.forEach((len, i) => kept?.scratch[i] || place(i, len, false))
      const zeroed = bytes
      gradLens.forEach((len, i) => kept?.grads[i] && place(i, len, true))
      scratchLens.forEach((len, i) => kept?.scratch[i] && place(i, len, false))
      const buffer = new ArrayBuffer(bytes)
      ctx.hb = new Float64Array(buffer)
      ctx.hz = zeroed === bytes ? ctx.hb : new Float64Array(buffer, 0, zeroed / 8)
      for (const [i, offset, grad] of at) {
        if (grad) {
          const len = gradLens[i]!
          const v = (ctx.gv[i] = gradF32[i]
            ? new Float32Array(buffer, offset, len)
            : new Float64Array(buffer, offset, len))
          if (!isScratch[i]) ctx.buffers[i] = v
        } else {
          const C = CTORS[registry.numberSystem((params[i]!.type as { elem: string }).elem).arrayType]
          ctx.sv[i] = new C(buffer, offset, scratchLens[i]!)
        }
      }
    },
    gviews() {
      const z = (ctx.gz = ctx.gblock!.array as Uint8Array)
      ctx.glens.forEach((len, i) => {
        const at = z.byteOffset + ctx.gat[i]!
        if (len < 0) return
        const v = (ctx.gv[i] = gradF32[i] ? new Float32Array(z.buffer, at, len) : new Float64Array(z.buffer, at, len))
        // a gradient handed out keeps its driver's memory alive (see \`GradientFunction.dispose\`)
        Object.defineProperty(v, KEEP, { value: ctx.token })
      })
      ctx.gslens.forEach((len, i) => {
        if (len >= 0) ctx.sv[i] = new (valueCtor(i))(z.buffer as ArrayBuffer, z.byteOffset + ctx.gsat[i]!, len)
      })
    },
    release() {
      // (a direct driver lays its views out again)
      ctx.moved = true
      for (const r of ctx.res) r?.release()
      ctx.res.fill(undefined)
      ctx.gblock?.release()
      ctx.gblock = ctx.held.gblock = ctx.gz = undefined
      ctx.gv.fill(undefined)
      ctx.buffers.fill(undefined)
      ctx.values.fill(undefined)
      ctx.hb = ctx.hz = undefined
      ctx.sv.fill(undefined)
    },
    disposed: false,
    held: { res: [], gblock: undefined },
    token: {},
    tol: check.tolerance,
    checkArray(i, v, a) {
      const th = ctx.toHost[i],
        tol = ctx.tol
      for (let j = 0; j < a.length; j++) {
        const got = th ? th(v[j]!) : v[j]!,
          want = a[j]!
        if (got !== want && !(Math.abs(got - want) <= tol * Math.max(1, Math.abs(want))))
          ctx.uncomputed(i, j, got, want)
      }
    },
    uncomputed(i, e, got, want) {
      const p = params[i]!
      const what = `argument ${i + 1} (\`${p.name}\`)${e >= 0 ? `, element ${e},` : ''}`
      const message =
        `the adjoint sweep of \`${c.info.name}\` did not bring ${what} back to its input: it recomputed ${got} where the input was ${want} ` +
        `(tolerance ${ctx.tol} relative to max(1, |input|)). Uncomputing \`${c.info.name}\` is numerically unstable at these arguments, so the ` +
        `gradient was taken at other values and may be wrong. Options: reformulate the program (store the value instead of recomputing it), ` +
        `or \`grad(f, { uncompute: 'warn' | 'off', uncomputeTolerance })\``
      if (check.policy === 'error') throw new TenetError('ad/uncompute', message)
      if (!warned) {
        warned = true
        console.warn(`[tenet] ${message} (warned once per gradient function)`)
      }
    },
    resize(i, len) {
      // (the new array first: an allocation that throws leaves the old one in place, see \`gradients\`)
      const r = memory!.allocate((params[i]!.type as { elem: string }).elem, len)
      ctx.res[i]?.release()
      ctx.res[i] = r
      ctx.moved = true
      return r.array
    },
  }
  let warned = false
  ctx.held.res = ctx.res
  // On a backend with its own memory (wasm), the values and gradients live there: the adjoint
  // reads and writes them in place, and nothing is copied back after a call. Not for a driver made
  // while a call of that memory is under way (from a host function: \`gradient(f, …)\` there), which
  // could not allocate its arrays: it passes host arrays, as on the cpu backend.
  const memory = ctx.adj.resident?.busy?.() ? undefined : ctx.adj.resident
  // where the backend's programs can be called without their wrappers, a driver that does (see driver-direct.ts)
  const direct = memory && evalAllowed() ? directDriver(c, ctx, loss, fused, forward, check, isScratch) : null
  if (direct) return { run: direct, ctx }
  const args = params.map((_, i) => `a${i}`)
  const lines: string[] = []
  // the values of array argument \`i\` put into its view \`v\` in the backend's memory: a scratch
  // argument starts at zero, whatever the caller's array holds; short arrays are copied by a loop,
  // as on the host (\`set\` is a runtime call: ~20 ns for 2 elements)
  const residentValues = (i: number, v: string): string =>
    isScratch[i]
      ? `${v}.fill(0);`
      : ctx.fromHost[i]
        ? `for (let j = 0; j < a${i}.length; j++) ${v}[j] = H${i}(a${i}[j]);`
        : `if (a${i}.length < ${SHORT}) for (let j = 0; j < a${i}.length; j++) ${v}[j] = a${i}[j]; else ${v}.set(a${i});`
  // on the cpu backend, the gradients of the array parameters and the scratch arrays live in one
  // block (see \`hostBlock\`): one \`fill\` zeroes them all, where a copy or a zeroing per array
  // costs a builtin call (or a loop) each; laid out again only when a length changes
  const hostGrads = memory || forward ? [] : params.flatMap((_, i) => (c.slots[i]?.kind === 'array' ? [i] : []))
  const hostScratch = memory || forward ? [] : params.flatMap((_, i) => (isScratch[i] ? [i] : []))
  // With such a block, \`run\` checks the arguments and calls \`work\`, made per layout (see
  // \`hostLayout\` below), which does the rest with the block, its views and the copies of the
  // arrays as constants of its closure; without, \`run\` does it all (\`checks\` is \`lines\`).
  const laid = hostGrads.length > 0 || hostScratch.length > 0
  // the arrays copied into arrays of the driver's (\`values\`), laid out with the block
  const copied = laid
    ? params.flatMap((p, i) => (p.type.kind === 'array' && !isScratch[i] && !shared[i] && !ctx.fromHost[i] ? [i] : []))
    : []
  const checks: string[] = laid ? [] : lines
  checks.push(`if (arguments.length !== ${n}) ctx.bad(-1, arguments.length);`)
  // (\`token\`: the driver's memory is freed only once this function is unreachable)
  checks.push('if (ctx.disposed) ctx.bad(-2, token);')
  const vals: string[] = []
  params.forEach((p, i) => {
    const v = `v${i}`
    vals.push(v)
    if (p.type.kind === 'scalar') {
      if (p.type.name === 'bool') {
        checks.push(`if (typeof a${i} !== 'boolean') ctx.bad(${i}, a${i});`)
        lines.push(`let ${v} = a${i};`)
      } else {
        checks.push(`if (typeof a${i} !== 'number') ctx.bad(${i}, a${i});`)
        lines.push(`let ${v} = ${ctx.fromHost[i] ? `H${i}(a${i})` : `a${i}`};`)
      }
    } else if (p.type.kind === 'array') {
      // specialised per parameter, so that every check, copy and fill below sees one array type
      const ctor = `C${i}`
      checks.push(
        `if (!(a${i} instanceof ${ctor}) || a${i}.length === 0 && isDetached(a${i}) || a${i}.length > ${MAX_ARRAY_LENGTH}) ctx.bad(${i}, a${i});`,
      )
      if (memory && params.findIndex((q) => q.type.kind === 'array') !== i) {
        // the view of the last call (kept in \`values\`) while its length shows that it is not
        // detached (a grown memory detaches every view); the \`array\` getter, not inlined in a
        // driver this large, cost about 10 ns per array (the first array still goes through it,
        // which throws once the module is disposed and its blocks may be another program's)
        lines.push(`let ${v} = ctx.values[${i}];`)
        lines.push(
          `if (${v} === undefined || ${v}.length !== a${i}.length || ${v}.length === 0) { ${v} = ctx.res[${i}]?.array; if (${v} === undefined || ${v}.length !== a${i}.length) ${v} = ctx.resize(${i}, a${i}.length); ctx.values[${i}] = ${v}; }`,
        )
        lines.push(residentValues(i, v))
      } else if (memory) {
        lines.push(`let ${v} = ctx.res[${i}]?.array;`)
        lines.push(`if (${v} === undefined || ${v}.length !== a${i}.length) ${v} = ctx.resize(${i}, a${i}.length);`)
        lines.push(residentValues(i, v))
      } else if (isScratch[i]) lines.push(laid ? `const ${v} = SV${i};` : `let ${v};`)
      else if (shared[i]) lines.push(`const ${v} = a${i};`)
      else if (ctx.fromHost[i]) lines.push(`const ${v} = ctx.array(${i}, a${i});`)
      // (the copy laid out with the block, and copied by a function made for its length: see short-arrays.ts)
      else if (laid) lines.push(`const ${v} = V${i}; CP${i}(${v}, a${i});`)
      else {
        lines.push(`let ${v} = ctx.values[${i}];`)
        lines.push(
          `if (${v} === undefined || ${v}.length !== a${i}.length) ${v} = ctx.values[${i}] = new ${ctor}(a${i}.length);`,
        )
        // a loop for the short arrays of scalar code (cheaper than a call of the builtin), \`set\` for the rest
        lines.push(
          `if (a${i}.length < ${SHORT}) for (let j = 0; j < a${i}.length; j++) ${v}[j] = a${i}[j]; else ${v}.set(a${i});`,
        )
      }
    } else {
      // (its check in \`run\` too, before the layout, as every argument's: \`stack\` checks again)
      if (laid) checks.push(`if (!Array.isArray(a${i})) ctx.bad(${i}, a${i});`)
      lines.push(`const ${v} = ctx.stack(${i}, a${i});`)
    }
  })
  // (after every argument's own check, before anything runs)
  checks.push(...overlapLines(ctx.overlap?.arrays, n))
  // an allocation may have grown the memory, which detaches the views taken before it (their
  // contents stay in the memory): the current ones
  const arrays = params.flatMap((p, i) => (p.type.kind === 'array' ? [i] : []))
  const current = (withGradients: boolean) => {
    if (!memory) return
    const refs = arrays.map(
      (i) =>
        `v${i} = ctx.res[${i}].array;${withGradients && c.slots[i]?.kind === 'array' ? ` g${i} = ctx.gv[${i}];` : ''}`,
    )
    lines.push(`if (ctx.moved) { ctx.moved = false; ${refs.join(' ')} }`)
  }
  let hostLayout: { layout: string[]; state: string[] } | undefined
  if (laid) {
    // the arrays the fused program writes before it reads them need no zeroing (see
    // \`CompiledFunction.overwritten\`: the graph embedding's lengths and their gradients, and the
    // squared lengths it contracts to scalars); not where the uncompute check reads them after
    const overwritten = fused && check.policy === 'off' ? fused.overwritten : undefined
    // (written below the length of the array itself, of the value whose gradient it is, or of
    // the gradient of this value: the driver gives a gradient its value's length)
    const covers = (at: number, i: number) => {
      const y = overwritten![at]!
      return y === at || y === i || (c.slots[i]?.kind === 'array' && y === c.slots[i]!.index)
    }
    const kept = overwritten && {
      grads: params.map((_, i) => {
        const s = c.slots[i]
        return s?.kind === 'array' && isScratch[i] && covers(s.index, i)
      }),
      scratch: params.map((_, i) => isScratch[i] && covers(i, i)),
    }
    const keptArg = kept && [...kept.grads, ...kept.scratch].some((k) => k) ? `, ${JSON.stringify(kept)}` : ''
    // The layout: the copies of the arrays (reused while their lengths stay), then the block, which
    // \`release\` gives back (it sets \`moved\`). \`laidOut\` closes over them: a closure whose
    // variables are never assigned, which V8 specialises to them where it inlines \`work\` into
    // \`run\` (constant views: no loads of the block's views, lengths and places per call), as the
    // direct driver does (driver-direct.ts). The part of the block a call zeroes (\`hz\`) is zeroed
    // by a function made for its length (straight-line while short, \`fill\` beyond: short-arrays.ts).
    // The scalar-mul gradient (\`s += x[0] * x[1]\`, a 2-element block) took 5.3 ns where the driver
    // that looked the block up and zeroed it by a loop took 8.2 ns (plain objective 3.9 ns; minima of
    // alternated processes), and 11.8 ns where it took 18.6 ns in a process that had detached an
    // array buffer (in-process A/B; Node 20, loaded 2-core machine).
    const layout: string[] = []
    for (const i of copied)
      layout.push(
        `{ const w = ctx.values[${i}]; if (w === undefined || w.length !== a${i}.length) ctx.values[${i}] = new C${i}(a${i}.length); }`,
      )
    layout.push(
      `ctx.hostBlock([${params.map((_, i) => (hostGrads.includes(i) ? `a${i}.length` : '-1')).join(', ')}], [${params.map((_, i) => (isScratch[i] ? `a${i}.length` : '-1')).join(', ')}]${keptArg});`,
    )
    layout.push('ctx.moved = false;')
    layout.push('const HB = ctx.hb, NB = HB.length, HZ = ctx.hz, ZB = zeroOf("Float64Array", HZ.length);')
    for (const i of hostGrads) layout.push(`const G${i} = ctx.gv[${i}];`)
    for (const i of hostScratch) layout.push(`const SV${i} = ctx.sv[${i}];`)
    for (const i of copied)
      layout.push(
        `const V${i} = ctx.values[${i}], CP${i} = copyOf(${JSON.stringify(registry.numberSystem((params[i]!.type as { elem: string }).elem).arrayType)}, a${i}.length);`,
      )
    const sized = [...new Set([...hostGrads, ...hostScratch, ...copied])].sort((x, y) => x - y)
    for (const i of sized) layout.push(`const N${i} = a${i}.length;`)
    const state = [
      'HB',
      'NB',
      'HZ',
      'ZB',
      ...hostGrads.map((i) => `G${i}`),
      ...hostScratch.map((i) => `SV${i}`),
      ...copied.flatMap((i) => [`V${i}`, `CP${i}`]),
      ...sized.map((i) => `N${i}`),
    ]
    // laid out again after \`release\`, when a length changed, or when the block was detached (its
    // length is then 0; it is empty only where every array is, and then no view of it is written)
    lines.unshift(
      `if (ctx.moved || HB.length !== NB${sized.map((i) => ` || a${i}.length !== N${i}`).join('')}) { work = layout(${args.join(', ')}); return work(${args.join(', ')}); }`,
    )
    if (hostGrads.length) lines.push(`const ${hostGrads.map((i) => `g${i} = G${i}`).join(', ')};`)
    lines.push('ZB(HZ);')
    hostLayout = { layout, state }
  }
  if (forward) {
    // one run of the tangent seeded along the input (see compileForwardGradient): every
    // parameter is a scalar, so there is nothing else to set up
    const argv = [
      ...vals,
      ...params.flatMap((_, i) => (forward.tangentAt[i]! >= 0 ? [i === forward.input ? '1' : '0'] : [])),
    ]
    // the tangent's lean copy where the backend has one (see \`CompiledFunction.lean\`): it leaves
    // out the results of the scalars it never writes, which the driver passed. On the cpu backend
    // the stores are code: without them the Bessel tangent (five scalars, three never written) fit
    // V8's inlining budget and was inlined into the driver, its seeds then constants. (Since
    // `unroll-swaps` runs two iterations per pass its bytecode is ~635 bytes, past V8's 460-byte
    // limit per inlinee and, with this driver, its factorial and \`$pow\`, past the 920-byte budget
    // of a caller: it is called. With both limits raised, inlined into the caller and its order
    // \`ν\` a constant there as in the plain-TS baseline, the single-z Bessel gradient measured
    // 2.3× the plain objective where it is 3.5×: the size of the tangent is the lead)
    const lean = ctx.adj.lean ?? null
    // the final value of the tangent's scalar i: from its results, or the argument where the lean copy leaves it out
    const result = (i: number) => (lean?.passedThrough[i] ? `(${argv[i]})` : `Q[${i}]`)
    lines.push(`${lean ? 'L' : 'A'}(${argv.join(', ')});`)
    lines.push(`LS[0] = ${ctx.toHost[loss] ? `T${loss}(${result(loss)})` : result(loss)};`)
    lines.push(`S[${loss}] = 1;`)
    // the gradient of an f32 input is an f32 value, as in reverse mode
    const f32 = gradientScalar((params[forward.input]!.type as { name: string }).name) === 'f32'
    const g = result(forward.tangentAt[loss]!)
    lines.push(`S[${forward.input}] = ${f32 ? `Math.fround(${g})` : g};`)
  } else {
    if (!fused) {
      current(false)
      lines.push(`F(${vals.join(', ')});`)
      // the scalars f wrote (one it never writes keeps the value, and the representation, it was
      // passed with), integers as small integers (see \`scalarReadBack\`)
      const written = c.info.program.writes.get(c.info.name)
      params.forEach((_, i) => {
        const how = scalarReadBack(c, i)
        if (how === null || written?.[i] === false) return
        lines.push(`v${i} = ${how === 'bool' ? `R[${i}] !== 0` : how === 'int' ? `R[${i}] | 0` : `R[${i}]`};`)
      })
      lines.push(`LS[0] = ${ctx.toHost[loss] ? `T${loss}(v${loss})` : `v${loss}`};`)
    }
    const grads: string[] = []
    // the gradients of arrays in resident memory: one block, zeroed by one \`fill\` (all its views
    // have their lengths unless the memory grew, which detaches them all and zeroes their lengths;
    // the block's own view is never empty, so its length shows that even for empty gradients)
    const inBlock = memory ? params.flatMap((_, i) => (c.slots[i]?.kind === 'array' ? [i] : [])) : []
    if (inBlock.length) {
      lines.push(`let ${inBlock.map((i) => `g${i} = ctx.gv[${i}]`).join(', ')};`)
      lines.push(
        `if (ctx.gz === undefined || ctx.gz.length === 0${inBlock.map((i) => ` || g${i}.length !== a${i}.length`).join('')}) {`,
      )
      lines.push(
        `  ctx.gradients([${params.map((_, i) => (inBlock.includes(i) ? `a${i}.length` : '-1')).join(', ')}]);`,
      )
      lines.push(`  ${inBlock.map((i) => `g${i} = ctx.gv[${i}];`).join(' ')}`)
      // (loops over the views when they hold few elements in all, as for short gradients on the
      // host: \`fill\` is a runtime call, ~25 ns for two doubles; the padding between views stays 0)
      lines.push(
        `} else if (${inBlock.map((i) => `g${i}.length`).join(' + ')} < ${SHORT}) { ${inBlock.map((i) => `for (let j = 0; j < g${i}.length; j++) g${i}[j] = 0;`).join(' ')} } else ctx.gz.fill(0);`,
      )
    }
    params.forEach((_, i) => {
      const s = c.slots[i]
      if (!s) return
      if (s.kind === 'scalar') grads.push(i === loss ? '1' : '0')
      else if (s.kind === 'array' && memory) grads.push(`g${i}`)
      else if (s.kind === 'array') grads.push(`g${i}`)
      else grads.push(`new Array(v${i}.length).fill(0)`)
    })
    current(true)
    if (fused) {
      // one run of the fused gradient program: forward part, then the adjoint (see compileFused)
      const lossSlot = c.params.length + c.slots.filter((x) => x).length + 1
      lines.push(`A(${[...vals, ...grads, '0', '0'].join(', ')});`)
      lines.push(`LS[0] = ${ctx.toHost[loss] ? `T${loss}(Q[${lossSlot}])` : `Q[${lossSlot}]`};`)
    } else lines.push(`A(${[...vals, ...grads, '0'].join(', ')});`)
    // a call that grew the memory detached the views (the block's byte view then has length 0)
    if (inBlock.length)
      lines.push(
        `if (ctx.gz.length !== ctx.gblock.length) { ctx.gviews(); ${inBlock.map((i) => `g${i} = ctx.gv[${i}];`).join(' ')} }`,
      )
    if (check.policy !== 'off') {
      // the sweep recomputed the inputs of every argument that f writes: compare them with the
      // caller's values (which the driver never changes), one pass over the written arguments
      const written = c.info.program.writes.get(c.info.name)!
      params.forEach((p, i) => {
        if (!written[i]) return
        if (p.type.kind === 'scalar' && p.type.name !== 'bool') {
          const got = ctx.toHost[i] ? `T${i}(Q[${i}])` : `Q[${i}]`
          lines.push(
            `{ const r = ${got}; if (!(r === a${i} || Math.abs(r - a${i}) <= ctx.tol * Math.max(1, Math.abs(a${i})))) ctx.uncomputed(${i}, -1, r, a${i}); }`,
          )
        } else if (p.type.kind === 'array' && isScratch[i]) {
          // a scratch argument started at zero: it must come back to zero
          lines.push(
            `{ const w = ${memory ? `ctx.res[${i}].array` : `v${i}`}, t = ctx.tol; for (let j = 0; j < w.length; j++) { const r = w[j]; if (r !== 0 && !(Math.abs(r) <= t)) ctx.uncomputed(${i}, j, r, 0); } }`,
          )
        } else if (p.type.kind === 'array' && !shared[i]) {
          // inline, so that each loop sees one array type (an equal element costs one comparison)
          const got = ctx.toHost[i] ? `T${i}(w[j])` : 'w[j]'
          const exact = `for (let j = 0; j < a${i}.length; j++) { const r = ${got}, x = a${i}[j]; if (r !== x && !(Math.abs(r - x) <= t * Math.max(1, Math.abs(x)))) ctx.uncomputed(${i}, j, r, x); }`
          // an f64 array: first a pass without branches, two elements per iteration, of the test
          // alone (it implies the check, which exempts only equal elements beyond it); the exact
          // loop, which reports the first element that fails, runs only where an element fails it
          const near = (r: string, x: string) => `(Math.abs(${r} - ${x}) <= t * Math.max(1, Math.abs(${x})))`
          const fast = ctx.toHost[i]
            ? ''
            : `let ok = 1, j = 0; for (const n = a${i}.length - 1; j < n; j += 2) { const x = a${i}[j], y = a${i}[j + 1]; ok = ok & ${near('w[j]', 'x')} & ${near('w[j + 1]', 'y')}; } if (j < a${i}.length) ok = ok & ${near('w[j]', `a${i}[j]`)}; if (!ok) `
          lines.push(`{ const w = ${memory ? `ctx.res[${i}].array` : `v${i}`}, t = ctx.tol; ${fast}${exact} }`)
        }
      })
    }
    params.forEach((_, i) => {
      const s = c.slots[i]
      if (s?.kind === 'scalar') lines.push(`S[${i}] = Q[${s.index}];`)
      // the current views: a call that grew the memory detached the earlier ones
      else if (s?.kind === 'array' && memory && !isScratch[i]) lines.push(`ctx.buffers[${i}] = g${i};`)
    })
  }
  const ctors = params
    .map((p, i) => (p.type.kind === 'array' ? `, C${i} = ${registry.numberSystem(p.type.elem).arrayType}` : ''))
    .join('')
  // the host conversions as constants of the driver's closure, which V8 inlines (called through
  // \`ctx.fromHost[i]\`, the conversion of the Bessel order cost ~2 ns of a ~50 ns gradient on wasm)
  const conversions = params
    .map(
      (_, i) =>
        `${ctx.fromHost[i] ? `, H${i} = ctx.fromHost[${i}]` : ''}${ctx.toHost[i] ? `, T${i} = ctx.toHost[${i}]` : ''}`,
    )
    .join('')
  const prologue = `"use strict";\nconst OVS = ctx.overlap?.seen, F = ctx.fwd, R = F.results, A = ctx.adj, Q = A.results, L = A.lean, S = ctx.scalars, LS = ctx.loss${conversions}${ctors};\n`
  const all = args.join(', ')
  const body = hostLayout
    ? prologue +
      [
        `function layout(${all}) {\n  ${hostLayout.layout.join('\n  ')}\n  return laidOut(${hostLayout.state.join(', ')});\n}`,
        `function laidOut(${hostLayout.state.join(', ')}) {\n  return function laid(${all}) {\n    ${lines.join('\n    ')}\n  };\n}`,
        // (null until the first call lays out, so that the call site in \`run\` sees closures of \`laidOut\` only: see driver-direct.ts)
        'let work = null;',
        `return function run(${all}) {\n  ${checks.join('\n  ')}\n  if (work === null) work = layout(${all});\n  work(${all});\n};`,
      ].join('\n')
    : `${prologue}return function run(${all}) {\n  ${lines.join('\n  ')}\n};`
  if (evalAllowed()) ctx.source = body
  const run = evalAllowed()
    ? (new Function('ctx', 'token', 'isDetached', 'zeroOf', 'copyOf', body)(
        ctx,
        ctx.token,
        isDetached,
        zeroOf,
        copyOf,
      ) as (...a: unknown[]) => void)
    : interpretedDriver({
        ctx,
        params,
        slots: c.slots,
        loss,
        fused: fused !== null,
        lossSlot: c.params.length + c.slots.filter((x) => x).length + 1,
        forward,
        shared,
        ctors: params.map((p) =>
          p.type.kind === 'array' ? CTORS[registry.numberSystem(p.type.elem).arrayType] : undefined,
        ),
        forwardF32:
          forward !== null && gradientScalar((params[forward.input]!.type as { name: string }).name) === 'f32',
        resident: memory !== undefined,
        checkWritten: check.policy === 'off' ? null : c.info.program.writes.get(c.info.name)!,
        scratch: isScratch,
      })
  return { run, ctx }
}

/**
 * The run function of a driver that calls the programs' direct entries (see driver-direct.ts),
 * or null where one of them has none or its parameters are not laid out as the driver passes them.
 */
function directDriver(
  c: CompiledAdjoint,
  ctx: DriverContext,
  loss: number,
  fused: CompiledFunction | null,
  forward: CompiledForwardGradient | null,
  check: UncomputeCheck,
  isScratch: boolean[],
): ((...a: unknown[]) => void) | null {
  const A = forward ? forward.core.direct : fused ? fused.direct : c.adjoint.core.direct
  const F = forward || fused ? null : c.forward.direct
  if (!directApplies(c.params, c.slots, F === null ? [A] : [A, F])) return null
  // (both programs must live in the one memory the driver's arrays are allocated in)
  if (F && F.memory().buffer !== A!.memory().buffer) return null
  const registry = c.info.registry
  const body = directDriverBody({
    params: c.params,
    slots: c.slots,
    loss,
    A: A!,
    F: F ?? null,
    mode: forward ? 'forward' : fused ? 'fused' : 'two',
    lossSlot: c.params.length + c.slots.filter((x) => x).length + 1,
    ...(forward
      ? {
          forward: {
            input: forward.input,
            tangentAt: forward.tangentAt,
            f32: gradientScalar((c.params[forward.input]!.type as { name: string }).name) === 'f32',
          },
        }
      : {}),
    isScratch,
    hasFromHost: ctx.fromHost.map((f) => f !== undefined),
    hasToHost: ctx.toHost.map((f) => f !== undefined),
    ctors: c.params.map((p) => (p.type.kind === 'array' ? registry.numberSystem(p.type.elem).arrayType : undefined)),
    readBack: c.params.map((_, i) => scalarReadBack(c, i)),
    written: c.info.program.writes.get(c.info.name),
    checkWritten: check.policy === 'off' ? null : c.info.program.writes.get(c.info.name)!,
    short: SHORT,
    overlap: ctx.overlap?.arrays,
  })
  if (body === null) return null
  ctx.source = body
  return new Function('ctx', 'token', 'isDetached', 'EA', 'EF', 'disposedModule', 'zeroOf', 'copyOf', body)(
    ctx,
    ctx.token,
    isDetached,
    A,
    F,
    disposedModule,
    zeroOf,
    copyOf,
  ) as (...a: unknown[]) => void
}

/** The error of a call of a gradient function whose module was disposed. */
function disposedModule(): never {
  throw new TenetError('call/disposed', 'the module of this gradient function was disposed: compile it again')
}

/** The resident arrays of a driver (see \`DriverContext.held\`). */
export interface HeldMemory {
  res: Array<ResidentArray | undefined>
  gblock: ResidentArray | undefined
}

/** A hidden property of a gradient view that keeps its driver's memory from being freed. */
const KEEP = Symbol('tenet.gradient.keep')

/**
 * Frees the resident memory of gradient functions that were dropped without \`release\` or
 * \`dispose\` (wasm): when the function, its \`run\` and every gradient view it handed out
 * are unreachable, their blocks go back to the module's free list.
 */
export const collected =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<HeldMemory>((held) => {
        for (const r of held.res) r?.release()
        held.res.fill(undefined)
        held.gblock?.release()
        held.gblock = undefined
      })
    : undefined

// Every gradient function has the same properties with the same getter, so V8 gives them one
// shape with fast properties: a getter made per function (a closure over its driver) gave each
// later gradient function slow (dictionary) properties, and a hot `g.run(…)`, `g.scalars[i]`
// then went through a generic property lookup (about 10 ns per call on the Bessel gradient).
export const DRIVER = Symbol('tenet.gradient.driver')
export function lastLoss(this: { [DRIVER]: DriverContext }): number {
  return this[DRIVER].loss[0]!
}

/** The uncompute check of a driver (see \`GradOptions.uncompute\`). */
export interface UncomputeCheck {
  policy: 'error' | 'warn' | 'off'
  tolerance: number
}
