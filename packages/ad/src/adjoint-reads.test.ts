/**
 * `adjointReads: 'new'`: a bijection's adjoint rule stated on its outputs runs before the values
 * are restored. Each rule below is written twice, on the old values (the inverse runs first) and
 * on the new ones; the two must give the same gradients and Hessian-vector products (to
 * rounding) on random programs, on every backend with checks on and off, and both must agree
 * with central differences. The stdlib's ROT and IROT use the new form.
 */
import { describe, expect, it } from 'vitest'
import { bijection, createRegistry, parse, printFunction, selfInverse, type BijectionSpec } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { checkGradient } from '@tenet/testing'
import { grad, hvp } from './index.js'
import { expectClose } from './test-util.js'

const rot = (a: number, b: number, t: number) => [Math.cos(t) * a - Math.sin(t) * b, Math.sin(t) * a + Math.cos(t) * b]
const irot = (a: number, b: number, t: number) => [Math.cos(t) * a + Math.sin(t) * b, Math.cos(t) * b - Math.sin(t) * a]
const reflect = (a: number, b: number, t: number) => [
  Math.cos(2 * t) * a + Math.sin(2 * t) * b,
  Math.sin(2 * t) * a - Math.cos(2 * t) * b,
]

/** ROTB, IROTB and REFLB (copies of ROT, IROT and a reflection), their adjoints on the old or the new values. */
function rules(reads: 'old' | 'new'): BijectionSpec[] {
  const io = { params: ['a', 'b', 't'], roles: ['inout', 'inout', 'in'] as Array<'inout' | 'in'> }
  const onNew = reads === 'new' ? { adjointReads: 'new' as const } : {}
  return [
    bijection({
      ...io,
      name: 'ROTB',
      apply: rot,
      inverse: 'IROTB',
      adjoint:
        reads === 'new'
          ? 'g_t += g_b * a - g_a * b\nIROTB(g_a, g_b, t)'
          : 'g_t += g_b * (cos(t) * a - sin(t) * b) - g_a * (sin(t) * a + cos(t) * b)\nIROTB(g_a, g_b, t)',
      ...onNew,
      tangent: 'ROTB(t_a, t_b, t)\nt_a -= b * t_t\nt_b += a * t_t',
    }),
    bijection({
      ...io,
      name: 'IROTB',
      apply: irot,
      inverse: 'ROTB',
      adjoint:
        reads === 'new'
          ? 'g_t += g_a * b - g_b * a\nROTB(g_a, g_b, t)'
          : 'g_t += g_a * (cos(t) * b - sin(t) * a) - g_b * (cos(t) * a + sin(t) * b)\nROTB(g_a, g_b, t)',
      ...onNew,
      tangent: 'IROTB(t_a, t_b, t)\nt_a += b * t_t\nt_b -= a * t_t',
    }),
    selfInverse({
      ...io,
      name: 'REFLB',
      apply: reflect,
      adjoint:
        reads === 'new'
          ? 'g_t += 2.0 * (g_b * a - g_a * b)\nREFLB(g_a, g_b, t)'
          : 'g_t += 2.0 * (g_a * (cos(2.0 * t) * b - sin(2.0 * t) * a) + g_b * (cos(2.0 * t) * a + sin(2.0 * t) * b))\nREFLB(g_a, g_b, t)',
      ...onNew,
      tangent: 'REFLB(t_a, t_b, t)\nt_a -= 2.0 * b * t_t\nt_b += 2.0 * a * t_t',
    }),
  ]
}

function registryWith(reads: 'old' | 'new') {
  let r = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)
  for (const spec of rules(reads)) r = r.registerPrimitive(spec)
  return r
}
const registries = { old: registryWith('old'), new: registryWith('new') }

/** Deterministic uniform numbers in [0, 1). */
function stream(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 4294967296
  }
}

/**
 * A random program over x (n values) and th (angles): rotations and reflections of element
 * pairs (the user copies, the stdlib's ROT and IROT, and inverse calls), some in a loop, with
 * nonlinear updates between them, and the loss Σ (i + 1)·x[i]².
 */
function randomProgram(seed: number, n: number, angles: number): string {
  const rnd = stream(seed)
  const pick = (k: number) => Math.floor(rnd() * k)
  const lines: string[] = []
  for (let s = 0; s < 10; s++) {
    const i = pick(n)
    let j = pick(n - 1)
    if (j >= i) j++
    const k = pick(angles)
    const op = ['ROTB', 'IROTB', 'REFLB', '~ROTB', 'ROT', 'IROT', '~IROTB'][pick(7)]!
    const kind = rnd()
    if (kind < 0.15) lines.push(`x[${i}] += sin(x[${j}]) * th[${k}]`)
    else if (kind < 0.3) lines.push(`for q in 0..${n - 1} { ${op}(x[q], x[q + 1], th[${k}]) }`)
    else lines.push(`${op}(x[${i}], x[${j}], th[${k}])`)
  }
  return `fn f(l: f64, x: f64[], th: f64[]) {
  ${lines.join('\n  ')}
  for i in 0..len(x) { l += f64(i + 1) * x[i] * x[i] }
}`
}

describe("bijection adjoint rules on the new values (adjointReads: 'new')", () => {
  it('the rule runs before the values are restored (printed adjoint), after them by default', () => {
    const text = 'fn f(y: f64, a: f64, b: f64, t: f64) { ROTB(a, b, t)\n y += a * b }'
    const order = (reads: 'old' | 'new') => {
      const m = compileModule(parse({ text, name: 'test' }), { registry: registries[reads], backend: 'interpreter' })
      const printed = printFunction(grad(m.f!, { loss: 0, mode: 'reverse', fuse: false }).adjoint.ir)
      const rule = printed.indexOf('$adj$ROTB')
      const restore = printed.search(/~ROTB\(a, b, t\)|IROTB\(a, b, t\)/)
      expect(rule, printed).toBeGreaterThan(0)
      expect(restore, printed).toBeGreaterThan(0)
      return rule < restore ? 'rule first' : 'restore first'
    }
    expect(order('new')).toBe('rule first')
    expect(order('old')).toBe('restore first')
  })

  it('rejects a value other than old or new', () => {
    expect(() =>
      bijection({
        name: 'BAD',
        params: ['a', 't'],
        roles: ['inout', 'in'],
        apply: (a, t) => [a + t],
        inverse: 'self',
        adjointReads: 'outputs' as 'new',
      }),
    ).toThrow(/adjointReads/)
  })

  const n = 5,
    angles = 4
  for (const backend of ['cpu', 'interpreter', 'wasm'] as const) {
    for (const checks of [true, false]) {
      it(`random programs: the same gradients and Hessian-vector products either way, and central differences (${backend}, checks ${checks ? 'on' : 'off'})`, () => {
        // compiling the gradient and Hessian programs dominates: fewer programs where it is dearer
        for (let seed = 1; seed <= (backend === 'interpreter' ? 6 : 2); seed++) {
          const text = randomProgram(seed * 7919 + (checks ? 1 : 0), n, angles)
          const rnd = stream(seed)
          const x = Float64Array.from({ length: n }, () => rnd() * 2 - 1)
          const th = Float64Array.from({ length: angles }, () => rnd() * 4 - 2)
          const v = [
            0,
            Float64Array.from({ length: n }, () => rnd() - 0.5),
            Float64Array.from({ length: angles }, () => rnd() - 0.5),
          ]
          const results = (['old', 'new'] as const).map((reads) => {
            const m = compileModule(parse({ text, name: 'test' }), { registry: registries[reads], backend, checks })
            const g = grad(m.f!, { loss: 0 })(0, x.slice(), th.slice())
            const h = hvp(m.f!, [0, x.slice(), th.slice()], { loss: 0, v })
            return { g, h, m }
          })
          const [before, after] = results as [(typeof results)[0], (typeof results)[0]]
          for (const i of [1, 2]) {
            expectClose(after.g[i] as Float64Array, before.g[i] as Float64Array, 1e-12, `${text}\ngradient ${i}`)
            expectClose(after.h[i] as Float64Array, before.h[i] as Float64Array, 1e-11, `${text}\nhvp ${i}`)
          }
          // an independent reference: central differences of the loss the program computes
          const f = after.m.f!
          const loss = (p: ArrayLike<number>) => {
            f.core(0, Float64Array.from(Array.from(p).slice(0, n)), Float64Array.from(Array.from(p).slice(n)))
            return f.core.results[0]!
          }
          const analytic = [...(after.g[1] as Float64Array), ...(after.g[2] as Float64Array)]
          const fd = checkGradient(loss, analytic, [...x, ...th])
          expect(fd.ok, `${text}\n${JSON.stringify(fd)}`).toBe(true)
        }
      })
    }
  }
})
