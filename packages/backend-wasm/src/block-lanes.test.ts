import { describe, expect, it } from 'vitest'
import { compile, exact, expectSameForward, expectSameRuns, lastGatheredBlocks, lastMapLanes } from './test-util.js'
import { mulberry32 as rng } from '@tenet/testing'

/**
 * Map lanes over blocks: a loop whose iteration b reads and writes its own block of each batched
 * array (`x[o + c]` with `o <- b * s`, 0 ≤ c < s), as the block programs of `@tenet/ad`'s
 * `blockJacobian` do, runs two blocks at a time in lanes: reads from two bases per pair, the
 * writes lane by lane, a branch both lanes take without masks.
 */
const blocks = `
fn f(n: i32, x: f64[], p: f64[], out: f64[]) {
  for b in 0..n {
    o: i32 <- b * 3
    q: i32 <- b * 2
    t <- 0.0
    u <- 0.0
    routine {
      t += x[o] * x[o + 1] - p[q] + x[o + 2] / (1.5 + p[q + 1] * p[q + 1])
      if (t > 0.25, ~) {
        u += sqrt(t) * x[o + 2] + sin(t)
      } else {
        u -= t * t - x[o]
      }
    }
    out[q] += u * p[q + 1] + t
    out[q + 1] -= u / (1.0 + t * t) - x[o + 1]
    ~routine
    u -> 0.0
    t -> 0.0
    q -> b * 2
    o -> b * 3
  }
}`

const data = (n: number, seed: number) => {
  const r = rng(seed)
  return {
    x: Float64Array.from({ length: 3 * n }, () => r() * 4 - 1.5),
    p: Float64Array.from({ length: 2 * n }, () => r() * 2 - 1),
    out: Float64Array.from({ length: 2 * n }, () => r()),
  }
}

describe('map lanes over blocks', () => {
  it('give the scalar code’s bits (cpu, interpreter, scalar wasm), both branches taken by both, one or neither lane', () => {
    const lanes = compile(blocks, 'wasm')
    // (the loop of f and the downward loop of its inverse)
    expect(lastMapLanes).toBe(2)
    const scalar = compile(blocks, 'wasm', false, false)
    expect(lastMapLanes).toBe(0)
    const cpu = compile(blocks, 'cpu')
    const interp = compile(blocks, 'interpreter', true)
    const checked = compile(blocks, 'wasm', true)
    for (const n of [0, 1, 2, 3, 8, 33])
      for (const seed of [1, 2, 3]) {
        const d = data(n, seed * 100 + n)
        expectSameForward([cpu, interp, scalar, lanes, checked], () => [n, d.x.slice(), d.p.slice(), d.out.slice()])
        // and backwards (the inverse's loop runs downwards, in lanes too)
        expectSameRuns([cpu, scalar, lanes], () => [n, d.x.slice(), d.p.slice(), d.out.slice()])
      }
  })

  it('take blocks written out as `2 * i + c` and gathers through an index array (the BA objective’s form)', () => {
    const text = `
fn f(n: i32, out: f64[], cams: f64[], obs: i32[], feats: f64[], w: f64[]) {
  for i in 0..n {
    co: i32 <- 3 * obs[i]
    t <- 0.0
    u <- 0.0
    routine {
      t += cams[co] * cams[co + 1] - feats[2 * i]
      if (t > 0.1, ~) {
        u += sqrt(t) + cams[co + 2]
      } else {
        u -= t * feats[2 * i + 1]
      }
    }
    out[2 * i] += w[i] * u + feats[2 * i + 1]
    out[2 * i + 1] -= u * cams[co + 2] - t
    ~routine
    u -> 0.0
    t -> 0.0
    co -> 3 * obs[i]
  }
}`
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBeGreaterThan(0)
    const scalar = compile(text, 'wasm', false, false)
    const cpu = compile(text, 'cpu')
    const checked = compile(text, 'wasm', true)
    for (const n of [1, 2, 5, 16]) {
      const r = rng(n * 13)
      const cams = Float64Array.from({ length: 12 }, () => r() * 2 - 0.5)
      const obs = Int32Array.from({ length: n }, () => Math.floor(r() * 4))
      const feats = Float64Array.from({ length: 2 * n }, () => r() - 0.5)
      const w = Float64Array.from({ length: n }, () => r() + 0.5)
      expectSameForward([cpu, scalar, lanes, checked], () => [n, new Float64Array(2 * n), cams, obs, feats, w])
    }
  })

  it('read gathered blocks from both lanes’ bases where both blocks are in range, element by element where not', () => {
    // (\`cams[co + 2]\` is read only where flag > 0: a block whose last element is past the end of
    // \`cams\` is fine where its flag is not, and then that pair reads element by element; \`pts[xo + c]\`
    // gathered through a second offset, inside a branch one lane may skip; the inverse runs downwards)
    const text = `
fn f(n: i32, out: f64[], cams: f64[], pts: f64[], obs: i32[], flag: f64[]) {
  for i in 0..n {
    co: i32 <- 3 * obs[2 * i]
    xo: i32 <- 2 * obs[2 * i + 1]
    t <- 0.0
    u <- 0.0
    routine {
      t += cams[co] * cams[co + 1] - pts[xo]
      if (flag[i] > 0.0, ~) {
        u += sqrt(abs(t)) + cams[co + 2] * pts[xo + 1]
      } else {
        u -= t * cams[co]
      }
    }
    out[2 * i] += u * cams[co + 1] + pts[xo + 1]
    out[2 * i + 1] -= u * t
    ~routine
    u -> 0.0
    t -> 0.0
    xo -> 2 * obs[2 * i + 1]
    co -> 3 * obs[2 * i]
  }
}`
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBe(2)
    // (cams through co, pts through xo, in f and its inverse, each loop and its range version)
    expect(lastGatheredBlocks).toBe(8)
    const scalar = compile(text, 'wasm', false, false)
    expect(lastGatheredBlocks).toBe(0)
    const cpu = compile(text, 'cpu')
    const checked = compile(text, 'wasm', true)
    const r = rng(77)
    const cams = Float64Array.from({ length: 14 }, () => r() * 2 - 0.5)
    const pts = Float64Array.from({ length: 10 }, () => r() * 2 - 1)
    for (const n of [1, 2, 5, 16, 33]) {
      // (block 4 of cams holds two elements only: its flag is off)
      const obs = Int32Array.from({ length: 2 * n }, () => Math.floor(r() * 5))
      const flag = Float64Array.from({ length: n }, (_, k) => (obs[2 * k] === 4 ? -1 : r() - 0.3))
      const out = Float64Array.from({ length: 2 * n }, () => r())
      const args = () => [n, out.slice(), cams, pts, obs, flag]
      expectSameForward([cpu, scalar, lanes, checked], () => [n, new Float64Array(2 * n), cams, pts, obs, flag])
      expectSameRuns([cpu, scalar, lanes], args)
    }
    // out of range (a negative offset, a block past the end read): the error of the scalar code
    const fails = (m: typeof lanes, obs: Int32Array, flag: Float64Array) => {
      try {
        m.f!.core(obs.length / 2, new Float64Array(obs.length), cams, pts, obs, flag)
      } catch (e) {
        return (e as { code?: string }).code
      }
      return 'no error'
    }
    for (const [obs, flag] of [
      [Int32Array.of(0, 1, -1, 2, 1, 1, 2, 0), Float64Array.of(1, 1, 1, 1)],
      [Int32Array.of(1, 1, 4, 2, 1, 1, 2, 0), Float64Array.of(-1, 1, -1, 1)],
      [Int32Array.of(1, 1, 2, 7, 1, 1, 2, 0), Float64Array.of(1, 1, 1, 1)],
    ] as const) {
      expect(fails(lanes, obs, flag)).toBe('runtime/out-of-bounds')
      expect(fails(scalar, obs, flag)).toBe('runtime/out-of-bounds')
    }
  })

  it('run the scalar loop, with the same results, when a block is past the end of its array (and fail where it fails)', () => {
    const lanes = compile(blocks, 'wasm')
    const scalar = compile(blocks, 'wasm', false, false)
    const err = (m: typeof lanes, n: number) => {
      const d = data(n, 7)
      try {
        m.f!.core(n + 1, d.x, d.p, d.out)
      } catch (e) {
        return [(e as { code?: string }).code, Array.from(d.out)]
      }
      return ['no error', Array.from(d.out)]
    }
    for (const n of [1, 4, 5]) {
      const a = err(lanes, n),
        b = err(scalar, n)
      expect(a[0]).toBe('runtime/out-of-bounds')
      expect(a).toEqual(b)
    }
  })

  it('run the scalar loop, with the same results, when the host passes one array for two parameters', () => {
    const lanes = compile(blocks, 'wasm')
    const cpu = compile(blocks, 'cpu')
    const run = (m: typeof cpu) => {
      const d = data(6, 11)
      m.f!.core(6, d.x, d.p, d.p)
      return Array.from(d.p)
    }
    expect(run(lanes)).toEqual(run(cpu))
  })

  it('add into elements shared by the iterations (a reduction) in the scalar loop’s order, upwards and downwards', () => {
    // (an adjoint's loop over components: blocks of one element \`g[pk + c]\`, blocks of d elements
    // \`y[(pk + c)·d + j]\`, and the gradient of a shared input \`gx[xo + j]\` summed over c)
    const text = `
fn f(pk: i32, xo: i32, y: f64[], m: f64[], g: f64[], gx: f64[], q: f64[]) {
  for c in 0..8 {
    o: i32 <- (pk + c) * 3
    cd: i32 <- c * 3
    g[pk + c] += y[o] * q[cd] + y[o + 1] * q[cd + 2]
    y[o + 2] += g[pk + c] * m[c] - y[o] * 0.5
    gx[xo] += y[o + 2] * q[cd + 1]
    gx[xo + 1] -= y[o + 1] / (1.0 + g[pk + c] * g[pk + c])
    cd -> c * 3
    o -> (pk + c) * 3
  }
  for c in reverse 0..7 {
    o: i32 <- (pk + c) * 3
    gx[xo + 2] += y[o + 2] * g[pk + c] + 1e-3
    y[o] -= g[pk + c] * 0.25
    o -> (pk + c) * 3
  }
}`
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBe(4)
    const scalar = compile(text, 'wasm', false, false)
    const cpu = compile(text, 'cpu')
    const r = rng(5)
    const arr = (n: number) => Float64Array.from({ length: n }, () => r() * 2 - 0.7)
    const y = arr(3 * 12),
      m = arr(8),
      g = arr(12),
      gx = arr(6),
      q = arr(24)
    for (const [pk, xo] of [
      [0, 0],
      [3, 2],
      [4, 1],
    ])
      expectSameForward([cpu, scalar, lanes], () => [pk, xo, y.slice(), m.slice(), g.slice(), gx.slice(), q.slice()])
  })

  it('load each element before the first statement that names it and store it after the last that writes it', () => {
    // (\`q[c]\`'s block elements first read inside a branch one lane may skip; \`x[o]\` written first and
    // read again after its last write; \`x[o + 2]\` read only at the end; \`s[c]\` an element a[i])
    const text = `
fn f(x: f64[], q: f64[], s: f64[]) {
  for c in 0..len(s) {
    o: i32 <- c * 3
    p: i32 <- c * 2
    x[o] += s[c] * 0.5
    t <- 0.0
    routine {
      t += x[o] * 1.5 + 0.1
      if (x[o] > 0.2, ~) {
        t += q[p] * q[p + 1]
      }
    }
    x[o + 1] -= t * x[o]
    ~routine
    t -> 0.0
    s[c] += x[o + 2] * x[o] - q[p + 1]
    p -> c * 2
    o -> c * 3
  }
}`
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBe(2)
    const scalar = compile(text, 'wasm', false, false)
    const cpu = compile(text, 'cpu')
    const interp = compile(text, 'interpreter', true)
    for (const n of [1, 2, 5, 12]) {
      const r = rng(n * 31)
      const arr = (k: number) => Float64Array.from({ length: k }, () => r() * 2 - 0.6)
      const x = arr(3 * n),
        q = arr(2 * n),
        s = arr(n)
      expectSameForward([cpu, interp, scalar, lanes], () => [x.slice(), q.slice(), s.slice()])
      expectSameRuns([cpu, scalar, lanes], () => [x.slice(), q.slice(), s.slice()])
    }
  })

  it('check once per call that parameter arrays do not overlap, also when the loop runs many times', () => {
    const text = `
fn f(m: i32, x: f64[], out: f64[]) {
  for p in 0..m {
    pk: i32 <- p * 5
    for c in 0..5 {
      o: i32 <- (pk + c) * 2
      q: i32 <- c * 2
      out[o] += x[q] * x[o + 1] + x[q + 1]
      out[o + 1] -= x[o] / (2.0 + x[q] * x[q])
      q -> c * 2
      o -> (pk + c) * 2
    }
    pk -> p * 5
  }
}`
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBeGreaterThan(0)
    const cpu = compile(text, 'cpu')
    const r = rng(9)
    const x = Float64Array.from({ length: 40 }, () => r() * 2 - 1)
    const run = (m: typeof cpu, same: boolean) => {
      const a = x.slice(),
        b = x.slice()
      m.f!.core(4, a, same ? a : b)
      return Array.from(same ? a : b, exact)
    }
    for (const same of [false, true]) expect(run(lanes, same)).toEqual(run(cpu, same))
  })

  it('swap values into elements of the blocks (a block Jacobian’s stored entries), lane by lane, upwards and downwards', () => {
    // (t and u leave with the old values of out[q] and out[q + 1]: u's is read again, t's is not;
    // \`x[o + 2]\` is swapped with a value and back; with a zero \`out\` the program is reversible)
    const text = `
fn f(n: i32, x: f64[], out: f64[]) {
  for b in 0..n {
    o: i32 <- b * 3
    q: i32 <- b * 2
    t <- 0.0
    u <- 0.0
    t += x[o] * x[o + 1] - x[o + 2]
    if (t > 0.25, ~) {
      u += sqrt(t) * x[o + 2]
    } else {
      u -= t * t - x[o]
    }
    SWAP(out[q], t)
    SWAP(u, out[q + 1])
    x[o] += u * 0.5
    SWAP(x[o + 2], t)
    x[o + 1] -= t * 0.25
    SWAP(x[o + 2], t)
    x[o] -= u * 0.5
    u -> 0.0
    t -> 0.0
    q -> b * 2
    o -> b * 3
  }
}`
    const lanes = compile(text, 'wasm')
    // (the loop of f and the downward loop of its inverse)
    expect(lastMapLanes).toBe(2)
    const scalar = compile(text, 'wasm', false, false)
    expect(lastMapLanes).toBe(0)
    const cpu = compile(text, 'cpu')
    const interp = compile(text, 'interpreter', true)
    const checked = compile(text, 'wasm', true)
    for (const n of [0, 1, 2, 3, 8, 33]) {
      const r = rng(n * 7 + 3)
      const x = Float64Array.from({ length: 3 * n }, () => r() * 4 - 1.5)
      const out = Float64Array.from({ length: 2 * n }, () => r() * 2 - 1)
      // into a zero \`out\` (every backend, checks on too), and into one holding values
      expectSameForward([cpu, interp, scalar, lanes, checked], () => [n, x.slice(), new Float64Array(2 * n)])
      expectSameForward([cpu, scalar, lanes], () => [n, x.slice(), out.slice()])
      expectSameRuns([cpu, scalar, lanes], () => [n, x.slice(), out.slice()])
    }
  })

  it('store the elements swapped with a scalar nothing reads afterwards without loading them (a Jacobian’s entries)', () => {
    // (out[q] and out[q + 1] swapped with dead scalars: not loaded, their old values, NaN here,
    // go nowhere; x[o + 1] swapped with t, read after: loaded)
    const text = `
fn f(n: i32, x: f64[], out: f64[]) {
  for b in 0..n {
    o: i32 <- b * 3
    q: i32 <- b * 2
    t <- 0.0
    u <- 0.0
    t += x[o] * x[o + 1] - x[o + 2]
    if (t > 0.25, ~) {
      u += sqrt(t) * x[o + 2]
    } else {
      u -= t * t - x[o]
    }
    SWAP(x[o + 1], t)
    x[o] += t * 0.5
    SWAP(out[q], t)
    SWAP(u, out[q + 1])
    u -> 0.0
    t -> 0.0
    q -> b * 2
    o -> b * 3
  }
}`
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBe(2)
    const scalar = compile(text, 'wasm', false, false)
    const cpu = compile(text, 'cpu')
    for (const n of [1, 2, 5, 12]) {
      const r = rng(n * 13 + 1)
      const x = Float64Array.from({ length: 3 * n }, () => r() * 4 - 1.5)
      const stale = new Float64Array(2 * n).fill(Number.NaN)
      expectSameForward([cpu, scalar, lanes], () => [n, x.slice(), stale.slice()])
      const out = Float64Array.from({ length: 2 * n }, () => r() * 2 - 1)
      expectSameForward([cpu, scalar, lanes], () => [n, x.slice(), out.slice()])
    }
  })

  const refused: Record<string, string> = {
    'a swap with an element outside the block (c ≥ s)': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n t <- 0.0 \n t += x[o] * x[o + 1] \n SWAP(out[o + 2], t) \n t -> 0.0 \n o -> b * 2 } }`,
    'a swap with an element at a shared index': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n t <- 0.0 \n t += x[o] * x[o + 1] \n SWAP(out[0], t) \n t -> 0.0 \n o -> b * 2 } }`,
    'a swap with a block element under a varying branch': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n t <- 0.0 \n t += x[o] * x[o + 1] \n if (x[o] > 0.0, ~) { SWAP(out[o], t) } \n t -> 0.0 \n o -> b * 2 } }`,
    'a swap with an element of an i32 block': `
fn f(n: i32, x: f64[], out: i32[]) { for b in 0..n { o: i32 <- b * 2 \n k: i32 <- 0 \n t <- 0.0 \n t += x[o] * x[o + 1] \n if (t > 0.0, ~) { k += 1 } \n SWAP(out[o], k) \n k -> 0 \n t -> 0.0 \n o -> b * 2 } }`,

    'a write outside the block (c ≥ s)': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n t <- 0.0 \n if (x[o] > 0.0, ~) { t += x[o] } \n out[o + 2] += t \n t -> 0.0 \n o -> b * 2 } }`,
    'an offset written in the body': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n o += 1 \n t <- 0.0 \n if (x[o] > 0.0, ~) { t += x[o] } \n out[o] += t \n t -> 0.0 \n o -= 1 \n o -> b * 2 } }`,
    'a block write under a varying branch': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n if (x[o] > 0.0, ~) { out[o] += x[o + 1] } \n o -> b * 2 } }`,
    'an accumulated array read': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n out[0] += x[o] * out[1] \n o -> b * 2 } }`,
    'an element accumulated twice': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n out[0] += x[o] \n out[0] += x[o + 1] \n o -> b * 2 } }`,
    'a block array read at a shared index': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n out[o] += x[o] * out[1] \n o -> b * 2 } }`,
    'an array written through blocks of two strides': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n r: i32 <- b * 3 \n out[o] += x[o] \n out[r + 2] += x[o + 1] \n r -> b * 3 \n o -> b * 2 } }`,
    'an array written by blocks and read': `
fn f(n: i32, x: f64[], out: f64[]) { for b in 0..n { o: i32 <- b * 2 \n t <- 0.0 \n if (x[o] > 0.0, ~) { t += x[o] } \n out[o] += t * out[0] \n t -> 0.0 \n o -> b * 2 } }`,
  }
  for (const [what, text] of Object.entries(refused))
    it(`run the scalar loop where ${what}`, () => {
      compile(text, 'wasm')
      expect(lastMapLanes).toBe(0)
    })
})

/** A random block loop: reads of its blocks, arithmetic, a varying branch, block writes. */
function randomBlocks(seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!
  const s = 2 + Math.floor(r() * 4)
  // (the scalars an expression may read: t's value reads neither t nor u, u's not u)
  let names = ['t', 'u', 'k']
  const leaf = (): string =>
    pick([`x[o + ${Math.floor(r() * s)}]`, `x[o + ${Math.floor(r() * s)}]`, `${(r() * 3 - 1).toFixed(3)}`, ...names])
  const expr = (depth: number): string => {
    if (depth === 0 || r() < 0.3) return leaf()
    const op = pick(['+', '-', '*', '/', 'sqrt', 'min'])
    if (op === 'sqrt') return `sqrt(abs(${expr(depth - 1)}))`
    if (op === 'min') return `min(${expr(depth - 1)}, ${expr(depth - 1)})`
    if (op === '/') return `${expr(depth - 1)} / (1.25 + abs(${expr(depth - 1)}))`
    return `(${expr(depth - 1)} ${op} ${expr(depth - 1)})`
  }
  // (t and u are uncomputed: the program is reversible, and runs with checks too)
  const only = (ns: string[]) => {
    names = ns
    const e = expr(2)
    names = ['t', 'u', 'k']
    return e
  }
  const tl = () => only(['k'])
  const ul = () => only(['t', 'k'])
  const lines = ['routine {', `  t += ${tl()}`, `  if (t > ${(r() - 0.5).toFixed(2)}, ~) {`, `    u += ${ul()}`]
  if (r() < 0.5) lines.push('  } else {', `    u -= ${ul()}`)
  lines.push('  }', '}')
  const writes = 1 + Math.floor(r() * 3)
  // (the first reads u: the branch is live)
  for (let w = 0; w < writes; w++)
    lines.push(`out[q + ${w % 2}] ${pick(['+=', '-='])} ${w === 0 ? `u * ${expr(1)}` : expr(2)}`)
  lines.push('~routine')
  return `
fn f(n: i32, x: f64[], out: f64[], k: f64) {
  for b in 0..n {
    o: i32 <- b * ${s}
    q: i32 <- b * 2
    t <- 0.0
    u <- 0.0
    ${lines.join('\n    ')}
    u -> 0.0
    t -> 0.0
    q -> b * 2
    o -> b * ${s}
  }
}`
}

describe('map lanes over blocks on random loops', () => {
  it('20 programs: the lanes give the bits of the scalar wasm code, the cpu backend and the interpreter', () => {
    let lanesUsed = 0
    for (let seed = 1; seed <= 20; seed++) {
      const text = randomBlocks(seed)
      const lanes = compile(text, 'wasm')
      if (lastMapLanes > 0) lanesUsed++
      const scalar = compile(text, 'wasm', false, false)
      const cpu = compile(text, 'cpu')
      const interp = compile(text, 'interpreter')
      const r = rng(seed * 17)
      const n = 1 + Math.floor(r() * 12)
      const s = Number(/b \* (\d+)/.exec(text)![1])
      const x = Float64Array.from({ length: s * n }, () => r() * 4 - 2)
      const out = Float64Array.from({ length: 2 * n }, () => r())
      const checked = compile(text, 'wasm', true)
      expectSameForward([cpu, interp, scalar, lanes, checked], () => [n, x.slice(), out.slice(), 0.625])
    }
    expect(lanesUsed).toBe(20)
  })
})
