/**
 * An array allocation whose end would pass the 4 GiB of a wasm32 memory: the heap top (an i32)
 * must not wrap around to a small address that the memory already holds. The memory here starts
 * its heap near 4 GiB (its `heapBase`, as if more than 2 GiB were live), so that one small
 * allocation reaches the end without a large memory: it is `runtime/out-of-memory` (the memory
 * cannot grow further), like any allocation the memory cannot hold, not a trap of the zeroing
 * or of a later access.
 */
import { describe, expect, it } from 'vitest'
import { type BackendSpec, createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { compileToWasm, createWasmBackend } from './backend.js'
import { createMemory } from './memory.js'

function moduleNearTop(heapBase: number, checks: boolean) {
  const memory = createMemory()
  memory.heapBase = heapBase
  const spec: BackendSpec = {
    ...createWasmBackend(),
    doCompile: (p, inv, o) => compileToWasm(p, inv, o, {}, memory),
  }
  const registry = createRegistry().registerBackend(spec)
  const src = `fn f(y: f64, n: i32) {
  a: f64[] <- zeros(n)
  a[n - 1] += 2.0
  y += a[n - 1]
  a[n - 1] -= 2.0
  a -> zeros(n)
}`
  return compileModule(parse(src), { registry, backend: 'wasm', checks })
}

describe('wasm: an allocation past the end of the 32-bit address space', () => {
  for (const checks of [true, false])
    it(`is runtime/out-of-memory, not a wrapped heap top (checks ${checks})`, () => {
      // the heap 32 KiB below 4 GiB; a 64 KiB array would end 32 KiB past it
      const m = moduleNearTop(2 ** 32 - 32768, checks)
      let err: unknown
      try {
        m.f!(1, 8192)
      } catch (e) {
        err = e
      }
      expect((err as { code?: string }).code).toBe('runtime/out-of-memory')
      expect(String(err)).toMatch(/cannot allocate `a` \(zeros\(8192\)\)/)
    })
})
