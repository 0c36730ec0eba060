/**
 * The reference interpreter of source and target terms, with the cost model of seed 004 §5.2
 * (Fig. 11): every evaluation counts MOVES, ADDS, MULTS and NLOPS. It is the oracle the code
 * generator is tested against, and the instrument that checks the cheap-gradient bound.
 */
import { UnfError } from './errors.js'
import { BOOL_OPS, type OpTable } from './ops.js'
import type { Term } from './term.js'
import type { Type } from './types.js'

/** A run-time value: a real, a boolean, a tuple (JS array), an array (`ArrayValue`) or a closure. */
export type Value = number | boolean | Value[] | ArrayValue | Closure

/** An array value (distinct from a tuple). */
export class ArrayValue {
  constructor(readonly items: Value[]) {}
}

/** A zero array whose shape is not known: the unit of `+̂`, taking the shape of what is added to it. */
export const ZERO: Value = new ArrayValue([])

/** A closure of the target language. */
export class Closure {
  constructor(
    readonly params: string[],
    readonly body: Term,
    readonly env: Env,
  ) {}
}

type Env = ReadonlyMap<string, Value>

/** The cost of an evaluation: (MOVES, ADDS, MULTS, NLOPS), Fig. 11. */
export interface Cost {
  moves: number
  adds: number
  mults: number
  nlops: number
}

/** The total of a cost vector (the four measures weighted equally). */
export const totalCost = (c: Cost): number => c.moves + c.adds + c.mults + c.nlops

/** Wraps a host value: number arrays become arrays of reals, nested number arrays nested arrays. */
export function fromHost(x: unknown): Value {
  if (typeof x === 'number' || typeof x === 'boolean') return x
  if (x instanceof Float64Array || x instanceof Float32Array) return new ArrayValue(Array.from(x))
  if (Array.isArray(x)) return x.map(fromHost)
  if (typeof x === 'object' && x !== null && 'items' in x) return x as ArrayValue
  throw new UnfError('unf/type', `cannot pass ${String(x)} to a UNF program`)
}

/** Converts a value to a host value: arrays of reals to Float64Array, tuples to JS arrays. */
export function toHost(x: Value): unknown {
  if (x instanceof ArrayValue) {
    return x.items.every((i) => typeof i === 'number') ? Float64Array.from(x.items as number[]) : x.items.map(toHost)
  }
  if (Array.isArray(x)) return x.map(toHost)
  return x
}

/** Evaluates a term in an environment; `cost` (when given) accumulates the Fig. 11 cost. */
export function evaluate(t: Term, env: ReadonlyMap<string, Value>, ops: OpTable, cost?: Cost): Value {
  const k = cost ?? { moves: 0, adds: 0, mults: 0, nlops: 0 }
  const arr = (x: Value, what: string): Value[] => {
    if (!(x instanceof ArrayValue)) throw new UnfError('unf/type', `${what} expects an array`)
    return x.items
  }
  const sameLength = (as: Value[][]) => {
    const n = as[0]!.length
    if (as.some((a) => a.length !== n))
      throw new UnfError('unf/shape', `arrays of lengths ${as.map((a) => a.length).join(', ')} mapped together`)
    return n
  }
  const go = (x: Term, e: Env): Value => {
    switch (x.k) {
      case 'const':
      case 'bool':
        k.moves++
        return x.value
      case 'var': {
        k.moves++
        const val = e.get(x.name)
        if (val === undefined) throw new UnfError('unf/unbound', `unbound variable \`${x.name}\` at run time`)
        return val
      }
      case 'let':
        k.moves++
        return go(x.body, bindAll(e, [[x.name, go(x.value, e)]]))
      case 'tuple':
        return x.items.map((i) => go(i, e))
      case 'proj': {
        k.moves++
        return (go(x.of, e) as Value[])[x.index]!
      }
      case 'op': {
        const args = x.args.map((a) => go(a, e))
        const b = BOOL_OPS.get(x.op)
        k.moves += args.length + 1
        if (b) return (b.evaluate as (...a: boolean[]) => boolean)(...(args as boolean[]))
        const o = ops.get(x.op)
        if (o.cost === 'add' || o.cost === 'compare') k.adds++
        else if (o.cost === 'mult') k.mults++
        else k.nlops++
        return o.evaluate(...(args as number[]))
      }
      case 'map': {
        const as = x.arrays.map((a) => arr(go(a, e), 'map'))
        const n = sameLength(as)
        const out: Value[] = new Array(n)
        for (let j = 0; j < n; j++) {
          k.moves += 2
          out[j] = go(
            x.body,
            bindAll(
              e,
              x.params.map((p, i) => [p, as[i]![j]!]),
            ),
          )
        }
        return new ArrayValue(out)
      }
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr': {
        let acc = go(x.init, e)
        const a = arr(go(x.array, e), x.k)
        const n = a.length
        const per = x.k === 'scanl' || x.k === 'scanr' ? 3 : 2
        const states: Value[] = new Array(n + 1)
        if (x.k === 'scanr') {
          states[n] = acc
          for (let j = n - 1; j >= 0; j--) {
            k.moves += per
            acc = go(
              x.body,
              bindAll(e, [
                [x.acc, acc],
                [x.elem, a[j]!],
              ]),
            )
            states[j] = acc
          }
        } else {
          states[0] = acc
          for (let j = 0; j < n; j++) {
            k.moves += per
            acc = go(
              x.body,
              bindAll(e, [
                [x.acc, acc],
                [x.elem, a[j]!],
              ]),
            )
            states[j + 1] = acc
          }
        }
        return x.k === 'scanl' || x.k === 'scanr' ? new ArrayValue(states) : acc
      }
      case 'shift1L':
      case 'shift1R': {
        const a = arr(go(x.array, e), x.k)
        if (a.length === 0) throw new UnfError('unf/shape', `${x.k} of an empty array`)
        k.moves += a.length
        return new ArrayValue(x.k === 'shift1L' ? a.slice(1) : a.slice(0, -1))
      }
      case 'prefix': {
        const a = arr(go(x.array, e), x.k)
        const n = arr(go(x.len, e), x.k).length
        if (n > a.length) throw new UnfError('unf/shape', `prefix of length ${n} of an array of length ${a.length}`)
        k.moves += n
        return new ArrayValue(a.slice(0, n))
      }
      case 'padTo': {
        const cv = go(x.array, e)
        const a = arr(go(x.len, e), x.k)
        if (cv === ZERO) return zeroLike(new ArrayValue(a), undefined, k)
        const c = arr(cv, x.k)
        if (c.length > a.length)
          throw new UnfError('unf/shape', `padTo of an array of length ${c.length} to length ${a.length}`)
        k.moves += a.length
        return new ArrayValue([...c, ...a.slice(c.length).map((y) => zeroLike(y, undefined, k))])
      }
      case 'if': {
        k.moves++
        return go(x.cond, e) ? go(x.then, e) : go(x.else, e)
      }
      case 'lam':
        k.moves++
        return new Closure(x.params, x.body, e)
      case 'app': {
        const f = go(x.fn, e)
        if (!(f instanceof Closure)) throw new UnfError('unf/type', 'application of a non-function')
        const args = x.args.map((a) => go(a, e))
        k.moves += args.length
        return go(
          f.body,
          bindAll(
            f.env,
            f.params.map((p, i) => [p, args[i]!]),
          ),
        )
      }
      case 'zero': {
        if (!x.like) return ZERO // a zero of unknown shape: the unit of +̂
        const like = go(x.like, e)
        if (x.type.kind === 'array' && x.type.elem.kind === 'R' && like instanceof ArrayValue) {
          k.moves += like.items.length
          return new ArrayValue(like.items.map(() => 0))
        }
        return zeroLike(like, x.type, k)
      }
      case 'add':
        return addValues(go(x.a, e), go(x.b, e), k)
      case 'pad1L':
      case 'pad1R': {
        const a = arr(go(x.array, e), x.k)
        k.moves += a.length + 1
        const z = a.length > 0 ? zeroLike(a[0]!, undefined, k) : 0
        return new ArrayValue(x.k === 'pad1L' ? [z, ...a] : [...a, z])
      }
      case 'first':
      case 'last': {
        const a = arr(go(x.array, e), x.k)
        if (a.length === 0) throw new UnfError('unf/shape', `${x.k} of an empty array`)
        k.moves++
        return x.k === 'first' ? a[0]! : a[a.length - 1]!
      }
      case 'mapAccum': {
        let carry = go(x.carryInit, e)
        let sum = go(x.sumInit, e)
        const as = x.arrays.map((a) => arr(go(a, e), 'mapAccum'))
        const n = sameLength(as)
        const outs: Value[][] = []
        const order =
          x.dir === 'R' ? Array.from({ length: n }, (_, j) => n - 1 - j) : Array.from({ length: n }, (_, j) => j)
        for (const j of order) {
          k.moves += 3
          const r = go(
            x.body,
            bindAll(e, [[x.carry, carry], ...x.params.map((p, i): [string, Value] => [p, as[i]![j]!])]),
          ) as Value[]
          carry = r[0]!
          sum = addValues(sum, r[1]!, k)
          const o = r[2] as Value[]
          o.forEach((val, i) => {
            ;(outs[i] ??= new Array(n))[j] = val
          })
        }
        // the number of outputs: from the body's result tuple (under its lets), which an empty
        // sweep never evaluates
        let result: Term = x.body
        while (result.k === 'let') result = result.body
        const m = result.k === 'tuple' && result.items[2]!.k === 'tuple' ? result.items[2]!.items.length : outs.length
        return [carry, sum, Array.from({ length: m }, (_, i) => new ArrayValue(outs[i] ?? []))]
      }
    }
  }
  return go(t, env)
}

function bindAll(e: Env, add: Array<[string, Value]>): Env {
  const m = new Map(e)
  for (const [n, val] of add) m.set(n, val)
  return m
}

/** The zero value shaped like `x`. */
function zeroLike(x: Value, _t: Type | undefined, k: Cost): Value {
  if (typeof x === 'number') {
    k.moves++
    return 0
  }
  if (typeof x === 'boolean') return []
  if (x instanceof ArrayValue) return new ArrayValue(x.items.map((i) => zeroLike(i, undefined, k)))
  if (Array.isArray(x)) return x.map((i) => zeroLike(i, undefined, k))
  throw new UnfError('unf/internal', 'zero of a closure')
}

/** `a +̂ b` on values of one ground type. */
export function addValues(a: Value, b: Value, k: Cost): Value {
  if (a === ZERO) return b
  if (b === ZERO) return a
  if (typeof a === 'number' && typeof b === 'number') {
    k.moves += 3
    k.adds++
    return a + b
  }
  if (a instanceof ArrayValue && b instanceof ArrayValue) {
    if (a.items.length !== b.items.length)
      throw new UnfError('unf/shape', `adding arrays of lengths ${a.items.length} and ${b.items.length}`)
    return new ArrayValue(a.items.map((x, i) => addValues(x, b.items[i]!, k)))
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.map((x, i) => addValues(x, b[i]!, k))
  throw new UnfError('unf/internal', 'adding values of different types')
}
