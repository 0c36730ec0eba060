import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printStmt, type FunctionDef, type Stmt } from '@tenet/ir'
import { walk } from '@tenet/ir/backend'
import { compileModule, generatedCode, preprocess } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { rnnLossSource } from '@tenet/testing'
import { deadRows } from './dead.js'
import { grad } from './index.js'
import { centralDifferences, expectClose, flatWrt as flat } from './test-util.js'
import { valueHolders } from './value-holders.js'

const fnOf = (src: string): FunctionDef => {
  const f = preprocess(parse({ text: src, name: 'holders' }).functions[0]!)
  walk(f.body, (s) => {
    if (s.kind === 'callstmt') s.target = 'function'
  })
  return f
}
/** The printed value holders of the (first) function of `src`, type-checked. */
const holders = (src: string): string[] => {
  const program = check([preprocess(parse({ text: src, name: 'holders' }).functions[0]!)], [], createRegistry())
  const f = [...program.functions.values()][0]!
  return [...valueHolders(f.body, { effectful: new Set(), writes: program.writes })].map((s) => printStmt(s, 0))
}

describe('valueHolders', () => {
  it('finds the only writer of a history array whose loop nest writes each element once', () => {
    expect(
      holders(`fn f(x: f64[], H: i32, T: i32) {
        hs: f64[] <- zeros((T + 1) * H)
        for t in 0..T { for i in 0..H { hs[(t + 1) * H + i] += tanh(x[t * H + i]) } }
        hs -> zeros((T + 1) * H)
      }`),
    ).toEqual(['hs[(t + 1) * H + i] += tanh(x[t * H + i])'])
    // the loops in the other order (i outer), a closed range, a loop counting down, `-=`
    expect(
      holders(`fn f(x: f64[], n: i32, m: i32) {
        a: f64[] <- zeros(n * m)
        for i in 0..n { for j in m - 1..=0 by -1 { a[j * n + i] -= exp(x[j]) } }
        a -> zeros(n * m)
      }`),
    ).toEqual(['a[j * n + i] -= exp(x[j])'])
    // a scalar ancilla's first update
    expect(
      holders(`fn f(y: f64, x: f64) {
        s <- 0.0
        s += sqrt(x)
        y += s
        s -= sqrt(x)
        s -> 0.0
      }`),
    ).toEqual(['s += sqrt(x)'])
  })

  it('refuses where an element may be written twice, or was written before', () => {
    const none = (body: string, params = 'x: f64[], n: i32, T: i32') =>
      expect(holders(`fn f(${params}) {\n${body}\n}`)).toEqual([])
    // a loop whose variable the index does not name writes the same elements again
    none(`a: f64[] <- zeros(n)
      for t in 0..T { for i in 0..n { a[i] += tanh(x[i]) } }
      a -> zeros(n)`)
    // strides that overlap: t·n + i with i in 0..n + 1 reaches the next row
    none(`a: f64[] <- zeros(T * n + 1)
      for t in 0..T { for i in 0..n + 1 { a[t * n + i] += tanh(x[i]) } }
      a -> zeros(T * n + 1)`)
    // two writers: the first loop's update is a holder, the second's is not
    expect(
      holders(`fn f(x: f64[], n: i32) {
        a: f64[] <- zeros(n)
        for i in 0..n { a[i] += tanh(x[i]) }
        for i in 0..n { a[i] += exp(x[i]) }
        a -> zeros(n)
      }`),
    ).toEqual(['a[i] += tanh(x[i])'])
    // two writers in one nest
    none(`a: f64[] <- zeros(n)
      for i in 0..n {
        a[i] += tanh(x[i])
        a[i] += exp(x[i])
      }
      a -> zeros(n)`)
    // a write before the nest (itself a holder: the first write of a[0])
    expect(
      holders(`fn f(x: f64[], n: i32) {
        a: f64[] <- zeros(n)
        a[0] += 1.0
        for i in 0..n { a[i] += tanh(x[i]) }
        a -> zeros(n)
      }`),
    ).toEqual(['a[0] += 1.0'])
    // a triangular nest (the inner bound reads the outer variable)
    none(`a: f64[] <- zeros(n * n)
      for i in 0..n { for j in 0..i { a[i * n + j] += tanh(x[j]) } }
      a -> zeros(n * n)`)
    // a nonlinear index
    none(`a: f64[] <- zeros(n * n)
      for i in 0..n { a[i * i] += tanh(x[i]) }
      a -> zeros(n * n)`)
    // a step of 2 and a bound the nest writes
    none(`a: f64[] <- zeros(n)
      for i in 0..n by 2 { a[i] += tanh(x[i]) }
      a -> zeros(n)`)
    // a scalar ancilla written (swapped) before its update, or not allocated as zero
    none(
      `s <- 0.0
      SWAP(s, y)
      s += tanh(y)
      y += s
      s -= tanh(y)
      SWAP(s, y)
      s -> 0.0`,
      'y: f64',
    )
    none(
      `s <- 1.0
      s += tanh(y)
      z += s
      s -= tanh(y)
      s -> 1.0`,
      'y: f64, z: f64',
    )
  })
})

describe('dead rows: a read of the element the dropped updates write, before them', () => {
  const loopOf = (src: string) => fnOf(src).body.find((s) => s.kind === 'for') as Extract<Stmt, { kind: 'for' }>
  const dropped = (body: string) =>
    [
      ...deadRows(
        loopOf(`fn f(hs: f64[], g: f64[], p: f64[], H: i32, T: i32) {
          for t in reverse 0..T {
            for i in 0..H {
              ${body}
            }
          }
        }`),
        new Set(['g']),
      ),
    ].map((s) => printStmt(s, 0))
  it('drops the restore when the only read of its row is of its own element, before it', () => {
    expect(
      dropped(`g[t * H + i] += hs[(t + 1) * H + i]
               hs[(t + 1) * H + i] -= p[t * H + i]`),
    ).toEqual(['hs[(t + 1) * H + i] -= p[t * H + i]'])
  })
  it('keeps it when the read comes after it, or reads another element of the row', () => {
    expect(
      dropped(`hs[(t + 1) * H + i] -= p[t * H + i]
               g[t * H + i] += hs[(t + 1) * H + i]`),
    ).toEqual([])
    expect(
      dropped(`g[t * H + i] += hs[(t + 1) * H + H - 1 - i]
               hs[(t + 1) * H + i] -= p[t * H + i]`),
    ).toEqual([])
  })
})

const programs = `
${rnnLossSource}
// exp and sqrt histories, one of them with -=, read back by later steps
fn growth_loss(loss: f64, x: f64[], a: f64, n: i32, T: i32) {
  routine {
    e: f64[] <- zeros(T * n)
    r: f64[] <- zeros(T * n)
    for t in 0..T {
      for i in 0..n {
        e[t * n + i] -= exp(a * x[i] + 0.1 * f64(t))
        r[t * n + i] += sqrt(1.0 + x[i] * x[i] - e[t * n + i])
      }
    }
  }
  for k in 0..T * n { loss += r[k] * e[k] }
  ~routine
}
// a scalar holder, and an array written twice (no holder: the gradient reads tanh again)
fn twice_loss(loss: f64, x: f64[], n: i32) {
  for i in 0..n {
    routine {
      s <- 0.0
      s += exp(x[i])
    }
    loss += s * s
    ~routine
  }
  routine {
    a: f64[] <- zeros(n)
    for i in 0..n { a[i] += tanh(x[i]) }
    for i in 0..n { a[i] += tanh(2.0 * x[i]) }
  }
  for i in 0..n { loss += a[i] * a[i] }
  ~routine
}
`

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
const compile = (backend: string, checks: boolean) =>
  compileModule(parse({ text: programs, name: 'holders' }), { registry: registry(), backend, checks })

describe('gradients that read value holders', () => {
  const wave = (n: number, s: number) => Float64Array.from({ length: n }, (_, i) => 0.5 * Math.sin(s * (i + 1)))

  it('the RNN gradient reads the hidden state instead of computing tanh again (cpu)', () => {
    const g = grad(compile('cpu', false).rnn_loss!, { loss: 0 })
    const code = generatedCode(g.program)
    // once in the forward part, none in the backward sweep (its restore of hs is dropped)
    expect(code?.match(/Math\.tanh/g)).toHaveLength(1)
    // the adjoint (with checks: the restore stays) takes 1 − tanh² from a loaded element of hs
    const adjoint = generatedCode(grad(compile('cpu', true).rnn_loss!, { loss: 0, fuse: false }).adjoint) ?? ''
    expect(adjoint).toMatch(/const (c\d+) = v\d+\[c\d+\];\n.*\(1 - \(\1 \* \1\)\)/)
  })

  const cases: Array<[string, unknown[], number[]]> = [
    ['rnn_loss', [0, wave(9, 0.9), wave(6, 1.7), wave(3, 2.3), wave(8, 0.4), 3, 2, 4], [1, 2, 3, 4]],
    ['growth_loss', [0, wave(5, 0.8), 0.7, 5, 3], [1, 2]],
    ['twice_loss', [0, wave(6, 1.1), 6], [1]],
  ]
  for (const backend of ['cpu', 'wasm'])
    for (const fuse of [true, false])
      it(`agree with checks on and central differences on ${backend}${fuse ? '' : ' (two sweeps)'}`, () => {
        const fast = compile(backend, false)
        const checked = compile(backend, true)
        for (const [name, args, wrt] of cases) {
          const g = grad(fast[name]!, { loss: 0, fuse })
          const ref = grad(checked[name]!, { loss: 0, fuse })
          const mine = flat(g(...args) as unknown[], wrt)
          expectClose(flat(g(...args) as unknown[], wrt), mine, 0, `${name} second call`)
          expectClose(mine, flat(ref(...args) as unknown[], wrt), 1e-12, `${name} checks on`)
          expectClose(mine, centralDifferences(checked[name]!, args, wrt), 1e-7, `${name} central differences`)
          expect(g.lastLoss).toBeCloseTo(ref.lastLoss, 14)
        }
      })
})
