/**
 * Review 14c: hoist-bounds' loop versions in a nest (checks on): the failing version of a loop
 * keeps its inner loops as written, so the code grows with the depth (about quadratically), not
 * as 2^depth. Measured when written: depth 1: 761 characters, depth 6: 9395, depth 8: 15824.
 */
import { expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, generatedCode, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const nest = (d: number) => {
  const vars = Array.from({ length: d }, (_, k) => `i${k}`)
  let body = `y[${vars.join(' + ')}] += x[${vars.join(' + ')} + 1]`
  for (let k = d - 1; k >= 0; k--) body = `for ${vars[k]} in 0..n { ${body}\n  z[${vars[k]}] += 1.0 }`
  return `fn f(y: f64[], x: f64[], z: f64[], n: i32) {\n${body}\n}`
}
it('a 6-deep nest: code within a small multiple of depth² × the one-loop size', () => {
  const size = (d: number) =>
    (
      generatedCode(
        compileModule(parse({ text: nest(d), name: 'p' }), { registry: registry(), backend: 'cpu', checks: true }).f!,
      ) ?? ''
    ).length
  expect(size(6)).toBeLessThan(36 * size(1))
})
