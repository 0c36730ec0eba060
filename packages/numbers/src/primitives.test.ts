/**
 * Every standard primitive: inverse ∘ forward = identity on a table of inputs in every number
 * system it supports, and the cpu backend agrees with the interpreter bit for bit.
 */
import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry, parse, standardPrimitives, type BijectionSpec } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { registerNumbers } from './index.js'

const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)
const compile = (backend: string, text: string): TenetModule =>
  compileModule(parse({ text, name: 'test' }, []), { registry, backend })

const FLOATS = ['f64', 'f32', 'fixed'] as const
/** Bijections that are exact on an exact number system (the others round: INV, ROT, IROT, HADAMARD). */
const EXACT_ON_GRID = new Set(['SWAP', 'NEG', 'INC', 'DEC', 'FLIP', 'AddConst', 'SubConst', 'sincos', 'sincos_inverse'])
const inputs = [0.2, 0.5, 0.9, 0.35]

function systemsFor(b: BijectionSpec): string[] {
  const t = b.types?.[0] ?? 'numeric'
  if (t === 'bool') return ['bool']
  if (t === 'float') return [...FLOATS]
  if (t === 'integer') return ['i32']
  if (t === 'numeric') return [...FLOATS, 'i32']
  return [t]
}

function same(a: unknown, b: unknown, exact: boolean, tol = 1e-12) {
  if (exact || typeof a !== 'number') expect(a).toBe(b)
  else expect(Math.abs((a as number) - (b as number))).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(b as number)))
}

describe('pure primitives: y += f(x) then y -= f(x)', () => {
  for (const p of standardPrimitives) {
    if (p.kind !== 'pure') continue
    for (const T of FLOATS) {
      it(`${p.name} on ${T}`, () => {
        const params = Array.from({ length: p.arity }, (_, i) => `a${i}: ${T}`).join(', ')
        const args = Array.from({ length: p.arity }, (_, i) => `a${i}`).join(', ')
        const src = `fn f(y: ${T}, ${params}) { y += ${p.name}(${args}) }`
        const [cpu, interp] = [compile('cpu', src), compile('interpreter', src)]
        const exact = T === 'fixed'
        for (let k = 0; k < inputs.length; k++) {
          const xs = Array.from({ length: p.arity }, (_, i) => inputs[(k + i) % inputs.length]!)
          const y0 = registry.numberSystem(T).fromHost?.(0.75) ?? 0.75
          const fc = cpu.f!(y0, ...xs),
            fi = interp.f!(y0, ...xs)
          expect(fc).toEqual(fi)
          const want = p.evaluate(...(fc.slice(1) as number[]))
          expect(Math.abs((fc[0] as number) - y0 - want)).toBeLessThan(T === 'f32' ? 1e-6 : 1e-11)
          const bc = cpu.f!.inverse(...fc),
            bi = interp.f!.inverse(...fi)
          expect(bc).toEqual(bi)
          same(bc[0], y0, exact, T === 'f32' ? 3e-7 : 1e-15)
        }
      })
    }
  }
})

describe('bijections: NAME(...) then ~NAME(...)', () => {
  for (const p of standardPrimitives) {
    if (p.kind !== 'bijection') continue
    for (const T of systemsFor(p)) {
      it(`${p.name} on ${T}`, () => {
        const types = p.roles.map((_, i) =>
          p.types?.[i] && !['float', 'numeric', 'integer'].includes(p.types[i]!) ? p.types[i] : T,
        )
        const params = types.map((t, i) => `a${i}: ${t}`).join(', ')
        const args = types.map((_, i) => `a${i}`).join(', ')
        const src = `fn f(${params}) { ${p.name}(${args}) }`
        const [cpu, interp] = [compile('cpu', src), compile('interpreter', src)]
        const exact = registry.numberSystem(T).exact && EXACT_ON_GRID.has(p.name)
        for (let k = 0; k < inputs.length; k++) {
          const xs = types.map((t, i) =>
            t === 'bool' ? (k + i) % 2 === 0 : t === 'i32' ? k * 7 - 3 + i : inputs[(k + i) % inputs.length]!,
          )
          const fc = cpu.f!(...xs),
            fi = interp.f!(...xs)
          expect(fc).toEqual(fi)
          const start = cpu.f!.inverse(...fc) // host values rounded to the representation
          const bc = cpu.f!.inverse(...cpu.f!(...start)),
            bi = interp.f!.inverse(...interp.f!(...start))
          expect(bc).toEqual(bi)
          bc.forEach((v, i) => same(v, start[i], exact, T === 'f32' ? 1e-6 : T === 'fixed' ? 1e-11 : 1e-14))
        }
      })
    }
  }
})

describe('convert between every pair of number systems', () => {
  const scalars = ['f64', 'f32', 'i32', 'fixed', 'ulog', 'tropical']
  const exactSystems = new Set(['i32', 'fixed', 'ulog', 'tropical'])
  for (const from of scalars) {
    for (const to of scalars) {
      it(`${to} += convert(${from})`, () => {
        const upd = to === 'ulog' || to === 'tropical' ? '*=' : '+='
        const src = `fn f(y: ${to}, x: ${from}) { y ${upd} convert(x) }`
        const [cpu, interp] = [compile('cpu', src), compile('interpreter', src)]
        for (const x of [3, 2.5, 0.1, -7]) {
          if (from === 'ulog' && to === 'tropical' && x < 0) continue
          if (from === 'i32' && to === 'ulog' && Math.trunc(x) === 0) continue // *= 0 is not invertible
          const y0 = to === 'ulog' ? 1 : to === 'tropical' ? 0 : 1
          const fc = cpu.f!(y0, x),
            fi = interp.f!(y0, x)
          expect(fc).toEqual(fi)
          // x as its own type holds it (an unchanged argument comes back as passed: its real value
          // in its own type is that of its representation)
          const ns = registry.numberSystem(from)
          const xh = ns.toHost && ns.fromHost ? ns.toHost(ns.fromHost(x)) : (fc[1] as number)
          const want = to === 'i32' ? Math.trunc(xh) : xh
          const got = to === 'ulog' ? (fc[0] as number) : (fc[0] as number) - y0
          expect(Math.abs(got - want)).toBeLessThanOrEqual(
            to === 'f32'
              ? 1e-6 * Math.abs(want)
              : to === 'ulog'
                ? 1e-12 * Math.abs(want)
                : to === 'fixed' || to === 'tropical'
                  ? 2 ** -32
                  : 1e-15,
          )
          const back = cpu.f!.inverse(...fc)
          if (exactSystems.has(to)) expect(back[0]).toBe(y0)
          else expect(Math.abs((back[0] as number) - y0)).toBeLessThan(1e-6)
        }
      })
    }
  }
})
