/**
 * Run with the allocation tests (vitest.alloc.config.ts at the repository root: V8's natives
 * syntax): every compiled function keeps fast properties. A function in dictionary mode made each
 * \`f.core\`, \`f.inverse\` or \`f.inverse.core\` a caller reads per call a dictionary lookup: the
 * single-z Bessel inverse through \`f.inverse.core(…)\` took 40–60 ns a call where the call itself
 * takes 17–28 (cpu and wasm backends, Node 20).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from './index.js'

const hasFastProperties = new Function('f', 'return %HasFastProperties(f)') as (f: unknown) => boolean

describe('compiled functions keep fast properties', () => {
  it('every function of a module and its inverse', () => {
    const registry = createRegistry().registerBackend(interpreterBackend)
    const m = compileModule(
      parse({
        text: 'fn f(y: f64, x: f64) {\n  y += x\n}\nfn g(y: f64, x: f64) {\n  y -= x * x\n}\nfn h(y: f64[], x: f64) {\n  y[0] += x\n}',
        name: 'fast',
      }),
      { registry, backend: 'interpreter' },
    )
    for (const name of ['f', 'g', 'h']) {
      const f = m[name]!
      expect(hasFastProperties(f), name).toBe(true)
      expect(hasFastProperties(f.inverse), `${name}.inverse`).toBe(true)
      // reading the source (the getter) changes nothing
      expect(f.inverse.source).toContain(`${name}_inverse`)
      expect(hasFastProperties(f.inverse), `${name}.inverse after .source`).toBe(true)
    }
  })
})
