/**
 * Pass `finite-history` on printed IR: a history loop into a fresh `zeros` array and its inverse
 * loop (as `~routine` writes it), and the cases that must stay as they are. The compiled programs
 * run against the reference interpreter, with checks on, in `@tenet/backend-cpu`'s and
 * `@tenet/backend-wasm`'s `finite-history-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts } from '../index.js'
import { finiteHistory } from './index.js'

const fn = (text: string): FunctionDef => {
  const m = parse(text)
  return check(m.functions, [], createRegistry()).functions.get('f')!
}
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)

/** Horner's routine at one point, written out (its `~routine`), with pieces to vary. */
const horner = ({
  init = 'zeros(len(c))',
  first = 'acc[len(c) - 1] += c[len(c) - 1]',
  range = 'len(c) - 2..=0 by -1',
  w = 'k',
  e = 'acc[k + 1] * x + c[k]',
  between = '',
  extra = '',
  elem = 'f64',
} = {}) => `
fn f(out: f64, c: ${elem}[], x: ${elem}) {
  acc: ${elem}[] <- ${init}
  ${first}
  for k in ${range} {
    acc[${w}] += ${e}${extra}
  }
  out += f64(acc[0])${between}
  for k in reverse ${range} {
    ${extra ? extra.trim().replace('+=', '-=') : ''}
    acc[${w}] -= ${e}
  }
  ${first.replace('+=', '-=')}
  acc -> ${init}
}`

describe('pass `finite-history`', () => {
  it('writes the inverse loop of a history loop as `A[w] -= A[w]`', () => {
    const f = fn(horner())
    const before = body(f)
    expect(before).toContain('acc[k] -= acc[k + 1] * x + c[k]')
    expect(body(finiteHistory(f))).toBe(`acc: f64[] <- zeros(len(c))
acc[len(c) - 1] += c[len(c) - 1]
for k in len(c) - 2..=0 by -1 {
  acc[k] += acc[k + 1] * x + c[k]
}
out += f64(acc[0])
for k in reverse len(c) - 2..=0 by -1 {
  acc[k] -= acc[k]
}
acc[len(c) - 1] -= c[len(c) - 1]
acc -> zeros(len(c))`)
    // (the pass returns a new function: the input is unchanged)
    expect(body(f)).toBe(before)
  })

  it('takes f32 arrays, an upward loop reading the previous element, and w = c - v', () => {
    expect(body(finiteHistory(fn(horner({ elem: 'f32' }))))).toContain('acc[k] -= acc[k]\n')
    const up = horner({ first: 'acc[0] += c[0]', range: '1..len(c)', e: 'acc[k - 1] * x + c[k]' })
    expect(body(finiteHistory(fn(up)))).toContain('acc[k] -= acc[k]\n')
    // w = len(c) - 1 - k, k upwards: the element of the previous iteration is acc[w + 1]
    const down = horner({
      first: 'acc[len(c) - 1] += c[0]',
      range: '1..len(c)',
      w: 'len(c) - 1 - k',
      e: 'acc[len(c) - 1 - k + 1] * x + c[k]',
    })
    expect(body(finiteHistory(fn(down)))).toContain('acc[len(c) - 1 - k] -= acc[len(c) - 1 - k]\n')
  })

  it('leaves a loop that reads the element of a later iteration', () => {
    const f = fn(horner({ e: 'acc[k - 1] * x + c[k]', range: 'len(c) - 2..=1 by -1' }))
    expect(body(finiteHistory(f))).toContain('acc[k] -= acc[k - 1] * x + c[k]')
  })

  it('leaves a write index that may repeat (coefficient 2, or 0)', () => {
    const f = fn(horner({ first: 'acc[0] += 1.0', range: '0..div(len(c), 2)', w: '2 * k', e: 'c[k]' }))
    expect(body(finiteHistory(f))).toContain('acc[2 * k] -= c[k]')
    const g = fn(horner({ first: 'acc[1] += 1.0', range: '0..len(c)', w: '0', e: 'c[k]' }))
    expect(body(finiteHistory(g))).toContain('acc[0] -= c[k]')
  })

  it('leaves an update before the loop that may write what the loop writes', () => {
    const f = fn(horner({ first: 'acc[len(c) - 2] += c[0]' }))
    expect(body(finiteHistory(f))).toContain('acc[k] -= acc[k + 1] * x + c[k]')
    const g = fn(horner({ init: 'zeros(len(c))', first: 'acc[0] += c[0]' }))
    expect(body(finiteHistory(g))).toContain('acc[k] -= acc[k + 1] * x + c[k]')
  })

  it('leaves an array that is not an ancilla allocated as zeros (a parameter)', () => {
    const src = horner()
      .replace('fn f(out: f64, c: f64[], x: f64)', 'fn f(out: f64, c: f64[], x: f64, acc: f64[])')
      .replace('  acc: f64[] <- zeros(len(c))\n', '')
      .replace('  acc -> zeros(len(c))\n', '')
    const f = fn(src)
    expect(body(f)).not.toContain('zeros')
    expect(body(finiteHistory(f))).toContain('acc[k] -= acc[k + 1] * x + c[k]')
  })

  it('leaves an uncompute whose value may differ: something written in between', () => {
    for (const between of ['\n  x += 1.0', '\n  c[0] += 1.0', '\n  acc[len(c) - 1] += 1.0']) {
      const f = fn(horner({ between }))
      expect(body(finiteHistory(f))).toContain('acc[k] -= acc[k + 1] * x + c[k]')
    }
  })

  it('leaves an uncompute after a write to an array parameter (it may share memory with `c` through `.core`)', () => {
    const src = horner()
      .replace('fn f(out: f64, c: f64[], x: f64)', 'fn f(out: f64, c: f64[], x: f64, o: f64[])')
      .replace('  out += f64(acc[0])', '  o[0] += f64(acc[0])')
    const f = fn(src)
    expect(body(finiteHistory(f))).toContain('acc[k] -= acc[k + 1] * x + c[k]')
    // (a write to a scalar, or to an ancilla of the block, is no such write)
    const g = fn(horner({ between: '\n  out += 1.0' }))
    expect(body(finiteHistory(g))).toContain('acc[k] -= acc[k]\n')
  })

  it('leaves a body of two updates', () => {
    const f = fn(horner({ extra: '\n    out += 1.0' }))
    expect(body(finiteHistory(f))).toContain('acc[k] -= acc[k + 1] * x + c[k]')
  })

  it('leaves a value that reads the array other than at an element (len)', () => {
    const f = fn(horner({ e: 'acc[k + 1] * x + f64(len(acc))' }))
    expect(body(finiteHistory(f))).toContain('acc[k] -= acc[k + 1] * x + f64(len(acc))')
  })

  it('leaves i32 arrays', () => {
    const src = `
fn f(out: i32, c: i32[]) {
  acc: i32[] <- zeros(len(c))
  for k in 0..len(c) {
    acc[k] += c[k] * 3
  }
  out += acc[0]
  for k in reverse 0..len(c) {
    acc[k] -= c[k] * 3
  }
  acc -> zeros(len(c))
}`
    expect(body(finiteHistory(fn(src)))).toContain('acc[k] -= c[k] * 3')
  })

  /** The heat stencil's history (a nest over steps and elements), its first row before it, written out. */
  const heat = ({
    w = '(t + 1) * n + i',
    e = 'u[t * n + i] + r * (u[t * n + i - 1] - 2.0 * u[t * n + i] + u[t * n + i + 1])',
    inner = '1..n - 1',
    size = '(T + 1) * n',
  } = {}) => `
fn f(loss: f64, u0: f64[], r: f64, n: i32, T: i32) {
  u: f64[] <- zeros(${size})
  for i in 0..n {
    u[i] += u0[i]
  }
  for t in 0..T {
    for i in ${inner} {
      u[${w}] += ${e}
    }
  }
  loss += u[T * n]
  for t in reverse 0..T {
    for i in reverse ${inner} {
      u[${w}] -= ${e}
    }
  }
  for i in reverse 0..n {
    u[i] -= u0[i]
  }
  u -> zeros(${size})
}`

  it('writes the inverse nest of a stencil’s history (w = s·t + i + c, rows apart) as `A[w] -= A[w]`', () => {
    const f = fn(heat())
    expect(body(finiteHistory(f))).toBe(`u: f64[] <- zeros((T + 1) * n)
for i in 0..n {
  u[i] += u0[i]
}
for t in 0..T {
  for i in 1..n - 1 {
    u[(t + 1) * n + i] += u[t * n + i] + r * (u[t * n + i - 1] - 2.0 * u[t * n + i] + u[t * n + i + 1])
  }
}
loss += u[T * n]
for t in reverse 0..T {
  for i in reverse 1..n - 1 {
    u[(t + 1) * n + i] -= u[(t + 1) * n + i]
  }
}
for i in reverse 0..n {
  u[i] -= u0[i]
}
u -> zeros((T + 1) * n)`)
  })

  it('leaves a nest whose rows may overlap (the inner range as wide as the stride), or reading the next row', () => {
    // (i in 0..n + 1: a row's last element is the next row's first)
    const wide = fn(heat({ inner: '0..n + 1', e: 'u[t * n + i] * r', size: '(T + 2) * n' }))
    expect(body(finiteHistory(wide))).toContain('u[(t + 1) * n + i] -= u[t * n + i] * r')
    // (a stride that is not a polynomial of invariants times t)
    const odd = fn(heat({ w: 't * t + i', e: 'r', size: '(T + 1) * n' }))
    expect(body(finiteHistory(odd))).toContain('u[t * t + i] -= r')
    const next = fn(heat({ e: 'u[(t + 2) * n + i] * r', size: '(T + 3) * n' }))
    expect(body(finiteHistory(next))).toContain('u[(t + 1) * n + i] -= u[(t + 2) * n + i] * r')
    // (the same row: the element of the next iteration of i)
    const same = fn(heat({ e: 'u[(t + 1) * n + i + 1] * r', size: '(T + 2) * n' }))
    expect(body(finiteHistory(same))).toContain('u[(t + 1) * n + i] -= u[(t + 1) * n + i + 1] * r')
    // (and the previous one is an earlier iteration)
    const prev = fn(heat({ e: 'u[(t + 1) * n + i - 1] * r', size: '(T + 2) * n' }))
    expect(body(finiteHistory(prev))).toContain('u[(t + 1) * n + i] -= u[(t + 1) * n + i]\n')
  })

  it('leaves a nest whose first row overlaps the rows it writes', () => {
    const f = fn(heat({ w: 't * n + i', e: 'r', size: '(T + 1) * n' }))
    expect(body(finiteHistory(f))).toContain('u[t * n + i] -= r')
  })
})
