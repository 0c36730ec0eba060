/**
 * ode: classical RK4 with s steps of h = 2/s for y₀′ = x₀, yᵢ′ = xᵢ·yᵢ₋₁ from y(0) = 0.
 *
 * An RK4 step overwrites the state with a function of itself, which no reversible update can do
 * in place; the program keeps every state `ys[st·n …]` instead (the store-all tape of reverse
 * mode, written as a Tenet array), and nothing else: component i's four stages depend only on
 * components i, i−1, …, i−4 of the old state (stage j of component i reads stage j−1 of
 * component i−1), so the step is one update per component, `ys[new + i] += ys[old + i] + h/6·(…)`,
 * whose right-hand side the generator below writes out. The adjoint walks the steps backwards,
 * uncomputing the states while it carries the gradients.
 */
import { grad } from 'tenet'
import { compile, fn } from './compile.js'
import { flat, int, list, record } from './input.js'
import type { EvalModule, Prepared } from './types.js'

/**
 * Stage `stage` (1–4) of component `i` (index expression) of the step that starts at `ys[o …]`;
 * `first` is the component index from which on the general form holds (component 0 has f = x₀).
 */
function stageExpr(stage: number, i: number | 'i', first: number): string {
  const at = (d: number): string => (i === 'i' ? `i - ${d}` : String(i - d))
  const idx = (d: number): string => (d === 0 ? (i === 'i' ? 'i' : String(i)) : at(d))
  const comp = (d: number): number | 'i' => (i === 'i' ? 'i' : i - d)
  if (i !== 'i' && i === 0) return 'x[0]'
  if (i === 'i' && first < 1) throw new Error('unreachable')
  const y = `ys[o + ${idx(1)}]`
  if (stage === 1) return `x[${idx(0)}] * ${y}`
  const prev =
    i === 'i'
      ? stageExpr(stage - 1, 'i', first).replaceAll(/\bi\b/g, '(i - 1)')
      : stageExpr(stage - 1, comp(1) as number, first)
  const c = stage === 4 ? 'h' : '0.5 * h'
  return `x[${idx(0)}] * (${y} + ${c} * (${prev}))`
}

/** The increment h/6·(k1 + 2k2 + 2k3 + k4) of component i. */
const increment = (i: number | 'i'): string =>
  `h / 6.0 * (${stageExpr(1, i, 4)} + 2.0 * (${stageExpr(2, i, 4)}) + 2.0 * (${stageExpr(3, i, 4)}) + ${stageExpr(4, i, 4)})`

export const odeSource = `
fn ode(out: f64, x: f64[], n: i32, s: i32, ys: f64[]) {
  h <- 2.0 / f64(s)
  for st in 0..s {
    o: i32 <- st * n
${[0, 1, 2, 3]
  .map(
    (i) => `    if (n > ${i}, ~) {
      ys[o + n + ${i}] += ys[o + ${i}] + ${increment(i)}
    }`,
  )
  .join('\n')}
    for i in 4..n {
      ys[o + n + i] += ys[o + i] + ${increment('i')}
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
}

const parse = (input: unknown): Work => {
  const o = record(input)
  const x = flat(o, 'x')
  const s = int(o, 's')
  const n = x.length
  if (n < 1 || s < 1) throw new Error('ode needs n ≥ 1 and s ≥ 1')
  return { x, n, s, ys: new Float64Array((s + 1) * n) }
}

export const ode: EvalModule = {
  primal(input): Prepared {
    const w = parse(input)
    const f = fn(compile(odeSource), 'ode').core
    return {
      run: () => {
        w.ys.fill(0)
        f(0, w.x, w.n, w.s, w.ys)
      },
      output: () => list(w.ys.subarray(w.s * w.n)),
    }
  },
  gradient(input): Prepared {
    const w = parse(input)
    const g = grad(fn(compile(odeSource), 'ode'), { loss: 0 })
    return { run: () => g.run(0, w.x, w.n, w.s, w.ys), output: () => list(g.buffers[1]!) }
  },
}
