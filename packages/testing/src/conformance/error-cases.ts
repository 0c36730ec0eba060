/**
 * Error parity: one program per run-time check of the catalog (`RUNTIME_CHECKS` of `@tenet/ir`)
 * and a call that fails it. Every backend that declares the `checks` capability must fail each
 * with the same `TenetError` as the reference interpreter: the same code, message and source
 * location. A case that needs another capability (stacks) names it; a check that only some
 * engines can meet at all says why (`only`).
 */
import type { RuntimeCheck } from '@tenet/ir'
import type { TenetModule } from '@tenet/reversible'
import type { Capability } from './capabilities.js'

/** A program that fails one check, and the call that fails it. */
export interface ErrorCase {
  src: string
  call: (m: TenetModule) => unknown
  /** Capabilities the program needs besides `checks` (e.g. `stacks`). */
  needs?: Capability[]
}

/** A check that no program can make every engine raise, and why. */
export interface EngineSpecificCheck {
  only: string
}

/** Per check of the catalog: a failing program, or why there is none that every engine runs. */
export const ERROR_CASES: Record<RuntimeCheck, ErrorCase | EngineSpecificCheck> = {
  outOfBounds: { src: 'fn f(y: f64, x: f64[], i: i32) { y += x[i] }', call: (m) => m.f!(0, new Float64Array(2), 5) },
  alias: { src: 'fn f(x: f64[], i: i32, j: i32) { x[i] += x[j] }', call: (m) => m.f!(new Float64Array(2), 1, 1) },
  dealloc: { src: 'fn f(y: f64, x: f64) {\n  t <- 0.0\n  t += x\n  y += t\n  t -> 0.0\n}', call: (m) => m.f!(0, 2) },
  deallocArray: {
    src: 'fn f(y: f64, n: i32) {\n  t: f64[] <- zeros(n)\n  t[0] += 1.0\n  t -> zeros(n)\n}',
    call: (m) => m.f!(0, 2),
  },
  deallocStack: {
    src: 'fn f(y: f64) {\n  s: stack<f64> <- []\n  push(s, y)\n  s -> []\n}',
    call: (m) => m.f!(0),
    needs: ['stacks'],
  },
  postIf: { src: 'fn f(x: f64) { if (x > 0.0, ~) { x -= 5.0 } }', call: (m) => m.f!(1) },
  postWhileStart: { src: 'fn f(x: i32, n: i32) { while (x < n, x > 0) { x += 1 } }', call: (m) => m.f!(1, 3) },
  postWhileIteration: { src: 'fn f(x: i32, n: i32) { while (x < n, x > 5) { x += 1 } }', call: (m) => m.f!(0, 3) },
  emptyStack: { src: 'fn f(s: stack<f64>, y: f64) { pop(s, y) }', call: (m) => m.f!([], 0), needs: ['stacks'] },
  popNonzero: { src: 'fn f(s: stack<f64>, y: f64) { pop(s, y) }', call: (m) => m.f!([1], 2), needs: ['stacks'] },
  zeroStep: { src: 'fn f(y: f64, k: i32) { for i in 0..10 by k { y += 1.0 } }', call: (m) => m.f!(0, 0) },
  loopRange: { src: 'fn f(y: f64, n: i32) { for i in 0..n { n += 1 } }', call: (m) => m.f!(0, 3) },
  arrayLength: {
    src: 'fn f(y: f64, n: i32) {\n  t: f64[] <- zeros(n)\n  t -> zeros(n)\n}',
    call: (m) => m.f!(0, -1),
  },
  tooLarge: {
    only: 'wasm: its linear memory addresses 2 GiB (a JS typed array of that length is a JS RangeError nowhere)',
  },
  cannotGrow: { only: 'wasm: its linear memory has a maximum; a JS engine has no such limit to test' },
  zeroFactor: { src: 'fn f(y: f64, x: f64) { y *= x * 2.0 }', call: (m) => m.f!(1, 0) },
}

/**
 * Error parity where the failing check is in a called function, whose parameters stand for the
 * caller's arrays, elements, expressions and literals: an engine that inlines the call (the cpu
 * and wasm backends inline small callees, and wasm the calls that run once) must still word the
 * error with the callee's names, as its location points into the callee.
 */
export const CALLEE_ERROR_CASES: Record<string, ErrorCase> = {
  'an array parameter out of bounds': {
    src: 'fn inc(v: f64[], k: i32) { v[k] += 1.0 }\nfn f(x: f64[], k: i32) { inc(x, k) }',
    call: (m) => m.f!(new Float64Array(3), 5),
  },
  'a zero factor given as an expression': {
    src: 'fn sc(v: f64[], a: f64) { v[0] *= a }\nfn f(x: f64[], y: f64[]) { sc(x, y[0] * 2.0) }',
    call: (m) => m.f!(new Float64Array(3), new Float64Array(3)),
  },
  'a zero factor given as a literal': {
    src: 'fn sc(a: f64, b: f64) { b *= a }\nfn f(y: f64) { sc(0.0, y) }',
    call: (m) => m.f!(1),
  },
  'a deallocation against element parameters': {
    src: 'fn g(a: f64, b: f64) {\n  t: f64 <- a\n  b += t\n  t -> b\n}\nfn f(x: f64[], y: f64[]) { g(x[1], y[2]) }',
    call: (m) => m.f!(Float64Array.of(1, 2, 3), Float64Array.of(1, 2, 3)),
  },
  "a post-condition of the caller's scalars": {
    src: 'fn g(a: f64, b: f64) { if (a > 0.0, b > 5.0) { b += 1.0 } }\nfn f(x: f64, y: f64) { g(x, y) }',
    call: (m) => m.f!(1, 0),
  },
  'an alias of two elements of an array parameter': {
    src: 'fn g(v: f64[], i: i32, j: i32) { v[i] += v[j] }\nfn f(x: f64[], i: i32, j: i32) { g(x, i, j) }',
    call: (m) => m.f!(new Float64Array(3), 1, 1),
  },
  'a callee with a loop, called in a loop': {
    src: 'fn g(a: f64[], b: f64[]) { for i in 0..3 { a[i] += b[i] } }\nfn f(x: f64[], y: f64[]) { for k in 0..2 { g(x, y) } }',
    call: (m) => m.f!(new Float64Array(3), new Float64Array(2)),
  },
  'a callee with a loop, called once': {
    src: 'fn acc(v: f64[], s: f64) { for i in 0..4 { s += v[i] } }\nfn f(x: f64[], y: f64) { acc(x, y) }',
    call: (m) => m.f!(new Float64Array(3), 0),
  },
  'a callee of a callee': {
    src: 'fn g(w: f64[], j: i32) { w[j] += 1.0 }\nfn h(v: f64[], j: i32) {\n  g(v, j)\n  g(v, j + 1)\n}\nfn f(x: f64[]) { for k in 0..2 { h(x, k) } }',
    call: (m) => m.f!(new Float64Array(2)),
  },
  'a stack parameter popped into a nonzero scalar': {
    src: 'fn p(s: stack<f64>, y: f64) { pop(s, y) }\nfn f(t: stack<f64>, z: f64) { p(t, z) }',
    call: (m) => m.f!([1], 2),
    needs: ['stacks'],
  },
}
