import { describe, expect, it } from 'vitest'
import { TenetError, type BackendSpec, type CompiledFunction } from '@tenet/ir'
import { interpreterBackend } from '@tenet/reversible'
import { conformanceChecks, type ConformanceCheck } from './suite.js'

/** The interpreter with each compiled function passed through `wrap`. */
function wrapped(
  name: string,
  wrap: (f: CompiledFunction, inverse: boolean) => CompiledFunction,
  capabilities: Partial<BackendSpec['capabilities']> = {},
): BackendSpec {
  return {
    ...interpreterBackend,
    name,
    capabilities: { ...interpreterBackend.capabilities, ...capabilities },
    doCompile(program, inverses, options) {
      const inner = interpreterBackend.doCompile(program, inverses, options)
      return { get: (fn, inverse) => wrap(inner.get(fn, inverse), inverse) }
    },
  }
}

/** Forward results off by one in the first scalar result. */
const offByOne = wrapped('off_by_one', (f, inverse) => {
  if (inverse) return f
  const g = (...args: unknown[]) => {
    f(...args)
    if (f.results.length) f.results[0]! += 1
  }
  return Object.assign(g, { results: f.results })
})

/** Run-time errors with another message. */
const otherMessages = wrapped('other_messages', (f) =>
  Object.assign(
    (...args: unknown[]) => {
      try {
        f(...args)
      } catch (e) {
        if (TenetError.isInstance(e)) throw new TenetError((e as TenetError).code, 'something else went wrong')
        throw e
      }
    },
    { results: f.results },
  ),
)

const bySection = (checks: ConformanceCheck[], section: string) =>
  checks.filter((c) => c.section === section && !c.notApplicable)
const failing = (checks: ConformanceCheck[]) => checks.filter((c) => c.run().length > 0).map((c) => c.name)

describe('the conformance suite catches a backend that does not conform', () => {
  it('forward results off by one: round trips and the value column fail', () => {
    const checks = conformanceChecks(offByOne, { programs: 4 })
    const roundTrips = bySection(checks, 'round trips')
    expect(roundTrips.length).toBeGreaterThan(3)
    expect(failing(roundTrips)).toEqual(roundTrips.map((c) => c.name))
    const values = bySection(checks, 'primitives').filter((c) => / value /.test(c.name) && /\((f64|f32)\)/.test(c.name))
    expect(values.length).toBeGreaterThan(40)
    expect(failing(values)).toEqual(values.map((c) => c.name))
  })

  it('run-time errors with another message: every applicable error-parity check fails', () => {
    const errors = bySection(conformanceChecks(otherMessages, { sections: ['errors'] }), 'errors').filter((c) =>
      c.name.includes(':'),
    )
    expect(errors.length).toBeGreaterThanOrEqual(12)
    expect(failing(errors)).toEqual(errors.map((c) => c.name))
  })

  it('the interpreter against itself conforms', () => {
    const checks = conformanceChecks(interpreterBackend, { programs: 3, sections: ['round trips', 'errors'] })
    expect(failing(checks.filter((c) => !c.notApplicable))).toEqual([])
  })
})

describe('capabilities', () => {
  it('what a backend lacks is reported as not applicable, naming the capability', () => {
    const noStacks = wrapped('no_stacks', (f) => f, { stacks: false, recursion: false, f32: false })
    const checks = conformanceChecks(noStacks)
    const reasons = new Map(checks.filter((c) => c.notApplicable).map((c) => [c.name, c.notApplicable!]))
    expect(reasons.get('12 random i32 programs with stacks')).toBe('not applicable: capability `stacks` is false')
    expect(reasons.get('12 random f64 programs with recursion')).toBe('not applicable: capability `recursion` is false')
    expect(reasons.get('deallocStack: raised as interpreter raises it')).toBe(
      'not applicable: capability `stacks` is false',
    )
    expect(reasons.get('sin (f32) value (2 ulp)')).toBe('not applicable: capability `f32` is false')
    // without an AD engine the derivative parts say so
    expect(reasons.get('sin (f64) gradient (relative 1e-7)')).toBe(
      'not applicable here: no AD engine given (options.ad)',
    )
  })

  it('a backend that leaves a capability undeclared fails the first check', () => {
    const old: BackendSpec = {
      ...interpreterBackend,
      name: 'old',
      capabilities: { f64: true, recursion: true, exceptions: true },
    }
    const [first] = conformanceChecks(old)
    expect(first!.run()).toEqual([
      '`capabilities.synchronous` is not declared (true or false)',
      '`capabilities.f32` is not declared (true or false)',
      '`capabilities.stacks` is not declared (true or false)',
      '`capabilities.checks` is not declared (true or false)',
      '`capabilities.gradient` is not declared (true or false)',
      '`capabilities.hessian` is not declared (true or false)',
    ])
  })

  it('a backend without synchronous calls has every part not applicable', () => {
    const mapped = wrapped('mapped', (f) => f, { synchronous: false })
    const checks = conformanceChecks(mapped).slice(1)
    expect(checks.every((c) => c.notApplicable?.includes('capability `synchronous` is false'))).toBe(true)
  })
})
