/**
 * Review 18c of pass `jam-iterations` with run-time checks on (`CHECKED_PASSES`, bodies of at most
 * `JAM_ITERATIONS_MAX_CHECKED_STATEMENTS` statements): its cost with checks on where a function
 * holds several jammable loops, the programs of the shared tests, the order of two failing checks
 * at one fused statement, and the edges that hold (a failing check in one lane, in the leftover
 * loop, a small array that `scalar-arrays` replaced, an inlined callee's ancilla, an alias check;
 * cpu and wasm against the reference interpreter, all with checks on).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, TENET_FUNCTION, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { raisedError } from '@tenet/testing'
import { wasmBackend } from './index.js'

const registry = createRegistry()
  .registerBackend(cpuBackend)
  .registerBackend(wasmBackend)
  .registerBackend(interpreterBackend)
const compile = (src: string, backend: string, checks = true): TenetModule =>
  compileModule(parse({ text: src, name: 'review18c' }), { registry, backend, checks })
/** `run` with pass `jam-iterations` switched off for the process. */
function withoutJam<T>(run: () => T): T {
  disabledPasses.add('jam-iterations')
  try {
    return run()
  } finally {
    disabledPasses.delete('jam-iterations')
  }
}
/** The generated JavaScript of function `name` (cpu, checks on). */
const generated = (src: string, name = 'f'): string => {
  const f = compile(src, 'cpu')[name] as unknown as Record<
    symbol,
    { compiled: { sourceOf(n: string, i: boolean): string } }
  >
  return f[TENET_FUNCTION]!.compiled.sourceOf(name, false)
}
/** Whether the pass changed the cpu code of `f` (checks on). */
const jammed = (src: string): boolean => generated(src) !== withoutJam(() => generated(src))
const F = (n: number, f: (i: number) => number) => Float64Array.from({ length: n }, (_, i) => f(i))
const copy = (a: unknown[]) => a.map((x) => (ArrayBuffer.isView(x) ? (x as Float64Array).slice() : x))
/** The error (or the results) of `src`'s `f` on the interpreter, cpu and wasm, checks on. */
function errors(src: string, args: unknown[]): string[] {
  return ['interpreter', 'cpu', 'wasm'].map((b) => {
    let out: unknown
    const e = raisedError(() => {
      out = compile(src, b).f!(...copy(args))
    })
    return e === 'no error'
      ? JSON.stringify(out, (_k, x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x))
      : e
  })
}

describe('jam-iterations with checks on (review 18c)', () => {
  it('the shared tests’ wrong-uncompute program (`describeCheckedPasses`, jam-iterations) is jammed with checks on', () => {
    // (review 18c: at 19 statements it exceeded the cap of 16 and ran as written, so those tests
    // never reached a jammed copy's checks; now 15, as in checked-passes.ts)
    const wrong = `fn f(loss: f64, c: f64[], xs: f64[], ys: f64[], z: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    d: f64[] <- zeros(1)
    d[0] += ys[j] * 2.0
    for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * xs[j] + c[k] }
    e <- 0.0
    e += acc[0] - d[0]
    loss += e * e
    e -= acc[0] - d[0]
    e -> 0.0
    for k in 0..=len(c) - 2 { acc[k] -= acc[k + 1] * xs[j] + c[k] * z[j] }
    d[0] -= ys[j] * 2.0
    d -> zeros(1)
    acc -> zeros(len(c))
  }
}`
    expect(jammed(wrong)).toBe(true)
  })

  it('two lanes failing at one fused statement: an error of the program, maybe the later iteration’s (the module comment)', () => {
    // iteration 0 fails the alias check at k = 5, iteration 1 at k = 2: the fused inner loop
    // reaches iteration 1's k = 2 first (review 18c: the comment said the first iteration's)
    const src = `fn f(loss: f64, c: f64[], xs: f64[], o: i32[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + acc[o[j]] * c[k] }
    loss += acc[len(c) - 1]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] + acc[o[j]] * c[k] }
    acc -> zeros(len(c))
  }
}`
    expect(jammed(src)).toBe(true)
    const [want, cpu, wasm] = errors(src, [
      0,
      F(8, (i) => 0.1 * i + 0.1),
      F(8, (i) => Math.sin(i + 1)),
      Int32Array.of(5, 2, 0, 0, 0, 0, 0, 0),
    ])
    expect(want).toMatch(/^runtime\/alias \| .*\(index 5\)/)
    for (const got of [cpu, wasm]) expect(got).toMatch(/^runtime\/alias \| .*\(index [25]\)/)
  })

  it('one failing deallocation (array, scalar-arrays elements, scalar, inlined callee) in any lane or left over: the reference’s error', () => {
    const progs = [
      `fn f(loss: f64, c: f64[], xs: f64[], z: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    d: f64[] <- zeros(2)
    d[0] += xs[j]
    d[1] += xs[j] * 2.0
    for k in 1..len(c) { acc[k] += acc[k - 1] * d[0] + c[k] }
    loss += acc[len(c) - 1] * d[1]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * d[0] + c[k] }
    d[1] -= xs[j] * 2.0 * z[j]
    d[0] -= xs[j]
    d -> zeros(2)
    acc -> zeros(len(c))
  }
}`,
      `fn leaf(loss: f64, x: f64, z: f64) {
  t <- 0.0
  t += x * 3.0
  loss += t
  t -= x * 3.0 * z
  t -> 0.0
}
fn f(loss: f64, c: f64[], xs: f64[], z: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    leaf(loss, acc[len(c) - 1], z[j])
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] + c[k] }
    acc -> zeros(len(c))
  }
}`,
    ]
    for (const src of progs) {
      expect(jammed(src)).toBe(true)
      for (const [n, bad] of [
        [8, 2],
        [9, 8],
        [5, 3],
      ] as const) {
        const z = F(n, (i) => (i === bad ? 2 : 1))
        const [want, cpu, wasm] = errors(src, [0, Float64Array.of(0.3, 0.2, 0.1, 0.5), F(n, (i) => Math.sin(i + 1)), z])
        expect(want).toMatch(/^runtime\/dealloc \| cannot deallocate `(d|t)`/)
        expect([cpu, wasm]).toEqual([want, want])
      }
    }
  }, 30_000)
})
