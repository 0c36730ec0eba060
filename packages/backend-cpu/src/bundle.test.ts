import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import {
  backendUnderTest,
  bundlePrograms,
  cloneArgs,
  randomArgs,
  randomProgram,
  randomRealArgs,
  randomRealProgram,
  sameBits,
} from '@tenet/testing'

const cpu = backendUnderTest(cpuBackend, { checks: false })

describe('bundlePrograms: the bundle runs each member as the member alone does', () => {
  it('i32 programs (members sharing function names f and g), forward and inverse', () => {
    const programs = Array.from({ length: 6 }, (_, i) => randomProgram(100 + i, { features: { stack: false } })).filter(
      (p) => !p.source.includes('f64('),
    )
    const b = bundlePrograms(
      programs.map((p) => ({
        source: p.source,
        entry: p.entry,
        params: p.signature.params.map((q) => ({ name: q.name, type: q.type })),
      })),
    )
    const bundle = cpu.compile(b.source)[b.entry]!
    programs.forEach((p, k) => {
      const alone = cpu.compile(p.source)[p.entry]!
      const args = randomArgs(p.signature, k)
      const want = alone(...cloneArgs(args)) as unknown[]
      // the bundle's arguments: sel = k, this member's values, zeros (arrays of the same lengths) for the others
      const all = b.params.map((q) => {
        if (q.member === k)
          return cloneArgs([args[programs[k]!.signature.params.findIndex((s) => s.name === q.name)]!])[0]!
        const spec = programs[q.member]!.signature.params.find((s) => s.name === q.name)!
        return spec.type === 'i32' ? 0 : new Int32Array(spec.length)
      })
      const got = bundle(k, ...all) as unknown[]
      const mine = b.params.flatMap((q, j) => (q.member === k ? [got[j + 1]] : []))
      expect(mine.every((v, j) => sameBits(v, want[j]))).toBe(true)
      const back = (bundle as unknown as { inverse: (...a: unknown[]) => unknown[] }).inverse(...got)
      expect(b.params.every((q, j) => q.member !== k || sameBits(back[j + 1], all[j]))).toBe(true)
    })
  })

  it('f32 real programs', () => {
    const programs = Array.from({ length: 4 }, (_, i) =>
      randomRealProgram(7 + i, { type: 'f32', stacks: false, recursion: false }),
    )
    const params = ['w0', 'w1', 'w2', 'p', 'n', 'x'].map((name) => ({
      name,
      type: name === 'n' ? 'i32' : name === 'x' ? 'f32[]' : 'f32',
    }))
    const b = bundlePrograms(programs.map((p) => ({ source: p.source, entry: p.entry, params })))
    expect(b.source).toMatch(/fn f_3\(/)
    const bundle = cpu.compile(b.source)[b.entry]!
    programs.forEach((p, k) => {
      const [w0, w1, w2, q, n, x] = randomRealArgs(p, k)
      const mk = (m: number) =>
        m === k ? [w0, w1, w2, q, n, Float32Array.from(x)] : [0, 0, 0, 0, 0, new Float32Array(x.length)]
      const want = cpu.compile(p.source)[p.entry]!(w0, w1, w2, q, n, Float32Array.from(x)) as unknown[]
      const got = bundle(k, ...programs.flatMap((_, m) => mk(m))) as unknown[]
      expect(got.slice(1 + 6 * k, 7 + 6 * k).every((v, j) => sameBits(v, want[j]))).toBe(true)
    })
  })
})
