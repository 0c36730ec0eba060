/**
 * The cpu code generator's \`hoist-pools\` (see \`hoistAllocs\` in \`codegen.ts\`): the array
 * allocations that begin a loop's body, of a loop-invariant length, take their pooled array once
 * before the loop; and its \`p = +p\` entry lines of the f64 and f32 scalar parameters (see
 * \`numberParams\`). The printed code before and after, and runs against the interpreter, checks on
 * and off, forwards and backwards, with and without the hoist: lengths that fail (in a loop that
 * runs and one that does not), lengths the loop changes, a second allocation sized by the first,
 * a statement before the allocation, a step of 2, recursion and a host function that calls the
 * program again (neither pooled).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, TENET_FUNCTION, type TenetModule } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { hornerLossSource } from '@tenet/testing/programs'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

function compile(src: string, backend: string, checks: boolean, hosts: unknown[] = []): TenetModule {
  return compileModule(parse(src, hosts as never), { registry, backend, checks })
}

function withoutHoist<T>(f: () => T): T {
  disabledPasses.add('hoist-pools')
  try {
    return f()
  } finally {
    disabledPasses.delete('hoist-pools')
  }
}

const sourceOf = (m: TenetModule, name: string, inverse = false): string =>
  (m[name]![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }).compiled.sourceOf(
    name,
    inverse,
  )

/** The code of the outermost \`for\` loop of a function's source, and the code before it. */
function split(code: string): { before: string; loop: string } {
  const at = code.indexOf('  for (')
  return { before: code.slice(0, at), loop: code.slice(at) }
}

/** The result or the error. */
function outcome(run: () => unknown): unknown {
  try {
    return JSON.stringify(run(), (_k, v) =>
      ArrayBuffer.isView(v) ? Array.from(v as Float64Array, (y) => (Object.is(y, -0) ? '-0' : String(y))) : v,
    )
  } catch {
    return raisedError(run)
  }
}

const src = `
fn f(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) {
    a: f64[] <- zeros(n)
    b: f64[] <- zeros(2 * n - 1)
    a[0] += x[j]
    out[j] += a[n - 1]
    b[n - 1] += a[0] * 2.0
    out[j] += a[0] + b[n - 1]
    b[n - 1] -= a[0] * 2.0
    a[0] -= x[j]
    b -> zeros(2 * n - 1)
    a -> zeros(n)
  }
}
fn g(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) {
    out[j] += x[j]
    a: f64[] <- zeros(n)
    a[0] += x[j]
    out[j] += a[0]
    a[0] -= x[j]
    a -> zeros(n)
  }
}
fn h(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) {
    a: f64[] <- zeros(n)
    a[n - 1] += x[j]
    out[j] += a[n - 1] * f64(n)
    a[n - 1] -= x[j]
    a -> zeros(n)
    n += 1
  }
  n -= len(out)
}
fn k(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) by 2 {
    a: f64[] <- zeros(n)
    b: f64[] <- zeros(len(a) + 1)
    a[0] += x[j]
    b[n] += a[0]
    out[j] += b[n]
    b[n] -= a[0]
    a[0] -= x[j]
    b -> zeros(len(a) + 1)
    a -> zeros(n)
  }
}
fn r(out: f64[], x: f64[], n: i32, d: i32) {
  for j in 0..len(out) {
    a: f64[] <- zeros(n)
    a[n - 1] += x[j]
    if (d > 0, ~) {
      d -= 1
      r(out, x, n, d)
      d += 1
    }
    out[j] += a[n - 1]
    a[n - 1] -= x[j]
    a -> zeros(n)
  }
}`

describe('hoist-pools (cpu)', () => {
  it('takes the pooled arrays of a loop’s leading allocations once before it (printed code)', () => {
    const m = compile(src, 'cpu', false)
    const f = split(sourceOf(m, 'f'))
    // both lengths checked before the loop, where it runs, and the arrays taken there
    expect(f.before).toMatch(/const (n\d+) = \(([^)]+)\) \? rt\.length\(p2, \d+\) : 0;/)
    expect(f.before).toMatch(/\? rt\.length\(\(\(\(Math\.imul\(2, p2\)|\? rt\.length\(.*2.*p2.*, \d+\) : 0;/)
    expect(f.before.match(/rt\.length\(/g)).toHaveLength(2)
    expect(f.before).toMatch(/const h\d+ = \([^)]+\) \? \(PL\d+ !== null && PL\d+\.length === n\d+ \? PL\d+ : /)
    // in the loop: the array taken as it is, zeroed unless its flag says it is
    expect(f.loop).not.toContain('rt.length(')
    expect(f.loop).toMatch(/let v\d+ = \((PZ\d+) \? \(\(\1 = false\), (h\d+)\) : \$zeroFloat64Array\(\2\)\);/)
    // the same function without the hoist: a length check and a pool test per iteration
    const without = withoutHoist(() => split(sourceOf(compile(src, 'cpu', false), 'f')))
    expect(without.before).not.toContain('rt.length(')
    expect(without.loop.match(/rt\.length\(/g)).toHaveLength(2)
  })

  it('leaves an allocation after another statement, one whose length the loop writes, and one sized by a loop-local array', () => {
    const m = compile(src, 'cpu', false)
    expect(split(sourceOf(m, 'g')).before).not.toContain('rt.length(')
    expect(split(sourceOf(m, 'h')).before).not.toContain('rt.length(')
    const k = split(sourceOf(m, 'k'))
    // (k's loop steps by 2: a counted loop; \`a\` is hoisted, \`b\`, sized by \`len(a)\`, is not)
    expect(k.before.match(/rt\.length\(/g)).toHaveLength(1)
    expect(k.loop.match(/rt\.length\(/g)).toHaveLength(1)
  })

  it('Horner’s least squares: its accumulator taken once per call, the loss parameter made a number on entry', () => {
    const m = compile(hornerLossSource, 'cpu', false)
    const code = sourceOf(m, 'horner_loss')
    const { before, loop } = split(code)
    expect(code.split('\n')[1]).toBe('  p0 = +p0;')
    // (no line for the array parameters)
    expect(code).not.toMatch(/p[123] = \+p[123]/)
    expect(before).toContain('rt.length(p1.length,')
    expect(loop).not.toContain('rt.length(')
    // the accumulator is a table every element of which is set before it is read: never zeroed
    expect(loop).not.toContain('$zero')
    const c = Float64Array.of(0.5, -0.25, 0.125, 2)
    const xs = Float64Array.of(0.3, -1.2, 0.9, 0)
    const ys = Float64Array.of(1, 2, -0.5, 0.25)
    const want = compile(hornerLossSource, 'interpreter', false).horner_loss!(0, c, xs, ys)
    for (const checks of [false, true]) {
      const got = compile(hornerLossSource, 'cpu', checks)
      expect(got.horner_loss!(0, c, xs, ys)).toEqual(want)
      // (the positional entry with a small-integer loss, twice: the pooled array reused)
      const core = got.horner_loss!.core
      core(0, c, xs, ys)
      core(0, c, xs, ys)
      expect(core.results[0]).toBe((want as number[])[0])
    }
  })

  it('gives the interpreter’s results and errors, forwards and backwards, checks on and off, with and without the hoist', () => {
    const cases: Array<[string, number, number]> = []
    // (n = 0: an element out of range; n = -1: a length that fails)
    for (const name of ['f', 'g', 'h', 'k'])
      for (const len of [0, 1, 4, 5]) for (const n of [-1, 0, 1, 2, 3]) cases.push([name, len, n])
    for (const checks of [false, true]) {
      const ref = compile(src, 'interpreter', checks)
      const mods = [compile(src, 'cpu', checks), withoutHoist(() => compile(src, 'cpu', checks))]
      // one module called many times in a row: failed calls between passing ones
      for (let round = 0; round < 2; round++)
        for (const [name, len, n] of cases) {
          const args = () => [
            Float64Array.from({ length: len }, (_, i) => i - 0.5),
            Float64Array.of(1.5, -2, 0.25, 3, -0),
            n,
          ]
          const want = outcome(() => ref[name]!(...args()))
          // (an element out of range with checks off is not defined: only the runs that pass, and
          // the length that fails, which is checked either way)
          if (
            !checks &&
            typeof want === 'string' &&
            want.startsWith('runtime/') &&
            !want.startsWith('runtime/array-length')
          )
            continue
          for (const m of mods) {
            expect(
              outcome(() => m[name]!(...args())),
              `${name} len ${len} n ${n} checks ${checks}`,
            ).toEqual(want)
            if (typeof want === 'string' && want.startsWith('runtime/')) continue
            const fwd = () => (m[name]!(...args()) as unknown[]).map((v) => (v instanceof Float64Array ? v.slice() : v))
            const back = fwd()
            expect(outcome(() => m[name]!.inverse(...back))).toEqual(outcome(() => ref[name]!.inverse(...fwd())))
            // (the inverse takes the arguments back)
            expect(outcome(() => back)).toEqual(outcome(args))
          }
        }
    }
  })

  it('a length that fails throws the allocation’s error only where the loop runs', () => {
    for (const checks of [false, true]) {
      const m = compile(src, 'cpu', checks)
      const out = new Float64Array(0)
      expect(m.f!(out, Float64Array.of(1), -1)).toEqual([out, Float64Array.of(1), -1])
      const err = raisedError(() => m.f!(new Float64Array(2), Float64Array.of(1, 2), -1))
      expect(err).toBe(
        raisedError(() => compile(src, 'interpreter', checks).f!(new Float64Array(2), Float64Array.of(1, 2), -1)),
      )
    }
  })

  it('a recursive function and one whose host function calls it again make an array per iteration', () => {
    const m = compile(src, 'cpu', false)
    const r = split(sourceOf(m, 'r'))
    expect(r.loop).toContain('new Float64Array(')
    const ref = compile(src, 'interpreter', true)
    for (const checks of [false, true]) {
      const c = compile(src, 'cpu', checks)
      for (const d of [0, 1, 3]) {
        const args = () => [new Float64Array(3), Float64Array.of(1.5, -2, 0.25), 2, d]
        expect(outcome(() => c.r!(...args()))).toEqual(outcome(() => ref.r!(...args())))
      }
    }
    // the host function calls the same function again (other arrays) the first time it runs
    const text = `fn e(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) {
    a: f64[] <- zeros(n)
    a[0] += x[j]
    @safe \${0}()
    out[j] += a[0] * 2.0
    a[0] -= x[j]
    a -> zeros(n)
  }
}`
    const results: unknown[] = []
    for (const backend of ['cpu', 'interpreter']) {
      let depth = 0
      const mods: Record<string, TenetModule> = {}
      const reenter = () => {
        if (depth++ === 0) mods.m!.e!(new Float64Array(2), Float64Array.of(7, 8), 3)
        return 0
      }
      mods.m = compile(text, backend, false, [reenter])
      results.push([outcome(() => mods.m!.e!(new Float64Array(3), Float64Array.of(1, 2, 3), 2)), depth])
    }
    expect(results[0]).toEqual(results[1])
  })
})

describe('numeric parameters on entry (cpu)', () => {
  it('adds `p = +p` for the f64 and f32 scalars only, which keeps −0, NaN and a small-integer argument', () => {
    const text = `fn s(y: f64, z: f32, x: f64[], n: i32) {
  for i in 0..len(x) { y += x[i] }
  z += f32(n)
}`
    const m = compile(text, 'cpu', false)
    const lines = sourceOf(m, 's').split('\n')
    expect(lines.filter((l) => l.includes('= +'))).toEqual(['  p0 = +p0;', '  p1 = +p1;'])
    expect(lines.join('\n')).not.toMatch(/p[23] = \+p[23]/)
    const core = m.s!.core
    core(-0, 0, new Float64Array(0), 0)
    expect(Object.is(core.results[0], -0)).toBe(true)
    core(0, 1, Float64Array.of(1, 2), 3)
    expect(Array.from(core.results)).toEqual([3, 4, 0, 3])
    core(Number.NaN, 0, Float64Array.of(1), 0)
    expect(Number.isNaN(core.results[0])).toBe(true)
  })
})
