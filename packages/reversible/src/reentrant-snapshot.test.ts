/**
 * (Review 20a.) The snapshots the generated public call (`fast-call.ts`) restores a failed checked
 * call from are kept per depth of re-entry: a user primitive (`registerPrimitive`, whose
 * `evaluate` is JavaScript) may call the same Tenet function again while it runs, and the inner
 * call must not overwrite the outer call's snapshot (with one snapshot for the function, the outer
 * array was "restored" from the inner call's array, or the restore threw a RangeError).
 */
import { describe, expect, it } from 'vitest'
import { TenetError, createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from './index.js'

type M = Record<string, any>

/** A module whose `f` calls the primitive `viaf`, which calls `f` again on an array of `inner` elements. */
function reentrant(inner: number): M {
  let m: M | undefined
  const registry = createRegistry()
    .registerBackend(interpreterBackend)
    .registerPrimitive({
      specificationVersion: 'v1',
      name: 'viaf',
      kind: 'pure',
      arity: 1,
      evaluate: (d: number) => {
        if (d <= 0) return 0
        // a call of f on an array of its own (pure: the primitive's result depends on d only)
        const z = Float64Array.from({ length: inner }, (_, j) => 10 * (j + 1))
        m!.f(z, 0, 0)
        return z[0]! - 10
      },
      partials: () => [0],
    })
  m = compileModule(
    parse({ text: 'fn f(x: f64[], k: i32, d: f64) {\n  x[0] += viaf(d)\n  x[k] += 1.0\n}', name: 'review20a' }),
    {
      registry,
      backend: 'interpreter',
      checks: true,
    },
  ) as M
  return m
}

function outcome(f: () => unknown): string {
  try {
    f()
    return 'ok'
  } catch (e) {
    return TenetError.isInstance(e)
      ? (e as TenetError).code
      : `${(e as Error).constructor.name}: ${(e as Error).message}`
  }
}

describe('a call of the same function from a primitive, with checks on', () => {
  it('the re-entrant call itself works (no failure: both calls run)', () => {
    const m = reentrant(3)
    const y = Float64Array.of(1, 2)
    m.f(y, 1, 1)
    expect([...y]).toEqual([2, 3])
  })

  it('the outer call fails out of bounds: runtime/out-of-bounds, its array restored (got a RangeError from the restore, the array left written)', () => {
    const m = reentrant(3)
    const y = Float64Array.of(1, 2)
    expect(outcome(() => m.f(y, 5, 1))).toBe('runtime/out-of-bounds')
    expect([...y]).toEqual([1, 2])
  })

  it('the inner array of the same length: the outer array is restored to its own values, not the inner call’s', () => {
    const m = reentrant(2)
    const y = Float64Array.of(1, 2)
    expect(outcome(() => m.f(y, 5, 1))).toBe('runtime/out-of-bounds')
    expect([...y]).toEqual([1, 2])
  })

  it('without the re-entrant call the restore holds', () => {
    const m = reentrant(2)
    const y = Float64Array.of(1, 2)
    expect(outcome(() => m.f(y, 5, 0))).toBe('runtime/out-of-bounds')
    expect([...y]).toEqual([1, 2])
  })
})
