/**
 * (Review 19a; with `heap-top-wrap.test.ts`.) The other place where an address passes 2 GiB — the
 * JS wrapper's layout of the array arguments (`makeWrapper` in backend.ts). `o = (o + n * size + 7)
 * & -8` is a 32-bit signed operation, and a nested call's start `s.hp.value` reads the i32 heap top
 * signed: an address past 2 GiB becomes negative. `o > s.bytes` is then false (no grow), the
 * copy-in `M[b + j] = p[j]` at a negative index writes nothing, and the wasm function reads the
 * argument from the (unsigned) address, where other memory is: wrong results without an error
 * (or a raw `RuntimeError: memory access out of bounds` where the memory is smaller). As in the
 * lead's test, the heap starts near the address (`heapBase`, as a resident array of ~2 GiB would
 * put it; a resident block may end at exactly 2³¹); here the memory is grown past 2 GiB first
 * (lazily committed: ~0.3 s).
 */
import { describe, expect, it } from 'vitest'
import { type BackendSpec, TenetError, createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { compileToWasm, createWasmBackend } from './backend.js'
import { createMemory, grow } from './memory.js'

function moduleAt(heapBase: number, src: string, hosts: unknown[], memoryBytes: number) {
  const memory = createMemory()
  if (memoryBytes) grow(memory, memoryBytes)
  memory.heapBase = heapBase
  const spec: BackendSpec = {
    ...createWasmBackend(),
    doCompile: (p, inv, o) => compileToWasm(p, inv, o, {}, memory),
  }
  const registry = createRegistry().registerBackend(spec)
  return compileModule(parse(src, hosts), { registry, backend: 'wasm' }) as Record<string, any>
}
const outcome = (f: () => unknown): string => {
  try {
    return JSON.stringify(f(), (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))
  } catch (e) {
    return e instanceof TenetError ? `throws ${e.code}` : `throws ${String(e).split('\n')[0]}`
  }
}
const add = 'fn f(y: f64[], x: f64[]) { for i in 0..len(x) { y[i] += x[i] } }'

describe('the wrapper lays out arguments past 2 GiB', () => {
  it('two arrays across the 2 GiB line (memory already 2 GiB + 64 KiB): the second is not copied in', () => {
    const m = moduleAt(2 ** 31 - 16, add, [], 2 ** 31 + 65536)
    // either right or runtime/out-of-memory; got y = [0, 0, 0] silently
    expect(outcome(() => m.f(new Float64Array(3), Float64Array.of(1, 2, 3)))).toBe('[[1,2,3],[1,2,3]]')
  })
  it('the same with a small memory: a raw wasm trap, not grown (nor runtime/out-of-memory)', () => {
    const m = moduleAt(2 ** 31 - 16, add, [], 0)
    const got = outcome(() => m.f(new Float64Array(3), Float64Array.of(1, 2, 3)))
    expect(got === '[[1,2,3],[1,2,3]]' || got === 'throws runtime/out-of-memory', got).toBe(true)
  })
  it('a nested call (from a host function) while the heap top is at 2 GiB reads its array from elsewhere', () => {
    let m: Record<string, any> = {}
    const host = (v: number) => {
      const y = new Float64Array(3)
      m.f(y, Float64Array.of(1, 2, 3))
      return v + y[0]! + y[1]! + y[2]!
    }
    m = moduleAt(2 ** 31, `${add}\nfn outer(s: f64) { s += \${0}(1.0) }`, [host], 2 ** 31 + 65536)
    expect(outcome(() => m.outer(0))).toBe('[7]')
  })
})

describe('an allocation in a memory of the full 4 GiB', () => {
  it('a small array below the end is allocated (memory.size << 16 wraps to 0: every allocation asks to grow)', () => {
    // the memory at its 65536 pages (lazily committed); the heap 1 MiB below its end
    const m = moduleAt(
      2 ** 32 - 2 ** 20,
      `fn f(y: f64, n: i32) {
  a: f64[] <- zeros(n)
  a[n - 1] += 2.0
  y += a[n - 1]
  a[n - 1] -= 2.0
  a -> zeros(n)
}`,
      [],
      2 ** 32,
    )
    expect(outcome(() => m.f(1, 8))).toBe('[3,8]')
  })
})
