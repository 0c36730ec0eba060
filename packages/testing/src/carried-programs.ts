/**
 * Programs with loop-carried array elements (for `carriedElements` of `@tenet/ir/backend`) and the
 * shape `first-writes` of `@tenet/ir` reuses from a pool: the backends' tests run them against the
 * interpreter, forwards and backwards, with run-time checks on and off.
 */

/** Horner's rule per point: the accumulator `a` written from its last element down, `a[k + 1]` carried. */
export const hornerSource = `fn f(y: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    routine {
      a: f64[] <- zeros(len(c))
      a[len(c) - 1] += c[len(c) - 1]
      for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * xs[j] + c[k] }
    }
    y += a[0] * a[0]
    ~routine
  }
}`

const prefix = `fn f(s: f64[], x: f64[]) {
  s[0] += x[0]
  for i in 1..len(x) { s[i] += s[i - 1] * 0.5 + x[i] }
}`

const runningMax = `fn f(m: f64[], x: f64[]) {
  m[0] += x[0]
  for i in 1..len(x) { m[i] += max(m[i - 1], x[i]) }
}`

/** Two carried elements of stride 2, read again after the writes of the same iteration. */
const history = `fn f(xs: f64[], h: f64, y: f64, n: i32) {
  for t in 0..n {
    xs[2 * t + 2] += xs[2 * t] + h * xs[2 * t + 1]
    xs[2 * t + 3] += xs[2 * t + 1] - h * xs[2 * t]
    y += xs[2 * t] * xs[2 * t + 1]
  }
}`

/** Not carried: the next iteration writes what this one reads. */
const anti = `fn f(a: f64[], x: f64[]) {
  for i in 0..len(a) - 1 { a[i] += a[i + 1] * x[i] }
}`

/**
 * The carried-element programs by name (each a function `f`): a Horner recurrence, a prefix sum,
 * a running maximum, an integrator history of stride 2, and `anti`, which the analysis must leave
 * alone.
 */
export const CARRIED_SOURCES: Readonly<Record<string, string>> = {
  horner: hornerSource,
  prefix,
  runningMax,
  history,
  anti,
}

/** Fresh arguments of `f` of each of {@link CARRIED_SOURCES} for a size `n` ≥ 1 (`n` = 1: loops that run zero times). */
export const CARRIED_ARGS: Readonly<Record<string, (n: number) => unknown[]>> = {
  horner: (n) => [0.25, Float64Array.from({ length: n }, (_, k) => 0.5 - k / 7), Float64Array.from([0.3, -1.2, 0.9])],
  prefix: (n) => [new Float64Array(n), Float64Array.from({ length: n }, (_, k) => Math.sin(k + 1))],
  runningMax: (n) => [new Float64Array(n), Float64Array.from({ length: n }, (_, k) => Math.cos(3 * k))],
  history: (n) => [Float64Array.from({ length: 2 * n }, (_, k) => (k < 2 ? 1 - k / 3 : 0)), 0.01, 0.5, n - 1],
  anti: (n) => [Float64Array.from({ length: n }, (_, k) => k / 3), Float64Array.from({ length: n }, (_, k) => 1 - k)],
}

/** Values (scalars and `Float64Array`s) as JSON text, `-0` kept apart from `0`: equal text, equal bits. */
export const exactText = (v: unknown[]): string =>
  JSON.stringify(v.map((x) => (x instanceof Float64Array ? Array.from(x, (e) => (Object.is(e, -0) ? '-0' : e)) : x)))

/**
 * Carried reads out of range with checks on: the first iteration reads `a[-1]` (the loop starts at
 * 0); then loops where only a later read would leave the array, which the write of the iteration
 * before fails first; last, a read under a condition, whose check stays in the loop. Each is a
 * function `f(a: f64[], x: f64[], y: f64)`.
 */
export const CARRIED_OUT_OF_RANGE: readonly string[] = [
  `fn f(a: f64[], x: f64[], y: f64) { for i in 0..len(x) { a[i] += a[i - 1] + x[i] * y } }`,
  `fn f(a: f64[], x: f64[], y: f64) { for i in 1..len(x) + 1 { a[i] += a[i - 1] + x[i - 1] * y } }`,
  `fn f(a: f64[], x: f64[], y: f64) { for i in len(x) - 2..=0 by -1 { a[i] += a[i + 1] * x[i] * y } }`,
  `fn f(a: f64[], x: f64[], y: f64) { for i in 0..len(x) { a[i] += a[i - 1] + x[i]\n if (x[i] > 0.5, ~) { y += a[i - 1] * x[i] } } }`,
]

/** What a call raised, as text (`'no error'` where it returned). */
function raised(call: () => unknown): string {
  try {
    call()
    return 'no error'
  } catch (e) {
    return String(e)
  }
}

/**
 * Runs each of {@link CARRIED_OUT_OF_RANGE} on arrays `a` and `x` of several lengths (y = 0.25),
 * compiled by `compile` (with checks on) once with the carried-elements step on and once with it
 * off (`switchOff(true)` switches it off, `switchOff(false)` on again): the error of each run as
 * text, and `first`, that of the first case on arrays of length 4 with the step on.
 */
export function carriedOutOfRange(
  compile: (source: string) => (...args: unknown[]) => unknown,
  switchOff: (off: boolean) => void,
): { runs: Array<{ label: string; on: string; off: string }>; first: string } {
  const failure = (source: string, a: Float64Array, x: Float64Array): string => {
    const f = compile(source)
    return raised(() => f(a, x, 0.25))
  }
  const runs: Array<{ label: string; on: string; off: string }> = []
  for (const source of CARRIED_OUT_OF_RANGE)
    for (const [la, lx] of [
      [4, 4],
      [3, 4],
      [5, 4],
      [2, 3],
    ] as const) {
      const a = () => Float64Array.from({ length: la }, (_, k) => k / 4)
      const x = () => Float64Array.from({ length: lx }, (_, k) => 1 - k / 5)
      const on = failure(source, a(), x())
      switchOff(true)
      const off = failure(source, a(), x())
      switchOff(false)
      runs.push({ label: `${source} ${la} ${lx}`, on, off })
    }
  return { runs, first: failure(CARRIED_OUT_OF_RANGE[0]!, new Float64Array(4), new Float64Array(4)) }
}

/**
 * Programs for `CarriedElement.signFree`, each `f(out: f64[], c: f64[], x: f64)`: `free`, a Horner
 * recurrence on a fresh array whose elements are copied out (every read of the carried element in
 * its own first write's value, under + and ×: the local may keep the value before the store's
 * `0 +`); `mixed`, the same recurrence whose element is also a divisor elsewhere in the loop
 * (1 / −0 is −∞, and the routine's uncompute, which loads the element, leaves −∞ − ∞ = −∞ where
 * +∞ − ∞ is NaN: the local must keep the value with its `0 +`).
 */
export const SIGNED_ZERO_SOURCES: Readonly<Record<'free' | 'mixed', string>> = {
  free: `fn f(out: f64[], c: f64[], x: f64) {
  routine {
    acc: f64[] <- zeros(len(c))
    acc[len(c) - 1] += c[len(c) - 1]
    for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * x + c[k] }
  }
  for k in 0..len(c) { out[k] += acc[k] }
  ~routine
}`,
  mixed: `fn f(out: f64[], c: f64[], x: f64) {
  routine {
    acc: f64[] <- zeros(len(c))
    acc[len(c) - 1] += c[len(c) - 1]
    for k in len(c) - 2..=0 by -1 {
      acc[k] += acc[k + 1] * x + c[k]
      out[k] += 1.0 / acc[k + 1]
    }
  }
  ~routine
}`,
}

/**
 * Fresh arguments for {@link SIGNED_ZERO_SOURCES}: zero coefficients of either sign and x of either
 * sign (the recurrence's value before a store's `0 +` is −0 in some iterations: +0 · −1 + −0),
 * `out` all −0 (so that a −0 added shows).
 */
export function signedZeroArgs(): unknown[][] {
  const cs = [
    [-0, -0, -0, -0, -0],
    [0, -0, 0, -0, -0],
    [-0, 1, -0, -0, 2],
    [0.5, -0, -0.25, -0, -0],
  ]
  return cs.flatMap((c) =>
    [-1, 1, -0, 0, -2.5, Number.POSITIVE_INFINITY, Number.NaN].map((x) => [
      new Float64Array(c.length).fill(-0),
      Float64Array.from(c),
      x,
    ]),
  )
}

/** Values as text, every double apart (±∞ and NaN too, −0 apart from 0): equal text, equal numbers bit for bit up to NaN payloads. */
export const doublesText = (v: unknown[]): string =>
  v
    .map((e) =>
      e instanceof Float64Array
        ? Array.from(e, (d) => (Object.is(d, -0) ? '-0' : String(d))).join(',')
        : Object.is(e, -0)
          ? '-0'
          : String(e),
    )
    .join(';')

/**
 * Programs whose loop-carried history array is read after the loop only at the element the last
 * iteration wrote (pass `carried-stores`: the loop's stores are dead), each `f(y: f64, c: f64[], x: f64)`
 * with `c` of any length ≥ 1 (length 1: loops that run no iteration, whose element is read from
 * memory): Horner's accumulator read at `a[0]` (its value before the store's `0 +` may be −0),
 * a running maximum read at its last element under a condition, the adjoint sweep of a Horner
 * accumulator (a reversed loop, which ends at its start), a prefix sum read at a last index the
 * code spells differently (`len(c) + -1`), a loop whose range can end two before its start (length
 * 2: the element read after it is not the one its first iteration would have read; `c` of length
 * ≥ 2 only), and two that must keep their stores: another element
 * read after the loop, and a read between two loops of the same array.
 */
export const CARRIED_STORE_SOURCES: Readonly<Record<string, string>> = {
  horner: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[len(c) - 1] += c[len(c) - 1]
    for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * x + c[k] }
  }
  y += a[0]
  ~routine
}`,
  runningMax: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    ms: f64[] <- zeros(len(c))
    ms[0] += c[0]
    for i in 1..len(c) { ms[i] += max(ms[i - 1], c[i] * x) }
  }
  if (len(c) > 1, ~) { y += ms[len(c) - 1] * x }
  ~routine
}`,
  sweep: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += x
    for k in reverse len(c) - 2..=0 by -1 { a[k + 1] += a[k] * x + c[k] }
  }
  y += a[len(c) - 1] * c[0]
  ~routine
}`,
  prefix: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    s: f64[] <- zeros(len(c))
    s[0] += c[0]
    for i in 1..len(c) { s[i] += s[i - 1] * x + c[i] }
  }
  y += s[len(c) + -1]
  ~routine
}`,
  gap: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += c[0]
    a[1] += c[1] * x
    for i in 2..len(c) - 1 { a[i] += a[i - 1] * x + c[i] }
  }
  y += a[len(c) - 2]
  ~routine
}`,
  otherElement: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[len(c) - 1] += c[len(c) - 1]
    for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * x + c[k] }
  }
  y += a[0] + a[len(c) - 1]
  ~routine
}`,
  twoLoops: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] }
  }
  for i in 0..len(c) { y += a[i] }
  ~routine
}`,
}

/** Arguments for {@link CARRIED_STORE_SOURCES}: `c` of length `n`, zeros of either sign among them, `y` = −0 (a −0 added shows). */
export function carriedStoreArgs(n: number): unknown[][] {
  const cs = [
    Float64Array.from({ length: n }, (_, k) => Math.sin(k + 1) / 2),
    new Float64Array(n).fill(-0),
    Float64Array.from({ length: n }, (_, k) => (k % 2 ? -0 : 0)),
    Float64Array.from({ length: n }, (_, k) => (k === 0 ? Number.NaN : -0)),
  ]
  return cs.flatMap((c) => [-1, 0.5, -0, 0, Number.POSITIVE_INFINITY].map((x) => [-0, c, x]))
}
