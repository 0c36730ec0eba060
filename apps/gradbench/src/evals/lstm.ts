/**
 * lstm: ADBench's LSTM (diagonal weights, so everything is elementwise over the b bits). The
 * program keeps the whole history: the hidden and cell states of every layer at every step
 * (`H`, `C`, with the initial state in step 0), each layer's input (`X`), the four gates, the
 * predictions and their exponential sums — a store-all tape written as Tenet workspace arrays,
 * which the adjoint run uncomputes step by step, backwards, while it carries the gradients.
 */
import { grad } from 'tenet'
import { compile, fn } from './compile.js'
import { flat, list, record } from './input.js'
import type { EvalModule, Prepared } from './types.js'

export const lstmSource = `
fn lstm(loss: f64, mp: f64[], ep: f64[], seq: f64[], l: i32, b: i32, c: i32, H: f64[], C: f64[], X: f64[], fg: f64[], ig: f64[], og: f64[], cg: f64[], yh: f64[], se: f64[]) {
  den <- f64((c - 1) * b)
  for t in 0..c - 1 {
    for j in 0..b {
      X[t * l * b + j] += seq[t * b + j] * ep[j]
    }
    for L in 0..l {
      o: i32 <- (t * l + L) * b
      nw: i32 <- ((t + 1) * l + L) * b
      w: i32 <- 8 * L * b
      bi: i32 <- (8 * L + 4) * b
      for j in 0..b {
        fg[o + j] += 1.0 / (1.0 + exp(-(X[o + j] * mp[w + j] + mp[bi + j])))
        ig[o + j] += 1.0 / (1.0 + exp(-(H[o + j] * mp[w + b + j] + mp[bi + b + j])))
        og[o + j] += 1.0 / (1.0 + exp(-(X[o + j] * mp[w + 2 * b + j] + mp[bi + 2 * b + j])))
        cg[o + j] += tanh(H[o + j] * mp[w + 3 * b + j] + mp[bi + 3 * b + j])
        C[nw + j] += C[o + j] * fg[o + j] + ig[o + j] * cg[o + j]
        H[nw + j] += og[o + j] * tanh(C[nw + j])
      }
      if (L < l - 1, ~) {
        for j in 0..b {
          X[o + b + j] += H[nw + j]
        }
      }
      bi -> (8 * L + 4) * b
      w -> 8 * L * b
      nw -> ((t + 1) * l + L) * b
      o -> (t * l + L) * b
    }
    last: i32 <- ((t + 1) * l + l - 1) * b
    for j in 0..b {
      yh[t * b + j] += H[last + j] * ep[b + j] + ep[2 * b + j]
      se[t] += exp(yh[t * b + j])
    }
    for j in 0..b {
      loss -= seq[(t + 1) * b + j] * (yh[t * b + j] - log(2.0 + se[t])) / den
    }
    last -> ((t + 1) * l + l - 1) * b
  }
  den -> f64((c - 1) * b)
}
`

interface Work {
  mp: Float64Array
  ep: Float64Array
  seq: Float64Array
  state: Float64Array
  l: number
  b: number
  c: number
  H: Float64Array
  C: Float64Array
  /** X, the four gates, the predictions and their sums */
  rest: Float64Array[]
}

function parse(input: unknown): Work {
  const o = record(input)
  const mpRows = o.main_params,
    seqRows = o.sequence
  if (
    !Array.isArray(mpRows) ||
    !Array.isArray(seqRows) ||
    mpRows.length < 2 ||
    seqRows.length < 2 ||
    !Array.isArray(seqRows[0])
  ) {
    throw new Error('lstm needs main_params[2l][4b] and sequence[c][b] with l ≥ 1, c ≥ 2')
  }
  const l = mpRows.length / 2,
    c = seqRows.length,
    b = (seqRows[0] as unknown[]).length
  const n = c * l * b
  return {
    mp: flat(o, 'main_params', 8 * l * b),
    ep: flat(o, 'extra_params', 3 * b),
    seq: flat(o, 'sequence', c * b),
    state: flat(o, 'state', 2 * l * b),
    l,
    b,
    c,
    H: new Float64Array(n),
    C: new Float64Array(n),
    rest: [n, n, n, n, n, c * b, c].map((k) => new Float64Array(k)),
  }
}

/** Clears the history and puts the initial state in step 0 (row 2i: hidden, 2i+1: cell). */
function reset(w: Work): void {
  w.H.fill(0)
  w.C.fill(0)
  for (const a of w.rest) a.fill(0)
  for (let L = 0; L < w.l; L++) {
    w.H.set(w.state.subarray(2 * L * w.b, (2 * L + 1) * w.b), L * w.b)
    w.C.set(w.state.subarray((2 * L + 1) * w.b, (2 * L + 2) * w.b), L * w.b)
  }
}

export const lstm: EvalModule = {
  objective(input): Prepared {
    const w = parse(input)
    const f = fn(compile(lstmSource), 'lstm').core
    let y = 0
    return {
      run: () => {
        reset(w)
        f(0, w.mp, w.ep, w.seq, w.l, w.b, w.c, w.H, w.C, ...w.rest)
        y = f.results[0]!
      },
      output: () => y,
    }
  },
  jacobian(input): Prepared {
    const w = parse(input)
    const g = grad(fn(compile(lstmSource), 'lstm'), { loss: 0 })
    reset(w)
    return {
      // the driver runs on its own copies of the arrays the program writes: w.H, w.C stay as reset
      run: () => g.run(0, w.mp, w.ep, w.seq, w.l, w.b, w.c, w.H, w.C, ...w.rest),
      output: () => [...list(g.buffers[1]!), ...list(g.buffers[2]!)],
    }
  },
}
