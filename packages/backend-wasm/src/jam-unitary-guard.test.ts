/**
 * `jam`'s range guard (marked `sameWork`) with pass `tabulate`'s tables on the unitary
 * program (rotations over a triangle, per column), cpu and wasm, checks on and off, against the
 * interpreter: values, errors and the arrays after the call, forwards and backwards.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { raisedError } from '@tenet/testing'
import { createWasmBackend } from './index.js'

const umm = `fn f(x: f64[], theta: f64[], m: i32, n: i32) {
  for l in 0..n {
    k: i32 <- 0
    for j in 0..m {
      for i in m - 2..=j by -1 {
        ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        INC(k)
      }
    }
    k -> len(theta)
  }
}`
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend()).registerBackend(interpreterBackend)
type Fn = ((...a: unknown[]) => unknown) & { inverse: (...a: unknown[]) => unknown }
const mods = new Map<string, { f: Fn }>()
const mod = (backend: string, checks: boolean) => {
  const k = `${backend} ${checks}`
  if (!mods.has(k))
    mods.set(k, compileModule(parse({ text: umm, name: 'p' }), { registry: registry(), backend, checks }) as never)
  return mods.get(k)!
}

describe('unitary rotations: jam and tabulate', () => {
  // (one failing check at most: two independent ones may be reached in either order, see `jam`)
  const cases: Array<[number, number, number, number]> = []
  for (const [m, n] of [
    [0, 0],
    [1, 3],
    [2, 3],
    [3, 1],
    [4, 5],
    [5, 2],
    [6, 3],
    [7, 2],
  ] as const)
    for (const dt of [0, -1, 1]) for (const dx of [0, -1]) if (dt === 0 || dx === 0) cases.push([m, n, dt, dx])
  for (const backend of ['cpu', 'wasm'])
    for (const checks of [true, false])
      it(`${backend}, checks ${checks}`, () => {
        for (const [m, n, dt, dx] of cases)
          for (const inverse of [false, true]) {
            const run = (b: string, c: boolean) => {
              const x = Float64Array.from({ length: Math.max(0, m * n + dx) }, (_, i) => Math.sin(i + 1))
              const theta = Float64Array.from({ length: Math.max(0, (m * (m - 1)) / 2 + dt) }, (_, i) => 0.1 + 0.37 * i)
              const g = mod(b, c).f
              const e = raisedError(() => (inverse ? g.inverse(x, theta, m, n) : g(x, theta, m, n))).split('\n')[0]
              return `${e} | ${Array.from(x).join(',')}`
            }
            const want = run('interpreter', true)
            if (!checks && !want.startsWith('no error')) continue
            expect(`${m} ${n} ${dt} ${dx} ${inverse}: ${run(backend, checks)}`).toBe(
              `${m} ${n} ${dt} ${dx} ${inverse}: ${want}`,
            )
          }
      })
})
