/**
 * The cpu code generator's \`hoist-pools\` (see \`hoistAllocs\` in \`codegen.ts\`): the array
 * allocations that begin a loop's body, of a loop-invariant length, take their pooled array once
 * before the loop; and its \`p = +p\` entry lines of the f64 and f32 scalar parameters (see
 * \`numberParams\`). The printed code with and without the hoist; the runs against the interpreter
 * (checks on and off, forwards and backwards, failing lengths, recursion, a host function calling
 * the program again) are \`describeHoistPools\` of \`@tenet/testing\`, shared with the wasm backend.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, TENET_FUNCTION, type TenetModule } from '@tenet/reversible'
import { describeHoistPools, hoistPoolsSource as src, withoutHoistPools as withoutHoist } from '@tenet/testing/vitest'
import { hornerLossSource } from '@tenet/testing/programs'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

function compile(src: string, backend: string, checks: boolean, hosts: unknown[] = []): TenetModule {
  return compileModule(parse(src, hosts as never), { registry, backend, checks })
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
    // (a recursive function is not pooled: a new array per iteration; \`n\` is passed to the
    // recursive call, which counts as writing it, so its length is checked in the loop)
    expect(split(sourceOf(m, 'r')).loop).toMatch(/let v\d+ = new Float64Array\(n\d+\);/)
  })

  it('Horner’s least squares: its accumulator taken once per call, the loss parameter made a number on entry', () => {
    // (the loop as written: \`jam-iterations\` would run it in groups of points, three loops that
    // each take their pools once before them)
    disabledPasses.add('jam-iterations')
    let m: TenetModule
    try {
      m = compile(hornerLossSource, 'cpu', false)
    } finally {
      disabledPasses.delete('jam-iterations')
    }
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
})

describeHoistPools(cpuBackend)

describe('numeric parameters on entry (cpu)', () => {
  it('adds `p = +p` for the f64 and f32 scalars a loop writes only, which keeps −0, NaN and a small-integer argument', () => {
    const text = `fn s(y: f64, z: f32, w: f32, x: f64[], n: i32) {
  for i in 0..len(x) {
    y += x[i]
    w += f32(n)
  }
  z += f32(n)
}`
    const m = compile(text, 'cpu', false)
    const lines = sourceOf(m, 's').split('\n')
    // (z is written outside the loop only, x is an array, n an i32)
    expect(lines.filter((l) => l.includes('= +'))).toEqual(['  p0 = +p0;', '  p2 = +p2;'])
    const core = m.s!.core
    core(-0, 0, -0, new Float64Array(0), 0)
    expect(Object.is(core.results[0], -0)).toBe(true)
    expect(Object.is(core.results[2], -0)).toBe(true)
    core(0, 1, 0, Float64Array.of(1, 2), 3)
    expect(Array.from(core.results)).toEqual([3, 4, 6, 0, 3])
    core(Number.NaN, 0, 0, Float64Array.of(1), 0)
    expect(Number.isNaN(core.results[0])).toBe(true)
  })
})
