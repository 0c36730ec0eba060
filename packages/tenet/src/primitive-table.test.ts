/**
 * Every float primitive of the registry, read from the registry (no list of names here): the rules
 * in its file — partials, tangent rule, adjoint rule — give a gradient, a forward-mode tangent and a
 * Hessian that agree with finite differences of its JS `evaluate`/`apply`, on the interpreter, the
 * cpu backend and the wasm backend.
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, gradient, hessian, jvp, rev, type BijectionSpec, type PurePrimitiveSpec } from './index.js'
import { compile } from './test-util.js'

const registry = createRegistry().registerBackend(wasmBackend)
const specs = registry.names().map((n) => registry.findPrimitive(n)!)
// pure primitives of float arguments (all of the standard ones); points inside every domain (log, sqrt, asin, acos, pow)
const pures = specs.filter((s): s is PurePrimitiveSpec => s.kind === 'pure' && s.partialExprs !== undefined)
// float bijections with forward-mode and reverse-mode rules
const bijections = specs.filter(
  (s): s is BijectionSpec =>
    s.kind === 'bijection' &&
    (s.types ?? []).every((t) => t === 'float' || t === 'numeric') &&
    (s.selfAdjoint === true || (s.tangent !== undefined && s.adjoint !== undefined)),
)
const POINT = [0.35, 0.8, 0.55]

/** Central first and second differences of f at p. */
function differences(f: (p: number[]) => number, p: number[]): { g: number[]; H: number[][] } {
  const at = (d: (i: number) => number) => f(p.map((v, i) => v + d(i)))
  const h1 = 1e-6,
    h2 = 1e-4
  const g = p.map((_, i) => (at((k) => (k === i ? h1 : 0)) - at((k) => (k === i ? -h1 : 0))) / (2 * h1))
  const H = p.map((_, i) =>
    p.map((_, j) => {
      const s = (a: number, b: number) => at((k) => (k === i ? a : 0) + (k === j ? b : 0))
      return (s(h2, h2) - s(h2, -h2) - s(-h2, h2) + s(-h2, -h2)) / (4 * h2 * h2)
    }),
  )
  return { g, H }
}
const close = (actual: number, expected: number, tol: number, what: string) =>
  expect(Math.abs(actual - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
    tol * Math.max(1, Math.abs(expected)),
  )

describe.each(['interpreter', 'cpu', 'wasm'] as const)(
  "the registry's primitives, by their own files (%s)",
  (backend) => {
    const tag = rev.with({ registry, backend })

    it(`pure primitives (${pures.map((p) => p.name).join(', ')}): gradient, jvp and Hessian`, () => {
      expect(pures.length).toBeGreaterThanOrEqual(18)
      for (const p of pures) {
        const xs = POINT.slice(0, p.arity).map((v, i) => (p.name === 'min' || p.name === 'max' ? v + i : v))
        const params = xs.map((_, i) => `x${i}: f64`).join(', ')
        const call = `${p.name}(${xs.map((_, i) => `x${i}`).join(', ')})`
        // y = f(x)·f(x) + f(x): a nonzero second derivative even where f's own is zero
        const m = compile(`fn f(y: f64, ${params}) { y += ${call} * ${call} + ${call} }`, tag)
        const plain = (x: number[]) => {
          const v = p.evaluate(...x)
          return v * v + v
        }
        const ref = differences(plain, xs)
        const args = [0, ...xs]
        const g = gradient(m.f!, args, { loss: 0 }) as number[]
        xs.forEach((_, i) => close(g[i + 1]!, ref.g[i]!, 1e-6, `${p.name} gradient ${i}`))
        const v = [0, ...xs.map((_, i) => i + 1)]
        close(
          (jvp(m.f!, args, { v }).tangent as number[])[0]!,
          ref.g.reduce((s, d, i) => s + d * (i + 1), 0),
          1e-6,
          `${p.name} jvp`,
        )
        const H = hessian(m.f!, args, { loss: 0 })
        xs.forEach((_, i) =>
          xs.forEach((_, j) => close(H[i * xs.length + j]!, ref.H[i]![j]!, 1e-4, `${p.name} Hessian ${i},${j}`)),
        )
      }
    })

    it(`float bijections (${bijections.map((b) => b.name).join(', ')}): jvp and Hessian`, () => {
      expect(bijections.map((b) => b.name)).toEqual(
        expect.arrayContaining([
          'SWAP',
          'NEG',
          'HADAMARD',
          'ROT',
          'IROT',
          'INV',
          'AddConst',
          'SubConst',
          'sincos',
          'sincos_inverse',
        ]),
      )
      for (const b of bijections) {
        const n = b.roles.length
        const xs = POINT.slice(0, n).concat(Array(Math.max(0, n - POINT.length)).fill(0.4))
        const inout = b.roles
          .map((r, i) => [r, i] as const)
          .filter(([r]) => r === 'inout')
          .map(([, i]) => i)
        const names = xs.map((_, i) => `x${i}`)
        // loss = Σ (k+1)·(new inout k)²: read after the bijection
        const loss = inout.map((i, k) => `${k + 1}.0 * x${i} * x${i}`).join(' + ')
        const m = compile(
          `fn f(y: f64, ${names.map((x) => `${x}: f64`).join(', ')}) { ${b.name}(${names.join(', ')})\n y += ${loss} }`,
          tag,
        )
        const plain = (x: number[]) => {
          const out = b.apply(...x)
          return inout.reduce((s, _, k) => s + (k + 1) * out[k]! * out[k]!, 0)
        }
        const ref = differences(plain, xs)
        const args = [0, ...xs]
        const v = [0, ...xs.map((_, i) => 1 - 0.3 * i)]
        close(
          (jvp(m.f!, args, { v }).tangent as number[])[0]!,
          ref.g.reduce((s, d, i) => s + d * (1 - 0.3 * i), 0),
          1e-6,
          `${b.name} jvp`,
        )
        const H = hessian(m.f!, args, { loss: 0 })
        xs.forEach((_, i) =>
          xs.forEach((_, j) => close(H[i * n + j]!, ref.H[i]![j]!, 1e-4, `${b.name} Hessian ${i},${j}`)),
        )
      }
    })
  },
)
