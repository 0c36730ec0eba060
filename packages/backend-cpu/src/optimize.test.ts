/**
 * What the optimisation passes and the code generator's own sharing do to generated code, and
 * that the results stay those of the reference interpreter (bit for bit), checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

function code(m: Record<string, unknown>, name: string, inverse = false): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, inverse)
}
const compile = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'optimize' }), { registry, backend, checks })

// the leapfrog's accelerations (paper 000 Appendix F): a 3-element array ancilla per pair
const accel = `
fn accel(a: f64[], x: f64[], m: f64[], nb: i32, g: f64) {
  for i in 0..nb {
    for j in 0..nb {
      if (i != j, ~) {
        routine {
          dx: f64[] <- zeros(3)
          for c in 0..3 { dx[c] += x[3 * j + c] - x[3 * i + c] }
          r2 <- 0.0
          r2 += dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
          s <- 0.0
          s += g * m[j] / (r2 * sqrt(r2))
        }
        for c in 0..3 { a[3 * i + c] += s * dx[c] }
        ~routine
      }
    }
  }
}
fn steps(x: f64[], v: f64[], m: f64[], nb: i32, g: f64, dt: f64, n: i32) {
  for t in 0..n {
    for i in 0..3 * nb { x[i] += v[i] * dt }
    routine {
      a: f64[] <- zeros(3 * nb)
      accel(a, x, m, nb, g)
    }
    for i in 0..3 * nb { v[i] += a[i] * dt }
    ~routine
  }
}
fn rotate(x: f64[], theta: f64[]) {
  for k in 0..len(theta) { ROT(x[2 * k], x[2 * k + 1], theta[k]) }
}
fn fact(out: i32, n: i32) {
  if (n > 1, ~) {
    w: i32[] <- zeros(n)
    w[0] += n
    out += w[0]
    fact(out, n - 1)
    w[0] -= n
    w -> zeros(n)
  }
  out += 1
}`

const bodies = () => {
  const x = Float64Array.from({ length: 12 }, (_, i) => Math.sin(3 * i + 1) * 2)
  const v = Float64Array.from({ length: 12 }, (_, i) => Math.cos(i) * 0.1)
  const m = Float64Array.from([1, 0.5, 0.25, 2])
  return { x, v, m }
}

describe('optimised cpu code', () => {
  it('without checks: no array per pair, no uncompute, the step array pooled, ROT computes cos and sin once', () => {
    const m = compile(accel, 'cpu', false)
    const a = code(m, 'accel')
    expect(a).not.toContain('new Float64Array')
    expect(a.match(/Math\.sqrt/g)).toHaveLength(1)
    const s = code(m, 'steps')
    expect(s).toMatch(/\$zeroFloat64Array\(PL\d+\)/)
    // the uncompute of the accelerations (the inverse call) is gone
    expect(s).not.toMatch(/\bB\d+\(/)
    const r = code(m, 'rotate')
    expect(r.match(/Math\.cos/g)).toHaveLength(1)
    expect(r.match(/Math\.sin/g)).toHaveLength(1)
    // a recursive function allocates afresh (an inner call would share the pool)
    expect(code(m, 'fact')).toContain('new Int32Array')
  })

  it('with checks: the uncompute stays (the deallocation checks read it), a small array becomes scalars checked as the array', () => {
    const m = compile(accel, 'cpu', true)
    const a = code(m, 'accel')
    expect(a).not.toMatch(/PL\d+\.fill\(0\)|Float64Array/)
    // the uncompute: s, r2 and dx's three scalars back to zero (each \`y -= y\`, the bits of \`y -= e\`:
    // see pass \`finite-uncompute\`), then the array's one check over the three
    expect(a.match(/(v\d+) = \(\1 - \1\);/g)!.length).toBe(2 + 3)
    // (each a comparison with zero: after \`y -= y\`, y is +0 or NaN) — the array's check is left
    // out: r2 = dx₀² + dx₁² + dx₂², checked before it, is finite only where every element is
    // (pass \`implied-checks\`); with that pass off, it is there, over the three elements
    expect(a.match(/if \(!\(v\d+ === 0\)\) rt\.fail/g)).toHaveLength(2)
    expect(a).not.toMatch(/&& \(v\d+ === 0\)/)
    disabledPasses.add('implied-checks')
    try {
      expect(code(compile(accel, 'cpu', true), 'accel')).toMatch(
        /if \(!\(\(\(v(\d+) === 0\) && \(v(\d+) === 0\)\) && \(v(\d+) === 0\)\)\) rt\.fail/,
      )
    } finally {
      disabledPasses.delete('implied-checks')
    }
    // the accelerations' array, passed to `accel`, stays an array with its check
    expect(code(m, 'steps')).toMatch(/\$allNearZ?\(v\d+, Math\.imul\(3, p3\)\)/)
  })

  it('gives the interpreter’s results bit for bit, checks on and off, forwards and backwards', () => {
    const run = (backend: string, checks: boolean) => {
      const mm = compile(accel, backend, checks) as Record<string, (...a: unknown[]) => unknown[]> &
        Record<string, { inverse: (...a: unknown[]) => unknown[] }>
      const { x, v, m } = bodies()
      const out: number[][] = []
      // (with checks, the accelerations' uncompute leaves round-off that the exact array check
      // rejects, as it should: that part runs without checks only)
      if (!checks) {
        // twice: the second call reuses the pooled array (and a different length reallocates it)
        mm.steps!(x, v, m, 4, 1.5, 0.01, 5)
        out.push(Array.from(x), Array.from(v))
        mm.steps!(x, v, m, 3, 1.5, 0.01, 3)
        out.push(Array.from(x), Array.from(v))
        mm.steps!.inverse(x, v, m, 4, 1.5, 0.01, 2)
        out.push(Array.from(x), Array.from(v))
      }
      const theta = Float64Array.from([0.3, -1.2, 2.5, 0.01, 4, -0.7])
      mm.rotate!(x, theta)
      out.push(Array.from(x))
      out.push([mm.fact!(0, 5)[0] as number])
      return out
    }
    expect(run('cpu', false)).toEqual(run('interpreter', false))
    expect(run('cpu', true)).toEqual(run('interpreter', true))
  })

  it('with checks: drops the bounds check of a[i] in `for i in k..len(a)` over a parameter array, only there', () => {
    const text = `fn f(s: f64, a: f64[], b: f64[]) {
  for i in 1..len(a) { s += a[i] * a[i - 1] + b[i] }
}`
    const m = compile(text, 'cpu', true)
    const f = code(m, 'f')
    // a[i] unchecked; a[i − 1] proven in range too (pass proven-bounds: i − 1 runs over
    // 0..len(a) − 2); b[i] (another array) checked at the two ends of the range, before the loop
    // (hoist-bounds), which runs without checks where they hold, and with a check of b[i] where
    // one does not (\`} else {\`); no loop-range check (the body writes nothing the range reads)
    expect(f).toMatch(/p1\[i\d+\] \*/)
    const [fast, asWritten] = f.split('\n  } else {\n') as [string, string]
    expect(fast).toMatch(/const (c\d+) = \(\(!\(1 < p1\.length\)\) \|\| .*\n\s*if \(\1\) \{/)
    expect(fast.slice(fast.indexOf('for ('))).not.toMatch(/rt\.fail\(/)
    expect(asWritten.match(/rt\.fail\(/g)).toHaveLength(1)
    const a = Float64Array.from([1, 2, 3, 4]),
      b = Float64Array.from([0.5, 0.25, 0.125])
    expect(() => (m.f as (...x: unknown[]) => unknown)(0, a, b)).toThrow(/out of bounds/)
    const ok = Float64Array.from([0.5, 0.25, 0.125, 1])
    const run = (backend: string) => (compile(text, backend, true).f as (...x: unknown[]) => unknown[])(0, a, ok)[0]
    expect(run('cpu')).toBe(run('interpreter'))
  })
})
