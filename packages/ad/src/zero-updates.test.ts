/**
 * The `zero-updates` pass of @tenet/ir on gradient programs: the adjoint of a routine's uncompute
 * carries zero gradients, which the pass drops when run-time checks are off. Gradients with the
 * pass (checks off) must equal those without it (checks on) and central differences, on random
 * programs with routines (in the function itself and in a callee called in a loop); programs of
 * @tenet/testing's generator must compute the same values with checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { dropZeroUpdates } from '@tenet/ir/backend'
import { randomArgs, randomProgram } from '@tenet/testing'
import { compileAdjoint, grad } from './index.js'
import { infoOf } from './compile.js'
import { randomExpressions, tag } from './test-util.js'

/** f(y, a, b, x[]) with a compute–copy–uncompute routine, and a callee with one called in a loop. */
function routineProgram(seed: number): string {
  const { rnd, expr } = randomExpressions(seed)
  const inner = ['a', 'b', 'x[i]']
  return `
fn h(out: f64, u: f64, w: f64) {
  s <- 0.0
  t <- 0.0
  routine {
    s += ${expr(['u', 'w'], 2)}
    t += ${expr(['s', 'u'], 2)}
  }
  out += ${expr(['s', 't', 'u'], 2)}
  ~routine
  t -> 0.0
  s -> 0.0
}
fn f(y: f64, a: f64, b: f64, x: f64[], o: f64[]) {
  p <- 0.0
  q <- 0.0
  routine {
    for i in 0..len(x) { p += ${expr(inner, 2)} }
    q += ${expr(['p', 'a'], 2)}
  }
  y += ${expr(['p', 'q', 'b'], 2)}
  ~routine
  q -> 0.0
  p -> 0.0
  for i in 0..len(x) { h(o[i], x[i], ${rnd() < 0.5 ? 'a' : 'b'}) }
  for i in 0..len(o) { y += ${expr(['o[i]', 'a'], 1)} }
}`
}

describe('zero-updates on gradient programs', () => {
  const fast = tag({ checks: false })
  const checked = tag()

  it('drops the zero gradient updates of a routine’s uncompute in the adjoint', () => {
    const m = fast(routineProgram(7))
    // the checked (typed) program the backend compiled the adjoint from
    const program = infoOf(compileAdjoint(m.f!).adjoint).program
    const h = program.functions.get('h$adj')!
    const updates = (b: unknown) => JSON.stringify(b).split('"kind":"update"').length - 1
    const after = dropZeroUpdates(h, program.writes)
    // h's routine has two updates, each with a gradient update per operand it reads
    expect(updates(h.body) - updates(after.body)).toBeGreaterThanOrEqual(2)
  })

  it('40 random routine programs: gradients with checks off equal checks on and central differences', () => {
    let n = 0
    for (let seed = 1; seed <= 40; seed++) {
      const src = routineProgram(seed)
      const a = fast(src).f!,
        b = checked(src).f!
      const { rnd } = randomExpressions(seed * 31)
      const x = Float64Array.from({ length: 3 }, () => rnd() - 0.5)
      const args = [0, rnd() - 0.5, rnd() - 0.5, x, new Float64Array(3)]
      const ga = grad(a, { loss: 0 }),
        gb = grad(b, { loss: 0 })
      const ra = ga(...args),
        rb = gb(...args)
      const flat = (r: unknown[]) => [r[1] as number, r[2] as number, ...(r[3] as Float64Array)]
      const fa = flat(ra),
        fb = flat(rb)
      for (let i = 0; i < fa.length; i++)
        expect(Math.abs(fa[i]! - fb[i]!), `${src}\n#${i}`).toBeLessThan(1e-10 * (1 + Math.abs(fb[i]!)))
      // central differences of the loss (the forward run of the checked program)
      const loss = (shift: number, j: number) => {
        const xs = x.slice()
        const p = [0, args[1] as number, args[2] as number]
        if (j < 2) p[j + 1]! += shift
        else xs[j - 2]! += shift
        b.core(0, p[1], p[2], xs, new Float64Array(3))
        return b.core.results[0] as number
      }
      const eps = 1e-6
      for (let j = 0; j < fa.length; j++) {
        const fd = (loss(eps, j) - loss(-eps, j)) / (2 * eps)
        expect(Math.abs(fa[j]! - fd), `${src}\nFD #${j}`).toBeLessThan(1e-6 * (1 + Math.abs(fd)))
      }
      n++
    }
    expect(n).toBe(40)
  })

  it('60 random programs of @tenet/testing compute the same values with checks on and off', () => {
    for (let seed = 500; seed < 560; seed++) {
      const p = randomProgram(seed, { features: { stack: false } })
      const on = checked(p.source)[p.entry]!,
        off = fast(p.source)[p.entry]!
      const args = randomArgs(p.signature, seed)
      const copy = () => args.map((v) => (typeof v === 'number' ? v : v.slice()))
      const x = copy(),
        y = copy()
      on.core(...x)
      off.core(...y)
      p.signature.params.forEach((q, i) => {
        const a = q.type === 'i32' ? on.core.results[i] : x[i],
          b = q.type === 'i32' ? off.core.results[i] : y[i]
        expect(b, `seed ${seed}, ${q.name}\n${p.source}`).toEqual(a)
      })
    }
  })
})
