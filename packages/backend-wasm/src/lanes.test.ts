import { describe, expect, it } from 'vitest'
import { createRegistry, parse, type Expr, type Stmt } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend, type WasmProgram } from './index.js'
import { planPair, type LaneContext } from './lanes.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend({ simd: true }))
/** Lane pairs emitted by the last wasm compilation of `compile`. */
let lastPairs = -1
const compile = (text: string, backend: string, checks = false, simd = true) => {
  const spec = createWasmBackend({ simd })
  const wasm = { ...spec, doCompile: (...a: Parameters<typeof spec.doCompile>) => { const p = spec.doCompile(...a) as WasmProgram; lastPairs = p.lanePairs; return p } }
  return compileModule(parse({ text, name: 'lanes' }), { registry: createRegistry().registerBackend(cpuBackend).registerBackend(wasm), backend, checks })
}

/** The checked body of the only function of `text`. */
function body(text: string): Stmt[] {
  const m = compileModule(parse({ text, name: 'lanes' }), { registry: registry(), backend: 'cpu' })
  return Object.values(m)[0]!.ir.body
}

const context = (promoted: string[] = []): LaneContext => ({
  elem: (name) => (/^[a-z]$/.test(name) ? 'f64' : undefined),
  promoted: (name, index: Expr) => promoted.includes(`${name}[${index.kind === 'num' ? index.value : '?'}]`),
  native: (call) => (call.callee === 'sqrt' ? 'sqrt' : undefined),
})

describe('planPair', () => {
  const params = 'y: f64[], t: f64[], x: f64[], c: f64, u0: f64, u1: f64, i: i32'
  const plan = (stmts: string, cx = context()) => {
    const [s, t] = body(`fn f(${params}) {\n${stmts}\n}`)
    return planPair(s!, t!, cx)
  }

  it('pairs two directions of a tangent: adjacent elements, one shared coefficient', () => {
    const p = plan('t[i * 2] += c * x[i * 2] - sqrt(c)\n t[i * 2 + 1] += c * x[i * 2 + 1] - sqrt(c)')
    expect(p?.target.kind).toBe('elements')
    expect(p?.value.kind).toBe('binary')
    // scalars in both lanes, written separately
    expect(plan('u0 += c * x[i * 2] * x[i]\n u1 += c * x[i * 2 + 1] * x[i]')?.target.kind).toBe('separate')
    expect(plan('t[i * 2] -= (x[i * 2] - x[i]) ** 2\n t[i * 2 + 1] -= (x[i * 2 + 1] - x[i]) ** 2')?.op).toBe('-=')
  })

  it('writes elements held in locals separately', () => {
    const p = plan('t[0] += x[i * 2] * c\n t[1] += x[i * 2 + 1] * c', context(['t[0]', 't[1]']))
    expect(p?.target.kind).toBe('separate')
  })

  it('leaves alone what would change the results or gain nothing', () => {
    // the second statement reads what the first writes
    expect(plan('t[i * 2] += c * x[i * 2]\n t[i * 2 + 1] += c * t[i * 2]')).toBeNull()
    expect(plan('u0 += c * x[i * 2]\n u1 += c * x[i * 2 + 1] * u0')).toBeNull()
    // the same array, elements not provably adjacent (or the same)
    expect(plan('t[i * 2] += c * x[i * 2]\n t[i * 2 + 2] += c * x[i * 2 + 1]')).toBeNull()
    expect(plan('t[i] += c * x[i * 2]\n t[i] += c * x[i * 2 + 1]')).toBeNull()
    // different updates
    expect(plan('t[i * 2] += c * x[i * 2]\n t[i * 2 + 1] -= c * x[i * 2 + 1]')).toBeNull()
    // nothing to vectorise: the same value twice, or two scalars with one operation
    expect(plan('u0 += c * c\n u1 += c * c')).toBeNull()
    expect(plan('u0 += c\n u1 += x[0]')).toBeNull()
  })
})

describe('lane pairs in generated code', () => {
  const src = `fn f(y: f64[], t: f64[], x: f64[], c: f64, u0: f64, u1: f64) {
    for i in 0..div(len(x), 2) {
      t[2 * i] += c * x[2 * i] - sqrt(abs(c)) * x[2 * i + 1]
      t[2 * i + 1] += c * x[2 * i + 1] - sqrt(abs(c)) * x[2 * i]
      y[0] += (x[2 * i] - c) ** 2
      y[1] += (x[2 * i + 1] - c) ** 2
      u0 += min(x[2 * i], c) / max(abs(x[2 * i + 1]), 1.0)
      u1 += min(x[2 * i + 1], c) / max(abs(x[2 * i]), 1.0)
      t[2 * i] -= -(x[2 * i] * y[1])
      t[2 * i + 1] -= -(x[2 * i + 1] * t[2 * i])
    }
  }`
  const args = () => [
    new Float64Array([0.5, -0.25]),
    Float64Array.from({ length: 10 }, (_, i) => Math.sin(i) * 3),
    Float64Array.from({ length: 10 }, (_, i) => Math.cos(1.7 * i) - 0.2 * i),
    1.375, 0.5, -2,
  ]

  it('computes the same bits as the scalar code and the cpu backend, forwards and backwards', () => {
    const modules = [compile(src, 'wasm', false, true)]
    // three pairs in f (the tangent pair, the squares, the mins); its inverse runs the statements
    // in the other order, where only the mins (written to two scalars) still pair
    expect(lastPairs).toBe(4)
    modules.push(compile(src, 'wasm', false, false))
    expect(lastPairs).toBe(0)
    // with run-time checks, none: a failed check must name the element the scalar code names
    compile(src, 'wasm', true, true)
    expect(lastPairs).toBe(0)
    modules.push(compile(src, 'cpu', false))
    const results = modules.map((m) => {
      const a = args()
      const fwd = m.f!(...a) as unknown[]
      const back = m.f!.inverse(...(fwd as unknown[])) as unknown[]
      return JSON.stringify([fwd, back].map((r) => r.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))))
    })
    expect(results[0]).toBe(results[1])
    expect(results[0]).toBe(results[2])
  })

  it('leaves updates that call host functions to the scalar code (calls counted and ordered as there)', () => {
    const text = `fn f(y: f64[], x: f64[]) {
      y[0] += \${0}(1.0) * \${0}(3.0) * x[0]
      y[1] += \${0}(2.0) * \${0}(4.0) * x[1]
      y[0] += \${0}(1.0) * x[0]
      y[1] += \${0}(1.0) * x[1]
    }`
    const runs = ['wasm', 'cpu'].map((backend) => {
      const calls: number[] = []
      const host = (v: number) => { calls.push(v); return calls.length }
      const m = compileModule(parse({ text, name: 'h' }, [host]), { registry: registry(), backend, checks: false })
      const y = new Float64Array(2)
      m.f!(y, Float64Array.from([1, 1]))
      return JSON.stringify([calls, Array.from(y)])
    })
    expect(runs[0]).toBe(runs[1])
  })
})
