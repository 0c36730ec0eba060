/**
 * Review 19a: the aliasing rule across reentrant calls (`running-calls.ts` of @tenet/reversible)
 * is tested only in the wrapper of a compiled function. The AD entry points run the programs'
 * cores, so a host function that differentiates a function of the running call's written array
 * (`grad(m.sq, …)(0, y)` while `m.f` writes `y`) is not refused, where the plain call `m.sq(0, y)`
 * is `call/overlap`: it reads the array the running call may hold elsewhere (locals on cpu, its
 * linear memory on wasm) and its value depends on the backend.
 */
import { describe, expect, it } from 'vitest'
import { TenetError, createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { grad, jvp } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const src = `fn sq(s: f64, y: f64[]) { s += y[1] * y[1] }
fn f(y: f64[], x: f64[], z: f64[], k: i32, n: i32) {
  for i in 0..n { y[k] += 1.0 ; z[i] += \${0}(x[i]) }
}`
type M = Record<string, any>

function run(backend: string, how: 'call' | 'grad' | 'jvp'): string {
  let m: M = {}
  let g: ((s: number, y: Float64Array) => number) | undefined
  const y = new Float64Array(3)
  const host = (v: number) => v + g!(0, y)
  m = compileModule(parse(src, [host]), { registry, backend })
  if (how === 'call') g = (s, a) => m.sq(s, a)[0]
  else if (how === 'grad') {
    const d = grad(m.sq, { loss: 0 })
    g = (s, a) => (d(s, a)[1] as Float64Array)[1]!
  } else g = (s, a) => JSON.stringify(jvp(m.sq as never, [s, a], { v: [0, Float64Array.of(0, 1, 0)] } as never)).length
  try {
    m.f(y, Float64Array.of(1, 2, 3), new Float64Array(3), 1, 3)
    return 'ran'
  } catch (e) {
    return e instanceof TenetError ? e.code : String(e)
  }
}

describe('review19a: AD entry points nested in a running call', () => {
  for (const backend of ['interpreter', 'cpu'])
    it(`the plain call is refused, ${backend}`, () => {
      expect(run(backend, 'call')).toBe('call/overlap')
    })
  for (const backend of ['interpreter', 'cpu'])
    for (const how of ['grad', 'jvp'] as const)
      it(`FAILS: ${how} of a function of the running call's written array is refused as the call is, ${backend}`, () => {
        expect(run(backend, how)).toBe('call/overlap')
      })
})
