/**
 * The fused gradient programs (one-pass, adjoint-only, routine-fused) with arguments held
 * constant (`GradOptions.constants`): no gradient parameter, nothing zeroed, accumulated or
 * propagated for them. Checked against the two-sweep program with the same constants, the
 * gradient without constants and central differences, on fixed and random programs, with
 * run-time checks on and off; the printed IR; the programs that still refuse constants.
 */
import { describe, expect, it } from 'vitest'
import { printFunction, TenetError } from '@tenet/ir'
import { finiteDifferenceOfCall, randomRealArgs, randomRealProgram } from '@tenet/testing'
import { AdjointBuilder } from './transform.js'
import { registryPartials } from './expr.js'
import { compileFused, grad } from './index.js'
import { infoOf } from './compile.js'
import { besselSource } from './examples/papers.js'
import { randomExpressions, tag, testRegistry } from './test-util.js'
import { wasmBackend } from '@tenet/backend-wasm'
import type { TenetFunction } from '@tenet/reversible'

const source = `
fn sq(out: f64, a: f64, d: f64) { out += (a - d) * (a - d) }
fn dot(s: f64, x: f64[], d: f64[], w: f64) {
  for i in 0..len(x) { s += x[i] * d[i] * w + sin(d[i]) * x[i] }
}
fn mlp_like(s: f64, x: f64[], inp: f64[], tgt: f64[]) {
  for k in 0..len(tgt) {
    routine {
      z <- 0.0
      a <- 0.0
      z += x[0] * inp[k] + x[1]
      a += tanh(z)
    }
    s += 0.5 * ((a * x[2] - tgt[k]) * (a * x[2] - tgt[k]))
    ~routine
  }
}
fn with_call(s: f64, x: f64[], d: f64[]) {
  for i in 0..len(x) {
    routine { t <- 0.0; sq(t, x[i], d[i]) }
    s += sin(t)
    ~routine
  }
}
fn norm_rot(out: f64, y: f64, x: f64[], th: f64, d: f64[]) {
  t <- 0.0
  u <- 0.0
  routine {
    for i in 0..len(x) { t += x[i] * d[i] }
    u += x[0]
    ROT(t, u, th)
  }
  out += t * t + u
  y += t * 0.5
  ~routine
  u -> 0.0
  t -> 0.0
}`

const x3 = () => Float64Array.from([0.3, -1.2, 0.8])
const cases: Array<{ name: string; program: string; constants: number[]; args: () => unknown[] }> = [
  {
    name: 'dot',
    program: 'one-pass',
    constants: [2],
    args: () => [0.5, x3(), Float64Array.from([1.1, 0.4, -0.7]), 1.5],
  },
  {
    name: 'dot',
    program: 'one-pass',
    constants: [2, 3],
    args: () => [0.5, x3(), Float64Array.from([1.1, 0.4, -0.7]), 1.5],
  },
  {
    name: 'mlp_like',
    program: 'adjoint-only',
    constants: [2, 3],
    args: () => [0.25, x3(), Float64Array.from([0.5, -1, 2, 0.1]), Float64Array.from([0.2, 0.4, -0.3, 0.9])],
  },
  {
    name: 'with_call',
    program: 'adjoint-only',
    constants: [2],
    args: () => [0, x3(), Float64Array.from([1, 0.25, -0.5])],
  },
  {
    name: 'norm_rot',
    program: 'routine-fused',
    constants: [3, 4],
    args: () => [0.1, 0.2, x3(), 0.7, Float64Array.from([1, 0.25, -0.5])],
  },
]

const flat = (r: readonly unknown[]) =>
  r.flatMap((v) =>
    typeof v === 'number' ? [v] : ArrayBuffer.isView(v) || Array.isArray(v) ? Array.from(v as ArrayLike<number>) : [],
  )

/**
 * The gradient of `f` with `constants` by the program the plan chose, against the two-sweep one
 * with the same constants, the gradient without constants (the other entries) and central
 * differences (at `fdTol`, relative to max(1, |fd|); skipped where `fdTol` is undefined).
 */
function compare(f: TenetFunction, args: unknown[], constants: number[], program: string, fdTol?: number) {
  const g = grad(f, { loss: 0, constants })
  expect(g.plan.program, printFunction(f.ir)).toBe(program)
  const two = grad(f, { loss: 0, constants, fuse: false, uncompute: 'off' })
  expect(two.plan.program).toBe('two-sweep')
  const all = grad(f, { loss: 0, uncompute: 'off' })
  const before = flat(args)
  const b = two(...args)
  const a = g(...args)
  const c = all(...args)
  // the caller's arguments are untouched
  expect(flat(args)).toEqual(before)
  for (const i of constants) {
    expect(a[i]).toBeNull()
    expect(b[i]).toBeNull()
  }
  const keep = (r: readonly unknown[]) => r.map((v, i) => (constants.includes(i) ? null : v))
  const fa = flat(a),
    fb = flat(b),
    fc = flat(keep(c))
  if (!fb.every(Number.isFinite)) return false
  expect(fa.length).toBe(fb.length)
  for (let i = 0; i < fa.length; i++) {
    const tol = 1e-9 * Math.max(1, Math.abs(fb[i]!))
    expect(Math.abs(fa[i]! - fb[i]!), `#${i}`).toBeLessThanOrEqual(tol)
    expect(Math.abs(fa[i]! - fc[i]!), `#${i}`).toBeLessThanOrEqual(tol)
  }
  expect(Math.abs(g.lastLoss - two.lastLoss)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(two.lastLoss)))
  // a second call gives the same (the zeroing of reused gradients)
  expect(flat(g(...args))).toEqual(fa)
  if (fdTol === undefined) return true
  // (and the integer arguments)
  const skip = [
    ...constants,
    ...f.ir.params.flatMap((p, i) => (p.type.kind === 'scalar' && !p.type.name.startsWith('f') ? [i] : [])),
  ]
  const fd = flat(finiteDifferenceOfCall(f.core, args, { loss: 0, skip }).map((v, i) => (skip.includes(i) ? null : v)))
  return fa.every((v, i) => Math.abs(v - fd[i]!) <= fdTol * Math.max(1, Math.abs(fd[i]!)))
}

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['interpreter', true],
  ['wasm', true],
  ['wasm', false],
] as const)('fused gradient programs with arguments held constant (%s, checks %s)', (backend, checks) => {
  const m = tag({ backend, checks, registry: testRegistry().registerBackend(wasmBackend) })(source)

  it.each(cases.map((c) => [`${c.name} [${c.constants}]`, c] as const))(
    '%s: the planned program agrees with the two sweeps, the full gradient and central differences',
    (_, c) => {
      expect(compare(m[c.name]!, c.args(), c.constants, c.program, 1e-6)).toBe(true)
    },
  )

  it('the constants are checked as for the two-sweep program', () => {
    expect(() => compileFused(m.norm_rot!, 0, [1])).toThrow(/written by `norm_rot`, so it cannot be held constant/)
    expect(() => compileFused(m.dot!, 0, [7])).toThrow(TenetError)
  })
})

describe('fused gradient programs with constants, as IR', () => {
  const m = tag({ checks: true })(source)
  const builder = () => {
    const info = infoOf(m.dot!)
    const registry = info.registry.clone()
    return new AdjointBuilder(info.program, info.inverses, registry, registryPartials(registry, info.program.hosts))
  }

  it('one-pass and adjoint-only: the program without constants less every mention of their gradients (printed)', () => {
    for (const [name, kind, held] of [
      ['dot', 'onePass', ['d', 'w']],
      ['mlp_like', 'adjointOnly', ['inp', 'tgt']],
    ] as const) {
      const plain = printFunction(builder()[kind](name, 's')!)
      const constant = printFunction(builder()[kind](name, 's', new Set(held))!)
      const mentions = new RegExp(`\\bg_(${held.join('|')})\\b`)
      expect(plain).toMatch(mentions)
      expect(constant).not.toMatch(mentions)
      // the same statements once the lines that touch their gradients are gone (and the name)
      const strip = (text: string) =>
        text
          .split('\n')
          .slice(1)
          .filter((l) => !mentions.test(l))
          .join('\n')
      expect(strip(constant)).toBe(strip(plain))
      expect(constant.split('\n')[0]).toMatch(
        new RegExp(`^fn ${name}\\$adj\\$const\\$${kind === 'onePass' ? 'onepass' : 'adjonly'}\\(`),
      )
    }
  })

  it('routine-fused: the gradient ancillas and updates are there for the others only (printed)', () => {
    const ir = printFunction(builder().fused('norm_rot', 'out', new Set(['th', 'd']))!)
    expect(ir.split('\n')[0]).toBe(
      'fn norm_rot$adj$const$fused(out: f64, y: f64, x: f64[], th: f64, d: f64[], g_out: f64, g_y: f64, g_x: f64[], g$sink: f64, $loss: f64) {',
    )
    expect(ir).not.toMatch(/\bg_(th|d)\b/)
    expect(ir).toMatch(/g_x\[i\] \+= /)
    // ROT's angle gets a scratch gradient, dropped into the sink
    expect(ir).toMatch(/\$adj\$ROT/)
  })
})

/** A random program `f(w0, w1, w2, p, n, x)` wrapped so that it writes only the loss L (adjoint-only) or also `o` (routine-fused). */
function wrapped(f: string, fused: boolean): string {
  return `${f}
fn wrapper(L: f64${fused ? ', o: f64' : ''}, w0: f64, w1: f64, w2: f64, p: f64, n: i32, x: f64[]) {
  ${fused ? '' : 'for k in 0..2 {'}
    routine {
      a0 <- 0.0
      a1 <- 0.0
      a2 <- 0.0
      ap <- 0.0
      an: i32 <- 0
      ax: f64[] <- zeros(len(x))
      a0 += w0
      a1 += w1
      a2 += w2
      ap += p
      an += n
      for i in 0..len(x) { ax[i] += x[i] }
      f(a0, a1, a2, ap, an, ax)
    }
    L += a0 * 0.75 + a1 * a2 - sin(ax[0]) * ap + p * x[1]
    L -= ax[1] * ax[2] * 0.5
    ${fused ? 'o += a1 * x[0]' : ''}
    ~routine
  ${fused ? '' : '}'}
}`
}

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['interpreter', true],
] as const)('fused gradient programs with constants on random programs (%s, checks %s)', (backend, checks) => {
  const rev = tag({ backend, checks })
  const first = backend === 'interpreter' ? 900 : checks ? 800 : 850

  it.each([
    ['adjoint-only', false],
    ['routine-fused', true],
  ] as const)(
    '%s: the two-sweep gradient with the same constants, the full gradient and central differences',
    (program, fused) => {
      let compared = 0
      const n = 6
      for (let t = 0; t < n; t++) {
        const p = randomRealProgram(first + t, {
          differentiable: true,
          functions: ['sin', 'cos', 'tanh', 'atan'],
          maxStatements: 8,
          stacks: false,
        })
        const m = rev(wrapped(p.source, fused))
        const args = [0.5, ...(fused ? [0.25] : []), ...randomRealArgs(p, first + t)]
        // p and x held constant (and w1)
        const off = fused ? 1 : 0
        const constants = [2 + off, 4 + off, 6 + off]
        try {
          if (compare(m.wrapper!, args, constants, program, 1e-4)) compared++
        } catch (e) {
          // a non-finite value that a deallocation check reports
          if (!(TenetError.isInstance(e) && /\b(NaN|-?Infinity)\b/.test((e as Error).message))) throw e
        }
      }
      // most are smooth at random arguments (a branch point or an unstable uncompute is not)
      expect(compared).toBeGreaterThanOrEqual(n - 2)
    },
  )

  it('one-pass: random losses of values the function only reads', () => {
    const { rnd, expr } = randomExpressions(first)
    let compared = 0
    for (let t = 0; t < 8; t++) {
      const m = rev(`fn f(L: f64, w: f64, p: f64, x: f64[]) {
        L += ${expr(['w', 'p', 'x[0]', 'x[1]'], 3)}
        L -= ${expr(['w', 'x[1]', 'p'], 2)}
      }`)
      const args = [rnd(), rnd() - 0.5, rnd() - 0.5, Float64Array.from([rnd(), rnd() - 0.5])]
      for (const constants of [[2], [3], [2, 3]]) if (compare(m.f!, args, constants, 'one-pass', 1e-5)) compared++
    }
    expect(compared).toBeGreaterThanOrEqual(20)
  })
})

describe('programs that still refuse constants say why', () => {
  it('forward mode', () => {
    const m = tag()`fn f(y: f64, u: f64, c: f64) { y += sin(u) * c }`
    const g = grad(m.f!, { loss: 0, constants: [2] })
    expect(g.plan.considered[0]).toEqual({
      program: 'forward',
      applies: false,
      why: 'arguments are held constant (`constants`): the forward-mode program has no variant without their gradients',
    })
    expect(g.plan.program).toBe('one-pass')
    expect(g(0, 0.3, 2)).toEqual([1, 2 * Math.cos(0.3), null])
  })

  it('map-forward (without checks)', () => {
    const m = tag({ checks: false })(`${besselSource}
fn batch(out: f64[], nu: i32, z: f64[]) { for i in 0..len(z) { ibesselj(out[i], nu, z[i]) } }
fn total(loss: f64, out: f64[], nu: i32, z: f64[], c: f64[]) {
  batch(out, nu, z)
  for i in 0..len(out) { loss += identity(out[i] * c[i]) }
}`)
    expect(grad(m.total!, { loss: 0 }).plan.program).toBe('map-forward')
    const g = grad(m.total!, { loss: 0, constants: [4] })
    expect(g.plan.program).toBe('two-sweep')
    expect(g.plan.toString()).toMatch(
      /✗ map-forward: arguments are held constant .*the map-forward program has no variant/,
    )
    const z = Float64Array.from([0.5, 1.5]),
      c = Float64Array.from([2, -1])
    const all = grad(m.total!, { loss: 0, fuse: false })(0, new Float64Array(2), 2, z, c)
    const r = g(0, new Float64Array(2), 2, z, c)
    expect(r[4]).toBeNull()
    for (let i = 0; i < 2; i++) expect((r[3] as Float64Array)[i]).toBeCloseTo((all[3] as Float64Array)[i]!, 12)
  })

  it('a stack parameter', () => {
    const m = tag()`fn f(out: f64, x: f64, c: f64, st: stack<f64>) { out += x * c; push(st, x) }`
    const g = grad(m.f!, { loss: 0, mode: 'reverse', constants: [2] })
    expect(g.plan.program).toBe('two-sweep')
    expect(g.plan.toString()).toMatch(/stack parameter/)
  })
})
