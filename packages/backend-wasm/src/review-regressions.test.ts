/**
 * Regressions an adversarial review of the tenth round's compiler changes found (each fixed), and
 * checks it made that hold: every case compares the reference interpreter with the cpu and wasm
 * backends, checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

type Args = () => unknown[]

const backends = {
  refC: referenceBackend({ checks: true }),
  refU: referenceBackend({ checks: false }),
  cpuC: backendUnderTest(cpuBackend, { checks: true }),
  cpuU: backendUnderTest(cpuBackend, { checks: false }),
  wasmC: backendUnderTest(wasmBackend, { checks: true }),
  wasmU: backendUnderTest(wasmBackend, { checks: false }),
}

/** `error || arrays after the call`, per backend. */
export function runAll(src: string, args: Args, name = 'f', core = false): Record<keyof typeof backends, string> {
  const out = {} as Record<keyof typeof backends, string>
  for (const [k, b] of Object.entries(backends) as Array<[keyof typeof backends, (typeof backends)['refC']]>) {
    const a = args()
    let err: string
    try {
      // (\`core\`: the unchecked entry, which does not test the aliasing rule as a call does)
      const fn = core ? b.compile(src)[name]!.core : b.compile(src)[name]!
      err = raisedError(() => fn(...a))
    } catch (e) {
      err = `compile: ${String(e)}`
    }
    const vals = a
      .filter((x) => ArrayBuffer.isView(x) && (x as Float64Array).length <= 64)
      .map(
        (x) =>
          `[${Array.from(x as Float64Array)
            .map(String)
            .join(',')}]`,
      )
      .join(' ')
    out[k] = `${err} || ${vals}`
  }
  return out
}

/** Runs with pass `p` switched off (a distinct source text, so no cached compilation is reused). */
function without<T>(p: Parameters<typeof disabledPasses.add>[0], f: (pad: string) => T): T {
  disabledPasses.add(p)
  try {
    return f(`\n// without ${p}\n`)
  } finally {
    disabledPasses.delete(p)
  }
}

export const f64 = (...v: number[]) => Float64Array.from(v)
export const i32 = (...v: number[]) => Int32Array.from(v)
export const u8 = (...v: number[]) => Uint8Array.from(v)
export { disabledPasses }

describe('review: cpu folded bounds (foldedBounds)', () => {
  // bool `&` and `|` are eager in Tenet (insert-checks puts an unguarded bounds assert before the
  // statement), but the cpu generator writes them as JS `&&` / `||`: the folded load `a[i] ?? rt.fail`
  // is then skipped, and the assert it took over is gone
  const progs: Array<[string, string, Args]> = [
    [
      'if (c & a[i] > 0)',
      `fn f(y: f64, a: f64[], c: bool, i: i32) {
  if (c & (a[i] > 0.0), ~) {
    y += 1.0
  }
}`,
      () => [0, f64(1, 2), false, 5],
    ],
    [
      'if (c | a[i] > 0)',
      `fn f(y: f64, a: f64[], c: bool, i: i32) {
  if (c | (a[i] > 0.0), ~) {
    y += 1.0
  }
}`,
      () => [0, f64(1, 2), true, 5],
    ],
    [
      'y ^= c & a[i] > 0',
      `fn f(y: bool, a: f64[], c: bool, i: i32) {
  y ^= c & (a[i] > 0.0)
}`,
      () => [false, f64(1, 2), false, 5],
    ],
  ]
  for (const [what, src, args] of progs)
    it(`an index out of range under bool & / | is reported (cpu, checks on): ${what}`, () => {
      const r = runAll(src, args)
      expect(r.refC).toMatch(/^runtime\/out-of-bounds/)
      expect(r.wasmC).toBe(r.refC)
      expect(r.cpuC).toBe(r.refC) // cpuC: 'no error'
    })
})

describe('review: insert-checks leaves out the post-condition of if (c, ~)', () => {
  // a host array passed for two parameters (the wasm backend and the host boundary support it):
  // the branch writes `b`, which is `a`, so c changes; at a2a3f93 every backend, the reference
  // included, raised runtime/post-condition; now none does
  it('the violated post-condition of an if (c, ~) is reported when the branch writes the array of c under another name', () => {
    const src = `fn f(a: f64[], b: f64[]) {
  if (a[0] > 0.0, ~) {
    b[0] -= 10.0
  }
}`
    const one = () => {
      const x = f64(5)
      return [x, x]
    }
    // a call breaks the aliasing rule (\`b\` written, \`a\` one array with it); the unchecked core runs it
    const r = runAll(src, one, 'f', true)
    for (const k of ['refC', 'cpuC', 'wasmC'] as const) expect(r[k]).toMatch(/^runtime\/post-condition/)
    for (const [k, v] of Object.entries(runAll(src, one)))
      expect(`${k}: ${v}`).toMatch(
        new RegExp(
          `^${k}: call/overlap \\| arguments 1 \\(\`a: f64\\[\\]\`\\) and 2 \\(\`b: f64\\[\\]\`\\) of \`f\` share memory, and \`f\` writes \`b\``,
        ),
      )
  })
})

describe('review: cancel-uncompute', () => {
  it('aliased arrays give the values of the reference', () => {
    const src = `fn f(k: i32[], b: i32[], r: f64[], n: i32) {
  @unchecked {
    for i in 0..n {
      k[i] += 1
      if (b[i] > 0, ~) {
        r[i] += 1.0
      }
    }
    ~{
      for i in 0..n {
        k[i] += 1
      }
    }
  }
}`
    const args = () => {
      const k = i32(0, 0)
      return [k, k, f64(0, 0), 2]
    }
    // (the pass is the cause: without it the values agree)
    // (a call breaks the aliasing rule, \`k\` written and one array with \`b\`: the unchecked core runs it)
    for (const [key, v] of Object.entries(runAll(src, args)))
      expect(`${key}: ${v}`).toMatch(new RegExp(`^${key}: call/overlap`))
    without('cancel-uncompute', (pad) => {
      const r = runAll(src + pad, args, 'f', true)
      expect([r.cpuC, r.wasmC]).toEqual([r.refC, r.refC])
    })
    const r = runAll(src, args, 'f', true)
    expect(r.refC).toBe('no error || [0,0] [0,0] [1,1]')
    expect(r.cpuC).toBe(r.refC) // cpuC, wasmC: r = [0,0]
    expect(r.wasmC).toBe(r.refC)
  })

  it('no copy reads k[i] where the loop reads it only in a branch', () => {
    const src = `fn f(k: bool[], n: i32, m: i32) {
  @unchecked {
    for i in 0..n {
      if (i < m, ~) {
        k[i] ^= true
      }
    }
    ~{
      for i in 0..n {
        if (i < m, ~) {
          k[i] ^= true
        }
      }
    }
  }
}`
    const args = () => [u8(0, 1), 4, 2]
    without('cancel-uncompute', (pad) => expect(runAll(src + pad, args).wasmC).toBe('no error || [0,1]'))
    const r = runAll(src, args)
    expect(r.refC).toBe('no error || [0,1]')
    expect(r.wasmC).toBe(r.refC) // wasmC: runtime/out-of-bounds, index 2 of `k` (at 5:9)
  })
})

describe('review: finite-uncompute', () => {
  // cse `key` prints -0 as 0, so `y -= a[0] / -0.0` is taken for the uncompute of `y += a[0] / 0.0`
  it('-0.0 is not 0.0: the deallocation error reports Infinity, as the reference does', () => {
    const src = `fn f(a: f64[]) {
  y <- 0.0
  y += a[0] / 0.0
  y -= a[0] / -0.0
  y -> 0.0
}`
    const args = () => [f64(1)]
    without('finite-uncompute', (pad) => {
      const r = runAll(src + pad, args)
      expect([r.cpuC, r.wasmC]).toEqual([r.refC, r.refC])
    })
    const r = runAll(src, args)
    expect(r.refC).toMatch(/^runtime\/dealloc \| cannot deallocate `y`: it holds Infinity/)
    expect(r.cpuC).toBe(r.refC) // 'it holds NaN'
    expect(r.wasmC).toBe(r.refC)
  })
})

describe('review: pair-series with checks on (cpu)', () => {
  // Element 0's series fails a deallocation check in its 2nd iteration; element 1's series would
  // never end (its inner loop with z = Infinity). The reference (and the cpu backend with
  // TENET_DISABLE_PASSES=pair-series) raise element 0's error; with pair-series the joint loop runs
  // element 1's 1st iteration before element 0's 2nd, and the call never returns.
  // SKIPPED because it hangs the worker: run it alone with
  //   timeout 40 npx vitest run src/review10.test.ts -t 'pair-series hangs' (after removing .skip)
  const src = `fn g(o: f64, z: f64) {
  u <- 0.0
  u += 1.0
  u += 2.0
  u += 3.0
  u += 4.0
  u += 5.0
  u += 6.0
  u += 7.0
  u += 8.0
  k <- 0.0
  while (k < 3.0, k > 0.0) {
    k += 1.0
    w <- 0.0
    while (w < z, w > 0.0) {
      w += 1.0
    }
    o += w
    ~{
      while (w < z, w > 0.0) {
        w += 1.0
      }
    }
    w -> 0.0
    t <- k * k
    t -> k
  }
  k -> 3.0
  o += u
  u -= 1.0
  u -= 2.0
  u -= 3.0
  u -= 4.0
  u -= 5.0
  u -= 6.0
  u -= 7.0
  u -= 8.0
  u -> 0.0
}
fn f(o: f64[], z: f64[]) {
  for i in 0..len(z) { g(o[i], z[i]) }
}`
  it("pair-series does not pair a series whose iterations may not end: element 0's error, no hang", () => {
    const args = () => [new Float64Array(3), f64(0.5, Number.POSITIVE_INFINITY, 0.5)]
    const want = raisedError(() => backends.refC.compile(src).f!(...args()))
    expect(want).toMatch(/^runtime\/dealloc \| cannot deallocate `t`: it holds 4, but `t -> k` expects 2/)
    expect(raisedError(() => backends.cpuC.compile(src).f!(...args()))).toBe(want)
  })
})

describe('review: checks that hold (no bug found)', () => {
  it('cpu paired iterations (checks off) match the reference on up, down, inclusive, reverse loops of every short trip count', () => {
    const src = `fn f(x: f64[], y: f64[], n: i32, m: i32) {
  for i in 0..n { y[i] += x[i] * 2.0 }
  for i in 0..=m { y[i] -= x[i + 1] }
  for i in m..0 by -1 { y[i] += x[i] * 0.5 + y[i - 1] }
  ~{
    for i in 0..n { y[i] += x[i] * 3.0 + y[i + 1] }
  }
  for i in 0..n { y[i] += y[i + 1] * 0.5 }
  for i in n..=m { y[i] += x[i] * x[i] }
  ~{
    for i in 1..=m { y[i] -= y[i - 1] * 0.25 }
  }
  for i in 0..n {
    t <- x[i] * 0.5
    y[i + 1] += t * t
    t -> x[i] * 0.5
  }
}`
    for (let n = -1; n <= 7; n++)
      for (let m = -1; m <= 7; m++) {
        const r = runAll(src, () => [
          Float64Array.from({ length: 10 }, (_, k) => k * 0.37 + 0.1),
          Float64Array.from({ length: 10 }, (_, k) => 1 - k * 0.11),
          n,
          m,
        ])
        if (!r.refU.startsWith('no error')) continue
        expect([r.cpuU, r.cpuC, r.wasmU, r.wasmC]).toEqual([r.refU, r.refC, r.refU, r.refC])
      }
  })

  it('first updates of fresh zeros (f32, i32, f64 shared values) match the reference on edge values', () => {
    const src = `fn f(o: f32[], a: f32[], q: i32[], b: f64[]) {
  y: f32 <- 0.0
  y += a[0] * a[1]
  o[0] += y * 3.0
  y -= a[0] * a[1]
  y -> 0.0
  z: f32 <- 0.0
  z -= a[1] / a[2]
  o[1] += z
  z += a[1] / a[2]
  z -> 0.0
  k: i32 <- 0
  k += q[0] * q[1]
  q[2] += k
  k -= q[0] * q[1]
  k -> 0
  w <- 0.0
  w += sin(b[0]) * b[1]
  b[2] += w
  w -= sin(b[0]) * b[1]
  w -> 0.0
}`
    const vals = [0.1, -0.3, 1e30, 3e38, -0, 0, Infinity, NaN, 1e-45, 7]
    for (const v0 of vals)
      for (const v1 of vals) {
        const r = runAll(src, () => [
          new Float32Array(2),
          Float32Array.from([v0, v1, 0.7]),
          i32(v0 | 0, 2 ** 31 - 1, 3),
          f64(v0, v1, 0),
        ])
        expect([r.cpuU, r.cpuC, r.wasmU, r.wasmC]).toEqual([r.refU, r.refC, r.refU, r.refC])
      }
  })

  it('folded bounds: statements with shared subexpressions and several loads fail as the reference does', () => {
    const srcs = [
      `fn f(y: f64, z: f64, a: f64[], b: f64[], i: i32, j: i32) {
  y += a[i] * sin(b[j])
  z += sin(b[j]) + a[i]
}`,
      `fn f(y: f64, z: f64, a: f64[], b: f64[], i: i32, j: i32) {
  y += a[i] * b[j] + a[i + 1]
  z -= b[j] * a[i] * a[i + 1]
}`,
      `fn f(y: f64, z: f64, a: f64[], b: f64[], i: i32, j: i32) {
  if (i < 2 && a[i] > b[j] || a[j] > 0.5, ~) {
    y += a[j] * b[i]
  }
}`,
      `fn f(y: f64, z: f64, a: f64[], b: f64[], i: i32, j: i32) {
  t <- a[i] * 2.0
  y += b[j] * t
  t -> a[i] * 2.0
}`,
      `fn f(y: f64, z: f64, a: f64[], b: f64[], i: i32, j: i32) {
  a[i] *= b[j] + a[j]
}`,
    ]
    for (const src of srcs)
      for (const i of [-1, 0, 1, 2, 3])
        for (const j of [-1, 0, 1, 2, 3]) {
          const r = runAll(src, () => [0, 0, f64(0.25, 0.75, 2), f64(1, 0.5, 3), i, j])
          expect([r.cpuC, r.wasmC]).toEqual([r.refC, r.refC])
        }
  })
})
