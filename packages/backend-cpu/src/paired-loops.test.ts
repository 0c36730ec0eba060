/**
 * Counting loops that run two iterations per pass in the cpu backend (see `pairsIterations` in
 * codegen.ts): a short straight-line body that reads or writes an element at an index of the
 * loop variable is emitted twice per pass, the second copy at the next value and left by a
 * `break` where the loop ends after the first, so V8 checks each typed array once per two
 * elements. The iterations run in their order: the results are the interpreter's bit for bit.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend, PAIRED_MAX_STATEMENTS, PAIRED_MIN_NODES } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

function code(m: Record<string, unknown>, name: string, inverse = false): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, inverse)
}

type Run = ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }

/**
 * Statements that make a function large enough for its loops to be paired (see
 * `PAIRED_MIN_NODES`: a smaller function may be inlined by V8, which the copies could prevent):
 * updates of a scalar `p` from literals.
 */
const pad = Array.from({ length: PAIRED_MIN_NODES / 2 }, (_, i) => `  p += ${i + 1}.5 * 0.25`).join('\n')

const programs = `
fn dot(s: f64, a: f64[], b: f64[], p: f64) {
  for i in 0..len(a) { s += a[i] * b[i] }
${pad}
}
fn small(s: f64, a: f64[], b: f64[]) {
  for i in 0..len(a) { s += a[i] * b[i] }
}
fn scatter(g: f64[], x: f64[], a: i32, b: i32, c: f64, k: i32, p: f64) {
  for j in reverse 0..k {
    g[a + j] += c * (x[a + j] - x[b + j])
    g[b + j] -= c * (x[a + j] - x[b + j])
  }
${pad}
}
fn branchy(s: f64, a: f64[], p: f64) {
  for i in 0..len(a) {
    if (a[i] > 0.0, ~) { s += a[i] }
  }
${pad}
}
fn nested(s: f64, a: f64[], n: i32, p: f64) {
  for i in 0..n {
    for j in 0..n { s += a[i * n + j] }
  }
${pad}
}
fn scalars(s: f64, n: i32, p: f64) {
  for i in 0..n { s += f64(i) * 0.5 }
${pad}
}
fn long(s: f64, a: f64[], p: f64) {
  for i in 0..len(a) {
    s += a[i]
    s -= a[i] * 0.5
    s += a[i] * 0.25
    s -= a[i] * 0.125
    s += a[i] * 0.0625
  }
${pad}
}`

describe('loops that run two iterations per pass (cpu backend)', () => {
  const m = compileModule(parse({ text: programs, name: 'paired' }), { registry, backend: 'cpu', checks: false })

  it('pairs the iterations of a short straight-line body over elements (printed JS)', () => {
    // before: `for (let i = a; i < b; i++) { v = (v + (p1[i] * p2[i])); }`
    const d = code(m, 'dot')
    expect(d).toMatch(/for \(let (i\d+) = a\d+; \1 < b\d+; \1 \+= 2\) \{/)
    expect(d).toMatch(/const (j\d+) = i\d+ \+ 1;\n\s*if \(!\(\1 < b\d+\)\) break;/)
    expect(d.match(/p1\[/g)).toHaveLength(2)
    // a reversed loop steps down, two at a time; the inverse (a loop the other way) too
    const s = code(m, 'scatter')
    expect(s).toMatch(/for \(let (i\d+) = \(b\d+ - 1\); \1 >= a\d+; \1 -= 2\) \{/)
    expect(s).toMatch(/const (j\d+) = i\d+ - 1;\n\s*if \(!\(\1 >= a\d+\)\) break;/)
    expect(code(m, 'scatter', true)).toMatch(/\+= 2\) \{/)
  })

  it(`leaves alone branches, nested loops, bodies without elements, bodies of more than ${PAIRED_MAX_STATEMENTS} statements and functions of fewer than ${PAIRED_MIN_NODES} nodes`, () => {
    expect(code(m, 'small')).not.toMatch(/[+-]= 2\)|break;/)
    expect(code(m, 'branchy')).not.toMatch(/[+-]= 2\)|break;/)
    // (the inner loop is a short body over elements: paired; the outer one is not)
    const n = code(m, 'nested')
    expect(n.match(/\+= 2\)/g)).toHaveLength(1)
    expect(n.match(/i\d+\+\+\)/g)).toHaveLength(1)
    expect(code(m, 'scalars')).not.toMatch(/[+-]= 2\)|break;/)
    expect(code(m, 'long')).not.toMatch(/[+-]= 2\)|break;/)
  })

  it('leaves the loops alone with checks on (each iteration checks as written)', () => {
    const c = compileModule(parse({ text: programs, name: 'paired' }), { registry, backend: 'cpu', checks: true })
    for (const f of ['dot', 'scatter']) expect(code(c, f)).not.toMatch(/[+-]= 2\)|break;/)
  })

  it('every range form and trip count (0 to 7, odd and even): the interpreter’s results bit for bit, forwards and backwards, checks on and off', () => {
    const ranges = [
      '0..n',
      'reverse 0..n',
      '0..=n',
      'reverse 1..=n',
      'n..0 by -1',
      'reverse n..=0 by -1',
      '2..n',
      'n - 1..=1 by -1',
    ]
    for (const range of ranges) {
      const text = `
fn run(x: f64[], y: f64[], s: f64, n: i32, c: f64, p: f64) {
  for l in ${range} {
    x[l] += y[l + 1] * c + s
    y[l] -= x[l + 2] * 0.5
  }
${pad}
}`
      for (const checks of [false, true]) {
        const go = (backend: string, n: number) => {
          const mod = compileModule(parse({ text, name: 'ranges' }), { registry, backend, checks })
          const x = Float64Array.from({ length: 12 }, (_, j) => Math.sin(j + 1)),
            y = Float64Array.from({ length: 12 }, (_, j) => Math.cos(3 * j))
          const f = mod.run as unknown as Run
          const args = [x, y, 0.25, n, 0.7, 0.5]
          f(...args)
          const after = [Array.from(x), Array.from(y)]
          f.inverse(...args)
          return [after, Array.from(x), Array.from(y)]
        }
        if (!checks)
          expect(
            code(compileModule(parse({ text, name: 'ranges' }), { registry, backend: 'cpu', checks }), 'run'),
          ).toMatch(/[+-]= 2\)/)
        for (let n = 0; n <= 7; n++)
          expect(go('cpu', n), `${range}, n = ${n}, checks ${checks}`).toEqual(go('interpreter', n))
      }
    }
  })
})
