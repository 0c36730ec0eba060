/**
 * Type tests (checked by `tsc` in `typecheck`, not run): typed modules reject unknown names,
 * wrong argument counts and wrong argument types, and give typed results.
 */
import { rev, type TenetFunction } from './index.js'
import { grad } from './index.js'

const m = rev.typed(`
  fn f(y: f64, x: f64[]) {
    for i in 0..len(x) { y += x[i] * x[i] }
  }
  fn g(n: i32, b: bool, z: complex, s: stack<f64>, k: i32[], c: bool[], q: f32[]) { }
  fn empty() { }
`)

const [y, x] = m.f(0, new Float64Array([1, 2]))
const yy: number = y
const xx: Float64Array = x
const [y2] = m.f.inverse(yy, xx)
const n2: number = y2
m.g(1, true, { re: 1, im: 2 }, [], new Int32Array(1), new Uint8Array(1), new Float32Array(1))
m.empty()

// @ts-expect-error — no function `typo` in the module
m.typo()
// @ts-expect-error — `f` takes two arguments
m.f(0)
// @ts-expect-error — `x` is an f64 array, not a number
m.f(0, 1)
// @ts-expect-error — `y` is a number
m.f('0', new Float64Array(1))
// @ts-expect-error — an i32 array is not an f64 array
m.f(0, new Int32Array(1))
// @ts-expect-error — `b` is a bool
m.g(1, 1, { re: 1, im: 2 }, [], new Int32Array(1), new Uint8Array(1), new Float32Array(1))
// @ts-expect-error — the result's second entry is a Float64Array
const wrong: number = m.f(0, new Float64Array(1))[1]

// a declared signature map
const d = rev<{ h: [number, number] }>`fn h(a: f64, b: f64) { a += b }`
const [a]: [number, number] = d.h(1, 2)
// @ts-expect-error — not declared
d.f()
// @ts-expect-error — three arguments
d.h(1, 2, 3)

// typed functions are Tenet functions: the AD API takes them
const g: TenetFunction = m.f
grad(m.f, { loss: 0 })

void [n2, a, g, wrong]
