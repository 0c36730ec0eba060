import { describe, expect, it } from 'vitest'
import {
  binary,
  bijection,
  createRegistry,
  parse,
  standardPrimitives,
  unary,
  type Expr,
  type PartialFunction,
  type PrimitiveSpec,
} from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from './index.js'

const compile = (text: string, backend: string, ...prims: PrimitiveSpec[]) => {
  const registry = createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
  for (const p of prims) registry.registerPrimitive(p)
  return compileModule(parse({ text, name: 'lowering' }), { registry, backend, checks: true })
}

describe("a primitive's own wasm lowering", () => {
  it('an emitter function (f64) and a math-library call agree with the cpu backend', () => {
    const poly = unary({
      name: 'poly',
      evaluate: (x) => 2 * x * x + 1,
      emit: {
        wasm: (w) => {
          w.const(2)
          w.arg(0)
          w.op('mul')
          w.arg(0)
          w.op('mul')
          w.const(1)
          w.op('add')
        },
      },
    })
    const sine = unary({ name: 'sine', evaluate: Math.sin, emit: { wasm: { math: 'sin' } } })
    const src = 'fn f(y: f64, z: f32, x: f64, u: f32) { y += poly(x) + sine(x)\n z += poly(u) }'
    const a = compile(src, 'wasm', poly, sine).f!(0, 0, 0.3, 0.3) as number[]
    const b = compile(src, 'cpu', poly, sine).f!(0, 0, 0.3, 0.3) as number[]
    expect(a).toEqual(b)
    expect(a[0]).toBe(2 * 0.3 * 0.3 + 1 + Math.sin(0.3))
  })

  it('a bijection lowered by an emitter function runs forwards and backwards', () => {
    const twist = bijection({
      name: 'TWIST',
      params: ['a', 'b'],
      roles: ['inout', 'inout'],
      types: ['float', 'float'],
      inverse: 'UNTWIST',
      apply: (a, b) => [a + 2 * b, b],
      emit: {
        wasm: (w) => {
          w.arg(0)
          w.const(2)
          w.arg(1)
          w.op('mul')
          w.op('add')
          w.arg(1)
        },
      },
    })
    const untwist = bijection({
      name: 'UNTWIST',
      params: ['a', 'b'],
      roles: ['inout', 'inout'],
      types: ['float', 'float'],
      inverse: 'TWIST',
      apply: (a, b) => [a - 2 * b, b],
      emit: {
        wasm: (w) => {
          w.arg(0)
          w.const(2)
          w.arg(1)
          w.op('mul')
          w.op('sub')
          w.arg(1)
        },
      },
    })
    const m = compile('fn f(a: f64, b: f64) { TWIST(a, b) }', 'wasm', twist, untwist)
    expect(m.f!(1, 3)).toEqual([7, 3])
    expect(m.f!.inverse(7, 3)).toEqual([1, 3])
  })

  it('a wrong lowering is an error naming the primitive', () => {
    const two = unary({
      name: 'two',
      evaluate: (x) => x,
      emit: {
        wasm: (w) => {
          w.arg(0)
          w.arg(0)
        },
      },
    })
    expect(() => compile('fn f(y: f64, x: f64) { y += two(x) }', 'wasm', two)).toThrow(
      /the wasm lowering of primitive `two` leaves 2 values; it must leave 1/,
    )
    const bad = unary({
      name: 'bad',
      evaluate: (x) => x,
      emit: {
        wasm: (w) => {
          w.op('add')
        },
      },
    })
    expect(() => compile('fn f(y: f64, x: f64) { y += bad(x) }', 'wasm', bad)).toThrow(
      /the wasm lowering of primitive `bad` applies `add` to 0 values/,
    )
  })

  it('comparisons leave 1 or 0 in the float type (f64 and f32), NaN compared as wasm and JS compare it', () => {
    const ops = {
      eq: (a: number, b: number) => a === b,
      ne: (a: number, b: number) => a !== b,
      lt: (a: number, b: number) => a < b,
      gt: (a: number, b: number) => a > b,
      le: (a: number, b: number) => a <= b,
      ge: (a: number, b: number) => a >= b,
    }
    const values = [0, -0, 1, -1, 2.5, Infinity, -Infinity, NaN]
    for (const [op, js] of Object.entries(ops)) {
      // an evaluate that throws: the lowering, not a call out, computes it
      const cmp = binary({
        name: 'cmp',
        params: ['a', 'b'],
        evaluate: () => {
          throw new Error('called out')
        },
        emit: { wasm: op as 'ge' },
      })
      const m = compile(
        'fn f(y: f64, z: f32, a: f64, b: f64, u: f32, v: f32) { y += cmp(a, b)\n z += cmp(u, v) }',
        'wasm',
        cmp,
      )
      for (const a of values)
        for (const b of values) {
          const want = js(a, b) ? 1 : 0
          expect(m.f!(0, 0, a, b, a, b)).toEqual([want, want, a, b, a, b])
        }
    }
  })

  it('the piecewise partials of abs, min and max are computed in the module, as their JS functions', () => {
    const values = [0, -0, 1, -1, 2.5, 5e-324, Infinity, -Infinity, NaN]
    const arg = (name: string): Expr => ({ kind: 'var', name, type: 'f64' }) as Expr
    let checked = 0
    for (const name of ['abs', 'min', 'max']) {
      const spec = standardPrimitives.find((p) => p.name === name) as Extract<PrimitiveSpec, { kind: 'pure' }>
      const parts = spec.partialExprs!([arg('a'), arg('b')].slice(0, spec.arity))
      for (const part of parts) {
        const pf = part as PartialFunction
        expect(pf.emit?.wasm).toBeDefined()
        const helper = {
          specificationVersion: 'v1' as const,
          name: 'pw',
          kind: 'pure' as const,
          arity: spec.arity,
          evaluate: () => {
            throw new Error('called out')
          },
          emit: pf.emit,
        }
        const call = spec.arity === 1 ? 'pw(a)' : 'pw(a, b)'
        const m = compile(`fn f(y: f64, a: f64, b: f64) { y += ${call} }`, 'wasm', helper)
        for (const a of values)
          for (const b of values) {
            const got = (m.f!(0, a, b) as number[])[0]
            expect(Object.is(got, 0 + pf.evaluate(a, b))).toBe(true)
            checked++
          }
      }
    }
    expect(checked).toBe(5 * values.length ** 2)
  })
})
