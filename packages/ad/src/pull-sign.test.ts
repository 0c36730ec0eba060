/**
 * `pullSign` (the negations of a coefficient moved out of it, so that the adjoint's update is
 * `g -= |c|` instead of `g += -c`): bit-for-bit the same value on random expressions with
 * negations, negative literals, the four operations and calls, on the cpu backend and the
 * interpreter; and what the adjoint prints.
 */
import { describe, expect, it } from 'vitest'
import { parse, printExpr, printFunction, type Expr } from '@tenet/ir'
import { Random } from '@tenet/testing'
import { pullSign } from './expr.js'
import { compileAdjoint } from './index.js'
import { tag } from './test-util.js'

/** A random expression over a, b, c with unary minus, negative literals, + − × ÷ and sin. */
function randomExpr(rng: Random, depth: number): string {
  const leaf = () => rng.pick(['a', 'b', 'c', '-a', '-2.0', '0.5', '-0.75', '3.0'])
  if (depth === 0 || rng.next() < 0.2) return leaf()
  const r = rng.next()
  if (r < 0.2) return `-(${randomExpr(rng, depth - 1)})`
  if (r < 0.3) return `sin(${randomExpr(rng, depth - 1)})`
  const op = rng.pick(['+', '-', '*', '*', '/'])
  return `(${randomExpr(rng, depth - 1)} ${op} ${randomExpr(rng, depth - 1)})`
}

const updateValue = (text: string): Expr => {
  const f = parse({ text: `fn f(y: f64, a: f64, b: f64, c: f64) { y += ${text} }`, name: 't' }).functions[0]!
  return (f.body[0] as Extract<(typeof f.body)[0], { kind: 'update' }>).value
}

describe('pullSign', () => {
  it('moves negations out of products, quotients, sums and differences (printed)', () => {
    const show = (text: string) => {
      const { negative, value } = pullSign(updateValue(text))
      return `${negative ? '-' : '+'} ${printExpr(value)}`
    }
    expect(show('-a * b')).toBe('- a * b')
    expect(show('-(a * -2.0) * c')).toBe('+ a * 2.0 * c')
    expect(show('-a + -b')).toBe('- a + b')
    expect(show('a + -b')).toBe('+ a - b')
    expect(show('-a + b')).toBe('+ b - a')
    expect(show('a - -b')).toBe('+ a + b')
    expect(show('-a - b')).toBe('- a + b')
    expect(show('-a / sin(-b)')).toBe('- a / sin(-b)')
    expect(show('sin(a) * b')).toBe('+ sin(a) * b')
  })

  it.each(['cpu', 'interpreter'] as const)('gives the same bits as the expression on random ones (%s)', (backend) => {
    const rng = new Random(4242)
    const texts: string[] = []
    const fns: string[] = []
    for (let t = 0; t < 40; t++) {
      const text = randomExpr(rng, 4)
      const { negative, value } = pullSign(updateValue(text))
      texts.push(text)
      fns.push(`fn e${t}(y: f64, a: f64, b: f64, c: f64) { y += ${text} }`)
      fns.push(`fn p${t}(y: f64, a: f64, b: f64, c: f64) { y ${negative ? '-=' : '+='} ${printExpr(value)} }`)
    }
    const m = tag({ backend, checks: false })(fns.join('\n'))
    let finite = 0
    for (let t = 0; t < texts.length; t++)
      for (let k = 0; k < 5; k++) {
        const args = [0, rng.next() * 4 - 2, rng.next() * 4 - 2, rng.next() * 4 - 2] as const
        const want = m[`e${t}`]!(...args)[0] as number
        const got = m[`p${t}`]!(...args)[0] as number
        if (Number.isFinite(want)) finite++
        expect(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want)), `${texts[t]} at ${args}`).toBe(true)
      }
    expect(finite).toBeGreaterThan(150)
  })

  it('the adjoint subtracts where a coefficient is negative, with no negation left (printed)', () => {
    const m = tag()`fn f(s: f64, a: f64, b: f64, c: f64) { s += a - b * c; s -= -a * sin(c) }`
    const ir = printFunction(compileAdjoint(m.f!).adjoint.ir)
    expect(ir).toMatch(/g_b -= g_s \* c\n/)
    expect(ir).toMatch(/g_c -= g_s \* b\n/)
    expect(ir).toMatch(/g_a \+= g_s \* sin\(c\)\n/)
    expect(ir).toMatch(/g_c \+= g_s \* a \* cos\(c\)\n/)
    // (the restores are the user's updates, inverted)
    expect(ir).toMatch(/s \+= -a \* sin\(c\)\n/)
    expect(ir).not.toMatch(/g_\w+ [-+]= -/)
  })
})
