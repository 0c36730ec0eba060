/**
 * det: the determinant by expansion by minors along the first row, recursively (O(ℓ!)).
 *
 * `minor` adds to `ws[slot]` the determinant of the rows r… and the columns not marked in
 * `used`. Each sub-determinant it needs is computed by a recursive call into its own slot of the
 * workspace `ws` and kept there (the "garbage" of the reversible program): the adjoint run walks
 * the recursion backwards, uncomputing those slots while it carries their gradients, so the
 * gradient costs one forward and one adjoint run with no recomputation. The slots are laid out
 * by a closed form: a call at level r with its slot at `slot` puts its p-th child at
 * `slot + 1 + p·(1 + cs[r+1])`, where cs[r] is the number of slots below a call at level r.
 */
import { grad } from 'tenet'
import { compile, fn } from './compile.js'
import { flat, int, list, record } from './input.js'
import type { EvalModule, Prepared } from './types.js'

export const detSource = `
fn minor(ws: f64[], slot: i32, A: f64[], ell: i32, r: i32, used: i32[], cs: i32[]) {
  if (r == ell - 1, ~) {
    for c in 0..ell {
      if (used[c] == 0, ~) {
        ws[slot] += A[r * ell + c]
      }
    }
  } else {
    pos: i32 <- 0
    for c in 0..ell {
      if (used[c] == 0, ~) {
        used[c] += 1
        minor(ws, slot + 1 + pos * (1 + cs[r + 1]), A, ell, r + 1, used, cs)
        used[c] -= 1
        if (pos % 2 == 0, ~) {
          ws[slot] += A[r * ell + c] * ws[slot + 1 + pos * (1 + cs[r + 1])]
        } else {
          ws[slot] -= A[r * ell + c] * ws[slot + 1 + pos * (1 + cs[r + 1])]
        }
        pos += 1
      }
    }
    pos -> ell - r
  }
}

fn det(y: f64, A: f64[], ell: i32, used: i32[], ws: f64[], cs: i32[]) {
  minor(ws, 0, A, ell, 0, used, cs)
  y += ws[0]
}
`

/** cs[r]: workspace slots used below a call at level r (its children and their descendants). */
export function slotCounts(ell: number): Int32Array {
  const cs = new Int32Array(ell)
  for (let r = ell - 2; r >= 0; r--) cs[r] = (ell - r) * (1 + cs[r + 1]!)
  return cs
}

const parse = (input: unknown): { A: Float64Array; ell: number } => {
  const o = record(input)
  const ell = int(o, 'ell')
  if (ell < 1) throw new Error('det needs ell ≥ 1')
  return { A: flat(o, 'A', ell * ell), ell }
}

export const det: EvalModule = {
  primal(input): Prepared {
    const { A, ell } = parse(input)
    const f = fn(compile(detSource), 'det').core
    const cs = slotCounts(ell)
    const used = new Int32Array(ell)
    const ws = new Float64Array(1 + cs[0]!)
    let y = 0
    return {
      run: () => {
        ws.fill(0)
        f(0, A, ell, used, ws, cs)
        y = f.results[0]!
      },
      output: () => y,
    }
  },
  gradient(input): Prepared {
    const { A, ell } = parse(input)
    const g = grad(fn(compile(detSource), 'det'), { loss: 0 })
    const cs = slotCounts(ell)
    const used = new Int32Array(ell)
    const ws = new Float64Array(1 + cs[0]!)
    return { run: () => g.run(0, A, ell, used, ws, cs), output: () => list(g.buffers[1]!) }
  },
}
