/**
 * Pass `cancel-uncompute` on printed IR: the merge of two sorted index lists steered by a branch
 * keeper inside `@unchecked` (paper 000's sparse dot product, its `~{ }` written out as
 * preprocessing expands it), and the cases that must stay as they are. The compiled programs
 * run against the reference interpreter, with checks on, in `@tenet/backend-cpu`'s
 * `cancel-uncompute-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts } from '../index.js'
import { cancelUncompute, optimize } from './index.js'

const fn = (text: string): FunctionDef => {
  const m = parse(text)
  return check(m.functions, [], createRegistry()).functions.get('f')!
}
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)

/** The merge with a branch keeper, the decisions undone per column by `uncompute`, in `@unchecked` when `unchecked`. */
const keeper = (uncompute: string, { unchecked = true, counter = 'i32', extra = '' } = {}) => `
fn f(r: f64, n: i32, m: i32, ap: i32[], ar: i32[], av: f64[], bp: i32[], br: i32[], bv: f64[]) {
  keeper: bool[] <- zeros(2 * m)
  for j in 0..n {
    ia: ${counter} <- ${counter === 'i32' ? 'ap[j]' : 'f64(ap[j])'}
    ib: i32 <- bp[j]
    ${unchecked ? '@unchecked {' : '{'}
      for i in 0..ap[j + 1] - ap[j] + bp[j + 1] - bp[j] {
        if (${counter === 'i32' ? 'ia' : 'i32(ia)'} < ap[j + 1] && ib < bp[j + 1], ~) {
          r += av[ib] * 2.0
        }${extra}
        keeper[i] ^= ib < bp[j + 1] && br[ib] < ${counter === 'i32' ? 'ia' : 'i32(ia)'}
        if (keeper[i], ~) {
          ib += 1
        } else {
          ia += ${counter === 'i32' ? '1' : '1.0'}
        }
      }
      ${uncompute}
    }
    ia -> ${counter === 'i32' ? 'ap[j]' : 'f64(ap[j])'}
    ib -> bp[j]
  }
  keeper -> zeros(2 * m)
}`
const inverse = (counter = 'i32', dec = '1') => `for i in reverse 0..ap[j + 1] - ap[j] + bp[j + 1] - bp[j] {
        if (keeper[i], ~) {
          ib -= ${dec}
        } else {
          ia -= ${counter === 'i32' ? '1' : '1.0'}
        }
        keeper[i] ^= ib < bp[j + 1] && br[ib] < ${counter === 'i32' ? 'ia' : 'i32(ia)'}
      }`

/** The source's `{ … }` blocks are not IR: a plain block is its statements. */
const plainBlock = (src: string) => src.replace('    {\n', '').replace(/\n {4}}\n {4}ia ->/, '\n    ia ->')

describe('pass `cancel-uncompute`', () => {
  it('runs the merge on copies of the keeper and the counters, and drops the uncompute', () => {
    const f = fn(keeper(inverse()))
    const before = body(f)
    expect(before).toContain('for i in reverse')
    const after = body(cancelUncompute(f))
    expect(after).not.toContain('reverse')
    // the counters copied before the loop and dropped unchecked after it, the keeper's element
    // read per iteration: the checks after the loops read the original names, never written now
    expect(after).toBe(`keeper: bool[] <- zeros(2 * m)
for j in 0..n {
  ia: i32 <- ap[j]
  ib: i32 <- bp[j]
  @unchecked {
    ia$cu0: i32 <- ia
    ib$cu1: i32 <- ib
    for i in 0..ap[j + 1] - ap[j] + bp[j + 1] - bp[j] {
      keeper$cu2: bool <- keeper[i]
      if (ia$cu0 < ap[j + 1] && ib$cu1 < bp[j + 1], ~) {
        r += av[ib$cu1] * 2.0
      }
      keeper$cu2 ^= ib$cu1 < bp[j + 1] && br[ib$cu1] < ia$cu0
      if (keeper$cu2, ~) {
        ib$cu1 += 1
      } else {
        ia$cu0 += 1
      }
      @unchecked {
        keeper$cu2 -> false
      }
    }
    @unchecked {
      ia$cu0 -> 0
    }
    @unchecked {
      ib$cu1 -> 0
    }
  }
  ia -> ap[j]
  ib -> bp[j]
}
keeper -> zeros(2 * m)`)
  })

  it('runs in optimize with checks on only', () => {
    const f = fn(keeper(inverse()))
    const program = { functions: new Map([['f', f]]), registry: createRegistry(), writes: new Map() }
    const on = optimize(program as never, new Map(), { checks: true, tolerance: 1e-8 } as never, ['cancel-uncompute'])
    expect(body(on.program.functions.get('f')!)).not.toContain('reverse')
    const off = optimize(program as never, new Map(), { checks: false, tolerance: 1e-8 } as never, ['cancel-uncompute'])
    expect(body(off.program.functions.get('f')!)).toContain('reverse')
  })

  it('leaves loops outside @unchecked as they are (their checks stay where they were)', () => {
    const f = fn(plainBlock(keeper(inverse(), { unchecked: false })))
    expect(body(f)).not.toContain('@unchecked')
    expect(body(f)).toContain('for i in reverse')
    expect(body(cancelUncompute(f))).toBe(body(f))
  })

  it('leaves an uncompute that is not the exact inverse', () => {
    for (const wrong of [
      inverse('i32', '2'),
      inverse().replace('br[ib] < ia', 'br[ib] <= ia'),
      inverse().replace('for i in reverse', 'for i in'),
      inverse().replace('0..ap[j + 1]', '1..ap[j + 1]'),
    ]) {
      const f = fn(keeper(wrong))
      expect(body(cancelUncompute(f))).toBe(body(f))
    }
  })

  it('leaves float counters (an undone float update need not give its bits back)', () => {
    const f = fn(keeper(inverse('f64'), { counter: 'f64' }))
    expect(body(cancelUncompute(f))).toBe(body(f))
  })

  it('leaves the loops where the rest of the loop writes what the undone part reads', () => {
    // `br` is read by the keeper's decision and written by another statement of the loop
    const f = fn(keeper(inverse(), { extra: '\n        br[0] += 1' }))
    expect(body(cancelUncompute(f))).toBe(body(f))
  })
})
