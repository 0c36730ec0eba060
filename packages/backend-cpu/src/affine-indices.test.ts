/**
 * Strength reduction of element addresses in the cpu backend (see `affineIndices` in
 * codegen.ts): in a counting loop whose body is one straight-line run, an index `q0 + q1·v + c`
 * whose stride q1 reads a name reads a running local that the loop steps by q1, instead of
 * computing `i + 1 + m·l` anew.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

function body(m: Record<string, unknown>, name: string, inverse = false): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, inverse)
}

type Run = ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }

const columns = `
fn col(x: f64[], y: f64[], i: i32, m: i32, n: i32) {
  for l in 0..n {
    x[i + m * l] += y[i + 1 + m * l] * 2.0
    SWAP(x[i + 1 + m * l], y[i + m * l])
  }
}
fn back(x: f64[], y: f64[], m: i32, n: i32) {
  for l in reverse 0..=n {
    x[2 * l + 1] -= y[m * l - l]
  }
}
fn plain(x: f64[], y: f64[], n: i32) {
  for l in 0..n {
    x[l] += y[l]
  }
}
fn rows(x: f64[], y: f64[], i: i32, n: i32) {
  for j in 0..n {
    x[i * n + j] += y[n * n + j] * 2.0
  }
}`

describe('element addresses stepped with the loop variable (cpu backend)', () => {
  const m = compileModule(parse({ text: columns, name: 'aff' }), { registry, backend: 'cpu', checks: false })

  it('reads x[i + m·l] and x[i + 1 + m·l] from one local stepped by m (printed JS)', () => {
    const code = body(m, 'col')
    // before: \`p0[((p2 + Math.imul(p3, i)) | 0)]\` and \`p1[((((p2 + 1) | 0) + Math.imul(p3, i)) | 0)]\`
    const local = code.match(/let (o\d+) = \(\(\(p2\) \| 0\) \+ Math\.imul\((d\d+), a\d+\)\) \| 0;/)
    expect(local).not.toBeNull()
    const [, o, d] = local!
    expect(code).toContain(`${o} = (${o} + ${d}) | 0) {`)
    // (the run shares each address: \`const c = o\` and \`const c = ((o + 1) | 0)\`)
    expect(code).toMatch(new RegExp(`const c\\d+ = ${o};`))
    expect(code).toMatch(new RegExp(`const c\\d+ = \\(\\(${o} \\+ 1\\) \\| 0\\);`))
    expect(code).not.toMatch(/Math\.imul\(p3, i\d+\)/)
    // a reversed loop starts at its last value and steps down; (m − 1)·l is stepped, 2l + 1 (a
    // constant stride, computed from the loop variable as cheaply) is not
    const b = body(m, 'back')
    expect(b.match(/let o\d+ = /g)).toHaveLength(1)
    expect(b).toMatch(/(o\d+) = \(\1 - d\d+\) \| 0\) \{/)
    // an index that is the loop variable itself keeps it, and so do unit strides from a hoisted
    // base (i·n + j and n·n + j in a loop over j)
    expect(body(m, 'plain')).not.toMatch(/let o\d+/)
    expect(body(m, 'rows')).not.toMatch(/let o\d+/)
  })

  it('leaves the addresses alone with checks on (the asserts check each index as written)', () => {
    const c = compileModule(parse({ text: columns, name: 'aff' }), { registry, backend: 'cpu', checks: true })
    expect(body(c, 'col')).not.toMatch(/let o\d+ = /)
  })

  it('random loops of affine accesses: the interpreter’s results bit for bit, forwards and backwards, checks on and off', () => {
    let state = 2026
    const rand = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0
      return (state >>> 8) % n
    }
    // indices in range for arrays of 40 (l ≤ 5, i ≤ 3, m ≤ 3), in several forms of one base or of
    // different ones, the loop variable alone, and an element of an index array (not affine)
    const forms = [
      'i + m * l',
      'i + 1 + m * l',
      'm * l + 2',
      'l * m + i',
      '2 * l',
      '2 * l + 1',
      'l',
      'l + i',
      'k[l]',
      '3 * (l + 1) - i',
    ]
    const elem = (arr: string) => `${arr}[${forms[rand(forms.length)]}]`
    for (let program = 0; program < 24; program++) {
      const lines: string[] = []
      for (let s = 0; s < 4; s++) {
        if (rand(4) === 0) {
          // (two different elements: x and y)
          lines.push(`    SWAP(${elem('x')}, ${elem('y')})`)
          continue
        }
        const target = rand(2) === 0 ? 'x' : 'y'
        const other = target === 'x' ? 'y' : 'x'
        const op = ['+=', '-='][rand(2)]!
        lines.push(`    ${target}[${forms[rand(forms.length)]}] ${op} ${elem(other)} * 0.5 + c`)
      }
      const range = ['0..n', 'reverse 0..n', '0..=n', 'reverse 1..=n', 'n..0 by -1', 'reverse n..=0 by -1'][rand(6)]!
      const text = `
fn run(x: f64[], y: f64[], k: i32[], i: i32, m: i32, n: i32, c: f64) {
  for l in ${range} {
${lines.join('\n')}
  }
}`
      for (const checks of [false, true]) {
        const go = (backend: string) => {
          const mod = compileModule(parse({ text, name: 'rand' }), { registry, backend, checks })
          const x = Float64Array.from({ length: 40 }, (_, j) => Math.sin(j + 1)),
            y = Float64Array.from({ length: 40 }, (_, j) => Math.cos(3 * j))
          const k = Int32Array.from([3, 5, 0, 1, 7, 2])
          const f = mod.run as unknown as Run
          const args = [x, y, k, 1 + rand(3), 1 + rand(3), 5, 0.7]
          f(...args)
          const after = [Array.from(x), Array.from(y)]
          f.inverse(...args)
          return [after, Array.from(x), Array.from(y)]
        }
        const s0 = state
        const cpu = go('cpu')
        state = s0
        expect(cpu, `${text}\nchecks ${checks}`).toEqual(go('interpreter'))
      }
    }
  })
})
