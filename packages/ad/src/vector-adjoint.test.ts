import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry, printFunction } from '@tenet/ir'
import { registerNumbers } from '@tenet/numbers'
import { interpreterBackend } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { compileAdjoint, jacobian } from './index.js'
import { jacobianCost } from './jacobian.js'
import { expectClose, tag } from './test-util.js'

const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)

describe.each(['cpu', 'interpreter'] as const)('vector-mode adjoint (%s)', (backend) => {
  const rev = tag({ backend, registry })
  const m = rev`
    fn mix(y: f64[], x: f64[], s: f64) {
      for i in 0..len(x) {
        y[i] += sin(x[i]) * s + x[(i + 1) % len(x)] * x[i]
      }
      s += y[0] * y[1]
    }
    fn helper(a: f64, b: f64, c: f64) { a += b * c; b += exp(c) }
    fn twice(a: f64, b: f64, c: f64) { a += b * c * 0.5 }
    fn calls(p: f64, q: f64, r: f64, out: f64[]) {
      helper(p, q, r)
      t: f64 <- 0.0
      t += p * q
      out[0] += t * r
      out[1] += log(q) + t
      twice(out[2], r, r)
      t -= p * q
      t -> 0.0
      ROT(p, q, r)
    }
    fn ctl(y: f64[], x: f64[], n: i32) {
      st: stack<f64> <- []
      for i in 0..len(x) {
        v: f64 <- 0.0
        v += x[i] * x[i]
        if (x[i] > 0.0, ~) { y[i] += v * 3.0 } else { y[i] -= v / 2.0 }
        push(st, v)
        v -> 0.0
      }
      for i in reverse 0..len(x) {
        w: f64 <- 0.0
        pop(st, w)
        y[(i + 1) % len(y)] += w * y[i]
        w -= x[i] * x[i]
        w -> 0.0
      }
      st -> []
    }
    fn ul(a: ulog, b: ulog, c: ulog, d: f64) {
      a *= b + c
      b *= c ** 2
      c /= a
      d += f64(a) * f64(c)
    }
  `

  it('reverse (w rows per sweep) agrees with forward to 1e-12 on programs with several outputs', () => {
    const cases: Array<[keyof typeof m, unknown[]]> = [
      ['mix', [Float64Array.from([0.1, -0.2, 0.3, 0.5]), Float64Array.from([0.7, -1.1, 0.4, 0.9]), 1.3]],
      ['calls', [0.4, 1.7, -0.6, Float64Array.from([0.2, 0.1, -0.3])]],
      ['ctl', [Float64Array.from([0.5, -0.25, 1.5, 0.125, 2]), Float64Array.from([0.3, -0.8, 1.2, -0.1, 0.6]), 3]],
    ]
    for (const [name, args] of cases) {
      const f = m[name]!
      const Jf = jacobian(f, args, { mode: 'forward', width: 2 })
      for (const width of [1, 2, 3, 8])
        expectClose(jacobian(f, args, { mode: 'reverse', width }), Jf, 1e-12, `${String(name)} w=${width}`)
      expectClose(jacobian(f, args), Jf, 1e-12, `${String(name)} auto`)
    }
  })

  it('ulog: vector reverse rows equal one-row sweeps and finite differences', () => {
    const args = [1.2, 0.7, 1.9, 0.3]
    const J1 = jacobian(m.ul!, args, { inputs: [0, 1, 2, 3], outputs: [0, 1, 2, 3], mode: 'reverse', width: 1 })
    const J4 = jacobian(m.ul!, args, { inputs: [0, 1, 2, 3], outputs: [0, 1, 2, 3], mode: 'reverse', width: 4 })
    expectClose(J4, J1, 1e-12, 'ulog w=4 vs w=1')
    const h = 1e-6
    for (let j = 0; j < 4; j++) {
      const up = args.slice()
      up[j]! += h
      const dn = args.slice()
      dn[j]! -= h
      const ru = m.ul!(...up) as number[],
        rd = m.ul!(...dn) as number[]
      for (let i = 0; i < 4; i++) expect(Math.abs(J4[i * 4 + j]! - (ru[i]! - rd[i]!) / (2 * h))).toBeLessThan(1e-6)
    }
  })

  it('the vector adjoint carries w gradient parameters per scalar and n·w elements per array', () => {
    const c = compileAdjoint(m.mix!, 3)
    expect(c.width).toBe(3)
    const text = printFunction(c.adjoint.ir)
    expect(text).toContain(
      'fn mix$adj3(y: f64[], x: f64[], s: f64, g_y: f64[], g_x: f64[], g_0$s: f64, g_1$s: f64, g_2$s: f64, g$sink: f64)',
    )
    expect(c.slots.map((s) => s?.index)).toEqual([3, 4, 5])
  })
})

it('auto mode compares sweep costs', () => {
  expect(jacobianCost(2, 10)).toBe('forward')
  expect(jacobianCost(100, 3)).toBe('reverse')
  expect(jacobianCost(8, 8)).toBe('forward')
})
