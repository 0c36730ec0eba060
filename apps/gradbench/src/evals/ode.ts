/**
 * ode: classical RK4 with s steps of h = 2/s for y₀′ = x₀, yᵢ′ = xᵢ·yᵢ₋₁ from y(0) = 0.
 *
 * An RK4 step overwrites the state with a function of itself, which no reversible update can do
 * in place; the program keeps every state `ys[st·n …]` and every stage `k1…k4` of every step in
 * workspace arrays instead (the store-all tape of reverse mode, written as a Tenet program). The
 * adjoint walks the steps backwards, uncomputing them while it carries the gradients.
 */
import { grad } from 'tenet'
import { compile, fn } from './compile.js'
import { flat, int, list, record } from './input.js'
import type { EvalModule, Prepared } from './types.js'

export const odeSource = `
fn ode(out: f64, x: f64[], n: i32, s: i32, ys: f64[], k1: f64[], k2: f64[], k3: f64[], k4: f64[]) {
  h <- 2.0 / f64(s)
  for st in 0..s {
    o: i32 <- st * n
    k1[o] += x[0]
    k2[o] += x[0]
    k3[o] += x[0]
    k4[o] += x[0]
    for i in 1..n {
      k1[o + i] += x[i] * ys[o + i - 1]
    }
    for i in 1..n {
      k2[o + i] += x[i] * (ys[o + i - 1] + 0.5 * h * k1[o + i - 1])
    }
    for i in 1..n {
      k3[o + i] += x[i] * (ys[o + i - 1] + 0.5 * h * k2[o + i - 1])
    }
    for i in 1..n {
      k4[o + i] += x[i] * (ys[o + i - 1] + h * k3[o + i - 1])
    }
    for i in 0..n {
      ys[o + n + i] += ys[o + i] + h / 6.0 * (k1[o + i] + 2.0 * k2[o + i] + 2.0 * k3[o + i] + k4[o + i])
    }
    o -> st * n
  }
  h -> 2.0 / f64(s)
  out += ys[s * n + n - 1]
}
`

interface Work {
  x: Float64Array
  n: number
  s: number
  ys: Float64Array
  ks: Float64Array[]
}

const parse = (input: unknown): Work => {
  const o = record(input)
  const x = flat(o, 'x')
  const s = int(o, 's')
  const n = x.length
  if (n < 1 || s < 1) throw new Error('ode needs n ≥ 1 and s ≥ 1')
  return { x, n, s, ys: new Float64Array((s + 1) * n), ks: [0, 1, 2, 3].map(() => new Float64Array(s * n)) }
}

export const ode: EvalModule = {
  primal(input): Prepared {
    const w = parse(input)
    const f = fn(compile(odeSource), 'ode').core
    return {
      run: () => {
        w.ys.fill(0)
        for (const k of w.ks) k.fill(0)
        f(0, w.x, w.n, w.s, w.ys, ...w.ks)
      },
      output: () => list(w.ys.subarray(w.s * w.n)),
    }
  },
  gradient(input): Prepared {
    const w = parse(input)
    const g = grad(fn(compile(odeSource), 'ode'), { loss: 0 })
    return { run: () => g.run(0, w.x, w.n, w.s, w.ys, ...w.ks), output: () => list(g.buffers[1]!) }
  },
}
