import { act, assertPositiveInt, flatten, makeSchedule, type Action, type Nested, type Schedule } from './action.js'

/**
 * Knill's optimal pebbling of a chain (Bennett's reversible pebble game): a pebble may be
 * put on or taken off node i only while node i−1 holds one; node 0 (the input) always does
 * and is not counted. F(n, s) is the least number of moves that ends with a pebble on node n
 * alone, using at most s pebbles at any time:
 *   F(1, s) = 1,  F(n, s) = min over 1 ≤ m < n of F(m, s) + F(n−m, s−1) + F(m, s−1),
 * (pebble m with s pebbles, pebble n from m with the s−1 left, unpebble m with s−1),
 * and F(n, s) = ∞ for n > 2^(s−1).
 */
class KnillTable {
  /** cost[s][n], split[s][n] for 1 ≤ n ≤ maxN, 1 ≤ s ≤ maxS. */
  readonly cost: Float64Array[] = []
  readonly split: Int32Array[] = []

  constructor(
    readonly maxN: number,
    readonly maxS: number,
  ) {
    const zeroRow = new Float64Array(maxN + 1).fill(Infinity)
    zeroRow[0] = 0
    this.cost.push(zeroRow)
    this.split.push(new Int32Array(maxN + 1))
    for (let s = 1; s <= maxS; s++) {
      const row = new Float64Array(maxN + 1).fill(Infinity)
      const arg = new Int32Array(maxN + 1)
      const below = this.cost[s - 1]!
      row[0] = 0
      if (maxN >= 1) row[1] = 1
      const reach = s - 1 >= 53 ? Infinity : 2 ** (s - 1) // largest n reachable with s pebbles
      const half = s - 2 >= 53 ? Infinity : s >= 2 ? 2 ** (s - 2) : 0 // largest with s−1
      for (let n = 2; n <= Math.min(maxN, reach); n++) {
        let best = Infinity
        let bestM = 0
        // F(m, s−1) and F(n−m, s−1) must be finite: n − half ≤ m ≤ half.
        const lo = Math.max(1, n - half)
        const hi = Math.min(n - 1, half)
        for (let m = lo; m <= hi; m++) {
          const v = row[m]! + below[n - m]! + below[m]!
          if (v < best) {
            best = v
            bestM = m
          }
        }
        row[n] = best
        arg[n] = bestM
      }
      this.cost.push(row)
      this.split.push(arg)
    }
  }
}

const tables = new Map<string, KnillTable>()

function tableFor(n: number, s: number): KnillTable {
  // With s ≥ n pebbles the answer is 2n − 1 (see `trivial`); the table needs rows s < n only.
  const S = Math.max(1, Math.min(s, n - 1))
  const key = `${n}:${S}`
  let t = tables.get(key)
  if (!t) {
    for (const other of tables.values()) if (other.maxN >= n && other.maxS >= S) return other
    t = new KnillTable(n, S)
    tables.set(key, t)
  }
  return t
}

/**
 * Knill's optimal pebbling cost F(n, s): the fewest forward/uncompute steps that compute
 * s_n from s₀ reversibly, leaving only s₀ and s_n, with at most s states held besides s₀.
 * Infinity where n > 2^(s−1). Dynamic programming, O(s·n²) time on first use for s < n (cached); 2n − 1 at once for s ≥ n.
 */
export function knillCost(n: number, s: number): number {
  if (n <= 0) return 0
  if (s < 1) return Infinity
  if (s - 1 < 53 && n > 2 ** (s - 1)) return Infinity
  if (trivial(n, s)) return 2 * n - 1
  const t = tableFor(n, s)
  return t.cost[s]![n]!
}

/**
 * With s ≥ n pebbles the optimum is to pebble every node and clear all but the last:
 * 2n − 1 moves, the least possible (each node below n goes on and off at least once), and
 * the only split reaching it is m = 1, so this is also what the recursion would generate.
 */
function trivial(n: number, s: number): boolean {
  return s >= n
}

function* pebble(t: KnillTable, a: number, n: number, s: number): Nested {
  if (trivial(n, s)) {
    for (let i = a + 1; i <= a + n; i++) yield act.forward(i)
    for (let i = a + n - 1; i > a; i--) yield act.uncompute(i)
    return
  }
  const m = t.split[s]![n]!
  yield pebble(t, a, m, s)
  yield pebble(t, a + m, n - m, s - 1)
  yield unpebble(t, a, m, s - 1)
}

/**
 * Inverse of {@link pebble}. `leaf(i)` clears s_i where the chain is cleared from the end:
 * `act.uncompute`, or {@link uncomputingAdjoint} to carry the adjoint along (each step is then
 * reversed exactly once, from a+n down to a+1).
 */
function* unpebble(
  t: KnillTable,
  a: number,
  n: number,
  s: number,
  leaf: (step: number) => Action = act.uncompute,
): Nested {
  if (trivial(n, s)) {
    for (let i = a + 1; i < a + n; i++) yield act.forward(i)
    for (let i = a + n; i > a; i--) yield leaf(i)
    return
  }
  const m = t.split[s]![n]!
  yield pebble(t, a, m, s - 1)
  yield unpebble(t, a + m, n - m, s - 1, leaf)
  yield unpebble(t, a, m, s, leaf)
}

/** The leaf of the gradient sweep: reverse step i and uncompute s_i. */
const uncomputingAdjoint = (step: number): Action => act.adjoint(step, true)

/** Options of {@link knillSchedule}. */
export interface KnillOptions {
  /** Chain length T. */
  steps: number
  /** Pebbles: states that may be held at once besides the input s₀ (T ≤ 2^(pebbles−1)). */
  pebbles: number
}

function prepare(options: KnillOptions): KnillTable {
  assertPositiveInt(options.steps, 'steps')
  assertPositiveInt(options.pebbles, 'pebbles')
  if (!Number.isFinite(knillCost(options.steps, options.pebbles))) {
    throw new RangeError(`${options.pebbles} pebbles cannot reach step ${options.steps}: need steps ≤ 2^(pebbles−1)`)
  }
  // The table is consulted only for sub-chains with fewer pebbles than steps.
  return trivial(options.steps, options.pebbles) ? tableFor(1, 1) : tableFor(options.steps, options.pebbles)
}

/**
 * Knill's optimal reversible pebbling schedule: computes s_T from s₀ with exactly
 * {@link knillCost}(T, pebbles) forward/uncompute steps, never holding more than
 * `pebbles` + 1 states (input included), ending with only s₀ and s_T live.
 */
export function knillSchedule(options: KnillOptions): Schedule {
  const t = prepare(options)
  const { steps: T, pebbles: s } = options
  return makeSchedule(`knill(s=${s})`, T, () => flatten(pebble(t, 0, T, s)))
}

/**
 * Gradient schedule on top of Knill's pebbling: {@link knillSchedule}, then its inverse
 * with the adjoint carried along (T uncomputing adjoints, from T down to 1), within the same
 * pebble budget. Ends with only s₀ live; the sweep costs another F(T, pebbles) actions.
 */
export function knillGradientSchedule(options: KnillOptions): Schedule {
  const t = prepare(options)
  const { steps: T, pebbles: s } = options
  return makeSchedule(`knill-gradient(s=${s})`, T, () =>
    flatten(
      (function* (): Nested {
        yield pebble(t, 0, T, s)
        yield unpebble(t, 0, T, s, uncomputingAdjoint)
      })(),
    ),
  )
}
