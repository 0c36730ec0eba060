/**
 * Range-checked paired iterations (`WasmOptions.pairRanges`): a paired loop inside a range-versioned
 * loop's copy (an inner loop, which no copy versions) checks its affine indices once, for its whole
 * range, and runs its pairs unguarded; otherwise the scalar loop runs every iteration, guarded.
 * Random nests of such loops, run in range, across the ends and far out of range, against the
 * scalar wasm code (no SIMD: the same failing access and the same elements written before it, on
 * resident arrays), against the module without the option, and against the interpreter, with
 * run-time checks off and on.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { createWasmBackend, type WasmProgram } from './index.js'

/** A small deterministic generator. */
function rng(seed: number): () => number {
  let s = seed * 2654435761 + 11
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    return ((s >>> 8) & 0xffff) / 0x10000
  }
}

/**
 * An outer loop over e (with an affine access of its own, so that it has a range version) whose
 * body declares a and b from e and runs a pairable inner loop over j: the gradient-like updates of
 * the graph-embedding adjoint, a reduction, or an update reading a shifted element.
 */
function randomNest(seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const outer = pick(['for e in lo..hi', 'for e in reverse lo..hi'])
  const inner = pick(['for j in 0..n', 'for j in reverse 0..n', 'for j in 1..n', 'for j in lo..n'])
  const a = pick(['e * p', 'e + p', 'p - e', '2 * e + p'])
  const b = pick(['q - e', 'e + q', 'e * q', 'len(x) - e - q'])
  const body = pick([
    ['g[a + j] += 0.5 * (x[a + j] - x[b + j])', 'g[b + j] -= 0.5 * (x[a + j] - x[b + j])'],
    ['s += (x[a + j] - x[b + j]) * (x[a + j] - x[b + j])'],
    ['g[a + j] += x[b + j + 1] * 0.25'],
    ['g[j + b] += s * x[a + j - 1]', 'g[a + j] -= x[j] + 1.5'],
  ])
  return `fn f(g: f64[], x: f64[], s: f64, n: i32, lo: i32, hi: i32, p: i32, q: i32) {
  ${outer} {
    s += x[e] * 0.125
    a: i32 <- ${a}
    b: i32 <- ${b}
    ${inner} {
      ${body.join('\n      ')}
    }
    b -> ${b}
    a -> ${a}
  }
}`
}

/** Paired loops compiled with a range check before their pairs, by the last `wasm_on` compilation. */
let ranged = 0
const on = createWasmBackend()
const wasmOn = {
  ...on,
  name: 'wasm_on',
  doCompile: (...a: Parameters<typeof on.doCompile>) => {
    const p = on.doCompile(...a) as WasmProgram
    ranged += p.pairRanges
    return p
  },
}
const wasmOff = { ...createWasmBackend({ pairRanges: false }), name: 'wasm_off' }
const wasmScalar = { ...createWasmBackend({ simd: false }), name: 'wasm_scalar' }
const registry = () =>
  createRegistry()
    .registerBackend(wasmOn)
    .registerBackend(wasmOff)
    .registerBackend(wasmScalar)
    .registerBackend(interpreterBackend)

type Call = (...a: unknown[]) => unknown
interface Core {
  (...a: unknown[]): void
  results: Float64Array
  resident: { allocate(elem: string, n: number): { array: Float64Array } }
}

const N = 14
const start = () => ({
  g: Array.from({ length: N }, (_, k) => k + 0.25),
  x: Array.from({ length: N }, (_, k) => 10 * k + 1 + 1 / (k + 3)),
})

/** A wasm core's outcome on resident arrays: g and s, or the error and what g holds after it. */
function residentOutcome(core: Core, args: number[]): string {
  // (an allocation may grow the memory, which detaches the views taken before it: read them after)
  const hg = core.resident.allocate('f64', N),
    hx = core.resident.allocate('f64', N)
  const v = start()
  hg.array.set(v.g)
  hx.array.set(v.x)
  try {
    core(hg.array, hx.array, 0.5, ...args)
    return `g = ${Array.from(hg.array).join(', ')}; s = ${core.results[2]}`
  } catch (e) {
    const err = e as { code?: string; message: string }
    return `${err.code}: ${err.message.split('\n')[0]} | g = ${Array.from(hg.array).join(', ')}`
  }
}

/** A module function's outcome on host arrays: g and s, or the error's code. */
function outcome(f: Call, args: number[]): string {
  const v = start()
  try {
    const r = f(Float64Array.from(v.g), Float64Array.from(v.x), 0.5, ...args) as unknown[]
    return `g = ${Array.from(r[0] as Float64Array).join(', ')}; s = ${r[2]}`
  } catch (e) {
    return `${(e as { code?: string }).code}`
  }
}

describe('range-checked paired iterations', () => {
  for (const checks of [false, true])
    it(`give the scalar code's results and failures, bit for bit (checks ${checks ? 'on' : 'off'})`, () => {
      ranged = 0
      let failed = 0,
        passed = 0
      for (let seed = 0; seed < 30; seed++) {
        const text = randomNest(seed)
        const [mOn, mOff, mScalar, mRef] = (['wasm_on', 'wasm_off', 'wasm_scalar', 'interpreter'] as const).map(
          (backend) => compileModule(parse({ text, name: 'pr' }), { registry: registry(), backend, checks }),
        )
        const r = rng(seed + 500)
        for (let run = 0; run < 10; run++) {
          // n mostly in range and long enough to pair; lo..hi, p and q sometimes out of range
          const args = [
            Math.floor(r() * 9) - 1,
            Math.floor(r() * 4) - 1,
            Math.floor(r() * 5) + 1,
            Math.floor(r() * 5) - 1,
            Math.floor(r() * 9) - 1,
          ]
          const what = `${text}\nn, lo, hi, p, q = ${args.join(', ')}`
          const scalar = residentOutcome(mScalar!.f!.core as unknown as Core, args)
          expect(residentOutcome(mOn!.f!.core as unknown as Core, args), what).toBe(scalar)
          const want = outcome(mRef!.f as unknown as Call, args)
          expect(outcome(mOn!.f as unknown as Call, args), what).toBe(want)
          expect(outcome(mOff!.f as unknown as Call, args), what).toBe(want)
          if (want.startsWith('runtime/')) failed++
          else passed++
        }
      }
      expect(failed, 'some runs go out of range').toBeGreaterThan(40)
      expect(passed, 'some runs stay in range').toBeGreaterThan(40)
      // with run-time checks nothing is paired (a failed check must name the scalar code's element)
      if (checks) expect(ranged).toBe(0)
      else expect(ranged, 'paired loops check their ranges').toBeGreaterThan(20)
    })

  it('leaves a paired loop that has a range version of its own as it was', () => {
    ranged = 0
    const text = 'fn f(g: f64[], x: f64[], n: i32) { for j in 0..n { g[j] += 0.5 * x[j + 1] } }'
    const m = compileModule(parse({ text, name: 'pr' }), { registry: registry(), backend: 'wasm_on', checks: false })
    const g = new Float64Array(8),
      x = Float64Array.from({ length: 8 }, (_, k) => k)
    const out = m.f!(g, x, 7) as unknown[]
    expect(Array.from(out[0] as Float64Array)).toEqual([0.5, 1, 1.5, 2, 2.5, 3, 3.5, 0])
    // its unguarded copy's accesses are marked already; its guarded copy (run when it is short or out
    // of range) is not range-checked again, so the diagnostic counts nothing
    expect(ranged).toBe(0)
  })
})
