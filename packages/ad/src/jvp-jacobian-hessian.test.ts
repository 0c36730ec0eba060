import { describe, expect, it } from 'vitest'
import { TenetStaticError } from '@tenet/ir'
import { printFunction } from '@tenet/ir'
import type { TenetFunction } from '@tenet/reversible'
import { finiteDifference } from '@tenet/testing'
import {
  compileTangent,
  grad,
  gradient,
  hessian,
  hvp,
  jacobian,
  jvp,
  graphEmbeddingArgs,
  graphEmbeddingSource,
} from './index.js'
import { expectClose, fdHessian, tag, testRegistry } from './test-util.js'

// the cpu backend also without run-time checks: the second-order programs then drop dead updates
const backends = ['cpu', 'interpreter', 'cpu without checks'] as const

/** Forward and reverse Jacobians agree; the Hessian (two widths) matches FD of the gradient; hvp = H·v. */
function checkSecondOrder(f: TenetFunction, args: unknown[], loss = 0, tol = 1e-6) {
  const Jr = jacobian(f, args, { mode: 'reverse' })
  expectClose(jacobian(f, args, { mode: 'forward', width: 1 }), Jr, 1e-12, 'J fwd w=1')
  expectClose(jacobian(f, args, { mode: 'forward', width: 3 }), Jr, 1e-12, 'J fwd w=3')
  const c = f.ir.params
  const wrt = c.flatMap((p, i) =>
    i !== loss && p.type.kind !== 'stack' && (p.type.kind === 'scalar' ? p.type.name : p.type.elem) === 'f64'
      ? [i]
      : [],
  )
  const H1 = hessian(f, args, { loss, wrt, width: 1 })
  const H4 = hessian(f, args, { loss, wrt, width: 4 })
  expectClose(H4, H1, 1e-12, 'H w=4 vs w=1')
  // into a caller's array (stale contents), the same bits
  const out = new Float64Array(H4.length).fill(Number.NaN)
  expect(hessian(f, args, { loss, wrt, width: 4, out })).toBe(out)
  expect(Array.from(out)).toEqual(Array.from(H4))
  expectClose(H1, fdHessian(f, args, wrt, loss), tol, 'H vs FD')
  // hvp along a fixed direction
  const v = args.map((a, p) =>
    !wrt.includes(p)
      ? null
      : typeof a === 'number'
        ? 0.3 + 0.1 * p
        : Float64Array.from(a as Float64Array, (_, e) => Math.cos(e + p)),
  )
  const hv = hvp(f, args, { loss, v })
  const flatV: number[] = []
  for (const p of wrt) {
    const x = v[p]!
    if (typeof x === 'number') flatV.push(x)
    else flatV.push(...(x as Float64Array))
  }
  const n = flatV.length
  const want = Array.from({ length: n }, (_, i) => flatV.reduce((s, x, j) => s + H1[i * n + j]! * x, 0))
  const got: number[] = []
  for (const p of wrt) {
    const x = hv[p]!
    if (typeof x === 'number') got.push(x)
    else got.push(...(x as Float64Array))
  }
  expectClose(got, want, 1e-10, 'hvp')
}

describe.each(backends)('forward mode and Hessians on the %s backend', (label) => {
  const backend = label === 'interpreter' ? 'interpreter' : 'cpu'
  const rev = tag({ backend, checks: label !== 'cpu without checks' })

  it('jvp: values and directional derivatives; the tangent program is printable IR', () => {
    const m = rev`fn f(y: f64, x: f64, v: f64[]) { y += x * x; for i in 0..len(v) { v[i] += sin(x) * y } }`
    const r = jvp(m.f!, [0, 3, Float64Array.from([1, 2])], { v: [0, 1, null] })
    expect(r.value[0]).toBe(9)
    expect(r.tangent[0]).toBe(6)
    expect(r.tangent[1]).toBe(1)
    const tv = r.tangent[2] as Float64Array
    expect(tv[0]).toBeCloseTo(Math.cos(3) * 9 + Math.sin(3) * 6, 13)
    expect(r.tangent[2]).not.toBe(null)
    // inputs restricts the seeded arguments
    expect(jvp(m.f!, [0, 3, Float64Array.from([1, 2])], { v: [0, 1, null], inputs: [2] }).tangent[0]).toBe(0)
    const text = printFunction(compileTangent(m.f!, 2).tangent.ir)
    expect(text).toContain('t$0$y')
    expect(text).toMatch(/t\$v\[i \* 2 \+ 1\]/)
  })

  it('the tangent of a quotient divides once, beside the value: ȧ·(1/b) − (a/b)·(ḃ·(1/b)), derivatives as finite differences', () => {
    const m = rev`fn f(y: f64, a: f64, b: f64) { y += a / b }\nfn g(out: f64, a: f64, b: f64, n: i32) {
      t <- 0.0
      anc <- 0.0
      t += identity(a)
      for i in 0..n { anc += t * b\n t -= anc / b\n SWAP(t, anc) }
      out += identity(t)
      ~{ for i in 0..n { anc += t * b\n t -= anc / b\n SWAP(t, anc) } }
      t -= identity(a)
      anc -> 0.0
      t -> 0.0
    }`
    const text = printFunction(compileTangent(m.f!, 1).tangent.ir)
    const yLine = text.split('\n').find((l) => l.trim().startsWith('t$y +='))!
    // before: (t$a - a / b * t$b) / b, whose second division waits for the value's a / b, and
    // then t$a / b - a / b * (t$b / b), two divisions besides the value's
    expect(yLine.replace(/\s+/g, ' ')).toContain('t$y += 1.0 / b * t$a - a / b * (1.0 / b * t$b)')
    // a denominator without a tangent: one division, as the value's
    const c = rev`fn h(y: f64, a: f64, n: i32) { y += a / f64(n) }`
    const hLine = printFunction(compileTangent(c.h!, 1).tangent.ir)
      .split('\n')
      .find((l) => l.trim().startsWith('t$y +='))!
    expect(hLine.replace(/\s+/g, ' ')).toContain('t$y += t$a / f64(n)')
    for (const [a, b] of [
      [0.7, 1.3],
      [-2.1, 0.4],
    ] as const) {
      const r = jvp(m.f!, [0, a, b], { v: [0, 1, 0] }),
        s = jvp(m.f!, [0, a, b], { v: [0, 0, 1] })
      expect(r.tangent[0]).toBeCloseTo(1 / b, 13)
      expect(s.tangent[0]).toBeCloseTo(-a / (b * b), 13)
    }
    // an approximate multiplier's loop (the Bessel function's imul): out += a·bⁿ, its tangents
    // against the exact derivatives and central differences
    const [a, b, n] = [0.9, 1.7, 5]
    const value = (x: number[]) => jvp(m.g!, [0, x[0], x[1], n], { v: [0, 0, 0, 0] }).value[0] as number
    const fd = finiteDifference(value, [a, b], 1e-6)
    const exact = [b ** n, n * a * b ** (n - 1)]
    for (const k of [0, 1]) {
      const v = [0, 0, 0, 0]
      v[k + 1] = 1
      const got = jvp(m.g!, [0, a, b, n], { v }).tangent[0] as number
      expect(got).toBeCloseTo(exact[k]!, 11)
      expect(got).toBeCloseTo(fd[k]!, 6)
    }
  })

  it('control flow, calls, uncalls, recursion, ancillas, negated views', () => {
    const m = rev`
      fn mul(y: f64, a: f64, b: f64) { y += a * b }
      fn step(y: f64, x: f64) { y += x * x * x }
      fn power(y: f64, x: f64, n: i32) {
        if (n > 0, ~) {
          t <- 0.0
          power(t, x, n - 1)
          y += t * x
          ~power(t, x, n - 1)
          t -> 0.0
        } else { y += 1.0 }
      }
      fn f(y: f64, x: f64[], s: f64, n: i32) {
        for i in 0..len(x) { mul(y, x[i], s) }
        mul(y, -s, x[0])
        mul(x[1], x[0], x[2])
        k: i32 <- 0
        while (k < n, k > 0) { k += 1; y += x[0] * f64(k); x[2] += 0.1 * sin(y) }
        k -> n
        if (s > 0.0, ~) { y += s * s * x[1] } else { y -= cos(s) }
        z <- 0.0
        step(z, s)
        ~step(y, z)
        routine { a <- x[0] * s; b <- 0.0; b += exp(a) + s }
        y += b * b
        ~routine
        p <- 0.0
        power(p, s, 3)
        y += p * x[2]
        ~power(p, s, 3)
        p -> 0.0
        z += 0.0
        ~step(z, s)
        z -> 0.0
      }`
    for (const s of [0.7, -0.4]) checkSecondOrder(m.f!, [0.1, Float64Array.from([0.3, -0.6, 0.5]), s, 3], 0, 1e-5)
  })

  it('tangents known to be zero (ancillas from integers) are left out only where nothing can have written them', () => {
    // a starts from an integer, so its tangent is zero until the loop adds x to it: from the
    // second iteration on, s += a · x needs ȧ. c only ever receives integers. b and d get a
    // tangent in one branch of an if each. A transform that kept the facts of the loop's entry,
    // or of one branch, would lose terms here
    const m = rev`
      fn f(y: f64, x: f64, n: i32) {
        a <- 0.0
        s <- 0.0
        c <- 0.0
        b <- 1.0
        d <- 3.0
        routine {
          a += f64(n)
          for i in 0..n { s += a * x; a += x; c += f64(i) }
          if (x > 0.0, ~) { b += x * x } else { b -= 0.5 }
          if (n > 2, ~) { d += 1.0 } else { d += x }
        }
        y += s * b + c * x + d * x
        ~routine
        d -> 3.0
        b -> 1.0
        c -> 0.0
        s -> 0.0
        a -> 0.0
      }`
    const g = grad(m.f!, { loss: 0, mode: 'forward' })
    for (const n of [2, 3]) {
      for (const x of [0.7, -0.4]) {
        const s = n * n * x + (x * x * n * (n - 1)) / 2,
          ds = n * n + x * n * (n - 1)
        const b = x > 0 ? 1 + x * x : 0.5,
          db = x > 0 ? 2 * x : 0
        const c = (n * (n - 1)) / 2,
          d = n > 2 ? 4 : 3 + x,
          dd = n > 2 ? 0 : 1
        expect(g(0, x, n)[1]).toBeCloseTo(ds * b + s * db + c + d + dd * x, 12)
        checkSecondOrder(m.f!, [0.1, x, n], 0, 1e-5)
      }
    }
    // c only ever receives integers: the tangent of y += … + c * x has no term in c's tangent
    const text = printFunction(compileTangent(m.f!, 1).tangent.ir)
    const yLine = text.split('\n').find((l) => l.trim().startsWith('t$y +='))!
    expect(yLine).toContain('t$s')
    expect(yLine).not.toContain('t$c')
  })

  it('bijections: SWAP, NEG, ROT, IROT, HADAMARD, INV, stacks', () => {
    const m = rev`fn f(y: f64, a: f64, b: f64, t: f64, x: f64[]) {
      ROT(a, b, t)
      SWAP(a, x[0])
      NEG(b)
      y += a * b + x[0] * t
      ~ROT(x[1], a, b)
      HADAMARD(x[0], x[2])
      INV(x[2])
      s: stack<f64> <- []
      c <- 0.0
      c += a * t
      push(s, c)
      y += x[1] * x[2] * x[0]
      pop(s, c)
      y += c * c
      c -= a * t
      c -> 0.0
      s -> []
    }`
    checkSecondOrder(m.f!, [0.2, 0.8, -0.3, 0.6, Float64Array.from([0.4, 1.1, 0.9])], 0, 1e-5)
  })

  it('jacobian mode auto picks forward when inputs are fewer, and both give the same', () => {
    const m = rev`fn f(v: f64[], x: f64, z: f64) { for i in 0..len(v) { v[i] += sin(x * f64(i)) * z } }`
    const args = [new Float64Array(6), 0.7, 1.3]
    const a = jacobian(m.f!, args, { inputs: [1, 2], outputs: [0] })
    expectClose(a, jacobian(m.f!, args, { inputs: [1, 2], outputs: [0], mode: 'reverse' }), 1e-14)
    expect(a.length).toBe(12)
    expect(() => jacobian(m.f!, args, { mode: 'sideways' as never })).toThrow(/mode/)
  })

  it('hessian: an `out` of the wrong size or type is an error naming the size wanted, and the arguments stay as passed', () => {
    const m = rev`fn f(y: f64, v: f64[]) { for i in 0..len(v) { y += v[i] * v[i] * v[i] } }`
    const v = Float64Array.from([1, 2, 3])
    expect(() => hessian(m.f!, [0, v], { loss: 0, wrt: [1], out: new Float64Array(8) })).toThrow(
      /`out` must be a Float64Array of 9 elements \(3×3\), got one of 8/,
    )
    expect(() => hessian(m.f!, [0, v], { loss: 0, wrt: [1], out: new Float32Array(9) as never })).toThrow(
      /got a Float32Array/,
    )
    expect(() => hessian(m.f!, [0, v], { loss: 0, wrt: [1], out: [] as never })).toThrow(/got an array/)
    expect(() => hessian(m.f!, [0, v], { loss: 0, wrt: [1], out: null as never })).toThrow(/got null/)
    expect(Array.from(v)).toEqual([1, 2, 3])
    const out = new Float64Array(9)
    expect(Array.from(hessian(m.f!, [0, v], { loss: 0, wrt: [1], out }))).toEqual([6, 0, 0, 0, 12, 0, 0, 0, 18])
  })

  it('a bijection without a tangent rule is a static error', () => {
    const registry = testRegistry()
      .clone()
      .registerPrimitive({
        specificationVersion: 'v1',
        name: 'TWICE',
        kind: 'bijection',
        roles: ['inout'],
        types: ['float'],
        apply: (a) => [2 * a!],
        inverse: 'HALVE',
      })
      .registerPrimitive({
        specificationVersion: 'v1',
        name: 'HALVE',
        kind: 'bijection',
        roles: ['inout'],
        types: ['float'],
        apply: (a) => [a! / 2],
        inverse: 'TWICE',
      })
    const m = tag({ backend, registry })`fn f(y: f64, x: f64) { TWICE(x); y += x }`
    expect(() => jvp(m.f!, [0, 1], { v: [0, 1] })).toThrow(/no tangent rule/)
    try {
      jvp(m.f!, [0, 1], { v: [0, 1] })
    } catch (e) {
      expect(TenetStaticError.isInstance(e)).toBe(true)
    }
  })

  it('grad(f).inverse clears the gradients and restores the arguments', () => {
    const m = rev`fn f(y: f64, x: f64, v: f64[]) {
      for i in 0..len(v) { y += v[i] * v[i] * x }
      ROT(x, v[0], y)
      y += sin(x)
    }`
    const args = [0.1, 0.7, Float64Array.from([0.3, -0.5, 0.9])]
    const g = grad(m.f!, { loss: 0 })
    const gr = g(...args).map((x) => (x && typeof x !== 'number' ? x.slice() : x))
    expect(gr[1]).not.toBe(0)
    const back = g.inverse(args, gr)
    expect(back.gradient[0]).toBeCloseTo(1, 12)
    expect(back.gradient[1]).toBeCloseTo(0, 12)
    for (const e of back.gradient[2] as Float64Array) expect(e).toBeCloseTo(0, 12)
    expect(back.args[0]).toBeCloseTo(0.1, 12)
    expect(back.args[1]).toBeCloseTo(0.7, 12)
    expectClose(back.args[2] as Float64Array, args[2] as Float64Array, 1e-12)
    // the same through the adjoint's own inverse: (x, ḡ) → (f's outputs, seed)
    const out = m.f!(...args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a)))
    const inv = g.adjoint.inverse(
      ...args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a)),
      gr[0],
      gr[1],
      (gr[2] as Float64Array).slice(),
      0,
    )
    expect(inv[0]).toBeCloseTo(out[0] as number, 12)
    expect(inv[3]).toBeCloseTo(1, 12)
    expect(inv[4]).toBeCloseTo(0, 12)
  })

  it('graph embedding (Petersen, k = 1..10): gradient and full Hessian agree with finite differences', () => {
    const m = rev(graphEmbeddingSource)
    const f = m.embedding_loss!
    const plain = (x: Float64Array, k: number) => {
      const d = (pairs: Int32Array) =>
        Array.from({ length: pairs.length / 2 }, (_, e) => {
          let s = 0
          for (let j = 0; j < k; j++) s += (x[pairs[2 * e]! * k + j]! - x[pairs[2 * e + 1]! * k + j]!) ** 2
          return Math.sqrt(s)
        })
      const a = graphEmbeddingArgs(x, k)
      const d1 = d(a[7] as Int32Array),
        d2 = d(a[8] as Int32Array)
      const mean = (v: number[]) => v.reduce((s, t) => s + t, 0) / v.length
      const vr = (v: number[]) => {
        const mu = mean(v)
        return v.reduce((s, t) => s + (t - mu) ** 2, 0) / (v.length - 1)
      }
      return vr(d1) + vr(d2) + Math.exp(Math.max(mean(d1) - mean(d2) + 0.1, 0)) - 1
    }
    for (let k = 1; k <= 10; k++) {
      const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(1.7 * i + k) + 0.3 * Math.cos(i * i))
      const args = graphEmbeddingArgs(x, k)
      expect(f(...graphEmbeddingArgs(x.slice(), k))[0]).toBeCloseTo(plain(x, k), 12)
      const g = gradient(f, args, { loss: 0 })[1] as Float64Array
      const fd = finiteDifference((v) => plain(Float64Array.from(v), k), x, 1e-6)
      expectClose(g, fd, 1e-7, `gradient k=${k}`)
      if (backend === 'interpreter' && k > 4) continue
      const H = hessian(f, args, { loss: 0, wrt: [1], width: Math.min(10 * k, 16) })
      expectClose(H, fdHessian(f, args, [1]), 1e-6, `Hessian k=${k}`)
    }
  })
})
