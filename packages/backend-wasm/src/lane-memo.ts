/**
 * Branch-spanning reuse of lane values: a costly value (sin and cos, a division, a square root, a
 * math routine's result) that the lanes code of a map loop (`map-lanes.ts`) computed in one branch
 * of a varying `if` is read again, instead of computed again, in a later branch that runs only
 * where the first one ran, when nothing it reads can have been written on the way.
 *
 * The case it is for is the adjoint fused with its forward run: the forward run's
 * `if (θ² ≠ 0) { θ += sqrt(θ²); c += cos θ; s += sin θ; w += k / θ … }` and, after the code in
 * between, the adjoint's `if (θ² ≠ 0) { … cos θ … sin θ … k / θ … 0.5 / sqrt(θ²) }` of the same
 * condition. A branch in lanes runs in
 * one of three ways (see the varying `if` of `vstmt`): both lanes take it (no masks), one lane does
 * (under the mask, blending), or neither. With the condition's value unchanged in between, the
 * adjoint's "both lanes" code runs only where the forward run's did, so the values that the
 * forward run's code computed there are in its locals still (locals are never reused).
 *
 * The bookkeeping, in the order the code is emitted:
 * - the guards of the code being emitted: one per enclosing branch of a varying `if` (its
 *   condition's key with the versions of the names it reads, the branch, and how it runs: both lanes,
 *   or one under the mask), and an opaque guard for any other enclosing construct (a loop, a
 *   branch of a uniform `if`);
 * - each write of a name, with the guards it was emitted under;
 * - the values recorded: an expression's key, the names it reads, the guards and the write count at
 *   that point, and the locals that hold the value.
 *
 * A recorded value is reused where its guards are a prefix of the current ones (so it ran on every
 * path that reaches here) and no name it reads was written since, except by code that cannot run
 * where the current code runs: code under a guard that contradicts a current one about the same
 * condition value (both lanes true, both false, one of each). A write in a loop never counts as
 * excluded (the loop may have run it in an earlier iteration, when the condition was otherwise).
 * Every wasm f64x2 instruction and routine this serves is deterministic, so the value read is the
 * value a second computation would give, bit for bit.
 */
import type { Expr } from '@tenet/ir'
import { key } from '@tenet/ir/backend'
import { reads } from './map-lanes.js'

/** A guard of the code being emitted (see the module comment). */
export type LaneGuard =
  | {
      readonly kind: 'branch'
      /** The condition's key with the versions of the names it reads. */
      readonly cond: string
      /** The else branch (the lanes where the condition is false). */
      readonly negated: boolean
      /** Both lanes take the branch (no mask); else one lane does, under the mask. */
      readonly both: boolean
      /** No enclosing mask: under the mask exactly one lane takes the branch. */
      readonly outermost: boolean
    }
  | { readonly kind: 'opaque' }

/** What a guard tells of its condition's lanes: both true, both false, one of each, or nothing. */
function fact(g: LaneGuard): { cond: string; lanes: 'true' | 'false' | 'mixed' } | undefined {
  if (g.kind !== 'branch') return undefined
  if (g.both) return { cond: g.cond, lanes: g.negated ? 'false' : 'true' }
  return g.outermost ? { cond: g.cond, lanes: 'mixed' } : undefined
}

/** Whether code under guards `a` cannot run where code under guards `b` runs (a contradiction). */
export function exclusive(a: readonly LaneGuard[], b: readonly LaneGuard[]): boolean {
  // (a write in a loop may have run in an earlier iteration, under other condition values)
  if (a.some((g) => g.kind === 'opaque')) return false
  const facts = new Map<string, string>()
  for (const g of a) {
    const f = fact(g)
    if (f) facts.set(f.cond, f.lanes)
  }
  for (const g of b) {
    const f = fact(g)
    const other = f && facts.get(f.cond)
    if (other !== undefined && other !== f!.lanes) return true
  }
  return false
}

const sameGuard = (a: LaneGuard, b: LaneGuard): boolean =>
  a === b ||
  (a.kind === 'branch' &&
    b.kind === 'branch' &&
    a.cond === b.cond &&
    a.negated === b.negated &&
    a.both === b.both &&
    a.outermost === b.outermost)

interface Recorded<T> {
  /** The expression's key, after what the value is (\`sincos:\` for both of sin and cos, …). */
  key: string
  names: ReadonlySet<string>
  guards: readonly LaneGuard[]
  /** How many writes were logged before it. */
  at: number
  value: T
}

/** The bookkeeping of one emission of a map loop's lanes code (see the module comment). */
export class LaneMemo<T> {
  private readonly guards: LaneGuard[] = []
  private readonly versions = new Map<string, number>()
  /** The writes so far: the name (`*` for any) and the guards it was emitted under. */
  private readonly writes: Array<{ name: string; guards: readonly LaneGuard[] }> = []
  private readonly values: Array<Recorded<T>> = []

  /** The key of a condition's value: its structure and the versions of the names it reads. */
  condition(e: Expr): string {
    const names = [...reads(e, new Set())].sort()
    return `${key(e)}|${names.map((n) => `${n}#${this.versions.get(n) ?? 0}`).join(',')}`
  }

  /** Runs `f` with `g` as the innermost guard. */
  under<R>(g: LaneGuard, f: () => R): R {
    this.guards.push(g)
    try {
      return f()
    } finally {
      this.guards.pop()
    }
  }

  /** Logs writes of `names` (`*`: of anything) by the code being emitted. */
  wrote(names: Iterable<string> | '*'): void {
    const guards = [...this.guards]
    for (const name of names === '*' ? ['*'] : names) {
      this.versions.set(name, (this.versions.get(name) ?? 0) + 1)
      this.writes.push({ name, guards })
    }
    // (a write of anything changes every condition's value too)
    if (names === '*') for (const n of this.versions.keys()) this.versions.set(n, this.versions.get(n)! + 1)
  }

  /** Records the value of `e` (what of it: `what`), held in `value`, as computed by the code being emitted. */
  record(what: string, e: Expr, value: T): void {
    this.values.push({
      key: `${what}:${key(e)}`,
      names: reads(e, new Set()),
      guards: [...this.guards],
      at: this.writes.length,
      value,
    })
  }

  /** A recorded value of `e` (what of it: `what`) that the code being emitted may read (see the module comment). */
  find(what: string, e: Expr): T | undefined {
    const k = `${what}:${key(e)}`
    for (let i = this.values.length - 1; i >= 0; i--) {
      const r = this.values[i]!
      if (r.key !== k || r.guards.length > this.guards.length) continue
      if (!r.guards.every((g, j) => sameGuard(g, this.guards[j]!))) continue
      let valid = true
      for (let w = r.at; w < this.writes.length && valid; w++) {
        const x = this.writes[w]!
        if ((x.name === '*' || r.names.has(x.name)) && !exclusive(x.guards, this.guards)) valid = false
      }
      if (valid) return r.value
    }
    return undefined
  }
}
