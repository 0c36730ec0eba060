/**
 * \`.core\` checks nothing of the aliasing rule and may be given one array for two parameters (see
 * \`apart.ts\` of \`@tenet/ir\` and \`unaliasedPromotions\` of codegen.ts). With checks off the cpu
 * backend keeps in memory the elements a loop accesses only in branches, so with \`x\` and \`y\` one
 * array the \`else\` branch sees the \`then\` branch's writes, as on the interpreter (review 18a: a
 * change this round that kept such elements in locals with checks off gave other values; reverted).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const show = (xs: ArrayLike<number>) => Array.from(xs, (v) => (Object.is(v, -0) ? '-0' : String(v)))

const source = (T: 'f64' | 'f32' | 'i32') => {
  const zero = T === 'i32' ? '0' : '0.0',
    one = T === 'i32' ? '1' : '1.0'
  return `fn f(y: ${T}[], x: ${T}[], w: ${T}[], z: ${T}[], n: i32) {
  for i in 0..n {
    if (w[i] > ${zero}, ~) { y[0] += ${one} } else { z[i] += x[0] }
  }
}`
}

function core(T: 'f64' | 'f32' | 'i32', backend: string, checks: boolean): string[] {
  const m = compileModule(parse({ text: source(T), name: 'core-alias' }), { registry, backend, checks })
  const A = T === 'f64' ? Float64Array : T === 'f32' ? Float32Array : Int32Array
  const a = A.of(T === 'i32' ? 2 : 1.5, 7),
    w = A.of(1, -1, 1, -1),
    z = new A(4)
  ;(m.f as unknown as { core: (...a: unknown[]) => unknown }).core(a, a, w, z, 4)
  return show(a).concat(show(z))
}

describe('one array for two parameters of .core, elements only a branch and a condition access', () => {
  for (const T of ['f64', 'f32', 'i32'] as const) {
    it(`${T}, checks off: the else branch sees the then branch's writes, as in the interpreter`, () => {
      const want = core(T, 'interpreter', false)
      expect(want.slice(2)).toEqual(T === 'i32' ? ['0', '3', '0', '4'] : ['0', '2.5', '0', '3.5'])
      expect(core(T, 'cpu', false)).toEqual(want)
    })
    it(`${T}, checks on: as the interpreter`, () => {
      expect(core(T, 'cpu', true)).toEqual(core(T, 'interpreter', true))
    })
  }
})
