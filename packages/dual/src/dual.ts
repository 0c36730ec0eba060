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

  /**
   * The sign of a handle's value: -1, 0 or 1 (NaN for NaN). Use it (or `compare`) rather than
   * `value` for branches: a staged gradient (`grad(f, { stage: true })`) records each sign it
   * returned as a guard and re-traces when a later call's sign differs, whereas a `value` read
   * makes the function unstageable.
   */
  sign(x: Real): number {
    return Math.sign(this.val[x - B]!)
  }

  /** Compares two handles' values: -1 (x < y), 0 (equal), 1 (x > y), NaN (unordered). A guard, like `sign`. */
  compare(x: Real, y: Real): number {
    const a = this.val[x - B]!,
      b = this.val[y - B]!
    return a < b ? -1 : a > b ? 1 : a === b ? 0 : NaN
  }

  /** A constant: a node without edges (its derivative is not collected). */
  constant(c: number): Real {
    return this.leaf(c)
  }

  /** x + y */
  add(x: Real, y: Real): Real {
    const a = x - B,
      b = y - B,
      i = this.next(),
      val = this.val
    val[i] = val[a]! + val[b]!
    return this.edges2(i, a, 1, b, 1)
  }

  /** x − y */
  sub(x: Real, y: Real): Real {
    const a = x - B,
      b = y - B,
      i = this.next(),
      val = this.val
    val[i] = val[a]! - val[b]!
    return this.edges2(i, a, 1, b, -1)
  }

  /** x · y */
  mul(x: Real, y: Real): Real {
    const a = x - B,
      b = y - B,
      i = this.next(),
      val = this.val
    const va = val[a]!,
      vb = val[b]!
    val[i] = va * vb
    this.t0[i] = a
    this.p0[i] = vb
    this.t1[i] = b
    this.p1[i] = va
    return (i + B) as Real
  }

  /** x / y */
  div(x: Real, y: Real): Real {
    const a = x - B,
      b = y - B,
      i = this.next(),
      val = this.val
    const vb = val[b]!,
      q = val[a]! / vb
    val[i] = q
    this.t0[i] = a
    this.p0[i] = 1 / vb
    this.t1[i] = b
    this.p1[i] = -q / vb
    return (i + B) as Real
  }

  /** −x */
  neg(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val
    val[i] = -val[a]!
    return this.edge1(i, a, -1)
  }

  /** c · x for a constant c */
  scale(x: Real, c: number): Real {
    const a = x - B,
      i = this.next(),
      val = this.val
    val[i] = c * val[a]!
    this.t0[i] = a
    this.p0[i] = c
    this.t1[i] = -1
    return (i + B) as Real
  }

  /** x + c for a constant c */
  offset(x: Real, c: number): Real {
    const a = x - B,
      i = this.next(),
      val = this.val
    val[i] = val[a]! + c
    return this.edge1(i, a, 1)
  }

  /** x + c·y for a constant c: one node (an axpy), not a scaling and an addition */
  addScaled(x: Real, y: Real, c: number): Real {
    const a = x - B,
      b = y - B,
      i = this.next(),
      val = this.val
    val[i] = val[a]! + c * val[b]!
    this.t0[i] = a
    this.p0[i] = 1
    this.t1[i] = b
    this.p1[i] = c
    return (i + B) as Real
  }

  /** a·x + b·y for constants a and b: one node */
  combine(a: number, x: Real, b: number, y: Real): Real {
    const ia = x - B,
      ib = y - B,
      i = this.next(),
      val = this.val
    val[i] = a * val[ia]! + b * val[ib]!
    this.t0[i] = ia
    this.p0[i] = a
    this.t1[i] = ib
    this.p1[i] = b
    return (i + B) as Real
  }

  /** x² */
  square(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val
    const v = val[a]!
    val[i] = v * v
    this.t0[i] = a
    this.p0[i] = 2 * v
    this.t1[i] = -1
    return (i + B) as Real
  }

  /** 1 / x */
  inv(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val
    const r = 1 / val[a]!
    val[i] = r
    this.t0[i] = a
    this.p0[i] = -r * r
    this.t1[i] = -1
    return (i + B) as Real
  }

  /** x ** p for a constant exponent p */
  powConst(x: Real, p: number): Real {
    const a = x - B,
      i = this.next(),
      val = this.val
    const v = val[a]!
    val[i] = Math.pow(v, p)
    this.t0[i] = a
    this.p0[i] = p === 0 ? 0 : p * Math.pow(v, p - 1)
    this.t1[i] = -1
    return (i + B) as Real
  }

  /** x ** p (both differentiable; ∂/∂p is taken as 0 where x ≤ 0, as in the registry's `pow`) */
  pow(x: Real, p: Real): Real {
    const a = x - B,
      b = p - B,
      i = this.next(),
      val = this.val
    const vx = val[a]!,
      vp = val[b]!
    const v = Math.pow(vx, vp)
    val[i] = v
    this.t0[i] = a
    this.p0[i] = vp * Math.pow(vx, vp - 1)
    this.t1[i] = b
    this.p1[i] = vx > 0 ? v * Math.log(vx) : 0
    return (i + B) as Real
  }

  /** sin x */
  sin(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      v = val[a]!
    val[i] = Math.sin(v)
    this.t0[i] = a
    this.p0[i] = Math.cos(v)
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** cos x */
  cos(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      v = val[a]!
    val[i] = Math.cos(v)
    this.t0[i] = a
    this.p0[i] = -Math.sin(v)
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** tan x */
  tan(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      t = Math.tan(val[a]!)
    val[i] = t
    this.t0[i] = a
    this.p0[i] = 1 + t * t
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** eˣ */
  exp(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      e = Math.exp(val[a]!)
    val[i] = e
    this.t0[i] = a
    this.p0[i] = e
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** ln x */
  log(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      v = val[a]!
    val[i] = Math.log(v)
    this.t0[i] = a
    this.p0[i] = 1 / v
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** √x */
  sqrt(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      r = Math.sqrt(val[a]!)
    val[i] = r
    this.t0[i] = a
    this.p0[i] = 0.5 / r
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** sinh x */
  sinh(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      v = val[a]!
    val[i] = Math.sinh(v)
    this.t0[i] = a
    this.p0[i] = Math.cosh(v)
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** cosh x */
  cosh(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      v = val[a]!
    val[i] = Math.cosh(v)
    this.t0[i] = a
    this.p0[i] = Math.sinh(v)
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** tanh x */
  tanh(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      t = Math.tanh(val[a]!)
    val[i] = t
    this.t0[i] = a
    this.p0[i] = 1 - t * t
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** arcsin x */
  asin(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      v = val[a]!
    val[i] = Math.asin(v)
    this.t0[i] = a
    this.p0[i] = 1 / Math.sqrt(1 - v * v)
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** arccos x */
  acos(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      v = val[a]!
    val[i] = Math.acos(v)
    this.t0[i] = a
    this.p0[i] = -1 / Math.sqrt(1 - v * v)
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** arctan x */
  atan(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      v = val[a]!
    val[i] = Math.atan(v)
    this.t0[i] = a
    this.p0[i] = 1 / (1 + v * v)
    this.t1[i] = -1
    return (i + B) as Real
  }
  /** |x| (derivative sign(x), 0 at 0) */
  abs(x: Real): Real {
    const a = x - B,
      i = this.next(),
      val = this.val,
      v = val[a]!
    val[i] = Math.abs(v)
    this.t0[i] = a
    this.p0[i] = v > 0 ? 1 : v < 0 ? -1 : 0
    this.t1[i] = -1
    return (i + B) as Real
  }

  /** atan2(y, x): the angle of the point (x, y) */
  atan2(y: Real, x: Real): Real {
    const a = y - B,
      b = x - B,
      i = this.next(),
      val = this.val
    const vy = val[a]!,
      vx = val[b]!
    const r = vx * vx + vy * vy
    val[i] = Math.atan2(vy, vx)
    this.t0[i] = a
    this.p0[i] = vx / r
    this.t1[i] = b
    this.p1[i] = -vy / r
    return (i + B) as Real
  }

  /** min(x, y) (ties go to x) */
  min(x: Real, y: Real): Real {
    const a = x - B,
      b = y - B,
      i = this.next(),
      val = this.val
    const first = val[a]! <= val[b]!
    val[i] = first ? val[a]! : val[b]!
    return this.edges2(i, a, first ? 1 : 0, b, first ? 0 : 1)
  }

  /** max(x, y) (ties go to x) */
  max(x: Real, y: Real): Real {
    const a = x - B,
      b = y - B,
      i = this.next(),
      val = this.val
    const first = val[a]! >= val[b]!
    val[i] = first ? val[a]! : val[b]!
    return this.edges2(i, a, first ? 1 : 0, b, first ? 0 : 1)
  }

  /** Σ xs: one node with n edges (not n − 1 additions). */
  sum(xs: ArrayLike<Real>): Real {
    const n = xs.length
    const s = this.openSpilled(n)
    const st = this.spillT,
      sp = this.spillP,
      val = this.val
    let acc = 0
    for (let k = 0; k < n; k++) {
      const a = xs[k]! - B
      acc += val[a]!
      st[s + k] = a
      sp[s + k] = 1
    }
    return this.closeSpilled(acc, s)
  }

  /**
   * Σ xs[xStart + k] · ys[yStart + k] for k < n (default: all of `xs` from `xStart`): one node with
   * 2n edges. The offsets let a row of a matrix stored flat be used without copying it.
   */
  dot(xs: ArrayLike<Real>, ys: ArrayLike<Real>, xStart = 0, yStart = 0, n = xs.length - xStart): Real {
    if (xStart < 0 || yStart < 0 || xStart + n > xs.length || yStart + n > ys.length) {
      throw new DualError(
        'dual/length',
        `dot of ${n} elements from ${xStart} and ${yStart} of vectors of lengths ${xs.length} and ${ys.length}`,
      )
    }
    const s = this.openSpilled(2 * n)
    const st = this.spillT,
      sp = this.spillP,
      val = this.val
    let acc = 0
    for (let k = 0; k < n; k++) {
      const a = xs[xStart + k]! - B,
        b = ys[yStart + k]! - B
      const va = val[a]!,
        vb = val[b]!
      acc += va * vb
      st[s + 2 * k] = a
      sp[s + 2 * k] = vb
      st[s + 2 * k + 1] = b
      sp[s + 2 * k + 1] = va
    }
    return this.closeSpilled(acc, s)
  }

  /**
   * Σ cs[cStart + k] · xs[xStart + k] for k < n (default: all of `xs` from `xStart`), constant
   * coefficients: one node with n edges.
   */
  linear(cs: ArrayLike<number>, xs: ArrayLike<Real>, cStart = 0, xStart = 0, n = xs.length - xStart): Real {
    if (cStart < 0 || xStart < 0 || cStart + n > cs.length || xStart + n > xs.length) {
      throw new DualError(
        'dual/length',
        `linear combination of ${n} terms from ${cStart} and ${xStart} of ${cs.length} coefficients and ${xs.length} values`,
      )
    }
    const s = this.openSpilled(n)
    const st = this.spillT,
      sp = this.spillP,
      val = this.val
    let acc = 0
    for (let k = 0; k < n; k++) {
      const a = xs[xStart + k]! - B,
        c = cs[cStart + k]!
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
    const registry = (this.registry ??= defaultRegistry ??= createRegistry())
    const spec = registry.pure(name)
    if (args.length !== spec.arity)
      throw new DualError(
        'dual/arity',
        `the primitive \`${name}\` takes ${spec.arity} argument${spec.arity === 1 ? '' : 's'}, got ${args.length}`,
      )
    if (!spec.partials)
      throw new DualError(
        'dual/no-derivative',
        `the pure primitive \`${name}\` has no \`partials\`: register it with \`partials\` to differentiate through it`,
      )
    const xs = args.map((x) => this.val[x - B]!)
    const v = spec.evaluate(...xs)
    const ps = spec.partials(...xs)
    const n = args.length
    if (n === 1) return this.unary(v, args[0]! - B, ps[0]!)
    if (n === 2) return this.binary(v, args[0]! - B, ps[0]!, args[1]! - B, ps[1]!)
    const s = this.openSpilled(n)
    for (let k = 0; k < n; k++) {
      this.spillT[s + k] = args[k]! - B
      this.spillP[s + k] = ps[k]!
    }
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
