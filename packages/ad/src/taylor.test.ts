import { describe, expect, it } from 'vitest'
import { createRegistry, parse, TenetStaticError } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { besselSource, besselTermsSource } from './examples/papers.js'
import { compileTaylor, nestedTangentDerivative, taylor } from './taylor-mode.js'
import { randomExpressions } from './test-util.js'

const BACKENDS = ['interpreter', 'cpu', 'wasm'] as const
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)
const compile = (text: string, backend: string, checks = true): TenetModule =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend, checks })

/** |a − b| ≤ tol·|b| (relative), or ≤ tol where |b| < 1e-300. */
function expectRelative(a: number, b: number, tol: number, what: string) {
  const err = Math.abs(a - b) / Math.max(Math.abs(b), 1e-300)
  expect(err, `${what}: ${a} vs ${b}`).toBeLessThanOrEqual(tol)
}

const factorial = (n: number) => {
  let f = 1
  for (let i = 2; i <= n; i++) f *= i
  return f
}

/** J_ν⁽ᵏ⁾(z) by differentiating the series term by term, truncated where the programs stop (after the first |term| ≤ 1e-8). */
function besselDerivative(nu: number, z: number, k: number): number {
  let t = (z / 2) ** nu / factorial(nu),
    M = 0
  while (Math.abs(t) > 1e-8) {
    M++
    t *= -((z / 2) ** 2) / (M * (M + nu))
  }
  let s = 0
  for (let m = 0; m <= M; m++) {
    const p = 2 * m + nu
    if (k > p) continue
    let c = 1
    for (let i = 0; i < k; i++) c *= p - i
    s += ((-1) ** m / (factorial(m) * factorial(m + nu)) / 2 ** p) * c * z ** (p - k)
  }
  return s
}

describe('Taylor mode against closed forms, on every backend', () => {
  for (const backend of BACKENDS) {
    it(`${backend}: exp and sin along v = 1.3, k = 8`, () => {
      const m = compile('fn f(y: f64, s: f64, x: f64) { y += exp(x); s += sin(x) }', backend)
      const x = 0.7,
        v = 1.3
      const r = taylor(m.f!, [0.25, 0, x], { direction: [0, 0, v], order: 8 })
      for (let j = 0; j <= 8; j++) {
        const ej = (Math.exp(x) * v ** j) / factorial(j) + (j === 0 ? 0.25 : 0)
        const sj = (Math.sin(x + (j * Math.PI) / 2) * v ** j) / factorial(j)
        expectRelative(r.coefficients[j]![0] as number, ej, 1e-14, `exp coefficient ${j}`)
        expectRelative(r.coefficients[j]![1] as number, sj, 1e-13, `sin coefficient ${j}`)
        expectRelative(r.derivatives[j]![1] as number, sj * factorial(j), 1e-13, `sin derivative ${j}`)
      }
      // the input itself moves along the line: x(t) = x + v·t
      expect(r.coefficients[1]![2]).toBe(v)
      expect(r.coefficients[2]![2]).toBe(0)
    })

    it(`${backend}: J₂⁽ᵏ⁾(z), k ≤ 8, equals the series' term-by-term derivatives (terms kept exactly)`, () => {
      const m = compile(besselTermsSource, backend)
      for (const z of [0.5, 1.0, 2.5]) {
        const r = taylor(m.ibesselj_terms!, [0, 2, z], { direction: [0, 0, 1], order: 8 })
        for (let k = 0; k <= 8; k++)
          expectRelative(r.derivatives[k]![0] as number, besselDerivative(2, z, k), 1e-10, `J₂^(${k})(${z})`)
      }
    })
  }

  it('the paper’s besselSource (approximate multiplier): J₂, J₂′, J₂″ to 1e-10 in one sweep; higher orders carry its amplified rounding residue', () => {
    for (const backend of BACKENDS) {
      const m = compile(besselSource, backend)
      const r = taylor(m.ibesselj!, [0, 2, 1.0], { direction: [0, 0, 1], order: 8 })
      for (let k = 0; k <= 2; k++)
        expectRelative(r.derivatives[k]![0] as number, besselDerivative(2, 1, k), 1e-10, `${backend} J₂^(${k})(1)`)
      // higher orders carry the amplified rounding residue of the dirty ancilla (see besselTermsSource):
      // (measured: 1.3e-9 relative at k = 3, 3.8e-8 at 4, 1.3e-5 at 6, 4.3e-3 at 8)
      for (let k = 3; k <= 8; k++)
        expectRelative(
          r.derivatives[k]![0] as number,
          besselDerivative(2, 1, k),
          k <= 5 ? 1e-6 : 1e-2,
          `${backend} J₂^(${k})(1)`,
        )
    }
  })
})

describe('Taylor mode against repeated forward-mode differentiation', () => {
  const program = `
fn inner(y: f64, a: f64[], x: f64, n: i32) {
  for i in 0..n { a[i] += x * f64(i + 1) + a[i + 1] * 0.5 }
  y += a[0] * a[1] - sin(a[2])
}
fn outer(out: f64, a: f64[], s: f64[], r: f64, t: f64, x: f64, w: f64, n: i32) {
  st: stack<f64> <- []
  inner(out, a, x * w, n)
  t += exp(0.3 * x) / (1.0 + w * w)
  push(st, t)
  r += out * 0.1
  if (r > 0.0, ~) { out += r * r } else { out -= r }
  s[1] += r ** 3
  pop(st, t)
  ~inner(out, a, w, n)
  out += s[1] + atan(t) + sqrt(2.0 + w)
  while (t > 0.5, t < exp(0.3 * x) / (1.0 + w * w)) { t -= 0.25 }
  SWAP(out, t)
  NEG(t)
  out += t
  st -> []
}`
  for (const backend of ['cpu', 'wasm'] as const) {
    it(`${backend}: calls, uncalls, arrays, stacks, branches and loops, orders 1–2 (and 3 against the interpreter)`, () => {
      // (the wasm backend has no stacks: there the push and pop go)
      const text =
        backend === 'wasm'
          ? program
              .split('\n')
              .filter((l) => !/\bst\b/.test(l))
              .join('\n')
          : program
      const m = compile(text, backend)
      const a = Float64Array.of(0.3, -0.2, 0.5, 0.1, 0.4)
      const args = [0.2, a, new Float64Array(4), 0, 0, 0.7, 0.4, 3]
      const direction = [0.5, Float64Array.of(1, -1, 0.5, 0.25, -0.5), null, 0.1, 0, 1, -0.3, null]
      const r = taylor(m.outer!, args, { direction, order: 3 })
      for (let k = 1; k <= 2; k++) {
        const ref = nestedTangentDerivative(m.outer!, args, { direction, order: k })
        expectRelative(r.derivatives[k]![0] as number, ref[0] as number, 1e-10, `d^${k} out`)
        const ta = r.derivatives[k]![1] as Float64Array,
          ra = ref[1] as Float64Array
        for (let i = 0; i < ta.length; i++)
          expect(Math.abs(ta[i]! - ra[i]!), `d^${k} a[${i}]`).toBeLessThanOrEqual(1e-10 * (1 + Math.abs(ra[i]!)))
      }
      const ri = taylor(compile(text, 'interpreter').outer!, args, { direction, order: 3 })
      expectRelative(
        r.coefficients[3]![0] as number,
        ri.coefficients[3]![0] as number,
        1e-12,
        'order 3 against the interpreter',
      )
    })
  }

  it('sincos and its inverse against sin and cos, order 6', () => {
    const m = compile('fn f(s: f64, c: f64, x: f64) { sincos(s, c, x); ~sincos(s, c, 0.5 * x) }', 'cpu')
    const x = 0.8,
      v = 0.9
    const r = taylor(m.f!, [0, 0, x], { direction: [0, 0, v], order: 6 })
    for (let k = 1; k <= 6; k++) {
      const s = v ** k * Math.sin(x + (k * Math.PI) / 2) - (0.5 * v) ** k * Math.sin(0.5 * x + (k * Math.PI) / 2)
      const c = v ** k * Math.cos(x + (k * Math.PI) / 2) - (0.5 * v) ** k * Math.cos(0.5 * x + (k * Math.PI) / 2)
      expectRelative(r.derivatives[k]![0] as number, s, 1e-12, `d^${k} s`)
      expectRelative(r.derivatives[k]![1] as number, c, 1e-12, `d^${k} c`)
    }
  })

  const primitives = [
    'exp(x)',
    'log(2.0 + x)',
    'sin(x) * cos(u)',
    'tan(0.3 * x)',
    'sinh(x) - cosh(u)',
    'tanh(x * u)',
    'sqrt(1.5 + x)',
    'atan(x)',
    'asin(0.4 * x)',
    'acos(0.3 * u)',
    'atan2(x, u)',
    'abs(x - u)',
    'abs2(u)',
    'max(x, u) * min(x, u)',
    'pow(1.5 + u, x)',
    '(2.0 + x) ** u',
    'x ** 3',
    'u / x',
    'identity(x)',
    '(1.0 + u) ** 2.5',
  ]
  it('every standard pure primitive and bijection, orders 1–3', () => {
    const bijections =
      'AddConst(y, x * u)\n  SubConst(y, u / 3.0)\n  ROT(y, x, 0.4)\n  IROT(x, u, 0.1)\n  HADAMARD(y, u)\n  SWAP(x, y)\n  NEG(u)'
    const varying = 'ROT(y, x, u * u)\n  IROT(x, y, u)\n  INV(u)\n  ~ROT(y, u, x)'
    for (const body of [...primitives.map((e) => `y += ${e}`), bijections, varying]) {
      const m = compile(`fn f(y: f64, x: f64, u: f64) {\n  ${body}\n}`, 'cpu')
      for (const [x, u] of [
        [0.6, 0.35],
        [-0.4, 0.9],
      ] as const) {
        const args = [0.1, x, u],
          direction = [0.2, 1, -0.7]
        const r = taylor(m.f!, args, { direction, order: 3 })
        for (let k = 1; k <= 3; k++) {
          const ref = nestedTangentDerivative(m.f!, args, { direction, order: k })
          for (let p = 0; p < 3; p++)
            expectRelative(
              r.derivatives[k]![p] as number,
              ref[p] as number,
              1e-10,
              `${body}: d^${k} of argument ${p} at (${x}, ${u})`,
            )
        }
      }
    }
  })

  it('random smooth programs, orders 1–2 (3 against the interpreter)', () => {
    const { expr, rnd } = randomExpressions(27)
    for (let trial = 0; trial < 6; trial++) {
      const vars = ['x0', 'x1', 'x2']
      const lines: string[] = []
      for (let s = 0; s < 4; s++) {
        const target = vars[Math.floor(rnd() * 3)]!
        lines.push(
          `${target} += ${expr(
            vars.filter((v) => v !== target),
            2,
          )}`,
        )
      }
      const text = `fn f(x0: f64, x1: f64, x2: f64) {\n${lines.join('\n')}\n}`
      const cpu = compile(text, 'cpu'),
        interp = compile(text, 'interpreter')
      const args = [0.3, -0.5, 0.8],
        direction = [1, 0.5, -0.25]
      const r = taylor(cpu.f!, args, { direction, order: 3 })
      const ri = taylor(interp.f!, args, { direction, order: 3 })
      for (let k = 1; k <= 3; k++) {
        const ref = k <= 2 ? nestedTangentDerivative(cpu.f!, args, { direction, order: k }) : null
        for (let p = 0; p < 3; p++) {
          if (ref) expectRelative(r.derivatives[k]![p] as number, ref[p] as number, 1e-10, `${text}\nd^${k} x${p}`)
          expectRelative(
            ri.derivatives[k]![p] as number,
            r.derivatives[k]![p] as number,
            1e-13,
            `interpreter d^${k} x${p}`,
          )
        }
      }
    }
  })
})

describe('the Taylor function is reversible IR', () => {
  for (const backend of BACKENDS) {
    it(`${backend}: its inverse restores the values and every coefficient`, () => {
      const m = compile(
        `
fn g(y: f64, x: f64) { y += exp(x) * x }
fn f(y: f64, x: f64, u: f64, a: f64[]) {
  t <- sin(x) * u
  y += t / (1.5 + x * x)
  g(y, u)
  ROT(y, a[1], u * u)
  a[0] += a[1] * t
  INV(u)
  t -> sin(x) * (1.0 / u)
  ~g(x, a[0])
}`,
        backend,
      )
      const order = 4
      const ct = compileTaylor(m.f!, order)
      const argv: unknown[] = [0.2, 0.6, 0.7, Float64Array.of(0.3, -0.1)]
      for (let j = 1; j <= order; j++) argv.push(0.1 * j) // y
      for (let j = 1; j <= order; j++) argv.push(j === 1 ? 1 : 0.05 * j) // x
      for (let j = 1; j <= order; j++) argv.push(-0.2 * j) // u
      for (let j = 1; j <= order; j++) argv.push(Float64Array.of(0.01 * j, -0.02 * j)) // a
      const copy = (v: unknown) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v)
      const out = ct.taylor(...argv.map(copy)).map(copy)
      const back = ct.taylor.inverse(...out.map(copy))
      back.forEach((v, i) => {
        const want = argv[i]
        if (typeof want === 'number') expect(Math.abs((v as number) - want), `argument ${i}`).toBeLessThan(1e-12)
        else
          for (let e = 0; e < (want as Float64Array).length; e++)
            expect(Math.abs((v as Float64Array)[e]! - (want as Float64Array)[e]!), `argument ${i}[${e}]`).toBeLessThan(
              1e-12,
            )
      })
      // and forwards it moved something
      expect(Math.abs((out[4] as number) - 0.1)).toBeGreaterThan(1e-3)
    })
  }
})

describe('Taylor mode nests', () => {
  it('the Taylor function of a Taylor function (names kept apart) gives the mixed coefficient', () => {
    const m = compile('fn f(y: f64, x: f64) { y += exp(x) * sin(x) }', 'cpu')
    const inner = compileTaylor(m.f!, 2).taylor // (y, x, c1$y, c2$y, c1$x, c2$x)
    // x(s, t) = x + s + t: inner seeds c1$x = 1; the outer moves x and c1$x … along t with x only
    const r = taylor(inner, [0, 0.4, 0, 0, 1, 0], { direction: [0, 1, 0, 0, 0, 0], order: 2 })
    const d = (k: number) => Math.exp(0.4) * 2 ** (k / 2) * Math.sin(0.4 + (k * Math.PI) / 4) // (eˣ sin x)⁽ᵏ⁾
    // ∂/∂t of c1$y (= f′ along s) is f″; the t-coefficient 1 of c2$y (= f″/2) is f‴/2
    expect(Math.abs((r.coefficients[1]![2] as number) - d(2))).toBeLessThan(1e-12)
    expect(Math.abs((r.coefficients[1]![3] as number) - d(3) / 2)).toBeLessThan(1e-12)
  })
})

describe('Taylor mode errors', () => {
  it('names a primitive without a Taylor rule', () => {
    const reg = registry().registerPrimitive({
      specificationVersion: 'v1',
      name: 'softplus',
      kind: 'pure',
      arity: 1,
      description: 'log(1 + exp x)',
      evaluate: (x) => Math.log1p(Math.exp(x)),
      partials: (x) => [1 / (1 + Math.exp(-x))],
    })
    const m = compileModule(parse({ text: 'fn f(y: f64, x: f64) { y += softplus(x) }', name: 'test' }), {
      registry: reg,
    })
    let err: unknown
    try {
      compileTaylor(m.f!, 2)
    } catch (e) {
      err = e
    }
    expect(TenetStaticError.isInstance(err)).toBe(true)
    expect((err as TenetStaticError).code).toBe('ad/taylor-rule')
    expect((err as Error).message).toMatch(
      /primitive `softplus` has no Taylor rule; write its partials as Tenet expression text/,
    )
    const flip = compile('fn g(x: f64, b: bool) { FLIP(b); INV(x) }', 'cpu')
    expect(() => compileTaylor(flip.g!, 2)).not.toThrow()
  })

  it('refuses types other than f64 and bad orders', () => {
    const m = compile('fn f(y: f32, x: f32) { y += x * x }', 'cpu')
    expect(() => taylor(m.f!, [0, 1], { direction: [0, 1], order: 2 })).toThrow(/f64 values only/)
    const h = compile('fn h(y: f64, x: f64) { y += f64(f32(x)) }', 'cpu')
    expect(() => compileTaylor(h.h!, 2)).toThrow(/rounds to f32/)
    const g = compile('fn g(y: f64, x: f64) { y += x }', 'cpu')
    expect(() => taylor(g.g!, [0, 1], { direction: [0, 1], order: 0 })).toThrow(RangeError)
    expect(() => taylor(g.g!, [0, 1], { order: 2 } as never)).toThrow(/needs `direction`/)
    expect(() => taylor(g.g!, [0, 1], undefined as never)).toThrow(/options object/)
  })
})
