/**
 * Random swap loops for pass `unroll-swaps` of `@tenet/ir`: a `while` loop whose body updates
 * and exchanges scalar parameters (`SWAP`, `<->`, some inside an `if`), with a condition that
 * reads an exchanged variable, so that the loop stops after an odd or an even number of
 * iterations depending on the data. The backends' tests run them against the interpreter with
 * checks on and off (`columnProblems` compares: a float update is not exactly invertible).
 */

/** A small deterministic generator. */
function rng(seed: number): () => number {
  let s = seed * 2654435761 + 7
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    return ((s >>> 8) & 0xffff) / 0x10000
  }
}

const FLOATS = ['a', 'b', 'c', 'd'] as const
const INTS = ['m', 'n'] as const

/** A random swap loop: its source (functions `f` and `g`) and their arguments. */
export interface SwapLoopProgram {
  source: string
  /** The arguments of `f` (the counter `w` at 0). */
  args: number[]
  /** The arguments of `g`: `out`, `k`, then the initial values of the loop's variables. */
  ancillaArgs: number[]
  /**
   * Whether the exchanges at the top level of the body compose to a permutation of names that is
   * not the identity and undoes itself (disjoint exchanges): the loops pass `unroll-swaps` unrolls.
   */
  unrollable: boolean
}

/**
 * A random swap loop: `while (w < K && abs(a) < L, w > 0) { … w += 1 }` over the parameters
 * `a, b, c, d: f64, m, n: i32, w: i32`, with two to six statements before the counter: updates
 * of one variable by others of its type, and exchanges of two (at least one at the top level of
 * the body), at times inside an `if` on a variable neither side exchanges. `w` starts at 0, so
 * `w > 0` is false on entry and true after every iteration, and the loop is reversible.
 *
 * The source also has `g(out: f64, k: i32, pa, pb, pc, pd: f64, pm, pn: i32)`, the same loop over
 * ancillas as paper 001's `ibesselj` runs its series: set from the parameters and the loop run in
 * a `routine`, its results added into `out` and `k`, then uncomputed by `~routine` (a batch that
 * calls `g` at every element inlines it with the ancillas as locals of its own).
 */
export function swapLoopProgram(seed: number): SwapLoopProgram {
  const r = rng(seed)
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1))
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const two = <T>(xs: readonly T[]): [T, T] => {
    const x = pick(xs)
    const rest = xs.filter((y) => y !== x)
    return [x, pick(rest)]
  }
  const swap = (): [string, string, string] => {
    const [x, y] = r() < 0.7 ? two(FLOATS) : two(INTS)
    return [r() < 0.5 ? `SWAP(${x}, ${y})` : `${x} <-> ${y}`, x, y]
  }
  const update = (): string => {
    if (r() < 0.7) {
      const [x, y] = two(FLOATS)
      const z = pick(FLOATS.filter((v) => v !== x))
      return `${x} ${pick(['+=', '-='])} ${y} * ${pick(['0.5', '0.25', '0.125'])}${r() < 0.5 ? ` - ${z} * 0.0625` : ''}`
    }
    const [x, y] = two(INTS)
    return `${x} ${pick(['+=', '-=', '^='])} ${y} + w * ${int(1, 3)}`
  }
  const body: string[] = []
  // where each name's value is held after the top-level exchanges so far
  const held = new Map<string, string>([...FLOATS, ...INTS].map((v) => [v, v]))
  const exchange = (x: string, y: string) => {
    for (const [k, v] of held) held.set(k, v === x ? y : v === y ? x : v)
  }
  const count = int(2, 6)
  for (let i = 0; i < count; i++) {
    const p = r()
    if (p < 0.35) {
      const [text, x, y] = swap()
      body.push(text)
      exchange(x, y)
    } else if (p < 0.45) {
      // an exchange under a condition that neither side of it changes
      const [text, x, y] = swap()
      const cond = FLOATS.find((v) => v !== x && v !== y) ?? 'b'
      body.push(`if (${cond} > 0.0, ~) { ${text} }`)
    } else body.push(update())
  }
  if (!body.some((s) => /^(SWAP|\w+ <->)/.test(s))) {
    const [text, x, y] = swap()
    body.splice(int(0, body.length), 0, text)
    exchange(x, y)
  }
  const moved = [...held].filter(([k, v]) => k !== v)
  const unrollable = moved.length > 0 && moved.every(([k, v]) => held.get(v) === k)
  const trips = int(1, 8)
  const limit = pick(['2.0', '3.0', '6.0', '1e9'])
  const loop = `while (w < ${trips} && abs(a) < ${limit}, w > 0) {
    ${body.join('\n    ')}
    w += 1
  }`
  const floats = FLOATS.map((v) => `${v} <- 0.0`).join('\n  ')
  const ints = [...INTS, 'w'].map((v) => `${v}: i32 <- 0`).join('\n  ')
  const source = `fn f(a: f64, b: f64, c: f64, d: f64, m: i32, n: i32, w: i32) {
  ${loop}
}
fn g(out: f64, k: i32, pa: f64, pb: f64, pc: f64, pd: f64, pm: i32, pn: i32) {
  ${floats}
  ${ints}
  routine {
    ${FLOATS.map((v) => `${v} += p${v}`).join('\n    ')}
    ${INTS.map((v) => `${v} += p${v}`).join('\n    ')}
    ${loop.replace(/\n/g, '\n  ')}
  }
  out += a + ${pick(FLOATS.slice(1))} * 0.5
  k += w + ${pick(INTS)}
  ~routine
  ${[...INTS, 'w'].map((v) => `${v} -> 0`).join('\n  ')}
  ${FLOATS.map((v) => `${v} -> 0.0`).join('\n  ')}
}`
  const f = () => Math.round((r() * 6 - 3) * 64) / 64
  const values = [f(), f(), f(), f(), int(-5, 5), int(-5, 5)]
  return { source, args: [...values, 0], ancillaArgs: [f(), int(-5, 5), ...values], unrollable }
}

/**
 * `f(y, x, n, stop, bump)`: a swap loop of `n` iterations (`b += a·0.5; SWAP(a, b)`) inside a
 * routine, its post-condition `k != 0 && k != stop` false after iteration `stop` (1 ≤ stop ≤ n:
 * the `postWhileIteration` check fails there; pass `unroll-swaps` runs it with checks on too,
 * see `checked-swap-loops.ts`), then `y += a + b`, the uncompute (the inverse loop,
 * swapping too), and `a` deallocated after `bump` is added to it (≠ 0: the deallocation fails).
 */
export const swapPostProgram = `fn f(y: f64, x: f64, n: i32, stop: i32, bump: f64) {
  k: i32 <- 0
  a <- 0.0
  b <- 0.0
  routine {
    a += x
    while (k < n, k != 0 && k != stop) {
      k += 1
      b += a * 0.5
      SWAP(a, b)
    }
  }
  y += a + b
  ~routine
  a += bump
  b -> 0.0
  a -> 0.0
  k -> 0
}`

/**
 * `batch(ys, xs, ns, stops, bumps)`: {@link swapPostProgram}'s `f` at every element (a map loop of
 * series, which pass `pair-series` runs three elements at a time): element i fails its loop's
 * post-condition after iteration `stops[i]` (1 ≤ stops[i] ≤ ns[i]), or its deallocation of `a`
 * where `bumps[i]` is beyond the tolerance.
 */
export const swapPostBatchProgram = `${swapPostProgram}
fn batch(ys: f64[], xs: f64[], ns: i32[], stops: i32[], bumps: f64[]) {
  for i in 0..len(xs) { f(ys[i], xs[i], ns[i], stops[i], bumps[i]) }
}`

/**
 * `batch(ys, xs, ns, bumps)`: a swap loop per element (as {@link swapPostProgram}'s, `n = ns[i]`)
 * whose routine first calls the small leaf function `leaf` (its uncompute uncalls it), which
 * leaves its ancilla `t` off zero by `bumps[i]`: beyond the tolerance its deallocation fails, in
 * the call (or the uncall). Pass `pair-series` with checks on inlines the lanes' leaf calls.
 */
export const leafCallBatchProgram = `fn leaf(a: f64, x: f64, bump: f64) {
  t <- 0.0
  t += x * 2.0
  a += t
  t -= x * 2.0 - bump
  t -> 0.0
}
fn f(y: f64, x: f64, n: i32, bump: f64) {
  k: i32 <- 0
  a <- 0.0
  b <- 0.0
  routine {
    leaf(a, x, bump)
    while (k < n, k != 0) {
      k += 1
      b += a * 0.5
      SWAP(a, b)
    }
  }
  y += a + b
  ~routine
  b -> 0.0
  a -> 0.0
  k -> 0
}
fn batch(ys: f64[], xs: f64[], ns: i32[], bumps: f64[]) {
  for i in 0..len(xs) { f(ys[i], xs[i], ns[i], bumps[i]) }
}`
