/**
 * Pass `tabulate-sweeps` (see @tenet/ir's passes) on compiled programs: cpu and wasm, checks on
 * (where the pass does not run) and off (where it does), give the reference interpreter's doubles
 * bit for bit, forwards and backwards, on random functions whose two or three loop nests apply
 * expensive primitives and rotations to elements of the same array (the shape of a gradient
 * program's two sweeps), some under a branch, some writing the array (no table), with column
 * loops that run zero, one or several times.
 */
import { describe, expect, it } from 'vitest'
import { parse } from '@tenet/ir'
import { tabulateSweeps } from '@tenet/ir/backend'
import { compileModule } from '@tenet/reversible'
import { Random } from '@tenet/testing'
import { forwardAndBack, passChanges, passRegistry } from './test-util.js'

/** The lengths: y and x are m × (n ≤ 3) column-major, w has 5 elements (every index below is in range). */
const M = 4

/** A random function `f(y, x, w, n, m)` of two or three loop nests over the rows j (and columns l). */
function sweeps(seed: number): string {
  const r = new Random(seed)
  const index = () => r.pick(['j', 'm - 1 - j', '0', 'j + 1'])
  const prim = () => r.pick(['cos', 'sin', 'exp', 'tanh', 'atan', 'cos', 'sin'])
  const term = () => `${prim()}(w[${index()}])`
  const at = (columns: boolean) => (columns ? 'j + m * l' : 'j')
  const stmt = (columns: boolean) =>
    r.pick([
      () => `y[${at(columns)}] += ${term()} * x[${at(columns)}] + ${term()}`,
      () => `y[${at(columns)}] -= ${term()} * ${term()}`,
      () => `${r.pick(['ROT', 'IROT'])}(x[${at(columns)}], y[${at(columns)}], w[${index()}])`,
      () => `sincos(x[${at(columns)}], y[${at(columns)}], w[${index()}])`,
    ])()
  const nest = (): string => {
    const columns = r.chance(0.5)
    const rows = r.pick(['0..m', 'm - 1..=0 by -1'])
    const body = Array.from({ length: r.int(1, 2) }, () => stmt(columns)).join('\n    ')
    const loop = columns
      ? `for l in ${r.pick(['0..n', 'n - 1..=0 by -1'])} {\n    for j in ${rows} {\n    ${body}\n    }\n  }`
      : `for j in ${rows} {\n    ${body}\n  }`
    return r.chance(0.25) ? `if (0 < n, ~) {\n  ${loop}\n  }` : loop
  }
  const nests = Array.from({ length: r.int(2, 3) }, nest)
  if (r.chance(0.15)) nests.splice(1, 0, 'w[1] += 0.25')
  return `fn f(y: f64[], x: f64[], w: f64[], n: i32, m: i32) {\n  ${nests.join('\n  ')}\n}`
}

/** Whether the pass changes `f` of the source. */
const changed = (source: string): boolean => passChanges(source, tabulateSweeps)

/** f forwards, then its inverse on the result, as one string of exact numbers. */
const compiled = new Map<string, ReturnType<typeof compileModule>>()
function runs(source: string, backend: string, checks: boolean, n: number): string {
  const key = `${backend}/${checks}/${source}`
  let m = compiled.get(key)
  if (!m)
    compiled.set(
      key,
      (m = compileModule(parse({ text: source, name: 'sweeps' }), { registry: passRegistry(), backend, checks })),
    )
  const args = [
    Float64Array.from({ length: M * 3 }, (_, i) => Math.sin(i + 1)),
    Float64Array.from({ length: M * 3 }, (_, i) => Math.cos(2 * i + 1)),
    Float64Array.from([0.3, -1.2, 2.5, 0.7, -0.4]),
    n,
    M,
  ]
  return forwardAndBack(m, args)
}

describe('tabulate-sweeps on compiled programs', () => {
  it('random functions of several loop nests: cpu and wasm, checks on and off, give the interpreter’s doubles forwards and backwards', () => {
    const failures: string[] = []
    let tabulated = 0
    for (let seed = 0; seed < 20; seed++) {
      const source = sweeps(seed)
      if (changed(source)) tabulated++
      for (const n of [0, 1, 3]) {
        const want = runs(source, 'interpreter', true, n)
        for (const backend of ['cpu', 'wasm'])
          for (const checks of [true, false]) {
            const got = runs(source, backend, checks, n)
            if (got !== want) failures.push(`seed ${seed}, n = ${n}, ${backend} checks ${checks}:\n${source}`)
          }
      }
    }
    compiled.clear()
    expect(failures.slice(0, 3).join('\n\n')).toBe('')
    // most functions get a table (not those that write w, or whose nests share no primitive of it)
    expect(tabulated).toBeGreaterThanOrEqual(10)
  })
})
