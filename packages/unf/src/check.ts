/**
 * The type checker of the source language (Fig. 2 with the §7 extensions), which also infers
 * the types of lambda-free target terms (what partial evaluation leaves for code generation).
 */
import { UnfError } from './errors.js'
import { BOOL_OPS, type OpTable } from './ops.js'
import { freeVars, printTerm, TARGET_ONLY, type Term } from './term.js'
import { arrayType, B, cotangentType, printType, R, sameType, tupleType, type Type } from './types.js'

/** A typing context: variable name → type, in binding order. */
export type Context = ReadonlyArray<readonly [string, Type]>

const fail = (msg: string, t?: Term): never => {
  throw new UnfError('unf/type', t ? `${msg} in \`${short(t)}\`` : msg)
}
const short = (t: Term): string => {
  const s = printTerm(t).replace(/\s+/g, ' ')
  return s.length > 80 ? s.slice(0, 77) + '...' : s
}

/**
 * Type-checks a source term in a context and returns its type. Rejects target-only constructs,
 * unknown variables and operations, and ill-typed uses; `reduce` must have a closed scalar
 * operator and a closed unit (§3.1: use `fold` otherwise).
 */
export function checkSource(t: Term, ctx: Context, ops: OpTable): Type {
  return infer(t, new Map(ctx), ops, true)
}

/** Infers the type of a lambda-free target term (or a source term) in an environment. */
export function inferType(t: Term, env: ReadonlyMap<string, Type>, ops: OpTable): Type {
  return infer(t, env, ops, false)
}

function infer(t: Term, env: ReadonlyMap<string, Type>, ops: OpTable, source: boolean): Type {
  const go = (x: Term, e: ReadonlyMap<string, Type>): Type => {
    if (source && TARGET_ONLY.has(x.k))
      fail(`\`${x.k}\` is a target-language construct, not allowed in a source program`, x)
    switch (x.k) {
      case 'const':
        return R
      case 'bool':
        return B
      case 'var': {
        const ty = e.get(x.name)
        if (!ty) fail(`unknown variable \`${x.name}\` (in scope: ${[...e.keys()].join(', ') || 'none'})`)
        return ty!
      }
      case 'let':
        return go(x.body, extend(e, [[x.name, go(x.value, e)]]))
      case 'tuple':
        return tupleType(...x.items.map((i) => go(i, e)))
      case 'proj': {
        const ty = go(x.of, e)
        if (ty.kind !== 'tuple' || x.index < 0 || x.index >= ty.items.length)
          fail(`π${x.index + 1} of a value of type ${printType(ty)}`, x)
        return (ty as { items: Type[] }).items[x.index]!
      }
      case 'op': {
        const argTypes = x.args.map((a) => go(a, e))
        const b = BOOL_OPS.get(x.op)
        if (b) {
          if (argTypes.length !== b.arity || argTypes.some((a) => a.kind !== 'B'))
            fail(`\`${x.op}\` takes ${b.arity} boolean argument(s)`, x)
          return B
        }
        const o = ops.get(x.op)
        if (argTypes.length !== o.arity) fail(`\`${x.op}\` takes ${o.arity} argument(s), got ${argTypes.length}`, x)
        argTypes.forEach((a, i) => {
          if (a.kind !== 'R') fail(`argument ${i + 1} of \`${x.op}\` must be R, got ${printType(a)}`, x)
        })
        return o.result
      }
      case 'map': {
        if (x.params.length !== x.arrays.length || x.arrays.length === 0) fail('map needs one parameter per array', x)
        const elems = x.arrays.map((a) => elemOf(go(a, e), x))
        return arrayType(
          go(
            x.body,
            extend(
              e,
              x.params.map((p, i) => [p, elems[i]!]),
            ),
          ),
        )
      }
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr': {
        const init = go(x.init, e)
        const elem = elemOf(go(x.array, e), x)
        if (x.k === 'reduce') {
          if (init.kind !== 'R' || elem.kind !== 'R')
            fail('reduce works on arrays of reals with a real unit (use fold otherwise)', x)
          const free = [...freeVars(x.body)].filter((n) => n !== x.acc && n !== x.elem)
          if (free.length > 0) fail(`the operator of reduce must be closed (it reads ${free.join(', ')}): use fold`, x)
          if (source && freeVars(x.init).size > 0) fail('the unit of reduce must be a constant: use fold', x)
        }
        const body = go(
          x.body,
          extend(e, [
            [x.acc, init],
            [x.elem, elem],
          ]),
        )
        if (!sameType(body, init))
          fail(`the operator of ${x.k} returns ${printType(body)} but its accumulator is ${printType(init)}`, x)
        return x.k === 'scanl' || x.k === 'scanr' ? arrayType(init) : init
      }
      case 'shift1L':
      case 'shift1R':
      case 'pad1L':
      case 'pad1R': {
        const a = go(x.array, e)
        elemOf(a, x)
        return a
      }
      case 'first':
      case 'last':
        return elemOf(go(x.array, e), x)
      case 'prefix': {
        // the first |L| elements of A: A's type; L is an array of any element type
        const a = go(x.array, e)
        elemOf(a, x)
        elemOf(go(x.len, e), x)
        return a
      }
      case 'padTo': {
        // C followed by zeros up to |A|: C is an array of the cotangents of A's elements
        const c = go(x.array, e)
        const a = go(x.len, e)
        elemOf(c, x)
        elemOf(a, x)
        if (!sameType(c, cotangentType(a)))
          fail(`padTo of ${printType(c)} to the length of ${printType(a)} (expected ${printType(cotangentType(a))})`, x)
        return c
      }
      case 'if': {
        const cond = go(x.cond, e)
        if (cond.kind !== 'B') fail(`the condition must be B, got ${printType(cond)}`, x)
        const a = go(x.then, e),
          b = go(x.else, e)
        if (!sameType(a, b)) fail(`the branches have types ${printType(a)} and ${printType(b)}`, x)
        return a
      }
      case 'zero':
        return x.type
      case 'add': {
        const a = go(x.a, e),
          b = go(x.b, e)
        if (!sameType(a, b)) fail(`+̂ of ${printType(a)} and ${printType(b)}`, x)
        return a
      }
      case 'mapAccum': {
        const carry = go(x.carryInit, e)
        const elems = x.arrays.map((a) => elemOf(go(a, e), x))
        const body = go(
          x.body,
          extend(e, [[x.carry, carry], ...x.params.map((p, i): [string, Type] => [p, elems[i]!])]),
        )
        if (body.kind !== 'tuple' || body.items.length !== 3 || body.items[2]!.kind !== 'tuple')
          fail('the body of mapAccum returns ⟨carry, sum, ⟨outputs⟩⟩', x)
        const [, s, outs] = (body as { items: Type[] }).items
        return tupleType(carry, s!, tupleType(...(outs as { items: Type[] }).items.map((o) => arrayType(o))))
      }
      case 'lam':
      case 'app':
        return fail('lambdas are removed by partial evaluation before typing', x)
    }
  }
  return go(t, env)
}

function elemOf(t: Type, x: Term): Type {
  if (t.kind !== 'array') fail(`expected an array, got ${printType(t)}`, x)
  return (t as { elem: Type }).elem
}

function extend(e: ReadonlyMap<string, Type>, add: Array<[string, Type]>): Map<string, Type> {
  const m = new Map(e)
  for (const [n, ty] of add) m.set(n, ty)
  return m
}
