/**
 * `first-writes` and the `finite-*` passes compare indices that read `len(C)` across statements:
 * an array allocated again in between (`C -> zeros(n)`, then `C <- zeros(m)`) has another length,
 * so such an index names another element. Compiled programs against the reference interpreter,
 * called repeatedly (pooled arrays keep what an earlier call left in them).
 */
import { expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

const text = `fn f(y: f64[], x: f64[], n: i32, m: i32) {
  a: f64[] <- zeros(8)
  C: f64[] <- zeros(n)
  a[len(C)] += x[0]
  C -> zeros(n)
  C: f64[] <- zeros(m)
  y[0] += a[len(C)] * 2.0
  y[1] += a[len(C)] + x[1]
  C -> zeros(m)
  C: f64[] <- zeros(n)
  a[len(C)] -= x[0]
  C -> zeros(n)
  a -> zeros(8)
}`

for (const checks of [true, false])
  it(`an index reading len(C) of an array allocated again names another element (checks ${checks ? 'on' : 'off'})`, () => {
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
    const make = (backend: string) => compileModule(parse({ text, name: 'fwl' }), { registry, backend, checks }).f!
    const cpu = make('cpu'),
      ref = make('interpreter')
    const out: string[] = []
    for (const [n, m, x0] of [
      [1, 1, 5],
      [1, 3, 7],
      [2, 2, 9],
      [3, 1, 11],
      [2, 5, 13],
    ] as const) {
      const args = () => [new Float64Array(2), Float64Array.of(x0, 0.5), n, m]
      let r = '',
        w = ''
      const e1 = raisedError(() => {
        r = JSON.stringify(Array.from((cpu(...args()) as unknown[])[0] as Float64Array))
      })
      const e2 = raisedError(() => {
        w = JSON.stringify(Array.from((ref(...args()) as unknown[])[0] as Float64Array))
      })
      expect(`${e1} ${r}`, `n ${n} m ${m}`).toBe(`${e2} ${w}`)
      out.push(w)
    }
    // the reads after the second allocation see 0 where m differs from n
    expect(out[1]).toBe('[0,0.5]')
  })
