import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad } from './index.js'
import { centralDifferences, expectClose, flatWrt as flat } from './test-util.js'

const programs = `
fn range_loss(loss: f64, x: f64[], lo: i32, hi: i32, st: i32) {
  routine {
    s <- 0.0
    for t in lo..hi by st {
      routine {
        a <- 0.0
        a += x[0] * x[1] * f64(t % 5)
      }
      s += a * a + x[2] * a
      ~routine
    }
  }
  loss += s * s
  ~routine
}
// the stage a is -0 (x[0] = 0, x[2] < 0): head and tail undo each other exactly, but the
// loading loop rebuilds it as \`a <- 0.0; a += history[t]\` = +0, so the backward sweep's
// \`s -= atan2(a, x[1])\` subtracts +pi where the forward added -pi: s drifts, q's gradient is wrong
fn negzero_loss(loss: f64, x: f64[], n: i32) {
  routine {
    s, q <- 0.0, 0.0
    for t in 0..n {
      routine {
        a <- 0.0
        a += x[0]
        a *= x[2]
      }
      s += atan2(a, x[1])
      q += s * s * x[3]
      ~routine
    }
  }
  loss += q
  ~routine
}
// the middle of the body swaps the stages (and the inputs the head read, so that the tail still
// uncomputes them to zero: a valid program, checks on pass): the stages the backward loop needs
// are the post-middle ones (a = x[1], b = x[0] of the iteration's entry); the history holds the
// pre-middle ones (a = x[0], b = x[1])
fn swap_loss(loss: f64, x: f64[], y: f64[], n: i32) {
  routine {
    s <- 0.0
    for t in 0..n {
      routine {
        a, b <- 0.0, 0.0
        a += x[0]
        b += x[1]
      }
      SWAP(a, b)
      SWAP(x[0], x[1])
      s += a * a * y[0] + b * y[1]
      ~routine
    }
  }
  loss += s * s
  ~routine
}

fn inner(o: f64[], x: f64[], lo: i32, n: i32) {
  routine {
    s <- 0.0
    for t in lo..n {
      routine {
        a <- 0.0
        a += x[0] * f64(t) + x[1]
      }
      s += a * a
      routine {
        q <- 0.0
        for u in 0..t {
          routine {
            c, d <- 0.0, 0.0
            c += a * f64(u)
            d += c * c
          }
          q += d * x[1]
          ~routine
        }
      }
      s += q
      ~routine
      ~routine
    }
  }
  o[0] += s
  ~routine
}
// nested pairs, the callee called, uncalled and called again with other bounds
fn twice_loss(loss: f64, x: f64[], n: i32) {
  routine {
    o: f64[] <- zeros(2)
    inner(o, x, 0, n)
    o[1] += o[0]
    ~inner(o, x, 0, n)
    inner(o, x, -3, 2)
  }
  loss += o[0] * o[1]
  ~routine
}
fn rec(o: f64[], x: f64[], d: i32) {
  routine {
    s <- 0.0
    for t in 0..3 {
      routine {
        a <- 0.0
        a += x[0] * f64(t + d) + x[1]
      }
      s += a * a
      if (d > 0, ~) {
        rec(o, x, d - 1)
      }
      ~routine
    }
  }
  o[0] += s * x[1]
  ~routine
}
// a pair in a recursive callee
fn rec_loss(loss: f64, x: f64[], n: i32) {
  routine {
    o: f64[] <- zeros(1)
    rec(o, x, n)
  }
  loss += o[0] * o[0]
  ~routine
}
fn sqrt_loss(loss: f64, x: f64[], n: i32) {
  routine {
    s <- 0.0
    for t in 0..n {
      routine {
        a <- 0.0
        a += sqrt(x[0])
      }
      s += a * x[1]
      ~routine
    }
  }
  loss += s
  ~routine
}
`
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)
const compile = (backend: string, checks: boolean) =>
  compileModule(parse({ text: programs, name: 'r15a' }), { registry: registry(), backend, checks })

const outcome = (f: () => unknown): string => {
  try {
    return `ok ${JSON.stringify(f(), (_k, v) => (v instanceof Float64Array ? [...v].map(String) : typeof v === 'number' ? String(v) : v))}`
  } catch (e) {
    return `error ${(e as Error).message}`
  }
}

describe('stage histories against the two sweeps, checks on and central differences', () => {
  for (const backend of ['interpreter', 'cpu', 'wasm'])
    for (const [lo, hi, st] of [
      [3, 3, 0],
      [0, 5, 0],
    ] as const)
      it(`step 0 (${lo}..${hi}) on ${backend}: same outcome fused and two sweeps`, () => {
        const f = compile(backend, false).range_loss!
        const x = Float64Array.of(0.7, -0.4, 0.3)
        const a = outcome(() => grad(f, { loss: 0 })(0, x, lo, hi, st))
        const b = outcome(() => grad(f, { loss: 0, fuse: false })(0, x, lo, hi, st))
        const c = outcome(() => grad(compile(backend, true).range_loss!, { loss: 0 })(0, x, lo, hi, st))
        console.log(backend, lo, hi, st, '\n fused:', a, '\n sweeps:', b, '\n checks:', c)
        expect(a).toBe(b)
      })
  for (const backend of ['interpreter', 'cpu', 'wasm'])
    it(`sqrt at 0 in a stage on ${backend}: same gradient fused and two sweeps`, () => {
      const f = compile(backend, false).sqrt_loss!
      const x = Float64Array.of(0, 2)
      const a = flat(grad(f, { loss: 0 })(0, x, 3) as unknown[], [1])
      const b = flat(grad(f, { loss: 0, fuse: false })(0, x, 3) as unknown[], [1])
      const c = flat(grad(compile(backend, true).sqrt_loss!, { loss: 0 })(0, x, 3) as unknown[], [1])
      console.log(backend, a, b, c)
      expect(a.map(String)).toEqual(b.map(String))
    })

  for (const backend of ['interpreter', 'cpu', 'wasm'])
    it(`a stage of -0 comes back from the history as -0 (fused gradient = two sweeps) on ${backend}`, () => {
      const f = compile(backend, false).negzero_loss!
      const x = Float64Array.of(0, -1, -2, 1.5)
      const fused = flat(grad(f, { loss: 0 })(0, x, 3) as unknown[], [1])
      const sweeps = flat(grad(f, { loss: 0, fuse: false })(0, x, 3) as unknown[], [1])
      const checked = flat(grad(compile(backend, true).negzero_loss!, { loss: 0 })(0, x, 3) as unknown[], [1])
      expect(sweeps.map(String)).toEqual(checked.map(String))
      // d loss / d x[3] = sum_t s_t^2 = pi^2 (1 + 4 + 9) = 138.17 (fused at HEAD: 493.48)
      expectClose([sweeps[3]!], [centralDifferences(compile(backend, true).negzero_loss!, [0, x, 3], [1])[3]!], 1e-6)
      expect(fused.map(String)).toEqual(sweeps.map(String))
    })

  for (const backend of ['interpreter', 'cpu', 'wasm'])
    it(`a middle that writes the stages (SWAP): the history holds the stages as the middle leaves them on ${backend}`, () => {
      const x = Float64Array.of(0.5, 2)
      const y = Float64Array.of(1.5, -0.25)
      const f = compile(backend, false).swap_loss!
      const checked = compile(backend, true).swap_loss!
      const fused = flat(grad(f, { loss: 0 })(0, x, y, 3) as unknown[], [1, 2])
      const sweeps = flat(grad(f, { loss: 0, fuse: false })(0, x, y, 3) as unknown[], [1, 2])
      const ref = flat(grad(checked, { loss: 0 })(0, x, y, 3) as unknown[], [1, 2])
      // two sweeps = checks on = [23.25, 273.1875, 191.8125, 69.75] = central differences;
      // fused at HEAD: [127.875, 63.9375, 104.625, 104.625]
      expect(sweeps).toEqual(ref)
      expectClose(sweeps, centralDifferences(checked, [0, x, y, 3], [1, 2]), 1e-6)
      expect(fused).toEqual(sweeps)
    })

  for (const backend of ['interpreter', 'cpu', 'wasm'])
    it(`nested pairs, a callee called twice, a recursive callee: fused = two sweeps = checks on on ${backend}`, () => {
      const x = Float64Array.of(0.3, -0.7)
      for (const [name, n] of [
        ['twice_loss', 4],
        ['rec_loss', 2],
      ] as const) {
        const f = compile(backend, false)[name]!
        const checked = compile(backend, true)[name]!
        const fused = flat(grad(f, { loss: 0 })(0, x, n) as unknown[], [1])
        const sweeps = flat(grad(f, { loss: 0, fuse: false })(0, x, n) as unknown[], [1])
        expectClose(fused, sweeps, 1e-13, name)
        expectClose(fused, flat(grad(checked, { loss: 0 })(0, x, n) as unknown[], [1]), 1e-13, name)
        expectClose(fused, centralDifferences(checked, [0, x, n], [1]), 1e-6, name)
      }
    })
})
