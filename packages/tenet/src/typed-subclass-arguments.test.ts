/**
 * (Review 20b.) Written arrays of subclasses of typed arrays, checks on, in the generated call and
 * the general wrapper (a module with a JavaScript host function; the wasm backend): a subclass
 * whose constructor takes other arguments is snapshotted in the parameter's own typed array type
 * (the general wrapper called the subclass's constructor and failed before the call ran), and a
 * failed call restores it with the typed arrays' own `set` (a subclass's redefined `set` left
 * the array as the call had written it).
 */
import { describe, expect, it } from 'vitest'
import { TenetError, rev } from './index.js'

const thrown = (f: () => unknown): { code: string; message: string } => {
  try {
    f()
  } catch (e) {
    return {
      code: TenetError.isInstance(e) ? (e as TenetError).code : `${(e as Error)?.constructor?.name}`,
      message: String((e as Error)?.message),
    }
  }
  return { code: 'ok', message: '' }
}

/** A typed array subclass whose constructor takes other arguments. */
class Tagged extends Float64Array {
  tag: string
  constructor(tag: string, n: number) {
    super(n)
    this.tag = tag
  }
}

/** A typed array subclass whose `set` stores one element. */
class Cells extends Float64Array {
  // @ts-expect-error (another signature than Float64Array's `set`)
  override set(i: number, v: number): void {
    this[i] = v
  }
}

const id = (x: number): number => x

describe('written arrays of typed array subclasses, checks on', () => {
  const fast = rev.with({ checks: true })`fn f(x: f64[], k: i32) { x[0] += 1.0; x[k] += 1.0 }`
  // (a plain JS function in the module: the general wrapper)
  const general = rev.with({ checks: true })`fn f(x: f64[], k: i32) { x[0] += ${id}(1.0); x[k] += 1.0 }`

  it('a subclass with another constructor: the generated call runs and restores it', () => {
    const t = new Tagged('t', 2)
    t.set([5, 6])
    expect(fast.f!.length).toBe(2)
    fast.f!(t, 1)
    expect([...t]).toEqual([6, 7])
    expect(thrown(() => fast.f!(t, 9)).code).toBe('runtime/out-of-bounds')
    expect([...t]).toEqual([6, 7])
  })

  it('a subclass with another constructor: the general wrapper runs it as the generated call does (before: RangeError: offset is out of bounds, the call not run)', () => {
    const t = new Tagged('t', 2)
    t.set([5, 6])
    expect(general.f!.length).toBe(0)
    expect(thrown(() => general.f!(t, 1)).code).toBe('ok')
    expect([...t]).toEqual([6, 7])
    expect(thrown(() => general.f!(t, 9)).code).toBe('runtime/out-of-bounds')
    expect([...t]).toEqual([6, 7])
  })

  for (const [name, m] of [
    ['generated call', fast],
    ['general wrapper', general],
  ] as const) {
    it(`a subclass that redefines \`set\`: a failed call restores it (${name}; before: [6, 6], the restore called the subclass's \`set\`)`, () => {
      const x = new Cells(2)
      x[0] = 5
      x[1] = 6
      expect(thrown(() => m.f!(x, 9)).code).toBe('runtime/out-of-bounds')
      expect([...x]).toEqual([5, 6])
    })
  }
})
