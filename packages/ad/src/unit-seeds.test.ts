import { describe, expect, it } from 'vitest'
import { createRegistry, printFunction } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { accumulatesOnly } from './accumulate-only.js'
import { compileSecondOrder, infoOf } from './compile.js'
import { gradient } from './gradient.js'
import { hessian, hvp } from './hessian.js'
import { finiteDifference } from '@tenet/testing'
import { expectClose, randomExpressions, tag } from './test-util.js'

/**
 * The unit-seed variant of the Hessian's tangent program (tangent.ts, `unitVariant`): a read of a
 * unit-seeded array's tangent adds its coefficient to its one direction instead of w products.
 */
describe('unit-seeded tangents (hessian)', () => {
  const source = `
fn sq(q: f64[], x: f64[], p: i32[]) {
  for e in 0..len(q) { q[e] += (x[p[2 * e]] - x[p[2 * e + 1]]) ** 2 }
}
fn f(loss: f64, x: f64[], q: f64[], p: i32[]) {
  sq(q, x, p)
  for e in 0..len(q) { loss += sin(q[e]) }
  ~sq(q, x, p)
}`

  it('rewrites the reads of the seeded array, in f and the callees it passes the array to (printed IR)', () => {
    const f = tag({ checks: false })(source).f!
    const print = (units: number[]) =>
      compileSecondOrder(f, 0, 2, units)
        .functions.map((g) => printFunction(g))
        .join('\n')
    const before = print([])
    const after = print([1])
    // before: every direction reads the seeds t$x[(…) * 2 + k]
    expect(before).toMatch(/t\$q\[e \* 2 \+ 1\] \+= .*t\$x\[p\[2 \* e\] \* 2 \+ 1\]/)
    expect(before).not.toMatch(/unit/)
    // after: the callee `sq` has a unit variant with the offset parameter, and the one direction of
    // the read is an index (in the copy that the dead updates' pass specialised, `$live<n>`: only
    // the functions the program calls are compiled, and listed)
    expect(after).toMatch(/fn sq\$tan2\$unit1\$live\d+\(.*t\$unit\$x: i32\)/)
    expect(after).toMatch(
      /if \(0 <= p\[2 \* e\] - t\$unit\$x && p\[2 \* e\] - t\$unit\$x < 2, .*\) \{\n\s+t\$q\[e \* 2 \+ \(p\[2 \* e\] - t\$unit\$x\)\] \+= /,
    )
    // no tangent update in the forward tangent of sq reads the seeds any more
    const sq = after.slice(after.search(/fn sq\$tan2\$unit1\$live\d+\(/))
    expect(sq.slice(0, sq.indexOf('\n}')).includes('t$x[')).toBe(false)
    // the gradient of x (only accumulated into) skips its rows above the sweep's first column
    expect(after).toMatch(/fn sq\$adj\$tan2\$unit1\$rows4\$live\d+\(.*t\$unit\$x: i32, t\$from\$g_x: i32\)/)
    expect(after).toMatch(
      /if \(p\[2 \* e\] >= t\$from\$g_x, p\[2 \* e\] >= t\$from\$g_x\) \{\n\s+t\$g_x\[p\[2 \* e\] \* 2\] \+= /,
    )
  })

  it('accumulatesOnly: an array that is only ever a += / -= target, callees included', () => {
    const m = tag({ checks: false })(`
fn add(g: f64[], v: f64) { g[0] += v }
fn reads(g: f64[], v: f64) { v += g[0] }
fn f(g: f64[], h: f64[], k: f64[], u: f64[], v: f64, i: i32) {
  for j in 0..len(g) { g[j] += v * 2.0 }
  add(g, v)
  h[i] -= v
  reads(h, v)
  k[0] += k[1]
  u[0] *= 2.0
}`)
    const fns = infoOf(m.f!).program.functions
    expect([0, 1, 2, 3].map((i) => accumulatesOnly(fns, 'f', i))).toEqual([true, false, false, false])
    expect(accumulatesOnly(fns, 'add', 0)).toBe(true)
    expect(accumulatesOnly(fns, 'f', 4)).toBe(false) // not an array
  })

  const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)

  it('equals reverse-over-forward and Hessian-vector products on random programs (cpu and wasm, checks on and off)', () => {
    const { expr, rnd, pick } = randomExpressions(29)
    for (let trial = 0; trial < 6; trial++) {
      const e1 = expr(['x[p[2 * e]]', 'x[p[2 * e + 1]]', 'c'], 3)
      const e2 = expr(['y[i]', 'x[i]', 's'], 2)
      const e3 = expr(['q[e]', 'z[e]', 's'], 2)
      const e4 = expr(['x[0]', 'y[1]', 's', 'z[2]'], 3)
      // x and y are read only (unit-seeded), z is written in place (seeded as before); the helper
      // gets x, and its inverse uncomputes q; r couples every x and y (a dense Hessian, so that the
      // rows a sweep skips are not zero)
      const text = `
fn helper(q: f64[], x: f64[], p: i32[], c: f64) {
  for e in 0..len(q) { q[e] += ${e1} }
}
fn f(loss: f64, x: f64[], s: f64, y: f64[], z: f64[], q: f64[], p: i32[]) {
  helper(q, x, p, s)
  for i in 0..len(z) { z[i] += ${e2} }
  for e in 0..len(q) { loss += ${e3} }
  loss += ${e4}
  r <- 0.0
  for i in 0..len(x) { r += x[i] + y[i] * s }
  loss += sin(r) + r * r
  for i in 0..len(x) { r -= x[i] + y[i] * s }
  r -> 0.0
  ~helper(q, x, p, s)
}`
      const backend = trial % 3 === 2 ? 'wasm' : 'cpu'
      const checks = backend === 'cpu' && rnd() < 0.5
      const f = tag({ registry: registry(), backend, checks })(text).f!
      const v = (n: number) => Float64Array.from({ length: n }, () => rnd() - 0.5)
      const args = [0, v(4), rnd() - 0.5, v(4), v(4), new Float64Array(3), Int32Array.of(0, 1, 2, 3, 3, 1)]
      const wrt = pick([[1], [1, 2, 3], [3, 1], [1, 4, 2], [4, 3, 1]])
      const width = pick([1, 2, 3, 5])
      const what = `${text}\nwrt ${wrt}, width ${width}, ${backend}, checks ${checks}`
      const H = hessian(f, args, { loss: 0, wrt, width })
      const ref = hessian(f, args, { loss: 0, wrt, method: 'reverse-over-forward' })
      expectClose(H, ref, 1e-10, what)
      // each column against H·eⱼ (the width-1 program, seeded as before)
      const n = Math.sqrt(H.length)
      let j = 0
      for (const p of wrt) {
        const len = typeof args[p] === 'number' ? 1 : (args[p] as Float64Array).length
        for (let e = 0; e < len; e++, j++) {
          const dir: Array<number | Float64Array | null> = args.map((a, i) =>
            i === 0 || i === 5 || i === 6
              ? null
              : typeof a === 'number'
                ? 0
                : new Float64Array((a as Float64Array).length),
          )
          if (len === 1 && typeof args[p] === 'number') dir[p] = 1
          else (dir[p] as Float64Array)[e] = 1
          const hv = hvp(f, args, { loss: 0, v: dir })
          const col: number[] = []
          for (const r of wrt) {
            const g = hv[r]
            if (typeof g === 'number') col.push(g)
            else col.push(...(g as Float64Array))
          }
          expectClose(
            Array.from({ length: n }, (_, i) => H[i * n + j]!),
            col,
            1e-10,
            `${what}\ncolumn ${j}`,
          )
        }
      }
    }
  })

  it('matches finite differences of the gradient on the graph-shaped program, with the seed block straddling x and y', () => {
    const f = tag({ checks: false })(`
fn f(loss: f64, x: f64[], y: f64[], q: f64[], p: i32[]) {
  for e in 0..len(q) { q[e] += (x[p[2 * e]] - x[p[2 * e + 1]]) ** 2 + y[e] * x[p[2 * e]] }
  for e in 0..len(q) { loss += sqrt(q[e] + 1.0) }
}`).f!
    const x = Float64Array.of(0.3, -0.2, 0.5, 0.1, -0.4)
    const y = Float64Array.of(0.7, -0.3, 0.2)
    const args = [0, x, y, new Float64Array(3), Int32Array.of(0, 1, 2, 4, 3, 0)]
    // 8 rows at width 3: the sweeps start at rows 0, 3 and 6 (x's end and y's start in one sweep)
    const H = hessian(f, args, { loss: 0, wrt: [1, 2], width: 3 })
    const flat = (g: unknown[]) => [...(g[1] as Float64Array), ...(g[2] as Float64Array)]
    const at = (v: number[]) => [
      0,
      Float64Array.from(v.slice(0, 5)),
      Float64Array.from(v.slice(5)),
      new Float64Array(3),
      args[4],
    ]
    const J = finiteDifference((v) => flat(gradient(f, at(v), { loss: 0 })), [...x, ...y], 1e-5)
    expectClose(H, J.flat(), 1e-7, 'H')
  })
})
