/**
 * Store-to-load forwarding across a store that a loop's range proves to be another element (see
 * `nonzeroInLoops` of `@tenet/ir/backend`): the adjoint of an explicit heat stencil reads
 * `g[(t + 1) * n + i]` once per iteration, not again after each store into `g[t * n + i ± 1]`;
 * where the range does not prove the indices apart, the element is read again. Runs against the
 * interpreter, checks on and off, on sizes where the indices do meet (n = 0, 1, 2).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** The reverse sweep of the heat stencil's adjoint (as the fused gradient program of `heat_loss` has it), and an aliasing one. */
const text = `
fn heat_adj(gr: f64, g: f64[], u: f64[], r: f64, n: i32, T: i32) {
  for t in reverse 0..T {
    for i in reverse 1..n - 1 {
      g[t * n + i] += g[(t + 1) * n + i] - g[(t + 1) * n + i] * r * 2.0
      gr += g[(t + 1) * n + i] * (u[t * n + i - 1] - 2.0 * u[t * n + i] + u[t * n + i + 1])
      g[t * n + i - 1] += g[(t + 1) * n + i] * r
      g[t * n + i + 1] += g[(t + 1) * n + i] * r
    }
  }
}
fn shifted(y: f64, g: f64[], n: i32, m: i32) {
  for i in 0..m {
    y += g[i + n] * 2.0
    g[i] += 1.5
    y += g[i + n]
  }
}`

function code(m: Record<string, unknown>, name: string): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, false)
}

const code0 = (m: Record<string, unknown>): string => code(m, 'f')

const build = (backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'loop-facts' }), { registry, backend, checks })

describe('loads kept across stores that a loop range proves elsewhere (cpu backend)', () => {
  it("reads the stencil adjoint's g[(t + 1) * n + i] once per iteration", () => {
    const src = code(build('cpu', false), 'heat_adj')
    // the element's index, (t + 1)·n + i, is computed for one load only
    const loads = src.match(/p1\[\(\(Math\.imul\(\(\(i\d+ \+ 1\) \| 0\), p4\) \+ [ij]\d+\) \| 0\)\]/g) ?? []
    // (one load per copy of the body where the loop runs several iterations per pass)
    const copies = Number(/-= (\d+)\) \{/.exec(src)?.[1] ?? 1)
    expect(loads, src).toHaveLength(copies)
  })

  it('reads g[i + n] again after the store to g[i] (n may be 0)', () => {
    const src = code(build('cpu', false), 'shifted')
    expect(src.match(/p0 \+ \(?p1\[c\d+\]/g), src).toHaveLength(2)
  })

  for (const checks of [false, true]) {
    it(`agrees with the interpreter on every size, the meeting ones included (checks ${checks ? 'on' : 'off'})`, () => {
      const m = build('cpu', checks),
        ref = build('interpreter', checks)
      for (const n of [0, 1, 2, 3, 5]) {
        const T = 3
        const len = Math.max(1, (T + 1) * n)
        const g = Float64Array.from({ length: len }, (_, k) => Math.sin(k + 1)),
          u = Float64Array.from({ length: len }, (_, k) => Math.cos(3 * k))
        const gr = g.slice()
        m.heat_adj!.core(0.5, g, u, 0.3, n, T)
        ref.heat_adj!.core(0.5, gr, u, 0.3, n, T)
        expect(Array.from(g)).toEqual(Array.from(gr))
        expect(m.heat_adj!.core.results[0]).toBe(ref.heat_adj!.core.results[0])
      }
      for (const n of [0, 1, 3]) {
        const g = Float64Array.from({ length: 8 }, (_, k) => k * 0.25 + 1),
          gr = g.slice()
        m.shifted!.core(0, g, n, 4)
        ref.shifted!.core(0, gr, n, 4)
        expect(Array.from(g)).toEqual(Array.from(gr))
        expect(m.shifted!.core.results[0]).toBe(ref.shifted!.core.results[0])
      }
    })
  }
})

describe('random shifted-index loops against the interpreter (cpu backend)', () => {
  // a small deterministic generator (no Math.random: a failure names its seed)
  const rng = (seed: number) => {
    let s = seed * 2654435761 + 1
    return (k: number) => {
      s = (Math.imul(s, 1103515245) + 12345) | 0
      return (((s >>> 8) % k) + k) % k
    }
  }
  const offset = (r: (k: number) => number) => {
    const c = r(7) - 3
    const sign = ['', ' + n', ' - n'][r(3)]
    return `${sign}${c >= 0 ? ` + ${c}` : ` - ${-c}`}`
  }
  const bound = (r: (k: number) => number) =>
    [`${r(3)}`, `n - ${r(3)}`, `n + ${r(3)}`, `${r(3)} - n`, 'm', `m - n`][r(6)]!
  /** A loop that reads g at one offset of i, stores at others, reads the first again, under a range that may read n. */
  function program(seed: number): string {
    const r = rng(seed)
    const lo = bound(r),
      hi = bound(r)
    const rd = offset(r),
      wr = offset(r),
      wr2 = offset(r)
    return `fn f(y: f64, g: f64[], n: i32, m: i32) {
  for i in ${r(2) ? 'reverse ' : ''}${lo}..${r(2) ? '=' : ''}${hi} {
    y += g[i${rd} + 20] * 2.0
    g[i${wr} + 20] += 1.5
    y += g[i${rd} + 20] * 3.0
    g[i${wr2} + 20] += 0.75
    y += g[i${rd} + 20] + g[i${wr} + 20]
  }
}`
  }
  it('has programs whose code the analysis changes, and programs it leaves alone', () => {
    const code = (text: string, seed: number) =>
      code0(compileModule(parse({ text, name: `shifted-code-${seed}` }), { registry, backend: 'cpu', checks: false }))
    let changed = 0
    for (let seed = 0; seed < 60; seed++) {
      const text = program(seed)
      disabledPasses.add('loop-facts')
      let before: string
      try {
        before = code(text + '\n// without', seed)
      } finally {
        disabledPasses.delete('loop-facts')
      }
      if (code(text, seed) !== before) changed++
    }
    expect(changed).toBeGreaterThan(3)
    expect(changed).toBeLessThan(57)
  })
  for (const checks of [false, true]) {
    it(`agrees bit for bit, errors included (checks ${checks ? 'on' : 'off'})`, () => {
      const failures: string[] = []
      for (let seed = 0; seed < 60; seed++) {
        const text = program(seed)
        const mk = (backend: string) =>
          compileModule(parse({ text, name: `shifted-${seed}` }), { registry, backend, checks })
        const m = mk('cpu'),
          ref = mk('interpreter')
        for (const n of [-3, -1, 0, 1, 2, 3, 5])
          for (const mm of [0, 2, 4]) {
            // (indices stay within 7..35 for these sizes: no out-of-range read, whose result differs without checks)
            const g = Float64Array.from({ length: 48 }, (_, k) => k * 0.25 + 1),
              gr = g.slice()
            let e1 = '',
              e2 = ''
            try {
              m.f!.core(0, g, n, mm)
            } catch (e) {
              e1 = String((e as Error).message)
            }
            try {
              ref.f!.core(0, gr, n, mm)
            } catch (e) {
              e2 = String((e as Error).message)
            }
            const same =
              e1 === e2 &&
              (e1 !== '' ||
                (Array.from(g).every((v, k) => Object.is(v, gr[k])) &&
                  Object.is(m.f!.core.results[0], ref.f!.core.results[0])))
            if (!same) failures.push(`seed ${seed}, n = ${n}, m = ${mm}:\n${text}\n${e1} / ${e2}`)
          }
      }
      expect(failures.slice(0, 2).join('\n\n')).toBe('')
    })
  }
})
