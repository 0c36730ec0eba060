import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry, InvertibilityError, parse, TenetStaticError } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { bruteForceGroundState, spinGlassBuffers, spinGlassSource } from './examples/spin-glass.js'
import { registerNumbers } from './index.js'

const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)
const compile = (backend: string, text: string): TenetModule =>
  compileModule(parse({ text, name: 'test' }, []), { registry, backend })

for (const backend of ['cpu', 'interpreter']) {
  describe(`tropical (${backend})`, () => {
    const m = compile(
      backend,
      `
      fn mul(x: tropical, y: tropical) { x *= y }
      fn div(x: tropical, y: tropical) { x /= y }
      fn mx(x: tropical, a: tropical, b: tropical) { x *= a + b }
      fn pw(x: tropical, a: tropical) { x *= a ** 3 }
      fn prod(x: tropical, a: tropical, b: tropical) { x *= a * b / 2.0 }
    `,
    )

    it('*= adds, /= subtracts, exactly (bit for bit)', () => {
      for (const [x, y] of [
        [0, 1.5],
        [-3.25, 7],
        [1 / 3, 1 / 7],
        [-Infinity, 2],
      ] as const) {
        const r = m.mul!(x, y) as number[]
        if (x !== -Infinity) expect(r[0]).toBeCloseTo(x + y, 9)
        const back = m.mul!.inverse(...r) as number[]
        expect(back[0]).toBe(registry.numberSystem('tropical').fromHost!(x))
        expect(m.div!(...r)[0]).toBe(back[0])
      }
    })

    it('+ is max and * is + inside expressions; ** r is r·a', () => {
      expect(m.mx!(1, 2, 5)[0]).toBe(6)
      expect(m.mx!(1, -Infinity, -2)[0]).toBe(-1)
      expect(m.pw!(0, 1.5)[0]).toBe(4.5)
      expect(m.prod!(0, 3, 4)[0]).toBe(5)
    })

    it('array arguments are rounded to the grid on entry, like scalars; an element the call leaves unchanged comes back as passed', () => {
      const t = compile(backend, 'fn f(x: tropical[], y: tropical) { x[0] *= y }').f!
      const round = registry.numberSystem('tropical').fromHost!
      expect(round(0.2)).not.toBe(0.2)
      const x = new Float64Array([1 / 3, 0.2]),
        y = 1 / 7
      t(x, y)
      expect(Array.from(x)).toEqual([round(round(1 / 3) + round(1 / 7)), 0.2])
      t.inverse(x, y)
      expect(Array.from(x)).toEqual([round(1 / 3), 0.2])
    })

    it('*= by the tropical zero is an InvertibilityError', () => {
      try {
        m.mul!(1, -Infinity)
        expect.unreachable()
      } catch (e) {
        expect(InvertibilityError.isInstance(e)).toBe(true)
        expect((e as InvertibilityError).code).toBe('runtime/tropical-zero')
      }
    })

    it('a product past the grid is an overflow that says what the bound protects (no talk of wrapping)', () => {
      try {
        m.mul!(2 ** 20, 2 ** 20)
        expect.unreachable()
      } catch (e) {
        expect(InvertibilityError.isInstance(e)).toBe(true)
        expect((e as InvertibilityError).code).toBe('runtime/fixed-overflow')
        expect((e as Error).message).toMatch(/tropical overflow: .* outside the range \(−2\^21, 2\^21\) of tropical/)
        expect((e as Error).message).toMatch(/keeps `\*=` and `\/=` exact/)
        expect((e as Error).message).not.toMatch(/wrapped/)
      }
    })

    it('ground-state energy of a spin glass by tropical contraction matches brute force; the inverse cleans up', () => {
      const spin = compile(backend, spinGlassSource).spin_glass!
      let seed = 7
      const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32
      for (const [w, l, kind] of [
        [3, 4, 'pm1'],
        [2, 5, 'real'],
        [4, 3, 'pm1'],
        [1, 6, 'real'],
      ] as const) {
        const jv = Float64Array.from({ length: l * (w - 1) }, () =>
          kind === 'pm1' ? (rnd() < 0.5 ? -1 : 1) : Math.round((rnd() * 2 - 1) * 1000) / 1000,
        )
        const jh = Float64Array.from({ length: (l - 1) * w }, () =>
          kind === 'pm1' ? (rnd() < 0.5 ? -1 : 1) : Math.round((rnd() * 2 - 1) * 1000) / 1000,
        )
        const { v, m: scratch, r } = spinGlassBuffers(w, l)
        spin(v, scratch, r, jv, jh, w, l)
        const e0 = -r[r.length - 1]!
        expect(e0).toBeCloseTo(bruteForceGroundState(jv, jh, w, l), 8)
        spin.inverse(v, scratch, r, jv, jh, w, l)
        expect([...v, ...scratch, ...r].every((x) => x === 0)).toBe(true)
      }
    })
  })
}

describe('tropical static errors', () => {
  it('+= is rejected and says why (max forgets the smaller operand)', () => {
    expect(() => compile('cpu', 'fn f(x: tropical, y: tropical) { x += y }')).toThrow(TenetStaticError)
    expect(() => compile('cpu', 'fn f(x: tropical, y: tropical) { x += y }')).toThrow(
      /max\(x, y\).*forgets the smaller operand/,
    )
    expect(() => compile('cpu', 'fn f(x: tropical, y: tropical) { x -= y }')).toThrow(/no subtraction/)
  })
  it('binary and unary minus are rejected', () => {
    expect(() => compile('cpu', 'fn f(x: tropical, y: tropical, z: tropical) { x *= y - z }')).toThrow(/no subtraction/)
    expect(() => compile('cpu', 'fn f(x: tropical, y: tropical) { x *= -y }')).toThrow(/no subtraction or negation/)
  })
})
