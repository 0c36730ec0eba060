/**
 * The adjoint transform (DESIGN §6): core IR function → core IR function. The adjoint of `f`
 * walks f's statements backwards, each replaced by its adjoint rule, so that running `f` and then
 * its adjoint brings the values back to the inputs while accumulating gradients. The result is
 * ordinary Tenet: it is checked, inverted and compiled by any backend like a function the user wrote.
 */
import {
  TenetStaticError,
  parse,
  printExpr,
  printStmt,
  type Arg,
  type BijectionSpec,
  type CallStmt,
  type Dataview,
  type Expr,
  type FunctionDef,
  type Param,
  type Program,
  type Registry,
  type ScalarTypeName,
  type Stmt,
  type Type,
} from '@tenet/ir'
import { effectfulFunctions, readNames, rewriteExpr, rootName, valueReads, walk } from '@tenet/ir/backend'
import { valueHolders, type UpdateStmt } from './value-holders.js'
import { invertBody, invertStmt, preprocess } from '@tenet/reversible'
import { OnDemandTransform } from './on-demand.js'
import { onlyAccumulates } from './dead.js'
import { HISTORY_ELEMENTS, stagePairs, type StagePair } from './stage-history.js'
import { typeLiteralAncillas } from './snippet-ancillas.js'
import { rejectHostPullback, type HostPullback } from './dual-host.js'
import {
  add,
  at,
  bin,
  clone,
  differentiate,
  gradientScalar,
  isDiffType,
  isFloatType,
  isRealViewType,
  lit,
  mul,
  namesIn,
  neg,
  pullSign,
  readsFloat,
  realF64,
  realView,
  ref,
  scaleDerivative,
  typeOf,
  type Contribution,
  type PartialsResolver,
} from './expr.js'

/**
 * Name of the adjoint of function `name` (of its inverse when `inverse`); `$adj<w>` for the
 * vector-mode adjoint of width w > 1.
 */
export function adjointName(name: string, inverse: boolean, width = 1): string {
  const w = width === 1 ? '' : String(width)
  return inverse ? `${name}$inv$adj${w}` : `${name}$adj${w}`
}

const NONE: ReadonlySet<string> = new Set()

/**
 * The base name of a first-order gradient program of `name`: its adjoint's name, with `$const`
 * when parameters are held constant (those programs have fewer parameters: another name).
 */
function heldName(name: string, constants: ReadonlySet<string>): string {
  return `${adjointName(name, false, 1)}${constants.size ? '$const' : ''}`
}

/** Name of the scalar parameter that absorbs gradients with respect to constants. */
export const SINK = 'g$sink'

/**
 * How a parameter's gradient travels: its kind and the adjoint parameter that holds it. In a
 * vector-mode adjoint of width w a scalar has w consecutive gradient parameters (one per
 * direction) and an array of length n one gradient array of length n·w, element-major (the
 * gradient of `a[i]` in direction k is `g_a[i·w + k]`); a stack's gradient stack holds w
 * entries per value.
 */
export interface GradientSlot {
  kind: 'scalar' | 'array' | 'stack'
  /** Index of the (first) gradient parameter in the adjoint's parameter list. */
  index: number
  type: Type
}

/**
 * Whether a value type has a gradient: scalars, arrays and stacks of a differentiable number
 * system (f64, f32, fixed point, ulog; see `isDiffType`).
 */
export function hasGradient(t: Type, registry: Registry): boolean {
  return isDiffType(registry, t.kind === 'scalar' ? t.name : t.elem)
}

/**
 * The zero a scalar ancilla's gradient starts from: +0.0 (its type, \`gradientType\`, is f64 or
 * f32). Not -0.0, although -0 is IEEE arithmetic's additive identity and would let a backend write
 * a first update \`g += e\` as \`e\`: a gradient that no update reaches (moved into the caller's by a
 * SWAP, updated only in a branch not taken or a loop that runs no time) or that only zeros of sign
 * minus reach would give the caller -0 where the derivative is +0 (review 18b's programs, kept in
 * \`gradient-zero-sign.test.ts\`).
 */
export const gradientZero = (): Expr => lit(0)

/**
 * The type of the gradient of a value of type `t`: the same shape, with f32 elements for f32 and
 * f64 elements otherwise (a fixed-point or ulog value has an f64 gradient w.r.t. its real value).
 */
export function gradientType(t: Type): Type {
  return t.kind === 'scalar' ? { kind: 'scalar', name: gradientScalar(t.name) } : { ...t, elem: gradientScalar(t.elem) }
}

/**
 * The gradient slot of each parameter of `f` in its adjoint (null where there is no gradient);
 * `width` > 1 for the vector-mode adjoint (w scalar parameters per float scalar).
 */
export function gradientSlots(
  params: Param[],
  registry: Registry,
  width = 1,
  constants: ReadonlySet<number> = new Set(),
): Array<GradientSlot | null> {
  let k = params.length
  return params.map((p, i) => {
    if (!hasGradient(p.type, registry) || constants.has(i)) return null
    const slot: GradientSlot = { kind: p.type.kind, index: k, type: gradientType(p.type) }
    k += p.type.kind === 'scalar' ? width : 1
    return slot
  })
}

const fail = (msg: string, loc?: Expr['loc']): never => {
  throw new TenetStaticError('ad/unsupported', msg, loc)
}

/**
 * Generates adjoints on demand (see `OnDemandTransform`), callees included so that recursion
 * works, plus the helper functions of bijection adjoint snippets.
 */
export class AdjointBuilder extends OnDemandTransform {
  readonly helpers = new Map<string, FunctionDef>()

  constructor(
    program: Program,
    inverses: Map<string, FunctionDef>,
    readonly registry: Registry,
    readonly partials: PartialsResolver,
    /** Directions carried by one reverse sweep (vector mode for w > 1). */
    readonly width = 1,
  ) {
    super(program, inverses)
  }

  protected nameOf(name: string, inverse: boolean): string {
    return adjointName(name, inverse, this.width)
  }
  protected transform(f: FunctionDef, name: string): FunctionDef {
    return new FunctionAdjoint(this, f, name).build()
  }

  /**
   * Whether the adjoints this builder generates keep the stages of loops whose inverse follows
   * in the same block (see stage-history.ts): for first-order gradient programs compiled without
   * run-time checks (set by their builder before it generates anything).
   */
  stageHistories = false

  /**
   * Whether the programs run with run-time checks (set by the builder's user before it generates
   * anything): the fused program then keeps the checks of the uncompute it would skip (see
   * \`FunctionAdjoint.buildFused\`).
   */
  checked = true

  /**
   * The fused gradient program of `name` (forward direction, width 1), or undefined when its body
   * is not compute–copy–uncompute at the top level. See `FunctionAdjoint.buildFused`. Call
   * `build()` afterwards to generate the callee adjoints it uses. `constants`: parameters held
   * constant, as in `withConstants` (no gradient parameter, nothing accumulated into them).
   */
  fused(name: string, loss: string | undefined, constants: ReadonlySet<string> = NONE): FunctionDef | undefined {
    const f = this.program.functions.get(name)
    if (!f || this.width !== 1) return undefined
    return new FunctionAdjoint(this, f, `${heldName(name, constants)}$fused`, constants).buildFused(loss)
  }

  /**
   * The one-pass gradient program of `name` for the loss parameter `loss` (forward direction,
   * width 1), or undefined when the loss is not a plain accumulation. See
   * `FunctionAdjoint.buildOnePass`. `constants`: parameters held constant (see `fused`).
   */
  onePass(name: string, loss: string | undefined, constants: ReadonlySet<string> = NONE): FunctionDef | undefined {
    const f = this.program.functions.get(name)
    if (!f || this.width !== 1 || loss === undefined) return undefined
    return new FunctionAdjoint(this, f, `${heldName(name, constants)}$onepass`, constants).buildOnePass(loss)
  }

  /**
   * The adjoint-only gradient program of `name` for the loss parameter `loss` (forward direction,
   * width 1), or undefined when it does not apply. See `FunctionAdjoint.buildAdjointOnly`.
   * `constants`: parameters held constant (see `fused`).
   */
  adjointOnly(name: string, loss: string | undefined, constants: ReadonlySet<string> = NONE): FunctionDef | undefined {
    const f = this.program.functions.get(name)
    if (!f || this.width !== 1 || loss === undefined) return undefined
    return new FunctionAdjoint(this, f, `${heldName(name, constants)}$adjonly`, constants).buildAdjointOnly(loss)
  }

  /**
   * The adjoint of `name` (forward direction, width 1) with the parameters `constants` held
   * constant: they get no gradient parameter and nothing accumulates into them (a callee that
   * would receive their gradient gets a scratch one, dropped after the call). They must be
   * parameters the function never writes (checked by the caller). Named `…$const`, kept with the
   * helpers; callees (recursion included) use their ordinary adjoints.
   */
  withConstants(name: string, constants: ReadonlySet<string>): string {
    const f = this.program.functions.get(name)!
    const adj = `${adjointName(name, false, 1)}$const`
    this.helpers.set(adj, new FunctionAdjoint(this, f, adj, constants).build())
    return adj
  }

  /** Generates everything queued; returns the adjoint functions and helpers. */
  override build(): FunctionDef[] {
    return [...super.build(), ...this.helpers.values()]
  }

  /** The helper function that runs the adjoint snippet of bijection `spec` for these argument types. */
  snippetHelper(spec: BijectionSpec, argTypes: string[], loc: Expr['loc']): string {
    const name = `$adj$${spec.name}$${argTypes.join('_')}`
    if (this.helpers.has(name)) return name
    const rule = spec.adjoint!
    if (rule.params.length !== spec.roles.length) {
      fail(
        `the adjoint rule of \`${spec.name}\` names ${rule.params.length} parameters, but \`${spec.name}\` takes ${spec.roles.length}`,
        loc,
      )
    }
    // a fixed or ulog value has an f64 gradient: the snippet, written in one float type, sees its
    // real value in an f64 ancilla of the same name (freed against the same value)
    const real = rule.params.map((_, i) => isRealViewType(this.registry, argTypes[i]))
    const held = (p: string) => `__tenet_value_${p}`
    const params = rule.params.map((p, i) => `${real[i] ? held(p) : p}: ${argTypes[i]}`)
    rule.params.forEach((p, i) => {
      if (isFloatType(this.registry, argTypes[i]))
        params.push(`g_${p}: ${real[i] ? gradientScalar(argTypes[i]!) : argTypes[i]}`)
    })
    const open = rule.params.flatMap((p, i) => (real[i] ? [`${p} <- f64(${held(p)})`] : []))
    const close = rule.params.flatMap((p, i) => (real[i] ? [`${p} -> f64(${held(p)})`] : [])).reverse()
    const text = `fn adjoint_snippet(${params.join(', ')}) {\n${[...open, rule.source, ...close].join('\n')}\n}`
    let f: FunctionDef
    try {
      f = parse({ text, name: `adjoint rule of ${spec.name}` }).functions[0]!
    } catch (e) {
      if (e instanceof Error) e.message = `in the adjoint rule of bijection \`${spec.name}\`: ${e.message}`
      throw e
    }
    // float-literal ancillas take the gradients' float type when it is one other than f64
    const gradTypes = new Set(
      rule.params.flatMap((_, i) =>
        isFloatType(this.registry, argTypes[i]) ? [real[i] ? gradientScalar(argTypes[i]!) : argTypes[i]!] : [],
      ),
    )
    const [only] = gradTypes
    if (gradTypes.size === 1 && only !== 'f64')
      f = { ...f, body: typeLiteralAncillas(f.body, { kind: 'scalar', name: only as ScalarTypeName }) }
    this.helpers.set(name, { ...preprocess(f), name })
    return name
  }
}

type Grad = Dataview

/** The adjoint of one function. */
class FunctionAdjoint {
  private readonly prefix: string
  private counter = 0
  private readonly registry: Registry
  private readonly w: number
  /** The directions 0..w−1. */
  private readonly dirs: number[]

  constructor(
    private readonly builder: AdjointBuilder,
    private readonly f: FunctionDef,
    private readonly name: string,
    /** Parameters held constant (no gradient; see `AdjointBuilder.withConstants`). */
    private readonly constants: ReadonlySet<string> = new Set(),
  ) {
    this.registry = builder.registry
    this.w = builder.width
    this.stageHistory = builder.stageHistories && this.w === 1
    this.dirs = Array.from({ length: this.w }, (_, k) => k)
    const names = namesIn(f)
    this.prefix = [...names].some((n) => names.has(`g_${n}`) || n === 'sink') ? 'g$$' : 'g_'
    // the adjoint of an adjoint has a parameter `g$sink` already: its own sink takes a new name
    let sink = SINK
    for (let k = 2; names.has(sink); k++) sink = `${SINK}${k}`
    this.sink = sink
  }

  /** The name of the sink parameter (`g$sink`, unless f has a parameter of that name). */
  private readonly sink: string

  /**
   * The f64 loss of a one-pass or adjoint-only program, whose gradient is never written there and
   * is always seeded with 1 (the derivative of the loss with respect to itself; `grad`'s driver
   * passes 1): its updates' gradients are taken as the literal 1, so that the seed's products fold
   * away (`g_x += g_s * 0.5 * a` is `g_x += 0.5 * a`, the same bits when g_s is 1).
   */
  private unitLoss: string | undefined

  /** The adjoint's parameters: f's, then the gradients, then the sink. */
  private adjointParams(): Param[] {
    const slots = gradientSlots(this.f.params, this.registry)
    const gradParams: Param[] = []
    this.f.params.forEach((p, i) => {
      if (!slots[i] || this.constants.has(p.name)) return
      if (p.type.kind === 'scalar')
        for (const k of this.dirs) gradParams.push({ name: this.gs(p.name, k), type: gradientType(p.type) })
      else gradParams.push({ name: this.g(p.name), type: gradientType(p.type) })
    })
    return [
      ...this.f.params.map((p) => ({ name: p.name, type: p.type })),
      ...gradParams,
      { name: this.sink, type: { kind: 'scalar', name: 'f64' } },
    ]
  }

  build(): FunctionDef {
    return {
      kind: 'fn',
      name: this.name,
      params: this.adjointParams(),
      body: this.body(this.f.body),
      ...(this.f.loc ? { loc: this.f.loc } : {}),
    }
  }

  /**
   * The fused gradient program: when f's body is `Q; P₀; C; ~P₀` at the top level (a routine and its
   * ancillas; P₀ does not write the loss and has no host effects or stacks), running
   * `f` and then its adjoint does `P₀; C; ~P₀` and then `P₀` (the adjoint of `~P₀`, with gradients
   * that are all zero) before `adj(C); adj(P₀)`. The fused program skips the cancelling pair:
   * `Q; P₀; C; adj(C); adj(P₀); adj(Q)`, with the gradient ancillas of P₀'s live ancillas
   * allocated between.
   * With run-time checks (the builder's \`checked\`) the pair is kept: `~P₀` may fail a check
   * (a deallocation, a post-condition) that the call of f raises, for instance where C writes an
   * ancilla of P₀, so the program runs `Q; P₀; C; ~P₀; P₀` (the adjoint of `~P₀` with all its
   * gradients zero is `P₀`, as skipped) before the adjoints, and fails where f fails.
   * Parameters: the adjoint's, then `$loss` (written: the loss value after the forward part).
   * Started with the inputs and the seeded gradients, it leaves the inputs and the gradients.
   */
  buildFused(loss: string | undefined): FunctionDef | undefined {
    const body = this.f.body
    const n = body.length
    // find the longest P₀ = body[j, j+k) whose inverse is the tail body[n−k, n): body = Q; P₀; C; ~P₀
    const printed = body.map((x) => printStmt(x, 0))
    const printedInverse = body.map((x) => printStmt(invertStmt(x), 0))
    let k = 0,
      j = 0
    search: for (let cand = Math.floor(n / 2); cand >= 1; cand--) {
      for (let start = 0; start + 2 * cand <= n; start++) {
        let match = true
        for (let t = 0; t < cand && match; t++) match = printed[n - cand + t] === printedInverse[start + cand - 1 - t]
        if (match) {
          k = cand
          j = start
          break search
        }
      }
    }
    if (!k || loss === undefined) return undefined
    const head = body.slice(j, j + k)
    // P₀ may write anything but the loss: at the head of the adjoint every gradient except the
    // loss's is zero, so the adjoint of ~P₀ changes no gradient and only recomputes P₀
    let pure = true
    const writesLocal = (a: Arg) => {
      const r = rootName(a)
      if (r === undefined || r === loss) pure = false
    }
    walk(head, (x) => {
      if (x.kind === 'update') writesLocal(x.target)
      else if (x.kind === 'callstmt') {
        const written =
          x.target === 'function'
            ? this.builder.program.writes.get(x.callee)!
            : this.registry.bijection(x.callee).roles.map((r) => r === 'inout')
        x.args.forEach((a, i) => {
          if (written[i]) writesLocal(a)
        })
      } else if (x.kind === 'push' || x.kind === 'pop' || x.kind === 'safe') pure = false
    })
    if (!pure) return undefined
    // ancillas of P₀'s top level still live after it: their gradients start at zero here
    const live = new Map<string, Extract<Stmt, { kind: 'alloc' }>>()
    for (const x of head) {
      if (x.kind === 'alloc') live.set(x.name, x)
      else if (x.kind === 'dealloc') live.delete(x.name)
    }
    const gradientAllocs = [...live.values()].flatMap((a) =>
      this.dealloc({ kind: 'dealloc', name: a.name, value: a.value, ...(a.type ? { type: a.type } : {}) } as Extract<
        Stmt,
        { kind: 'dealloc' }
      >).slice(1),
    )
    const forward = body.slice(0, n - k)
    const lossType = loss === undefined ? undefined : this.f.params.find((p) => p.name === loss)?.type
    const report: Stmt[] =
      loss === undefined ? [] : [reportLoss(loss, lossType?.kind === 'scalar' ? lossType.name : '')]
    const adjoint = this.build()
    return {
      ...adjoint,
      name: this.name,
      params: [
        ...adjoint.params,
        ...(loss === undefined ? [] : [{ name: '$loss', type: { kind: 'scalar', name: 'f64' } } as Param]),
      ],
      body: [
        ...forward.map(clone),
        ...report,
        ...(this.builder.checked ? [...body.slice(n - k), ...head].map(clone) : []),
        ...gradientAllocs,
        ...this.body(forward),
      ],
    }
  }

  /**
   * The one-pass gradient program, for a loss that f only accumulates from values f never writes:
   * the loss is written only by `loss += e` / `loss -= e` (nowhere read, passed or swapped), and
   * no float variable, array or ancilla that such an `e` reads is written anywhere in f (calls
   * may write integers only; no `@safe` host effects). Then no gradient but the loss's is ever nonzero in the adjoint, the
   * loss's stays at its seed, and each `g_x ±= g_loss · ∂e/∂x` of the adjoint depends only on
   * values that are the same at that point of the forward run. So they run right after their
   * update, in forward order, and the backward sweep disappears: `f` with the gradient updates
   * inserted, then `$loss += loss`. The sums are the adjoint's, added in the opposite order.
   * Parameters: the adjoint's, then `$loss`, like the fused program. Leaves the values at f's
   * outputs (the driver runs it on copies).
   */
  buildOnePass(loss: string): FunctionDef | undefined {
    const lossParam = this.f.params.find((p) => p.name === loss)
    if (lossParam?.type.kind !== 'scalar' || (lossParam.type.name !== 'f64' && lossParam.type.name !== 'f32'))
      return undefined
    // the loss is written only by `loss ±= e`, e not reading it, and read, passed or swapped nowhere
    if (!onlyAccumulates(this.f.body, loss)) return undefined
    const written = new Set<string>()
    let ok = true
    const isFloat = (t: Type | string | undefined) =>
      t !== undefined && this.isFloat(typeof t === 'string' ? t : t.kind === 'scalar' ? t.name : t.elem)
    const lossUpdates = new Set<Stmt>()
    walk(this.f.body, (x) => {
      if (!ok) return
      switch (x.kind) {
        case 'update': {
          const r = rootName(x.target)
          if (r === loss) lossUpdates.add(x)
          else if (r === undefined) ok = false
          else if (isFloat(typeOf(x.target))) written.add(r)
          break
        }
        case 'alloc':
          if (isFloat(x.type)) written.add(x.name)
          break
        case 'callstmt': {
          const w =
            x.target === 'function'
              ? this.builder.program.writes.get(x.callee)
              : this.registry.bijection(x.callee).roles.map((r) => r === 'inout')
          if (!w) {
            ok = false
            break
          }
          x.args.forEach((a, i) => {
            if (!w[i]) return
            const r = rootName(a)
            if (r === undefined || isFloat((a as { type?: Type | string }).type)) ok = false
          })
          break
        }
        case 'push':
        case 'pop':
          if (isFloat(typeOf(x.value))) ok = false
          break
        // host effects run in both sweeps of the two-sweep gradient: keep that behaviour
        case 'safe':
          ok = false
          break
      }
    })
    if (!ok || lossUpdates.size === 0) return undefined
    // no loss update reads a written float (by name: a name that is written as a float is read as
    // one, except for a reused ancilla name, where this refuses)
    for (const x of lossUpdates)
      if ([...readNames((x as Extract<Stmt, { kind: 'update' }>).value)].some((n) => written.has(n))) ok = false
    if (!ok) return undefined
    const gLoss: Expr = lossParam.type.name === 'f64' ? lit(1) : ref(this.gs(loss, 0))
    const withGradients = (body: Stmt[]): Stmt[] =>
      body.flatMap((x): Stmt[] => {
        switch (x.kind) {
          case 'update':
            return lossUpdates.has(x)
              ? [clone(x), ...this.accumulate(x.value, clone(gLoss) as Expr, x.op === '+=' ? 1 : -1, x.loc)]
              : [clone(x)]
          case 'if':
            return [
              {
                ...x,
                pre: clone(x.pre),
                post: x.post ? clone(x.post) : null,
                then: withGradients(x.then),
                else: withGradients(x.else),
              },
            ]
          case 'while':
            return [{ ...x, pre: clone(x.pre), post: clone(x.post), body: withGradients(x.body) }]
          case 'for':
            return [
              {
                ...x,
                start: clone(x.start),
                stop: clone(x.stop),
                step: x.step ? clone(x.step) : null,
                body: withGradients(x.body),
              },
            ]
          case 'unchecked':
            return [{ ...x, body: withGradients(x.body) }]
          default:
            return [clone(x)]
        }
      })
    const report = reportLoss(loss, lossParam.type.name)
    return {
      kind: 'fn',
      name: this.name,
      params: [...this.adjointParams(), { name: '$loss', type: { kind: 'scalar', name: 'f64' } }],
      body: [...withGradients(this.f.body), report],
      ...(this.f.loc ? { loc: this.f.loc } : {}),
    }
  }

  /**
   * The adjoint-only gradient program, for a loss that f only accumulates (`loss += e`,
   * `loss -= e`, e not reading it; the loss read, passed or swapped nowhere) when f writes no
   * other parameter and has no host effects (f and its callees: no `@safe`, stacks or host
   * calls). Then f's outputs are its inputs but for the loss, which nothing in f reads: the
   * adjoint, started at the inputs instead of at f's outputs, sees the same values at every
   * statement (it recomputes every intermediate it needs, as it does after the forward run) and
   * accumulates the same gradients, so the forward run is skipped. The adjoint's restores of the
   * loss (`loss -= e` for `loss += e`) are turned around, so that the sweep leaves the loss at its
   * input plus the sum of the e's — the loss value, its terms added in the reverse order. Then
   * `$loss += loss`. Parameters: the adjoint's, then `$loss`, like the fused program. Leaves every
   * other argument at its input.
   */
  buildAdjointOnly(loss: string): FunctionDef | undefined {
    const lossParam = this.f.params.find((p) => p.name === loss)
    if (lossParam?.type.kind !== 'scalar' || (lossParam.type.name !== 'f64' && lossParam.type.name !== 'f32'))
      return undefined
    if (!onlyAccumulates(this.f.body, loss)) return undefined
    const written = this.builder.program.writes.get(this.f.name)
    if (!written || this.f.params.some((p, i) => p.name !== loss && written[i] !== false)) return undefined
    if (effectfulFunctions(this.builder.program.functions.values()).has(this.f.name)) return undefined
    if (lossParam.type.name === 'f64') this.unitLoss = loss
    const turn = (body: Stmt[]): Stmt[] =>
      body.map((x): Stmt => {
        if (x.kind === 'update' && x.target.kind === 'var' && x.target.name === loss)
          return { ...x, op: x.op === '+=' ? '-=' : '+=' }
        const out = { ...x } as Record<string, unknown>
        for (const k of ['then', 'else', 'body']) if (Array.isArray(out[k])) out[k] = turn(out[k] as Stmt[])
        return out as unknown as Stmt
      })
    const report = reportLoss(loss, lossParam.type.name)
    return {
      kind: 'fn',
      name: this.name,
      params: [...this.adjointParams(), { name: '$loss', type: { kind: 'scalar', name: 'f64' } }],
      body: [...turn(this.body(this.f.body)), report],
      ...(this.f.loc ? { loc: this.f.loc } : {}),
    }
  }

  /** Gradient name of an array or stack (one per variable, n·w elements). */
  private g(name: string): string {
    return this.prefix + name
  }
  /** Gradient name of scalar `name` in direction k. */
  private gs(name: string, k: number): string {
    return this.w === 1 ? this.prefix + name : `${this.prefix}${k}$${name}`
  }
  /** `zeros(n)` → `zeros(n · w)`. */
  private wide(n: Expr): Expr {
    return this.w === 1 ? n : bin('*', n, { kind: 'num', value: this.w, isFloat: false })
  }
  private fresh(kind: string): string {
    return `$${kind}${this.counter++}`
  }
  private isFloat(t: string | undefined): boolean {
    return isDiffType(this.registry, t)
  }

  /** The gradient dataview of a value dataview in direction k. */
  private grad(dv: Dataview | Arg, k = 0): Grad {
    if (this.constants.size && this.constants.has(rootOf(dv)))
      fail(`\`${rootOf(dv)}\` is held constant, but its gradient is needed here`, dv.loc)
    switch (dv.kind) {
      case 'var': {
        const ty = (dv as { type?: unknown }).type
        if (ty && typeof ty === 'object' && (ty as { kind: string }).kind !== 'scalar') return ref(this.g(dv.name))
        return ref(this.gs(dv.name, k))
      }
      case 'index': {
        if (this.w === 1) return at(this.g(dv.array.name), clone(dv.index))
        const base = bin('*', clone(dv.index), { kind: 'num', value: this.w, isFloat: false })
        return at(this.g(dv.array.name), k === 0 ? base : bin('+', base, { kind: 'num', value: k, isFloat: false }))
      }
      case 'neg':
        return { kind: 'neg', target: this.grad(dv.target, k) }
      default:
        return fail(
          `cannot differentiate through \`${printExpr(dv as Expr)}\` (only variables, array elements and negated views carry gradients)`,
          dv.loc,
        )
    }
  }

  private body(body: Stmt[]): Stmt[] {
    const pairs = this.stageHistory ? stagePairs(body, (x) => this.writtenArgs(x)) : undefined
    const out: Stmt[] = []
    for (let i = body.length - 1; i >= 0; i--) {
      const s = body[i]!
      const pair = pairs?.get(s)
      if (!pair) out.push(...this.stmt(s))
      else if (pair.inverse === s) out.push(...this.storingLoop(pair))
      else out.push(...this.loadingLoop(pair))
    }
    return out
  }

  /**
   * Keep the stages of loops with their inverse later in the same block (see stage-history.ts):
   * the builder's \`stageHistories\`.
   */
  private readonly stageHistory: boolean
  /** The names of each stage pair's history, counter and rows, by its forward loop. */
  private readonly histories = new Map<Stmt, History>()

  /** Which parameters of a called function or bijection the call writes (undefined if unknown). */
  private writtenArgs(x: CallStmt): readonly boolean[] | undefined {
    if (x.target === 'function') return this.builder.program.writes.get(x.callee)
    try {
      return this.registry.bijection(x.callee).roles.map((r) => r === 'inout')
    } catch {
      return undefined
    }
  }

  /** `rows <= cap`: whether the history holds a row for every iteration (else the loops recompute). */
  private historyKept(h: { rows: string }, m: number): Expr {
    return bin('<=', ref(h.rows), int(historyCap(m)))
  }

  /** `history[row · m + j]`. */
  private historyElement(h: History, m: number, j: number): Dataview {
    const index = bin('*', h.index ? clone(h.index) : ref(h.row), int(m))
    return at(h.history, j === 0 ? index : bin('+', index, int(j)))
  }

  /**
   * The adjoint of `L′ = ~L` of a stage pair (L value-wise, forwards), preceded by the allocation
   * of the history: its rows (an estimate of the iteration count, at least that count), the
   * history and the row counter. Where the rows fit (\`HISTORY_ELEMENTS\`), each iteration
   * stores its stages as the middle of the body leaves them (an exact copy); else the loop is the plain adjoint and the
   * history is empty.
   */
  private storingLoop(pair: StagePair): Stmt[] {
    const L = pair.inverse
    const p = pair.split,
      m = pair.stages.length,
      n = L.body.length
    const index = iterationIndex(L, pair.written)
    const h: History = {
      rows: this.fresh('rows'),
      history: this.fresh('history'),
      row: index ? '' : this.fresh('row'),
      ...(index ? { index } : {}),
    }
    this.histories.set(pair.forward, h)
    // an exact copy of each stage (its sign of zero too: \`0 + a\` would turn a -0 into +0): its
    // element is set to +0 (the first write of the element, \`init\`: see the allocation's
    // \`overwritten\`), the stage moves into it, and comes back as \`+0 + a\` for the uncompute that
    // follows (whose gradient updates all add zero gradients), the element keeping it exactly
    const store: Stmt[] = pair.stages.flatMap((a, j) => [
      {
        kind: 'update',
        op: '+=',
        target: this.historyElement(h, m, j),
        value: { kind: 'num', value: 0, isFloat: true },
        init: true,
        ...loc(a),
      } as Stmt,
      {
        kind: 'callstmt',
        callee: 'SWAP',
        args: [ref(a.name), this.historyElement(h, m, j)],
        inverse: false,
        ...loc(a),
      } as Stmt,
      { kind: 'update', op: '+=', target: ref(a.name), value: this.historyElement(h, m, j) as Expr, ...loc(a) } as Stmt,
    ])
    // (stored after the middle: the backward loop needs the stages as the middle leaves them)
    const body = [
      ...this.body(L.body.slice(n - p)),
      ...this.body(L.body.slice(p, n - p)),
      ...store,
      ...this.body(L.body.slice(0, p)),
      ...(h.index ? [] : [{ kind: 'update', op: '+=', target: ref(h.row), value: int(1) } as Stmt]),
    ]
    return [
      { kind: 'alloc', name: h.rows, declared: I32, value: historyRows(L, m) } as Stmt,
      {
        kind: 'alloc',
        name: h.history,
        declared: { kind: 'array', elem: 'f64' },
        value: historySize(h.rows, m),
        // every element is read (by the storing loop's SWAP, by the loading loop at the same row)
        // only after the storing loop's \`init\` update set it, and it is freed unchecked: no zeroing
        overwritten: true,
      } as Stmt,
      ...(h.index ? [] : [{ kind: 'alloc', name: h.row, declared: I32, value: int(0) } as Stmt]),
      {
        kind: 'if',
        pre: this.historyKept(h, m),
        post: null,
        then: this.stmt({ ...L, body: [] }).map((x) => ({ ...x, body }) as Stmt),
        else: this.stmt(L),
      } as Stmt,
    ]
  }

  /**
   * The adjoint of `L` of a stage pair (the backward sweep): where the history holds every
   * iteration, each iteration takes its stages from it instead of recomputing them; else the
   * plain adjoint. Then the history is freed.
   */
  private loadingLoop(pair: StagePair): Stmt[] {
    const L = pair.forward
    const h = this.histories.get(L)!
    const p = pair.split,
      m = pair.stages.length,
      n = L.body.length
    const tail = L.body.slice(n - p)
    // each stage is allocated at its stored value (\`a <- history[…]\`: exactly, -0 included),
    // where it was allocated at zero and then exchanged with its element, which left a zero the
    // history is freed with (unchecked) in every element: a store per stage and iteration
    const at = new Map(pair.stages.map((a, j) => [a.name, j]))
    const taken = new Set<string>()
    const allocs = this.body(tail.slice(p - m)).map((x) => {
      const j = x.kind === 'alloc' && !taken.has(x.name) ? at.get(x.name) : undefined
      if (j === undefined || x.kind !== 'alloc' || x.value.kind !== 'num' || x.value.value !== 0) return x
      taken.add(x.name)
      return { ...x, value: this.historyElement(h, m, j) as Expr } as Stmt
    })
    // (a SWAP, for a stage not allocated there: the stage takes its stored value exactly, -0 included)
    const load: Stmt[] = pair.stages.flatMap((a, j) =>
      taken.has(a.name)
        ? []
        : [
            {
              kind: 'callstmt',
              callee: 'SWAP',
              args: [ref(a.name), this.historyElement(h, m, j)],
              inverse: false,
              ...loc(a),
            } as Stmt,
          ],
    )
    const body = [
      ...(h.index ? [] : [{ kind: 'update', op: '-=', target: ref(h.row), value: int(1) } as Stmt]),
      ...allocs,
      ...load,
      ...this.body(L.body.slice(p, n - p)),
      ...this.body(L.body.slice(0, p)),
    ]
    return [
      {
        kind: 'if',
        pre: this.historyKept(h, m),
        post: null,
        then: this.stmt({ ...L, body: [] }).map((x) => ({ ...x, body }) as Stmt),
        else: this.stmt(L),
      } as Stmt,
      {
        kind: 'unchecked',
        body: [
          ...(h.index ? [] : [{ kind: 'dealloc', name: h.row, value: int(0) } as Stmt]),
          { kind: 'dealloc', name: h.history, value: historySize(h.rows, m) },
          { kind: 'dealloc', name: h.rows, value: historyRows(L, m) },
        ],
      } as Stmt,
    ]
  }

  private stmt(s: Stmt): Stmt[] {
    switch (s.kind) {
      case 'update':
        return this.update(s)
      case 'callstmt':
        return s.target === 'function' ? this.call(s) : this.bijection(s)
      case 'alloc':
        return this.alloc(s)
      case 'dealloc':
        return this.dealloc(s)
      case 'if':
        return [
          {
            ...s,
            pre: clone(s.post ?? s.pre),
            post: s.post ? clone(s.pre) : null,
            then: this.body(s.then),
            else: this.body(s.else),
          },
        ]
      case 'while':
        return [{ ...s, pre: clone(s.post), post: clone(s.pre), body: this.body(s.body) }]
      case 'for':
        return [
          {
            ...s,
            start: clone(s.start),
            stop: clone(s.stop),
            step: s.step ? clone(s.step) : null,
            reverse: !s.reverse,
            body: this.body(s.body),
          },
        ]
      case 'push':
      case 'pop': {
        const elem = (s.stack.type as { elem?: string } | undefined)?.elem
        const inv = invertStmt(clone(s))
        if (!this.isFloat(elem)) return [inv]
        const gs = () => ref(this.g(s.stack.name))
        // push(s, x) leaves x = 0, a constant: its gradient is dropped before the stacked one returns
        // (w entries per value: pushed in direction order, popped in reverse)
        if (s.kind === 'push') {
          return [
            inv,
            ...this.dirs.map((k) => this.drop(this.grad(s.value, k), true)),
            ...[...this.dirs]
              .reverse()
              .map((k) => ({ kind: 'pop', stack: gs(), value: this.grad(s.value, k), ...loc(s) }) as Stmt),
          ]
        }
        return [
          inv,
          ...this.dirs.map((k) => ({ kind: 'push', stack: gs(), value: this.grad(s.value, k), ...loc(s) }) as Stmt),
        ]
      }
      case 'safe':
        rejectHostPullback(s, this.builder.program.hosts)
        return [clone(s)]
      case 'unchecked':
        return [{ ...s, body: this.body(s.body) }]
      default:
        return fail(`\`${s.kind}\` must be expanded before differentiation`, s.loc)
    }
  }

  /** `y op= e`: restore y, then `g_x op= g_y · ∂e/∂x` for every float location x read by e. */
  private update(s: Extract<Stmt, { kind: 'update' }>): Stmt[] {
    const restore = invertStmt(clone(s))
    delete (restore as { distinct?: unknown }).distinct
    const tt = typeOf(s.target)
    if (!this.isFloat(tt)) return [restore]
    let target: Dataview = s.target
    let sign = 1
    while (target.kind === 'neg') {
      target = target.target
      sign = -sign
    }
    if (s.op === '*=' || s.op === '/=') return [restore, ...this.scaleUpdate(s, target)]
    if (s.op !== '+=' && s.op !== '-=') fail(`cannot differentiate \`${s.op}\` on ${tt}`, s.loc)
    if (s.op === '-=') sign = -sign
    // the loss's gradient where it is known to be 1 (see `unitLoss`)
    const seed = (k: number): Expr =>
      target.kind === 'var' && target.name === this.unitLoss ? lit(1) : (this.grad(target, k) as Expr)
    const accumulated = this.dirs.flatMap((k) => this.accumulate(s.value, seed(k), sign, s.loc, k))
    const reused = target === s.target && tt === 'f64' ? this.readHeldValue(s, accumulated) : undefined
    return reused ? [...reused, restore] : [restore, ...accumulated]
  }

  /** The value holders of f's body (see `valueHolders`), found on first use. */
  private holders: Set<UpdateStmt> | undefined

  /**
   * Where `s` is a value holder (its target was zero before it, see `valueHolders`), the gradient
   * updates `accumulated` with every occurrence of `s`'s value `e` replaced by the target (`−target`
   * for `−=`), which holds it where the adjoint of `s` starts; undefined where nothing is replaced
   * (or a host pullback is among them). The result must run before `s` is restored.
   */
  private readHeldValue(s: UpdateStmt, accumulated: Stmt[]): Stmt[] | undefined {
    this.holders ??= valueHolders(this.f.body, {
      effectful: effectfulFunctions(this.builder.program.functions.values()),
      writes: this.builder.program.writes,
    })
    if (!this.holders.has(s) || accumulated.some((x) => x.kind !== 'update')) return undefined
    const key = printExpr(s.value)
    let replaced = false
    const out = accumulated.map((x) => {
      const u = x as UpdateStmt
      const value = rewriteExpr(u.value, (node) => {
        if (node.kind !== s.value.kind || printExpr(node as Expr) !== key) return node
        replaced = true
        const held = clone(s.target) as Expr
        // (for `-=`, y = 0 − e and e = 0 − y: exact but for e = −0, as for `+=`; `−y` would turn
        // e = +0 into −0)
        return s.op === '+=' ? held : bin('-', lit(0), held)
      }) as Expr
      return { ...u, value }
    })
    return replaced ? out : undefined
  }

  /**
   * The adjoint of `y *= e` / `y /= e` on a number system with real semantics Y ← Y·E (Y ← Y/E),
   * ulog: after y is restored, `g_E += g_y · Y` (`g_E −= g_y · Y/E/E` for `/=`), propagated
   * through the real-valued version of e (its leaves read with `f64(...)`), then `g_y ← g_y · E`
   * (`g_y / E`) by `scaleDerivative`: one rounding, as an f64 product. A negated target scales
   * the same way ((−y)·E = −(y·E)), so the negation is ignored.
   */
  private scaleUpdate(s: Extract<Stmt, { kind: 'update' }>, target: Dataview): Stmt[] {
    const tt = typeOf(s.target)
    if (!isRealViewType(this.registry, tt) && tt !== 'f64') fail(`cannot differentiate \`${s.op}\` on ${tt}`, s.loc)
    const op = s.op as '*=' | '/='
    const y = (): Expr => ({ kind: 'call', callee: 'f64', args: [clone(target) as Expr], type: 'f64' }) as Expr
    const E = realF64(s.value, this.registry)
    const at = s.loc ? { loc: s.loc } : {}
    const gy = (d: number): Expr => this.grad(target, d) as Expr
    // ∂(Y·E)/∂E = Y, ∂(Y/E)/∂E = −Y/E² (as Y/E/E: E² overflows long before Y/E/E does)
    const seedE = (d: number): Expr =>
      op === '*=' ? mul(gy(d), y()) : neg(bin('/', bin('/', mul(gy(d), y()), clone(E)), clone(E)))
    return [
      ...this.dirs.flatMap((d) => this.accumulate(E, seedE(d), 1, s.loc, d)),
      ...this.dirs.flatMap((d) => scaleDerivative(this.grad(target, d), op, E, this.fresh('t'), at)),
    ] as Stmt[]
  }

  /** `g_x ±= seed · ∂e/∂x` for the float locations x read by e (occurrences of one location summed). */
  private accumulate(e: Expr, seed: Expr, sign: number, at?: Expr['loc'], k = 0): Stmt[] {
    // host functions with array arguments (dual host functions) contribute by `@safe` pullback calls
    const collect: HostPullback[] = []
    const resolver = this.builder.partials
    const outer = resolver.collect
    resolver.collect = collect
    let terms: Contribution[]
    try {
      terms = differentiate(realView(e, this.registry), seed, this.registry, resolver)
    } finally {
      resolver.collect = outer
    }
    // contributions to parameters held constant are not computed
    const held = (e: Expr | Dataview) => this.constants.size > 0 && this.constants.has(rootOf(e as Arg))
    const pullbacks = collect
      .filter((p) => !held(p.target))
      .map((p): Stmt => {
        const s = sign > 0 ? p.seed : neg(p.seed)
        // in vector mode the array gradient holds w directions per element: the pullback adds to g[i·w + k]
        const int = (value: number): Expr => ({ kind: 'num', value, isFloat: false })
        const dir = this.w !== 1 ? [int(k), int(this.w)] : []
        return {
          kind: 'safe',
          expr: {
            kind: 'call',
            callee: p.callee,
            args: [s, ...p.args, this.grad(p.target as Dataview, k) as Expr, ...dir],
          },
          ...(at ? { loc: at } : {}),
        } as Stmt
      })
    const grouped = new Map<string, { leaf: Contribution['leaf']; coefficient: Expr }>()
    for (const t of terms) {
      if (held(t.leaf)) continue
      const key = printExpr(t.leaf)
      const prev = grouped.get(key)
      if (prev) prev.coefficient = add(prev.coefficient, t.coefficient)
      else grouped.set(key, { leaf: t.leaf, coefficient: t.coefficient })
    }
    return [...grouped.values()]
      .map(({ leaf, coefficient }) => {
        // `g += −c` as `g −= c` (exact): no negation computed
        const { negative, value } = pullSign(coefficient)
        return {
          kind: 'update',
          op: sign > 0 !== negative ? '+=' : '-=',
          target: this.grad(leaf, k),
          value,
          ...(at ? { loc: at } : {}),
        } as Stmt
      })
      .concat(pullbacks)
  }

  /**
   * Moves the value of a gradient dataview into the sink and leaves it zero, without run-time
   * checks (the value is the gradient with respect to a constant: the ancilla theorem).
   */
  private drop(dv: Grad, toSink: boolean, arrayLength?: Expr): Stmt {
    const t = this.fresh('t')
    const elemType = typeOf(dv) ?? 'f64'
    const body = (target: Dataview): Stmt[] => {
      const tt = typeOf(target) ?? elemType
      return [
        { kind: 'alloc', name: t, declared: { kind: 'scalar', name: tt }, value: lit(0) },
        { kind: 'callstmt', callee: 'SWAP', args: [ref(t), target], inverse: false },
        ...(toSink
          ? [
              {
                kind: 'update',
                op: '+=',
                target: ref(this.sink),
                value: tt === 'f64' ? ref(t) : { kind: 'call', callee: 'f64', args: [ref(t)] },
              } as Stmt,
            ]
          : []),
        { kind: 'dealloc', name: t, value: lit(0) },
      ]
    }
    if (!arrayLength) return { kind: 'unchecked', body: body(dv) }
    const name = (dv as { name: string }).name
    const i = this.fresh('i')
    const elem = at(name, ref(i))
    ;(elem as { type?: string }).type = elemType
    return {
      kind: 'unchecked',
      body: [
        {
          kind: 'for',
          variable: i,
          start: { kind: 'num', value: 0, isFloat: false },
          stop: arrayLength,
          step: null,
          inclusive: false,
          body: body(elem),
        },
      ],
    }
  }

  private alloc(s: Extract<Stmt, { kind: 'alloc' }>): Stmt[] {
    const t = s.type!
    const inv = invertStmt(clone(s))
    if (!hasGradient(t, this.registry)) return [inv]
    const gx = this.g(s.name)
    if (t.kind === 'stack') return [inv, { kind: 'dealloc', name: gx, value: { kind: 'emptystack' } }]
    if (t.kind === 'array') {
      const n = (s.value as Extract<Expr, { kind: 'call' }>).args[0]!
      const gref = ref(gx)
      ;(gref as { type?: string }).type = gradientScalar(t.elem)
      return [
        inv,
        this.drop(gref, true, this.wide(clone(n))),
        { kind: 'dealloc', name: gx, value: { kind: 'call', callee: 'zeros', args: [this.wide(clone(n))] } },
      ]
    }
    const value = s.value as Expr
    // the ancilla's gradient is a gradient with respect to a constant: it goes to the sink and
    // the gradient ancilla is freed without a check (the ancilla theorem)
    const dropped = this.dirs.flatMap((k): Stmt[] => {
      const g = this.gs(s.name, k)
      const gradType = gradientScalar(t.name)
      const gref = ref(g)
      ;(gref as { type?: string }).type = gradType
      return [
        {
          kind: 'update',
          op: '+=',
          target: ref(this.sink),
          value: gradType === 'f64' ? gref : { kind: 'call', callee: 'f64', args: [gref] },
        } as Stmt,
        { kind: 'unchecked', body: [{ kind: 'dealloc', name: g, value: gradientZero() }] },
      ]
    })
    if (!readsFloat(value, this.registry)) return [inv, ...dropped]
    const propagate = this.dirs.flatMap((k) => this.accumulate(value, ref(this.gs(s.name, k)), 1, s.loc, k))
    if (!this.registry.numberSystem(t.name).bijectiveUpdates.includes('-=')) {
      // no `-=` (ulog): x <- e propagates g_x into what e reads, then frees x checked against e
      return [...propagate, inv, ...dropped]
    }
    // x <- e is x <- 0; x += e: its adjoint propagates g_x into what e reads, then frees x at 0
    return [
      { kind: 'update', op: '-=', target: ref(s.name), value: clone(value), ...loc(s) },
      ...propagate,
      { kind: 'dealloc', name: s.name, value: lit(0), ...loc(s) },
      ...dropped,
    ]
  }

  private dealloc(s: Extract<Stmt, { kind: 'dealloc' }>): Stmt[] {
    const t = s.type!
    const inv = invertStmt(clone(s))
    if (!hasGradient(t, this.registry)) return [inv]
    const gx = this.g(s.name)
    if (t.kind === 'scalar')
      return [
        inv,
        ...this.dirs.map(
          (k) =>
            ({ kind: 'alloc', name: this.gs(s.name, k), declared: gradientType(t), value: gradientZero() }) as Stmt,
        ),
      ]
    const value: Expr | { kind: 'emptystack' } =
      t.kind === 'stack'
        ? { kind: 'emptystack' }
        : {
            kind: 'call',
            callee: 'zeros',
            args: [this.wide(clone((s.value as Extract<Expr, { kind: 'call' }>).args[0]!))],
          }
    return [inv, { kind: 'alloc', name: gx, declared: gradientType(t), value } as Stmt]
  }

  /**
   * Gradient arguments for a call: the gradient dataview of each differentiable argument.
   * A read-only expression gets a temporary gradient: after the call it is propagated into the
   * locations the expression reads, then moved into the sink; a location whose gradient is already passed (a
   * read-only argument repeated) gets a temporary that is added back after the call.
   */
  private gradientArgs(
    s: CallStmt,
    kinds: Array<Type | null>,
    written: boolean[],
    dirs: number[] = this.dirs,
  ): { args: Arg[]; before: Stmt[]; after: Stmt[] } {
    const args: Arg[] = [],
      before: Stmt[] = [],
      after: Stmt[] = []
    const seen = new Set<string>()
    s.args.forEach((a, i) => {
      const t = kinds[i]
      if (!t) return
      const isView = a.kind === 'var' || a.kind === 'index' || a.kind === 'neg'
      if (!isView) {
        if (t.kind !== 'scalar') {
          fail(
            `argument ${i + 1} of \`${s.callee}\` is the expression \`${printExpr(a)}\`; an array argument must be a variable to carry its gradient`,
            a.loc ?? s.loc,
          )
        }
        const reads = readsFloat(a as Expr, this.registry)
        for (const d of dirs) {
          const c = this.fresh('c')
          const gt = gradientScalar((t as { name: string }).name)
          before.push({ kind: 'alloc', name: c, declared: gradientType(t), value: lit(0) } as Stmt)
          args.push(ref(c))
          // a read-only expression: the callee leaves the expression's gradient in c, and the
          // call restored every location the expression reads (the callee writes none of them,
          // checked statically), so c goes on into those locations, `g_x += c · ∂e/∂x`; then c
          // goes into the sink, as the gradient of an ancilla `t <- 0; t += e` passed instead
          // would where t is allocated (the ancilla theorem)
          after.push(
            ...(reads ? this.accumulate(a as Expr, withType(ref(c), gt), 1, a.loc ?? s.loc, d) : []),
            this.drop(withType(ref(c), gt), true),
            { kind: 'dealloc', name: c, value: lit(0) },
          )
        }
        return
      }
      const root = a.kind === 'neg' ? rootOf(a) : a.kind === 'var' ? a.name : a.array.name
      if (this.constants.has(root)) {
        // a parameter held constant: the callee's contribution goes to a scratch gradient, dropped
        const c = this.fresh('c')
        if (t.kind === 'scalar' || a.kind !== 'var') {
          const st = t.kind === 'scalar' ? t.name : (t as { elem: string }).elem
          for (const _ of dirs) {
            const cd = this.fresh('c')
            before.push({
              kind: 'alloc',
              name: cd,
              declared: { kind: 'scalar', name: gradientScalar(st) },
              value: lit(0),
            } as Stmt)
            args.push(ref(cd))
            after.push(this.drop(withType(ref(cd), gradientScalar(st)), true), {
              kind: 'dealloc',
              name: cd,
              value: lit(0),
            })
          }
          return
        }
        if (t.kind === 'stack') fail(`the stack \`${root}\` cannot be held constant`, s.loc)
        const n = (): Expr => ({ kind: 'call', callee: 'len', args: [ref(root)] })
        before.push({
          kind: 'alloc',
          name: c,
          declared: gradientType(t),
          value: { kind: 'call', callee: 'zeros', args: [n()] },
        } as Stmt)
        args.push(ref(c))
        after.push(
          this.drop(withType(ref(c), gradientScalar((t as { elem: string }).elem)), true, {
            kind: 'call',
            callee: 'len',
            args: [ref(c)],
          }),
          { kind: 'dealloc', name: c, value: { kind: 'call', callee: 'zeros', args: [n()] } },
        )
        return
      }
      const repeated = seen.has(root) && !written[i]
      seen.add(root)
      if (t.kind !== 'scalar') {
        const gv = t.kind === 'array' && a.kind === 'var' ? ref(this.g(root)) : this.grad(a)
        if (!repeated) {
          args.push(gv)
          return
        }
        if (t.kind === 'stack')
          fail(
            `the same stack \`${root}\` is passed twice to \`${s.callee}\`; differentiating that is not supported`,
            s.loc,
          )
        const c = this.fresh('c')
        const k = this.fresh('i')
        const n = (): Expr => ({ kind: 'call', callee: 'len', args: [ref(c)] })
        before.push({
          kind: 'alloc',
          name: c,
          declared: gradientType(t),
          value: { kind: 'call', callee: 'zeros', args: [{ kind: 'call', callee: 'len', args: [ref(this.g(root))] }] },
        } as Stmt)
        args.push(ref(c))
        after.push(
          {
            kind: 'for',
            variable: k,
            start: { kind: 'num', value: 0, isFloat: false },
            stop: n(),
            step: null,
            inclusive: false,
            body: [{ kind: 'update', op: '+=', target: at(this.g(root), ref(k)), value: at(c, ref(k)) }],
          },
          this.drop(withType(ref(c), gradientScalar((t as { elem: string }).elem)), false, n()),
          {
            kind: 'dealloc',
            name: c,
            value: {
              kind: 'call',
              callee: 'zeros',
              args: [{ kind: 'call', callee: 'len', args: [ref(this.g(root))] }],
            },
          },
        )
        return
      }
      for (const d of dirs) {
        const gv = this.grad(a, d)
        if (!repeated) {
          args.push(gv)
          continue
        }
        const c = this.fresh('c')
        before.push({ kind: 'alloc', name: c, declared: gradientType(t), value: lit(0) } as Stmt)
        args.push(ref(c))
        after.push(
          { kind: 'update', op: '+=', target: gv, value: ref(c) },
          this.drop(withType(ref(c), gradientScalar(t.name)), false),
          { kind: 'dealloc', name: c, value: lit(0) },
        )
      }
    })
    return { args, before, after }
  }

  /** `g(args)` → `g$adj(args, gradients, sink)`; `~g(args)` → the adjoint of g's inverse. */
  private call(s: CallStmt): Stmt[] {
    const callee = this.builder.program.functions.get(s.callee)!
    const written = this.builder.program.writes.get(s.callee)!
    const adj = this.builder.request(s.callee, s.inverse)
    const kinds = callee.params.map((p) => (hasGradient(p.type, this.registry) ? p.type : null))
    const { args, before, after } = this.gradientArgs(s, kinds, written)
    return [
      ...before,
      {
        kind: 'callstmt',
        callee: adj,
        args: [...s.args.map(clone), ...args, ref(this.sink)],
        inverse: false,
        ...loc(s),
      },
      ...after,
    ]
  }

  private bijection(s: CallStmt): Stmt[] {
    const spec0 = this.registry.bijection(s.callee)
    const spec = s.inverse && spec0.inverse !== 'self' ? this.registry.bijection(spec0.inverse) : spec0
    const restore = invertStmt(clone(s))
    delete (restore as { distinct?: unknown }).distinct
    const types = s.args.map((a) => typeOf(a) ?? 'f64')
    if (!types.some((t) => this.isFloat(t))) return [restore]
    if (spec.selfAdjoint) {
      // linear and its own transpose (SWAP, NEG, HADAMARD): the gradients go through the bijection itself
      return [
        restore,
        ...this.dirs.map(
          (k) =>
            ({
              kind: 'callstmt',
              callee: spec.name,
              args: s.args.map((a) => this.grad(a, k)),
              inverse: false,
              ...loc(s),
            }) as Stmt,
        ),
      ]
    }
    if (!spec.adjoint) {
      fail(
        `the bijection \`${spec.name}\` has no adjoint rule: give its spec an \`adjoint\` snippet (or mark a linear, self-transposed one \`selfAdjoint\`) to differentiate through it`,
        s.loc,
      )
    }
    // an empty snippet: the gradients pass through unchanged (INC, DEC: the derivative is 1)
    if (spec.adjoint!.source.trim() === '') return [restore]
    const helper = this.builder.snippetHelper(spec, types, s.loc)
    const kinds = types.map((t): Type | null => (this.isFloat(t) ? { kind: 'scalar', name: t } : null))
    // the snippet helper takes scalar gradients: one call per direction, after the values are
    // restored, or before (a rule that reads the new values: `adjointReads: 'new'`)
    const updates = this.dirs.flatMap((k) => {
      const { args, before, after } = this.gradientArgs(
        s,
        kinds,
        spec.roles.map((r) => r === 'inout'),
        [k],
      )
      return [
        ...before,
        {
          kind: 'callstmt',
          callee: helper,
          args: [...s.args.map(clone), ...args],
          inverse: false,
          ...loc(s),
        } as Stmt,
        ...after,
      ]
    })
    return spec.adjointReads === 'new' ? [...updates, restore] : [restore, ...updates]
  }
}

function rootOf(a: Arg): string {
  if (a.kind === 'var') return a.name
  if (a.kind === 'index') return a.array.name
  if (a.kind === 'neg') return rootOf(a.target)
  return ''
}

function withType<T extends Expr>(e: T, t: string): T {
  ;(e as { type?: string }).type = t
  return e
}

/**
 * The names of a stage history (see \`FunctionAdjoint.storingLoop\`): its rows, the history, and
 * the row of an iteration, either \`index\` (an expression of the loop variable) or the counter
 * \`row\` (counting the storing loop's iterations up and the loading loop's down).
 */
interface History {
  rows: string
  history: string
  row: string
  index?: Expr
}

/**
 * The row of an iteration of \`L\` as an expression of its variable, \`t − start\` (\`start − t\` for
 * a step of −1), where its step is ±1 and its body writes nothing \`start\` reads (\`written\`);
 * undefined elsewhere (a counter then numbers the rows). In a kept history the loop runs at most
 * \`historyCap\` iterations, so the difference is that small: no i32 wrap-around.
 */
function iterationIndex(L: Extract<Stmt, { kind: 'for' }>, written: ReadonlySet<string>): Expr | undefined {
  const step = L.step === null ? 1 : L.step.kind === 'num' ? L.step.value : 0
  if (step !== 1 && step !== -1) return undefined
  const reads = new Set<string>()
  valueReads(L.start, reads)
  if ([...reads].some((r) => written.has(r))) return undefined
  const t = ref(L.variable)
  if (L.start.kind === 'num' && L.start.value === 0) return step === 1 ? t : bin('-', int(0), t)
  return step === 1 ? bin('-', t, clone(L.start)) : bin('-', clone(L.start), t)
}

/** An i32 literal. */
const int = (value: number): Expr => ({ kind: 'num', value, isFloat: false })
const I32: Type = { kind: 'scalar', name: 'i32' }

/**
 * The rows of a stage history for loop \`L\` with m stages: \`|stop − start| / |step| + 1\` in f64
 * (exact for i32 endpoints, rounded down only at an integer: at least the iteration count), at
 * most \`historyCap(m)\` + 1 (then more than the history holds: the loops recompute), as an i32.
 */
function historyRows(L: Extract<Stmt, { kind: 'for' }>, m: number): Expr {
  const f64 = (e: Expr): Expr => ({ kind: 'call', callee: 'f64', args: [clone(e)] })
  const fabs = (e: Expr): Expr => ({ kind: 'call', callee: 'abs', args: [e] })
  const span = fabs(bin('-', f64(L.stop), f64(L.start)))
  const step = L.step
  const perStep =
    step === null
      ? span
      : step.kind === 'num'
        ? Math.abs(step.value) === 1
          ? span
          : bin('/', span, lit(Math.abs(step.value)))
        : bin('/', span, fabs(f64(step)))
  const capped: Expr = {
    kind: 'call',
    callee: 'min',
    args: [bin('+', perStep, lit(1)), lit(historyCap(m) + 1)],
  }
  return { kind: 'call', callee: 'i32', args: [capped] }
}

/** The most rows a stage history of m stages holds (\`HISTORY_ELEMENTS\` / m). */
function historyCap(m: number): number {
  return Math.floor(HISTORY_ELEMENTS / m)
}

/**
 * \`zeros(rows · m · min(div(cap, rows), 1))\`: rows · m elements where rows ≤ cap (the history
 * is kept), none where rows = cap + 1 (rows ≥ 1: no division by zero).
 */
function historySize(rows: string, m: number): Expr {
  const kept: Expr = {
    kind: 'call',
    callee: 'min',
    args: [{ kind: 'call', callee: 'div', args: [int(historyCap(m)), ref(rows)] }, int(1)],
  }
  return { kind: 'call', callee: 'zeros', args: [bin('*', bin('*', ref(rows), int(m)), kept)] }
}

function loc(s: { loc?: Expr['loc'] }): { loc?: NonNullable<Expr['loc']> } {
  return s.loc ? { loc: s.loc } : {}
}

/** \`$loss += loss\` (converted to f64 from f32): how the fused gradient programs report the loss value. */
function reportLoss(loss: string, type: string): Stmt {
  return {
    kind: 'update',
    op: '+=',
    target: ref('$loss'),
    value: type === 'f64' ? ref(loss) : { kind: 'call', callee: 'f64', args: [ref(loss)] },
  } as Stmt
}
