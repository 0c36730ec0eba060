/**
 * The map-forward gradient program: mixed mode for a function that starts by mapping arrays
 * elementwise. When f's body is `h(x₁, …); T` and h is one loop `for i … { S }` whose iterations
 * touch their arrays only at element i (and write no scalar), the Jacobian of h is block
 * diagonal: element i of every array after h depends only on element i of the arrays before it.
 * Forward mode then gets all of it in one tangent run of h, seeded with 1 in every element along
 * one direction per array that h reads (an array h only accumulates into, `a[i] += e` with e not
 * reading it, passes its gradient through unchanged and needs none). The gradient program is
 *
 *   h$tan(x…, ẋ…); T; $loss += loss; adj(T); g_a[i] = Σ_b g_b[i] · ∂b[i]/∂a[i]  (each i of h's loop)
 *
 * where adj(T) is f's adjoint without its last statement (the adjoint of the call of h, which
 * the last line replaces). This is the reverse sweep of the paper with the part that would run h
 * backwards — a recompute and an adjoint sweep per element — replaced by one forward run carrying
 * tangents, which costs about one run of h: a batch of scalar functions (`out[i] += J(z[i])`)
 * differentiates at about the cost of evaluating it. The values are left as f's outputs, so it is
 * used only without run-time checks (the driver does not check them); f must not be an inverse
 * nor have stacks, h must have no float scalar parameters (their gradient would be a sum over
 * the elements) nor effects (`@safe`, stacks).
 */
import { TenetStaticError, type Arg, type Expr, type FunctionDef, type Param, type Stmt } from '@tenet/ir'
import { rewriteExpr, walk } from '@tenet/ir/backend'
import type { TenetFunction } from '@tenet/reversible'
import { compileGenerated, infoOf } from './compile.js'
import { dropDeadUpdatesIn, onlyAccumulates } from './dead.js'
import { at, bin, call, clone, lit, ref, registryPartials } from './expr.js'
import { AdjointBuilder, SINK, adjointName, hasGradient } from './transform.js'
import { TangentBuilder } from './tangent.js'
import { stmtExprs as exprs } from '@tenet/ir/backend'

type ForStmt = Extract<Stmt, { kind: 'for' }>

/** Why the map-forward program does not apply (for the plan), or the pieces it is built from. */
interface MapShape {
  /** The call of h in f, and h. */
  h: FunctionDef
  args: string[]
  loop: ForStmt
  /** Per parameter of h: 'read' (a float array h reads: a direction), 'acc' (accumulated only), or null (no gradient). */
  roles: Array<'read' | 'acc' | null>
}

/** Whether every access of array `a` in `body` is the element `a[i]`, `len(a)` aside (and `a` never passed whole). */
function onlyElementI(body: readonly Stmt[], a: string, i: string): boolean {
  let ok = true
  const visit = (e: Expr | Arg) => {
    rewriteExpr(e, (x) => {
      if (x.kind === 'index' && x.array.name === a && !(x.index.kind === 'var' && x.index.name === i)) ok = false
      return x
    })
    // a whole-array reference other than `len(a)`
    const whole = (y: Expr | Arg): void => {
      if (y.kind === 'var' && y.name === a) ok = false
      else if (y.kind === 'call') {
        for (const z of y.args) if (!(y.callee === 'len' && z.kind === 'var')) whole(z)
      } else if (y.kind === 'binary') {
        whole(y.left)
        whole(y.right)
      } else if (y.kind === 'unary') whole(y.arg)
      else if (y.kind === 'neg' || y.kind === 'field') whole(y.target)
      else if (y.kind === 'index') whole(y.index)
    }
    whole(e)
  }
  walk(body as Stmt[], (s) => {
    for (const e of exprs(s)) visit(e)
  })
  return ok
}

/**
 * Whether `a` is only accumulated into in `body`: `a[i] += e` / `a[i] -= e` with e not reading a,
 * or `a[i]` passed to a function whose parameter there is only accumulated into (see
 * `onlyAccumulates`), and read nowhere else.
 */
function accumulatedOnly(body: readonly Stmt[], a: string, functions: ReadonlyMap<string, FunctionDef>): boolean {
  let ok = true
  const reads = (e: Expr | Arg): boolean => {
    let r = false
    rewriteExpr(e, (x) => {
      if ((x.kind === 'index' && x.array.name === a) || (x.kind === 'var' && x.name === a)) r = true
      return x
    })
    return r
  }
  walk(body as Stmt[], (s) => {
    if (!ok) return
    if (s.kind === 'update') {
      const own = s.target.kind === 'index' && s.target.array.name === a
      if (own && s.op !== '+=' && s.op !== '-=') ok = false
      if (reads(s.value) || (!own && reads(s.target))) ok = false
      return
    }
    if (s.kind === 'callstmt') {
      s.args.forEach((x, k) => {
        if (!reads(x)) return
        const g = s.target === 'function' && !s.inverse ? functions.get(s.callee) : undefined
        const p = g?.params[k]
        if (!g || !p || x.kind !== 'index' || x.array.name !== a || !onlyAccumulates(g.body, p.name)) ok = false
      })
      return
    }
    if (s.kind === 'for' && (reads(s.start) || reads(s.stop) || (s.step !== null && reads(s.step)))) ok = false
    else if (s.kind !== 'for' && exprs(s).some(reads)) ok = false
  })
  return ok
}

/** The map shape of f (see the module comment), or a reason why it has none. */
function mapShape(f: TenetFunction): MapShape | string {
  const info = infoOf(f)
  const program = info.program
  const def = program.functions.get(info.name)
  if (!def || info.inverse) return 'f is an inverse'
  const first = def.body[0]
  if (first?.kind !== 'callstmt' || first.inverse || first.target !== 'function')
    return "f's first statement is not a call of a function of the program"
  const h = program.functions.get(first.callee)
  if (!h) return "f's first statement is not a call of a function of the program"
  const args = first.args.map((x) => (x.kind === 'var' ? x.name : ''))
  if (args.some((n) => !n || !def.params.some((p) => p.name === n)) || new Set(args).size !== args.length)
    return `the call of \`${h.name}\` does not pass distinct parameters of f`
  const loop = h.body[0]
  if (h.body.length !== 1 || loop?.kind !== 'for') return `\`${h.name}\` is not one loop`
  if (loop.step !== null && !(loop.step.kind === 'num' && Math.abs(loop.step.value) === 1))
    return `\`${h.name}\`'s loop does not step by 1`
  let effects = false
  walk(loop.body, (s) => {
    if (s.kind === 'safe' || s.kind === 'push' || s.kind === 'pop') effects = true
  })
  if (effects) return `\`${h.name}\` has effects (\`@safe\`, stacks)`
  const written = program.writes.get(h.name)!
  const roles: MapShape['roles'] = []
  for (const [k, p] of h.params.entries()) {
    const grad = hasGradient(p.type, info.registry)
    if (p.type.kind === 'stack') return `\`${h.name}\` has a stack parameter`
    if (p.type.kind === 'scalar') {
      if (written[k]) return `\`${h.name}\` writes its scalar parameter \`${p.name}\``
      if (grad) return `\`${h.name}\` reads the float scalar \`${p.name}\` in every element`
      roles.push(null)
      continue
    }
    if (!onlyElementI(loop.body, p.name, loop.variable))
      return `\`${h.name}\` accesses \`${p.name}\` at other elements than its loop's`
    if (!grad) {
      if (written[k]) return `\`${h.name}\` writes the array \`${p.name}\` that has no gradient`
      roles.push(null)
      continue
    }
    roles.push(accumulatedOnly(loop.body, p.name, program.functions) ? 'acc' : 'read')
  }
  if (!roles.includes('read')) return `\`${h.name}\` reads no float array`
  return { h, args, loop, roles }
}

/** Why f has no map-forward program, or undefined when it has one (its shape; the program may still fail to build). */
export function mapForwardRefusal(f: TenetFunction): string | undefined {
  const s = mapShape(f)
  return typeof s === 'string' ? s : undefined
}

/** The map-forward gradient program's IR (entry and every function it calls), or null. */
function mapForwardIR(
  f: TenetFunction,
  loss: number,
): { entry: FunctionDef; functions: FunctionDef[]; registry: ReturnType<typeof infoOf>['registry'] } | null {
  const info = infoOf(f)
  const shape = mapShape(f)
  if (typeof shape === 'string') return null
  const { h, args, loop, roles } = shape
  const lossParam = f.ir.params[loss]
  if (lossParam?.type.kind !== 'scalar') return null
  const registry = info.registry.clone()
  const partials = registryPartials(registry, info.program.hosts)
  const adjoints = new AdjointBuilder(info.program, info.inverses, registry, partials, 1)
  const adjName = adjoints.request(info.name, false)
  const m = roles.filter((r) => r === 'read').length
  const tangents = new TangentBuilder(info.program, info.inverses, registry, partials, m)
  const tanName = tangents.request(h.name, false)
  const generated = [...adjoints.build(), ...tangents.build()]
  const fAdj = generated.find((g) => g.name === adjName)!
  // adj(h(…)) is the adjoint's last statement: the chain rule below replaces it
  const last = fAdj.body[fAdj.body.length - 1]
  if (last?.kind !== 'callstmt' || last.callee !== adjointName(h.name, false, 1)) return null
  const names = new Set<string>()
  walk(fAdj.body, (s) => {
    if (s.kind === 'alloc') names.add(s.name)
  })
  for (const p of fAdj.params) names.add(p.name)
  const fresh = (base: string) => {
    let n = base
    for (let k = 2; names.has(n); k++) n = `${base}${k}`
    names.add(n)
    return n
  }
  const gradOf = new Map<string, string>()
  // the adjoint's gradient parameters follow f's parameters, in the order of f's float parameters
  let g = f.ir.params.length
  for (const p of f.ir.params) if (hasGradient(p.type, info.registry)) gradOf.set(p.name, fAdj.params[g++]!.name)
  const floatArrays = h.params.flatMap((_, k) => (roles[k] !== null ? [k] : []))
  const dirOf = new Map<number, number>()
  for (const k of floatArrays) if (roles[k] === 'read') dirOf.set(k, dirOf.size)
  const tangentOf = new Map(floatArrays.map((k) => [k, fresh(`$t_${args[k]}`)]))
  const arrayType = (k: number) => h.params[k]!.type as Extract<Param['type'], { kind: 'array' }>
  const zeros = (n: Expr): Expr => call('zeros', n)
  const len = (name: string): Expr => call('len', ref(name))
  const mw = (e: Expr): Expr => (m === 1 ? e : bin('*', e, { kind: 'num', value: m, isFloat: false }))
  const i = fresh('$i')
  const body: Stmt[] = []
  // tangent arrays, element-major (n·m), seeded with 1 along each read array's direction
  for (const k of floatArrays)
    body.push({
      kind: 'alloc',
      name: tangentOf.get(k)!,
      declared: { kind: 'array', elem: arrayType(k).elem },
      value: zeros(mw(len(args[k]!))),
    } as Stmt)
  for (const [k, d] of dirOf) {
    const idx = d === 0 ? mw(ref(i)) : bin('+', mw(ref(i)), { kind: 'num', value: d, isFloat: false })
    body.push({
      kind: 'for',
      variable: i,
      start: { kind: 'num', value: 0, isFloat: false },
      stop: len(args[k]!),
      step: null,
      inclusive: false,
      body: [{ kind: 'update', op: '+=', target: at(tangentOf.get(k)!, idx), value: lit(1) } as Stmt],
    } as Stmt)
  }
  body.push({
    kind: 'callstmt',
    callee: tanName,
    args: [...args.map((a) => ref(a)), ...floatArrays.map((k) => ref(tangentOf.get(k)!))],
    inverse: false,
  } as Stmt)
  // the rest of f, the loss value, the rest's adjoint
  body.push(...clone(info.program.functions.get(info.name)!.body.slice(1)))
  body.push({
    kind: 'update',
    op: '+=',
    target: ref('$loss'),
    value: lossParam.type.name === 'f64' ? ref(lossParam.name) : call('f64', ref(lossParam.name)),
  } as Stmt)
  body.push(...clone(fAdj.body.slice(0, -1)))
  // the chain rule through h over its loop's elements: g_a[i] = Σ_b g_b[i] · ∂b[i]/∂a[i] for the
  // read arrays a (into fresh arrays first, every product reading the gradients after the rest)
  const rename = new Map(h.params.map((p, k) => [p.name, args[k]!]))
  const bound = (e: Expr): Expr =>
    rewriteExpr(clone(e), (x) => (x.kind === 'var' && rename.has(x.name) ? ref(rename.get(x.name)!) : x)) as Expr
  const next = new Map([...dirOf.keys()].map((k) => [k, fresh(`$g_${args[k]}`)]))
  const chain: Stmt[] = []
  for (const [k, d] of dirOf) {
    let sum: Expr | undefined
    for (const b of floatArrays) {
      const ti = d === 0 ? mw(ref(i)) : bin('+', mw(ref(i)), { kind: 'num', value: d, isFloat: false })
      const term = bin('*', at(gradOf.get(args[b]!)!, ref(i)), at(tangentOf.get(b)!, ti))
      sum = sum ? bin('+', sum, term) : term
    }
    chain.push({ kind: 'update', op: '+=', target: at(next.get(k)!, ref(i)), value: sum! } as Stmt)
  }
  for (const k of dirOf.keys())
    chain.push({
      kind: 'callstmt',
      callee: 'SWAP',
      args: [at(gradOf.get(args[k]!)!, ref(i)), at(next.get(k)!, ref(i))],
      inverse: false,
    } as Stmt)
  for (const k of dirOf.keys())
    body.push({
      kind: 'alloc',
      name: next.get(k)!,
      declared: { kind: 'array', elem: 'f64' },
      value: zeros(len(args[k]!)),
    } as Stmt)
  body.push({
    kind: 'for',
    variable: i,
    start: bound(loop.start),
    stop: bound(loop.stop),
    step: loop.step ? clone(loop.step) : null,
    inclusive: loop.inclusive,
    ...(loop.reverse ? { reverse: true } : {}),
    body: chain,
  } as Stmt)
  // (without checks nothing looks at what these hold when they go)
  for (const k of [...dirOf.keys()].reverse())
    body.push({
      kind: 'dealloc',
      name: next.get(k)!,
      declared: { kind: 'array', elem: 'f64' },
      value: zeros(len(args[k]!)),
    } as Stmt)
  for (const k of [...floatArrays].reverse())
    body.push({
      kind: 'dealloc',
      name: tangentOf.get(k)!,
      declared: { kind: 'array', elem: arrayType(k).elem },
      value: zeros(mw(len(args[k]!))),
    } as Stmt)
  const entry: FunctionDef = {
    kind: 'fn',
    name: `${adjName}$map`,
    params: [...fAdj.params, { name: '$loss', type: { kind: 'scalar', name: 'f64' } }],
    body,
  }
  const taken = new Set(generated.map((x) => x.name))
  return {
    entry,
    functions: [...generated, ...[...info.program.functions.values()].filter((x) => !taken.has(x.name)), entry],
    registry,
  }
}

const cache = new WeakMap<TenetFunction, Map<number, TenetFunction | null>>()

/**
 * The map-forward gradient program of `f` for the loss parameter `loss` (see the module comment),
 * compiled like the fused programs (parameters: the adjoint's, then `$loss`), with the updates
 * nothing reads dropped; null when it does not apply: f compiled with run-time checks, an
 * inverse, stacks, or not of the shape `h(x…); T` with h an elementwise loop.
 */
export function compileMapForward(f: TenetFunction, loss: number): TenetFunction | null {
  let byLoss = cache.get(f)
  if (byLoss?.has(loss)) return byLoss.get(loss)!
  const info = infoOf(f)
  let out: TenetFunction | null = null
  if (info.options.checks === false && !f.ir.params.some((p) => p.type.kind === 'stack')) {
    let ir: ReturnType<typeof mapForwardIR> = null
    try {
      ir = mapForwardIR(f, loss)
    } catch (e) {
      // a bijection in h without a tangent rule: the two sweeps still apply
      if (!(TenetStaticError.isInstance(e) && e.code.startsWith('ad/'))) throw e
    }
    if (ir) {
      const observed = new Set(
        ir.entry.params
          .slice(f.ir.params.length)
          .map((p) => p.name)
          .filter((n) => n !== SINK),
      )
      const { entry, functions } = dropDeadUpdatesIn(ir.functions, ir.entry, observed, ir.registry)
      out = compileGenerated(info, ir.registry, functions)[entry.name]!
    }
  }
  if (!byLoss) cache.set(f, (byLoss = new Map()))
  byLoss.set(loss, out)
  return out
}
