import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { expect, it } from 'vitest'
import { blockJacobian, type BlockJacobianOptions } from './index.js'
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)
const compile = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend, checks })
const text = `fn blk(r: f64[], x: f64[], k: i32, q: i32[]) {
  r[0] += x[0] * x[1]
  for i in 0..2 by q[0] { r[1] += x[1] * f64(i) * x[0] }
}`
const opts: BlockJacobianOptions = { sizes: [2, 2, null, 1], inputs: [1], outputs: [0], mode: 'reverse' }
it('a block that throws part-way through a whole run leaves nothing behind', () => {
  const n = 600
  const r = new Float64Array(2 * n).fill(1)
  const x = Float64Array.from({ length: 2 * n }, (_, i) => Math.sin(i))
  const q = new Int32Array(n).fill(1)
  const bad = q.slice()
  bad[400] = 0
  for (const backend of ['cpu', 'wasm']) {
    const bj = blockJacobian(compile(text, backend, false).blk!, opts)
    const want = blockJacobian(compile(text, backend, false).blk!, { ...opts, chunk: 7 }).run(n, [r, x, 0, q])
    expect(bj.plan.wholeRuns).toBe(true)
    let msg = ''
    try {
      bj.run(n, [r, x, 0, bad])
    } catch (e) {
      msg = (e as Error).message
    }
    expect(msg).toMatch(/loop step is 0/)
    expect(Array.from(bj.run(n, [r, x, 0, q]))).toEqual(Array.from(want))
    if (backend === 'wasm') {
      const memory = bj.programs[0]!.core.resident!
      const hr = memory.allocate('f64', r.length),
        hx = memory.allocate('f64', x.length),
        hq = memory.allocate('i32', q.length)
      const J = memory.allocate('f64', want.length)
      ;(hr.array as Float64Array).set(r)
      ;(hx.array as Float64Array).set(x)
      ;(hq.array as Int32Array).set(bad)
      try {
        bj.run(n, [hr.array, hx.array, 0, hq.array], J.array as Float64Array)
      } catch (e) {
        msg = (e as Error).message
      }
      expect(msg).toMatch(/loop step is 0/)
      ;(hq.array as Int32Array).set(q)
      bj.run(n, [hr.array, hx.array, 0, hq.array], J.array as Float64Array)
      expect(Array.from(J.array)).toEqual(Array.from(want))
      expect(Array.from(hx.array)).toEqual(Array.from(x))
    }
  }
})
