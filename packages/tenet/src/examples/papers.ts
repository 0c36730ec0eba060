/**
 * The programs of the NiLang papers (seeds 000 and 001), written in Tenet. They are used by the
 * tests, the README's language tour, and the benchmark suite. The complex log (with parts), the
 * sparse dot product with its branch keeper (Listing 22), the unitary multiply (Listing 14,
 * `ummSource`), the Bessel function (the paper's listing and a variant whose multiplier undoes by a
 * reciprocal, `besselReciprocalSource`) and the Petersen-graph embedding loss live in `@tenet/ad`
 * (its tests differentiate them) and are re-exported here under the same names.
 */
import {
  besselReciprocalSource,
  besselSource,
  complexLogSource,
  graphEmbeddingSource,
  sparseDotMergeSource,
  sparseDotSource,
  ummSource,
} from '@tenet/ad'

export {
  besselReciprocalSource,
  besselSource,
  complexLogSource,
  graphEmbeddingSource,
  sparseDotMergeSource,
  sparseDotSource,
  ummSource,
}

/**
 * The same text as `ummSource`: `i_umm(x, theta, m, n)` only (the benchmark suite appends its own
 * losses to it). Not `@tenet/ad`'s `unitarySource`, which is `ummSource` plus the loss `umm_loss`.
 * @deprecated Use `ummSource`.
 */
export const unitarySource = ummSource

/** Listing 4: a reversible multiplier, a += b * c. */
export const multiplierSource = `
fn multiplier(a: f64, b: f64, c: f64) {
  a += b * c
}`

/** Listing 11: the Fibonacci number computed recursively and reversibly. */
export const fibonacciSource = `
fn rrfib(out: i32, n: i32) {
  if (n >= 1, ~) {
    counter: i32 <- 0
    counter += n
    while (counter > 1, counter != n) {
      rrfib(out, counter - 1)
      counter -= 2
    }
    counter -= n % 2
    counter -> 0
  }
  out += 1
}`

/**
 * Appendix A, Listing 12: Bennett's time–space trade-off, on the chain s_{i+1} = 2·s_i kept in
 * the array \`state\` (a zero entry is a state that is not allocated). \`${'${0}'}\` and
 * \`${'${1}'}\` are host counters kept through \`@safe\`: the step count and the live states.
 */
export const bennettSource = (stepHook: string, liveHook: string) => `
fn bennett(state: f64[], k: i32, base: i32, len: i32) {
  if (len == 1, ~) {
    state[base + 1] += 2.0 * state[base]
    @safe ${stepHook}()
    @safe ${liveHook}(state)
  } else {
    n: i32 <- 0
    n += div(len, k)
    for j in 1..=k {
      bennett(state, k, base + n * (j - 1), n)
    }
    for j in k - 1..=1 by -1 {
      ~bennett(state, k, base + n * (j - 1), n)
    }
    n -= div(len, k)
    n -> 0
  }
}`
