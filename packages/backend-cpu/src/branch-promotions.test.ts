/**
 * Elements a loop accesses only under an \`if\`, kept in locals with checks off too (\`anyBranch\`
 * of \`promotableElements\`, as \`promote-checked\` does with checks on): the n-body force loop
 * \`for j { if (i != j) { … x[3·i + c] …; a[3·i + c] += s · dx[c] } }\` reads \`x[3·i + c]\` once
 * before the \`j\` loop and accumulates \`a[3·i + c]\` in a local, stored after it (an f32 one only
 * where an iteration wrote it). Bit for bit with the interpreter, f64 and f32, checks on and off,
 * branches never taken, loops that run no iteration and an index out of range under a branch
 * never taken included.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

const source = (T: 'f64' | 'f32') => `
fn forces(a: ${T}[], x: ${T}[], m: ${T}[], nb: i32, g: ${T}) {
  for i in 0..nb {
    for j in 0..nb {
      if (i != j, ~) {
        routine {
          dx: ${T}[] <- zeros(3)
          for c in 0..3 { dx[c] += x[3 * j + c] - x[3 * i + c] }
          r2: ${T} <- 0.0
          r2 += dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
          r: ${T} <- 0.0
          r += sqrt(r2)
          s: ${T} <- 0.0
          s += g * m[j] / (r2 * r)
        }
        for c in 0..3 { a[3 * i + c] += s * dx[c] }
        ~routine
      }
    }
  }
}
fn counts(k: i32[], y: ${T}[], x: ${T}[], n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (x[j] > x[i], ~) { k[i] += 1 ; y[2 * i + 1] += x[j] - x[i] }
    }
  }
}
fn never(y: ${T}[], x: ${T}[], n: i32) {
  for i in 0..n {
    if (i < 0, ~) { y[n + 5] += x[n + 7] }
    y[0] += x[i]
  }
}`

function build(T: 'f64' | 'f32', backend: 'cpu' | 'interpreter', checks: boolean) {
  return compileModule(parse({ text: source(T), name: `branch-promotions-${T}` }), { registry, backend, checks })
}

function code(T: 'f64' | 'f32', name: string, checks: boolean): string {
  const m = build(T, 'cpu', checks)
  const info = (m[name] as unknown as Record<symbol, { compiled: { sourceOf(n: string, inv: boolean): string } }>)[
    Symbol.for('tenet.function')
  ]!
  return info.compiled.sourceOf(name, false)
}

/** The body of the innermost \`for\` loop of generated code (its lines up to the loop's closing brace). */
function innermost(js: string): string {
  const lines = js.split('\n')
  let start = -1
  for (let k = 0; k < lines.length; k++) if (/^\s*for \(/.test(lines[k]!)) start = k
  const indent = lines[start]!.match(/^\s*/)![0]
  const end = lines.findIndex((l, k) => k > start && l === `${indent}}`)
  return lines.slice(start, end).join('\n')
}

const show = (xs: ArrayLike<number>) => Array.from(xs, (v) => (Object.is(v, -0) ? '-0' : String(v)))

describe('elements accessed only in branches, in locals with checks off (cpu backend)', () => {
  it('reads x[3i + c] before the j loop and accumulates a[3i + c] in locals', () => {
    for (const T of ['f64', 'f32'] as const) {
      const js = code(T, 'forces', false)
      const inner = innermost(js)
      // p0 is a, p1 is x: no access of a, and x read only at 3·j + c, in the loop
      expect(inner).not.toMatch(/p0\[/)
      expect(inner.match(/p1\[/g)?.length).toBe(3)
      expect(js).toMatch(/let r\d+ = p0\[x\d+\];/)
      expect(js).toMatch(/let r\d+ = p1\[x\d+\];/)
      // stored after the loop (an f32 element where an iteration wrote it)
      expect(js).toMatch(T === 'f32' ? /if \(w\d+\) p0\[x\d+\] = r\d+;/ : /p0\[x\d+\] = r\d+;/)
    }
  })

  it('computes what the interpreter computes, bit for bit, checks on and off', () => {
    let seed = 7
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 4 - 2
    for (const T of ['f64', 'f32'] as const) {
      const A = T === 'f64' ? Float64Array : Float32Array
      for (const checks of [false, true]) {
        const cpu = build(T, 'cpu', checks),
          ref = build(T, 'interpreter', checks)
        for (const nb of [0, 1, 2, 5]) {
          const x = A.from({ length: 3 * nb }, rand),
            m = A.from({ length: nb }, () => Math.abs(rand()))
          if (nb === 5) x[4] = -0
          const a = new A(3 * nb),
            ar = new A(3 * nb)
          cpu.forces!(a, x, m, nb, 0.01)
          ref.forces!(ar, x, m, nb, 0.01)
          expect(show(a)).toEqual(show(ar))
          const xs = A.from({ length: nb }, rand)
          const k = new Int32Array(nb),
            kr = new Int32Array(nb),
            y = new A(2 * nb),
            yr = new A(2 * nb)
          cpu.counts!(k, y, xs, nb)
          ref.counts!(kr, yr, xs, nb)
          expect(Array.from(k)).toEqual(Array.from(kr))
          expect(show(y)).toEqual(show(yr))
          const z = A.of(1.5, 2),
            zr = A.of(1.5, 2)
          cpu.never!(z, A.of(0.25, -3), Math.min(nb, 2))
          ref.never!(zr, A.of(0.25, -3), Math.min(nb, 2))
          expect(show(z)).toEqual(show(zr))
        }
      }
    }
  })
})
