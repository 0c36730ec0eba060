import { createRng } from '../math/prng.js'
import { formatFixed, readText, roundFixed, tokenize, writeText } from './text.js'

/**
 * One GMM instance in ADBench's layout.
 * - `alphas`: k unnormalised log mixture weights
 * - `means`: k × d, component-major
 * - `icf`: k × d(d+1)/2 inverse-covariance factors per component: d log-diagonal entries, then
 *   the strictly lower triangle column by column
 * - `x`: n × d points, point-major
 * - `wishart`: prior parameters `gamma` and `m`
 */
export interface GmmInstance {
  d: number
  k: number
  n: number
  alphas: Float64Array
  means: Float64Array
  icf: Float64Array
  x: Float64Array
  wishart: { gamma: number; m: number }
}

export const gmmIcfSize = (d: number): number => (d * (d + 1)) / 2

/** Number of parameters the gradient is taken with respect to: alphas, means, icf. */
export const gmmParameterCount = (d: number, k: number): number => k + k * d + k * gmmIcfSize(d)

/**
 * Parse ADBench's GMM text: `d k n`, k alphas, k mean rows, k icf rows, then either n point rows
 * or a single point row that stands for all n (ADBench's `replicate_point` files), then
 * `gamma m`. Which of the two is decided from the token count, so both kinds of file read.
 */
export function parseGmm(text: string): GmmInstance {
  const t = tokenize(text)
  if (t.length < 3) throw new SyntaxError('GMM file: missing "d k n" header')
  const d = t[0]
  const k = t[1]
  const n = t[2]
  for (const [name, v] of [
    ['d', d],
    ['k', k],
    ['n', n],
  ] as const)
    if (!Number.isInteger(v) || v < 1) throw new SyntaxError(`GMM file: bad ${name} = ${v}`)
  const icfSz = gmmIcfSize(d)
  const fixed = 3 + k + k * d + k * icfSz + 2
  let replicated: boolean
  if (t.length === fixed + n * d) replicated = false
  else if (t.length === fixed + d) replicated = true
  else
    throw new SyntaxError(
      `GMM file: expected ${fixed + n * d} numbers (or ${fixed + d} with one replicated point) for d=${d} k=${k} n=${n}, found ${t.length}`,
    )
  let p = 3
  const take = (count: number): Float64Array => {
    const out = t.slice(p, p + count)
    p += count
    return out
  }
  const alphas = take(k)
  const means = take(k * d)
  const icf = take(k * icfSz)
  let x: Float64Array
  if (replicated) {
    const row = take(d)
    x = new Float64Array(n * d)
    for (let i = 0; i < n; i++) x.set(row, i * d)
  } else {
    x = take(n * d)
  }
  const gamma = t[p]
  const m = t[p + 1]
  return { d, k, n, alphas, means, icf, x, wishart: { gamma, m } }
}

export function readGmm(path: string): GmmInstance {
  return parseGmm(readText(path))
}

/** ADBench's text form; `replicatePoint` writes only the first point row. */
export function formatGmm(inst: GmmInstance, options: { replicatePoint?: boolean } = {}): string {
  const { d, k, n } = inst
  const icfSz = gmmIcfSize(d)
  const lines: string[] = [`${d} ${k} ${n}`]
  const row = (a: Float64Array, start: number, len: number): string => {
    let s = ''
    for (let j = 0; j < len; j++) s += formatFixed(a[start + j])
    return s
  }
  for (let i = 0; i < k; i++) lines.push(inst.alphas[i].toFixed(6))
  for (let i = 0; i < k; i++) lines.push(row(inst.means, i * d, d))
  for (let i = 0; i < k; i++) lines.push(row(inst.icf, i * icfSz, icfSz))
  const rows = options.replicatePoint ? 1 : n
  for (let i = 0; i < rows; i++) lines.push(row(inst.x, i * d, d))
  lines.push(`${inst.wishart.gamma.toFixed(6)} ${inst.wishart.m} `)
  return `${lines.join('\n')}\n`
}

export function writeGmm(path: string, inst: GmmInstance, options: { replicatePoint?: boolean } = {}): void {
  writeText(path, formatGmm(inst, options))
}

/**
 * A seeded instance shaped like ADBench's generator makes them: alphas and icf standard normal,
 * means uniform in [0, 1), points standard normal, gamma = 1, m = 0. Values are rounded to the
 * 6 decimals of the text format, so write + read gives back the same instance.
 */
export function generateGmm(options: {
  d: number
  k: number
  n: number
  seed?: number
  gamma?: number
  m?: number
}): GmmInstance {
  const { d, k, n } = options
  const rng = createRng(options.seed ?? 1)
  const icfSz = gmmIcfSize(d)
  const fill = (len: number, draw: () => number): Float64Array => {
    const a = new Float64Array(len)
    for (let i = 0; i < len; i++) a[i] = roundFixed(draw())
    return a
  }
  const alphas = fill(k, rng.normal)
  const means = fill(k * d, rng.uniform)
  const icf = fill(k * icfSz, rng.normal)
  const x = fill(n * d, rng.normal)
  return { d, k, n, alphas, means, icf, x, wishart: { gamma: options.gamma ?? 1, m: options.m ?? 0 } }
}
