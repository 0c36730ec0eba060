import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import { interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { checkGrad, grad, jvp } from './index.js'
import { tag } from './test-util.js'
import { mulberry32 as rng } from '@tenet/testing'

// The one-direction tangent of a quotient by a differentiated value is ȧ·(1/b) − (a/b)·(ḃ·(1/b))
// (see `tree` in tangent.ts): forward mode against reverse mode and central differences on random
// functions whose quotients divide by values that carry tangents, with run-time checks on and off.

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)
const configs = [
  { label: 'cpu', backend: 'cpu', checks: true },
  { label: 'cpu without checks', backend: 'cpu', checks: false },
  { label: 'wasm', backend: 'wasm', checks: true },
  { label: 'wasm without checks', backend: 'wasm', checks: false },
  { label: 'interpreter', backend: 'interpreter', checks: true },
] as const

/** Random functions of x whose updates divide by values with tangents (denominators ≥ 1 in size). */
function generator(seed: number) {
  const rnd = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const atom = (vars: string[]) => (rnd() < 0.25 ? (0.5 + rnd()).toFixed(3) : pick(vars))
  // a denominator that carries a tangent and stays away from zero
  const den = (vars: string[]) =>
    pick([
      () => `(1.5 + ${pick(vars)} * ${pick(vars)})`,
      () => `(2.0 + sin(${pick(vars)}))`,
      () => `(1.0 + exp(${pick(vars)}))`,
    ])()
  const term = (vars: string[]) =>
    pick([
      () => `${atom(vars)} / ${den(vars)}`,
      () => `(${atom(vars)} - ${atom(vars)}) / ${den(vars)} * ${atom(vars)}`,
      () => `${atom(vars)} * ${atom(vars)}`,
      () => `${atom(vars)} / ${den(vars)} / ${den(vars)}`,
    ])()
  function program(): string {
    const lines: string[] = []
    const n = 2 + Math.floor(rnd() * 4)
    for (let k = 0; k < n; k++) {
      const target = pick(['a', 'b'])
      const vars = [target === 'a' ? 'b' : 'a', 'x']
      const r = rnd()
      if (r < 0.6) lines.push(`${target} ${rnd() < 0.7 ? '+=' : '-='} ${term(vars)}`)
      else if (r < 0.8) lines.push(`for i in 1..=3 { ${target} += ${term(vars)} / f64(i) }`)
      // an approximate multiplier: anc += t·d; t −= anc/d; SWAP, d with a tangent
      else lines.push(`c += ${den(vars)}`, `m += ${target} * c`, `${target} -= m / c`, `SWAP(${target}, m)`)
    }
    return `fn f(y: f64, x: f64) {
  a <- 0.0
  b <- 0.0
  c <- 0.0
  m <- 0.0
  routine {
    a += identity(x)
    ${lines.join('\n    ')}
  }
  y += a + b / (1.5 + x * x) + m
  ~routine
  m -> 0.0
  c -> 0.0
  b -> 0.0
  a -> 0.0
}`
  }
  return { program, rnd }
}

describe('the tangent of a quotient by a differentiated value', () => {
  it('on random functions: forward mode = reverse mode, and central differences agree (checks on and off)', () => {
    for (const c of configs) {
      const rev = tag({ backend: c.backend, checks: c.checks, registry: registry() })
      const gen = generator(7 + c.label.length * 131)
      const count = c.backend === 'cpu' ? 16 : 6
      for (let t = 0; t < count; t++) {
        const src = gen.program()
        const m = rev(src)
        const x = gen.rnd() * 1.6 - 0.8
        const fwd = grad(m.f!, { loss: 0 })
        expect(fwd.plan.program, src).toBe('forward')
        const dx = fwd(0.25, x)[1] as number,
          back = grad(m.f!, { loss: 0, mode: 'reverse', uncompute: 'off' })(0.25, x)[1] as number
        expect(Math.abs(dx - back), `${c.label}\n${src}`).toBeLessThan(1e-9 * (1 + Math.abs(back)))
        // jvp (the tangent itself) along x
        const j = jvp(m.f!, [0.25, x], { v: [0, 1] }).tangent[0] as number
        expect(Math.abs(j - dx), `${c.label}\n${src}`).toBeLessThan(1e-9 * (1 + Math.abs(dx)))
        if (t % 3 === 0) {
          const r = checkGrad(m.f!, [0.25, x], { loss: 0, atol: 1e-6, rtol: 1e-6 })
          expect(r.ok, `${c.label}\n${src}\n${JSON.stringify(r.worst)}`).toBe(true)
        }
      }
    }
  })
})
