/**
 * Programs whose loops compute a scalar ancilla and uncompute it in every iteration (a series'
 * term under `routine` / `~routine`, as in paper 001's Bessel function). Without checks,
 * `sink-scalars` gives the ancilla to each iteration and `dead-ancillas` drops the uncompute:
 * the programs must compute the same bits as the reference interpreter (checks on), forwards and
 * backwards, whether or not the pass applies, and the optimised IR must show where it did.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printFunction, type BackendSpec } from '@tenet/ir'
import { inlineSmallCalls, optimize } from '@tenet/ir/backend'
import { compileModule } from '@tenet/reversible'
import { backendUnderTest, conformanceProblems, referenceBackend, runConformance } from '@tenet/testing'
import { cpuBackend } from './index.js'

/** Each program, the arguments it runs on, and whether the uncompute of `t` must be gone. */
/** (\`updates\`: how many updates of \`t\` the sunk program keeps, one per loop; default 1) */
const PROGRAMS: Array<{ name: string; source: string; args: unknown[][]; sunk: boolean; updates?: number }> = [
  {
    name: 'a series term under routine / ~routine (the Bessel loop)',
    source: `
fn f(out: f64, z: f64, k: i32, s: f64) {
  t: f64 <- 0.0
  s += z / 2.0
  while (abs(s) > 1e-8, k != 0) {
    k += 1
    routine {
      t -= z * z / (f64(k) * f64(k + 2))
    }
    out += s * t
    s *= 0.5
    ~routine
  }
  t -> 0.0
}`,
    args: [
      [0, 1, 0, 0],
      [0.5, 2.5, 0, 0],
      [-0.75, 1.5, 0, 0],
    ],
    sunk: true,
  },
  {
    name: 'the series loop under an outer routine, whose ~routine runs it backwards (two loops)',
    source: `
fn f(out: f64, z: f64, k: i32, s: f64) {
  t: f64 <- 0.0
  acc <- 0.0
  routine {
    while (abs(s) > 1e-8, k != 0) {
      k += 1
      routine {
        t -= z * z / (f64(k) * f64(k + 2))
      }
      acc += s * t
      s *= 0.5
      ~routine
    }
  }
  out += acc
  ~routine
  acc -> 0.0
  t -> 0.0
}`,
    args: [
      [0, 1, 0, 0.5],
      [0.5, 2.5, 0, 1.25],
      [-0.75, 1.5, 0, -3],
    ],
    sunk: true,
    updates: 2,
  },
  {
    name: 'an i32 ancilla in a counting loop, read between the pair',
    source: `
fn f(out: f64, x: f64[], n: i32) {
  t: i32 <- 0
  for i in 0..n {
    t += i * 3 + 1
    out += x[i] * f64(t)
    t -= i * 3 + 1
  }
  t -> 0
}`,
    args: [[0.25, Float64Array.of(1, -2, 0.5, 3), 4]],
    sunk: true,
  },
  {
    name: 'a term that the loop carries over (must stay)',
    source: `
fn f(out: f64, x: f64[], n: i32) {
  t: f64 <- 0.0
  for i in 0..n {
    t += x[i]
    out += t * 0.5
  }
  for i in reverse 0..n {
    t -= x[i]
  }
  t -> 0.0
}`,
    args: [[1, Float64Array.of(1, 2, 3), 3]],
    sunk: false,
  },
]

const registry = createRegistry()
const backends = [
  referenceBackend(),
  backendUnderTest(cpuBackend, { registry }),
  { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
]
/** The optimised IR the cpu backend compiles (checks off), captured by a backend that wraps it. */
let captured = ''
const capture: BackendSpec = {
  ...cpuBackend,
  name: 'capture',
  doCompile(checked, inverses, options) {
    const inlined = inlineSmallCalls(checked, inverses)
    captured = printFunction(optimize(inlined.program, inlined.inverses, options).program.functions.get('f')!)
    return cpuBackend.doCompile(checked, inverses, options)
  },
}
const reg = createRegistry().registerBackend(capture)
function optimised(source: string): string {
  compileModule(parse({ text: source, name: 'sink-scalars' }), { registry: reg, backend: 'capture', checks: false })
  return captured
}

describe('loop-restored scalar ancillas: every backend, checks on and off, agrees with the interpreter', () => {
  for (const p of PROGRAMS)
    it(`${p.name}: the bits agree, and the uncompute ${p.sunk ? 'goes' : 'stays'}`, () => {
      for (const args of p.args)
        expect(conformanceProblems(runConformance({ source: p.source, entry: 'f' }, args, backends))).toEqual([])
      const ir = optimised(p.source)
      // the ancilla allocated inside the loop with one update of it left there, or before the loop
      expect(/^ {4}t: \w+ <- 0/m.test(ir)).toBe(p.sunk)
      expect(/^ {2}t: \w+ <- 0/m.test(ir)).toBe(!p.sunk)
      if (p.sunk) expect(ir.match(/^ +t (\+=|-=)/gm)?.length).toBe(p.updates ?? 1)
    })
})
