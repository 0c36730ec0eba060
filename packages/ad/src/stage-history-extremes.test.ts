import { it, expect } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad } from './index.js'
import { flatWrt as flat } from './test-util.js'
const programs = `
fn closed_loss(loss: f64, x: f64[], lo: i32, hi: i32, st: i32) {
  routine {
    s <- 0.0
    for t in lo..=hi by st {
      routine {
        a, b <- 0.0, 0.0
        a += x[0] * f64(t % 5)
        b += a * x[1] + 0.1 * sin(x[0])
      }
      s += a * b + x[2] * a
      ~routine
    }
  }
  loss += s * s
  ~routine
}
fn unit_loss(loss: f64, x: f64[], lo: i32, hi: i32) {
  routine {
    s <- 0.0
    for t in lo..=hi {
      routine {
        a, b <- 0.0, 0.0
        a += x[0] * f64(t % 5)
        b += a * x[1] + 0.1 * sin(x[0])
      }
      s += a * b + x[2] * a
      ~routine
    }
  }
  loss += s * s
  ~routine
}
`
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)
const B = 2 ** 31
it('stage histories at the i32 extremes (inclusive ends at ±2^31, steps of ±(2^31 − 1), −2^31): fused = two sweeps = checks on, bit for bit', () => {
  const x = Float64Array.of(0.7, -0.4, 0.3)
  for (const b of ['interpreter', 'cpu', 'wasm']) {
    const c = (checks: boolean) =>
      compileModule(parse({ text: programs, name: 'r' }), { registry: registry(), backend: b, checks })
    for (const [name, args] of [
      ['closed_loss', [B - 5, B - 1, 1]],
      ['closed_loss', [-B + 4, -B, -1]],
      ['closed_loss', [B - 5, B - 1, 2]],
      ['closed_loss', [-B, B - 1, B - 1]],
      ['closed_loss', [B - 1, -B, -B]],
      ['unit_loss', [B - 5, B - 1]],
      ['unit_loss', [-B, -B + 3]],
    ] as const) {
      const f = c(false)[name]!
      const r = (g: any) => {
        try {
          return flat(g(0, x, ...args) as unknown[], [1])
            .map(String)
            .join(',')
        } catch (e) {
          return 'E ' + (e as Error).message
        }
      }
      const fused = r(grad(f, { loss: 0 }))
      const sweeps = r(grad(f, { loss: 0, fuse: false }))
      const checked = r(grad(c(true)[name]!, { loss: 0 }))
      expect([fused, sweeps].join(' | '), `${b} ${name}(${args.join(', ')})`).toBe([checked, checked].join(' | '))
      expect(checked.startsWith('E')).toBe(false)
    }
  }
})
