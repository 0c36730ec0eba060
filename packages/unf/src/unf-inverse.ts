/**
 * UNF⁻¹ (seed 004, §4.4 and Fig. 10): Target UNF → the target language.
 *
 * Context slots become variables. A primal primitive becomes a `let` of its result; the
 * continuation of each step becomes `let Yₖ = fun (y…) -> Yₖ₋₁(JᵀP(y…))`, a lambda over the
 * cotangents of the context after P that returns, through the previous continuation, the
 * cotangents of the context before P. Y₀ is the identity of the input context, and the program
 * ends with `⟨result, Yₘ(0, …, 0, seed)⟩`: the value and the vector–Jacobian product.
 *
 * The transpose Jacobians of the array constructs and of conditionals need the vector–Jacobian
 * product of their bodies; `vjp` (the whole pipeline, applied recursively) supplies it.
 */
import { BOOL_OPS, type OpTable } from './ops.js'
import type { TargetUnf } from './reverse.js'
import { fresh, freeVars, substitute, uniquify, v, type Term } from './term.js'
import { cotangentType, R, type Type } from './types.js'
import { after, constructArgs, type Prim, type Slot } from './unf.js'

/**
 * The vector–Jacobian product of a body: a lambda-free term over the slots of `ctx` and the
 * variables of `seed` that evaluates to ⟨value, ⟨cotangent of each slot of ctx⟩⟩.
 */
export type VjpOf = (body: Term, ctx: Slot[], seed: Term) => Term

const tup = (...items: Term[]): Term => ({ k: 'tuple', items })
const pi = (index: number, of: Term): Term => ({ k: 'proj', index, of })
const zeroOf = (s: Slot): Term => zero(s.type, v(s.name))

/** The zero cotangent of a value of type `t` (`like` gives an array zero its shape). */
export function zero(t: Type, like?: Term): Term {
  const ct = cotangentType(t)
  if (ct.kind === 'R') return { k: 'const', value: 0 }
  if (ct.kind === 'tuple' && t.kind === 'tuple')
    return tup(...t.items.map((it, i) => zero(it, like ? pi(i, like) : undefined)))
  return like ? { k: 'zero', type: ct, like } : { k: 'zero', type: ct }
}

/** `a +̂ b` at type t (`+` on reals). */
export function plus(a: Term, b: Term, t: Type): Term {
  if (t.kind === 'R') return { k: 'op', op: '+', args: [a, b] }
  if (t.kind === 'B') return tup()
  return { k: 'add', a, b }
}

/** The transpose Jacobian of one primitive: extra bindings, then the cotangents of its input context. */
interface Transposed {
  bindings: Array<[string, Term]>
  cots: Term[]
}

/** UNF⁻¹ of the image of a program under D⃖_ρ, seeded with `seed` (the output cotangent). */
export function fromUnf(t: TargetUnf, seed: Term, ops: OpTable, vjp: VjpOf): Term {
  const { input, output } = t.source
  // primal lets, then continuation lets, innermost last
  const lets: Array<[string, Term]> = []
  let Y = fresh('Y')
  {
    const ys = input.map(() => fresh('y'))
    lets.push([Y, { k: 'lam', params: ys, body: tup(...ys.map(v)) }]) // Y₀ = Id_Γ
  }
  for (const step of t.steps) {
    const pr = step.primal
    const primal = primalOf(pr, ops)
    if (primal && 'out' in pr) lets.push([pr.out.name, primal])
    const outCtx = after(pr)
    const ys = outCtx.map(() => fresh('y'))
    const tr = transpose(pr, ys.map(v), ops, vjp)
    const Yk = fresh('Y')
    const body = tr.bindings.reduceRight<Term>((b, [n, e]) => ({ k: 'let', name: n, value: e, body: b }), {
      k: 'app',
      fn: v(Y),
      args: tr.cots,
    })
    lets.push([Yk, { k: 'lam', params: ys, body }])
    Y = Yk
  }
  const result = output[output.length - 1]!
  const start = [...output.slice(0, -1).map(zeroOf), seed]
  const end = tup(v(result.name), { k: 'app', fn: v(Y), args: start })
  return lets.reduceRight<Term>((b, [n, e]) => ({ k: 'let', name: n, value: e, body: b }), end)
}

/** UNF⁻¹ of a primal primitive: the term of its new slot (none for pair/proj, which only rename). */
function primalOf(pr: Prim, ops: OpTable): Term | undefined {
  const n = pr.ctx.length
  const arg = (i: number) => v(pr.ctx[i]!.name)
  switch (pr.p) {
    case 'var':
      return arg(pr.index)
    case 'const':
      return typeof pr.value === 'boolean' ? { k: 'bool', value: pr.value } : { k: 'const', value: pr.value }
    case 'op':
      return { k: 'op', op: pr.op, args: pr.ctx.slice(n - pr.inputs).map((s) => v(s.name)) }
    case 'pi':
      return pi(pr.index, arg(n - 1))
    case 'pair':
      return tup(...pr.ctx.slice(n - pr.inputs).map((s) => v(s.name)))
    case 'proj':
      return undefined
    case 'construct': {
      const args = pr.ctx.slice(n - pr.inputs).map((s) => v(s.name))
      const x = pr.term
      switch (x.k) {
        case 'map':
          return { ...x, arrays: args }
        case 'reduce':
          return { ...x, array: args[0]! }
        case 'fold':
        case 'scanl':
        case 'scanr':
          return { ...x, init: args[0]!, array: args[1]! }
        case 'shift1L':
        case 'shift1R':
          return { ...x, array: args[0]! }
        case 'prefix':
          return { ...x, array: args[0]!, len: args[1]! }
        case 'if':
          return { ...x, cond: args[0]! }
      }
    }
  }
  void ops
}

/** Jᵀ of a primitive (Fig. 10), given the cotangents `ys` of the context after it. */
function transpose(pr: Prim, ys: Term[], ops: OpTable, vjp: VjpOf): Transposed {
  const ctx = pr.ctx
  const n = ctx.length
  const keep = (cots: Term[]): Transposed => ({ bindings: [], cots })
  switch (pr.p) {
    case 'var': {
      const cots = ys.slice(0, n)
      cots[pr.index] = plus(cots[pr.index]!, ys[n]!, ctx[pr.index]!.type)
      return keep(cots)
    }
    case 'const':
      return keep(ys.slice(0, n))
    case 'op': {
      const cots = ys.slice(0, n)
      if (BOOL_OPS.has(pr.op)) return keep(cots)
      const o = ops.get(pr.op)
      if (!o.partials) return keep(cots) // comparisons: non-smooth, no gradient
      const args = ctx.slice(n - pr.inputs).map((s) => v(s.name))
      const ds = o.partials(args, v(pr.out.name))
      ds.forEach((d, j) => {
        const i = n - pr.inputs + j
        cots[i] = plus(cots[i]!, { k: 'op', op: '*', args: [d, ys[n]!] }, R)
      })
      return keep(cots)
    }
    case 'pi': {
      const cots = ys.slice(0, n)
      const pairSlot = ctx[n - 1]!
      const items = (pairSlot.type as { items: Type[] }).items
      const contribution = tup(...items.map((it, i) => (i === pr.index ? ys[n]! : zero(it, pi(i, v(pairSlot.name))))))
      cots[n - 1] = plus(cots[n - 1]!, contribution, pairSlot.type)
      return keep(cots)
    }
    case 'pair': {
      const k = pr.inputs
      const cots = ys.slice(0, n - k)
      for (let i = 0; i < k; i++) cots.push(pi(i, ys[n - k]!))
      return keep(cots)
    }
    case 'proj': {
      const dropped = ctx.slice(pr.keep, pr.keep + pr.drop).map(zeroOf)
      return keep([...ys.slice(0, pr.keep), ...dropped, ...ys.slice(pr.keep)])
    }
    case 'construct':
      return transposeConstruct(pr, ys, vjp)
  }
}

function transposeConstruct(pr: Extract<Prim, { p: 'construct' }>, ys: Term[], vjp: VjpOf): Transposed {
  const ctx = pr.ctx
  const n = ctx.length
  const slotOf = new Map(ctx.map((s, i) => [s.name, i]))
  const inputIdx = (j: number) => n - pr.inputs + j
  const input = (j: number) => ctx[inputIdx(j)]!
  const Z = ys[n]!
  const cots = ys.slice(0, n)
  const bindings: Array<[string, Term]> = []
  const bind = (base: string, t: Term): Term => {
    const name = fresh(base)
    bindings.push([name, uniquify(t)])
    return v(name)
  }
  const addTo = (i: number, t: Term) => {
    cots[i] = plus(cots[i]!, t, ctx[i]!.type)
  }
  // the context slots a body reads (its free variables), in context order
  const freeSlots = (...bodies: Term[]): Slot[] => {
    const fv = new Set<string>()
    for (const b of bodies) freeVars(b, fv)
    return ctx.filter((s) => fv.has(s.name))
  }
  const x = pr.term
  const elemType = (s: Slot): Type => (s.type as { elem: Type }).elem
  switch (x.k) {
    case 'map': {
      const F = freeSlots(x.body).filter((s) => !x.params.includes(s.name))
      const params: Slot[] = x.params.map((p, j) => ({ name: p, type: elemType(input(j)) }))
      const z = fresh('z')
      const r = fresh('r')
      const body: Term = {
        k: 'let',
        name: r,
        value: vjp(x.body, [...F, ...params], v(z)),
        // the outputs: the cotangents of the elements, and last the body's value (the primal
        // element, which partial evaluation may take from here instead of computing it twice)
        body: tup(
          tup(),
          tup(...F.map((_, j) => pi(j, pi(1, v(r))))),
          tup(...params.map((_, j) => pi(F.length + j, pi(1, v(r)))), pi(0, v(r))),
        ),
      }
      const G = bind('G', {
        k: 'mapAccum',
        dir: 'none',
        carry: fresh('u'),
        params: [...x.params, z],
        body,
        carryInit: tup(),
        primal: pr.out.name,
        sumInit: tup(...F.map((s) => cots[slotOf.get(s.name)!]!)),
        arrays: [...x.arrays.map((_, j) => v(input(j).name)), Z],
      })
      F.forEach((s, j) => {
        cots[slotOf.get(s.name)!] = pi(j, pi(1, G))
      })
      x.arrays.forEach((_, j) => addTo(inputIdx(j), pi(j, pi(2, G))))
      return { bindings, cots }
    }
    case 'reduce': {
      // the paper's rule (Fig. 5/10): partials by scans, no per-element continuation
      const A = v(input(0).name)
      const acc: Slot = { name: x.acc, type: R },
        elem: Slot = { name: x.elem, type: R }
      const partial = (which: 0 | 1): Term => {
        const [a, b] = [fresh('a'), fresh('b')]
        const d = substitute(
          vjp(x.body, [acc, elem], { k: 'const', value: 1 }),
          new Map([
            [x.acc, v(a)],
            [x.elem, v(b)],
          ]),
        )
        return { k: 'map', params: [a, b], body: pi(which, pi(1, d)), arrays: [A0, A] }
      }
      const A0 = bind('A0', {
        k: 'shift1R',
        array: { k: 'scanl', acc: x.acc, elem: x.elem, body: x.body, init: x.init, array: A },
      })
      // A1: ∂f/∂acc per element; A3[j] = Π_{i>j} A1[i], the suffix products after j. The paper
      // writes A3 = scanr (·) 1 (shift1L A1), which is undefined on an empty A (no element to
      // drop); shift1L (scanr (·) 1 A1) is the same array for |A| ≥ 1 and empty for |A| = 0
      // (a scan of n elements has n + 1 states, so the shift is always defined)
      const A1 = bind('A1', partial(0))
      const A2 = bind('A2', partial(1))
      const [u, w] = [fresh('u'), fresh('w')]
      const A3 = bind('A3', {
        k: 'shift1L',
        array: {
          k: 'scanr',
          acc: u,
          elem: w,
          body: { k: 'op', op: '*', args: [v(u), v(w)] },
          init: { k: 'const', value: 1 },
          array: A1,
        },
      })
      const [p, q] = [fresh('p'), fresh('q')]
      addTo(inputIdx(0), {
        k: 'map',
        params: [p, q],
        body: { k: 'op', op: '*', args: [{ k: 'op', op: '*', args: [v(p), v(q)] }, Z] },
        arrays: [A2, A3],
      })
      return { bindings, cots }
    }
    case 'fold':
    case 'scanl':
    case 'scanr': {
      const F = freeSlots(x.body).filter((s) => s.name !== x.acc && s.name !== x.elem)
      const accT = input(0).type
      const acc: Slot = { name: x.acc, type: accT },
        elem: Slot = { name: x.elem, type: elemType(input(1)) }
      const initV = v(input(0).name),
        A = v(input(1).name)
      const c = fresh('c'),
        r = fresh('r'),
        zs = fresh('zs')
      const withZ = x.k !== 'fold'
      const carryOut = pi(F.length, pi(1, v(r)))
      const body: Term = {
        k: 'let',
        name: r,
        value: vjp(x.body, [...F, acc, elem], v(c)),
        body: tup(
          withZ ? plus(carryOut, v(zs), accT) : carryOut,
          tup(...F.map((_, j) => pi(j, pi(1, v(r))))),
          tup(pi(F.length + 1, pi(1, v(r)))),
        ),
      }
      const states =
        x.k === 'fold'
          ? bind('S', { k: 'scanl', acc: x.acc, elem: x.elem, body: x.body, init: initV, array: A })
          : v(pr.out.name)
      const left = x.k === 'scanr'
      const shifted = (t: Term): Term => ({ k: left ? 'shift1L' : 'shift1R', array: t })
      const G = bind('G', {
        k: 'mapAccum',
        dir: left ? 'L' : 'R',
        carry: c,
        ...(x.k === 'fold' ? { linear: true } : {}),
        params: withZ ? [x.acc, x.elem, zs] : [x.acc, x.elem],
        body,
        carryInit: x.k === 'fold' ? Z : { k: left ? 'first' : 'last', array: Z },
        sumInit: tup(...F.map((s) => cots[slotOf.get(s.name)!]!)),
        arrays: withZ ? [shifted(states), A, shifted(Z)] : [shifted(states), A],
      })
      F.forEach((s, j) => {
        cots[slotOf.get(s.name)!] = pi(j, pi(1, G))
      })
      addTo(inputIdx(0), pi(0, G))
      addTo(inputIdx(1), pi(0, pi(2, G)))
      return { bindings, cots }
    }
    case 'shift1L':
    case 'shift1R':
      addTo(inputIdx(0), { k: x.k === 'shift1L' ? 'pad1L' : 'pad1R', array: Z })
      return { bindings, cots }
    case 'prefix':
      // Jᵀ of a prefix: the cotangent followed by zeros; the length-giving array gets none
      addTo(inputIdx(0), { k: 'padTo', array: Z, len: v(input(0).name) })
      return { bindings, cots }
    case 'if': {
      // §7.2: one linear use of the continuation; the branch taken gives the cotangents
      const F = freeSlots(x.then, x.else)
      const branch = (e: Term) => pi(1, vjp(e, F, Z))
      const r = bind('r', { k: 'if', cond: v(input(0).name), then: branch(x.then), else: branch(x.else) })
      F.forEach((s, j) => addTo(slotOf.get(s.name)!, pi(j, r)))
      return { bindings, cots }
    }
  }
  void constructArgs
}
