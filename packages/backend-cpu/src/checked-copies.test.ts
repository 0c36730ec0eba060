/**
 * With checks on, the cpu backend runs a short counting loop several iterations per pass as it
 * does without them (see `copiesPerPass` in codegen.ts): each copy of the body carries its
 * iteration's asserts, at the same places, on that iteration's values. So a program whose check
 * fails in some iteration fails as the reference interpreter does: the same error (code, message
 * with its values, source location), after the same writes, whichever copy of a pass it falls in
 * (rows of 0 to 9 elements: every position in a first and a second pass); and a program that
 * passes gives the interpreter's values bit for bit.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, TENET_FUNCTION } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { CALL_FREE_COPIES, cpuBackend, PAIRED_MIN_NODES } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** Statements that make a function large enough for its loops to run several iterations per pass. */
const pad = Array.from({ length: PAIRED_MIN_NODES / 2 }, (_, i) => `  p += ${i + 1}.5 * 0.25`).join('\n')

const programs = `
fn csr(y: f64[], rowptr: i32[], col: i32[], val: f64[], x: f64[], p: f64) {
  for i in 0..len(x) {
    for q in rowptr[i]..rowptr[i + 1] { y[col[q]] += val[q] * x[i] }
  }
${pad}
}
fn csrdown(y: f64[], rowptr: i32[], col: i32[], val: f64[], x: f64[], p: f64) {
  for i in 0..len(x) {
    for q in reverse rowptr[i]..rowptr[i + 1] { y[col[q]] -= val[q] * x[i] }
  }
${pad}
}
fn near(y: f64[], x: f64[], p: f64) {
  for i in 0..len(x) {
    t <- x[i] * 2.0
    y[i] += t
    t -> y[i]
  }
${pad}
}`

const compile = (backend: string) =>
  compileModule(parse({ text: programs, name: 'copies' }), { registry, backend, checks: true })
const cpu = compile('cpu')
const ref = compile('interpreter')

type Run = (...a: unknown[]) => unknown[]

function code(name: string): string {
  const info = (cpu[name] as unknown as Record<symbol, unknown>)[TENET_FUNCTION] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, false)
}

/** The error (or "no error") and the arrays after the call, on a backend's module. */
function outcome(m: Record<string, unknown>, name: string, args: () => unknown[]): string {
  const a = args()
  const error = raisedError(() => (m[name] as unknown as Run)(...a))
  const arrays = a.filter((v) => v instanceof Float64Array).map((v) => Array.from(v as Float64Array))
  return `${error}\n${JSON.stringify(arrays)}`
}

describe('several iterations per pass with checks on (cpu backend)', () => {
  it(`runs ${CALL_FREE_COPIES} iterations of a CSR row per pass, each copy with its bounds check (printed JS)`, () => {
    for (const [name, step] of [
      ['csr', '+='],
      ['csrdown', '-='],
    ] as const) {
      const c = code(name)
      // the version whose hoisted bounds hold: each copy checks its own y[col[q]]
      expect(c, name).toMatch(new RegExp(`\\${step} ${CALL_FREE_COPIES}\\) \\{`))
      const pass = c.slice(c.search(new RegExp(`\\${step} ${CALL_FREE_COPIES}\\) \\{`)))
      const body = pass.slice(0, pass.indexOf('\n          }\n'))
      expect(body.match(/rt\.fail\(/g), body).toHaveLength(CALL_FREE_COPIES)
      expect(body.match(/break;/g), body).toHaveLength(CALL_FREE_COPIES - 1)
    }
    // a body with a tolerance check (a call): two per pass
    expect(code('near')).toMatch(/\+= 2\) \{/)
    expect(code('near').match(/\$near\(/g)?.length).toBeGreaterThanOrEqual(2)
  })

  it('rows of 0 to 9 elements: a column out of range at every position fails as the interpreter does, after the same writes', () => {
    const lengths = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    const rowptr = Int32Array.from({ length: lengths.length + 1 }, (_, i) =>
      lengths.slice(0, i).reduce((a, b) => a + b, 0),
    )
    const nnz = rowptr[lengths.length]!
    for (const name of ['csr', 'csrdown'])
      for (const bad of [-1, 6, 2147483647, -2147483648])
        for (let q = -1; q < nnz; q += q < 20 ? 1 : 3) {
          const args = () => {
            const col = Int32Array.from({ length: nnz }, (_, k) => (k * 7) % 6)
            if (q >= 0) col[q] = bad
            const val = Float64Array.from({ length: nnz }, (_, k) => Math.sin(k + 1))
            const x = Float64Array.from({ length: lengths.length }, (_, i) => Math.cos(i))
            return [new Float64Array(6), rowptr, col, val, x, 0.5]
          }
          const want = outcome(ref, name, args)
          if (q < 0) expect(want).toMatch(/^no error/)
          else expect(want).toMatch(/^runtime\/out-of-bounds/)
          expect(outcome(cpu, name, args), `${name}, col[${q}] = ${bad}`).toBe(want)
        }
  })

  it('a row range past the end of col (the version that checks every access) fails as the interpreter does', () => {
    for (const name of ['csr', 'csrdown'])
      for (let extra = 0; extra <= 9; extra++) {
        const args = () => {
          const rowptr = Int32Array.of(0, 3, 5 + extra)
          const col = Int32Array.of(0, 1, 2, 3, 4)
          const val = Float64Array.of(0.5, -1, 2, 0.25, 3)
          return [new Float64Array(6), rowptr, col, val, Float64Array.of(1.5, -2), 0.5]
        }
        const want = outcome(ref, name, args)
        expect(want).toMatch(extra === 0 ? /^no error/ : /^runtime\/out-of-bounds/)
        expect(outcome(cpu, name, args), `${name}, ${extra} past the end`).toBe(want)
      }
  })

  it('ranges that end at the i32 limits, and an array one element short (the last iteration fails): as the interpreter', () => {
    const text = `
fn up(s: f64, a: f64[], lo: i32, p: f64) {
  for i in lo..=2147483647 { s += a[i - lo] * 2.0 }
${pad}
}
fn down(s: f64, a: f64[], hi: i32, p: f64) {
  for i in hi..=-2147483648 by -1 { s += a[hi - i] * 3.0 }
${pad}
}`
    const compileLimits = (backend: string) =>
      compileModule(parse({ text, name: 'limits' }), { registry, backend, checks: true })
    const [mod, refMod] = [compileLimits('cpu'), compileLimits('interpreter')]
    for (const [name, step] of [
      ['up', '+='],
      ['down', '-='],
    ] as const) {
      const info = (mod[name] as unknown as Record<symbol, unknown>)[TENET_FUNCTION] as {
        compiled: { sourceOf(n: string, inv: boolean): string }
      }
      // both versions of the loop (bounds hoisted, and checked per access) run four per pass
      expect(
        info.compiled.sourceOf(name, false).match(new RegExp(`\\${step} ${CALL_FREE_COPIES}\\) \\{`, 'g')),
      ).toHaveLength(2)
    }
    for (let k = 1; k <= 9; k++)
      for (const short of [0, 1]) {
        // (with \`short\`, the array is one element short: the last iteration's access fails)
        const a = Float64Array.from({ length: k - short }, (_, j) => j + 0.5)
        for (const [name, bound] of [
          ['up', 2147483647 - (k - 1)],
          ['down', -2147483648 + (k - 1)],
        ] as const) {
          const run = (m: Record<string, unknown>) => () => (m[name] as unknown as Run)(0, a, bound, 0.5)
          const want = raisedError(run(refMod))
          expect(want).toMatch(short ? /^runtime\/out-of-bounds/ : /^no error/)
          expect(raisedError(run(mod)), `${name}, ${k} elements`).toBe(want)
          if (!short) expect(run(mod)()).toEqual(run(refMod)())
        }
      }
  })

  it('a deallocation check that fails in any iteration of a pass fails as the interpreter does', () => {
    for (let n = 0; n <= 7; n++)
      for (let k = -1; k < n; k++) {
        const args = () => {
          const y = new Float64Array(n)
          if (k >= 0) y[k] = 0.75
          return [y, Float64Array.from({ length: n }, (_, i) => i + 0.5), 0.5]
        }
        const want = outcome(ref, 'near', args)
        expect(want).toMatch(k < 0 ? /^no error/ : /^runtime\/dealloc/)
        expect(outcome(cpu, 'near', args), `n = ${n}, y[${k}] nonzero`).toBe(want)
      }
  })
})
