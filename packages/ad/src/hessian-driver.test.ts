/**
 * The second-order driver of `hessian`: the seed positions it keeps between calls, the widths it
 * spreads the directions over and the tiled symmetrisation, checked against central differences of
 * the exact gradient and against width-1 runs (one direction per sweep, another compiled program).
 */
import { describe, expect, it } from 'vitest'
import { hessian } from './index.js'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import type { BackendSpec } from '@tenet/ir'
import { expectClose, fdHessian, tag, testRegistry } from './test-util.js'

/** Whether H (n×n, row-major) equals its transpose exactly. */
function exactlySymmetric(H: Float64Array, n: number): boolean {
  for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) if (H[i * n + j] !== H[j * n + i]) return false
  return true
}

// a dense Hessian over a scalar and two arrays: every pair of scalars interacts
const source = `
fn f(loss: f64, s: f64, x: f64[], y: f64[]) {
  for i in 0..len(x) {
    for j in 0..len(y) {
      loss += sin(x[i] * y[j] + s) * (x[i] - y[j])
    }
  }
}`

const values = (n: number, seed: number) => Float64Array.from({ length: n }, (_, i) => Math.sin(seed + 1.3 * i) * 0.9)

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['interpreter', true],
] as const)('hessian driver on %s (checks %s)', (backend, checks) => {
  const f = tag({ backend, checks })(source).f!
  // (the interpreter is slow: fewer scalars there, still no multiple of the width or the tiles)
  const [nx, ny] = backend === 'interpreter' ? [9, 7] : [20, 17]
  const n = nx + 1 + ny

  it('matches differences of the gradient over a scalar and two arrays, in the order of wrt, exactly symmetric', () => {
    // 20 + 1 + 17 = 38 scalars: not a multiple of the width or of the symmetrisation's tiles
    const args = [0, 0.3, values(nx, 1), values(ny, 2)]
    const wrt = [2, 1, 3]
    const H = hessian(f, args, { loss: 0, wrt })
    expectClose(H, fdHessian(f, args, wrt), 1e-6, 'H')
    expect(exactlySymmetric(H, n)).toBe(true)
    // one direction per sweep: another program, the same Hessian to rounding
    expectClose(H, hessian(f, args, { loss: 0, wrt, width: 1 }), 1e-12, 'H (width 1)')
  })

  it('takes the rows of each call from its own wrt and lengths (the kept positions follow them)', () => {
    const a = [0, -0.2, values(6, 3), values(5, 4)]
    const b = [0, 0.4, values(9, 5), values(5, 6)]
    const calls: Array<[unknown[], number[]]> = [
      [a, [2, 1, 3]],
      [a, [3]],
      [a, [1, 2]],
      [b, [1, 2]],
      [b, [2, 1, 3]],
      [a, [2, 1, 3]],
    ]
    for (const [args, wrt] of calls) {
      const H = hessian(f, args, { loss: 0, wrt, width: 4 })
      expectClose(H, fdHessian(f, args, wrt), 1e-6, `H over ${wrt.join(',')}`)
      expectClose(H, hessian(f, args, { loss: 0, wrt, width: 1 }), 1e-12, `H over ${wrt.join(',')} (width 1)`)
    }
  })

  it('runs a width that does not divide the directions (20 at most 8 wide), into `out`', () => {
    const args = [0, 0.1, values(12, 7), values(7, 8)]
    const wrt = [1, 2, 3]
    const out = new Float64Array(400)
    expect(hessian(f, args, { loss: 0, wrt, width: 8, out })).toBe(out)
    expectClose(out, fdHessian(f, args, wrt), 1e-6, 'H')
    expectClose(out, hessian(f, args, { loss: 0, wrt, width: 1 }), 1e-12, 'H (width 1)')
    expect(exactlySymmetric(out, 20)).toBe(true)
  })
})

describe.each(['cpu', 'wasm', 'interpreter'] as const)('hessian calls in a loop on %s', (backend) => {
  const registry = testRegistry().registerBackend(wasmBackend)
  const f = tag({ backend, checks: false, registry })(source).f!
  // scalar-only: the Bessel-like case, where nothing but scalars is loaded
  const g = tag({ backend, checks: false, registry })(
    'fn g(loss: f64, a: f64, b: f64) { loss += a * a * b + sin(a * b) }',
  ).g!

  it('take new values of the same shapes, in arrays the program only reads too', () => {
    // the same argument arrays (and shapes) call after call, their values changed in between: the
    // driver keeps its plan and must copy the new values in (on wasm, into the module's memory)
    const x = values(5, 1),
      y = values(4, 2)
    for (const [s, seed] of [
      [0.3, 3],
      [-0.7, 5],
      [0.3, 3],
    ] as const) {
      x.set(values(5, seed))
      y.set(values(4, seed + 1))
      const args = [0, s, x, y]
      expectClose(hessian(f, args, { loss: 0, wrt: [1, 2, 3] }), fdHessian(f, args, [1, 2, 3]), 1e-6, `H (s = ${s})`)
      // and copies of them: other arrays of the same shapes
      const copies = [0, s, x.slice(), y.slice()]
      expectClose(hessian(f, copies, { loss: 0, wrt: [2] }), fdHessian(f, copies, [2]), 1e-6, `H over x (s = ${s})`)
    }
    for (const [a, b] of [
      [0.5, 1.5],
      [-1.25, 0.75],
      [0.5, 1.5],
    ]) {
      const h = hessian(g, [0, a, b], { loss: 0, wrt: [1, 2] })
      // ∂²/∂a² = 2b − b² sin(ab), ∂²/∂a∂b = 2a + cos(ab) − ab sin(ab), ∂²/∂b² = −a² sin(ab)
      const s = Math.sin(a * b),
        c = Math.cos(a * b)
      const exact = [2 * b - b * b * s, 2 * a + c - a * b * s, 2 * a + c - a * b * s, -a * a * s]
      expectClose(h, exact, 1e-12, `H of g at (${a}, ${b})`)
    }
  })
})

describe('the default width of hessian', () => {
  it("is the backend's hessianWidth capability (spread evenly: 7 columns at most 3 wide are three sweeps of 3)", () => {
    const compiled: string[] = []
    const spec: BackendSpec = {
      ...cpuBackend,
      name: 'cpuNarrow',
      capabilities: { ...cpuBackend.capabilities, hessianWidth: 3 },
      doCompile: (program, inverses, options) => {
        compiled.push(...program.functions.keys())
        return cpuBackend.doCompile(program, inverses, options)
      },
    }
    const registry = testRegistry().registerBackend(spec)
    const f = tag({ backend: 'cpuNarrow', registry })(source).f!
    const args = [0, 0.2, values(4, 9), values(2, 10)]
    const H = hessian(f, args, { loss: 0, wrt: [1, 2, 3] })
    // the tangent functions are named for their width (\`f$adj$tan3\`, …, \`$unit2_3\` for the
    // unit-seeded arrays)
    expect(compiled.some((name) => /\$tan3(\$unit[\d_]+)?$/.test(name))).toBe(true)
    expect(compiled.some((name) => /\$tan(?!3(\$|$))\d+(\$unit[\d_]+)?$/.test(name))).toBe(false)
    expectClose(H, fdHessian(f, args, [1, 2, 3]), 1e-6, 'H')
    // without the capability: 8 (7 columns, one sweep of 7)
    compiled.length = 0
    const g = tag({
      backend: 'cpuPlain',
      registry: registry.registerBackend({
        ...spec,
        name: 'cpuPlain',
        capabilities: { ...cpuBackend.capabilities, hessianWidth: undefined },
      }),
    })(source).f!
    expectClose(hessian(g, args, { loss: 0, wrt: [1, 2, 3] }), H, 1e-12, 'H (default width)')
    expect(compiled.some((name) => /\$tan7(\$unit[\d_]+)?$/.test(name))).toBe(true)
  })
})
