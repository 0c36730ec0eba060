/**
 * The conformance suite of @tenet/testing on webgpu, for its f32/i32 subset. Random reversible
 * programs are bundled (`bundlePrograms`: one shader runs a batch of programs, each item one of
 * them, so the per-pipeline compile cost is paid once per bundle) and run on batches of
 * argument sets; the cpu backend runs each program alone as the reference.
 *
 * - i32 programs (`randomProgram`, stacks off; those that convert to f64 are left out, WGSL has
 *   none): forward results bit for bit, and the inverse gives back the inputs bit for bit.
 * - f32 programs (`randomRealProgram` with type f32: sums, products, sin, cos, tanh, atan,
 *   ROT, loops over an array, ifs, whiles, routines, calls and uncalls):
 *   forward and inverse results within one ulp per operation of the cpu backend's f32 results.
 *   The rule, per value: |webgpu − cpu| ≤ ops · ulp(scale), where ops counts the float
 *   operations the program text contains times the most trips its loops make, and scale is the
 *   largest magnitude among the item's inputs, outputs and 1. Each operation on either side is
 *   within half an ulp (+ − × ÷ sqrt: correctly rounded; the math routines within one ulp of the
 *   correctly rounded value, as `precise-math.test.ts` checks), and sums pass an absolute error
 *   on unchanged, so a difference of one operation's rounding reaches a result as at most one
 *   ulp of the values it was computed from. Products by values above 1 can grow it, which the
 *   scale bounds for these programs (their values are sums of terms of magnitude ≲ the inputs');
 *   non-finite results must agree exactly (NaN with NaN).
 *
 * `WEBGPU_CONFORMANCE_I32` and `WEBGPU_CONFORMANCE_F32` set the number of programs of each kind.
 */
import { describe, expect, it } from 'vitest'
import { bundlePrograms, randomArgs, randomProgram, randomRealArgs, randomRealProgram, sameBits, type BundleMember } from '@tenet/testing'
import { gpuMap } from './index.js'
import { cpu, testGpu } from './test-util.js'

const gpu = await testGpu()

/**
 * Programs of each kind. SwiftShader compiles shaders slowly (about 1 s per i32 program and 5 s
 * per f32 one on a loaded 2-core machine: the precise math routines are inlined at every call),
 * so the suite runs a few; the README reports a long run.
 */
const PROGRAMS_I32 = Number(process.env.WEBGPU_CONFORMANCE_I32 ?? 20)
const PROGRAMS_F32 = Number(process.env.WEBGPU_CONFORMANCE_F32 ?? 5)
/** Programs per bundle (one forward and one inverse pipeline each). */
const PER_BUNDLE = 5
/** Argument sets per program: the items of a bundle are PER_BUNDLE · ITEMS. */
const ITEMS = 4
/** The functions the f32 programs call. */
const FUNCTIONS = ['sin', 'cos', 'tanh', 'atan']

type Value = number | Int32Array | Float32Array

interface Member extends BundleMember {
  seed: number
  /** Argument sets, one per item. */
  sets: Value[][]
  /** The cpu backend's forward results (all parameters after the call), per item. */
  forward: Value[][]
  /** The cpu backend's inverse of its forward results, per item. */
  inverse: Value[][]
  /** Bound on the float operations one run performs (f32). */
  ops: number
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
    return L === 1 && typeof members[k]!.sets[0]![p] === 'number' ? a[k * ITEMS + i]! : a.slice((k * ITEMS + i) * L, (k * ITEMS + i + 1) * L)
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
 * Compares f32 values by the rule of the module comment; returns the largest difference in ulps
 * of the scale (0: bit for bit), or Infinity when it breaks the rule.
 */
function f32Difference(got: Value[], want: Value[], inputs: Value[], ops: number): { ulps: number; ok: boolean } {
  const g = flat(got), w = flat(want)
  const scale = Math.max(1, ...flat(inputs).map(Math.abs).filter(Number.isFinite), ...w.map(Math.abs).filter(Number.isFinite))
  const unit = ulpOf(scale)
  let worst = 0, ok = true
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

function i32Member(seed: number): Member | undefined {
  const p = randomProgram(seed, { features: { stack: false } })
  if (p.source.includes('f64(')) return undefined
  const f = cpu(p.source)[p.entry]!
  const sets = Array.from({ length: ITEMS }, (_, k) => randomArgs(p.signature, seed * 7919 + k) as Value[])
  const forward = sets.map((s) => f(...s.map((a) => (typeof a === 'number' ? a : a.slice()))) as Value[])
  const params = p.signature.params.map((q) => ({ name: q.name, type: q.type }))
  return { source: p.source, entry: p.entry, params, seed, sets, forward, inverse: sets, ops: 0 }
}

function f32Member(seed: number): Member {
  const p = randomRealProgram(seed, { type: 'f32', stacks: false, recursion: false, functions: FUNCTIONS, division: false })
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
  const params = ['w0', 'w1', 'w2', 'p', 'n', 'x'].map((name) => ({ name, type: name === 'n' ? 'i32' : name === 'x' ? 'f32[]' : 'f32' }))
  return { source: p.source, entry: p.entry, params, seed, sets, forward, inverse, ops: opsBound(p.source) }
}

describe.skipIf(!gpu)('conformance on webgpu: bundles of random programs against the cpu backend', () => {
  const stats = { i32: { run: 0, skipped: 0 }, f32: { run: 0, exact: 0, worst: 0 } }

  for (let first = 0; first < PROGRAMS_I32; first += PER_BUNDLE) {
    const seeds = Array.from({ length: Math.min(PER_BUNDLE, PROGRAMS_I32 - first) }, (_, i) => first + i)
    it(`i32 programs ${seeds[0]}..${seeds.at(-1)}: bit for bit, forward and inverse`, async () => {
      const members = seeds.map(i32Member).filter((m): m is Member => m !== undefined)
      stats.i32.skipped += seeds.length - members.length
      stats.i32.run += members.length
      const b = bundlePrograms(members)
      const f = cpu(b.source, undefined, false).bundle!
      const k = await gpuMap(f, { batch: members.length * ITEMS, perItem: f.ir.params.map((q) => q.name), gpu, checks: false })
      const args = pack(members, (m, i) => m.sets[i]!, false)
      await k(...args)
      const failures: string[] = []
      members.forEach((m, q) => {
        for (let i = 0; i < ITEMS; i++) {
          const got = unpack(args, members, q, i)
          if (!got.every((v, j) => sameBits(v, m.forward[i]![j]))) failures.push(`seed ${m.seed}, item ${i}: forward differs\n${m.source}`)
        }
      })
      await k.inverse(...args)
      members.forEach((m, q) => {
        for (let i = 0; i < ITEMS; i++) {
          if (!unpack(args, members, q, i).every((v, j) => sameBits(v, m.sets[i]![j]))) failures.push(`seed ${m.seed}, item ${i}: inverse(forward(x)) != x\n${m.source}`)
        }
      })
      expect(failures.slice(0, 2).join('\n\n')).toBe('')
    }, 300_000)
  }

  for (let first = 0; first < PROGRAMS_F32; first += PER_BUNDLE) {
    const seeds = Array.from({ length: Math.min(PER_BUNDLE, PROGRAMS_F32 - first) }, (_, i) => first + i)
    it(`f32 programs ${seeds[0]}..${seeds.at(-1)}: within one ulp per operation, forward and inverse`, async () => {
      const members = seeds.map(f32Member)
      const b = bundlePrograms(members)
      const f = cpu(b.source, undefined, false).bundle!
      const k = await gpuMap(f, { batch: members.length * ITEMS, perItem: f.ir.params.map((q) => q.name), gpu, checks: false })
      const args = pack(members, (m, i) => m.sets[i]!, true)
      await k(...args)
      const failures: string[] = []
      const check = (what: string, want: (m: Member, i: number) => Value[]) => {
        members.forEach((m, q) => {
          for (let i = 0; i < ITEMS; i++) {
            const got = unpack(args, members, q, i)
            const d = f32Difference(got, want(m, i), m.sets[i]!, m.ops)
            stats.f32.worst = Math.max(stats.f32.worst, d.ulps)
            if (d.ulps === 0 && d.ok) stats.f32.exact++
            if (!d.ok) failures.push(`seed ${m.seed}, item ${i}, ${what}: webgpu ${JSON.stringify(flat(got))} vs cpu ${JSON.stringify(flat(want(m, i)))} (ops bound ${m.ops})\n${m.source}`)
          }
        })
      }
      check('forward', (m, i) => m.forward[i]!)
      // the inverse of the device's own forward results, against the cpu's inverse of its own
      await k.inverse(...args)
      check('inverse', (m, i) => m.inverse[i]!)
      stats.f32.run += members.length
      expect(failures.slice(0, 2).join('\n\n')).toBe('')
    }, 300_000)
  }

  it('ran the programs (i32 ones that convert to f64 are left out)', () => {
    const total = 2 * stats.f32.run * ITEMS
    console.log(`[backend-webgpu] conformance: ${stats.i32.run} i32 programs bit for bit (${stats.i32.skipped} left out: f64), ${stats.f32.run} f32 programs × ${ITEMS} items × forward and inverse: ${stats.f32.exact} of ${total} bit for bit, largest difference ${stats.f32.worst.toPrecision(3)} ulp of the scale`)
    expect(stats.i32.run + stats.i32.skipped).toBe(PROGRAMS_I32)
    expect(stats.i32.run).toBeGreaterThan(PROGRAMS_I32 / 2)
    expect(stats.f32.run).toBe(PROGRAMS_F32)
  })
})
