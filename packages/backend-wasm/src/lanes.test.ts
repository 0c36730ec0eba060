import { describe, expect, it } from 'vitest'
import { createRegistry, parse, type Expr, type Stmt } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from './index.js'
import { planPair, type LaneContext } from './lanes.js'
import { compile, expectSameRuns, lastPairs } from './test-util.js'

const registry = () =>
  createRegistry()
    .registerBackend(cpuBackend)
    .registerBackend(createWasmBackend({ simd: true }))
/** The checked body of the only function of `text`. */
function body(text: string): Stmt[] {
  const m = compileModule(parse({ text, name: 'lanes' }), { registry: registry(), backend: 'cpu' })
  return Object.values(m)[0]!.ir.body
}

/** Elements named like `t[0]` are held in their own locals; pairs named like `t[0]+t[1]` in one f64x2 local. */
const context = (promoted: string[] = []): LaneContext => {
  const name = (array: string, index: Expr) => `${array}[${index.kind === 'num' ? index.value : '?'}]`
  return {
    elem: (array) => (/^[a-z]$/.test(array) ? 'f64' : undefined),
    promoted: (array, index) => promoted.some((p) => p.split('+').includes(name(array, index))),
    heldTogether: (array, a, b) => promoted.includes(`${name(array, a)}+${name(array, b)}`),
    twinVars: () => false,
    native: (call) => (call.callee === 'sqrt' ? 'sqrt' : undefined),
    vectorMath: (call) => (call.callee === 'exp' ? '__exp_f64x2' : undefined),
  }
}

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

  it('writes elements held in locals separately, or as one f64x2 local when they are its lanes', () => {
    const p = plan('t[0] += x[i * 2] * c\n t[1] += x[i * 2 + 1] * c', context(['t[0]', 't[1]']))
    expect(p?.target.kind).toBe('separate')
    const q = plan('t[0] += x[i * 2] * y[2]\n t[1] += x[i * 2 + 1] * y[3]', context(['t[0]+t[1]', 'y[2]+y[3]']))
    expect(q?.target).toMatchObject({ kind: 'held', array: 't' })
    // the held pair y[2], y[3] is read as one value
    expect(q?.value).toMatchObject({ kind: 'binary', right: { kind: 'held', array: 'y' } })
    // held separately, they are two scalars
    expect(
      plan('t[0] += x[i * 2] * y[2]\n t[1] += x[i * 2 + 1] * y[3]', context(['t[0]+t[1]', 'y[2]', 'y[3]']))?.value,
    ).toMatchObject({ kind: 'binary', right: { kind: 'scalars' } })
  })

  it('applies a math routine with an f64x2 version to both lanes at once', () => {
    const p = plan('t[i * 2] += exp(x[i * 2] * c)\n t[i * 2 + 1] += exp(x[i * 2 + 1] * c)')
    expect(p?.value).toMatchObject({ kind: 'math', routine: '__exp_f64x2', args: [{ kind: 'binary' }] })
    // a function without one leaves two scalars (and nothing worth a pair)
    expect(plan('u0 += sin(x[i * 2])\n u1 += sin(x[i * 2 + 1])')).toBeNull()
  })

  it('adds two values into one place in turn (an accumulator of paired iterations)', () => {
    // both values as one f64x2 value, then lane 0 and lane 1 added, as the two statements add them
    const p = plan('t[i] += exp(x[i * 2])\n t[i] += exp(x[i * 2 + 1])')
    expect(p?.target.kind).toBe('separate')
    expect(p?.value).toMatchObject({ kind: 'math', args: [{ kind: 'load', array: 'x' }] })
    expect(plan('u0 -= c * x[i * 2]\n u0 -= c * x[i * 2 + 1]')?.target.kind).toBe('separate')
    // not two different updates of it
    expect(plan('u0 += c * x[i * 2]\n u0 -= c * x[i * 2 + 1]')).toBeNull()
  })

  it('leaves alone what would change the results or gain nothing', () => {
    // the second statement reads what the first writes
    expect(plan('t[i * 2] += c * x[i * 2]\n t[i * 2 + 1] += c * t[i * 2]')).toBeNull()
    expect(plan('u0 += c * x[i * 2]\n u1 += c * x[i * 2 + 1] * u0')).toBeNull()
    // the same array, elements not provably adjacent
    expect(plan('t[i * 2] += c * x[i * 2]\n t[i * 2 + 2] += c * x[i * 2 + 1]')).toBeNull()
    // one place added into twice, the second value reading the first's array
    expect(plan('t[i] += c * x[i * 2]\n t[i] += c * x[i * 2 + 1] * t[i + 1]')).toBeNull()
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
    1.375,
    0.5,
    -2,
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
    expectSameRuns(modules, args)
  })

  it('holds adjacent elements a loop keeps in registers as one f64x2 local, with the same bits', () => {
    // the accumulations of a tangent at width 4 (q[e·4 + k]), the coefficients g[e·4 + k] read in
    // pairs, one lane updated alone and lanes read inside scalar expressions
    const text = `fn f(q: f64[], g: f64[], x: f64[], y: f64[], u: f64, e: i32) {
      for j in 0..len(x) {
        q[e * 4] += x[j] * g[e * 4] + u
        q[e * 4 + 1] += x[j] * g[e * 4 + 1] + u
        q[e * 4 + 2] -= (x[j] - g[e * 4 + 2]) ** 2
        q[e * 4 + 3] -= (x[j] - g[e * 4 + 3]) ** 2
        q[e * 4 + 1] += sqrt(abs(q[e * 4 + 2])) * g[e * 4]
        y[j] += q[e * 4 + 3] * g[e * 4 + 1] - q[e * 4]
      }
    }`
    const args = () => [
      Float64Array.from({ length: 12 }, (_, i) => 0.1 * i - 0.3),
      Float64Array.from({ length: 12 }, (_, i) => Math.cos(i)),
      Float64Array.from({ length: 7 }, (_, i) => Math.sin(2.1 * i)),
      new Float64Array(7),
      0.625,
      1,
    ]
    const modules = [compile(text, 'wasm', false, true)]
    expect(lastPairs).toBeGreaterThanOrEqual(2)
    modules.push(compile(text, 'wasm', false, false), compile(text, 'cpu', false))
    expectSameRuns(modules, args)
    // elements outside the pairs are untouched; a loop that does not run writes nothing
    const q = Float64Array.from({ length: 12 }, (_, i) => i)
    modules[0]!.f!(q, new Float64Array(12), new Float64Array(0), new Float64Array(0), 1, 1)
    expect(Array.from(q)).toEqual(Array.from({ length: 12 }, (_, i) => i))
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
      const host = (v: number) => {
        calls.push(v)
        return calls.length
      }
      const m = compileModule(parse({ text, name: 'h' }, [host]), { registry: registry(), backend, checks: false })
      const y = new Float64Array(2)
      m.f!(y, Float64Array.from([1, 1]))
      return JSON.stringify([calls, Array.from(y)])
    })
    expect(runs[0]).toBe(runs[1])
  })
})
