/**
 * Random programs with work arrays (the shape of the graph embedding: arrays filled per element,
 * read by a routine that the loss copies out of) graded with `scratch`: with run-time checks off
 * the routine-fused program marks the work arrays and their gradients as scratch parameters, so
 * that pass `contract-arrays` may turn them into scalars (see `Param.scratch`). The gradient must
 * be the one without the option (zeros passed), checks on and off, and that of central
 * differences of the interpreter's loss.
 */
import { describe, expect, it } from 'vitest'
import { generatedCode } from '@tenet/reversible'
import { checkGradient, Random } from '@tenet/testing'
import { grad } from './index.js'
import { tag } from './test-util.js'

/** A random program `f(loss, x, w, v, k)` with work arrays w, v (len(x) = len(w)·k). */
function workProgram(seed: number): string {
  const r = new Random(seed)
  const range = r.pick(['0..len(w)', 'reverse 0..len(w)'])
  const el = r.pick(['x[e * k + j] * x[e * k + j]', '(x[e * k + j] - 0.5) ** 2', 'sin(x[e * k + j]) * x[e * k]'])
  const fill = r.chance(0.6) ? `for j in 0..k { w[e] += ${el} }` : 'w[e] += x[e * k] * x[e * k] + 1.0'
  const g = r.pick(['sqrt(w[e] + 1.0)', 'w[e] * x[e * k]', 'exp(-w[e])'])
  // v filled in the same loop, in a loop of its own, or not at all
  const v = r.weighted<string>([
    ['same', 7],
    ['own', 2],
    ['none', 1],
  ])
  // the routine reads v (then w lives in its loop alone), or w too
  const h =
    v === 'none'
      ? r.pick(['w[e]', 'w[e] * x[e * k]'])
      : r.pick(['v[e]', 'v[e] * v[e]', 'v[e] * x[e * k]', 'w[e] * v[e]', 'w[e] + v[e] * x[e * k]'])
  const out = r.pick(['loss += s * s', 'loss += sin(s)', 'loss += s * x[0]'])
  // sometimes a work array is read outside its loops (no contraction) or at another index
  const extra = r.pick(['', '', '', '', 'loss += w[0]', 'loss += w[len(w) - 1] * 0.5'])
  return `fn f(loss: f64, x: f64[], w: f64[], v: f64[], k: i32) {
  for e in ${range} {
    ${fill}
    ${v === 'same' ? `v[e] += ${g}` : ''}
  }
  ${v === 'own' ? `for e in 0..len(v) { v[e] += ${g} }` : ''}
  s <- 0.0
  routine {
    for e in 0..len(w) { s += ${h} }
  }
  ${out}
  ~routine
  s -> 0.0
  ${extra}
}`
}

const PROGRAMS = 24

describe('random work-array programs: scratch arguments give the gradient without them', () => {
  it(`${PROGRAMS} programs, checks on and off, against zeros passed and central differences`, () => {
    const failures: string[] = []
    let changed = 0
    for (let seed = 0; seed < PROGRAMS; seed++) {
      const source = workProgram(seed)
      const reference = tag({ backend: 'interpreter' })(source).f!
      const n = 3 + (seed % 3),
        k = 1 + (seed % 2)
      const x = Float64Array.from({ length: n * k }, (_, i) => Math.sin(seed + 1.3 * i) * 0.9)
      const loss = (p: ArrayLike<number>) =>
        reference(0, Float64Array.from(p), new Float64Array(n), new Float64Array(n), k)[0] as number
      for (const checks of [false, true]) {
        const f = tag({ checks })(source).f!
        const plain = grad(f, { loss: 0 })
        const g = grad(f, { loss: 0, scratch: [2, 3] })
        const want = plain(0, x, new Float64Array(n), new Float64Array(n), k)[1] as Float64Array
        // the caller's arrays give only the lengths
        const got = g(0, x, new Float64Array(n).fill(7), new Float64Array(n).fill(-3), k)[1] as Float64Array
        const far = Array.from(got).findIndex(
          (v, i) => !(Math.abs(v - want[i]!) <= 1e-12 * Math.max(1, Math.abs(want[i]!))),
        )
        if (far >= 0) failures.push(`seed ${seed} checks ${checks}: ${got[far]} != ${want[far]}\n${source}`)
        const fd = checkGradient(loss, Array.from(got), Array.from(x), { tolerance: 1e-6 })
        if (!fd.ok) failures.push(`seed ${seed} checks ${checks}: central differences ${JSON.stringify(fd)}\n${source}`)
        if (!checks && g.plan.program === 'routine-fused' && generatedCode(g.program) !== generatedCode(plain.program))
          changed++
      }
    }
    expect(failures.slice(0, 2).join('\n\n')).toBe('')
    // the marks reach the compiled program in some of them (the others read each work array in
    // two loops, or are not routine-fused: nothing to contract there)
    expect(changed).toBeGreaterThanOrEqual(3)
  })
})
