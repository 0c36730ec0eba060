/**
 * The tape of pass `replay-uncall` (see `@tenet/ir`) in a module that calls out to JavaScript (a
 * host function in an expression, which may call the module again): a call that fails between a
 * recording call and its uncall must not leave its terms on the tape, whether the host calls it
 * directly or from a host function that a live call of the module called (and that catches the
 * error); the terms of the live call below it stay, and its uncall replays them. Repeated
 * failing calls keep the tape at 0 between calls, and later calls compute the reference's values.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, TENET_FUNCTION, type TenetModule } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend, type CpuCompiledProgram } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** A body over inlineSmallCalls' 16 statements (the call stays a call), adding terms of `x` to `a`. */
const big = Array.from({ length: 9 }, (_, k) => `  for i in 0..len(x) { a[i] += x[i] * ${k + 1}.0 * x[i] }`).join('\n')

/**
 * `g` records the terms of `f`, calls the host (`${0}`) and reads `y[0]` (out of bounds where `y`
 * is empty), then replays them; `h` is `g` without the host call.
 */
const src = `fn f(a: f64[], x: f64[]) {
${big}
}
fn g(a: f64[], x: f64[], y: f64[], z: f64[]) {
  f(a, x)
  z[0] += \${0}(x[0])
  z[1] += y[0]
  ~f(a, x)
}
fn h(a: f64[], x: f64[], y: f64[]) {
  f(a, x)
  a[0] += y[0]
  ~f(a, x)
}`

const tapeTop = (m: TenetModule): number =>
  (m.g![TENET_FUNCTION] as unknown as { compiled: CpuCompiledProgram }).compiled.tapeTop()

/** The module on `backend`, its host function calling `inner` (if set) on the module itself. */
function compile(backend: string, inner?: (m: TenetModule) => void): TenetModule {
  let m: TenetModule | undefined
  const host = (v: number) => {
    inner?.(m!)
    return 2 * v
  }
  m = compileModule(parse({ text: src, name: 'tape program' }, [host]), { registry, backend, checks: true })
  return m
}

const args = (ny: number) => [
  new Float64Array(3),
  Float64Array.from([1, 2, 3]),
  Float64Array.from({ length: ny }, (_, k) => k + 0.5),
  new Float64Array(2),
]

describe('the replay-uncall tape in a module that calls out (cpu, checks on)', () => {
  it('records and replays the terms, and marks the tape at the entries', () => {
    const m = compile('cpu')
    const info = m.g![TENET_FUNCTION] as unknown as { compiled: CpuCompiledProgram }
    expect(info.compiled.sourceOf!('f$replay', false)).toMatch(/tape\d+\[top\d+\+\+\] = /)
    const g = info.compiled.sourceOf!('g', false)!
    expect(g).toMatch(/const \$tm = \$tp;\n {2}try \{/)
    expect(g).toMatch(/\} catch \(\$te\) \{\n {4}\$tp = \$tm;\n {4}throw \$te;/)
  })

  it('repeated failing calls leave no terms on the tape; later calls compute the reference’s values', () => {
    const cpu = compile('cpu')
    const reference = compile('interpreter')
    for (const entry of ['g', 'h'] as const) {
      for (let k = 0; k < 5; k++) {
        const want = raisedError(() => reference[entry]!(...args(0).slice(0, entry === 'g' ? 4 : 3)))
        expect(want).toMatch(/^runtime\/out-of-bounds/)
        expect(raisedError(() => cpu[entry]!(...args(0).slice(0, entry === 'g' ? 4 : 3)))).toBe(want)
        expect(tapeTop(cpu)).toBe(0)
      }
      const a = args(2).slice(0, entry === 'g' ? 4 : 3)
      const b = args(2).slice(0, entry === 'g' ? 4 : 3)
      expect(cpu[entry]!(...a)).toEqual(reference[entry]!(...b))
      expect(a).toEqual(b)
      expect(tapeTop(cpu)).toBe(0)
    }
  })

  it('a failing call from a host function inside a live call: its terms go, the live call’s stay', () => {
    const errors: Record<string, string[]> = { cpu: [], interpreter: [] }
    const run = (backend: 'cpu' | 'interpreter') => {
      let depth = 0
      const m = compile(backend, (self) => {
        // (only the outer call's host function calls in: a failing g, a failing h, a passing h)
        if (depth > 0) return
        depth++
        errors[backend]!.push(raisedError(() => self.g!(...args(0))))
        errors[backend]!.push(raisedError(() => self.h!(...args(0).slice(0, 3))))
        if (backend === 'cpu') expect(tapeTop(m)).toBe(3 * 9)
        self.h!(...args(1).slice(0, 3))
        depth--
      })
      const a = args(2)
      const out = m.g!(...a)
      if (backend === 'cpu') expect(tapeTop(m)).toBe(0)
      return { out, a }
    }
    const got = run('cpu')
    const want = run('interpreter')
    expect(errors.cpu).toEqual(errors.interpreter)
    expect(errors.cpu.every((e) => e.startsWith('runtime/out-of-bounds'))).toBe(true)
    expect(got).toEqual(want)
  })
})
