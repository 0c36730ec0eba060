import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { blockJacobian, type BlockJacobianOptions } from './index.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)
const compile = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend, checks })

// a per-block integer array and a shared i32 (values only: x's derivatives stay in scalars)
const text = `fn blk(r: f64[], x: f64[], idx: i32[], s: f64, k: i32) {
  r[0] += x[0] * x[1] * s * f64(idx[0]) + f64(k) * sin(x[2])
  r[1] += x[1] * x[2] / (1.0 + s * s)
  r[2] += exp(0.3 * x[1] * f64(idx[1] - k)) * s * s
}`
const opts: BlockJacobianOptions = { sizes: [3, 3, 2, null, null], inputs: [1, 3], outputs: [0], mode: 'reverse' }

function args(n: number) {
  let seed = 12345
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1
  const r = Float64Array.from({ length: 3 * n }, rnd)
  const x = Float64Array.from({ length: 3 * n }, rnd)
  const idx = Int32Array.from({ length: 2 * n }, (_, i) => (i * 7 + (i >> 1)) % 3)
  const s = Float64Array.from({ length: n }, rnd)
  return { r, x, idx, s }
}

describe('block Jacobian whole runs against chunked runs', () => {
  for (const n of [0, 1, 255, 256, 257, 700])
    it(`whole run equals chunked bits, ${n} blocks (cpu, wasm, resident, stale out)`, () => {
      const { r, x, idx, s } = args(n)
      const cpu = compile(text, 'cpu', false)
      const chunked = blockJacobian(cpu.blk!, { ...opts, chunk: 5 })
      const want = chunked.run(n, [r, x, idx, s, 2])
      const whole = blockJacobian(cpu.blk!, opts)
      expect(whole.plan.wholeRuns).toBe(true)
      const out = new Float64Array(want.length).fill(Number.NaN)
      whole.run(n, [r, x, idx, s, 2], out)
      expect(Array.from(out)).toEqual(Array.from(want))
      const wasm = blockJacobian(compile(text, 'wasm', false).blk!, opts)
      expect(wasm.plan.wholeRuns).toBe(true)
      expect(Array.from(wasm.run(n, [r, x, idx, s, 2]))).toEqual(Array.from(want))
      const memory = wasm.programs[0]!.core.resident!
      const hr = memory.allocate('f64', r.length)
      const hx = memory.allocate('f64', x.length)
      const hi = memory.allocate('i32', idx.length)
      const hs = memory.allocate('f64', s.length)
      const J = memory.allocate('f64', want.length)
      ;(hr.array as Float64Array).set(r)
      ;(hx.array as Float64Array).set(x)
      ;(hi.array as Int32Array).set(idx)
      ;(hs.array as Float64Array).set(s)
      ;(J.array as Float64Array).fill(Number.NaN)
      wasm.run(n, [hr.array, hx.array, hi.array, hs.array, 2], J.array as Float64Array)
      expect(Array.from(J.array)).toEqual(Array.from(want))
      // idx on the host: chunks
      ;(J.array as Float64Array).fill(Number.NaN)
      wasm.run(n, [hr.array, hx.array, idx, hs.array, 2], J.array as Float64Array)
      expect(Array.from(J.array)).toEqual(Array.from(want))
      for (const h of [hr, hx, hi, hs, J]) h.release()
      wasm.release()
    })
})
