/**
 * hello: `square(x) = x²` as a one-line Tenet function, and `double(x) = 2x` as its derivative
 * (`grad` runs it in forward mode: every argument is a scalar and x is the only input).
 */
import { grad } from 'tenet'
import { compile, fn } from './compile.js'
import { InputError } from './input.js'
import type { EvalModule, Prepared } from './types.js'

const source = `
fn square(y: f64, x: f64) {
  y += x * x
}
`

const number = (input: unknown): number => {
  if (typeof input !== 'number') throw new InputError('hello takes a bare number as input')
  return input
}

export const hello: EvalModule = {
  square(input): Prepared {
    const x = number(input)
    const f = fn(compile(source), 'square').core
    let y = 0
    return {
      run: () => {
        f(0, x)
        y = f.results[0]!
      },
      output: () => y,
    }
  },
  double(input): Prepared {
    const x = number(input)
    const g = grad(fn(compile(source), 'square'), { loss: 0 })
    return { run: () => g.run(0, x), output: () => g.scalars[1]! }
  },
}
