/**
 * Random column programs for the loop passes (`interchange`, `hoist-calls` of `@tenet/ir`): the
 * backends' tests run them against the interpreter with checks on and off. A float rotation is
 * not exactly invertible, so `columnProblems` checks the round trip to 1e-9 and the bits of the
 * forward and inverse results against the first backend's.
 */
import { sameBits, type ConformanceResult } from './conformance.js'

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

/** A random column program, whether the columns are independent, and its number of rotations. */
export interface ColumnProgram {
  source: string
  legal: boolean
  /** A statement computes a cosine that every column shares (cos θ[k]). */
  pays: boolean
  /** The number of rotations (the length of theta and g) for m rows. */
  rotations: (m: number) => number
}

/**
 * A random column program (the shape of paper 000's unitary multiply and of its adjoint): a loop
 * over columns l around a nest over (j, i), a counter k stepped once per rotation, and one to
 * three work statements, of which some keep the columns independent (rotations, updates by
 * column, sums by the counter) and some do not (a sum shared by rotations, another column's
 * element, overlapping columns, a scalar written by every column). Even seeds draw legal
 * statements only.
 */
export function columnProgram(seed: number): ColumnProgram {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const count = 1 + Math.floor(r() * 3)
  // half of the programs legal only
  const pool = seed % 2 === 0 ? KINDS.filter((k) => STATEMENTS[k].legal) : KINDS
  const kinds = Array.from({ length: count }, () => pick(pool))
  const legal = kinds.every((k) => STATEMENTS[k].legal)
  // a cosine the columns share (of θ[k]): what makes moving the column loop pay
  const pays = kinds.some((k) => k === 'rot' || k === 'irot' || k === 'reduce')
  // where the step of k sits among the statements (before, between or after)
  const at = Math.floor(r() * (count + 1))
  const body: string[] = kinds.map((k) => STATEMENTS[k].text)
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
  return { source, legal, pays, rotations: inner.rotations }
}

/** Arguments for a column program: 2–6 rows, 0–3 columns. */
export function columnArgs(c: ColumnProgram, seed: number): unknown[] {
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
export function columnProblems(results: readonly ConformanceResult[]): string[] {
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
