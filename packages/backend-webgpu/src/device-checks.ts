/**
 * Device checks shared by the tests and by `device-check.cli.ts` (which runs them on whatever
 * adapter is there, e.g. a real GPU): the precise math routines against `Math`, and the
 * conformance runs of bundled random programs against the cpu backend. Test-only code (it
 * compiles with the cpu backend): not part of the package build.
 */
import {
  bundlePrograms,
  randomArgs,
  randomProgram,
  randomRealArgs,
  randomRealProgram,
  sameBits,
  type BundleMember,
} from '@tenet/testing'
import { gpuMap, type GpuContext } from './index.js'
import { cpu } from './test-util.js'

// ---------- the precise math routines ----------

/** Distance between two f32 values in representable steps (0: same value; ±0 are equal; NaN only matches NaN). */
export function ulpDistance(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity
  const x = new Int32Array(new Float32Array([a, b]).buffer)
  const ord = (v: number) => (v < 0 ? -2147483648 - v : v)
  return Math.abs(ord(x[0]!) - ord(x[1]!))
}

/** A seeded generator of 32-bit words. */
function words(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s
  }
}

/** f32 values with random sign (when `signed`), biased exponent uniform in [e0, e1] (0: subnormal), random significand. */
function logUniform(n: number, seed: number, e0: number, e1: number, signed = true): number[] {
  const w = words(seed)
  const f = new Float32Array(1),
    u = new Uint32Array(f.buffer)
  return Array.from({ length: n }, () => {
    const e = e0 + (w() % (e1 - e0 + 1))
    u[0] = (((signed && w() & 1 ? 1 : 0) << 31) | (e << 23) | (w() & 0x7fffff)) >>> 0
    return f[0]!
  })
}

function uniform(n: number, seed: number, lo: number, hi: number): number[] {
  const w = words(seed)
  return Array.from({ length: n }, () => Math.fround(lo + (w() / 2 ** 32) * (hi - lo)))
}

/** The f32 neighbours of x (k steps each way). */
function around(x: number, k: number): number[] {
  const f = new Float32Array([x]),
    i = new Int32Array(f.buffer)
  const base = i[0]!
  const out: number[] = []
  for (let d = -k; d <= k; d++) {
    i[0] = base + d
    out.push(f[0]!)
  }
  return out
}

const SPECIAL = [
  0,
  -0,
  Infinity,
  -Infinity,
  NaN,
  1,
  -1,
  2 ** -149,
  -(2 ** -149),
  2 ** -126,
  3.4028234663852886e38,
  -3.4028234663852886e38,
  0.5,
  -0.5,
]

/** f32 values next to multiples of π/2 (the hard cases of the argument reduction), small and huge. */
function nearPiOver2(n: number, seed: number): number[] {
  const w = words(seed)
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const k = i < n / 2 ? 1 + (w() % 100000) : (w() / 2 ** 32) * 2 ** (w() % 100)
    out.push(...around(Math.fround((Math.round(k) * Math.PI) / 2), 1))
  }
  return out
}

/** One function checked: its arity, its reference (`Math`), its inputs. */
export interface Case {
  name: string
  arity: 1 | 2
  reference: (x: number, y: number) => number
  inputs: () => Array<[number, number]>
}

const unary = (f: (x: number) => number, xs: () => number[]): Pick<Case, 'arity' | 'reference' | 'inputs'> => ({
  arity: 1,
  reference: (x) => f(x),
  inputs: () => [...xs(), ...SPECIAL].map((x) => [x, 0]),
})

/**
 * sinh and cosh where e^|x| overflows f32 but the result does not (|x| in (88.72, 89.42)), the
 * switch of their algorithms at |x| = 88, and the f32 neighbours of the overflow threshold ln(2·FLT_MAX).
 */
function nearOverflow(n: number, seed: number): number[] {
  const xs = [
    ...uniform(n / 16, seed, 87.5, 89.6),
    ...around(88, 16),
    ...around(88.72283935546875, 16),
    ...around(89.41598629223294, 32),
  ]
  return [...xs, ...xs.map((x) => -x)]
}

/** The functions checked, with their inputs (`N` random ones per function plus the hard cases). */
export function accuracyCases(N: number): Case[] {
  return [
    {
      name: 'sin',
      ...unary(Math.sin, () => [...logUniform(N, 1, 0, 254), ...uniform(N / 4, 2, -10, 10), ...nearPiOver2(N / 16, 3)]),
    },
    {
      name: 'cos',
      ...unary(Math.cos, () => [...logUniform(N, 4, 0, 254), ...uniform(N / 4, 5, -10, 10), ...nearPiOver2(N / 16, 6)]),
    },
    {
      name: 'tan',
      ...unary(Math.tan, () => [
        ...logUniform(N, 7, 0, 254),
        ...uniform(N / 4, 8, -10, 10),
        ...nearPiOver2(N / 16, 9),
        ...uniform(N / 8, 40, -1.6, 1.6),
      ]),
    },
    {
      name: 'exp',
      ...unary(Math.exp, () => [
        ...uniform(N, 10, -110, 95),
        ...logUniform(N / 4, 11, 0, 130),
        ...around(88.72283935546875, 8),
        ...around(-87.33654, 8),
        ...around(-103.27893, 8),
      ]),
    },
    {
      name: 'log',
      ...unary(Math.log, () => [...logUniform(N, 12, 0, 254, false), ...uniform(N / 4, 13, 0.5, 2), ...around(1, 64)]),
    },
    {
      name: 'sinh',
      ...unary(Math.sinh, () => [...uniform(N, 14, -92, 92), ...logUniform(N / 4, 15, 0, 130), ...nearOverflow(N, 41)]),
    },
    {
      name: 'cosh',
      ...unary(Math.cosh, () => [...uniform(N, 16, -92, 92), ...logUniform(N / 4, 17, 0, 130), ...nearOverflow(N, 42)]),
    },
    {
      name: 'tanh',
      ...unary(Math.tanh, () => [
        ...uniform(N, 18, -12, 12),
        ...logUniform(N / 4, 19, 0, 135),
        ...uniform(N / 8, 43, -1, 1),
        ...around(9.010913, 32),
        ...around(10, 16),
        ...around(-10, 16),
      ]),
    },
    { name: 'atan', ...unary(Math.atan, () => [...logUniform(N, 20, 0, 254), ...uniform(N / 4, 21, -3, 3)]) },
    {
      name: 'asin',
      ...unary(Math.asin, () => [
        ...uniform(N, 22, -1, 1),
        ...logUniform(N / 4, 23, 0, 126),
        ...around(1, 64),
        ...around(-1, 64),
        1.5,
      ]),
    },
    {
      name: 'acos',
      ...unary(Math.acos, () => [
        ...uniform(N, 24, -1, 1),
        ...logUniform(N / 4, 25, 0, 126),
        ...around(1, 64),
        ...around(-1, 64),
        -1.5,
      ]),
    },
    { name: 'sqrt', ...unary(Math.sqrt, () => [...logUniform(N, 26, 0, 254, false), -4]) },
    {
      name: 'atan2',
      arity: 2,
      reference: (y, x) => Math.atan2(y, x),
      inputs: () => {
        const a = logUniform(N, 27, 0, 254),
          b = logUniform(N, 28, 0, 254)
        const c = uniform(N / 4, 29, -5, 5),
          d = uniform(N / 4, 30, -5, 5)
        const grid = SPECIAL.flatMap((y) => SPECIAL.map((x) => [y, x] as [number, number]))
        return [
          ...a.map((y, i) => [y, b[i]!] as [number, number]),
          ...c.map((y, i) => [y, d[i]!] as [number, number]),
          ...grid,
        ]
      },
    },
    {
      name: 'div',
      arity: 2,
      reference: (a, b) => a / b,
      inputs: () => {
        const a = logUniform(N, 31, 1, 254),
          b = logUniform(N, 32, 1, 254)
        return a.map((y, i) => [y, b[i]!] as [number, number])
      },
    },
    {
      name: 'pow',
      arity: 2,
      reference: (x, p) => Math.pow(x, p),
      inputs: () => {
        const x = logUniform(N, 33, 100, 150, false),
          p = uniform(N, 34, -40, 40)
        const nx = uniform(N / 4, 35, -20, 20),
          np = uniform(N / 4, 36, -30, 30).map(Math.round)
        const near1 = around(1, 200),
          big = uniform(near1.length, 37, -2e6, 2e6)
        const wide = logUniform(N / 4, 38, 1, 254, false),
          wp = uniform(N / 4, 39, -3, 3)
        const grid = [...SPECIAL, 3, -3, 0.25, 2.5].flatMap((a) =>
          [...SPECIAL, 3, -3, 0.25, 2.5].map((b) => [a, b] as [number, number]),
        )
        return [
          ...x.map((a, i) => [a, p[i]!] as [number, number]),
          ...nx.map((a, i) => [a, np[i]!] as [number, number]),
          ...near1.map((a, i) => [a, big[i]!] as [number, number]),
          ...wide.map((a, i) => [a, wp[i]!] as [number, number]),
          ...grid,
        ]
      },
    },
  ]
}

/** The Tenet source computing one function of the case's arguments into `y`. */
export function sourceOf(c: Case): string {
  if (c.name === 'div') return 'fn f(y: f32, a: f32, b: f32) { y += a / b }'
  if (c.name === 'pow') return 'fn f(y: f32, a: f32, b: f32) { y += a ** b }'
  return c.arity === 1
    ? `fn f(y: f32, a: f32) { y += ${c.name}(a) }`
    : `fn f(y: f32, a: f32, b: f32) { y += ${c.name}(a, b) }`
}

/** A subnormal as a zero of its sign. */
export function flush(x: number): number {
  return x !== 0 && Math.abs(x) < 2 ** -126 ? (x < 0 ? -0 : 0) : x
}

/** Whether the device flushes subnormal f32 values to zero (WGSL allows it; SwiftShader does). */
export async function flushesSubnormals(gpu: GpuContext): Promise<boolean> {
  const f = cpu('fn f(y: f32, a: f32) { y += a * 2.0 }', undefined, false).f!
  const k = await gpuMap(f, { batch: 1, perItem: ['y', 'a'], gpu })
  const y = new Float32Array(1)
  await k(y, new Float32Array([2 ** -140]))
  return y[0] === 0
}

/** What `measureAccuracy` found for one function. */
export interface AccuracyResult {
  name: string
  inputs: number
  /** Largest distance in f32 steps from `Math.fround(Math.f(x))` (after flushing subnormals, where the device does). */
  maxUlp: number
  /** The arguments of the largest distance. */
  at: string
  /** Results one step away. */
  ones: number
  /** Results that matched only once subnormal arguments and results were flushed to zero. */
  flushed: number
  /** Up to five results more than one step away. */
  bad: string[]
}

/** Runs one function of `cases` on the device and compares with `Math` (see `accuracyCases`). */
export async function measureAccuracy(gpu: GpuContext, c: Case, ftz: boolean, precise = true): Promise<AccuracyResult> {
  const inputs = c.inputs()
  const n = inputs.length
  const f = cpu(sourceOf(c), undefined, false).f!
  const k = await gpuMap(f, { batch: n, perItem: c.arity === 1 ? ['y', 'a'] : ['y', 'a', 'b'], gpu, precise })
  const y = new Float32Array(n),
    a = Float32Array.from(inputs, (p) => p[0]),
    b = Float32Array.from(inputs, (p) => p[1])
  if (c.arity === 1) await k(y, a)
  else await k(y, a, b)
  let worst = 0,
    at = -1,
    ones = 0,
    flushed = 0
  const bad: string[] = []
  for (let i = 0; i < n; i++) {
    const want = Math.fround(c.reference(a[i]!, b[i]!))
    let d = ulpDistance(y[i]!, want)
    if (d > 1 && ftz) {
      // the device flushes subnormals: compare with the function of the flushed arguments, flushed
      const d2 = ulpDistance(flush(y[i]!), flush(Math.fround(c.reference(flush(a[i]!), flush(b[i]!)))))
      if (d2 <= 1) {
        flushed++
        d = d2
      }
    }
    if (d === 1) ones++
    if (d > worst) {
      worst = d
      at = i
    }
    if (d > 1 && bad.length < 5)
      bad.push(`${c.name}(${a[i]}${c.arity === 2 ? `, ${b[i]}` : ''}) = ${y[i]} on webgpu, ${want} wanted (${d} ulp)`)
  }
  const args = at >= 0 ? `${a[at]}${c.arity === 2 ? `, ${b[at]}` : ''}` : ''
  return { name: c.name, inputs: n, maxUlp: worst, at: args, ones, flushed, bad }
}

// ---------- conformance: bundles of random programs against the cpu backend ----------

/** Argument sets per program: the items of a bundle are PER_BUNDLE · ITEMS. */
export const ITEMS = 4
/** The functions the f32 programs call. */
export const FUNCTIONS = ['sin', 'cos', 'tanh', 'atan']

type Value = number | Int32Array | Float32Array

/** A generated program with its argument sets and the cpu backend's results. */
export interface Member extends BundleMember {
  seed: number
  /** Argument sets, one per item. */
  sets: Value[][]
  /** The cpu backend's forward results (all parameters after the call), per item. */
  forward: Value[][]
  /** The cpu backend's inverse of its forward results, per item. */
  inverse: Value[][]
  /** Bound on the float operations one run performs (f32). */
  ops: number
  /** The cpu backend's forward and inverse run on one argument set (f32 members). */
  run?: (args: Value[]) => Value[]
  runInverse?: (args: Value[]) => Value[]
}

/** Indices of the f32 arguments a perturbation may move: w0, w1, w2 and x (not p and n, which conditions read). */
const MOVABLE = [0, 1, 2, 5]

/**
 * How much `run` amplifies a small change of its f32 arguments: the largest change of a result
 * over the largest change of an argument, for two random perturbations of relative size 2⁻¹²
 * (a numerical condition number; 1 when nothing amplifies).
 */
function amplification(run: (args: Value[]) => Value[], args: Value[], seed: number): number {
  const base = flat(run(args))
  let s = (seed * 2654435761) >>> 0
  const sign = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s & 0x80000000 ? -1 : 1
  }
  let worst = 1
  for (let trial = 0; trial < 2; trial++) {
    let moved = 0
    const nudge = (v: number) => {
      const w = Math.fround(v + sign() * 2 ** -12 * Math.max(Math.abs(v), 2 ** -8))
      moved = Math.max(moved, Math.abs(w - v))
      return w
    }
    const perturbed = args.map((a, j) => {
      if (!MOVABLE.includes(j)) return typeof a === 'number' ? a : a.slice()
      return typeof a === 'number' ? nudge(a) : (a as Float32Array).map(nudge)
    })
    const out = flat(run(perturbed))
    let change = 0
    out.forEach((v, i) => {
      if (Number.isFinite(v) && Number.isFinite(base[i]!)) change = Math.max(change, Math.abs(v - base[i]!))
    })
    if (moved > 0) worst = Math.max(worst, change / moved)
  }
  return worst
}

/** Packs members' argument sets into bundle arguments: `sel`, then each member's parameters for every item. */
function pack(members: Member[], pick: (m: Member, item: number) => Value[], float: boolean): Value[] {
  const n = members.length * ITEMS
  const sel = Int32Array.from({ length: n }, (_, i) => Math.floor(i / ITEMS))
  const out: Value[] = [sel]
  members.forEach((m, k) => {
    m.params.forEach((p, j) => {
      const sample = m.sets[0]![j]!
      const scalarFloat = float && p.type === 'f32'
      if (typeof sample === 'number') {
        const a = scalarFloat ? new Float32Array(n) : new Int32Array(n)
        for (let i = 0; i < ITEMS; i++) a[k * ITEMS + i] = pick(m, i)[j] as number
        out.push(a)
      } else {
        const L = sample.length
        const a = sample instanceof Float32Array ? new Float32Array(n * L) : new Int32Array(n * L)
        for (let i = 0; i < ITEMS; i++) a.set(pick(m, i)[j] as Int32Array & Float32Array, (k * ITEMS + i) * L)
        out.push(a)
      }
    })
  })
  return out
}

/** Member k's values of item i out of bundle arguments. */
function unpack(args: Value[], members: Member[], k: number, i: number): Value[] {
  let j = 1
  for (let q = 0; q < k; q++) j += members[q]!.params.length
  return members[k]!.params.map((_, p) => {
    const a = args[j + p] as Int32Array | Float32Array
    const L = a.length / (members.length * ITEMS)
    return L === 1 && typeof members[k]!.sets[0]![p] === 'number'
      ? a[k * ITEMS + i]!
      : a.slice((k * ITEMS + i) * L, (k * ITEMS + i + 1) * L)
  })
}

const flat = (vs: Value[]): number[] => vs.flatMap((v) => (typeof v === 'number' ? [v] : [...v]))

/** Float operations in a program's text times the most trips its loops make (a bound on what one run performs). */
function opsBound(source: string): number {
  const ops = (source.match(/[-+*/](?!=)|\b(sin|cos|exp|tanh|atan|sqrt|ROT|IROT)\(|\+=|-=/g) ?? []).length
  const loops = (source.match(/\b(for|while)\b/g) ?? []).length
  return Math.max(1, ops) * 4 ** Math.min(loops, 3)
}

/**
 * Compares f32 values: |webgpu − cpu| ≤ ops · ulp(scale) · max(1, κ) per value, where scale is
 * the largest magnitude among the inputs and the expected results (at least 1) and κ the
 * amplification of the computation (`amplification`). Returns the largest difference in ulps of
 * the scale divided by max(1, κ) (0: bit for bit) and whether every value kept the rule.
 */
function f32Difference(
  got: Value[],
  want: Value[],
  inputs: Value[],
  ops: number,
  kappa: number,
): { ulps: number; ok: boolean } {
  const g = flat(got),
    w = flat(want)
  const scale = Math.max(
    1,
    ...flat(inputs).map(Math.abs).filter(Number.isFinite),
    ...w.map(Math.abs).filter(Number.isFinite),
  )
  const unit = ulpOf(scale) * Math.max(1, kappa)
  let worst = 0,
    ok = true
  g.forEach((x, i) => {
    const y = w[i]!
    if (x === y) return
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      if (!(Number.isNaN(x) && Number.isNaN(y))) ok = false
      return
    }
    const d = Math.abs(x - y) / unit
    worst = Math.max(worst, d)
    if (d > ops) ok = false
  })
  return { ulps: worst, ok }
}

/** The spacing of f32 values at magnitude x. */
function ulpOf(x: number): number {
  const e = Math.floor(Math.log2(Math.max(Math.abs(x), 2 ** -126)))
  return 2 ** (e - 23)
}

export function i32Member(seed: number): Member | undefined {
  const p = randomProgram(seed, { features: { stack: false } })
  if (p.source.includes('f64(')) return undefined
  const f = cpu(p.source)[p.entry]!
  const sets = Array.from({ length: ITEMS }, (_, k) => randomArgs(p.signature, seed * 7919 + k) as Value[])
  const forward = sets.map((s) => f(...s.map((a) => (typeof a === 'number' ? a : a.slice()))) as Value[])
  const params = p.signature.params.map((q) => ({ name: q.name, type: q.type }))
  return { source: p.source, entry: p.entry, params, seed, sets, forward, inverse: sets, ops: 0 }
}

export function f32Member(seed: number): Member {
  const p = randomRealProgram(seed, {
    type: 'f32',
    stacks: false,
    recursion: false,
    functions: FUNCTIONS,
    division: false,
  })
  const m = cpu(p.source, undefined, false)
  const f = m[p.entry]!
  const sets = Array.from({ length: ITEMS }, (_, k) => {
    const [w0, w1, w2, q, n, x] = randomRealArgs(p, seed * 7919 + k)
    return [w0, w1, w2, q, n, Float32Array.from(x)] as Value[]
  })
  const copy = (s: Value[]) => s.map((a) => (typeof a === 'number' ? a : a.slice()))
  const forward = sets.map((s) => f(...copy(s)) as Value[])
  const inv = (f as unknown as { inverse: (...a: unknown[]) => unknown }).inverse
  const inverse = forward.map((s) => inv(...copy(s)) as Value[])
  const params = ['w0', 'w1', 'w2', 'p', 'n', 'x'].map((name) => ({
    name,
    type: name === 'n' ? 'i32' : name === 'x' ? 'f32[]' : 'f32',
  }))
  const run = (a: Value[]) => f(...copy(a)) as Value[]
  const runInverse = (a: Value[]) => inv(...copy(a)) as Value[]
  return {
    source: p.source,
    entry: p.entry,
    params,
    seed,
    sets,
    forward,
    inverse,
    ops: opsBound(p.source),
    run,
    runInverse,
  }
}

/** Totals of conformance runs. */
export interface ConformanceStats {
  i32: { run: number; skipped: number }
  f32: { run: number; exact: number; compared: number; worst: number }
}

/** A fresh set of totals. */
export const conformanceStats = (): ConformanceStats => ({
  i32: { run: 0, skipped: 0 },
  f32: { run: 0, exact: 0, compared: 0, worst: 0 },
})

/** Runs the i32 programs of `seeds` as one bundle: forward bit for bit, inverse back to the inputs bit for bit. Returns the failures. */
export async function i32Bundle(gpu: GpuContext, seeds: number[], stats: ConformanceStats): Promise<string[]> {
  const members = seeds.map(i32Member).filter((m): m is Member => m !== undefined)
  stats.i32.skipped += seeds.length - members.length
  stats.i32.run += members.length
  if (!members.length) return []
  const b = bundlePrograms(members)
  const f = cpu(b.source, undefined, false).bundle!
  const k = await gpuMap(f, {
    batch: members.length * ITEMS,
    perItem: f.ir.params.map((q) => q.name),
    gpu,
    checks: false,
  })
  const args = pack(members, (m, i) => m.sets[i]!, false)
  await k(...args)
  const failures: string[] = []
  members.forEach((m, q) => {
    for (let i = 0; i < ITEMS; i++) {
      const got = unpack(args, members, q, i)
      if (!got.every((v, j) => sameBits(v, m.forward[i]![j])))
        failures.push(`seed ${m.seed}, item ${i}: forward differs\n${m.source}`)
    }
  })
  await k.inverse(...args)
  members.forEach((m, q) => {
    for (let i = 0; i < ITEMS; i++) {
      if (!unpack(args, members, q, i).every((v, j) => sameBits(v, m.sets[i]![j])))
        failures.push(`seed ${m.seed}, item ${i}: inverse(forward(x)) != x\n${m.source}`)
    }
  })
  return failures
}

/** Runs the f32 programs of `seeds` as one bundle, forward and inverse, by the rule of `f32Difference`. Returns the failures. */
export async function f32Bundle(gpu: GpuContext, seeds: number[], stats: ConformanceStats): Promise<string[]> {
  const members = seeds.map(f32Member)
  const b = bundlePrograms(members)
  const f = cpu(b.source, undefined, false).bundle!
  const k = await gpuMap(f, {
    batch: members.length * ITEMS,
    perItem: f.ir.params.map((q) => q.name),
    gpu,
    checks: false,
  })
  const args = pack(members, (m, i) => m.sets[i]!, true)
  await k(...args)
  const failures: string[] = []
  /** Compares the device's results with the cpu's from the same arguments (`from`), by the rule of `f32Difference`. */
  const check = (
    what: string,
    from: (m: Member, i: number) => Value[],
    run: (m: Member) => (a: Value[]) => Value[],
    want: (m: Member, i: number) => Value[],
  ) => {
    members.forEach((m, q) => {
      for (let i = 0; i < ITEMS; i++) {
        const got = unpack(args, members, q, i)
        const kappa = amplification(run(m), from(m, i), m.seed * 31 + i)
        const d = f32Difference(got, want(m, i), from(m, i), m.ops, kappa)
        stats.f32.worst = Math.max(stats.f32.worst, d.ulps)
        stats.f32.compared++
        if (d.ulps === 0 && d.ok) stats.f32.exact++
        if (!d.ok)
          failures.push(
            `seed ${m.seed}, item ${i}, ${what}: webgpu ${JSON.stringify(flat(got))} vs cpu ${JSON.stringify(flat(want(m, i)))} (ops bound ${m.ops}, amplification ${kappa.toPrecision(3)})\n${m.source}`,
          )
      }
    })
  }
  check(
    'forward',
    (m, i) => m.sets[i]!,
    (m) => m.run!,
    (m, i) => m.forward[i]!,
  )
  // the inverse from the device's own forward results, against the cpu's inverse from the same values
  const fromDevice = members.map((_, q) => Array.from({ length: ITEMS }, (_, i) => unpack(args, members, q, i)))
  const cpuInverse = members.map((m, q) => fromDevice[q]!.map((a) => m.runInverse!(a)))
  await k.inverse(...args)
  check(
    'inverse',
    (m, i) => fromDevice[members.indexOf(m)]![i]!,
    (m) => m.runInverse!,
    (m, i) => cpuInverse[members.indexOf(m)]![i]!,
  )
  stats.f32.run += members.length
  return failures
}
