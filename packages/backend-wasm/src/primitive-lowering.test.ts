import { describe, expect, it } from 'vitest'
import { bijection, createRegistry, parse, unary, type PrimitiveSpec } from '@tenet/ir'
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
})
