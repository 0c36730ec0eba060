/**
 * Loop-carried elements (`carriedElements`) where two array parameters may share memory (the unchecked `.core` entry) and where two writes' indices differ by 2³² (i32 wrap), against the reference interpreter, cpu and wasm, checks on and off.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const backends = {
  refC: referenceBackend({ checks: true }),
  refU: referenceBackend({ checks: false }),
  cpuC: backendUnderTest(cpuBackend, { checks: true }),
  cpuU: backendUnderTest(cpuBackend, { checks: false }),
  wasmC: backendUnderTest(wasmBackend, { checks: true }),
  wasmU: backendUnderTest(wasmBackend, { checks: false }),
}
type Key = keyof typeof backends

function runAll(src: string, args: () => unknown[], name = 'f', core = true): Record<Key, string> {
  const out = {} as Record<Key, string>
  for (const [k, b] of Object.entries(backends) as Array<[Key, (typeof backends)['refC']]>) {
    const a = args()
    let err: string
    try {
      const fn = b.compile(src)[name]!
      err = raisedError(() => (core ? fn.core(...a) : fn(...a)))
    } catch (e) {
      err = `compile: ${String(e)}`
    }
    const vals = a
      .filter((x) => ArrayBuffer.isView(x))
      .map((x) => `[${Array.from(x as Float64Array).join(',')}]`)
      .join(' ')
    out[k] = `${err} || ${vals}`
  }
  return out
}

afterEach(() => disabledPasses.delete('carried-elements'))

describe('carried elements: aliased parameters and wrapping indices', () => {
  it('one array passed for a and b to the unchecked core: the carried local misses the write through b', () => {
    const src = `fn f(a: f64[], b: f64[]) {
  for i in 1..len(a) {
    a[i] += a[i - 1] * 0.5
    b[i] += 1.0
  }
}`
    const args = () => {
      const a = Float64Array.from([1, 2, 3, 4, 5])
      return [a, a]
    }
    const r = runAll(src, args)
    // (switched off, every backend agrees with the reference)
    disabledPasses.add('carried-elements')
    const off = runAll(src + '\n', args)
    disabledPasses.delete('carried-elements')
    expect(off.cpuU).toBe(off.refU)
    expect(off.wasmU).toBe(off.refU)
    expect({ cpuC: r.cpuC, wasmC: r.wasmC, cpuU: r.cpuU, wasmU: r.wasmU }).toEqual({
      cpuC: r.refC,
      wasmC: r.refC,
      cpuU: r.refU,
      wasmU: r.refU,
    })
    for (const k of ['cpuC', 'wasmC'] as const) expect(`${k}: ${r[k]}`).toBe(`${k}: ${r.refC}`)
    for (const k of ['cpuU', 'wasmU'] as const) expect(`${k}: ${r[k]}`).toBe(`${k}: ${r.refU}`)
  })

  it('two writes whose polynomial distance is 2^32 store one element (i32 indices wrap)', () => {
    // \`i + 65536 * 65536\` is \`i\` in i32 arithmetic: both updates write a[i], and the next
    // iteration must read the sum of both; the analysis takes the distance 2^32 for "apart"
    const src = `fn f(a: f64[], n: i32) {
  for i in 1..n {
    a[i] += a[i - 1] * 0.5
    a[i + 65536 * 65536] += 1.0
  }
}`
    const args = () => [Float64Array.from([1, 2, 3, 4, 5]), 5]
    const r = runAll(src, args, 'f', false)
    expect(r.refC).toMatch(/^no error \|\| \[1,3\.5,5\.75,7\.875,9\.9375\]$/)
    expect({ cpuC: r.cpuC, wasmC: r.wasmC, cpuU: r.cpuU, wasmU: r.wasmU }).toEqual({
      cpuC: r.refC,
      wasmC: r.refC,
      cpuU: r.refU,
      wasmU: r.refU,
    })
  })
})
