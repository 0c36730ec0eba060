/**
 * Random column programs (the shape of paper 000's unitary multiply and of its adjoint): a loop
 * over columns l around a nest over (j, i) with a counter k stepped once per rotation. Without
 * checks, `interchange` moves the column loop innermost where its dependence test proves the
 * columns independent, and `hoist-calls` computes cos θ and sin θ once per rotation. The
 * programs must compute the same bits as the reference interpreter (checks on), forwards and
 * backwards, on the cpu backend with checks on and off, whether or not the passes apply (a float
 * rotation is not exactly invertible: the round trip is checked to 1e-9, the bits of the inverse
 * against the interpreter's); each
 * program also states whether the loop must move, and the optimised IR is checked for it.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printFunction, type BackendSpec } from '@tenet/ir'
import { inlineSmallCalls, optimize } from '@tenet/ir/backend'
import { compileModule } from '@tenet/reversible'
import { backendUnderTest, referenceBackend, runConformance, sameBits, type ConformanceResult } from '@tenet/testing'
import { cpuBackend } from './index.js'

/** Work statements; `legal`: the columns stay independent with it. */
const STATEMENTS = {
  rot: { legal: true, text: 'ROT(x[i + m * l], x[i + 1 + m * l], theta[k])' },
  irot: { legal: true, text: '~ROT(x[i + 1 + m * l], x[i + m * l], theta[k])' },
  update: { legal: true, text: 'x[i + m * l] += theta[k] * x[i + 1 + m * l]' },
  scale: { legal: true, text: 'x[i + 1 + m * l] *= 1.5' },
  // each rotation's own element of g, once per rotation and column, in column order
  reduce: { legal: true, text: 'g[k] += x[i + m * l] * cos(theta[k])' },
  // an element of g shared by several rotations: the order of the sums would change
  shared: { legal: false, text: 'g[j] += x[i + m * l]' },
  // another column's element (not a polynomial index): not proved independent
  carried: { legal: false, text: 'x[i + m * l] += 0.5 * x[i + m * ((l + 1) % n)]' },
  // columns that overlap (stride m − 2 for rows 0..m − 2), and columns that do not (stride m − 1)
  overlap: { legal: false, text: 'y[i + (m - 2) * l] += 0.25 * theta[k]' },
  narrow: { legal: true, text: 'y[i + (m - 1) * l] -= 0.25 * x[i + m * l]' },
  // a scalar written by every column
  scalar: { legal: false, text: 's += x[i + m * l]' },
} as const
type Kind = keyof typeof STATEMENTS
const KINDS = Object.keys(STATEMENTS) as Kind[]

/** A small deterministic generator. */
function rng(seed: number): () => number {
  let s = seed * 2654435761 + 1
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    return ((s >>> 8) & 0xffff) / 0x10000
  }
}

interface Case {
  source: string
  legal: boolean
  /** The number of rotations (the length of theta and g) for m rows. */
  rotations: (m: number) => number
}

function columnProgram(seed: number): Case {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const count = 1 + Math.floor(r() * 3)
  // half of the programs legal only
  const pool = seed % 2 === 0 ? KINDS.filter((k) => STATEMENTS[k].legal) : KINDS
  const kinds = Array.from({ length: count }, () => pick(pool))
  const legal = kinds.every((k) => STATEMENTS[k].legal)
  // where the step of k sits among the statements (before, between or after)
  const at = Math.floor(r() * (count + 1))
  const body = kinds.map((k) => STATEMENTS[k].text)
  body.splice(at, 0, pick(['INC(k)', 'k += 1']))
  const inner = pick([
    { range: 'm - 2..=j by -1', rotations: (m: number) => (m * (m - 1)) / 2 },
    { range: 'j..m - 1', rotations: (m: number) => (m * (m - 1)) / 2 },
  ])
  const reverse = (s: string) => (r() < 0.3 ? s.replace(' in ', ' in reverse ') : s)
  const source = `fn f(x: f64[], y: f64[], theta: f64[], g: f64[], s: f64, m: i32, n: i32) {
  ${reverse('for l in 0..n')} {
    k: i32 <- 0
    ${reverse('for j in 0..m')} {
      ${reverse(`for i in ${inner.range}`)} {
        ${body.join('\n        ')}
      }
    }
    k -> len(theta) - 1
  }
}`
  return { source, legal, rotations: inner.rotations }
}

function args(c: Case, seed: number): unknown[] {
  const r = rng(seed + 7)
  const m = 2 + Math.floor(r() * 5)
  const n = Math.floor(r() * 4)
  const q = c.rotations(m)
  const x = Float64Array.from({ length: m * Math.max(n, 1) }, () => r() * 2 - 1)
  // theta[k] and g[k] may be read after the last step (k = q)
  const theta = Float64Array.from({ length: q + 1 }, () => r() * 6 - 3)
  const g = Float64Array.from({ length: Math.max(q + 1, m) }, () => r() - 0.5)
  const y = Float64Array.from({ length: m * Math.max(n, 1) }, () => r() * 2 - 1)
  return [x, y, theta, g, 0.5, m, n]
}

/** Errors, disagreement with the reference (forward and inverse, bit for bit), a round trip off by more than 1e-9. */
function problems(results: readonly ConformanceResult[]): string[] {
  const out: string[] = []
  const ref = results[0]!
  const close = (a: unknown[], b: unknown[]): boolean =>
    a.every((x, i) => {
      const y = b[i]
      if (typeof x === 'number') return Math.abs(x - (y as number)) <= 1e-9
      return Array.from(x as Float64Array).every((v, j) => Math.abs(v - (y as Float64Array)[j]!) <= 1e-9)
    })
  for (const r of results) {
    if (r.error !== undefined) out.push(`${r.backend}: threw ${String(r.error)}`)
    else if (!close(r.inverse!, r.input)) out.push(`${r.backend}: the round trip is off`)
    else if (r !== ref && !(sameBits(r.forward, ref.forward) && sameBits(r.inverse, ref.inverse)))
      out.push(`${r.backend} and ${ref.backend} disagree`)
  }
  return out
}

const registry = createRegistry()
const backends = [
  referenceBackend(),
  backendUnderTest(cpuBackend, { registry }),
  { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
]
/** The optimised IR the cpu backend compiles (checks off), captured by a backend that wraps it. */
let captured = ''
const capture: BackendSpec = {
  ...cpuBackend,
  name: 'capture',
  doCompile(checked, inverses, options) {
    const inlined = inlineSmallCalls(checked, inverses)
    captured = printFunction(optimize(inlined.program, inlined.inverses, options).program.functions.get('f')!)
    return cpuBackend.doCompile(checked, inverses, options)
  },
}
const reg = createRegistry().registerBackend(capture)
function optimised(source: string): string {
  compileModule(parse({ text: source, name: 'columns' }), { registry: reg, backend: 'capture', checks: false })
  return captured
}

/** Whether a printed function calls cos inside the body of a loop over l. */
function cosInColumnLoop(ir: string): boolean {
  let depth: number | undefined
  for (const line of ir.split('\n')) {
    const indent = line.length - line.trimStart().length
    if (depth !== undefined && indent <= depth) depth = undefined
    if (depth === undefined && /^ *for l in/.test(line)) depth = indent
    else if (depth !== undefined && /\bcos\(/.test(line)) return true
  }
  return false
}

describe('random column programs: the cpu backend, checks on and off, agrees with the interpreter', () => {
  for (let first = 0; first < 48; first += 16) {
    it(`seeds ${first}..${first + 15}: the bits agree, and the column loop moves exactly where it is legal`, () => {
      const failures: string[] = []
      let moved = 0
      for (let seed = first; seed < first + 16; seed++) {
        const c = columnProgram(seed)
        for (let k = 0; k < 2; k++) {
          const found = problems(runConformance({ source: c.source, entry: 'f' }, args(c, seed * 3 + k), backends))
          if (found.length) failures.push(`seed ${seed}:\n${c.source}\n${found.join('\n')}`)
        }
        const ir = optimised(c.source)
        // moved: the column loop sits inside the loop over i
        const inside = ir.indexOf('for l in') > ir.indexOf('for i in')
        if (inside) moved++
        if (inside !== c.legal) failures.push(`seed ${seed}: moved ${inside}, legal ${c.legal}\n${c.source}\n${ir}`)
        // moved, the rotation's cos θ is computed once per rotation, outside the column loops
        if (inside && cosInColumnLoop(ir)) failures.push(`seed ${seed}: cos inside a column loop\n${ir}`)
      }
      expect(failures.slice(0, 2).join('\n\n')).toBe('')
      expect(moved).toBeGreaterThan(0)
    })
  }
})
