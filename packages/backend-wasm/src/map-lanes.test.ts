import { describe, expect, it } from 'vitest'
import { parse } from '@tenet/ir'
import { bessel, compile, expectSameForward, expectSameRuns, lastMapLanes } from './test-util.js'
import { elementSpans, unreadElements, type MapLanesPlan } from './map-lanes.js'
import { mulberry32 as rng } from '@tenet/testing'

const zs = (n: number) => Float64Array.from({ length: n }, (_, i) => 0.1 + ((i * 0.6180339887) % 1) * 7.9)

describe('map lanes', () => {
  it('runs the Bessel batch two z at a time with the scalar code’s bits, forwards and backwards', () => {
    const lanes = compile(bessel, 'wasm')
    expect(lastMapLanes).toBeGreaterThan(0)
    const scalar = compile(bessel, 'wasm', false, false)
    expect(lastMapLanes).toBe(0)
    const cpu = compile(bessel, 'cpu')
    for (const nu of [0, 1, 2, 3, 5])
      for (const n of [0, 1, 2, 7, 64]) expectSameRuns([cpu, scalar, lanes], () => [new Float64Array(n), nu, zs(n)])
  })
})

/**
 * A map whose body meets every kind of lane code: a varying `while` with an `if`/`else` inside
 * (and a `while` inside that), i32 counters and arithmetic that wraps, i32 elements, the loop
 * variable read as a value, comparisons, `!`, `||`, min/max/abs/sqrt, `**` (2 and other powers),
 * transcendental functions (computed lane by lane), an inverse call, SWAP, and a uniform loop.
 * (Not reversible as written, `k` is not uncomputed: compiled without checks, it is a test of the
 * code generator only, forwards.)
 */
const features = `
fn step(x: f64, y: f64, n: i32) {
  x += sqrt(abs(y)) * 0.5 + min(y, 1.5)
  n += 1
  SWAP(x, y)
}
fn body(a: f64, b: f64, c: i32, i: i32, m: i32, s: f64) {
  k: i32 <- 0
  t <- 0.0
  u: i32 <- 0
  for j in 0..m { u += j * 3 }
  t += f64(i) * 0.25 + s + f64(u)
  while (abs(a) < 40.0 && k < 9 || k == 0, k != 0) {
    if (a > b || !(c > 2), ~) {
      step(a, b, k)
      c += k * 1103515245 + 12345
      while (b < -3.0, b >= -0.5) {
        b += 2.5
      }
    } else {
      ~step(b, a, k)
      a -= max(b, 0.25) ** 2 + sin(t) + b ** 3
      k += 1
    }
    t += exp(-abs(a)) + f64(c) * 1e-9
  }
  b += t * 0.125
  a += f64(k)
  ~{
    t += f64(i) * 0.25 + s + f64(u)
  }
  t -> 0.0
  ~{ for j in 0..m { u += j * 3 } }
  u -> 0
  k -> 0
}
fn f(a: f64[], b: f64[], c: i32[], m: i32, s: f64) {
  for i in 0..len(a) { body(a[i], b[i], c[i], i, m, s) }
}`

describe('map lanes on control flow', () => {
  it('gives the scalar code’s bits on every lane, whatever the lanes’ trip counts', () => {
    const lanes = compile(features, 'wasm')
    expect(lastMapLanes).toBeGreaterThan(0)
    const scalar = compile(features, 'wasm', false, false)
    const cpu = compile(features, 'cpu')
    for (const n of [1, 2, 3, 10, 33]) {
      const args = () => [
        Float64Array.from({ length: n }, (_, i) => Math.sin(i * 1.7) * 30),
        Float64Array.from({ length: n }, (_, i) => Math.cos(i * 0.9) * 8),
        Int32Array.from({ length: n }, (_, i) => (i * 7) % 5),
        3,
        0.75,
      ]
      expectSameForward([cpu, scalar, lanes], args)
    }
  })
})

describe('map lanes and accumulations under uniform control', () => {
  // a statement that touches no varying name runs once for the pair, as scalar code; one that adds
  // to an accumulator must run once per lane even when what it adds is uniform (a uniform
  // `while` around \`q[0] += 1.0\` added once for the two iterations: the fuzzer's seed 43507721)
  const bodies = {
    while: `k: i32 <- 0
    while (k < 2, k > 0) {
      q[0] += 1.0
      q[1] -= w
      k += 1
    }
    k -> 2`,
    if: `if (w > 0.5, ~) {
      q[0] += 1.0
    } else {
      q[1] -= w
    }`,
  }
  for (const [kind, inner] of Object.entries(bodies))
    it(`gives the scalar code’s bits with a uniform ${kind} around the accumulation`, () => {
      const text = `fn f(x: f64[], q: f64[], w: f64) {
  for i in 0..len(x) {
    x[i] += sin(w) * 2.0
    ${inner}
  }
}`
      const lanes = compile(text, 'wasm')
      expect(lastMapLanes).toBeGreaterThan(0)
      const scalar = compile(text, 'wasm', false, false)
      const cpu = compile(text, 'cpu')
      for (const [n, w] of [
        [4, 0.75],
        [5, 0.25],
        [1, 0.75],
      ] as const)
        expectSameForward([cpu, scalar, lanes], () => [
          Float64Array.from({ length: n }, (_, i) => i * 0.1),
          Float64Array.of(0.5, -0.25),
          w,
        ])
    })
})

describe('map lanes where they do not apply', () => {
  const cases: Record<string, string> = {
    'a scalar of the function is written (a reduction)': `
fn g(x: f64, y: f64) { while (x < 3.0, x >= 0.5) { x += 1.0 } y += x }
fn f(a: f64[], s: f64) { for i in 0..len(a) { g(a[i], s) } }`,
    'a neighbouring element is read': `
fn g(x: f64, y: f64) { while (x < 3.0, x >= 0.5) { x += 1.0 } x += y }
fn f(a: f64[], b: f64[]) { for i in 0..len(a) - 1 { g(a[i], b[i + 1]) } }`,
    'an array element is written at another index and read': `
fn f(a: f64[], b: f64[]) { for i in 0..len(a) { while (a[i] < 3.0, a[i] >= 0.5) { a[i] += b[1] } b[0] += a[i] } }`,
    'an array ancilla': `
fn g(x: f64, n: i32) { t: f64[] <- zeros(n) \n while (x < 3.0, x >= 0.5) { x += 1.0 \n t[0] += x } \n t -> zeros(n) }
fn f(a: f64[], n: i32) { for i in 0..len(a) { g(a[i], n) } }`,
    'the same variable passed twice': `
fn g(x: f64, y: f64) { while (x < 3.0, x >= 0.5) { x += 1.0 } }
fn f(a: f64[]) { for i in 0..len(a) { g(a[i], a[i]) } }`,
  }
  for (const [what, text] of Object.entries(cases))
    it(`runs the scalar loop where ${what}`, () => {
      try {
        compile(text, 'wasm')
      } catch {
        // a program the checker rejects is not one the code generator sees
        return
      }
      expect(lastMapLanes).toBe(0)
    })

  it('runs the scalar loop, with the same results, when the host passes one array for two parameters', () => {
    const text = `
fn g(x: f64, y: f64) { while (x < 3.0, x >= 0.5) { x += 1.0 } x += y }
fn f(a: f64[], b: f64[]) { for i in 0..len(a) { g(a[i], b[i]) } }`
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBeGreaterThan(0)
    const cpu = compile(text, 'cpu')
    const run = (m: typeof cpu) => {
      const x = Float64Array.from({ length: 9 }, (_, i) => i * 0.3 + 0.5)
      m.f!.core(x, x)
      return Array.from(x)
    }
    expect(run(lanes)).toEqual(run(cpu))
  })

  it('fails out of range as the scalar loop does (an array shorter than the loop)', () => {
    const lanes = compile(bessel, 'wasm')
    const scalar = compile(bessel, 'wasm', false, false)
    const err = (m: typeof lanes) => {
      try {
        m.f!.core(new Float64Array(3), 2, zs(6))
      } catch (e) {
        return (e as { code?: string }).code
      }
      return 'no error'
    }
    expect(err(lanes)).toBe('runtime/out-of-bounds')
    expect(err(scalar)).toBe('runtime/out-of-bounds')
  })
})

describe('map lanes and lanes that do not run', () => {
  it('reads no element for a lane whose condition is false, nor for one that has left its loop', () => {
    // k runs past the table's end in some lanes; only the lanes where k < len(t) read t[k]
    const text = `
fn g(x: f64, k: i32, t: f64[]) {
  if (k < len(t), ~) {
    x += t[k] * 2.0
  }
  while (k < len(t) && x < 9.0, k < 0) {
    x += t[k] + 1.0
    k += 3
  }
}
fn f(a: f64[], ks: i32[], t: f64[]) { for i in 0..len(a) { g(a[i], ks[i], t) } }`
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBeGreaterThan(0)
    const cpu = compile(text, 'cpu')
    const args = () => [
      Float64Array.from({ length: 12 }, (_, i) => i * 0.4 - 1),
      Int32Array.from({ length: 12 }, (_, i) => (i * 5) % 9),
      Float64Array.of(0.5, 1.5, 2.5, 0.25, 3),
    ]
    expectSameForward([cpu, lanes], args)
  })
})

/**
 * A random map: \`g(x, y, n)\` of random updates, \`if\`s and bounded \`while\`s whose trip counts
 * depend on the element, over f64 and i32 values (every operation kind of the lane code and some
 * computed lane by lane), mapped over three arrays.
 */
function randomMap(seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const f64s = ['x', 'y', 't'] as const
  const fexpr = (d: number, vars: readonly string[]): string => {
    if (d <= 0 || r() < 0.3) return pick([...vars, 'f64(n)', 'f64(c)', 's', `${(r() * 4 - 2).toFixed(2)}`])
    const k = r()
    const sub = () => fexpr(d - 1, vars)
    if (k < 0.45) return `(${sub()} ${pick(['+', '-', '*'])} ${sub()})`
    if (k < 0.55) return `(${sub()} / (abs(${sub()}) + 0.5))`
    if (k < 0.6) return `abs(${sub()})`
    if (k < 0.65) return `sqrt(abs(${sub()}))`
    if (k < 0.72) return `${pick(['min', 'max'])}(${sub()}, ${sub()})`
    if (k < 0.8) return `(${sub()}) ** 2`
    if (k < 0.88) return `${pick(['sin', 'cos', 'tanh'])}(${sub()})`
    return `-${pick(vars)}`
  }
  const iexpr = () => pick(['n + 1', 'n * 3 - 1', `n * ${Math.floor(r() * 2e9)}`, 'i32(x) % 7'])
  const cond = () =>
    pick([
      `${fexpr(1, f64s)} < ${fexpr(1, f64s)}`,
      `n > ${Math.floor(r() * 4)}`,
      `!(${fexpr(1, f64s)} >= 0.0) || n == c`,
      `abs(${fexpr(1, f64s)}) <= 1.0 && c != 2`,
    ])
  const stmts = (d: number, n: number): string[] =>
    Array.from({ length: n }, () => {
      const k = r()
      if (k < 0.45 || d <= 0) {
        // an update does not read its target
        const v = pick(f64s)
        return `${v} ${pick(['+=', '-='])} ${fexpr(
          2,
          f64s.filter((u) => u !== v),
        )}`
      }
      if (k < 0.6) return `c += ${iexpr()}`
      if (k < 0.75)
        return `if (${cond()}, ~) {\n${stmts(d - 1, 2).join('\n')}\n} else {\n${stmts(d - 1, 1).join('\n')}\n}`
      if (k < 0.85) return `SWAP(${pick(['x', 't'])}, y)`
      // a loop of 0 to 5 iterations, as many as the element says
      return `while (m < n % 6 && m < 5, m > 0) {\nm += 1\n${stmts(d - 1, 2).join('\n')}\n}`
    })
  return `
fn g(x: f64, y: f64, n: i32, s: f64) {
  t <- 0.0
  c: i32 <- 0
  m: i32 <- 0
${stmts(2, 6).join('\n')}
  m -> 0
  c -> 0
  t -> 0.0
}
fn f(a: f64[], b: f64[], ns: i32[], s: f64) {
  for i in 0..len(a) { g(a[i], b[i], ns[i], s) }
}`
}

describe('map lanes on random maps', () => {
  it('30 programs: the lanes give the bits of the scalar wasm code and the cpu backend', () => {
    let lanesUsed = 0
    for (let seed = 1; seed <= 30; seed++) {
      const text = randomMap(seed)
      let lanes: ReturnType<typeof compile>
      try {
        lanes = compile(text, 'wasm')
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${text}`)
      }
      if (lastMapLanes > 0) lanesUsed++
      const scalar = compile(text, 'wasm', false, false)
      const cpu = compile(text, 'cpu')
      const r = rng(seed * 31)
      const n = 2 + Math.floor(r() * 9)
      const a = Float64Array.from({ length: n }, () => r() * 6 - 3)
      const b = Float64Array.from({ length: n }, () => r() * 6 - 3)
      const ns = Int32Array.from({ length: n }, () => Math.floor(r() * 12))
      expectSameForward([cpu, scalar, lanes], () => [a.slice(), b.slice(), ns.slice(), 0.375])
    }
    // (nearly all are maps the lanes take: a body that inlines to updates only is left to loop pairing)
    expect(lanesUsed).toBeGreaterThanOrEqual(25)
  })
})

describe('elementSpans', () => {
  it('gives the first top-level statement naming each element alias and the last writing it', () => {
    const m = parse(`
fn f(e0: f64, e1: f64, e2: f64, e3: f64, t: f64) {
  t += 1.0
  if (t > 0.5, ~) {
    t += e1 * 2.0
  }
  e0 += t
  t += e0 * e2
  e0 -= 0.25
  t += e0
}`)
    const body = m.functions[0]!.body
    const el = (alias: string) => ({ array: 'a', alias, elem: 'f64' as const, written: true })
    const spans = elementSpans({
      body,
      elements: [el('e0'), el('e1')],
      blockElements: [
        { array: 'b', offset: 'o', c: 0, alias: 'e2', written: false },
        { array: 'b', offset: 'o', c: 1, alias: 'e3', written: false },
      ],
    } as unknown as MapLanesPlan)
    expect(Object.fromEntries(spans)).toEqual({
      e0: { first: 2, last: 4 },
      e1: { first: 1, last: -1 },
      e2: { first: 3, last: -1 },
    })
  })
})

describe('unreadElements', () => {
  it('gives the elements first named by a top-level SWAP with a scalar of the body that nothing names afterwards', () => {
    // (e0: swapped with d, which is dead after; e1: with u, read later; e2: named before its swap;
    // e3: swapped with another element; e4: swapped under a branch; e5: swapped with the loop variable's lane)
    const m = parse(`
fn f(e0: f64, e1: f64, e2: f64, e3: f64, e4: f64, e5: f64, d: f64, u: f64, w: f64, t: f64, i: f64) {
  t += e2
  SWAP(e0, d)
  SWAP(e1, u)
  SWAP(e2, w)
  SWAP(e3, e2)
  if (t > 0.5, ~) {
    SWAP(e4, w)
  }
  SWAP(e5, i)
  t += u
  d -> 0.0
}`)
    const body = m.functions[0]!.body
    const el = (alias: string) => ({ array: 'a', alias, elem: 'f64' as const, written: true })
    const plan = {
      body,
      variable: 'i',
      elements: [el('e0'), el('e1'), el('e4')],
      blockElements: ['e2', 'e3', 'e5'].map((alias, c) => ({ array: 'b', offset: 'o', c, alias, written: true })),
    } as unknown as MapLanesPlan
    expect([...unreadElements(plan, elementSpans(plan))].sort()).toEqual(['e0'])
  })
})

describe('map lanes: an element a[i] the body writes, read by another iteration through a varying index', () => {
  // a[i] is written (its lane alias, stored after the body); a[x] with x = idx[i] is another
  // iteration's element: two lanes must not see each other's write early (found by review: the
  // lanes read a[i + 1] after the partner lane had incremented it)
  const direct = `
fn f(a: f64[], b: f64[], idx: i32[], n: i32) {
  for i in 0..len(a) {
    a[i] += 1.0
    x <- idx[i]
    if (n > 0, ~) { b[i] += a[x] }
    x -> idx[i]
  }
}`
  const gathered = `
fn f(a: f64[], b: f64[], idx: i32[], n: i32) {
  for i in 0..len(a) {
    a[i] += 1.0
    x <- idx[i]
    k <- 0
    while (k < n, k > 0) { b[i] += a[x + 1] * a[x]; k += 1 }
    k -> n
    x -> idx[i]
  }
}`
  const args = (n: number, next: boolean) => () => [
    Float64Array.from({ length: n }, (_, i) => i * 10),
    new Float64Array(n),
    // indices within 0..n - 2, so that a[x + 1] is in range too
    Int32Array.from({ length: n }, (_, i) => Math.max(0, Math.min(next ? i + 1 : i - 1, n - 2))),
    2,
  ]
  for (const [name, source] of [
    ['a[x]', direct],
    ['a[x + 1] * a[x] (a gathered block)', gathered],
  ] as const)
    it(`${name}: the lanes are refused and the values are the interpreter's`, () => {
      const wasm = compile(source, 'wasm')
      expect(lastMapLanes).toBe(0)
      const cpu = compile(source, 'cpu')
      const reference = compile(source, 'interpreter', true)
      const scalar = compile(source, 'wasm', false, false)
      for (const n of [2, 3, 7, 8])
        for (const next of [true, false]) expectSameRuns([reference, cpu, scalar, wasm], args(n, next))
    })
})
