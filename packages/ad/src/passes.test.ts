/**
 * The backends' optimisation passes on gradient programs: the adjoint of a loop with an
 * invariant `cos(a)` computes its derivative `sin(a)` once, before the loop (pass
 * `hoist-invariants`), and the adjoint of ROT computes cos θ and sin θ once between the
 * gradient update and the inverse rotations (the cpu backend's sharing of a bijection's pure
 * calls). The derivatives stay those of finite differences, checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { printFunction } from '@tenet/ir'
import { hoistInvariants } from '@tenet/ir/backend'
import { checkGradient } from '@tenet/testing'
import { grad, hvp } from './index.js'
import { tag } from './test-util.js'

const source = `
fn f(l: f64, x: f64[], a: f64) {
  for i in 0..len(x) { l += x[i] * x[i] * cos(a) }
}
fn rot(l: f64, x: f64[], th: f64[]) {
  for k in 0..len(th) { ROT(x[k], x[k + 1], th[k]) }
  for i in 0..len(x) { l += x[i] * x[i] * f64(i + 1) }
  for k in len(th) - 1..=0 by -1 { IROT(x[k], x[k + 1], th[k]) }
}`

const compiledSource = (f: unknown): string => {
  const info = (f as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    name: string
    compiled: { sourceOf(n: string, inv: boolean): string }
    program: { functions: Map<string, unknown> }
  }
  return [...info.program.functions.keys()].map((n) => info.compiled.sourceOf(n, false)).join('\n')
}

describe('optimisation passes on gradient programs', () => {
  for (const checks of [true, false]) {
    const m = tag({ checks })(source)
    it(`the adjoint of a loop hoists the invariant derivative (checks ${checks ? 'on' : 'off'})`, () => {
      const g = grad(m.f!, { loss: 0, mode: 'reverse', fuse: false })
      const printed = printFunction(hoistInvariants(g.adjoint.ir))
      expect(printed).toMatch(/\$inv\d+: f64 <- -?sin\(a\)/)
      // the compiled adjoint computes sin(a) outside its loop only
      const code = compiledSource(g.adjoint)
      const loop = code.slice(code.indexOf('for ('))
      expect(loop.slice(0, loop.indexOf('}')), code).not.toContain('Math.sin')
      const x = Float64Array.from([0.5, -1.25, 2])
      const r = g(0, x, 0.7)
      const fd = checkGradient(
        (v) => {
          let l = 0
          for (let i = 0; i < 3; i++) l += v[i]! * v[i]! * Math.cos(v[3]!)
          return l
        },
        [...Array.from(r[1] as Float64Array), r[2] as number],
        [0.5, -1.25, 2, 0.7],
      )
      expect(fd.ok, JSON.stringify(fd)).toBe(true)
    })

    it(`the adjoint and Hessian-vector product of rotations share cos and sin (checks ${checks ? 'on' : 'off'})`, () => {
      const g = grad(m.rot!, { loss: 0, mode: 'reverse', fuse: false })
      const code = compiledSource(g.adjoint)
      // per rotation of the adjoint: one cos and one sin for the gradient update and the two inverse
      // rotations (without checks, both loops read one table of each, built before them, and the
      // loops as they were, without the tables, follow in an \`else\` branch: see tabulate-sweeps)
      // (the cpu backend runs two iterations per pass of such a loop, see \`pairsIterations\`: one
      // cos and one sin per copy of a body, a copy starting at a loop's head or at the \`break\`
      // between the two)
      for (const fn of code.split(/\nfunction /))
        for (const part of fn.split('} else {')) {
          const c = part.match(/Math\.cos/g)?.length ?? 0
          const s = part.match(/Math\.sin/g)?.length ?? 0
          expect(c, fn).toBe(s)
          for (const copy of part.split(/\n\s*(?:for \(|if \(!\(.*\)\) break;)/)) {
            expect(copy.match(/Math\.cos/g)?.length ?? 0, fn).toBeLessThanOrEqual(1)
            expect(copy.match(/Math\.sin/g)?.length ?? 0, fn).toBeLessThanOrEqual(1)
          }
        }
      const x = Float64Array.from([0.5, -1.25, 2, 0.3]),
        th = Float64Array.from([0.4, -0.9, 1.7])
      const loss = (v: number[]) => {
        const y = v.slice(0, 4)
        for (let k = 0; k < 3; k++) {
          const [a, b, t] = [y[k]!, y[k + 1]!, v[4 + k]!]
          y[k] = Math.cos(t) * a - Math.sin(t) * b
          y[k + 1] = Math.sin(t) * a + Math.cos(t) * b
        }
        let l = 0
        for (let i = 0; i < 4; i++) l += y[i]! * y[i]! * (i + 1)
        return l
      }
      const r = g(0, x.slice(), th)
      const at = [...x, ...th]
      const fd = checkGradient(loss, [...Array.from(r[1] as Float64Array), ...Array.from(r[2] as Float64Array)], at)
      expect(fd.ok, JSON.stringify(fd)).toBe(true)
      // the Hessian along th: central differences of the gradient
      const dir = [0, 0, 0, 0, 0.3, -0.2, 0.5]
      const hv = hvp(m.rot!, [0, x.slice(), th], {
        loss: 0,
        v: [0, new Float64Array(4), Float64Array.from(dir.slice(4))],
      })
      const h = 1e-5
      const gradAt = (p: number[]) => {
        const rr = g(0, Float64Array.from(p.slice(0, 4)), Float64Array.from(p.slice(4)))
        return [...Array.from(rr[1] as Float64Array), ...Array.from(rr[2] as Float64Array)]
      }
      const plus = gradAt(at.map((v, i) => v + h * dir[i]!)),
        minus = gradAt(at.map((v, i) => v - h * dir[i]!))
      const want = plus.map((p, i) => (p - minus[i]!) / (2 * h))
      const got = [...Array.from(hv[1] as Float64Array), ...Array.from(hv[2] as Float64Array)]
      got.forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 5))
    })
  }
})
