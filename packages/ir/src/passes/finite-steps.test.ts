/**
 * Pass `finite-steps` on printed IR: a loop whose steps compute scalars of their own and write a
 * history array (an RK2-like integrator, written out as `~routine` writes it), its inverse loop
 * rewritten, and the cases that must stay as they are. The compiled programs run against the
 * reference interpreter, with checks on, in `@tenet/backend-wasm`'s `finite-steps-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts } from '../index.js'
import { finiteSteps } from './index.js'

const fn = (text: string): FunctionDef => {
  const m = parse(text)
  return check(m.functions, [], createRegistry()).functions.get('f')!
}
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)

/**
 * Midpoint steps of dx = -p·x·y, dy = x into a trajectory `xs[2·t + 2]`, `xs[2·t + 3]`, the
 * stages in scalars computed and uncomputed per step, and the inverse loop, with pieces to vary.
 */
const midpoint = ({
  n = '2 * T + 2',
  first = 'xs[0] += x0',
  range = '0..T',
  w0 = '2 * t + 2',
  w1 = '2 * t + 3',
  r0 = '2 * t',
  r1 = '2 * t + 1',
  between = '',
  stage = 'k0 += p * xs[R0] * xs[R1]',
  stageInverse = '',
  order = 'w1 first',
  elem = 'f64',
} = {}) => {
  const s = (x: string) => x.replaceAll('R0', r0).replaceAll('R1', r1)
  // (no f64 literal next to f32 values)
  const half = elem === 'f32' ? 'p' : '0.5'
  const zero = elem === 'f32' ? 'f32(0.0)' : '0.0'
  const P = `
    k0 <- ${zero}
    k1 <- ${zero}
    m <- ${zero}
    ${s(stage)}
    k1 += xs[${r0}]
    m += xs[${r0}] - ${half} * k0`
  const uncompute = (st: string) => `
    m -= xs[${r0}] - ${half} * k0
    k1 -= xs[${r0}]
    ${s(st)}
    m -> ${zero}
    k1 -> ${zero}
    k0 -> ${zero}`
  const Q = uncompute(stage.replace('+=', '-='))
  // (the inverse loop's uncompute: the same statements, unless a test varies them)
  const QM = uncompute(stageInverse || stage.replace('+=', '-='))
  const up0 = `xs[${w0}] += xs[${r0}] - m * xs[${r1}]`
  const up1 = `xs[${w1}] += xs[${r1}] + k1`
  const inv = order === 'w1 first' ? [up1, up0] : [up0, up1]
  return `
fn f(out: ${elem}, x0: ${elem}, p: ${elem}, T: i32) {
  xs: ${elem}[] <- zeros(${n})
  ${first}
  for t in ${range} {${P}
    ${up0}
    ${up1}${Q}
  }
  out += xs[2 * T]${between}
  for t in reverse ${range} {${P}
    ${inv.map((u) => u.replace('+=', '-=')).join('\n    ')}${QM}
  }
  ${first.replace('+=', '-=')}
  xs -> zeros(${n})
}`
}

/** The printed inverse loop (from `for t in reverse` to its closing brace). */
const inverseLoop = (f: FunctionDef): string => {
  const b = body(f)
  const at = b.indexOf('for t in reverse')
  return b.slice(at, b.indexOf('\n}', at) + 2)
}

describe('pass `finite-steps`', () => {
  it('writes the inverse loop of a loop of steps as `A[w] -= A[w]` alone', () => {
    const f = fn(midpoint())
    const before = body(f)
    expect(inverseLoop(f)).toContain('xs[2 * t + 2] -= xs[2 * t] - m * xs[2 * t + 1]')
    expect(inverseLoop(f)).toContain('k0 <- 0.0')
    const after = finiteSteps(f)
    expect(inverseLoop(after)).toBe(`for t in reverse 0..T {
  xs[2 * t + 3] -= xs[2 * t + 3]
  xs[2 * t + 2] -= xs[2 * t + 2]
}`)
    // (everything else as it was: the forward loop, the first write, the deallocation check)
    expect(body(after).replace(inverseLoop(after), '')).toBe(before.replace(inverseLoop(f), ''))
    // (the pass returns a new function: the input is unchanged)
    expect(body(f)).toBe(before)
  })

  it('rewrites strides other than 2, negative ones and downward loops, and f32 elements', () => {
    for (const v of [
      { n: '3 * T + 3', w0: '3 * t + 3', w1: '3 * t + 4', r0: '3 * t', r1: '3 * t + 1' },
      {
        n: '2 * T + 2',
        w0: '2 * T - 2 * t - 2',
        w1: '2 * T - 2 * t - 1',
        r0: '2 * T - 2 * t',
        r1: '2 * T - 2 * t + 1',
        first: 'xs[2 * T] += x0',
      },
      {
        range: 'T - 1..=0 by -1',
        n: '2 * T + 4',
        w0: '2 * t',
        w1: '2 * t + 1',
        r0: '2 * t + 2',
        r1: '2 * t + 3',
        first: 'xs[2 * T + 2] += x0',
      },
      { elem: 'f32' },
      { order: 'same' },
    ]) {
      const f = fn(midpoint(v))
      const after = inverseLoop(finiteSteps(f))
      expect(after, JSON.stringify(v)).not.toContain('k0')
      expect(after.split('\n')).toHaveLength(4)
      expect(after).toMatch(/xs\[(.*)\] -= xs\[\1\]/)
    }
  })

  it('leaves the loop where a step reads its own element, a later one, or an element of its own row twice', () => {
    for (const v of [
      // (the element this step writes, before it writes it: zero in the loop, not in the inverse)
      { stage: 'k0 += p * xs[2 * t + 2]' },
      // (the next step's element: zero in the loop, already uncomputed in the inverse... or not)
      { stage: 'k0 += p * xs[2 * t + 4]' },
      { stage: 'k0 += p * xs[2 * t + 5]' },
      // (two updates of one element per step: offsets 2 apart with stride 2)
      { w1: '2 * t + 4', n: '2 * T + 4' },
      // (a downward loop reading the element that an earlier step of the upward order would write)
      { range: 'T - 1..=0 by -1', n: '2 * T + 4' },
    ]) {
      const f = fn(midpoint(v))
      expect(body(finiteSteps(f)), JSON.stringify(v)).toBe(body(f))
    }
  })

  it('leaves the loop where something between changes what the steps read, or the steps differ', () => {
    for (const v of [
      { between: '\n  p += 1.0' },
      { between: '\n  xs[0] += 1.0' },
      // (the uncompute is not the same statements: a different stage)
      { stageInverse: 'k0 -= p * xs[2 * t] * xs[2 * t + 1] + 0.0' },
      // (a first write inside the written range)
      { first: 'xs[4] += x0' },
      // (a host read: len of an array the steps do not read is fine, a write of T is not)
      { between: '\n  T += 1' },
    ]) {
      const f = fn(midpoint(v))
      expect(body(finiteSteps(f)), JSON.stringify(v)).toBe(body(f))
    }
  })
})
