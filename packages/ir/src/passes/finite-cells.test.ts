/**
 * Pass `finite-cells` on printed IR: a loop nest that computes cells of its own iteration (an RNN's
 * pre-activation) and then a history element from them, and its inverse (as `~routine` writes
 * it); and the cases that must stay as they are. The compiled programs run against the reference
 * interpreter, with checks on, in `@tenet/backend-wasm`'s `finite-cells-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts } from '../index.js'
import { finiteCells, finiteHistory } from './index.js'

const fn = (text: string): FunctionDef => {
  const m = parse(text)
  return check(m.functions, [], createRegistry()).functions.get('f')!
}
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)

/** The kernels' tanh RNN (`rnnLossSource`) with its `~routine` written out, with pieces to vary. */
const rnn = ({
  cell = 't * H + i',
  e = 'tanh(pre[t * H + i])',
  w = '(t + 1) * H + i',
  params = '',
  allocPre = 'pre: f64[] <- zeros(T * H)\n  ',
  freePre = '\n  pre -> zeros(T * H)',
  extra = '',
  extraInverse = '',
  between = '',
  elem = 'f64',
} = {}) => `
fn f(loss: ${elem}, W: ${elem}[], b: ${elem}[], H: i32, T: i32${params}) {
  hs: ${elem}[] <- zeros((T + 1) * H)
  ${allocPre}for t in 0..T {
    for i in 0..H {
      pre[${cell}] += b[i]
      for j in 0..H {
        pre[${cell}] += W[i * H + j] * hs[t * H + j]
      }${extra}
      hs[${w}] += ${e}
    }
  }
  for i in 0..H {
    loss += hs[T * H + i] * hs[T * H + i]
  }${between}
  for t in reverse 0..T {
    for i in reverse 0..H {
      hs[${w}] -= ${e}${extraInverse}
      for j in reverse 0..H {
        pre[${cell}] -= W[i * H + j] * hs[t * H + j]
      }
      pre[${cell}] -= b[i]
    }
  }${freePre}
  hs -> zeros((T + 1) * H)
}`

/** The inverse's first statement as it is left. */
const left = (o: { w?: string; e?: string } = {}) =>
  `hs[${o.w ?? '(t + 1) * H + i'}] -= ${o.e ?? 'tanh(pre[t * H + i])'}\n`

describe('pass `finite-cells`', () => {
  it('writes the first statement of the inverse nest as `A[w] -= A[w]`, the cells’ uncompute kept', () => {
    const f = fn(rnn())
    const before = body(f)
    expect(before).toContain(left())
    // (finite-history does not take a body of several statements)
    expect(body(finiteHistory(f))).toBe(before)
    expect(body(finiteCells(f))).toBe(`hs: f64[] <- zeros((T + 1) * H)
pre: f64[] <- zeros(T * H)
for t in 0..T {
  for i in 0..H {
    pre[t * H + i] += b[i]
    for j in 0..H {
      pre[t * H + i] += W[i * H + j] * hs[t * H + j]
    }
    hs[(t + 1) * H + i] += tanh(pre[t * H + i])
  }
}
for i in 0..H {
  loss += hs[T * H + i] * hs[T * H + i]
}
for t in reverse 0..T {
  for i in reverse 0..H {
    hs[(t + 1) * H + i] -= hs[(t + 1) * H + i]
    for j in reverse 0..H {
      pre[t * H + i] -= W[i * H + j] * hs[t * H + j]
    }
    pre[t * H + i] -= b[i]
  }
}
pre -> zeros(T * H)
hs -> zeros((T + 1) * H)`)
    // (the pass returns a new function: the input is unchanged)
    expect(body(f)).toBe(before)
  })

  it('takes f32 arrays and a value that reads an earlier iteration’s cell', () => {
    expect(
      body(
        finiteCells(
          fn(rnn({ elem: 'f32', e: 'pre[t * H + i] * pre[t * H + i]', allocPre: 'pre: f32[] <- zeros(T * H)\n  ' })),
        ),
      ),
    ).toContain('hs[(t + 1) * H + i] -= hs[(t + 1) * H + i]\n')
    // (the cells of earlier rows: written before)
    for (const e of ['tanh(pre[t * H + i]) * pre[(t - 1) * H + i]', 'pre[t * H + i] - pre[(t - 2) * H + i]']) {
      expect(body(finiteCells(fn(rnn({ e }))))).toContain('hs[(t + 1) * H + i] -= hs[(t + 1) * H + i]\n')
    }
  })

  it('takes a single loop whose body computes a cell first', () => {
    const src = `
fn f(loss: f64, x: f64[]) {
  A: f64[] <- zeros(len(x) + 1)
  B: f64[] <- zeros(len(x))
  for k in 0..len(x) {
    B[k] += x[k] * A[k]
    A[k + 1] += exp(B[k])
  }
  loss += A[len(x)]
  for k in reverse 0..len(x) {
    A[k + 1] -= exp(B[k])
    B[k] -= x[k] * A[k]
  }
  B -> zeros(len(x))
  A -> zeros(len(x) + 1)
}`
    expect(body(finiteCells(fn(src)))).toContain('A[k + 1] -= A[k + 1]\n')
  })

  it('leaves a value that reads a later iteration’s cell (the inverse has uncomputed it)', () => {
    const f = fn(
      rnn({
        e: 'tanh(pre[t * H + i]) * pre[(t + 1) * H + i]',
        allocPre: 'pre: f64[] <- zeros((T + 1) * H)\n  ',
        freePre: '\n  pre -> zeros((T + 1) * H)',
      }),
    )
    expect(body(finiteCells(f))).toContain(left({ e: 'tanh(pre[t * H + i]) * pre[(t + 1) * H + i]' }))
    const g = fn(
      rnn({
        e: 'tanh(pre[t * H + i]) * pre[t * H + i + 1]',
        allocPre: 'pre: f64[] <- zeros((T + 1) * H)\n  ',
        freePre: '\n  pre -> zeros((T + 1) * H)',
      }),
    )
    expect(body(finiteCells(g))).toContain(left({ e: 'tanh(pre[t * H + i]) * pre[t * H + i + 1]' }))
  })

  it('leaves cells that other iterations may write (an index without i, or two indices)', () => {
    const f = fn(rnn({ cell: 't', e: 'tanh(pre[t])' }))
    expect(body(finiteCells(f))).toContain(left({ e: 'tanh(pre[t])' }))
    const g = fn(
      rnn({ extra: '\n      pre[t * H + i + 1] += b[i]', extraInverse: '\n      pre[t * H + i + 1] -= b[i]' }),
    )
    expect(body(finiteCells(g))).toContain(left())
  })

  it('leaves cells in an array parameter (it may share memory with W through `.core`)', () => {
    const f = fn(rnn({ params: ', pre: f64[]', allocPre: '', freePre: '' }))
    expect(body(f)).not.toContain('pre -> zeros')
    expect(body(finiteCells(f))).toContain(left())
  })

  it('leaves a body that writes the history array elsewhere, or a value that reads a name the loop writes', () => {
    const f = fn(rnn({ extra: '\n      hs[t * H + i] += b[i]', extraInverse: '\n      hs[t * H + i] -= b[i]' }))
    expect(body(finiteCells(f))).toContain(left())
    const g = fn(
      rnn({
        params: ', s: f64',
        extra: '\n      s += b[i]',
        extraInverse: '\n      s -= b[i]',
        e: 'tanh(pre[t * H + i]) * s',
      }),
    )
    expect(body(finiteCells(g))).toContain(left({ e: 'tanh(pre[t * H + i]) * s' }))
  })

  it('leaves an uncompute whose value may differ: something written in between', () => {
    for (const between of ['\n  pre[0] += 1.0', '\n  W[0] += 1.0', '\n  hs[0] += 1.0']) {
      expect(body(finiteCells(fn(rnn({ between }))))).toContain(left())
    }
    // (a write to a scalar is no such write)
    expect(body(finiteCells(fn(rnn({ between: '\n  loss += 1.0' }))))).toContain(
      'hs[(t + 1) * H + i] -= hs[(t + 1) * H + i]\n',
    )
  })

  it('leaves an inverse that does not start with the history update', () => {
    const src = rnn().replace(
      `      hs[(t + 1) * H + i] -= tanh(pre[t * H + i])
      for j in reverse 0..H {
        pre[t * H + i] -= W[i * H + j] * hs[t * H + j]
      }`,
      `      for j in reverse 0..H {
        pre[t * H + i] -= W[i * H + j] * hs[t * H + j]
      }
      hs[(t + 1) * H + i] -= tanh(pre[t * H + i])`,
    )
    expect(body(finiteCells(fn(src)))).toContain(left())
  })
})
