/**
 * Counting loops that run several iterations per pass in the cpu backend (see `copiesPerPass` in
 * codegen.ts): a short straight-line body that reads or writes an element at an index of the
 * loop variable is emitted twice per pass (`CALL_FREE_COPIES` times where it calls nothing), each
 * later copy at the next value and left by a `break` where the loop ends before it, so V8 checks
 * each typed array once per pass (with checks on too, each copy with its iteration's asserts).
 * The iterations run in their order: the results are the interpreter's bit for bit.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { CALL_FREE_COPIES, cpuBackend, PAIRED_MAX_STATEMENTS, PAIRED_MIN_NODES } from './index.js'

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
fn csr(y: f64[], rowptr: i32[], col: i32[], val: f64[], x: f64[], p: f64) {
  for i in 0..len(x) {
    for q in rowptr[i]..rowptr[i + 1] { y[col[q]] += val[q] * x[i] }
  }
${pad}
}
fn smallcsr(y: f64[], rowptr: i32[], col: i32[], val: f64[], x: f64[]) {
  for i in 0..len(x) {
    for q in rowptr[i]..rowptr[i + 1] { y[col[q]] += val[q] * x[i] }
  }
}
fn smallrow(s: f64, a: f64[], r: i32[]) {
  for i in 0..len(a) { s += a[i] * 0.5 }
  for q in r[0]..r[1] { s += a[q] * 2.0 }
}
fn expdot(s: f64, a: f64[], b: f64[], p: f64) {
  for i in 0..len(a) { s += exp(a[i]) * b[i] }
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

  it(`runs ${CALL_FREE_COPIES} iterations per pass of a short straight-line body over elements that calls nothing (printed JS)`, () => {
    // before: `for (let i = a; i < b; i++) { v = (v + (p1[i] * p2[i])); }`
    const d = code(m, 'dot')
    expect(d).toMatch(new RegExp(`for \\(let (i\\d+) = a\\d+; \\1 < b\\d+; \\1 \\+= ${CALL_FREE_COPIES}\\) \\{`))
    for (let u = 1; u < CALL_FREE_COPIES; u++)
      expect(d).toMatch(new RegExp(`const (j\\d+) = i\\d+ \\+ ${u};\\n\\s*if \\(!\\(\\1 < b\\d+\\)\\) break;`))
    expect(d.match(/p1\[/g)).toHaveLength(CALL_FREE_COPIES)
    // a reversed loop steps down; the inverse (a loop the other way) too
    const s = code(m, 'scatter')
    expect(s).toMatch(
      new RegExp(`for \\(let (i\\d+) = \\(b\\d+ - 1\\); \\1 >= a\\d+; \\1 -= ${CALL_FREE_COPIES}\\) \\{`),
    )
    expect(s).toMatch(/const (j\d+) = i\d+ - 1;\n\s*if \(!\(\1 >= a\d+\)\) break;/)
    expect(code(m, 'scatter', true)).toMatch(new RegExp(`\\+= ${CALL_FREE_COPIES}\\) \\{`))
    // a CSR product's row (a scatter through an index array), five or so elements a row: before,
    // `for (let q = l; q < h; q++) { const c = p2[q]; v0[c] = (v0[c] + (p3[q] * x)); }`
    // (its bounds read elements: the first pass runs before the loop, see the next test)
    const c = code(m, 'csr')
    expect(c).toMatch(new RegExp(`\\+= ${CALL_FREE_COPIES}\\) \\{`))
    expect(c.match(/p3\[/g)).toHaveLength(2 * CALL_FREE_COPIES)
  })

  it('runs the first pass of a loop whose bounds read elements before the loop, in the pass of the code around it (printed JS)', () => {
    // `pass: if (a < b) { copy(a); if (!(a + 1 < b)) break pass; copy(a + 1); …; for (let i = a + 4; i < b; i += 4) { … } }`
    for (const [name, inverse, op, cmp] of [
      ['csr', false, '+', '<'],
      ['smallcsr', false, '+', '<'],
      ['csr', true, '-', '>='],
      ['smallrow', false, '+', '<'],
    ] as const) {
      const c = code(m, name, inverse)
      const where = `${name}${inverse ? ' (inverse)' : ''}`
      const head = c.match(/(pass\d+): if \((.*)\) \{\n/)
      expect(head, where).not.toBeNull()
      const [, label] = head!
      const rest = c.slice(c.indexOf(head![0]) + head![0].length)
      const first = rest.slice(0, rest.indexOf('for (let '))
      // the first pass: CALL_FREE_COPIES copies, each later one left by a break out of the block
      expect(first.match(new RegExp(`break ${label};`, 'g')), where).toHaveLength(CALL_FREE_COPIES - 1)
      expect(first.match(/break;/g), where).toBeNull()
      // then the loop from the value after the pass
      expect(rest, where).toMatch(
        new RegExp(
          `for \\(let (i\\d+) = [^;]+ \\${op} ${CALL_FREE_COPIES}; \\1 ${cmp} [ab]\\d+; \\1 \\${op}= ${CALL_FREE_COPIES}\\) \\{`,
        ),
      )
    }
    // (a loop whose bounds read no element: no first pass before it)
    expect(code(m, 'dot')).not.toMatch(/pass\d+: if/)
    expect(code(m, 'scatter')).not.toMatch(/pass\d+: if/)
  })

  it(`runs ${CALL_FREE_COPIES} iterations per pass of a loop whose bounds read elements in a function of fewer than ${PAIRED_MIN_NODES} nodes, and no other loop of it (printed JS)`, () => {
    for (const [name, step] of [
      ['smallcsr', `i\\d+ \\+= ${CALL_FREE_COPIES}\\) \\{`],
      ['smallrow', `i\\d+ \\+= ${CALL_FREE_COPIES}\\) \\{`],
    ] as const) {
      const c = code(m, name)
      expect(c, name).toMatch(new RegExp(step))
      // (one loop with copies: the row; the outer loop, the loop over len(a), one iteration per pass)
      expect(c.match(/\+= \d\) \{/g), name).toHaveLength(1)
      expect(c.match(/break;/g), name).toHaveLength(CALL_FREE_COPIES - 1)
      expect(c.match(/i\d+\+\+\)/g), name).toHaveLength(1)
      // (and so backwards: the inverse's row runs down, as many per pass)
      expect(code(m, name, true), name).toMatch(new RegExp(`-= ${CALL_FREE_COPIES}\\) \\{`))
    }
  })

  it('runs two iterations per pass of a body that calls a primitive (printed JS)', () => {
    const e = code(m, 'expdot')
    expect(e).toMatch(/\+= 2\) \{/)
    expect(e.match(/Math\.exp\(/g)).toHaveLength(2)
  })

  it(`leaves alone branches, nested loops, bodies without elements, bodies of more than ${PAIRED_MAX_STATEMENTS} statements and functions of fewer than ${PAIRED_MIN_NODES} nodes (but for loops whose bounds read elements)`, () => {
    const several = /[+-]= \d\) \{|break;/
    expect(code(m, 'small')).not.toMatch(several)
    expect(code(m, 'branchy')).not.toMatch(several)
    // (the inner loop is a short body over elements: several per pass; the outer one is not)
    const n = code(m, 'nested')
    expect(n.match(/\+= \d\) \{/g)).toHaveLength(1)
    expect(n.match(/i\d+\+\+\)/g)).toHaveLength(1)
    expect(code(m, 'scalars')).not.toMatch(several)
    expect(code(m, 'long')).not.toMatch(several)
  })

  it("runs the loops so with checks on too, each copy with its iteration's checks (see checked-copies.test.ts)", () => {
    const c = compileModule(parse({ text: programs, name: 'paired' }), { registry, backend: 'cpu', checks: true })
    for (const f of ['dot', 'scatter', 'csr'])
      expect(code(c, f), f).toMatch(new RegExp(`[+-]= ${CALL_FREE_COPIES}\\) \\{`))
    expect(code(c, 'expdot')).toMatch(/\+= 2\) \{/)
    // (a branch, a nested loop's outer loop: one iteration per pass, as without checks)
    expect(code(c, 'branchy')).not.toMatch(/[+-]= \d\) \{|break;/)
  })

  it('every range form and trip count (0 to 9: every remainder of a pass): the interpreter’s results bit for bit, forwards and backwards, checks on and off', () => {
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
          ).toMatch(new RegExp(`[+-]= ${CALL_FREE_COPIES}\\)`))
        for (let n = 0; n <= 9; n++)
          expect(go('cpu', n), `${range}, n = ${n}, checks ${checks}`).toEqual(go('interpreter', n))
      }
    }
  })

  it('a CSR product with rows of 0 to 9 elements, and a body that calls exp: the interpreter’s results bit for bit, forwards and backwards', () => {
    const ref = compileModule(parse({ text: programs, name: 'paired' }), {
      registry,
      backend: 'interpreter',
      checks: false,
    })
    const lengths = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 5]
    const rowptr = Int32Array.from({ length: lengths.length + 1 }, (_, i) =>
      lengths.slice(0, i).reduce((a, b) => a + b, 0),
    )
    const nnz = rowptr[lengths.length]!
    const col = Int32Array.from({ length: nnz }, (_, q) => (q * 7) % 6)
    const run = (mod: Record<string, unknown>) => {
      const y = new Float64Array(6)
      const val = Float64Array.from({ length: nnz }, (_, q) => Math.sin(q + 1))
      const x = Float64Array.from({ length: lengths.length }, (_, i) => Math.cos(i))
      const f = mod.csr as unknown as Run
      f(y, rowptr, col, val, x, 0.5)
      const after = Array.from(y)
      f.inverse(y, rowptr, col, val, x, 0.5)
      // (the small function's copy of the product: its rows run several per pass too)
      const g = mod.smallcsr as unknown as Run
      const z = new Float64Array(6)
      g(z, rowptr, col, val, x)
      const small = Array.from(z)
      g.inverse(z, rowptr, col, val, x)
      const e = mod.expdot as unknown as Run
      const outs = [0, 1, 2, 3, 5].map((n) => e(0, val.subarray(0, n), x.subarray(0, n), 0.5)[0])
      // (a row of every length 0 to 9 at every start, and a row whose bounds are reversed: none)
      const r = mod.smallrow as unknown as Run
      const rows: unknown[] = []
      for (let lo = 0; lo < 3; lo++) for (let k = -1; k <= 9; k++) rows.push(r(0, val, Int32Array.of(lo, lo + k))[0])
      return [after, Array.from(y), small, Array.from(z), outs, rows]
    }
    expect(run(m)).toEqual(run(ref))
    // (with checks on too, the small product in the same order: bit for bit)
    const checked = compileModule(parse({ text: programs, name: 'paired' }), { registry, backend: 'cpu', checks: true })
    const refChecked = compileModule(parse({ text: programs, name: 'paired' }), {
      registry,
      backend: 'interpreter',
      checks: true,
    })
    expect(run(checked)).toEqual(run(refChecked))
  })

  it('a range that ends at the i32 limits: the values a pass steps past them end the loop as one step does (checks off)', () => {
    // (\`rowup\`, \`rowdown\`: small functions whose loops' bounds read elements, see \`PAIRED_MIN_NODES\`)
    const text = `
fn rowup(s: f64, a: f64[], r: i32[]) {
  for i in r[0]..=r[1] { s += a[i - r[0]] * 2.0 }
}
fn rowdown(s: f64, a: f64[], r: i32[]) {
  for i in r[0]..=r[1] by -1 { s += a[r[0] - i] * 3.0 }
}
fn up(s: f64, a: f64[], lo: i32, p: f64) {
  for i in lo..=2147483647 { s += a[i - lo] * 2.0 }
${pad}
}
fn down(s: f64, a: f64[], hi: i32, p: f64) {
  for i in hi..=-2147483648 by -1 { s += a[hi - i] * 3.0 }
${pad}
}`
    const mod = compileModule(parse({ text, name: 'limits' }), { registry, backend: 'cpu', checks: false })
    const ref = compileModule(parse({ text, name: 'limits' }), { registry, backend: 'interpreter', checks: false })
    expect(code(mod, 'up')).toMatch(new RegExp(`\\+= ${CALL_FREE_COPIES}\\) \\{`))
    expect(code(mod, 'down')).toMatch(new RegExp(`-= ${CALL_FREE_COPIES}\\) \\{`))
    expect(code(mod, 'rowup')).toMatch(new RegExp(`\\+= ${CALL_FREE_COPIES}\\) \\{`))
    expect(code(mod, 'rowdown')).toMatch(new RegExp(`-= ${CALL_FREE_COPIES}\\) \\{`))
    for (let k = 1; k <= 9; k++) {
      const a = Float64Array.from({ length: k }, (_, j) => j + 0.5)
      const lo = 2147483647 - (k - 1)
      const hi = -2147483648 + (k - 1)
      for (const [name, bound] of [
        ['up', lo],
        ['down', hi],
      ] as const) {
        const got = (mod[name] as unknown as Run)(0, a, bound, 0.5)
        expect(got, `${name}, ${k} elements`).toEqual((ref[name] as unknown as Run)(0, a, bound, 0.5))
        // (every element read once)
        expect(got[0], `${name}, ${k} elements`).toBe((name === 'up' ? 2 : 3) * ((k * k) / 2))
      }
      for (const [name, bounds] of [
        ['rowup', Int32Array.of(lo, 2147483647)],
        ['rowdown', Int32Array.of(hi, -2147483648)],
      ] as const) {
        const got = (mod[name] as unknown as Run)(0, a, bounds)
        expect(got, `${name}, ${k} elements`).toEqual((ref[name] as unknown as Run)(0, a, bounds))
        expect(got[0], `${name}, ${k} elements`).toBe((name === 'rowup' ? 2 : 3) * ((k * k) / 2))
      }
    }
  })
})
