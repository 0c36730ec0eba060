import { describe, expect, it } from 'vitest'
import { checkGrad, gradient, hessian } from './index.js'
import { randomExpressions, tag } from './test-util.js'

/** A small generator of differentiable straight-line and loop programs over f64 values. */
function generator(seed: number) {
  const { rnd, pick, expr } = randomExpressions(seed)
  const scalars = ['y', 'a', 'b', 'c']

  function program(): string {
    const lines: string[] = []
    const n = 3 + Math.floor(rnd() * 6)
    for (let k = 0; k < n; k++) {
      const kind = rnd()
      if (kind < 0.55) {
        const target = pick(scalars)
        const vars = scalars.filter((v) => v !== target)
        if (rnd() < 0.3) vars.push('x[1]')
        lines.push(`${target} ${rnd() < 0.7 ? '+=' : '-='} ${expr(vars, 3)}`)
      } else if (kind < 0.8) {
        const target = pick(scalars)
        const vars = [...scalars.filter((v) => v !== target), 'x[i]']
        lines.push(`for i in 0..len(x) { ${target} += ${expr(vars, 2)} }`)
      } else if (kind < 0.9) {
        const vars = scalars
        lines.push(`for i in len(x) - 1..=0 by -1 { x[i] += ${expr(vars, 2)} }`)
      } else {
        const [u, v] = [pick(scalars), pick(scalars)]
        if (u !== v)
          lines.push(
            rnd() < 0.5 ? `SWAP(${u}, ${v})` : `ROT(${u}, ${v}, ${pick(scalars.filter((w) => w !== u && w !== v))})`,
          )
        else lines.push(`NEG(${u})`)
      }
    }
    lines.push(`y += ${expr(['a', 'b', 'c', 'x[0]'], 2)}`)
    return `fn f(y: f64, a: f64, b: f64, c: f64, x: f64[]) {\n  ${lines.join('\n  ')}\n}`
  }
  return { program, rnd }
}

describe.each(['cpu', 'interpreter', 'cpu without checks'] as const)('checkGrad on random programs (%s)', (label) => {
  const backend = label === 'interpreter' ? 'interpreter' : 'cpu'
  const rev = tag({ backend, checks: label !== 'cpu without checks' })
  it('250 random programs: adjoint gradients match central differences (every 10th: Hessian too)', () => {
    const gen = generator(label === 'cpu' ? 1234 : label === 'interpreter' ? 98765 : 4321)
    let checked = 0
    for (let t = 0; t < 250; t++) {
      const src = gen.program()
      const m = rev(src)
      const args = [
        gen.rnd() - 0.5,
        gen.rnd() - 0.5,
        gen.rnd() - 0.5,
        gen.rnd() - 0.5,
        Float64Array.from({ length: 3 }, () => gen.rnd() - 0.5),
      ]
      const r = checkGrad(m.f!, args, { loss: 0, atol: 1e-5, rtol: 1e-5 })
      expect(r.ok, `${src}\n${JSON.stringify(r.worst)}`).toBe(true)
      if (t % 10 === 0) {
        // forward-over-reverse against central differences of the adjoint gradient
        const H = hessian(m.f!, args, { loss: 0, width: 3 })
        const flat = (g: unknown[]) => [g[1], g[2], g[3], ...(g[4] as Float64Array)] as number[]
        const h = 1e-5
        for (let j = 0; j < 6; j++) {
          const shift = (s: number) =>
            args.map((a, p) => {
              if (j < 3)
                return p === j + 1 ? (a as number) + s : ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a
              if (p !== 4) return a
              const c = (a as Float64Array).slice()
              c[j - 3]! += s
              return c
            })
          const gp = flat(gradient(m.f!, shift(h), { loss: 0 })),
            gm = flat(gradient(m.f!, shift(-h), { loss: 0 }))
          for (let i = 0; i < 6; i++) {
            const fd = (gp[i]! - gm[i]!) / (2 * h)
            expect(Math.abs(H[i * 6 + j]! - fd), `${src}\nH[${i}][${j}] = ${H[i * 6 + j]} vs ${fd}`).toBeLessThan(
              1e-5 * (1 + Math.abs(fd)),
            )
          }
        }
      }
      checked++
    }
    expect(checked).toBe(250)
  })
})
