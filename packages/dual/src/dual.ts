/**
 * The scalar API a dual-engine function is written against: `d.add(d.mul(x, y), d.sin(x))`.
 * JS has no operator overloading, and an object per scalar would allocate on every operation, so
 * scalars are handles (`Real`) and operations are methods of the engine object `d`. Each method
 * computes the value and records the local partial derivatives as edges; nothing else happens until
 * the reverse sweep.
 *
 * The elementary functions' partials are the ones `@tenet/ad` uses for the standard primitives
 * (checked against the registry's `partials` in `dual.test.ts`); any other pure primitive of a
 * Tenet registry is applied with `d.apply(name, …)` and differentiated by its registered `partials`.
 */
import { createRegistry, type Registry } from '@tenet/ir'
import { DualError } from './errors.js'
import { HANDLE_BASE as B, Tape, type DualRule, type Real } from './tape.js'

let defaultRegistry: Registry | undefined

/** The engine object passed to a dual-engine function as `d`. */
export class Dual extends Tape {
  /** The registry `apply` reads primitives from (a standard one unless an API call was given one). */
  registry: Registry | undefined

  /** The value of a handle. */
  value(x: Real): number {
    return this.val[x - B]!
  }

  /** A constant: a node without edges (its derivative is not collected). */
  constant(c: number): Real {
    return this.leaf(c)
  }

  /** x + y */
  add(x: Real, y: Real): Real {
    const a = x - B, b = y - B
    return this.binary(this.val[a]! + this.val[b]!, a, 1, b, 1)
  }

  /** x − y */
  sub(x: Real, y: Real): Real {
    const a = x - B, b = y - B
    return this.binary(this.val[a]! - this.val[b]!, a, 1, b, -1)
  }

  /** x · y */
  mul(x: Real, y: Real): Real {
    const a = x - B, b = y - B
    const va = this.val[a]!, vb = this.val[b]!
    return this.binary(va * vb, a, vb, b, va)
  }

  /** x / y */
  div(x: Real, y: Real): Real {
    const a = x - B, b = y - B
    const vb = this.val[b]!
    const q = this.val[a]! / vb
    return this.binary(q, a, 1 / vb, b, -q / vb)
  }

  /** −x */
  neg(x: Real): Real {
    const a = x - B
    return this.unary(-this.val[a]!, a, -1)
  }

  /** c · x for a constant c */
  scale(x: Real, c: number): Real {
    const a = x - B
    return this.unary(c * this.val[a]!, a, c)
  }

  /** x + c for a constant c */
  offset(x: Real, c: number): Real {
    const a = x - B
    return this.unary(this.val[a]! + c, a, 1)
  }

  /** x² */
  square(x: Real): Real {
    const a = x - B
    const v = this.val[a]!
    return this.unary(v * v, a, 2 * v)
  }

  /** 1 / x */
  inv(x: Real): Real {
    const a = x - B
    const r = 1 / this.val[a]!
    return this.unary(r, a, -r * r)
  }

  /** x ** p for a constant exponent p */
  powConst(x: Real, p: number): Real {
    const a = x - B
    const v = this.val[a]!
    return this.unary(Math.pow(v, p), a, p === 0 ? 0 : p * Math.pow(v, p - 1))
  }

  /** x ** p (both differentiable; ∂/∂p is taken as 0 where x ≤ 0, as in the registry's `pow`) */
  pow(x: Real, p: Real): Real {
    const a = x - B, b = p - B
    const vx = this.val[a]!, vp = this.val[b]!
    const v = Math.pow(vx, vp)
    return this.binary(v, a, vp * Math.pow(vx, vp - 1), b, vx > 0 ? v * Math.log(vx) : 0)
  }

  sin(x: Real): Real { const a = x - B, v = this.val[a]!; return this.unary(Math.sin(v), a, Math.cos(v)) }
  cos(x: Real): Real { const a = x - B, v = this.val[a]!; return this.unary(Math.cos(v), a, -Math.sin(v)) }
  tan(x: Real): Real { const a = x - B, t = Math.tan(this.val[a]!); return this.unary(t, a, 1 + t * t) }
  exp(x: Real): Real { const a = x - B, e = Math.exp(this.val[a]!); return this.unary(e, a, e) }
  log(x: Real): Real { const a = x - B, v = this.val[a]!; return this.unary(Math.log(v), a, 1 / v) }
  sqrt(x: Real): Real { const a = x - B, s = Math.sqrt(this.val[a]!); return this.unary(s, a, 0.5 / s) }
  sinh(x: Real): Real { const a = x - B, v = this.val[a]!; return this.unary(Math.sinh(v), a, Math.cosh(v)) }
  cosh(x: Real): Real { const a = x - B, v = this.val[a]!; return this.unary(Math.cosh(v), a, Math.sinh(v)) }
  tanh(x: Real): Real { const a = x - B, t = Math.tanh(this.val[a]!); return this.unary(t, a, 1 - t * t) }
  asin(x: Real): Real { const a = x - B, v = this.val[a]!; return this.unary(Math.asin(v), a, 1 / Math.sqrt(1 - v * v)) }
  acos(x: Real): Real { const a = x - B, v = this.val[a]!; return this.unary(Math.acos(v), a, -1 / Math.sqrt(1 - v * v)) }
  atan(x: Real): Real { const a = x - B, v = this.val[a]!; return this.unary(Math.atan(v), a, 1 / (1 + v * v)) }
  /** |x| (derivative sign(x), 0 at 0) */
  abs(x: Real): Real { const a = x - B, v = this.val[a]!; return this.unary(Math.abs(v), a, v > 0 ? 1 : v < 0 ? -1 : 0) }

  /** atan2(y, x): the angle of the point (x, y) */
  atan2(y: Real, x: Real): Real {
    const a = y - B, b = x - B
    const vy = this.val[a]!, vx = this.val[b]!
    const r = vx * vx + vy * vy
    return this.binary(Math.atan2(vy, vx), a, vx / r, b, -vy / r)
  }

  /** min(x, y) (ties go to x) */
  min(x: Real, y: Real): Real {
    const a = x - B, b = y - B
    const first = this.val[a]! <= this.val[b]!
    return this.binary(first ? this.val[a]! : this.val[b]!, a, first ? 1 : 0, b, first ? 0 : 1)
  }

  /** max(x, y) (ties go to x) */
  max(x: Real, y: Real): Real {
    const a = x - B, b = y - B
    const first = this.val[a]! >= this.val[b]!
    return this.binary(first ? this.val[a]! : this.val[b]!, a, first ? 1 : 0, b, first ? 0 : 1)
  }

  /** Σ xs: one node with n edges (not n − 1 additions). */
  sum(xs: ArrayLike<Real>): Real {
    const n = xs.length
    const s = this.openSpilled(n)
    const st = this.spillT, sp = this.spillP, val = this.val
    let acc = 0
    for (let k = 0; k < n; k++) {
      const a = xs[k]! - B
      acc += val[a]!
      st[s + k] = a
      sp[s + k] = 1
    }
    return this.closeSpilled(acc, s)
  }

  /** Σ xs[k] · ys[k]: one node with 2n edges. */
  dot(xs: ArrayLike<Real>, ys: ArrayLike<Real>): Real {
    const n = xs.length
    if (ys.length !== n) throw new DualError('dual/length', `dot of vectors of lengths ${n} and ${ys.length}`)
    const s = this.openSpilled(2 * n)
    const st = this.spillT, sp = this.spillP, val = this.val
    let acc = 0
    for (let k = 0; k < n; k++) {
      const a = xs[k]! - B, b = ys[k]! - B
      const va = val[a]!, vb = val[b]!
      acc += va * vb
      st[s + 2 * k] = a; sp[s + 2 * k] = vb
      st[s + 2 * k + 1] = b; sp[s + 2 * k + 1] = va
    }
    return this.closeSpilled(acc, s)
  }

  /** Σ cs[k] · xs[k] for constant coefficients: one node with n edges. */
  linear(cs: ArrayLike<number>, xs: ArrayLike<Real>): Real {
    const n = xs.length
    if (cs.length !== n) throw new DualError('dual/length', `linear combination of ${cs.length} coefficients and ${n} values`)
    const s = this.openSpilled(n)
    const st = this.spillT, sp = this.spillP, val = this.val
    let acc = 0
    for (let k = 0; k < n; k++) {
      const a = xs[k]! - B, c = cs[k]!
      acc += c * val[a]!
      st[s + k] = a
      sp[s + k] = c
    }
    return this.closeSpilled(acc, s)
  }

  /**
   * A pure primitive of the Tenet registry (the standard library's or one the user registered), by
   * name, differentiated by the primitive's registered `partials`: register a primitive once and it
   * differentiates in both engines. Allocates what `evaluate`/`partials` allocate; the methods above
   * are the allocation-free path for the standard functions.
   */
  apply(name: string, ...args: Real[]): Real {
    const registry = (this.registry ??= (defaultRegistry ??= createRegistry()))
    const spec = registry.pure(name)
    if (args.length !== spec.arity) throw new DualError('dual/arity', `the primitive \`${name}\` takes ${spec.arity} argument${spec.arity === 1 ? '' : 's'}, got ${args.length}`)
    if (!spec.partials) throw new DualError('dual/no-derivative', `the pure primitive \`${name}\` has no \`partials\`: register it with \`partials\` to differentiate through it`)
    const xs = args.map((x) => this.val[x - B]!)
    const v = spec.evaluate(...xs)
    const ps = spec.partials(...xs)
    const n = args.length
    if (n === 1) return this.unary(v, args[0]! - B, ps[0]!)
    if (n === 2) return this.binary(v, args[0]! - B, ps[0]!, args[1]! - B, ps[1]!)
    const s = this.openSpilled(n)
    for (let k = 0; k < n; k++) { this.spillT[s + k] = args[k]! - B; this.spillP[s + k] = ps[k]! }
    return this.closeSpilled(v, s)
  }

  /**
   * Calls a primitive given by its own rule (see `defineRule`): one node per output, whose reverse
   * step is the rule's pullback. Writes the output handles into `ys` (a new array when absent) and
   * returns it.
   */
  call(rule: DualRule, xs: ArrayLike<Real>, ys: Real[] = new Array<Real>(rule.outputs)): Real[] {
    return this.custom(rule, xs, ys)
  }
}
