/**
 * A float32 array argument is copied into and out of linear memory by its bits. An element the
 * program never writes comes back as passed, a signalling NaN included: copied element by element
 * through JavaScript doubles (as small arrays of other types are), a signalling NaN came back
 * quieted (0x7f800001 → 0x7fc00001), where the interpreter and the cpu backend keep it.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const src = 'fn w(y: f32[], x: f32[], k: i32) { y[k] += x[0] }'

describe('float32 arguments keep their bits through wasm memory', () => {
  for (const checks of [true, false])
    for (const n of [3, 64, 65, 200])
      it(`an untouched signalling NaN in a written array of ${n} elements (checks ${checks ? 'on' : 'off'}), forwards and backwards`, () => {
        const run = (b: ReturnType<typeof backendUnderTest>, inverse: boolean): string => {
          const f = b.compile(src).w!
          const y = new Float32Array(n)
          const bits = new Uint32Array(y.buffer)
          bits[0] = 0x7f800001 // signalling NaN
          bits[n - 1] = 0xffa00000 // signalling NaN, sign set
          ;(inverse ? f.inverse : f)(y, Float32Array.of(2.5), 1)
          return [...bits].map((v) => v.toString(16)).join(' ')
        }
        const ref = referenceBackend({ checks })
        for (const inverse of [false, true]) {
          const want = run(ref, inverse)
          expect(want.startsWith('7f800001 ')).toBe(true)
          expect(run(backendUnderTest(cpuBackend, { checks }), inverse)).toBe(want)
          expect(run(backendUnderTest(wasmBackend, { checks }), inverse)).toBe(want)
        }
      })
})
