import { describe, expect, it } from 'vitest'
import { createRegistry, TenetError } from '@tenet/ir'
import { interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { besselReciprocalSource, besselSource, checkGrad, compileForwardGradient, grad } from './index.js'
import { randomExpressions, tag } from './test-util.js'
import { DRIVER } from './driver.js'
import type { GradientFunction } from './grad.js'

const sourceOf = (g: GradientFunction): string => (g as unknown as Record<symbol, { source: string }>)[DRIVER]!.source

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)
const configs = [
  { label: 'cpu', backend: 'cpu', checks: true },
  { label: 'cpu without checks', backend: 'cpu', checks: false },
  { label: 'wasm without checks', backend: 'wasm', checks: false },
  { label: 'interpreter', backend: 'interpreter', checks: true },
] as const

/** Random functions of one variable x whose loss y is only accumulated into (forward mode applies). */
function generator(seed: number) {
  const { rnd, pick, expr } = randomExpressions(seed)
  const ancillas = ['a', 'b', 'c']
  function program(): string {
    const lines: string[] = []
    const n = 2 + Math.floor(rnd() * 5)
    for (let k = 0; k < n; k++) {
      const kind = rnd()
      const target = pick(ancillas)
      const vars = [...ancillas.filter((v) => v !== target), 'x']
      if (kind < 0.5) lines.push(`${target} ${rnd() < 0.7 ? '+=' : '-='} ${expr(vars, 3)}`)
      else if (kind < 0.7) lines.push(`for i in 1..=3 { ${target} += f64(i) * ${expr(vars, 2)} }`)
      else if (kind < 0.75) lines.push(`h(${target}, ${pick(vars)})`)
      else if (kind < 0.8)
        lines.push(`if (x > 0.0) { ${target} += ${expr(vars, 2)} } else { ${target} -= ${expr(vars, 2)} }`)
      else if (kind < 0.85)
        lines.push(`while (k < 3, k != 0) { k += 1; ${target} += f64(k) * ${expr(vars, 2)} }`, 'k -= 3')
      else {
        const [u, v] = [pick(ancillas), pick(ancillas)]
        lines.push(u !== v ? (rnd() < 0.5 ? `SWAP(${u}, ${v})` : `ROT(${u}, ${v}, x)`) : `NEG(${u})`)
      }
    }
    const loss = [`y += ${expr(['a', 'b', 'c', 'x'], 2)}`]
    if (rnd() < 0.5) loss.push(`for i in 0..2 { y -= ${expr(['a', 'b', 'c', 'x'], 2)} }`)
    return `fn h(t: f64, u: f64) { t += sin(u) * u }
fn f(y: f64, x: f64) {
  k: i32 <- 0
  a <- 0.0
  b <- 0.0
  c <- 0.0
  routine {
    ${lines.join('\n    ')}
  }
  ${loss.join('\n  ')}
  ~routine
  c -> 0.0
  b -> 0.0
  a -> 0.0
  k -> 0
}`
  }
  return { program, rnd }
}

describe('grad in forward mode (a function of one variable)', () => {
  it('applies only to scalars with one float input besides a loss that is only accumulated into', () => {
    const m = tag()`
      fn ok(y: f64, n: i32, x: f64) { y += x * f64(n) }
      fn ok32(y: f32, x: f32) { y -= x * x }
      fn two_inputs(y: f64, x: f64, z: f64) { y += x * z }
      fn array_arg(y: f64, x: f64[]) { y += x[0] }
      fn reads_loss(y: f64, x: f64) { y += x; x += y }
      fn loss_in_call(y: f64, x: f64) { SWAP(y, x) }
      fn negates_loss(y: f64, x: f64) { y += x; NEG(y) }
      fn loss_in_condition(y: f64, x: f64) { if (y > 0.0) { x += 1.0 } }
      fn only_loss(y: f64, n: i32) { y += f64(n) }`
    expect(compileForwardGradient(m.ok!, 0)).not.toBeNull()
    expect(compileForwardGradient(m.ok32!, 0)).not.toBeNull()
    for (const name of [
      'two_inputs',
      'array_arg',
      'reads_loss',
      'loss_in_call',
      'negates_loss',
      'loss_in_condition',
      'only_loss',
    ]) {
      expect(compileForwardGradient(m[name]!, 0), name).toBeNull()
    }
    // with x as the loss, `ok` accumulates into y, not x
    expect(compileForwardGradient(m.ok!, 2)).toBeNull()
    // mode: 'forward' where it does not apply is an argument error naming the function; a bad mode too
    expect(() => grad(m.two_inputs!, { loss: 0, mode: 'forward' })).toThrow(/forward mode needs .*two_inputs/)
    expect(() => grad(m.two_inputs!, { loss: 0, mode: 'forward' })).toThrow(TenetError)
    expect(() => grad(m.ok!, { loss: 0, mode: 'sideways' as never })).toThrow(/`mode` must be/)
    // where it does not apply, 'auto' is reverse mode: a negated loss has gradient −1 with respect to itself
    expect(Array.from(grad(m.negates_loss!, { loss: 0 })(1, 3))).toEqual([-1, -1])
  })

  it('falls back to reverse mode for a bijection that has an adjoint snippet but no tangent rule', () => {
    const reg = registry()
      .clone()
      .registerPrimitive({
        specificationVersion: 'v1',
        name: 'TWICE',
        kind: 'bijection',
        roles: ['inout'],
        types: ['float'],
        apply: (a) => [2 * a!],
        inverse: 'HALVE',
        adjoint: { params: ['a'], source: 'TWICE(g_a)' },
      })
      .registerPrimitive({
        specificationVersion: 'v1',
        name: 'HALVE',
        kind: 'bijection',
        roles: ['inout'],
        types: ['float'],
        apply: (a) => [a! / 2],
        inverse: 'TWICE',
        adjoint: { params: ['a'], source: 'HALVE(g_a)' },
      })
    const m = tag({ registry: reg })`fn f(y: f64, x: f64) {
      t <- 0.0
      t += x * x
      TWICE(t)
      y += t
      HALVE(t)
      t -= x * x
      t -> 0.0
    }`
    expect(compileForwardGradient(m.f!, 0)).toBeNull()
    // d(2x²)/dx = 4x
    expect(Array.from(grad(m.f!, { loss: 0 })(0, 3))).toEqual([1, 12])
    // asked for, forward mode reports the missing rule
    expect(() => grad(m.f!, { loss: 0, mode: 'forward' })).toThrow(/no tangent rule/)
  })

  it.each([
    ['imul', besselSource],
    ['imul_recip', besselReciprocalSource],
  ])('gives what reverse mode gives, and the loss value, on the ν = 2 Bessel function (%s; 0.2102436…)', (_, src) => {
    // J₂′ = (J₁ − J₃)/2 from full series: the program stops its series at 1e-8, and its two modes
    // differentiate the approximate multiplier's rounding differently, so they agree to about that
    const J = (n: number, z: number) => {
      let s = 0,
        t = (z / 2) ** n
      for (let i = 2; i <= n; i++) t /= i
      for (let k = 0; k < 60; k++) {
        s += t
        t *= -((z * z) / 4) / ((k + 1) * (k + 1 + n))
      }
      return s
    }
    for (const c of configs) {
      const m = tag({ backend: c.backend, checks: c.checks, registry: registry() })(src)
      expect(compileForwardGradient(m.ibesselj!, 0), c.label).not.toBeNull()
      const fwd = grad(m.ibesselj!, { loss: 0 }),
        back = grad(m.ibesselj!, { loss: 0, mode: 'reverse' })
      expect(grad(m.ibesselj!, { loss: 0, mode: 'forward' })(0.5, 2, 1.0)[2]).toBe(fwd(0.5, 2, 1.0)[2])
      for (const z of [0.3, 1.0, 2.5]) {
        const [gy, gnu, gz] = fwd(0.5, 2, z)
        const [ry, , rz] = back(0.5, 2, z)
        expect(gy).toBe(1)
        expect(gnu).toBeNull()
        expect(ry).toBe(1)
        expect(Math.abs((gz as number) - (rz as number)), `${c.label} z=${z}`).toBeLessThan(1e-8)
        expect(Math.abs((gz as number) - (J(1, z) - J(3, z)) / 2), `${c.label} z=${z}`).toBeLessThan(1e-8)
        expect(fwd.lastLoss).toBe(back.lastLoss)
        expect(fwd.scalars[2]).toBe(gz)
      }
      expect(fwd(0, 2, 1.0)[2] as number).toBeCloseTo(0.2102436, 7)
    }
  })

  it('checkGrad checks both modes where forward mode applies, and names the mode of its worst error', () => {
    const m = tag()`fn f(y: f64, x: f64) { y += sin(x) * x }
      fn h(y: f64, x: f64[]) { y += x[0] * x[0] }`
    const both = checkGrad(m.f!, [0, 0.7], { loss: 0 })
    expect(both.ok).toBe(true)
    expect(['forward', 'reverse']).toContain(both.worst!.mode)
    expect(checkGrad(m.f!, [0, 0.7], { loss: 0, mode: 'forward' }).worst!.mode).toBe('forward')
    expect(checkGrad(m.f!, [0, 0.7], { loss: 0, mode: 'reverse' }).worst!.mode).toBe('reverse')
    // an array function: reverse mode only
    expect(checkGrad(m.h!, [0, Float64Array.from([0.5])], { loss: 0 }).worst!.mode).toBe('reverse')
    expect(() => checkGrad(m.h!, [0, Float64Array.from([0.5])], { loss: 0, mode: 'forward' })).toThrow(
      /forward mode needs/,
    )
  })

  it("the cpu driver calls the tangent's lean copy, and takes the results it leaves out from its arguments", () => {
    const rev = tag({ backend: 'cpu', checks: false, registry: registry() })
    const m = rev(`${besselSource}
      fn constant_loss(y: f64, x: f64) { y += 2.0 }
      fn untouched_loss(y: f64, x: f64) { }`)
    // J₂′(z) of the series through the lean copy: central differences agree; the loss is f's, bit for bit
    const g = grad(m.ibesselj!, { loss: 0 })
    expect(sourceOf(g)).toMatch(/\bL\(/)
    for (const z of [0.3, 1, 1.7]) {
      const fwd = g(0, 2, z)[2] as number
      expect(g.lastLoss).toBe((m.ibesselj!(0, 2, z) as number[])[0])
      expect(Number.isFinite(fwd)).toBe(true)
      const r = checkGrad(m.ibesselj!, [0, 2, z], { loss: 0, mode: 'forward', atol: 1e-7, rtol: 1e-6 })
      expect(r.ok, JSON.stringify(r.worst)).toBe(true)
    }
    // the tangent never writes the loss's tangent (and, in the second, the loss): their results are the arguments passed
    const c = grad(m.constant_loss!, { loss: 0 })
    expect(sourceOf(c)).toMatch(/\bL\(/)
    expect(sourceOf(c)).toContain('S[1] = (0);')
    expect(Array.from(c(1.5, 3))).toEqual([1, 0])
    expect(c.lastLoss).toBe(3.5)
    const u = grad(m.untouched_loss!, { loss: 0 })
    expect(sourceOf(u)).toContain('LS[0] = (v0);')
    expect(Array.from(u(1.5, 3))).toEqual([1, 0])
    expect(u.lastLoss).toBe(1.5)
  })

  it('the gradient of an f32 function is an f32 value, as in reverse mode', () => {
    const m = tag()`fn f(y: f32, x: f32) { y += x * x * x }
      fn g(y: f64, x: f32) { y -= f64(x) / 3.0 }`
    const x = Math.fround(1.1)
    const [gy, gx] = grad(m.f!, { loss: 0 })(0, x)
    expect(gy).toBe(1)
    // 3x² in f32 arithmetic (the tangent of x·x·x, rounded at each step)
    const xx = Math.fround(x * x)
    expect(gx).toBe(Math.fround(Math.fround(Math.fround(x + x) * x) + xx))
    expect(Math.abs((gx as number) - 3 * x * x)).toBeLessThan(1e-6)
    // an f64 loss of an f32 input: the tangent is f64, the gradient rounded to f32 as reverse mode's is
    const f = grad(m.g!, { loss: 0 })(0, x)[1],
      r = grad(m.g!, { loss: 0, mode: 'reverse' })(0, x)[1]
    expect(f).toBe(Math.fround(-1 / 3))
    expect(f).toBe(r)
  })

  it('on 150 random functions of one variable: forward = reverse, and central differences agree', () => {
    for (const c of configs) {
      const rev = tag({ backend: c.backend, checks: c.checks, registry: registry() })
      const gen = generator(c.label.length * 7919)
      const count = c.backend === 'cpu' ? 150 : 40
      for (let t = 0; t < count; t++) {
        const src = gen.program()
        const m = rev(src)
        const x = gen.rnd() * 2 - 1,
          y = gen.rnd() - 0.5
        expect(compileForwardGradient(m.f!, 0), src).not.toBeNull()
        const fwd = grad(m.f!, { loss: 0 })(y, x),
          back = grad(m.f!, { loss: 0, mode: 'reverse' })(y, x)
        expect(fwd[0]).toBe(1)
        expect(Math.abs((fwd[1] as number) - (back[1] as number)), `${c.label}\n${src}`).toBeLessThan(
          1e-9 * (1 + Math.abs(back[1] as number)),
        )
        if (t % 5 === 0) {
          const r = checkGrad(m.f!, [y, x], { loss: 0, atol: 1e-6, rtol: 1e-6 })
          expect(r.ok, `${c.label}\n${src}\n${JSON.stringify(r.worst)}`).toBe(true)
        }
      }
    }
  })
})
