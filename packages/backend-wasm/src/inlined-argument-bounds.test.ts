/**
 * With run-time checks on, a call of a small function is inlined before the checks are placed
 * (`inlineSmallCalls`): its element arguments must still be bounds-checked as the reference
 * interpreter checks them, each before the callee runs, in argument order, with the argument's own
 * location; whether the inlined body reads the element or not (see `inlineCall` of `@tenet/ir`).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { raisedError } from '@tenet/testing'
import { wasmBackend } from './index.js'

const registry = createRegistry()
  .registerBackend(cpuBackend)
  .registerBackend(wasmBackend)
  .registerBackend(interpreterBackend)
type Run = ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }
const text = (v: unknown) => JSON.stringify(v, (_k, x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x))

const source = `fn g(y: f64, x: f64) { x += 1.0 }
fn h(y: f64, x: f64) { t <- 1.0; t -> 2.0; x += y }
fn k(y: f64, x: f64) { t <- x; y += t; t -> x }
fn b(y: f64, x: f64, c: i32) { if (c > 0, ~) { x += y } }
fn e(y: f64, x: f64, z: f64) { x += z * 2.0 }
fn unused(y: f64[], x: f64[]) { g(y[3], x[0]) }
fn failsInside(y: f64[], x: f64[]) { h(y[3], x[0]) }
fn bothOut(y: f64[], x: f64[]) { k(y[3], x[3]) }
fn branch(y: f64[], x: f64[]) { b(y[3], x[0], 0) }
fn uncall(y: f64[], x: f64[]) { ~g(y[3], x[0]) }
fn nested(y: f64[], x: f64[], j: i32[]) { g(y[j[0]], x[0]) }
fn compound(y: f64[], x: f64[]) { e(y[3], x[0], x[5] * 2.0) }
fn looped(y: f64[], x: f64[], n: i32) { for i in 0..n { k(y[i], x[i]) } }
fn looped2(y: f64[], x: f64[], n: i32) { for i in 0..n { g(y[i + 1], x[i]) } }`

const mods = Object.fromEntries(
  ['interpreter', 'cpu', 'wasm'].map((backend) => [
    backend,
    compileModule(parse({ text: source, name: 'inl' }), { registry, backend, checks: true }),
  ]),
)
/** What running `name` (or its inverse) gives: the error, or the results and arguments after. */
function outcome(backend: string, name: string, args: () => unknown[], inverse = false): string {
  const f = mods[backend]![name] as unknown as Run
  const a = args()
  let r: unknown
  const e = raisedError(() => {
    r = inverse ? f.inverse(...a) : f(...a)
  })
  return e === 'no error' ? `${text(r)} ${text(a)}` : e
}
const f64 = (n: number) => Float64Array.from({ length: n }, (_, i) => i + 0.5)

const cases: Array<[string, () => unknown[], RegExp | undefined]> = [
  ['unused', () => [f64(1), f64(1)], /^runtime\/out-of-bounds \| index 3 is out of bounds for `y`/],
  ['failsInside', () => [f64(1), f64(1)], /^runtime\/out-of-bounds \| index 3 is out of bounds for `y`/],
  ['bothOut', () => [f64(1), f64(1)], /^runtime\/out-of-bounds \| index 3 is out of bounds for `y`/],
  ['branch', () => [f64(1), f64(1)], /^runtime\/out-of-bounds \| index 3 is out of bounds for `y`/],
  ['uncall', () => [f64(1), f64(1)], /^runtime\/out-of-bounds \| index 3 is out of bounds for `y`/],
  ['nested', () => [f64(4), f64(1), Int32Array.of(5)], /index 5 is out of bounds for `y`/],
  ['nested', () => [f64(4), f64(1), new Int32Array(0)], /index 0 is out of bounds for `j`/],
  ['compound', () => [f64(1), f64(1)], /index 3 is out of bounds for `y`/],
  ['compound', () => [f64(4), f64(1)], /index 5 is out of bounds for `x`/],
  ['looped', () => [f64(2), f64(2), 3], /index 2 is out of bounds for `y`/],
  ['looped2', () => [f64(2), f64(3), 3], /index 2 is out of bounds for `y`/],
  // in range: the results and arguments of the interpreter
  ['unused', () => [f64(4), f64(1)], undefined],
  ['failsInside', () => [f64(4), f64(1)], /deallocat/],
  ['bothOut', () => [f64(4), f64(4)], undefined],
  ['branch', () => [f64(4), f64(1)], undefined],
  ['uncall', () => [f64(4), f64(1)], undefined],
  ['nested', () => [f64(4), f64(1), Int32Array.of(2)], undefined],
  ['compound', () => [f64(4), f64(6)], undefined],
  ['looped', () => [f64(3), f64(3), 3], undefined],
  ['looped2', () => [f64(4), f64(3), 3], undefined],
]

describe('the element arguments of an inlined call, checks on', () => {
  for (const backend of ['cpu', 'wasm'])
    for (const inverse of [false, true])
      it(`${backend}${inverse ? ', the inverse' : ''}: the interpreter's errors and results`, () => {
        for (const [name, args, want] of cases) {
          const ref = outcome('interpreter', name, args, inverse)
          // (the inverse runs a loop the other way round: its first failure is compared with the interpreter only)
          if (want && !inverse) expect(ref, name).toMatch(want)
          else if (!want) expect(ref, name).not.toMatch(/^runtime\//)
          expect(outcome(backend, name, args, inverse), name).toBe(ref)
        }
      })
})
