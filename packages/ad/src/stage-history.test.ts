import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, printStmt, type FunctionDef } from '@tenet/ir'
import { compileModule, interpreterBackend, preprocess, TENET_FUNCTION } from '@tenet/reversible'

type Info = { program: { functions: Map<string, FunctionDef> } }
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad } from './index.js'
import { HISTORY_ELEMENTS, stagePairs } from './stage-history.js'
import { centralDifferences, expectClose, flatWrt as flat } from './test-util.js'

/** The stage pairs of function `name` of `src` (type-checked), as [printed loop head, split, stages]. */
function pairsOf(src: string, name: string): Array<[string, number, string[]]> {
  const program = check(
    parse({ text: src, name: 'stages' }).functions.map((f) => preprocess(f)),
    [],
    createRegistry(),
  )
  const f = program.functions.get(name) as FunctionDef
  const pairs = stagePairs(f.body, (x) => program.writes.get(x.callee))
  return [...new Set(pairs.values())].map((p) => [
    printStmt({ ...p.forward, body: [] }, 0),
    p.split,
    p.stages.map((s) => s.name),
  ])
}

const stage = `
fn stage(a: f64, b: f64, x: f64, y: f64) {
  a += x * y - 0.1 * x * x
  b += 0.5 * a + 0.1 * sin(x)
}`

describe('stagePairs', () => {
  it('finds a loop whose routine computes stages, with its inverse later in the block', () => {
    expect(
      pairsOf(
        `${stage}
        fn f(loss: f64, x: f64[], n: i32) {
          routine {
            s <- 0.0
            for t in 0..n {
              routine {
                a, b <- 0.0, 0.0
                stage(a, b, x[0], x[1] * f64(t))
              }
              s += a * b
              ~routine
            }
          }
          loss += s * s
          ~routine
        }`,
        'f',
      ),
    ).toEqual([['for t in 0..n { }', 3, ['a', 'b']]])
  })

  it('refuses where a statement between the loops writes what the loop reads, or the stages write more', () => {
    // c is written between the loop and its inverse (and restored: still refused)
    expect(
      pairsOf(
        `${stage}
        fn f(loss: f64, x: f64[], n: i32) {
          c <- 0.0
          routine {
            s <- 0.0
            for t in 0..n {
              routine {
                a, b <- 0.0, 0.0
                stage(a, b, x[0], c)
              }
              s += a * b
              ~routine
            }
          }
          c += 1.0
          loss += s * s
          c -= 1.0
          ~routine
          c -> 0.0
        }`,
        'f',
      ),
    ).toEqual([])
    // the head writes s, which it did not allocate
    expect(
      pairsOf(
        `fn f(loss: f64, x: f64[], n: i32) {
          routine {
            s, r <- 0.0, 0.0
            for t in 0..n {
              routine {
                a <- 0.0
                a += x[0] * f64(t)
                r += x[1]
              }
              s += a * a
              ~routine
            }
          }
          loss += s * s
          ~routine
        }`,
        'f',
      ),
    ).toEqual([])
    // no stage ancilla at the head of the routine
    expect(
      pairsOf(
        `fn f(loss: f64, x: f64[], y: f64[], n: i32) {
          routine {
            s <- 0.0
            for t in 0..n {
              routine { y[0] += x[0] }
              s += y[0]
              ~routine
            }
          }
          loss += s
          ~routine
        }`,
        'f',
      ),
    ).toEqual([])
  })
})

const programs = `${stage}
// stages of a routine in a loop over any range: the copy accumulates into a scalar
fn range_loss(loss: f64, x: f64[], lo: i32, hi: i32, st: i32) {
  routine {
    s <- 0.0
    for t in lo..hi by st {
      routine {
        a, b <- 0.0, 0.0
        stage(a, b, x[0], x[1] * f64(t % 5))
      }
      s += a * b + x[2] * a
      ~routine
    }
  }
  loss += s * s
  ~routine
}
fn closed_loss(loss: f64, x: f64[], lo: i32, hi: i32, st: i32) {
  routine {
    s <- 0.0
    for t in lo..=hi by st {
      routine {
        a, b <- 0.0, 0.0
        stage(a, b, x[0], x[1] * f64(t % 5))
      }
      s += a * b + x[2] * a
      ~routine
    }
  }
  loss += s * s
  ~routine
}
// an integrator: the trajectory in an ancilla, two stages per step (a midpoint rule)
fn mid_loss(loss: f64, x0: f64[], p: f64[], h: f64, steps: i32) {
  routine {
    xs: f64[] <- zeros(steps + 1)
    xs[0] += x0[0]
    for t in 0..steps {
      routine {
        k1, k2, u <- 0.0, 0.0, 0.0
        k1 += p[0] * xs[t] - p[1] * xs[t] * xs[t]
        u += xs[t] + h / 2.0 * k1
        k2 += p[0] * u - p[1] * u * u
      }
      xs[t + 1] += xs[t] + h * k2
      ~routine
    }
  }
  loss += xs[steps] * xs[steps]
  ~routine
}
// the same integrator in a callee that writes its final state: the pair is in the callee
fn mid(out: f64[], x0: f64[], p: f64[], h: f64, steps: i32) {
  routine {
    xs: f64[] <- zeros(steps + 1)
    xs[0] += x0[0]
    for t in 0..steps {
      routine {
        k1, k2, u <- 0.0, 0.0, 0.0
        k1 += p[0] * xs[t] - p[1] * xs[t] * xs[t]
        u += xs[t] + h / 2.0 * k1
        k2 += p[0] * u - p[1] * u * u
      }
      xs[t + 1] += xs[t] + h * k2
      ~routine
    }
  }
  out[0] += xs[steps]
  ~routine
}
fn called_loss(loss: f64, x0: f64[], p: f64[], h: f64, steps: i32) {
  routine {
    o: f64[] <- zeros(1)
    mid(o, x0, p, h, steps)
  }
  loss += o[0] * o[0]
  ~routine
}
`

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)
const compile = (backend: string, checks: boolean) =>
  compileModule(parse({ text: programs, name: 'stages' }), { registry: registry(), backend, checks })

describe('stage histories in the adjoint-only program', () => {
  it('stores the stages in the forward loop and loads them in the backward one (checks off only)', () => {
    const g = grad(compile('cpu', false).mid_loss!, { loss: 0 })
    const printed = printFunction(g.program.ir)
    // the history: rows estimated from the range (capped), one row of three stages per iteration
    const cap = Math.floor(HISTORY_ELEMENTS / 3)
    expect(printed).toContain(`$rows0: i32 <- i32(min(abs(f64(steps) - f64(0)) + 1.0, ${cap + 1}.0))`)
    expect(printed).toContain(`$history1: f64[] <- zeros($rows0 * 3 * min(div(${cap}, $rows0), 1))`)
    expect(printed).toContain(`if ($rows0 <= ${cap}, ~) {`)
    for (const [j, s] of ['k1', 'k2', 'u'].entries()) {
      // (the row of iteration t is t: a step of 1 from 0)
      const at = `$history1[t * 3${j ? ` + ${j}` : ''}]`
      // (stored exactly, -0 included: moved into its zeroed element, then copied back for the
      // uncompute; loaded exactly too, allocated at its element where a SWAP from zero left a
      // zero behind)
      // (the copy back, `${s} += ${at}`, goes where the uncompute does not read the stage)
      expect(printed.split(`SWAP(${s}, ${at})\n`).length - 1).toBe(1)
      expect(printed.split(`${s}: f64 <- ${at}\n`).length - 1).toBe(1)
    }
    // the backward loop where the history is kept recomputes no stage: one evaluation of k2's
    // right-hand side per forward loop (kept or not) and one in the plain backward loop
    expect(printed.match(/k2 \+= p\[0\] \* u - p\[1\] \* u \* u/g)).toHaveLength(3)
    // a callee's adjoints (its call and its uncall) keep the stages of its own loop pair
    const called = grad(compile('cpu', false).called_loss!, { loss: 0 })
    const functions = [
      ...(called.program as unknown as Record<symbol, Info>)[TENET_FUNCTION]!.program.functions.values(),
    ]
    const kept = functions.filter((f) => printFunction(f).includes('$history')).map((f) => f.name)
    // (and their copies specialised for what the caller reads, `$live<n>`)
    expect(kept.every((n) => n.startsWith('mid$'))).toBe(true)
    expect(kept.filter((n) => n.startsWith('mid$adj$live')).length).toBeGreaterThan(0)
    expect(kept.filter((n) => n.startsWith('mid$inv$adj$live')).length).toBeGreaterThan(0)
    // with checks on, the program is the plain adjoint
    const checked = printFunction(grad(compile('cpu', true).mid_loss!, { loss: 0 }).program.ir)
    expect(checked).not.toContain('$history')
  })

  const x = Float64Array.of(0.7, -0.4, 0.3)
  const B = 2 ** 31
  const ranges: Array<[number, number, number]> = [
    [0, 7, 1],
    [3, 3, 1], // empty
    [5, -4, 1], // empty, backwards
    [9, -4, -2],
    [-B, B - 1, 2 ** 30], // huge bounds: the difference overflows an i32
    [B - 1, -B, -(2 ** 29)],
    [-7, 11, 3],
    [-B, -B + 6, 1], // rows t − lo at the bottom of the i32 range
    [B - 1, B - 7, -1], // rows lo − t at the top
  ]
  const cases: Array<[string, unknown[], number[]]> = [
    ...ranges.flatMap(
      ([lo, hi, st]): Array<[string, unknown[], number[]]> => [
        ['range_loss', [0, x, lo, hi, st], [1]],
        ['closed_loss', [0, x, lo, hi, st], [1]],
      ],
    ),
    ['mid_loss', [0, Float64Array.of(0.8), Float64Array.of(1.1, 0.3), 0.05, 40], [1, 2, 3]],
    ['called_loss', [0, Float64Array.of(0.8), Float64Array.of(1.1, 0.3), 0.05, 40], [1, 2, 3]],
  ]
  for (const backend of ['cpu', 'wasm', 'interpreter'])
    it(`agree with checks on, the two sweeps and central differences on ${backend}`, () => {
      const fast = compile(backend, false)
      const checked = compile(backend, true)
      for (const [name, args, wrt] of cases) {
        const what = `${name}(${args.slice(2).join(', ')})`
        const g = grad(fast[name]!, { loss: 0 })
        expect(g.program.ir.name).toMatch(/\$adjonly$/)
        const mine = flat(g(...args) as unknown[], wrt)
        expectClose(flat(g(...args) as unknown[], wrt), mine, 0, `${what} second call`)
        const sweeps = grad(fast[name]!, { loss: 0, fuse: false })
        expectClose(mine, flat(sweeps(...args) as unknown[], wrt), 1e-12, `${what} two sweeps`)
        const ref = grad(checked[name]!, { loss: 0 })
        expectClose(mine, flat(ref(...args) as unknown[], wrt), 1e-12, `${what} checks on`)
        expectClose(mine, centralDifferences(checked[name]!, args, wrt), 1e-6, `${what} central differences`)
        expect(g.lastLoss).toBeCloseTo(ref.lastLoss, 12)
      }
    })

  for (const backend of ['cpu', 'wasm'])
    it(`recomputes the stages of a loop longer than the history holds on ${backend}`, () => {
      const fast = compile(backend, false)
      const rows = Math.floor(HISTORY_ELEMENTS / 3)
      // rows - 1 steps fit (the estimate is one more than the count); rows + 2 do not
      for (const steps of [rows - 1, rows + 2]) {
        const args = [0, Float64Array.of(0.8), Float64Array.of(1.1, 0.3), 1e-6, steps]
        const mine = flat(grad(fast.mid_loss!, { loss: 0 })(...args) as unknown[], [1, 2, 3])
        const sweeps = flat(grad(fast.mid_loss!, { loss: 0, fuse: false })(...args) as unknown[], [1, 2, 3])
        expectClose(mine, sweeps, 1e-10, `${steps} steps`)
      }
    })
})
