import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, rev, TenetError, type TenetModule } from './index.js'

const registry = createRegistry().registerBackend(wasmBackend)
const engines = {
  interpreter: rev.with({ backend: 'interpreter' }),
  cpu: rev.with({ backend: 'cpu' }),
  wasm: rev.with({ backend: 'wasm', registry }),
}
const compile = (tag: (typeof engines)[keyof typeof engines], src: string): TenetModule =>
  tag([src] as unknown as TemplateStringsArray)
const text = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    ArrayBuffer.isView(x) ? Array.from(x as Float64Array, (e) => (Object.is(e, -0) ? '-0' : e)) : x,
  )
function outcome(m: TenetModule, entry: string, args: unknown[], inverse: boolean): string {
  let out: unknown
  try {
    const f = (m as any)[entry]
    out = (inverse ? f.inverse : f)(...args)
  } catch (e) {
    if (!TenetError.isInstance(e)) return `non-tenet ${e}`
    return `${(e as TenetError).code} | ${(e as TenetError).message} | ${text(args)}`
  }
  return `${text(out)} | ${text(args)}`
}
const cases: Array<[string, string, () => unknown[]]> = []
const F = (...x: number[]) => Float64Array.from(x)
const I = (...x: number[]) => Int32Array.from(x)
// 1: index via an element written in the loop
cases.push([
  'c written',
  `fn f(y: f64[], c: i32[], n: i32) {
  for i in 0..n { y[i + c[0]] += 1.0
    c[0] += 1 }
}`,
  () => [F(0, 0, 0, 0, 0, 0), I(0), 3],
])
cases.push([
  'c written 2',
  `fn f(y: f64[], c: i32[], n: i32) {
  for i in 0..n { y[i + c[0]] += 1.0
    c[0] += 1 }
}`,
  () => [F(0, 0, 0, 0), I(0), 3],
])
// wrap
cases.push([
  'wrap',
  `fn f(y: f64[], n: i32) {
  for i in 0..n { y[i * 1073741824] += 1.0 }
}`,
  () => [F(0, 0, 0), 5],
])
cases.push([
  'wrap2',
  `fn f(y: f64[], k: i32, n: i32) {
  for i in 0..n { y[i + k] += 1.0 }
}`,
  () => [F(0, 0, 0), 2147483647, 3],
])
cases.push([
  'wrapneg',
  `fn f(y: f64[], k: i32, n: i32) {
  for i in 0..n { y[k - i] += 1.0 }
}`,
  () => [F(0, 0, 0), -2147483647, 3],
])
cases.push([
  'reverse',
  `fn f(y: f64[], x: f64[], n: i32) {
  for i in reverse 0..n { y[i] += x[i + 1] }
}`,
  () => [F(0, 0, 0), F(1, 2, 3), 3],
])
cases.push([
  'stop written',
  `fn f(y: f64[], n: i32[]) {
  for i in 0..n[0] { y[i] += 1.0
     n[0] += 1 }
}`,
  () => [F(0, 0, 0), I(2)],
])
cases.push([
  'k written',
  `fn f(y: f64[], k: i32, n: i32) {
  for i in 0..n { y[i + k] += 1.0
    k += 1 }
}`,
  () => [F(0, 0, 0, 0, 0), 0, 3],
])
cases.push([
  'two fail order',
  `fn f(y: f64[], x: f64[], n: i32) {
  for i in 0..n { y[n - 1 - i] += x[i] }
}`,
  () => [F(0, 0), F(1, 2, 3), 3],
])
cases.push([
  'nest',
  `fn f(y: f64[], x: f64[], n: i32, m: i32) {
  for i in 0..n { for j in 0..m { y[i * m + j] += x[j + i] } }
}`,
  () => [F(0, 0, 0, 0, 0, 0), F(1, 2, 3), 2, 3],
])
cases.push([
  'inner dep',
  `fn f(y: f64[], x: f64[], n: i32) {
  for i in 0..n { for j in i..n { y[j] += x[j - i] } }
}`,
  () => [F(0, 0, 0), F(1, 2), 3],
])
cases.push([
  'swap ends',
  `fn f(y: f64[], n: i32) {
  for i in n..0 { y[i] += 1.0 }
}`,
  () => [F(0, 0, 0), 5],
])
cases.push([
  'neg step literal',
  `fn f(y: f64[], n: i32) {
  for i in 0..n by -1 { y[i] += 1.0 }
}`,
  () => [F(0, 0, 0), 3],
])
cases.push([
  'sym coef wrap',
  `fn f(y: f64[], k: i32, n: i32) {
  for i in 0..n { y[i * k] += 1.0 }
}`,
  () => [F(0, 0, 0), 1073741824, 5],
])
cases.push([
  'sym coef wrap2',
  `fn f(y: f64[], k: i32, n: i32) {
  for i in 0..n { y[k * i + 1] += 1.0 }
}`,
  () => [F(0, 0, 0), 1073741824, 5],
])
cases.push([
  'sym coef wrap3',
  `fn f(y: f64[], k: i32, n: i32) {
  for i in 0..n { y[(i + 1) * k] += 1.0 }
}`,
  () => [F(0, 0, 0), 1073741824, 4],
])
cases.push([
  'sym coef ok',
  `fn f(y: f64[], k: i32, n: i32) {
  for i in 0..n { y[i * k] += 1.0 }
}`,
  () => [F(0, 0, 0, 0, 0), 2, 3],
])
cases.push([
  'reverse wrap',
  `fn f(y: f64[], k: i32, n: i32) {
  for i in reverse 0..n { y[i * k] += 1.0 }
}`,
  () => [F(0, 0, 0), 1073741824, 5],
])
cases.push([
  'inner coef',
  `fn f(y: f64[], n: i32) {
  for j in 0..n { for i in 0..n { y[i * j] += 1.0 } }
}`,
  () => [F(0, 0, 0), 65536 * 4],
])
cases.push([
  'inner coef 2',
  `fn f(y: f64[], k: i32, n: i32) {
  for j in 0..2 { for i in 0..n { y[i * (j + k)] += 1.0 } }
}`,
  () => [F(0, 0, 0), 1073741823, 5],
])
cases.push([
  'range elem written',
  `fn f(y: f64[], m: i32[], n: i32) {
  for i in 0..n { for j in 0..m[0] { m[1] += 1
    y[0] += 1.0 } }
}`,
  () => [F(0, 0), I(2, 0), 2],
])
cases.push([
  'range elem written 2',
  `fn f(y: f64[], m: i32[], n: i32) {
  for i in 0..n { for j in 0..m[0] { m[0] += 1 } }
}`,
  () => [F(0, 0), I(2, 0), 2],
])
cases.push([
  'post cond reads promoted',
  `fn f(a: f64[], s: f64, n: i32) {
  for i in 0..n { if (a[1] < 2.0, a[1] < 2.0) { a[1] += s } }
}`,
  () => [F(0, 0), 0.75, 4],
])
cases.push([
  'dealloc reads promoted',
  `fn f(a: f64[], x: f64[], n: i32) {
  for i in 0..n { t: f64 <- a[0]
    a[1] += t * x[i]
    t -> a[0] }
}`,
  () => [F(2, 0), F(1, 2, 3), 3],
])
cases.push([
  'i32 wrap',
  `fn f(a: i32[], k: i32, n: i32) {
  for i in 0..n { if (i != 1, ~) { a[k] += 2000000000 } }
}`,
  () => [I(0, 0), 1, 4],
])
cases.push([
  'i32 wrap oob',
  `fn f(a: i32[], k: i32, n: i32) {
  for i in 0..n { if (i == 2, ~) { a[k] += 2000000000 } }
}`,
  () => [I(0, 0), 2, 4],
])
cases.push([
  'swap partner',
  `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n { if (i == 1, ~) { a[k] += 1.0 }
    a[k + 1] -= 0.5 }
}`,
  () => [F(0, 0, 0), 1, 3],
])
const anc = `fn f(y: f64[], k: i32, n: i32) {
  routine {
    b: f64[] <- zeros(n)
    for i in 0..n { for j in 0..n { if (i != j, ~) { b[k] += 1.0 } } }
  }
  for i in 0..len(y) { y[i] += b[i] }
  ~routine
}`
cases.push([
  'carried+promoted',
  `fn f(a: f64[], x: f64[], n: i32) {
  for i in 1..n {
    for j in 0..n { a[i] += a[i - 1] * x[j] }
  }
}`,
  () => [F(1, 2, 3, 4), F(0.5, 0.25, 2, 1), 4],
])
cases.push([
  'carried+promoted branch',
  `fn f(a: f64[], x: f64[], n: i32) {
  for i in 1..n {
    a[i] += a[i - 1] * 0.5
    for j in 0..n { if (i != j, ~) { a[i] += a[i - 1] * x[j] } }
  }
}`,
  () => [F(1, 2, 3, 4), F(0.5, 0.25, 2, 1), 4],
])
cases.push([
  'carried+promoted 2',
  `fn f(a: f64[], x: f64[], n: i32) {
  for i in 1..n {
    a[i] += a[i - 1] * 0.5
    for j in 0..n { a[i] += a[i - 1] * x[j] }
  }
}`,
  () => [F(1, 2, 3, 4), F(0.5, 0.25, 2, 1), 4],
])
cases.push([
  'offset 2^31',
  `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n { a[k + 2147483648] += 1.0
    a[k - 2147483648] += 2.0 }
}`,
  () => [F(0, 0, 0), -2147483647, 3],
])
cases.push([
  'offset 2^32',
  `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n { a[k + 4294967296] += 1.0
    a[k] += 2.0 }
}`,
  () => [F(0, 0, 0), 1, 3],
])
cases.push([
  'offset 2^32 branch',
  `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n { if (i != 1, ~) { a[k + 4294967296] += 1.0 }
    a[k] += 2.0 }
}`,
  () => [F(0, 0, 0), 1, 3],
])
cases.push([
  'offset -2^31 pair',
  `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n { a[k - -2147483648] += 1.0
    a[k + -2147483648] += 2.0 }
}`,
  () => [F(0, 0, 0), -2147483647, 3],
])
cases.push([
  'offset -2^31 pair branch',
  `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n { if (i != 1, ~) { a[k - -2147483648] += 1.0 }
    a[k + -2147483648] += 2.0 }
}`,
  () => [F(0, 0, 0), -2147483647, 3],
])
cases.push([
  'alias 2^32',
  `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n { a[k - -2147483648] += a[k + -2147483648] * 0.5 }
}`,
  () => [F(0, 1, 0), -2147483647, 3],
])
cases.push([
  'alias 2^32 no loop',
  `fn f(a: f64[], k: i32) {
  a[k - -2147483648] += a[k + -2147483648] * 0.5
}`,
  () => [F(0, 1, 0), -2147483647],
])
cases.push([
  'carried 2^32',
  `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n { a[i + k - -2147483648] += a[i + k + -2147483648] * 0.5 }
}`,
  () => [F(0, 1, 0), -2147483647, 2],
])
cases.push([
  'carried 2^32 b',
  `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n { a[i - -2147483648] += a[i + 2147483647] * 0.5 }
}`,
  () => [F(0, 1, 0, 0), -2147483647, 2],
])
cases.push([
  'fwd 2^32 loop',
  `fn f(a: f64[], y: f64[], x: f64[], n: i32) {
  for i in 0..n { y[i] += a[i + -2147483648]
    a[i - -2147483648] += x[i]
    y[i] += a[i + -2147483648] }
}`,
  () => [F(1, 2, 3, 4), F(0, 0, 0, 0), F(10, 20, 30, 40), 2],
])
cases.push([
  'fwd 2^32 k',
  `fn f(a: f64[], y: f64[], x: f64[], k: i32) {
  y[0] += a[k + -2147483648]
  a[k - -2147483648] += x[0]
  y[1] += a[k + -2147483648]
}`,
  () => [F(1, 2, 3, 4), F(0, 0, 0, 0), F(10, 20, 30, 40), -2147483647],
])
cases.push([
  'carry 2^32',
  `fn f(a: f64[], y: f64[], k: i32, n: i32) {
  for i in 0..n { a[i + k - -2147483648] += 1.0
    y[i] += a[i + k + -2147483648] }
}`,
  () => [F(1, 2, 3, 4), F(0, 0, 0, 0), -2147483647, 3],
])
describe('hoist-bounds versions and promote-checked against the interpreter (cpu, wasm; checks on)', () => {
  it('pooled ancilla', () => {
    const all: Record<string, string[]> = {}
    for (const [b, tag] of Object.entries(engines)) {
      const m = compile(tag, anc)
      const r: string[] = []
      r.push(outcome(m, 'f', [F(0, 0, 0, 0, 0, 0, 0, 0), 3, 8], false))
      r.push(outcome(m, 'f', [F(0, 0), 3, 2], false))
      r.push(outcome(m, 'f', [F(0, 0), 1, 2], false))
      r.push(outcome(m, 'f', [F(0, 0), 3, 1], false))
      all[b] = r
    }
    expect(all.cpu).toEqual(all.interpreter)
    expect(all.wasm).toEqual(all.interpreter)
  })
  for (const [name, src, args] of cases.filter(
    ([n]) => !['offset -2^31 pair', 'offset -2^31 pair branch', 'fwd 2^32 k'].includes(n),
  ))
    it(name, () => {
      const r: Record<string, string> = {}
      for (const inv of [false, true]) {
        for (const [b, tag] of Object.entries(engines)) {
          let m: TenetModule
          try {
            m = compile(tag, src)
          } catch (e) {
            r[b] = `compile ${e}`
            continue
          }
          r[b] = outcome(m, 'f', args(), inv)
        }
        expect(r.cpu, `${name} ${inv}`).toBe(r.interpreter)
        expect(r.wasm, `${name} ${inv}`).toBe(r.interpreter)
      }
    })
})
