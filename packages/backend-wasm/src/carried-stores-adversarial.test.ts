/**
 * Review 15b: adversarial programs for pass `carried-stores`, `sink-ancillas` and uniform powers.
 * Every engine (cpu, wasm with and without SIMD, checks off) against the reference interpreter
 * (checks off, and on where it runs), forwards and backwards, with changing lengths.
 */
import { describe, expect, it } from 'vitest'
import { compile, lastMapLanes, lastUniformPowers } from './test-util.js'

const exact = (v: unknown) => (typeof v !== 'number' ? v : Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : v)
const text = (xs: unknown[]) =>
  JSON.stringify(xs.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v))))
export function outcome(call: () => unknown): { text: string; values?: unknown[] } {
  try {
    const values = call() as unknown[]
    return { text: text(values), values }
  } catch (e) {
    return { text: String(e).replace(/^(\w*Error: )?(cpu|wasm|interpreter)[^:]*: /, '') }
  }
}
const copy = (a: unknown[]) => a.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v))

/** Compares each engine with the interpreter (checks off) on every argument list, forwards and backwards. */
export function compareAll(source: string, args: unknown[][], opts: { errors?: boolean } = {}) {
  const ref = compile(source, 'interpreter', false).f!
  const engines: Array<[string, ReturnType<typeof compile>['f']]> = [
    ['cpu', compile(source, 'cpu', false).f!],
    ['wasm', compile(source, 'wasm', false).f!],
    ['wasm-nosimd', compile(source, 'wasm', false, false).f!],
  ]
  const bad: string[] = []
  for (const a of args) {
    const want = outcome(() => ref(...copy(a)))
    const wantInv = want.values ? outcome(() => ref.inverse(...copy(want.values!))) : undefined
    for (const [name, f] of engines) {
      const got = outcome(() => f!(...copy(a)))
      if (got.text !== want.text && (opts.errors || want.values))
        bad.push(`${name} ${text(a)}: got ${got.text} want ${want.text}`)
      else if (got.values && wantInv) {
        const inv = outcome(() => f!.inverse(...copy(got.values!)))
        if (inv.text !== wantInv.text) bad.push(`${name} inverse ${text(a)}: got ${inv.text} want ${wantInv.text}`)
      }
    }
  }
  return bad
}

const cs = (n: number, k = 0) =>
  [
    Float64Array.from({ length: n }, (_, i) => Math.sin(i + 1 + k) / 2),
    new Float64Array(n).fill(-0),
    Float64Array.from({ length: n }, (_, i) => (i === n - 1 ? Number.NaN : -0)),
  ][k % 3]!
const XS = [-1, 0.5, -0, 0, Number.POSITIVE_INFINITY, Number.NaN]

export const PROGRAMS: Record<string, { src: string; args: () => unknown[][] }> = {
  // bounds are parameters: zero-trip both ways, one trip, ranges near the i32 limits
  paramBoundsUp: {
    src: `fn f(y: f64, c: f64[], x: f64, lo: i32, hi: i32) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for k in lo..hi { a[k - lo + 1] += a[k - lo] * x + c[k - lo + 1] }
  }
  y += a[hi - lo]
  ~routine
}`,
    args: () => {
      const out: unknown[][] = []
      for (const [lo, hi] of [
        [0, 3],
        [5, 5],
        [5, 6],
        [2147483640, 2147483647],
        [2147483646, 2147483647],
        [-2147483648, -2147483645],
        [-2147483648, -2147483648],
        [0, 0],
        [3, 0],
        [1, 4],
      ])
        for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, cs(8, k), x, lo, hi])
      return out
    },
  },
  paramBoundsDown: {
    src: `fn f(y: f64, c: f64[], x: f64, lo: i32, hi: i32) {
  routine {
    a: f64[] <- zeros(len(c))
    a[hi - lo + 1] += c[0]
    for k in hi..=lo by -1 { a[k - lo] += a[k - lo + 1] * x + c[k - lo] }
  }
  y += a[0]
  ~routine
}`,
    args: () => {
      const out: unknown[][] = []
      for (const [lo, hi] of [
        [0, 3],
        [0, 0],
        [0, -1],
        [2147483640, 2147483646],
        [-2147483648, -2147483642],
        [-2147483648, -2147483648],
        [2, 3],
      ])
        for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, cs(9, k), x, lo, hi])
      return out
    },
  },
  reverseParam: {
    src: `fn f(y: f64, c: f64[], x: f64, lo: i32, hi: i32) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += x
    for k in reverse hi..=lo by -1 { a[k - lo + 1] += a[k - lo] * x + c[k - lo] }
  }
  y += a[hi - lo + 1] * c[0]
  ~routine
}`,
    args: () => {
      const out: unknown[][] = []
      for (const [lo, hi] of [
        [0, 3],
        [0, 0],
        [0, -1],
        [-2147483648, -2147483643],
        [2147483640, 2147483645],
      ])
        for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, cs(9, k), x, lo, hi])
      return out
    },
  },
  // the read after the loop inside both branches, and a second read
  branches: {
    src: `fn f(y: f64, z: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] }
  }
  if (x > 0.0, ~) { y += a[len(c) - 1] } else { y -= a[len(c) - 1] * 2.0 }
  z += a[len(c) - 1] * a[len(c) - 1]
  ~routine
}`,
    args: () => {
      const out: unknown[][] = []
      for (const n of [1, 2, 3, 7, 1, 4]) for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, 0, cs(n, k), x])
      return out
    },
  },
  // written again after the loop before the read
  rewritten: {
    src: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] }
    a[len(c) - 1] += x
  }
  y += a[len(c) - 1]
  ~routine
}`,
    args: () => {
      const out: unknown[][] = []
      for (const n of [1, 2, 3, 7, 1, 4]) for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, cs(n, k), x])
      return out
    },
  },
  // the read's index spelled through len of another array of the same length
  lenOfOther: {
    src: `fn f(y: f64, c: f64[], d: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] }
  }
  y += a[len(d) - 1]
  ~routine
}`,
    args: () => {
      const out: unknown[][] = []
      for (const n of [1, 2, 3, 7])
        for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, cs(n, k), cs(n, 0), x])
      return out
    },
  },
  // the read uses the loop's bound variable and len; index equal only modulo 2^32
  modulo: {
    src: `fn f(y: f64, c: f64[], x: f64, n: i32) {
  routine {
    a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..n { a[i] += a[i - 1] * x + c[i] }
  }
  y += a[n + 2147483647 + 2147483647 + 1]
  ~routine
}`,
    args: () => {
      const out: unknown[][] = []
      for (const n of [1, 2, 3, 7, 0]) for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, cs(8, k), x, n])
      return out
    },
  },
  // two carried arrays, one loop, reads of both after
  twoArrays: {
    src: `fn f(y: f64, c: f64[], x: f64) {
  routine {
    a: f64[] <- zeros(len(c))
    b: f64[] <- zeros(len(c))
    a[0] += c[0]
    b[0] += x
    for i in 1..len(c) {
      a[i] += a[i - 1] * x + c[i]
      b[i] += b[i - 1] - a[i] * 0.5
    }
  }
  y += a[len(c) - 1] - b[len(c) - 1]
  ~routine
}`,
    args: () => {
      const out: unknown[][] = []
      for (const n of [1, 2, 3, 7, 1, 5]) for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, cs(n, k), x])
      return out
    },
  },
  // len of the array after the loop and a read at an offset parameter
  offset: {
    src: `fn f(y: f64, c: f64[], x: f64, o: i32) {
  routine {
    a: f64[] <- zeros(len(c) + o)
    a[o] += c[0]
    for i in 1..len(c) { a[i + o] += a[i - 1 + o] * x + c[i] }
  }
  y += a[len(a) - 1] + a[o + len(c) - 1]
  ~routine
}`,
    args: () => {
      const out: unknown[][] = []
      for (const n of [1, 2, 3, 7]) for (const o of [0, 1, 3]) for (const x of XS) out.push([-0, cs(n, 0), x, o])
      return out
    },
  },
}

export const VARIANTS: Record<string, string> = {
  n: `fn f(y: f64, c: f64[], x: f64, n: i32) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..n { a[i] += a[i - 1] * x + c[i] } }
  y += a[n - 1]
  ~routine }`,
  lo: `fn f(y: f64, c: f64[], x: f64, lo: i32) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in lo..len(c) { a[i] += a[i - 1] * x + c[i] } }
  y += a[len(c) - 1]
  ~routine }`,
  incl: `fn f(y: f64, c: f64[], x: f64, n: i32) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..=n { a[i] += a[i - 1] * x + c[i] } }
  y += a[n]
  ~routine }`,
  down: `fn f(y: f64, c: f64[], x: f64, n: i32) {
  routine { a: f64[] <- zeros(len(c))
    a[len(c) - 1] += c[0]
    for i in len(c) - 2..n by -1 { a[i] += a[i + 1] * x + c[i] } }
  y += a[n + 1]
  ~routine }`,
  f32: `fn f(y: f64, c: f64[], x: f64) {
  routine { a: f32[] <- zeros(len(c))
    a[0] += f32(c[0])
    for i in 1..len(c) { a[i] += a[i - 1] * f32(x) + f32(c[i]) } }
  y += f64(a[len(c) - 1])
  ~routine }`,
  neg: `fn f(y: f64, c: f64[], x: f64) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] -= a[i - 1] * x + c[i] } }
  y += a[len(c) - 1]
  ~routine }`,
  sub: `fn f(y: f64, c: f64[], x: f64) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] - x * c[i] } }
  y -= a[len(c) - 1]
  ~routine }`,
  stride2: `fn f(y: f64, c: f64[], x: f64) {
  routine { a: f64[] <- zeros(2 * len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[2 * i] += a[2 * i - 2] * x + c[i] } }
  y += a[2 * len(c) - 2]
  ~routine }`,
  inner: `fn f(y: f64[], c: f64[], x: f64) {
  for j in 0..len(y) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] * y[j] } }
  y[j] += a[len(c) - 1]
  ~routine } }`,
  twice: `fn f(y: f64, c: f64[], x: f64) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] } }
  y += a[len(c) - 1]
  ~routine
  routine { b: f64[] <- zeros(len(c))
    b[0] += y
    for i in 1..len(c) { b[i] += b[i - 1] * x + c[i] } }
  y += b[len(c) - 1]
  ~routine }`,
  noRoutine: `fn f(y: f64, c: f64[], x: f64) {
  a: f64[] <- zeros(len(c))
  a[0] += c[0]
  for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] }
  y += a[len(c) - 1]
  for i in reverse 1..len(c) { a[i] -= a[i - 1] * x + c[i] }
  a[0] -= c[0]
  a -> zeros(len(c)) }`,
  nonneg: `fn f(y: f64, c: f64[], x: f64) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] } }
  y += a[len(c) - 1] * 2.0 + a[-1 + len(c)]
  ~routine }`,
}

const plainArgs = () => {
  const out: unknown[][] = []
  for (const n of [1, 2, 3, 7, 1, 5, 2]) for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, cs(n, k), x])
  return out
}
const nArgs = () => {
  const out: unknown[][] = []
  for (const n of [-3, -1, 0, 1, 2, 3, 6, 7, 8, 1, 0])
    for (let k = 0; k < 3; k++) for (const x of XS) out.push([-0, cs(8, k), x, n])
  return out
}
const innerArgs = () => {
  const out: unknown[][] = []
  for (const n of [1, 2, 3, 7, 1, 5])
    for (let k = 0; k < 3; k++) for (const x of XS) out.push([Float64Array.from([-0, 0.5, 1]), cs(n, k), x])
  return out
}
for (const [name, src] of Object.entries(VARIANTS))
  PROGRAMS[`v_${name}`] = {
    src,
    args: ['n', 'incl', 'down', 'lo'].includes(name) ? nArgs : name === 'inner' ? innerArgs : plainArgs,
  }

PROGRAMS.nestedInner = {
  src: `fn f(y: f64, e: f64[], c: f64[], d: f64[], x: f64) {
  a: f64[] <- zeros(len(c))
  a[0] += c[0]
  for i in 1..len(c) {
    a[i] += a[i - 1] * x + c[i]
    for j in 0..len(d) { e[j] += d[j] * c[i] }
  }
  y += a[len(c) - 1]
  for i in reverse 1..len(c) { a[i] -= a[i - 1] * x + c[i] }
  a[0] -= c[0]
  a -> zeros(len(c))
}`,
  args: () => {
    const out: unknown[][] = []
    for (const n of [1, 2, 3, 7, 1, 4])
      for (const m of [0, 1, 5]) for (const x of XS) out.push([-0, new Float64Array(m), cs(n, 0), cs(m, 1), x])
    return out
  },
}
PROGRAMS.callAfter = {
  src: `fn g(y: f64, a: f64[]) { y += a[len(a) - 1] * 2.0 }
fn f(y: f64, c: f64[], x: f64) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] } }
  y += a[len(c) - 1]
  g(y, a)
  ~routine }`,
  args: plainArgs,
}
PROGRAMS.runAfter = {
  src: `fn f(y: f64, z: f64, w: f64, c: f64[], x: f64) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..len(c) { a[i] += a[i - 1] * x + c[i] } }
  y += a[len(c) - 1]
  z += a[len(c) - 1] * x
  w += a[len(c) - 1] * a[len(c) - 1] + x
  y += a[len(c) - 1] * c[0]
  ~routine }`,
  args: () => plainArgs().map(([y, c, x]) => [y, 0, -0, c, x]),
}

describe('carried-stores adversarial programs', () => {
  for (const [name, p] of Object.entries(PROGRAMS))
    it(`${name}: every engine gives the interpreter's bits`, () => {
      expect(compareAll(p.src, p.args()).slice(0, 5)).toEqual([])
    })
})

// Fix (verified locally): in \`FunctionEmitter.update\` (both dead-store paths of codegen.ts), where the
// target is not \`inBounds\`, emit \`this.address(array, index, loc, false, shown)\` and \`drop\` before
// computing the value: the guarded copy keeps the bounds check, the unguarded (range-versioned)
// copy, whose indices are checked up front, stays store-free.
describe('carried-stores and the bounds of the dropped stores (wasm, checks off)', () => {
  // The loop writes a[8] (length 8) in its last iteration: the interpreter with checks off, and
  // wasm with the pass switched off, raise "index 8 is out of bounds for `a`"; with the pass on
  // the store is dropped with its bounds check (and the read after the loop takes the local), so
  // wasm returns a value.
  const src = `fn f(y: f64, c: f64[], x: f64, n: i32) {
  routine { a: f64[] <- zeros(len(c))
    a[0] += c[0]
    for i in 1..n { a[i] += a[i - 1] * x + c[0] } }
  y += a[n - 1]
  ~routine }`
  const args = () => [-0, Float64Array.from({ length: 8 }, (_, i) => Math.sin(i + 1) / 2), 0.5, 9]
  it('an out-of-range write of a carried history array raises the interpreter’s error on wasm', () => {
    const want = outcome(() => compile(src, 'interpreter', false).f!(...args())).text
    expect(want).toMatch(/index 8 is out of bounds for `a`/)
    for (const simd of [true, false])
      expect(outcome(() => compile(src, 'wasm', false, simd).f!(...args())).text, `simd ${simd}`).toBe(want)
  })
  it('a write below 0 of a Horner accumulator (a loop going down past 0) raises the interpreter’s error on wasm', () => {
    const down = `fn f(y: f64, c: f64[], x: f64, lo: i32) {
  routine { a: f64[] <- zeros(len(c))
    a[len(c) - 1] += c[len(c) - 1]
    for k in len(c) - 2..=lo by -1 { a[k] += a[k + 1] * x + c[0] } }
  y += a[lo]
  ~routine }`
    const args = () => [-0, Float64Array.from({ length: 8 }, (_, i) => Math.sin(i + 1) / 2), 0.5, -2]
    const want = outcome(() => compile(down, 'interpreter', false).f!(...args())).text
    expect(want).toMatch(/index -1 is out of bounds for `a`/)
    expect(outcome(() => compile(down, 'wasm', false).f!(...args())).text).toBe(want)
  })
  it('(control) with the pass switched off, wasm raises it', async () => {
    const { disabledPasses } = await import('@tenet/ir/backend')
    disabledPasses.add('carried-stores')
    try {
      const want = outcome(() => compile(src, 'interpreter', false).f!(...args())).text
      expect(outcome(() => compile(src, 'wasm', false).f!(...args())).text).toBe(want)
    } finally {
      disabledPasses.delete('carried-stores')
    }
  })
})

const PXS = [0, -0, 1, -1, 0.5, -2.5, 3.75, 5e-324, 1e200, Infinity, -Infinity, NaN, 1.1, 0.3]
const pxs = (n: number) => Float64Array.from({ length: n }, (_, i) => PXS[i % PXS.length]!)
const wrap = (pre: string, e: string, post: string, pt = 'f64') => `fn g(out: f64, x: f64, p: ${pt}) {
  ${pre}
  t <- 0.0
  t += ${e}
  if (t > 0.4, ~) { out += t } else { out -= t * 3.0 }
  t -= ${e}
  t -> 0.0
  ${post}
}
fn f(out: f64[], x: f64[], p: ${pt}) { for i in 0..len(x) { g(out[i], x[i], p) } }`
const V_pow: Record<string, string> = {
  base: wrap('', 'x ** p', ''),
  localExp: wrap('q <- p + 1.0', 'x ** q', 'q -> p + 1.0'),
  updatedExp: wrap('q <- 0.0\n  q += p\n  q *= 2.0', 'x ** q', 'q /= 2.0\n  q -= p\n  q -> 0.0'),
  xdep: wrap('q <- 0.0\n  q += x', 'x ** (q * 0.0 + p)', 'q -= x\n  q -> 0.0'),
  nested: wrap('', '(x ** p) ** p', ''),
  twoPow: wrap('', 'x ** p + (x * 0.5) ** p', ''),
  negExp: wrap('', 'x ** (-p)', ''),
  i32local: wrap('m <- p - 1', 'x ** m', 'm -> p - 1', 'i32'),
  f32: `fn g(out: f64, x: f64, p: f64) {
  t <- 0.0
  t += f64(f32(x) ** f32(p))
  if (t > 0.4, ~) { out += t } else { out -= t * 3.0 }
  t -= f64(f32(x) ** f32(p))
  t -> 0.0
}
fn f(out: f64[], x: f64[], p: f64) { for i in 0..len(x) { g(out[i], x[i], p) } }`,
}
it('uniform powers in map lanes give the interpreter’s bits (exponent a local, updated, negated, nested, i32, f32)', () => {
  for (const [name, src] of Object.entries(V_pow)) {
    compile(src, 'wasm')
    expect(lastMapLanes, name).toBeGreaterThan(0)
    if (name !== 'xdep' && name !== 'f32') expect(lastUniformPowers, name).toBeGreaterThan(0)
    const args: unknown[][] = []
    for (const p of [2, 1, 3, 0.5, -0, 0, NaN, -1, Infinity, 1.5, 0.5])
      for (const n of [1, 2, 3, 14, 17])
        args.push([
          new Float64Array(n),
          pxs(n),
          name === 'elemExp'
            ? Float64Array.of(p)
            : name === 'i32local'
              ? Math.round(Number.isFinite(p) ? p : 3) + 1
              : p,
        ])
    expect(compareAll(src, args, { errors: true }).slice(0, 3), name).toEqual([])
  }
})

const V_sin: Record<string, string> = {
  residue: `fn f(r: f64, k: f64[], n: i32) {
  c: f64[] <- zeros(n)
  for i in 0..n {
    c[i] += k[i] * 0.1
    c[i] += k[i] * 0.2
    r += c[0] * 2.0 + c[i]
    c[i] -= k[i] * 0.2
    c[i] -= k[i] * 0.1
  }
  c -> zeros(n)
}`,
  innerSome: `fn f(r: f64, k: f64[], n: i32) {
  c: f64[] <- zeros(n)
  for j in 0..n {
    if (k[j] > 0.0, ~) { for i in 0..n { c[i] += k[i] * 0.1 + k[j] } }
    r += c[0] * 2.0 + c[j]
    if (k[j] > 0.0, ~) { for i in reverse 0..n { c[i] -= k[i] * 0.1 + k[j] } }
  }
  c -> zeros(n)
}`,
  readOnly: `fn f(r: f64, k: f64[], n: i32) {
  c: f64[] <- zeros(n)
  for j in 0..n { r += c[j] + k[j] }
  c -> zeros(n)
}`,
  branchOwn: `fn f(r: f64, k: f64[], n: i32) {
  c: f64[] <- zeros(n)
  for j in 0..n {
    if (k[j] > 0.0, ~) { c[j] += k[j] } else { c[0] += k[j] }
    r += c[0] * 2.0 + c[j]
    if (k[j] > 0.0, ~) { c[j] -= k[j] } else { c[0] -= k[j] }
  }
  c -> zeros(n)
}`,
}
it('sink-ancillas (residues, inner loops in some iterations, read-only, branches): the interpreter’s values with checks off', () => {
  for (const [name, src] of Object.entries(V_sin)) {
    const args: unknown[][] = []
    for (const n of [1, 2, 3, 7, 2])
      for (const k of [
        Float64Array.from({ length: n }, (_, i) => Math.sin(i * 3 + 1)),
        Float64Array.from({ length: n }, (_, i) => (i ? -0 : Number.NaN)),
        Float64Array.from({ length: n }, (_, i) => (i % 2 ? Infinity : 0.7)),
      ])
        args.push([-0, k, n])
    expect(compareAll(src, args, { errors: true }).slice(0, 3), name).toEqual([])
  }
})

const wrapShared = (e: string, later: string) => `fn g(out: f64, x: f64, p: f64) {
  t <- 0.0
  t += ${e}
  if (t > 0.4, ~) { out += t } else { out -= t * 3.0 }
  out += ${later}
  t -= ${e}
  t -> 0.0
}
fn f(out: f64[], x: f64[], p: f64) { for i in 0..len(x) { g(out[i], x[i], p) } }`
const V_shared: Record<string, string> = {
  sinPow: wrapShared('sin(x) ** p', 'cos(x) * 0.5'),
  sinPow2: wrapShared('sin(x) ** p + cos(x)', 'sin(x) * 0.5'),
  expPow: wrapShared('exp(x * 0.5) ** p', 'exp(x * 0.5) + x * 0.5'),
  sharedPow: wrapShared('(x * 0.5 + 1.0) ** p', '(x * 0.5 + 1.0) * 2.0'),
  powShared: wrapShared('(x * 0.5 + 1.0) ** p * (x * 0.5 + 1.0)', 'x ** p'),
  sqrtPow: wrapShared('sqrt(abs(x) + 1.0) ** p', 'sqrt(abs(x) + 1.0)'),
}
const SXS = [0, -0, 1, -1, 0.5, -2.5, 3.75, 5e-324, 1e200, Infinity, -Infinity, NaN, 1.1, 0.3]
it('uniform powers whose base shares subexpressions (sincos, reused values) with later statements: the interpreter’s bits', () => {
  for (const [name, src] of Object.entries(V_shared)) {
    compile(src, 'wasm')
    expect(lastUniformPowers, name).toBeGreaterThan(0)
    const args: unknown[][] = []
    for (const p of [2, 1, 3, 0.5, -0, NaN, 2, 1])
      for (const n of [1, 2, 3, 14, 17])
        args.push([new Float64Array(n), Float64Array.from({ length: n }, (_, i) => SXS[i % SXS.length]!), p])
    expect(compareAll(src, args, { errors: true }).slice(0, 2), name).toEqual([])
  }
})
