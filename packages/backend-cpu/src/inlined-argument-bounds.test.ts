/**
 * With run-time checks on, a call of a small function is inlined before the checks are placed:
 * its element arguments are still bounds-checked as the reference interpreter checks them, each
 * before the callee runs and in argument order (see `inlineCall` of `@tenet/ir`; the wasm backend's
 * \`inlined-argument-bounds.test.ts\` runs more cases on both backends).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
type Run = (...a: unknown[]) => unknown[]

describe('the element arguments of an inlined call, checks on', () => {
  it('two element arguments out of range: the first one fails, as on the interpreter', () => {
    const text = `fn g(y: f64, x: f64) { t <- x; y += t; t -> y }
fn f(y: f64[], x: f64[], n: i32) {
  for i in 0..n { g(y[i], x[i]) }
}`
    const run = (backend: string) => {
      const m = compileModule(parse({ text, name: 'm' }), { registry, backend, checks: true })
      return raisedError(() => (m.f as unknown as Run)(new Float64Array(0), new Float64Array(0), 1))
    }
    const want = run('interpreter')
    expect(want).toMatch(/out of bounds for `y`/)
    expect(run('cpu')).toBe(want)
  })

  it('an element argument out of range that the inlined callee never reads (or reads in a branch) still fails, as on the interpreter', () => {
    const text = `fn g(y: f64, x: f64) { x += 1.0 }
fn h(y: f64, x: f64) { t <- 1.0; t -> 2.0; x += y }
fn f(y: f64[], x: f64[]) { g(y[3], x[0]) }
fn f2(y: f64[], x: f64[]) { h(y[3], x[0]) }
fn b(y: f64, x: f64, c: i32) { if (c > 0, ~) { x += y } }
fn f3(y: f64[], x: f64[]) { b(y[3], x[0], 0) }`
    for (const name of ['f', 'f2', 'f3']) {
      const run = (backend: string) => {
        const m = compileModule(parse({ text, name: 'm' }), { registry, backend, checks: true })
        return raisedError(() => (m[name] as unknown as Run)(new Float64Array(1), new Float64Array(1)))
      }
      const want = run('interpreter')
      expect(want).toMatch(/^runtime\/out-of-bounds \| index 3 is out of bounds for `y`/)
      // (before the fix: `f` ran without error, `f2` failed on the callee's deallocation instead)
      expect(run('cpu'), name).toBe(want)
    }
  })
})
