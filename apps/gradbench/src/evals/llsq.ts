/**
 * llsq: y(x) = ½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)² with tᵢ = −1 + 2i/(n−1), sᵢ = sign(tᵢ). Per sample the
 * powers of tᵢ and the residual live in ancillas of a `routine` that `~routine` uncomputes, so
 * the function leaves nothing behind; the gradient is one forward and one adjoint run.
 */
import { grad } from 'tenet'
import { compile, fn } from './compile.js'
import { flat, int, list, record } from './input.js'
import type { EvalModule, Prepared } from './types.js'

export const llsqSource = `
fn llsq(y: f64, x: f64[], n: i32) {
  for i in 0..n {
    routine {
      t <- 0.0
      t += -1.0 + 2.0 * f64(i) / f64(n - 1)
      pw: f64[] <- zeros(len(x))
      pw[0] += 1.0
      for j in 1..len(x) {
        pw[j] += pw[j - 1] * t
      }
      r <- 0.0
      if (t > 0.0, ~) {
        r += 1.0
      } else {
        if (t < 0.0, ~) {
          r -= 1.0
        }
      }
      for j in 0..len(x) {
        r -= x[j] * pw[j]
      }
    }
    y += 0.5 * r * r
    ~routine
  }
}
`

const parse = (input: unknown): { x: Float64Array; n: number } => {
  const o = record(input)
  return { x: flat(o, 'x'), n: int(o, 'n') }
}

export const llsq: EvalModule = {
  primal(input): Prepared {
    const { x, n } = parse(input)
    const f = fn(compile(llsqSource), 'llsq').core
    let y = 0
    return {
      run: () => {
        f(0, x, n)
        y = f.results[0]!
      },
      output: () => y,
    }
  },
  gradient(input): Prepared {
    const { x, n } = parse(input)
    const g = grad(fn(compile(llsqSource), 'llsq'), { loss: 0 })
    return { run: () => g.run(0, x, n), output: () => list(g.buffers[1]!) }
  },
}
