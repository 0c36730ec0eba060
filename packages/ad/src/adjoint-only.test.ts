/**
 * The adjoint-only gradient program (`FunctionAdjoint.buildAdjointOnly`): for a loss that f only
 * accumulates when f writes no other argument, the adjoint alone, started at the inputs, with the
 * loss's restores turned around. Checked against the two sweeps (`fuse: false`) and central
 * differences, on fixed programs and on random programs wrapped so that they write only the loss.
 */
import { describe, expect, it } from 'vitest'
import { printFunction, TenetError } from '@tenet/ir'
import { finiteDifferenceOfCall, randomRealArgs, randomRealProgram } from '@tenet/testing'
import { AdjointBuilder } from './transform.js'
import { registryPartials } from './expr.js'
import { compileFused, grad } from './index.js'
import { infoOf } from './compile.js'
import { tag } from './test-util.js'

const source = `
fn rotate_like(s: f64, x: f64[], n: i32) {
  for k in 0..n {
    routine {
      a <- 0.0
      b <- 0.0
      a += x[3*k] * x[3*k+1] + 1.5
      b += sin(x[3*k+2]) * a
    }
    s += 0.5 * (a * x[3*k+2] + b * b)
    s -= a * 0.25
    ~routine
  }
}
fn writes_other(s: f64, x: f64[]) { x[0] += 1.0; s += x[0] * x[1] }
fn reads_loss(s: f64, x: f64[]) { s += x[0]; x[1] += s }
fn with_if(s: f64, x: f64[]) {
  for i in 0..len(x) {
    t <- 0.0
    t += x[i] * x[i]
    if (x[i] > 0.0, ~) { s += t * x[i] } else { s -= cos(t) }
    t -= x[i] * x[i]
    t -> 0.0
  }
}`

const argsOf = (name: string) =>
  name === 'rotate_like'
    ? [0.75, Float64Array.from([0.3, -1.2, 0.8, 1.1, 0.4, -0.6, 2.0, 0.9, 0.5]), 3]
    : [0.75, Float64Array.from([0.3, -1.2, 0.8])]

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['interpreter', true],
] as const)('the adjoint-only gradient program (%s, checks %s)', (backend, checks) => {
  const m = tag({ backend, checks })(source)

  it('is chosen where f only accumulates the loss and writes nothing else, and agrees with the two sweeps and central differences', () => {
    for (const name of ['rotate_like', 'with_if']) {
      const f = m[name]!
      const g = grad(f, { loss: 0 })
      expect(g.plan.program, name).toBe('adjoint-only')
      const two = grad(f, { loss: 0, fuse: false })
      expect(two.plan.program).toBe('two-sweep')
      const args = argsOf(name)
      const a = g(...args)
      const b = two(...args)
      const fd = finiteDifferenceOfCall(f.core, args, { loss: 0, skip: [2] })
      const ga = a[1] as Float64Array,
        gb = b[1] as Float64Array
      for (let i = 0; i < ga.length; i++) {
        expect(ga[i]).toBeCloseTo(gb[i]!, 13)
        expect(ga[i]).toBeCloseTo((fd[1] as number[])[i]!, 6)
      }
      expect(a[0]).toBe(1)
      // the loss value: the one the forward run computes, up to the order of the sum
      expect(g.lastLoss).toBeCloseTo(two.lastLoss, 13)
      // the caller's arguments are untouched, and a second call gives the same
      expect(Array.from(args[1] as Float64Array)).toEqual(Array.from(argsOf(name)[1] as Float64Array))
      expect(Array.from(g(...args)[1] as Float64Array)).toEqual(Array.from(ga))
    }
  })

  it('is not chosen where f writes another argument or reads the loss', () => {
    for (const name of ['writes_other', 'reads_loss']) {
      const g = grad(m[name]!, { loss: 0 })
      expect(g.plan.program, name).not.toBe('adjoint-only')
      expect(g.plan.considered.find((s) => s.program === 'adjoint-only')?.applies).toBe(false)
      const built = compileFused(m[name]!, 0)
      expect(built === null || !built.ir.name.endsWith('$adjonly')).toBe(true)
    }
  })
})

describe('the adjoint-only program as IR', () => {
  it('is the adjoint with the loss restores turned around, then $loss += loss (printed)', () => {
    const m = tag({ checks: true })`fn f(s: f64, x: f64[]) {
  for i in 0..len(x) {
    routine { t <- 0.0; t += x[i] * x[i] }
    s += sin(t)
    ~routine
  }
}`
    const info = infoOf(m.f!)
    const registry = info.registry.clone()
    const builder = () =>
      new AdjointBuilder(info.program, info.inverses, registry, registryPartials(registry, info.program.hosts))
    const only = printFunction(builder().adjointOnly('f', 's')!)
    const b = builder()
    const name = b.request('f', false)
    const adjoint = printFunction(b.build().find((x) => x.name === name)!)
    // the adjoint restores the loss (s -= sin(t)); the adjoint-only program accumulates it
    expect(adjoint).toMatch(/s -= sin\(t\)/)
    expect(adjoint).not.toMatch(/s \+= sin\(t\)/)
    expect(only).toMatch(/s \+= sin\(t\)/)
    expect(only).not.toMatch(/s -= sin\(t\)/)
    expect(only).toMatch(/\$loss \+= s\n\}$/)
    // the loss's gradient is 1 there (the seed grad passes): not read
    expect(adjoint).toMatch(/g_t \+= g_s \* cos\(t\)/)
    expect(only).toMatch(/g_t \+= cos\(t\)/)
    expect(only.split('\n').slice(1).join('\n')).not.toMatch(/\bg_s\b/)
    // otherwise the same statements: the gradient updates and the recompute of t
    const strip = (text: string) =>
      text
        .replaceAll('g_s * ', '')
        .split('\n')
        .slice(1)
        .filter((l) => !/(\bs [-+]= sin|\$loss \+=)/.test(l))
        .join('\n')
    expect(strip(only)).toBe(strip(adjoint))
  })
})

/**
 * A random program `f(w0, w1, w2, p, n, x)` of the generator wrapped as
 * `wrapper(L, w0, w1, w2, p, n, x)`: twice, copy the arguments into ancillas, run f on them in a
 * routine, accumulate a loss from its results, undo the routine. the wrapper writes only L, so the
 * adjoint-only program applies (the routine is inside a loop: not the routine-fused program).
 */
function wrapped(f: string): string {
  return `${f}
fn wrapper(L: f64, w0: f64, w1: f64, w2: f64, p: f64, n: i32, x: f64[]) {
  for k in 0..2 {
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
    L += a0 * 0.75 + a1 * a2 - sin(ax[0]) * ap
    L -= ax[1] * ax[2] * 0.5
    ~routine
  }
}`
}

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['interpreter', true],
] as const)('adjoint-only on random programs that write only the loss (%s, checks %s)', (backend, checks) => {
  it('gives the two-sweep gradient and the central differences', () => {
    const rev = tag({ backend, checks })
    const first = backend === 'interpreter' ? 700 : checks ? 500 : 600
    let compared = 0
    for (let t = 0; t < 10; t++) {
      const p = randomRealProgram(first + t, {
        differentiable: true,
        functions: ['sin', 'cos', 'tanh', 'atan'],
        maxStatements: 8,
        // (a stack is a host effect: the two sweeps push and pop in both, so no fused program applies)
        stacks: false,
      })
      const text = wrapped(p.source)
      const m = rev(text)
      const args = [0.5, ...randomRealArgs(p, first + t)]
      const g = grad(m.wrapper!, { loss: 0 })
      expect(g.plan.program, text).toBe('adjoint-only')
      let a: unknown[], b: unknown[]
      const two = grad(m.wrapper!, { loss: 0, fuse: false, uncompute: 'off' })
      try {
        b = two(...args)
        a = g(...args)
      } catch (e) {
        // a non-finite value that a deallocation check reports (the two-sweep program runs first)
        if (!(TenetError.isInstance(e) && /\b(NaN|-?Infinity)\b/.test((e as Error).message))) throw e
        continue
      }
      const flat = (r: unknown[]) =>
        r.flatMap((v) =>
          typeof v === 'number'
            ? [v]
            : ArrayBuffer.isView(v) || Array.isArray(v)
              ? Array.from(v as ArrayLike<number>)
              : [],
        )
      const fa = flat(a),
        fb = flat(b)
      if (!fb.every(Number.isFinite)) continue
      expect(fa.length).toBe(fb.length)
      for (let i = 0; i < fa.length; i++)
        expect(Math.abs(fa[i]! - fb[i]!), `seed ${first + t} #${i}\n${text}`).toBeLessThanOrEqual(
          1e-9 * Math.max(1, Math.abs(fb[i]!)),
        )
      expect(Math.abs(g.lastLoss - two.lastLoss)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(two.lastLoss)))
      // and central differences, where the program is smooth enough at these arguments
      const fd = flat(finiteDifferenceOfCall(m.wrapper!.core, args, { loss: 0, skip: [5] }))
      const close = fa.every((v, i) => Math.abs(v - fd[i]!) <= 1e-4 * Math.max(1, Math.abs(fd[i]!)))
      if (close) compared++
    }
    // most are smooth at random arguments (a branch point or an unstable uncompute is not)
    expect(compared).toBeGreaterThanOrEqual(6)
  })
})
