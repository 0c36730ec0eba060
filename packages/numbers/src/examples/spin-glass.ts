/**
 * Example: the ground-state energy of a small Ising spin glass on a W×L grid (open boundaries) by
 * tropical tensor-network contraction (seed 001, Outlook: "tropical numbers ... spin glass"),
 * as a reversible Tenet program over max-plus numbers.
 *
 * E(s) = Σ_vertical jv·s·s' + Σ_horizontal jh·s·s' with spins ±1; the ground-state energy is
 * E₀ = min_s E(s) = −max_s(−E(s)), a tropical sum of tropical products. The program contracts
 * the grid column by column (a transfer matrix over the 2^W states of a column). Tropical `+`
 * (max) is not reversible as an update, so every partial maximum goes into a fresh slot of the
 * scratch array `m` with `*=` (the slot starts at the tropical one, 0): the program keeps its
 * garbage in `m` (Bennett style) and its inverse cleans it up again.
 *
 * Arrays: `v` (2^W·L), `m` (2^W·2^W·(L−1)) and `r` (2^W) start as zeros (the tropical one);
 * afterwards `r[2^W − 1]` holds −E₀. `jv[c·(W−1) + q]` couples rows q and q+1 in column c,
 * `jh[c·W + q]` couples row q of columns c and c+1.
 */
export const spinGlassSource = `
fn spin_glass(v: tropical[], m: tropical[], r: tropical[], jv: f64[], jh: f64[], w: i32, l: i32) {
  for c in 0..l {
    for t in 0..2 ** w {
      if (c > 0, ~) {
        for s in 0..2 ** w {
          routine {
            e <- 0.0
            for q in 0..w {
              e += jh[(c - 1) * w + q] * f64((2 * (div(s, 2 ** q) % 2) - 1) * (2 * (div(t, 2 ** q) % 2) - 1))
            }
          }
          if (s == 0, ~) {
            m[((c - 1) * 2 ** w + t) * 2 ** w] *= v[(c - 1) * 2 ** w] * convert(-e)
          } else {
            m[((c - 1) * 2 ** w + t) * 2 ** w + s] *= m[((c - 1) * 2 ** w + t) * 2 ** w + s - 1] + v[(c - 1) * 2 ** w + s] * convert(-e)
          }
          ~routine
        }
        v[c * 2 ** w + t] *= m[((c - 1) * 2 ** w + t) * 2 ** w + 2 ** w - 1]
      }
      routine {
        e <- 0.0
        for q in 0..w - 1 {
          e += jv[c * (w - 1) + q] * f64((2 * (div(t, 2 ** q) % 2) - 1) * (2 * (div(t, 2 ** (q + 1)) % 2) - 1))
        }
      }
      v[c * 2 ** w + t] *= convert(-e)
      ~routine
    }
  }
  for t in 0..2 ** w {
    if (t == 0, ~) {
      r[0] *= v[(l - 1) * 2 ** w]
    } else {
      r[t] *= r[t - 1] + v[(l - 1) * 2 ** w + t]
    }
  }
}
`

/** Scratch arrays for `spin_glass` on a W×L grid, all tropical ones (zeros). */
export function spinGlassBuffers(w: number, l: number) {
  const S = 2 ** w
  return { v: new Float64Array(S * l), m: new Float64Array(S * S * Math.max(0, l - 1)), r: new Float64Array(S) }
}

/** The ground-state energy by enumerating all 2^(W·L) configurations (the oracle). */
export function bruteForceGroundState(jv: ArrayLike<number>, jh: ArrayLike<number>, w: number, l: number): number {
  let best = Infinity
  const n = w * l
  for (let conf = 0; conf < 2 ** n; conf++) {
    const s = (c: number, q: number) => ((conf >> (c * w + q)) & 1 ? 1 : -1)
    let e = 0
    for (let c = 0; c < l; c++) {
      for (let q = 0; q < w - 1; q++) e += jv[c * (w - 1) + q]! * s(c, q) * s(c, q + 1)
      if (c < l - 1) for (let q = 0; q < w; q++) e += jh[c * w + q]! * s(c, q) * s(c + 1, q)
    }
    best = Math.min(best, e)
  }
  return best
}
