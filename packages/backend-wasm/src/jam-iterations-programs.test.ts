/**
 * Pass `jam-iterations` (`@tenet/ir`), checks off, against the reference interpreter.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, optimisedIr, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const backends = {
  refU: referenceBackend({ checks: false }),
  cpuU: backendUnderTest(cpuBackend, { checks: false }),
  wasmU: backendUnderTest(wasmBackend, { checks: false }),
}
type Key = keyof typeof backends

const show = (x: unknown) =>
  ArrayBuffer.isView(x)
    ? `[${Array.from(x as Float64Array)
        .map((v) => (Object.is(v, -0) ? '-0' : String(v)))
        .join(',')}]`
    : String(x)

/** `error || result || arrays after the call`, per backend (`core`: the unchecked entry). */
function runAll(src: string, args: () => unknown[], name: string, core: boolean): Record<Key, string> {
  const out = {} as Record<Key, string>
  for (const [k, b] of Object.entries(backends) as Array<[Key, (typeof backends)['refU']]>) {
    const a = args()
    let res: unknown = ''
    let err: string
    try {
      err = raisedError(() => {
        const fn = b.compile(src)[name]!
        res = core ? fn.core(...a) : fn(...a)
      })
    } catch (e) {
      err = `compile: ${String(e)}`
    }
    const r = Array.isArray(res) ? res.map(show).join(' ') : show(res)
    out[k] = `${err} || ${r} || ${a
      .filter((x) => ArrayBuffer.isView(x))
      .map(show)
      .join(' ')}`
  }
  return out
}

const applies = (src: string, entry = 'f') => optimisedIr(cpuBackend, src, { checks: false, entry }).includes('$b')

const xs = (n: number, at = 0.1) => Float64Array.from({ length: n }, (_, i) => at + 0.3 * i)

describe('jam-iterations: programs against the interpreter', () => {
  it('.core with one array passed for a read and a written parameter (the $apart guard runs the loop as written)', () => {
    const src = `fn f(xs: f64[], out: f64[], c: f64[]) {
  for j in 0..len(xs) - 1 {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    }
    out[j + 1] += acc[len(c) - 1]
    ~routine
  }
}`
    if (!process.env.TENET_DISABLE_PASSES) expect(applies(src)).toBe(true)
    const r = runAll(
      src,
      () => {
        const a = xs(9)
        return [a, a, xs(3, 0.5)]
      },
      'f',
      true,
    )
    expect(r.cpuU).toBe(r.refU)
    expect(r.wasmU).toBe(r.refU)
  })
  it("checks off, an out-of-range read of a later iteration may fail before an earlier iteration's (wasm checks bounds with checks off): still a TenetError runtime/out-of-bounds", () => {
    const src = `fn f(xs: f64[], ys: f64[], out: f64[], c: f64[]) {
  for j in 0..len(out) {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    }
    out[j] += acc[len(c) - 1] * ys[j]
    ~routine
  }
}`
    if (!process.env.TENET_DISABLE_PASSES) expect(applies(src)).toBe(true)
    const r = runAll(src, () => [xs(5), xs(4, 0.2), xs(8, 0.3), xs(3, 0.5)], 'f', false)
    // the interpreter: iteration 4 reads ys[4] out of range (xs[4] is in range)
    expect(r.refU).toContain('ys')
    // (the error only: with checks off the arrays may be partially updated, and wasm copies nothing back)
    const err = (x: string) => x.split(' || ')[0]
    // (cpu with checks off checks no bounds: not compared; on wasm, which access the error names
    // may change with the pass, as with other checks-off passes: the error's kind does not)
    expect(err(r.refU)).toContain('runtime/out-of-bounds')
    expect(err(r.wasmU)).toContain('runtime/out-of-bounds')
    expect(err(r.wasmU)).not.toContain('not a TenetError')
  })
  it('checks off, a body that writes a name its loop range reads: left as written', () => {
    const src = `fn f(loss: f64, m: i32, c: f64[], xs: f64[]) {
  for j in 0..m {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    }
    loss += acc[len(c) - 1]
    m -= 1
    ~routine
  }
}`
    // (the pass leaves it: the range is evaluated again after the groups)
    expect(applies(src)).toBe(false)
    const r = runAll(src, () => [0, 9, xs(3, 0.5), xs(9)], 'f', false)
    expect(r.cpuU).toBe(r.refU)
    expect(r.wasmU).toBe(r.refU)
  })
  it('outer loops of every form (forward, inclusive, by -1, reverse) at the ends of the i32 range, 0–11 trips, against the interpreter', () => {
    const heads = [
      'for j in a..b',
      'for j in a..=b',
      'for j in b..=a by -1',
      'for j in b..a by -1',
      'for j in reverse a..b',
      'for j in reverse a..=b',
      'for j in reverse b..=a by -1',
      'for j in reverse b..a by -1',
    ]
    for (const head of heads.filter((h) => !process.env.JAM_HEAD || h === process.env.JAM_HEAD)) {
      const src = `fn f(loss: f64, a: i32, b: i32, g: f64[], c: f64[], xs: f64[], out: f64[]) {
  ${head} {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j - a]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j - a] + c[k] }
    }
    for k in 1..len(c) { g[k] += acc[k] * xs[j - a] }
    out[j - a] += acc[len(c) - 1]
    g[0] -= acc[0]
    loss += acc[len(c) - 1] * out[j - a]
    ~routine
  }
}`
      if (!process.env.TENET_DISABLE_PASSES) expect(applies(src), head).toBe(true)
      for (const a of process.env.JAM_A ? [Number(process.env.JAM_A)] : [0, -5, 2147483647 - 12, -2147483648 + 1])
        for (let n = 0; n <= 11; n++) {
          const r = runAll(src, () => [0.25, a, a + n, xs(3, -0.5), xs(3, 0.5), xs(13, -1), xs(13, 2)], 'f', false)
          expect(r.cpuU, `${head} ${a} ${n}`).toBe(r.refU)
          expect(r.wasmU, `${head} ${a} ${n}`).toBe(r.refU)
        }
    }
  })
  it('a loop counting down to -2^31 (or up to 2^31 - 1) by 1, trips a multiple of 4: no leftover loop (its start last ± 1 would wrap)', () => {
    const cases: Array<[string, number, number]> = [
      ['for j in b..=a by -1', -2147483648, -2147483648 + 3],
      ['for j in reverse a..=b', -2147483648, -2147483648 + 3],
      ['for j in a..=b', 2147483647 - 3, 2147483647],
      ['for j in reverse b..=a by -1', 2147483647 - 3, 2147483647],
    ]
    const bad: string[] = []
    for (const [head, a, b] of cases) {
      const src = `fn f(loss: f64, a: i32, b: i32, c: f64[], xs: f64[], out: f64[]) {
  ${head} {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[0] += xs[j - a]
      for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j - a] + c[k] }
    }
    out[j - a] += acc[len(c) - 1]
    loss += acc[len(c) - 1] * out[j - a]
    ~routine
  }
}`
      if (!process.env.TENET_DISABLE_PASSES) expect(applies(src), head).toBe(true)
      // (wasm only: on cpu, checks off, the wrapped loop runs about 2^29 more groups, out of range, before it ends)
      const ref = backends.refU.compile(src).f!
      const wasm = backends.wasmU.compile(src).f!
      const args = () => [0.25, a, b, xs(3, 0.5), xs(4, -1), xs(4, 2)]
      const r1 = args(),
        r2 = args()
      const e1 = raisedError(() => ref(...r1)),
        e2 = raisedError(() => wasm(...r2))
      const got = `${e2.split('\n')[0]} ${show(r2[5])}`,
        want = `${e1.split('\n')[0]} ${show(r1[5])}`
      if (got !== want) bad.push(`${head} (a = ${a}, b = ${b}): ${got} instead of ${want}`)
    }
    expect(bad).toEqual([])
  })
})
