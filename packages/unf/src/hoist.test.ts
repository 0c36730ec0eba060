/**
 * Loop-invariant code motion (`hoist.ts`): what moves out of a loop and what stays, on terms and
 * on the generated code; values against the interpreter before the rewrite and against finite
 * differences.
 */
import { describe, expect, test } from 'vitest'
import { generate } from './codegen.js'
import { compile } from './compile.js'
import { ArrayValue, evaluate, fromHost, toHost } from './evaluate.js'
import { hoistInvariants } from './hoist.js'
import { OpTable } from './ops.js'
import * as T from './term.js'
import { c, printTerm, v, type Term } from './term.js'
import { finiteDifferences, flat, maxScaledError, rng } from './test-util.js'
import { arrayType } from './types.js'

const R1 = arrayType()
const R2 = arrayType(R1)
const ops = new OpTable()

/** A map over rows whose body binds an invariant `Σ B²` and a per-row `Σ row`. */
const rowsTimesSquares = (): Term =>
  T.map(
    v('M'),
    (row) => T.let_('q', T.sum(T.map(v('B'), (b) => T.mul(b, b))), T.let_('s', T.sum(row), T.mul(v('s'), v('q')))),
    'row',
  )

/** An array of rows as an interpreter value (a JS array is a tuple to `fromHost`). */
const rowsValue = (m: Float64Array[]) => new ArrayValue(m.map((row) => fromHost(row)))

const env = (m: Float64Array[], b: Float64Array) =>
  new Map([
    ['M', rowsValue(m)],
    ['B', fromHost(b)],
  ])

describe('loop-invariant code motion', () => {
  test('a let of a loop body that reads nothing the loop binds is bound once, before the loop', () => {
    const t = rowsTimesSquares()
    const h = hoistInvariants(t)
    expect(printTerm(h)).toMatch(/^let q = reduce .* B\) in\nmap \(row\. let s = reduce .* row in\ns \* q\) M$/)
    const r = rng(4)
    const m = Array.from({ length: 3 }, () => Float64Array.from({ length: 4 }, () => r()))
    const b = Float64Array.from({ length: 5 }, () => r())
    expect(toHost(evaluate(h, env(m, b), ops))).toEqual(toHost(evaluate(t, env(m, b), ops)))
    // the generated code sums B² once: one loop over B, outside the loop over rows
    const g = generate(
      t,
      [
        { name: 'M', type: R2 },
        { name: 'B', type: R1 },
      ],
      ops,
    )
    const lines = g.source.split('\n')
    const overB = lines.findIndex((l) => /const n\d+ = p1\.length;/.test(l))
    const overRows = lines.findIndex((l) => /for \(let j\d+ = 0; j\d+ < n\d+; j\d+\+\+\)/.test(l))
    expect(overB).toBeGreaterThanOrEqual(0)
    expect(overB).toBeLessThan(overRows)
    expect(g.source.match(/p1\.length/g)).toHaveLength(1)
  })

  test('a value invariant in nested loops moves out of all of them; dependent lets stay, in order', () => {
    const t = T.map(
      v('M'),
      (row) =>
        T.sum(
          T.map(
            row,
            (x) =>
              T.lets(
                [
                  ['k', T.op('exp', v('y'))],
                  ['u', T.mul(x, v('k'))],
                  ['w', T.mul(v('k'), c(2))],
                ],
                T.add(v('u'), v('w')),
              ),
            'x',
          ),
        ),
      'row',
    )
    const h = hoistInvariants(t)
    const printed = printTerm(h)
    expect(printed).toMatch(/^let k = exp\(y\) in\nlet w = k \* 2 in\nmap \(row\. /)
    expect(printed).toContain('let u = x * k in')
    const m = [Float64Array.of(0.5, -1, 2), Float64Array.of(3, 0.25, 1)]
    const e = new Map([
      ['M', rowsValue(m)],
      ['y', fromHost(0.3)],
    ])
    expect(toHost(evaluate(h, e, ops))).toEqual(toHost(evaluate(t, e, ops)))
  })

  test('what may fail, reads the element, or is an array stays in the loop', () => {
    const stays: Term[] = [
      // a map of two arrays checks their lengths
      T.map(v('M'), (row) => T.let_('q', T.dot(v('B'), v('B')), T.mul(T.sum(row), v('q'))), 'row'),
      // an array would be shared by every element of the result
      T.map(
        v('M'),
        (row) =>
          T.let_(
            'q',
            T.map(v('B'), (b) => T.mul(b, b)),
            T.mul(T.sum(row), T.sum(v('q'))),
          ),
        'row',
      ),
      // reads the element
      T.map(v('M'), (row) => T.let_('q', T.sum(row), T.mul(v('q'), v('q'))), 'row'),
    ]
    for (const t of stays) expect(hoistInvariants(t)).toEqual(t)
    // a name that would shadow a variable of the scope is not moved
    const shadow = T.let_('q', c(1), T.tuple(rowsTimesSquares(), v('q')))
    expect(printTerm(hoistInvariants(shadow))).toBe(printTerm(shadow))
  })

  test('a loop over no element still gives its result; gradients through moved values agree', () => {
    const t = rowsTimesSquares()
    const g = generate(
      T.sum(t),
      [
        { name: 'M', type: R2 },
        { name: 'B', type: R1 },
      ],
      ops,
    )
    expect(g.fn([], Float64Array.of(1, 2))).toBe(0)
    // ∇ of Σ_row (Σ row)(Σ B²): the transpose evaluates Σ B² per row, now once
    const cp = compile(
      [
        ['M', R2],
        ['B', R1],
      ],
      T.sum(t),
    )
    const r = rng(9)
    const args = [
      Array.from({ length: 3 }, () => Float64Array.from({ length: 4 }, () => r() - 0.5)),
      Float64Array.from({ length: 5 }, () => r() - 0.5),
    ]
    const [, grad] = cp.gradient(...args)
    expect(
      maxScaledError(
        flat(grad),
        finiteDifferences((...a) => cp.value(...a) as number, args),
      ),
    ).toBeLessThan(1e-6)
    const ref = toHost(
      evaluate(cp.stages.inverse, env(args[0] as Float64Array[], args[1] as Float64Array), cp.ops),
    ) as [number, unknown[]]
    expect(maxScaledError(flat(grad), flat(ref[1]))).toBeLessThan(1e-12)
  })
})
