/**
 * Loops whose bounds read elements (the cpu backend's peeled first pass and copies per
 * pass) and pass `idle-first` / wasm `peel-ones` from any literal start, against the interpreter:
 * forwards, backwards, checks on and off, failures part-way through.
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, rev, TenetError, type TenetModule } from './index.js'

const registry = createRegistry().registerBackend(wasmBackend)
const engines = {
  'interpreter on': rev.with({ backend: 'interpreter' }),
  'interpreter off': rev.with({ backend: 'interpreter', checks: false }),
  'cpu on': rev.with({ backend: 'cpu' }),
  'cpu off': rev.with({ backend: 'cpu', checks: false }),
  'wasm on': rev.with({ backend: 'wasm', registry }),
  'wasm off': rev.with({ backend: 'wasm', registry, checks: false }),
}
type Engine = keyof typeof engines
const compile = (e: Engine, src: string): TenetModule => engines[e]([src] as unknown as TemplateStringsArray)
const bits = (x: number) => {
  const b = new DataView(new ArrayBuffer(8))
  b.setFloat64(0, x)
  return `${x}:${b.getBigUint64(0).toString(16)}`
}
const text = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    ArrayBuffer.isView(x) ? Array.from(x as Float64Array, (e) => bits(e)) : typeof x === 'number' ? bits(x) : x,
  )
function outcome(m: TenetModule, entry: string, args: unknown[], inverse: boolean): string {
  let out: unknown
  try {
    const f = (m as any)[entry]
    out = (inverse ? f.inverse : f)(...args)
  } catch (e) {
    if (!TenetError.isInstance(e)) return `non-tenet ${e}`
    const t = e as TenetError
    return `${t.code} | ${t.message} | ${t.line}:${t.column} | ${text(args)}`
  }
  return `${text(out)} | ${text(args)}`
}

/** Every engine against the interpreter with the same checks setting. */
function agree(
  src: string,
  entry: string,
  argLists: Array<() => unknown[]>,
  opts: { inverse?: boolean; engines?: Engine[] } = {},
): string[] {
  const mods = new Map<Engine, TenetModule>()
  for (const e of Object.keys(engines) as Engine[]) mods.set(e, compile(e, src))
  const problems: string[] = []
  for (const inverse of opts.inverse === false ? [false] : [false, true])
    for (const [k, args] of argLists.entries()) {
      const ref = {
        on: outcome(mods.get('interpreter on')!, entry, args(), inverse),
        off: outcome(mods.get('interpreter off')!, entry, args(), inverse),
      }
      for (const e of opts.engines ?? (['cpu on', 'cpu off', 'wasm on', 'wasm off'] as Engine[])) {
        const got = outcome(mods.get(e)!, entry, args(), inverse)
        const want = e.endsWith('on') ? ref.on : ref.off
        // (checks off: only where the checked run passes; an error there leaves the result undefined)
        if (e.endsWith('off') && !ref.on.startsWith('[') && !ref.on.startsWith('{') && !/^"?-?[\d.]/.test(ref.on))
          continue
        if (got !== want) problems.push(`${e}${inverse ? ' inverse' : ''} args#${k}:\n  got  ${got}\n  want ${want}`)
      }
    }
  return problems
}

describe('loops whose bounds read elements (cpu copies per pass, first pass before the loop)', () => {
  it('CSR rows of length -3..9 with a failing column index at every position', () => {
    const src = `fn f(y: f64[], rowptr: i32[], col: i32[], val: f64[], x: f64[]) {
  for i in 0..len(x) {
    for q in rowptr[i]..rowptr[i + 1] { y[col[q]] += val[q] * x[i] }
  }
}`
    const lists: Array<() => unknown[]> = []
    for (let len = -3; len <= 9; len++)
      for (let bad = -1; bad < Math.max(len, 0); bad++)
        lists.push(() => {
          const n = Math.max(len, 0)
          const rowptr = Int32Array.of(0, 2, 2 + len, 2 + len + 1)
          const col = Int32Array.from({ length: 20 }, (_, j) => j % 4)
          if (bad >= 0) col[2 + bad] = 7
          const val = Float64Array.from({ length: 20 }, (_, j) => j * 0.37 - 1.1)
          void n
          return [new Float64Array(4), rowptr, col, val, Float64Array.of(1.5, -0, 2.25)]
        })
    expect(agree(src, 'f', lists)).toEqual([])
  })

  it('a deallocation check failing at every position of rows 0..9 (the same error, the same writes restored)', () => {
    const src = `fn f(y: f64[], r: i32[], v: f64[], m: f64[]) {
  for i in 0..len(y) {
    for q in r[i]..r[i + 1] {
      t: f64 <- 0.0
      t += v[q]
      y[i] += t * 2.0
      t -= v[q] * m[q]
      t -> 0.0
    }
  }
}
fn g(y: f64[], r: i32[], v: f64[], m: f64[]) {
  for i in 0..len(y) {
    for q in reverse r[i]..=r[i + 1] {
      t: f64 <- 0.0
      t += sin(v[q])
      y[i] += t * 2.0
      t -= sin(v[q]) * m[q]
      t -> 0.0
    }
  }
}`
    const lists: Array<() => unknown[]> = []
    for (let len = 0; len <= 9; len++)
      for (let bad = -1; bad < len; bad++)
        lists.push(() => {
          const m = new Float64Array(14).fill(1)
          if (bad >= 0) m[1 + bad] = 3
          return [
            Float64Array.of(0.25, -0, 1),
            Int32Array.of(0, 1, 1 + len, 2 + len),
            Float64Array.from({ length: 14 }, (_, j) => j / 3 - 1.5),
            m,
          ]
        })
    expect(agree(src, 'f', lists)).toEqual([])
    expect(agree(src, 'g', lists)).toEqual([])
  })

  it('bounds converted from f64 elements (NaN, fractions, negative)', () => {
    const src = `fn f(s: f64, a: f64[], v: f64[]) {
  for q in i32(v[0])..i32(v[1]) { s += a[q] * 1.5 }
  for q in reverse i32(v[0])..=i32(v[1]) { s -= a[q] * 0.5 }
}`
    const lists = [
      [0, 4],
      [Number.NaN, 3],
      [1.5, 4.7],
      [-0.9, 2.9],
      [3, Number.NaN],
      [-1, 2],
      [2.5, 9.5],
    ].map(([lo, hi]) => () => [0.25, Float64Array.from({ length: 8 }, (_, j) => j + 0.5), Float64Array.of(lo!, hi!)])
    expect(agree(src, 'f', lists)).toEqual([])
  })

  it('inclusive, reverse and by -1 rows; bounds at the i32 limits', () => {
    const src = `fn f(s: f64, a: f64[], r: i32[]) {
  for i in r[0]..=r[1] { s += a[i - r[0]] * 2.0 }
  for i in reverse r[0]..r[1] { s -= a[r[1] - 1 - i] * 0.5 }
  for i in r[1]..=r[0] by -1 { s += a[r[1] - i] * 3.0 }
  for i in reverse r[1]..=r[0] by -1 { s -= a[i - r[0]] * 0.75 }
  for i in reverse r[1]..r[0] by -1 { s += a[i - r[0]] * 1.5 }
}`
    const lists: Array<() => unknown[]> = []
    const M = 2147483647
    for (const [lo, hi] of [
      [0, -1],
      [0, 0],
      [0, 4],
      [3, 9],
      [M - 3, M],
      [M, M],
      [-M - 1, -M + 4],
      [-M - 1, -M - 1],
      [M, -M - 1],
      [5, 2],
      [0, 11],
    ])
      lists.push(() => [0.25, Float64Array.from({ length: 12 }, (_, j) => j + 0.5), Int32Array.of(lo!, hi!)])
    expect(agree(src, 'f', lists)).toEqual([])
  })

  it('bounds array written inside the row (its own elements, and the next row bound)', () => {
    const src = `fn f(y: f64[], r: i32[], w: i32[]) {
  for i in 0..len(y) {
    for q in r[i]..r[i + 1] { y[i] += f64(q) * 0.5; w[q] += 1 }
  }
}`
    const lists: Array<() => unknown[]> = []
    for (let len = 0; len <= 7; len++)
      lists.push(() => [new Float64Array(3), Int32Array.of(0, len, len + 2, len + 3), new Int32Array(12)])
    expect(agree(src, 'f', lists)).toEqual([])
  })

  it('nested rows whose bounds read elements, with a check failing inside', () => {
    const src = `fn f(y: f64[], r: i32[], c: i32[], v: f64[]) {
  for i in 0..len(y) {
    for q in r[i]..r[i + 1] {
      for p in c[q]..c[q + 1] { y[i] += v[p] * f64(q) }
    }
  }
}`
    const lists: Array<() => unknown[]> = []
    for (let len = 0; len <= 6; len++)
      for (const vlen of [30, 5])
        lists.push(() => [
          new Float64Array(2),
          Int32Array.of(0, len, len + 1),
          Int32Array.from({ length: 10 }, (_, j) => j * 3 - (j % 2)),
          Float64Array.from({ length: vlen }, (_, j) => j / 3),
        ])
    expect(agree(src, 'f', lists)).toEqual([])
  })

  it('a row with a call in its body (two per pass) and an ancilla', () => {
    const src = `fn g(a: f64, b: f64) { a += sin(b) * 2.0 }
fn f(y: f64[], r: i32[], v: f64[]) {
  for i in 0..len(y) {
    for q in r[i]..r[i + 1] {
      t: f64 <- v[q] * 2.0
      g(y[i], t)
      t -> v[q] * 2.0
    }
  }
}`
    const lists: Array<() => unknown[]> = []
    for (let len = -1; len <= 6; len++)
      for (const vlen of [10, 3])
        lists.push(() => [
          new Float64Array(2),
          Int32Array.of(0, len, len + 2),
          Float64Array.from({ length: vlen }, (_, j) => j / 3 + 0.1),
        ])
    expect(agree(src, 'f', lists)).toEqual([])
  })
})

describe('element-bound rows with carried elements, promoted elements, array ancillas and branches', () => {
  const F = (n: number) => Float64Array.from({ length: n }, (_, j) => j * 0.375 - 1)
  const rows: Array<() => unknown[]> = []
  for (let lo = 0; lo < 3; lo++)
    for (let len = -2; len <= 9; len++)
      for (const n of [12, 5]) rows.push(() => [0.5, F(n), Int32Array.of(lo, lo + len), new Float64Array(3)])
  const programs: Array<[string, string]> = [
    [
      'carried element',
      `fn f(s: f64, a: f64[], r: i32[], w: f64[]) {
  for q in r[0]..r[1] { a[q + 1] += a[q] * 0.5 }
  s += a[0]
}`,
    ],
    [
      'promoted element',
      `fn f(s: f64, a: f64[], r: i32[], w: f64[]) {
  for q in r[0]..r[1] { w[1] += a[q] * a[q]; w[2] -= w[1] * 0.25 }
  s += w[2]
}`,
    ],
    [
      'array ancilla per iteration',
      `fn f(s: f64, a: f64[], r: i32[], w: f64[]) {
  for q in r[0]..r[1] {
    t: f64[] <- zeros(2)
    t[0] += a[q]
    t[1] += t[0] * 3.0
    w[0] += t[1]
    t[1] -= t[0] * 3.0
    t[0] -= a[q]
    t -> zeros(2)
  }
}`,
    ],
    [
      'branch on the loop variable',
      `fn f(s: f64, a: f64[], r: i32[], w: f64[]) {
  for q in r[0]..r[1] {
    if (q % 2 == 0, ~) { w[0] += a[q] } else { w[1] -= a[q] * 2.0 }
  }
}`,
    ],
    [
      'while inside',
      `fn f(s: f64, a: f64[], r: i32[], w: f64[]) {
  for q in r[0]..r[1] {
    k: i32 <- 0
    while (k < 2, k > 0) { w[0] += a[q]; k += 1 }
    k -= 2
    k -> 0
  }
}`,
    ],
    [
      'loads before and after the row of elements it writes',
      `fn f(s: f64, a: f64[], r: i32[], w: f64[]) {
  s += a[0] * 2.0 + a[1]
  w[0] += a[r[0]]
  for q in r[0]..r[1] { a[q - r[0]] += 1.5; a[1] *= 1.25 }
  s += a[0] * 3.0 + a[1]
  w[1] += a[r[0]] + a[r[1] - r[0]]
}`,
    ],
    [
      'a row reading elements the row before wrote',
      `fn f(s: f64, a: f64[], r: i32[], w: f64[]) {
  for q in r[0]..r[1] { w[0] += a[q] }
  for q in r[0]..r[1] { a[q] += w[0] * 0.5 }
  for q in reverse r[0]..r[1] { w[1] += a[q] * a[0] }
}`,
    ],
    [
      'bounds from the written array',
      `fn f(s: f64, a: f64[], r: i32[], w: f64[]) {
  for q in r[0]..r[1] { s += a[q]; r[1] += 0 }
}`,
    ],
  ]
  for (const [name, src] of programs)
    it(name, () => {
      let problems: string[]
      try {
        problems = agree(src, 'f', rows)
      } catch (e) {
        problems = [`compile: ${(e as Error).message.split('\n')[0]}`]
      }
      expect(problems).toEqual([])
    })
})

describe('idle-first and peel-ones', () => {
  it('loops starting near 2^31 - 1 (peel from a large literal start; idle-first to 2^31 - 1)', () => {
    const src = `fn f(p: f64, x: f64, n: i32) {
  for i in 2147483645..=n { p *= f64(i - 2147483644) }
  for i in 2147483646..n { x += p * f64(i) }
}`
    const lists = [2147483644, 2147483645, 2147483646, 2147483647, -5].map((n) => () => [1.5, 0.25, n])
    expect(agree(src, 'f', lists)).toEqual([])
  })

  it('idle-first on constants: -0, NaN ancillas, swaps of +0 and -0, i32 wraps', () => {
    const src = `fn f(y: f64, k: i32, n: i32) {
  z: f64 <- -0.0
  w: f64 <- 0.0
  a: i32 <- 2147483647
  for i in 1..=n {
    y -= z
    SWAP(z, w)
    SWAP(z, w)
    a += i - 1
    k += a * 0
    y *= f64(i)
  }
  a -> 2147483647
  w -> 0.0
  z -> -0.0
}
fn g(y: f64, n: i32) {
  z: f64 <- -0.0
  for i in 1..=n { y += z; y *= f64(i) }
  z -> -0.0
}
fn h(y: f64, n: i32) {
  z: f64 <- 0.0
  for i in 0..n { y += z; z += f64(i) }
  for i in 0..n { z -= f64(i) }
  z -> 0.0
}`
    for (const entry of ['f', 'g', 'h'])
      expect(
        agree(
          src,
          entry,
          [-1, 0, 1, 2, 5].flatMap((n) => [
            () => (entry === 'f' ? [0.5, 3, n] : [-0.25, n]),
            () => (entry === 'f' ? [Number.NaN, 3, n] : [2.5, n]),
          ]),
        ),
        entry,
      ).toEqual([])
  })

  it('wasm peel-ones from literal starts 2..7 and near 2^31: bounds failing in the peeled copy, writes before it, nested in a loop, inverse', () => {
    const src = `fn f(y: f64[], x: f64[], n: i32) {
  for i in 3..n { y[i - 3] += x[i - 3] * f64(i) }
  for i in 7..=n { y[0] *= f64(i) / 7.0 }
}
fn g(y: f64[], n: i32, m: i32) {
  for j in 0..m {
    for i in 2..n { y[j] -= f64(i) * y[j + 1]; y[j + 1] /= f64(i) }
  }
}
fn h(s: f64, a: f64[], n: i32) {
  for i in 2147483645..n { s += a[i - 2147483645] * f64(i) }
  for i in 2147483646..=n { s *= f64(i - 2147483645) }
}`
    const F = (n: number) => Float64Array.from({ length: n }, (_, j) => j * 0.375 - 1)
    expect(
      agree(
        src,
        'f',
        [-1, 2, 3, 4, 5, 6, 7, 8, 9, 10].flatMap((n) => [
          () => [F(6), F(6), n],
          () => [F(1), F(6), n],
          () => [F(6), F(0), n],
        ]),
      ),
    ).toEqual([])
    expect(
      agree(
        src,
        'g',
        [
          [1, 2],
          [3, 2],
          [4, 3],
          [5, 1],
          [6, 0],
          [3, 4],
        ].map(([n, m]) => () => [F(4), n, m]),
      ),
    ).toEqual([])
    const M = 2147483647
    expect(
      agree(
        src,
        'h',
        [M - 3, M - 2, M - 1, M].flatMap((n) => [() => [0.5, F(3), n], () => [0.5, F(1), n]]),
      ),
    ).toEqual([])
  })

  it('a constant overwritten by a call before the loop', () => {
    const src = `fn set(t: f64, v: f64) { t += v }
fn f(y: f64, v: f64, n: i32) {
  t: f64 <- 1.0
  set(t, v)
  for i in 1..=n { y *= t }
  ~set(t, v)
  t -> 1.0
}`
    expect(
      agree(
        src,
        'f',
        [0, 1, 2, 3].map((n) => () => [1.25, 0.5, n]),
      ),
    ).toEqual([])
  })
})

import { grad, gradient, hessian } from './index.js'

describe('gradients through rows whose bounds read elements and idle first iterations', () => {
  const cases: Array<[string, string, Array<() => unknown[]>]> = [
    [
      'csr rows 0..9',
      `fn f(s: f64, y: f64[], r: i32[], c: i32[], v: f64[], x: f64[]) {
  for i in 0..len(y) {
    for q in r[i]..r[i + 1] { y[i] += v[q] * x[c[q]] }
  }
  for i in 0..len(y) { s += y[i] * y[i] }
}`,
      Array.from({ length: 10 }, (_, len) => () => [
        0,
        new Float64Array(3),
        Int32Array.of(0, len, len + 1, len + 3),
        Int32Array.from({ length: 14 }, (_, j) => (j * 5) % 4),
        Float64Array.from({ length: 14 }, (_, j) => j / 7 - 0.6),
        Float64Array.of(0.5, -1.25, 2, 3.5),
      ]),
    ],
    [
      'rows in reverse with a call',
      `fn g(a: f64, b: f64) { a += sin(b) * b }
fn f(s: f64, y: f64[], r: i32[], v: f64[]) {
  for i in 0..len(y) {
    for q in reverse r[i]..=r[i + 1] { g(y[i], v[q]) }
  }
  for i in 0..len(y) { s += y[i] * y[i] }
}`,
      Array.from({ length: 9 }, (_, len) => () => [
        0,
        new Float64Array(2),
        Int32Array.of(1, len, len + 1),
        Float64Array.from({ length: 14 }, (_, j) => j / 7 - 0.6),
      ]),
    ],
    [
      'a product and a factorial from 1',
      `fn imul_int(out: i32, x: i32, anc: i32) {
  anc += out * x
  out -= div(anc, x)
  SWAP(out, anc)
}
fn f(s: f64, x: f64, n: i32) {
  fact: i32 <- 1
  anc: i32 <- 0
  for i in 1..=n { imul_int(fact, i, anc) }
  p: f64 <- 1.0
  for i in 1..=n { p *= x + f64(i) }
  s += p / f64(fact)
  for i in reverse 1..=n { p /= x + f64(i) }
  p -> 1.0
  for i in reverse 1..=n { ~imul_int(fact, i, anc) }
  anc -> 0
  fact -> 1
}`,
      [0, 1, 2, 3, 6].map((n) => () => [0, 0.75, n]),
    ],
  ]
  for (const [name, src, lists] of cases)
    it(`${name}: cpu and wasm gradients (fused and two-sweep, checks on and off) agree with the interpreter's`, () => {
      const problems: string[] = []
      for (const checks of [true, false]) {
        const ref = compile(checks ? 'interpreter on' : 'interpreter off', src)
        for (const e of (checks ? ['cpu on', 'wasm on'] : ['cpu off', 'wasm off']) as Engine[]) {
          const m = compile(e, src)
          for (const fuse of [true, false])
            for (const [k, args] of lists.entries()) {
              const run = (mm: TenetModule) => {
                try {
                  return text(grad((mm as any).f, { loss: 0, fuse })(...args()))
                } catch (err) {
                  return `error ${(err as Error).message}`
                }
              }
              const got = run(m),
                want = run(ref)
              if (got !== want) problems.push(`${e} fuse=${fuse} #${k}\n got  ${got}\n want ${want}`)
            }
        }
      }
      expect(problems).toEqual([])
    })
})

describe('an idle first iteration under gradients and Hessians', () => {
  it('a product by f64(i) * 1.0 from 1 with a constant ancilla swapped twice: values, both gradients and the Hessian agree', () => {
    const src = `fn f(s: f64, x: f64, n: i32) {
  p: f64 <- 0.0
  p += x * x
  q: f64 <- 0.0
  for i in 1..=n { q += f64(i - 1) * 0.5; p *= f64(i) * 1.0; SWAP(p, q); SWAP(p, q) }
  s += p * x + q
  for i in reverse 1..=n { p /= f64(i) * 1.0; q -= f64(i - 1) * 0.5 }
  q -> 0.0
  p -= x * x
  p -> 0.0
}`
    const problems: string[] = []
    for (const checks of [true, false]) {
      const run = (e: Engine) => {
        const m = compile(e, src) as any
        return [0, 1, 2, 3, 5].map((n) => {
          try {
            return text([
              m.f(0, 0.7, n),
              gradient(m.f, [0, 0.7, n], { loss: 0 }),
              grad(m.f, { loss: 0, fuse: false })(0, 0.7, n),
              hessian(m.f, [0, 0.7, n], { loss: 0 }),
            ])
          } catch (err) {
            return `error ${(err as Error).message}`
          }
        })
      }
      const want = run(checks ? 'interpreter on' : 'interpreter off')
      for (const e of (checks ? ['cpu on', 'wasm on'] : ['cpu off', 'wasm off']) as Engine[]) {
        const got = run(e)
        got.forEach((g, k) => {
          if (g !== want[k]) problems.push(`${e} #${k}\n got  ${g}\n want ${want[k]}`)
        })
      }
    }
    expect(problems).toEqual([])
  })
})
