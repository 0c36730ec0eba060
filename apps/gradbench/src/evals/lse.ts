/**
 * lse: LSE(x) = a + log Σᵢ exp(xᵢ − a) with a = max x, from max and sum. The running maximum is
 * kept in an ancilla array (max is not invertible, the prefix maxima are), and both it and the
 * sum are uncomputed by `~routine`.
 */
import { grad } from 'tenet'
import { compile, fn } from './compile.js'
import { flat, list, record } from './input.js'
import type { EvalModule, Prepared } from './types.js'

export const lseSource = `
fn lse(y: f64, x: f64[]) {
  routine {
    rm: f64[] <- zeros(len(x))
    rm[0] += x[0]
    for i in 1..len(x) {
      rm[i] += max(rm[i - 1], x[i])
    }
    s <- 0.0
    for i in 0..len(x) {
      s += exp(x[i] - rm[len(x) - 1])
    }
  }
  y += rm[len(x) - 1] + log(s)
  ~routine
}
`

const parse = (input: unknown): Float64Array => {
  const x = flat(record(input), 'x')
  if (x.length === 0) throw new Error('lse needs at least one value')
  return x
}

export const lse: EvalModule = {
  primal(input): Prepared {
    const x = parse(input)
    const f = fn(compile(lseSource), 'lse').core
    let y = 0
    return {
      run: () => {
        f(0, x)
        y = f.results[0]!
      },
      output: () => y,
    }
  },
  gradient(input): Prepared {
    const x = parse(input)
    const g = grad(fn(compile(lseSource), 'lse'), { loss: 0 })
    return { run: () => g.run(0, x), output: () => list(g.buffers[1]!) }
  },
}
