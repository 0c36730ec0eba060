import { describe, expect, it } from 'vitest'
import { createRegistry, parse, type Stmt } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend, type WasmProgram } from './index.js'
import { sincosPairs } from './sincos-pairs.js'
import { expectSameRuns } from './test-util.js'

/** The program the wasm backend compiled last (for its \`mathRoutines\`). */
let last: WasmProgram | undefined
const compile = (text: string, backend: 'cpu' | 'wasm', checks: boolean) => {
  const spec = createWasmBackend()
  const wasm = {
    ...spec,
    doCompile: (...a: Parameters<typeof spec.doCompile>) => (last = spec.doCompile(...a) as WasmProgram),
  }
  return compileModule(parse({ text, name: 'sincos' }), {
    registry: createRegistry().registerBackend(cpuBackend).registerBackend(wasm),
    backend,
    checks,
  })
}

/** The checked body of the only function of \`text\`. */
const body = (text: string): Stmt[] => {
  const m = compileModule(parse({ text, name: 'sincos' }), {
    registry: createRegistry().registerBackend(cpuBackend),
    backend: 'cpu',
  })
  return Object.values(m)[0]!.ir.body
}
const calls = (text: string) => {
  const pairs = sincosPairs(body(text), () => true)
  return { calls: pairs.size, pairs: new Set(pairs.values()).size }
}

describe('sincosPairs', () => {
  it('pairs sin and cos of one value in a run, not across a write of what it reads', () => {
    expect(calls('fn f(a: f64, b: f64, x: f64) { a += sin(x) * 2.0\n b += cos(x) }')).toEqual({ calls: 2, pairs: 1 })
    // the same expression of the same values (and a third call of it) share the pair
    expect(calls('fn f(a: f64, b: f64, x: f64, y: f64) { a += sin(x + y)\n b += cos(x + y) * cos(x + y) }')).toEqual({
      calls: 3,
      pairs: 1,
    })
    // x written between: two different values
    expect(calls('fn f(a: f64, b: f64, x: f64) { a += sin(x)\n x += 1.0\n b += cos(x) }')).toEqual({
      calls: 0,
      pairs: 0,
    })
    // an element of an array written between
    expect(calls('fn f(a: f64, v: f64[]) { a += sin(v[0])\n v[1] += 1.0\n a += cos(v[0]) }')).toEqual({
      calls: 0,
      pairs: 0,
    })
    // a write of what the argument does not read keeps the pair
    expect(calls('fn f(a: f64, x: f64) { a += sin(x)\n a += cos(x) }')).toEqual({ calls: 2, pairs: 1 })
    // only sin, or sin of two values
    expect(calls('fn f(a: f64, x: f64, y: f64) { a += sin(x) + cos(y) }')).toEqual({ calls: 0, pairs: 0 })
    // not the standard primitives (a user's override, or imported)
    expect(sincosPairs(body('fn f(a: f64, x: f64) { a += sin(x) * cos(x) }'), () => false).size).toBe(0)
  })

  it('computes a pair with one __sincos in the module, with the cpu backend’s values bit for bit', () => {
    // (elements r[i], q[i]: a loop map lanes leave to the scalar code, see \`block-lanes.test.ts\`;
    // in lanes sin and cos are computed lane by lane)
    const text = `fn f(r: f64[], q: f64[], t: f64[]) {
      for i in 0..len(t) {
        r[i] += t[i] * cos(t[i]) - sin(t[i])
        q[i] += sin(t[i]) * cos(t[i])
      }
    }`
    const angles = [0, -0, 1e-9, 0.5, -2.5, 3, 100, 1e6, 1e22, -1e300, Number.POSITIVE_INFINITY, Number.NaN]
    for (const checks of [false, true]) {
      const wasm = compile(text, 'wasm', checks)
      expect(last!.mathRoutines).toContain('__sincos')
      expect(last!.mathRoutines).not.toContain('sin')
      expect(last!.mathRoutines).not.toContain('cos')
      const cpu = compile(text, 'cpu', checks)
      expectSameRuns([cpu, wasm], () => [
        new Float64Array(angles.length),
        new Float64Array(angles.length),
        Float64Array.from(angles),
      ])
    }
  })

  it('builds the cos and sin tables of one array in one loop, by one __sincos per element (tabulate-sweeps, tabulate)', () => {
    // two sweeps over the angles, the shape of a gradient program (see \`tabulate-sweeps.ts\` of
    // @tenet/ir): without checks their cos θ and sin θ go into tables, built side by side, so the
    // table loop pairs them; the loops of the sweeps read the tables (and the fallback computes
    // each pair with \`__sincos\` too), so the module has no \`sin\` or \`cos\` routine of its own
    const text = `fn f(x: f64[], y: f64[], theta: f64[], n: i32) {
      for i in 0..n { ROT(x[i], x[i + 1], theta[i]) }
      for i in n - 1..=0 by -1 { y[i] += x[i] * cos(theta[i]) - sin(theta[i]) }
    }`
    const angles = [0, -0, 1e-9, 0.5, -2.5, 3, 100, 1e6, 1e22, -1e300]
    const wasm = compile(text, 'wasm', false)
    expect(last!.mathRoutines).toContain('__sincos')
    expect(last!.mathRoutines).not.toContain('sin')
    expect(last!.mathRoutines).not.toContain('cos')
    const cpu = compile(text, 'cpu', false)
    for (const n of [angles.length - 1, 2, 0])
      expectSameRuns([cpu, wasm], () => [
        Float64Array.from(angles, (a, i) => Math.cos(a) + i),
        Float64Array.from(angles, (a) => a / 3),
        Float64Array.from(angles),
        n,
      ])
  })

  it('gives the cpu backend’s values on random runs of updates mixing sin, cos and writes', () => {
    let seed = 12345
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!
    const names = ['a', 'b', 'c', 'd']
    let paired = 0
    for (let p = 0; p < 12; p++) {
      const lines: string[] = []
      for (let k = 0; k < 8; k++) {
        const target = pick(names)
        const others = names.filter((n) => n !== target)
        const arg = rnd() < 0.5 ? pick(others) : `${pick(others)} * ${pick(others)}`
        const f = pick(['sin', 'cos'])
        lines.push(`${target} += ${f}(${arg})${rnd() < 0.5 ? ` * ${pick(['sin', 'cos'])}(${arg})` : ''}`)
        // sometimes a branch ends the run
        if (rnd() < 0.15) lines.push(`if (${pick(others)} > 0.0, ~) { ${target} += 1.0 }`)
      }
      const text = `fn f(a: f64, b: f64, c: f64, d: f64) {\n  ${lines.join('\n  ')}\n}`
      for (const checks of [false, true]) {
        const wasm = compile(text, 'wasm', checks)
        if (last!.mathRoutines.includes('__sincos')) paired++
        const cpu = compile(text, 'cpu', checks)
        for (const x of [
          [0.3, -1.2, 2.5, 7],
          [-0, 1e-8, 40, -3.3],
        ])
          expectSameRuns([cpu, wasm], () => [...x])
      }
    }
    // (most of the programs have a pair somewhere, not all)
    expect(paired).toBeGreaterThan(6)
    expect(paired).toBeLessThan(24)
  })
})
