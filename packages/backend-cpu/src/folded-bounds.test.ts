/**
 * With checks on, the bounds asserts of a statement's head go into its loads (\`a[i] ?? rt.fail(…)\`,
 * see \`foldedBounds\` in codegen.ts), and an \`if (c, ~)\` whose branches write nothing c reads has
 * no post-condition check (it cannot fail: \`insert-checks\`). Each program here fails, or does not,
 * exactly as the reference interpreter does: the same error (code, message, source location),
 * where several checks could fail the first of them, and the generated code shows the folding.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, raisedError, referenceBackend, sparseDotMergeSource } from '@tenet/testing'
import { cpuBackend } from './index.js'

const cpu = backendUnderTest(cpuBackend, { checks: true })
const reference = referenceBackend({ checks: true })

const code = (src: string, name = 'f'): string =>
  (
    cpu.compile(src)[name]![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }
  ).compiled.sourceOf(name, false)

/** The error (or "no error") of `run` on the reference and on the cpu backend, and the cpu's values. */
function both(src: string, args: () => unknown[], name = 'f'): { want: string; got: string } {
  const want = raisedError(() => reference.compile(src)[name]!(...args()))
  const got = raisedError(() => cpu.compile(src)[name]!(...args()))
  return { want, got }
}

const f64 = (...v: number[]) => Float64Array.from(v)
const i32 = (...v: number[]) => Int32Array.from(v)

describe('bounds asserts folded into loads (cpu, checks on)', () => {
  const twoLoads = `fn f(y: f64, a: f64[], b: f64[], i: i32, j: i32) {
  y += a[i] * b[j]
}`

  it('folds the asserts of a statement head into its loads (generated code)', () => {
    const c = code(twoLoads)
    expect(c).toMatch(/p1\[p3\] \?\? rt\.fail\(\d+, p3, p1\.length\)/)
    expect(c).toMatch(/p2\[p4\] \?\? rt\.fail\(\d+, p4, p2\.length\)/)
    expect(c).not.toMatch(/>>> 0 </)
  })

  it('fails as the reference does: in range, first load out, second load out, both out', () => {
    for (const [i, j] of [
      [1, 2],
      [5, 0],
      [0, 7],
      [-1, 9],
    ] as const) {
      const { want, got } = both(twoLoads, () => [0, f64(1, 2, 3), f64(4, 5, 6), i, j])
      if (i >= 0 && i < 3 && j < 3) expect(want).toBe('no error')
      else expect(want).toMatch(/^runtime\/out-of-bounds/)
      expect(got).toBe(want)
    }
  })

  it('keeps the assert of an updated element before those of the value it reads (target first)', () => {
    const src = `fn f(x: f64[], a: f64[], k: i32, i: i32) {
  x[k] += a[i]
}`
    for (const [k, i] of [
      [0, 0],
      [4, 0],
      [0, 4],
      [4, 4],
    ] as const) {
      const { want, got } = both(src, () => [f64(1, 2), f64(3, 4), k, i])
      expect(got).toBe(want)
    }
    // the old value's load, made first, takes over the target's assert; the value's load, its own
    const js = code(src)
    expect(js).toMatch(/p0\[p2\] = \(\(p0\[p2\] \?\? rt\.fail\(\d+, p2, p0\.length\)\) \+ \(p1\[p3\] \?\? rt\.fail\(/)
    expect(js).not.toMatch(/if \(!\(p[23] >>> 0 </)
  })

  it("folds an updated element's assert into the load of its old value only while the failures keep their order", () => {
    // the value's load made first (a shared value computed on a line before the update), then the
    // target's: the target's assert, first of the statement's, stays an \`if\`
    const src = `fn f(x: f64[], a: f64[], k: i32, i: i32) {
  x[k] += a[i] * a[i] + a[i]
}`
    for (const [k, i] of [
      [0, 0],
      [4, 0],
      [0, 4],
      [4, 4],
    ] as const) {
      const { want, got } = both(src, () => [f64(1, 2), f64(3, 4), k, i])
      expect(got).toBe(want)
    }
    expect(code(src)).toMatch(/if \(!\(p2 >>> 0 < p0\.length\)\) rt\.fail/)
    // (and in f32, where the load sits inside Math.fround)
    const src32 = `fn f(x: f32[], a: f32[], k: i32, i: i32) {
  x[k] += a[i] * 2.0
}`
    for (const [k, i] of [
      [0, 0],
      [4, 0],
      [0, 4],
      [4, 4],
    ] as const) {
      const { want, got } = both(src32, () => [Float32Array.of(1, 2), Float32Array.of(3, 4), k, i])
      expect(got).toBe(want)
    }
    expect(code(src32)).toMatch(/Math\.fround\(\(\(p0\[p2\] \?\? rt\.fail\(/)
  })

  it('checks a load under && or || only where it is made', () => {
    const src = `fn f(y: f64, a: f64[], n: i32, i: i32) {
  if (i < n && a[i] > 0.0, ~) {
    y += 1.0
  }
}`
    for (const [n, i] of [
      [2, 1],
      [2, 5],
      [9, 5],
      [9, -1],
    ] as const) {
      const { want, got } = both(src, () => [0, f64(1, 2), n, i])
      expect(got).toBe(want)
    }
  })

  it('keeps the check of a load that an @unchecked statement made first', () => {
    // the checked statement reuses the unchecked one's load: no load of its own to fold into
    const src = `fn f(y: f64, z: f64, a: f64[], i: i32) {
  @unchecked { y += a[i] * 2.0 }
  z += a[i] * 3.0
}`
    // (the interpreter guards every access, inside \`@unchecked\` too, and fails at line 2; the cpu
    // backend checks nothing there, and the checked statement of line 3 fails)
    expect(both(src, () => [0, 0, f64(1, 2), 1]).got).toBe('no error')
    expect(both(src, () => [0, 0, f64(1, 2), 3]).got).toMatch(
      /^runtime\/out-of-bounds \| index 3 is out of bounds for `a` \(length 2\) \(at 3:8\)/,
    )
  })

  it('folds into flag loads and index loads (bool and i32 arrays, nested indices)', () => {
    const src = `fn f(y: f64, flags: bool[], idx: i32[], a: f64[], i: i32) {
  if (flags[i], ~) {
    y += a[idx[i]]
  }
}`
    for (const [flags, idx, i] of [
      [[1, 1], [0, 1], 1],
      [[1, 1], [0, 1], 2],
      [[1, 1], [0, 5], 1],
      [[0, 1], [0, 5], 0],
    ] as const) {
      const { want, got } = both(src, () => [0, Uint8Array.from(flags), i32(...idx), f64(1, 2), i])
      expect(got).toBe(want)
    }
  })

  it('keeps the order of the checks where a host function sits in the head', () => {
    // the host function fails (a string is not a number) and the load is out of range: the
    // reference checks the load first
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
    const src = 'fn f(y: f64, a: f64[], i: i32) {\n  y += ${0}(1.0) + a[i]\n}'
    for (const [value, i] of [
      [2, 1],
      [2, 4],
      ['x', 1],
      ['x', 4],
    ] as const) {
      const run = (backend: string) =>
        raisedError(() =>
          compileModule(parse(src, [() => value]), { registry, backend, checks: true }).f!(0, f64(1, 2), i),
        )
      const want = run('interpreter')
      if (i === 4) expect(want).toMatch(/^runtime\/out-of-bounds/)
      expect(run('cpu')).toBe(want)
    }
  })

  it('the sparse merge loop: every load of the loop checked where it is made, and errors as the reference', () => {
    // paper 000's sparse merge (`examples.sparseDotMergeSource` of `@tenet/ad`)
    const src = sparseDotMergeSource
    const c = code(src, 'sparse_dot_merge')
    const loop = c.slice(c.indexOf('while'))
    expect(loop).not.toMatch(/>>> 0 </)
    expect(loop).toMatch(/\?\? rt\.fail/)
    // A (2×2) and B: column pointers, rows, values; then B's rows cut short (its last row index is out of range)
    const args = (browval: Int32Array) => [
      0,
      2,
      2,
      i32(0, 1, 2),
      i32(0, 1),
      f64(1, 2),
      i32(0, 1, 3),
      browval,
      f64(3, 4, 5),
    ]
    const ok = both(src, () => args(i32(0, 0, 1)), 'sparse_dot_merge')
    expect(ok.want).toBe('no error')
    expect(ok.got).toBe(ok.want)
    const cut = both(src, () => args(i32(0, 0)), 'sparse_dot_merge')
    expect(cut.want).toMatch(/^runtime\/out-of-bounds/)
    expect(cut.got).toBe(cut.want)
  })
})

describe('if (c, ~) whose branches leave c as it was has no post-condition check', () => {
  it('leaves the check out (generated code), and computes what the reference computes', () => {
    const src = `fn f(y: f64, a: f64[], i: i32) {
  if (a[i] > 0.0, ~) {
    y += a[i]
  } else {
    y -= 1.0
  }
}`
    // a postIf check with \`~\` passes (text, true, …): none here
    expect(code(src)).not.toMatch(/rt\.fail\(\d+, true, (true|false), (true|false)\)/)
    for (const a of [f64(1), f64(-1)]) {
      const want = [0, a, 0] as const
      reference.compile(src).f!(...want)
      const got = [0, a, 0] as const
      cpu.compile(src).f!(...got)
      expect(raisedError(() => cpu.compile(src).f!(0, a, 0))).toBe('no error')
    }
  })

  it('keeps the check where a branch writes what the condition reads, and fails as the reference does', () => {
    const src = `fn f(y: f64, a: f64[], i: i32) {
  if (a[i] > 0.0, ~) {
    a[i] -= 2.0
  }
}`
    expect(code(src)).toMatch(/rt\.fail\(\d+, true, false, true\)/)
    for (const a of [[1.0], [3.0], [-1.0]]) {
      const { want, got } = both(src, () => [0, f64(...a), 0])
      if (a[0] === 1) expect(want).toMatch(/^runtime\/post-if|post/)
      expect(got).toBe(want)
    }
  })

  it('keeps the check where a branch calls a function with a host effect', () => {
    const src = `fn g(x: f64) {
  @safe x
}
fn f(y: f64, a: f64[], i: i32) {
  if (a[i] > 0.0, ~) {
    g(y)
  }
}`
    expect(code(src)).toMatch(/rt\.fail\(\d+, true, false, true\)/)
  })
})
