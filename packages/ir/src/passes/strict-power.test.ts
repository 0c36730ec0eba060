/**
 * Review 18 (d) of `strictReads` (pass `implied-checks`): the base of `h ** c` with a literal
 * c > 0 is read strictly only where c, as the expression evaluates it, is above zero. In an f32
 * expression a literal below f32's least subnormal (`1e-50`) is 0, and `±∞ ** 0` = `NaN ** 0` = 1:
 * such a power is finite from a base that is not (the compiled programs that then miss a failing
 * check are in the wasm backend's `review18-d-implied-power-f32.test.ts`).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse } from '../index.js'
import { strictReads } from './index.js'

const registry = createRegistry()

/** The names `strictReads` finds in the value of `o += text`, in a function of T scalars. */
const strict = (T: 'f64' | 'f32', text: string): string[] => {
  const f = check(parse(`fn f(o: ${T}, a: ${T}, b: ${T}) { o += ${text} }`).functions, [], registry).functions.get('f')!
  const u = f.body[0] as { value: Parameters<typeof strictReads>[0] }
  return [...strictReads(u.value, () => true)].sort()
}

describe('review18-d: strictReads of h ** c', () => {
  it('f32 a ** 1e-50 and a ** 5e-324 (exponents 0 in f32) do not read a strictly', () => {
    expect(strict('f32', 'a ** 1e-50')).toEqual([])
    expect(strict('f32', 'a ** 5e-324 + b')).toEqual(['b'])
  })

  it('holds: exponents above zero in their type read the base strictly', () => {
    expect(strict('f64', 'a ** 1e-300 + b ** 5e-324')).toEqual(['a', 'b'])
    expect(strict('f32', 'a ** 1e-45 + b ** 0.5')).toEqual(['a', 'b'])
  })
})
