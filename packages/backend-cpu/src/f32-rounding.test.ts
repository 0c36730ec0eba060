/**
 * The roundings of f32 code the generator leaves out where the value is already a float32
 * (`representable` and `firstUpdatesOfZeros` of `codegen.ts`): the first update of a fresh scalar
 * ancilla, `r <- 0.0; r += e`, is written `r = (0 + e)` (e rounded once, by its own operation),
 * and a literal allocation is not rounded again; the update that undoes it with the same shared
 * value V (the `~routine` with checks on) is written `V - V`, and the deallocation check that
 * follows compares it with zero. Bit for bit with the interpreter
 * (the reference, which rounds every write), checks on and off, −0, a parameter passed unrounded
 * and the failing deallocations of a value that is not finite or changed in between included.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** The routine idiom of paper 000's leapfrog (ancillas computed from zero, used, uncomputed), in f32. */
const pairSource = `
fn pair(a: f32[], x: f32[], m: f32[], g: f32) {
  routine {
    d: f32 <- 0.0
    d += x[1] - x[0]
    r2: f32 <- 0.0
    r2 += d * d
    r: f32 <- 0.0
    r += sqrt(r2)
    s: f32 <- 0.0
    s += g * m[1] / (r2 * r)
    t: f32 <- 0.0
    t -= s
    h: f32 <- 0.0
    h += g
  }
  a[0] += s * d
  a[1] += t * d
  a[2] += h
  ~routine
}
fn inf(y: f32[], x: f32[]) {
  routine {
    s: f32 <- 0.0
    s += 1.0 / x[0]
  }
  y[0] += s
  ~routine
}
fn changed(y: f32[], x: f32[]) {
  s: f32 <- 0.0
  s += x[0] * x[1]
  x[0] += 1.0
  s -= x[0] * x[1]
  s -> 0.0
}
fn negzero(y: f32[], x: f32[]) {
  z: f32 <- 0.0
  z += x[0] * x[1]
  y[0] += 1.0 / z
  z -= x[0] * x[1]
  z -> 0.0
}`

function build(backend: 'cpu' | 'interpreter', checks: boolean) {
  return compileModule(parse({ text: pairSource, name: 'f32-rounding' }), { registry, backend, checks })
}

function code(name: string, checks: boolean): string {
  const m = build('cpu', checks)
  const info = (m[name] as unknown as Record<symbol, { compiled: { sourceOf(n: string, inv: boolean): string } }>)[
    Symbol.for('tenet.function')
  ]!
  return info.compiled.sourceOf(name, false)
}

describe('f32 roundings the cpu generator leaves out', () => {
  it('writes the first update of a fresh ancilla as zero plus the rounded value, a parameter still rounded', () => {
    for (const checks of [false, true]) {
      const js = code('pair', checks)
      // no rounding around the sum with zero of a rounded value
      expect(js).not.toMatch(/Math\.fround\(\(0 [+-] (?!p\d)/)
      // (with checks the uncompute's updates stay, rounded: `t -= s` undone is `t += s`)
      if (!checks) expect(js).not.toMatch(/Math\.fround\(\(v\d+ [+-] /)
      expect(js).toMatch(/= \(0 \+ (Math\.fround\(|c\d+\))/)
      expect(js).toMatch(/= \(0 - c\d+\)|= \(0 - v\d+\)/)
      // a literal allocation is written as the literal
      expect(js).not.toMatch(/Math\.fround\(0\)/)
      // h += g: g is a parameter (`core` takes it as passed), so the sum is rounded
      expect(js).toMatch(/Math\.fround\(\(0 \+ p3\)\)/)
    }
  })

  it('computes what the interpreter computes, bit for bit, checks on and off', () => {
    const g = 2.9591220828559093e-4 // not a float32: the public call rounds it, `core` does not
    for (const checks of [false, true]) {
      const cpu = build('cpu', checks),
        ref = build('interpreter', checks)
      const x = Float32Array.of(0.25, 1.75),
        m = Float32Array.of(1, 3e-6)
      const a = new Float32Array(3),
        ar = new Float32Array(3)
      cpu.pair!(a, x, m, g)
      ref.pair!(ar, x, m, g)
      expect(Array.from(a)).toEqual(Array.from(ar))
      // the inverse undoes it (the ancillas' checks pass with checks on)
      cpu.pair!.inverse(a, x, m, g)
      expect(Array.from(a)).toEqual([0, 0, 0])
      // core, with g as passed: the parameter is rounded where the program adds it
      const c = new Float32Array(3)
      cpu.pair!.core(c, x, m, g)
      expect(c[2]).toBe(Math.fround(g))
    }
  })

  it('keeps +0 for a first update by −0 (1 / z is +Infinity, as in the interpreter)', () => {
    for (const checks of [false, true]) {
      const y = new Float32Array(1),
        yr = new Float32Array(1)
      build('cpu', checks).negzero!(y, Float32Array.of(-0, 1))
      build('interpreter', checks).negzero!(yr, Float32Array.of(-0, 1))
      expect(y[0]).toBe(Number.POSITIVE_INFINITY)
      expect(y[0]).toBe(yr[0])
    }
  })
})

describe('the undoing update of a first update (cpu backend, checks on)', () => {
  it('is written V - V with the shared value, and the deallocation check still fails where V is not finite', () => {
    const js = code('pair', true)
    // (\`V - V\` of the shared value, or \`y - y\` where pass \`finite-uncompute\` wrote the update so)
    expect(js).toMatch(/v\d+ = \(([cv]\d+) - \1\);/)
    expect(code('inf', true)).toMatch(/v\d+ = \(([cv]\d+) - \1\);/)
    // its deallocation check compares with zero (the ancilla is +0, or NaN where V is not finite)
    expect(js).toMatch(/if \(!\(v\d+ === 0\)\) rt\.fail/)
    expect(code('inf', true)).toMatch(/if \(!\(v\d+ === 0\)\) rt\.fail/)
    for (const x of [Float32Array.of(0), Float32Array.of(Number.NaN)]) {
      const run = (backend: 'cpu' | 'interpreter') => {
        try {
          build(backend, true).inf!(new Float32Array(1), x)
          return 'no error'
        } catch (e) {
          return (e as Error).message
        }
      }
      const message = run('cpu')
      expect(message).toMatch(/deallocat|routine/i)
      expect(message).toBe(run('interpreter'))
    }
  })

  it('is not taken for a value whose operands changed in between: the check fails as in the interpreter', () => {
    expect(code('changed', true)).not.toMatch(/v\d+ = \(([cv]\d+) - \1\);/)
    // (the tolerant comparison: through \`$near\`, or written inline)
    expect(code('changed', true)).toMatch(/\$near\(v\d+, 0\)|v(\d+) === 0 \|\| Math\.abs\(v\1\) <= \$tol/)
    const run = (backend: 'cpu' | 'interpreter') => {
      try {
        build(backend, true).changed!(new Float32Array(1), Float32Array.of(2, 3))
        return 'no error'
      } catch (e) {
        return (e as Error).message
      }
    }
    const message = run('cpu')
    expect(message).not.toBe('no error')
    expect(message).toBe(run('interpreter'))
  })
})
