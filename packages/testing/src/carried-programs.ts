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
