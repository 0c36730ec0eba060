import { describe, expect, it } from 'vitest'
import { createRegistry, parse, standardPrimitives } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend, type WasmProgram } from '../index.js'
import type { MathChoice } from './index.js'
import { ulps } from './ulps.js'

/** The program the wasm backend compiled last (for its \`mathRoutines\`). */
let last: WasmProgram | undefined
const registry = (math: MathChoice) => {
  const spec = createWasmBackend({ math })
  const wasm = {
    ...spec,
    doCompile: (...a: Parameters<typeof spec.doCompile>) => (last = spec.doCompile(...a) as WasmProgram),
  }
  return createRegistry().registerBackend(cpuBackend).registerBackend(wasm)
}
const compile = (text: string, backend: string, math: MathChoice = 'auto', checks = true) =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(math), backend, checks })
const program = (_m: unknown): WasmProgram => last!

/** n inputs spread over [−a, a], with the special values first. */
const inputs = (n: number, a: number) =>
  Float64Array.from({ length: n }, (_, i) =>
    i < 5 ? [0, -0, 1, -1, NaN][i]! : a * Math.sin(i * 12.9898) * Math.abs(Math.cos(i * 4.1414)),
  )

const UNARY = ['sin', 'cos', 'tan', 'exp', 'log', 'atan', 'asin', 'acos', 'sinh', 'cosh', 'tanh']

describe('programs with transcendental primitives on wasm', () => {
  for (const elem of ['f64', 'f32'] as const) {
    it(`give the cpu backend's values, forwards and backwards (${elem})`, () => {
      const lines = UNARY.map((f, k) => `y[${k}] += ${f}(x[i])`)
      lines.push(
        `y[${UNARY.length}] += atan2(x[i], z[i])`,
        `y[${UNARY.length + 1}] += x[i] ** 3.0`,
        `y[${UNARY.length + 2}] += pow(abs(x[i]), z[i])`,
      )
      const text = `fn f(y: ${elem}[], x: ${elem}[], z: ${elem}[]) { for i in 0..len(x) { ${lines.join('\n')} } }`
      const Arr = elem === 'f64' ? Float64Array : Float32Array
      const args = () => [new Arr(UNARY.length + 3), Arr.from(inputs(400, 4)), Arr.from(inputs(400, 3).reverse())]
      const cpu = compile(text, 'cpu'),
        wasm = compile(text, 'wasm')
      // (in f64, sin and cos of x[i] in one run: one \`__sincos\`, see \`sincos-pairs.ts\`)
      expect(program(wasm).mathRoutines).toEqual(
        expect.arrayContaining([elem === 'f64' ? '__sincos' : 'sin', 'exp', 'atan2', 'tanh']),
      )
      const [yc] = cpu.f!(...args()) as [Float64Array],
        [yw] = wasm.f!(...args()) as [Float64Array]
      // every routine but pow gives Math's doubles here (pow calls Math.pow under 'auto')
      expect(Array.from(yw)).toEqual(Array.from(yc))
      const back = wasm.f!.inverse(...wasm.f!(...args())) as [Float64Array]
      const backCpu = cpu.f!.inverse(...cpu.f!(...args())) as [Float64Array]
      expect(Array.from(back[0])).toEqual(Array.from(backCpu[0]))
    })
  }

  it('computes pow in the module under math: module, within 1 ulp of Math.pow', () => {
    const text =
      'fn f(y: f64[], x: f64[], z: f64[]) { for i in 0..len(x) { y[i] += pow(abs(x[i]), z[i])\n y[i + len(x)] += x[i] ** 2.5 } }'
    const m = compile(text, 'wasm', 'module')
    expect(program(m).mathRoutines).toContain('pow')
    const x = inputs(2000, 10),
      z = inputs(2000, 5).reverse()
    const [y] = m.f!(new Float64Array(4000), x, z) as [Float64Array]
    for (let i = 0; i < 2000; i++) {
      expect(ulps(y[i]!, Math.pow(Math.abs(x[i]!), z[i]!))).toBeLessThanOrEqual(1)
      expect(ulps(y[i + 2000]!, x[i]! ** 2.5)).toBeLessThanOrEqual(1)
    }
  })

  it('calls out to JS under math: import, and for a user primitive that overrides a standard one', () => {
    const text = 'fn f(y: f64, x: f64) { y += sin(x) + exp(x) }'
    expect(program(compile(text, 'wasm', 'import')).mathRoutines).toEqual([])
    const r = registry('auto')
    const sin = standardPrimitives.find((p) => p.name === 'sin')!
    r.registerPrimitive({ ...sin, evaluate: (x: number) => 2 * x, override: true } as typeof sin)
    const m = compileModule(parse({ text, name: 'test' }), { registry: r, backend: 'wasm' })
    expect(program(m).mathRoutines).toEqual(['exp'])
    expect(m.f!(0, 0.5)[0]).toBe(1 + Math.exp(0.5))
  })

  it.each(['f64', 'f32'])(
    "computes ROT, IROT, sincos and HADAMARD in the module with the cpu backend's values (%s)",
    (elem) => {
      const text = `fn f(a: ${elem}[], b: ${elem}[], t: ${elem}[]) {
      for i in 0..len(a) {
        ROT(a[i], b[i], t[i])
        sincos(a[i], b[i], t[i] * ${elem}(3.0))
        IROT(b[i], a[i], t[i] + ${elem}(1.0))
        HADAMARD(a[i], b[i])
        ~sincos(b[i], a[i], t[i])
      }
    }`
      for (const checks of [true, false]) {
        const Arr = elem === 'f64' ? Float64Array : Float32Array
        const args = () => [Arr.from(inputs(300, 2)), Arr.from(inputs(300, 5).reverse()), Arr.from(inputs(300, 40))]
        const cpu = compile(text, 'cpu', 'auto', checks),
          wasm = compile(text, 'wasm', 'auto', checks)
        expect(program(wasm).mathRoutines).toEqual(['__sincos', '__rem_pio2_huge', '__2opi'])
        const out = wasm.f!(...args())
        expect(out).toEqual(cpu.f!(...args()))
        expect(wasm.f!.inverse(...out)).toEqual(cpu.f!.inverse(...cpu.f!(...args())))
      }
    },
  )
})
