import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printStmt, type Stmt } from '@tenet/ir'
import { walk } from '@tenet/ir/backend'
import { compileModule, preprocess } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { heatLossSource, hornerLossSource, lvSource, rnnLossSource } from '@tenet/testing'
import { deadRows, dropDeadUpdates, privateArrays, ranged } from './dead.js'
import { grad } from './index.js'
import { centralDifferences, expectClose, flatWrt as flat } from './test-util.js'

type ForStmt = Extract<Stmt, { kind: 'for' }>

const fnOf = (src: string) => {
  const f = preprocess(parse({ text: src, name: 'rows' }).functions[0]!)
  walk(f.body, (s) => {
    if (s.kind === 'callstmt') s.target = 'function'
  })
  return f
}
const loopOf = (src: string) => fnOf(src).body.find((s) => s.kind === 'for') as ForStmt
const printed = (src: string, observed: string[]) =>
  dropDeadUpdates(fnOf(src), new Set(observed))
    .body.map((s) => printStmt(s, 0))
    .join('\n')

describe('rows of history arrays (`ranged`)', () => {
  // the index of the first update in the innermost loop of `for t …`, with that loop in scope
  const rowOf = (index: string, inner = 'for i in 1..n - 1') => {
    const loop = loopOf(`fn f(u: f64[], x: f64, n: i32, T: i32) {
      for t in 0..T { ${inner} { u[${index}] += x } }
    }`)
    const j = loop.body[0] as ForStmt
    const u = j.body[0] as Extract<Stmt, { kind: 'update' }>
    const idx = (u.target as Extract<typeof u.target, { kind: 'index' }>).index
    return ranged(idx, 't', new Map([[j.variable, j]]), (names) => names.has('t') || names.has('x'))
  }

  it('places t·n + i ± 1 and (t + 1)·n + i in the rows of t (the inner range inside [0, n))', () => {
    expect(rowOf('t * n + i')).toEqual({ key: 'n|', row: 0 })
    expect(rowOf('t * n + i - 1')).toEqual({ key: 'n|', row: 0 })
    expect(rowOf('t * n + i + 1')).toEqual({ key: 'n|', row: 0 })
    expect(rowOf('(t + 1) * n + i')).toEqual({ key: 'n|', row: 1 })
    expect(rowOf('n * (t + 2) + i + 1')).toEqual({ key: 'n|', row: 2 })
    // an invariant base joins the key
    expect(rowOf('T + t * n + i')).toEqual({ key: 'n|T', row: 0 })
    // literal strides: 2·t + 2 and 2·t + 3 are row 1
    expect(rowOf('2 * t + 3', 'for i in 0..1')).toEqual({ key: '2|', row: 1 })
    expect(rowOf('2 * t + i + 2', 'for i in 0..2')).toEqual({ key: '2|', row: 1 })
  })

  it('refuses indices that may leave the row or read what the body writes', () => {
    // i + 2 reaches n when i = n − 2
    expect(rowOf('t * n + i + 2')).toBeNull()
    // i − 2 is −1 when i = 1
    expect(rowOf('t * n + i - 2')).toBeNull()
    // i runs to n: i + 1 reaches n
    expect(rowOf('t * n + i + 1', 'for i in 0..n')).toBeNull()
    // a stride other than the inner loop's bound
    expect(rowOf('t * T + i')).toBeNull()
    // a step of 2, a base the body writes, a symbolic stride without an inner variable
    expect(rowOf('t * n + i', 'for i in 1..n - 1 by 2')).toBeNull()
    expect(rowOf('t * n + i + x')).toBeNull()
    expect(rowOf('t * n + 1')).toBeNull()
    // a literal stride whose range spans two rows
    expect(rowOf('2 * t + i + 1', 'for i in 0..2')).toBeNull()
  })

  it('makes t·n + j a private array of `for t` and base + i a private array of the inner loop', () => {
    const loop = loopOf(`fn f(pre: f64[], hs: f64[], W: f64[], H: i32, T: i32) {
      for t in 0..T {
        for i in 0..H {
          for j in 0..H { pre[t * H + i] += W[i * H + j] * hs[t * H + j] }
          hs[(t + 1) * H + i] += tanh(pre[t * H + i])
        }
      }
    }`)
    // hs is read in row t and written in row t + 1: not private; W is never indexed by t
    expect([...privateArrays(loop)]).toEqual(['pre'])
    // in the loop over i, pre is at t·H + i (base t·H) and W in row i (i·H + j, j in 0..H)
    const inner = loop.body[0] as ForStmt
    expect([...privateArrays(inner)].sort()).toEqual(['W', 'pre'])
  })
})

describe('dead rows of history arrays in loops (checks off)', () => {
  const heatLike = (extra: string) => `fn f(g: f64, u: f64[], r: f64, n: i32, T: i32) {
    for t in reverse 0..T {
      for i in reverse 1..n - 1 {
        u[(t + 1) * n + i] -= u[t * n + i] + r * (u[t * n + i - 1] - 2.0 * u[t * n + i] + u[t * n + i + 1])
        g += r * u[t * n + i]
        ${extra}
      }
    }
  }`

  it('drops the uncompute of row t + 1 in a loop counting down that reads only row t', () => {
    const out = printed(heatLike(''), ['g'])
    expect(out).not.toMatch(/u\[\(t \+ 1\) \* n \+ i\] -=/)
    expect(out).toMatch(/g \+= r \* u\[t \* n \+ i\]/)
  })

  it('keeps it where something else reads row t + 1, the array is read after the loop, or the loop counts up', () => {
    // another statement reads row t + 1
    expect(printed(heatLike('g += u[(t + 1) * n + i]'), ['g'])).toMatch(/u\[\(t \+ 1\) \* n \+ i\] -=/)
    // the array is observed after the loop
    expect(printed(heatLike(''), ['g', 'u'])).toMatch(/u\[\(t \+ 1\) \* n \+ i\] -=/)
    // counting up, the next iteration reads row t + 1 as its row t
    const up = printed(heatLike('').replace(/in reverse/g, 'in'), ['g'])
    expect(up).toMatch(/u\[\(t \+ 1\) \* n \+ i\] -=/)
    // an element passed to a call that may write it spoils the array
    const called = printed(heatLike('h(u[t * n + i])'), ['g'])
    expect(called).toMatch(/u\[\(t \+ 1\) \* n \+ i\] -=/)
  })

  it("drops an RNN adjoint's uncompute of its hidden states and pre-activations (two inner loops over j)", () => {
    const src = `fn f(pre: f64[], hs: f64[], W: f64[], U: f64[], xs: f64[], g_W: f64[], g_U: f64[], g_pre: f64[], g_hs: f64[], H: i32, D: i32, T: i32) {
      for t in reverse 0..T {
        for i in reverse 0..H {
          hs[(t + 1) * H + i] -= tanh(pre[t * H + i])
          g_pre[t * H + i] += g_hs[(t + 1) * H + i] * (1.0 - tanh(pre[t * H + i]) * tanh(pre[t * H + i]))
          for j in reverse 0..D {
            pre[t * H + i] -= U[i * D + j] * xs[t * D + j]
            g_U[i * D + j] += g_pre[t * H + i] * xs[t * D + j]
          }
          for j in reverse 0..H {
            pre[t * H + i] -= W[i * H + j] * hs[t * H + j]
            g_W[i * H + j] += g_pre[t * H + i] * hs[t * H + j]
            g_hs[t * H + j] += g_pre[t * H + i] * W[i * H + j]
          }
        }
      }
    }`
    const out = printed(src, ['g_W', 'g_U'])
    expect(out).not.toMatch(/hs\[\(t \+ 1\) \* H \+ i\] -=/)
    expect(out).not.toMatch(/pre\[t \* H \+ i\] -=/)
    expect(out).toMatch(/g_W\[i \* H \+ j\] \+= g_pre\[t \* H \+ i\] \* hs\[t \* H \+ j\]/)
    expect(out).toMatch(/g_hs\[t \* H \+ j\] \+=/)
    // with hs observed afterwards, its uncompute stays
    expect(printed(src, ['g_W', 'g_U', 'hs'])).toMatch(/hs\[\(t \+ 1\) \* H \+ i\] -=/)
  })

  it('finds the rows directly: the highest written row counting down, the lowest counting up', () => {
    const loop = loopOf(`fn f(g: f64, xs: f64[], h: f64, T: i32) {
      for t in reverse 0..T {
        xs[2 * t + 3] -= xs[2 * t + 1] * h
        xs[2 * t + 2] -= xs[2 * t] * h
        g += xs[2 * t] * xs[2 * t + 1]
      }
    }`)
    expect([...deadRows(loop, new Set(['g']))].map((s) => printStmt(s, 0))).toEqual([
      'xs[2 * t + 3] -= xs[2 * t + 1] * h',
      'xs[2 * t + 2] -= xs[2 * t] * h',
    ])
    expect(deadRows({ ...loop, reverse: false }, new Set(['g'])).size).toBe(0)
  })

  it("reads a step of −1 as counting the other way: Horner's uncompute `in reverse … by -1` counts up", () => {
    // the adjoint sweep of `for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * x + c[k] }`
    const loop = loopOf(`fn f(g: f64[], acc: f64[], g_acc: f64[], c: f64[], x: f64) {
      for k in reverse len(c) - 2..=0 by -1 {
        acc[k] -= acc[k + 1] * x + c[k]
        g_acc[k + 1] += g_acc[k] * x
        g[0] += g_acc[k] * acc[k + 1]
      }
    }`)
    // counting up, row k of acc is never read again (later iterations read k + 2 and above)
    expect([...deadRows(loop, new Set(['g', 'g_acc']))].map((s) => printStmt(s, 0))).toEqual([
      'acc[k] -= acc[k + 1] * x + c[k]',
    ])
    // the forward recurrence counts down: iteration k − 1 reads what iteration k wrote
    expect(deadRows({ ...loop, reverse: false }, new Set(['g', 'g_acc'])).size).toBe(0)
    // a step that is not a literal: nothing is known about the direction
    expect(deadRows({ ...loop, step: { ...loop.step!, kind: 'var', name: 'x' } as never }, new Set(['g'])).size).toBe(0)
    // read after the loop: kept
    expect(deadRows(loop, new Set(['g', 'g_acc', 'acc'])).size).toBe(0)
  })
})

// The programs whose adjoints this changes, as gradients: checks off (dead updates dropped)
// against checks on (nothing dropped) and against central differences of the forward run. The
// bench kernels' listings come from @tenet/testing; `sweep_loss` (the heat stencil reading the
// new row) and `euler_loss` (RK4's integrator cut to one stage) are this test's own variants.
const programs = `
${heatLossSource}
fn sweep_loss(loss: f64, u0: f64[], r: f64, n: i32, T: i32) {
  routine {
    u: f64[] <- zeros((T + 1) * n)
    for i in 0..n { u[i] += u0[i] }
    for t in 0..T {
      for i in 1..n - 1 {
        u[(t + 1) * n + i] += u[t * n + i] + r * u[(t + 1) * n + i - 1] * u[t * n + i + 1]
      }
    }
  }
  for i in 0..n { loss += u[T * n + i] * u[T * n + i] }
  ~routine
}
${lvSource}
fn euler_loss(loss: f64, x0: f64[], p: f64[], h: f64, steps: i32) {
  routine {
    xs: f64[] <- zeros(2 * steps + 2)
    xs[0] += x0[0]
    xs[1] += x0[1]
    for t in 0..steps {
      routine {
        a0, a1 <- 0.0, 0.0
        lv(a0, a1, xs[2 * t], xs[2 * t + 1], p)
      }
      xs[2 * t + 2] += xs[2 * t] + h * a0
      xs[2 * t + 3] += xs[2 * t + 1] + h * a1
      ~routine
    }
  }
  loss += xs[2 * steps] * xs[2 * steps + 1]
  ~routine
}
${rnnLossSource}
${hornerLossSource}
`

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
const compile = (backend: string, checks: boolean) =>
  compileModule(parse({ text: programs, name: 'rows' }), { registry: registry(), backend, checks })

describe('gradients with the dead rows dropped agree with checks on and with central differences', () => {
  const wave = (n: number, s: number) => Float64Array.from({ length: n }, (_, i) => 0.5 * Math.sin(s * (i + 1)))
  const cases: Array<[string, unknown[], number[]]> = [
    [
      'heat_loss',
      [0, Float64Array.from(wave(8, 0.7), (v, i) => (i === 0 || i === 7 ? 0 : v)), wave(8, 1.3), 0.3, 8, 5],
      [1, 2, 3],
    ],
    // a Gauss–Seidel-like sweep: the adjoint reads row t + 1 itself (nothing of it is dropped)
    ['sweep_loss', [0, wave(7, 0.6), 0.4, 7, 4], [1, 2]],
    ['euler_loss', [0, Float64Array.of(1.2, 0.8), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.05, 6], [1, 2, 3]],
    ['rnn_loss', [0, wave(9, 0.9), wave(6, 1.7), wave(3, 2.3), wave(8, 0.4), 3, 2, 4], [1, 2, 3, 4]],
    // a recurrence counting down (`by -1`): its uncompute in the adjoint sweep counts up
    ['horner_loss', [0, wave(6, 0.8), wave(9, 1.9), wave(9, 0.5)], [1, 2, 3]],
  ]
  for (const backend of ['cpu', 'wasm']) {
    it(`heat, an integrator's trajectory, a tanh RNN and Horner on ${backend}`, () => {
      const fast = compile(backend, false)
      const checked = compile(backend, true)
      for (const [name, args, wrt] of cases) {
        const g = grad(fast[name]!, { loss: 0 })
        const ref = grad(checked[name]!, { loss: 0 })
        const mine = flat(g(...args) as unknown[], wrt)
        // twice: the pooled ancillas of the gradient program are reused without being restored
        expectClose(flat(g(...args) as unknown[], wrt), mine, 0, `${name} second call`)
        expectClose(mine, flat(ref(...args) as unknown[], wrt), 1e-12, `${name} checks on`)
        expectClose(mine, centralDifferences(checked[name]!, args, wrt), 1e-7, `${name} central differences`)
        expect(g.lastLoss).toBeCloseTo(ref.lastLoss, 14)
      }
    })
  }
})
