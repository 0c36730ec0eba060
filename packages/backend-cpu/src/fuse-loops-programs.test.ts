/**
 * Random pairs of loops over one range (pass `fuse-loops`): bodies that touch arrays at the loop's
 * index, at other indices and through a scalar, with or without a statement between the loops.
 * The programs must compute the same bits as the reference interpreter, forwards and backwards,
 * on the cpu backend with checks on (no fusion) and off (fusion where its dependence test allows);
 * the optimised IR is captured to count the pairs fused.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import {
  backendUnderTest,
  conformanceProblems,
  optimisedIr,
  Random,
  referenceBackend,
  runConformance,
} from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = createRegistry()
const backends = [
  referenceBackend(),
  backendUnderTest(cpuBackend, { registry }),
  { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
]

/** Statements of a body over index `v` (arrays of length n + 2, v in 0..=n). */
const statements = (v: string) => [
  `a[${v}] += b[${v}]`,
  `c[${v}] += a[${v}] * 2`,
  `b[${v}] -= c[${v}]`,
  `a[${v} + 1] += c[${v}]`,
  `c[${v}] += a[${v} + 1]`,
  `s += a[${v}]`,
  `b[${v}] += s`,
  `c[${v}] ^= b[${v}]`,
  `a[${v}] += c[n - ${v}]`,
  `b[${v}] += a[0] * ${v}`,
]

function loopPair(seed: number): string {
  const r = new Random(seed)
  const range = r.pick(['0..n', 'reverse 0..n', '1..=n', '0..n by 2', 'reverse 0..=n'])
  const body = (v: string) => Array.from({ length: r.int(1, 3) }, () => r.pick(statements(v))).join('\n    ')
  const first = body('i')
  const v2 = r.pick(['i', 'j'])
  const second = body(v2)
  const between = r.pick(['', '', 's += b[0]', 'c[0] += 1', `for k in 0..n { b[k] += 1 }`])
  return `fn f(a: i32[], b: i32[], c: i32[], s: i32, n: i32) {
  for i in ${range} {
    ${first}
  }
  ${between}
  for ${v2} in ${range} {
    ${second}
  }
}`
}

describe('random loop pairs: the cpu backend, checks on and off, agrees with the interpreter', () => {
  it('120 programs: the bits agree, and some pairs are fused', () => {
    const failures: string[] = []
    let fused = 0
    for (let seed = 0; seed < 120; seed++) {
      const source = loopPair(seed)
      const r = new Random(1000 + seed)
      const n = r.int(2, 6)
      const arr = () => Int32Array.from({ length: n + 2 }, () => r.int(-9, 9))
      const found = conformanceProblems(
        runConformance({ source, entry: 'f' }, [arr(), arr(), arr(), r.int(-5, 5), n], backends),
      )
      if (found.length) failures.push(`seed ${seed}:\n${source}\n${found.join('\n')}`)
      if ((optimisedIr(cpuBackend, source, { name: 'pair' }).match(/\bfor [ij] in/g) ?? []).length === 1) fused++
    }
    expect(failures.slice(0, 2).join('\n\n')).toBe('')
    expect(fused).toBeGreaterThan(10)
  })
})
