/**
 * The `unf` workload family: objectives written in the functional array language of seed 004
 * (`@tenet/unf`) and differentiated by its pure reverse transform (UNF → D⃖ → UNF⁻¹ → partial
 * evaluation → JS). Baseline: the plain-TS objective. Peers (jax-js, TF.js) are in
 * `rows/unf-peers.ts`; a dual-numbers row (`@tenet/dual`) belongs there too once that engine lands.
 */
import {
  compile,
  dotObjective,
  gmmObjective,
  logsumexp,
  mlpObjective,
  prod,
  v,
  type Compiled,
  type CompileOptions,
} from '@tenet/unf'
import type { CaseOptions, CaseSpec, CheckResult, Workload } from '../harness/types.js'
import { createRng } from '../math/prng.js'
import {
  createGmmWorkspace,
  dotPlain,
  generateGmm,
  generateMlp,
  gmmConstant,
  gmmDenseLower,
  gmmObjectivePlain,
  gmmPackGradient,
  gmmPackParameters,
  gmmWithParameters,
  logsumexpPlain,
  mlpPack,
  mlpPlain,
  mlpWithParameters,
  prodPlain,
  rows,
  type MlpInstance,
} from '../objectives/unf.js'
import type { GmmInstance } from '../data/gmm-data.js'

export type UnfCaseName = 'dot' | 'prod' | 'logsumexp' | 'gmm' | 'mlp'

export interface UnfCase {
  name: UnfCaseName
  /** the plain-TS objective on the case's data */
  objective: () => number
  /** the parameters the gradient is taken with respect to, flattened */
  params: Float64Array
  /** the plain-TS objective at other parameters (directional finite-difference checks) */
  objectiveAt: (flat: Float64Array) => number
  /** the compiled UNF program, its arguments, and its gradient flattened like `params` */
  unf: () => {
    compiled: Compiled
    args: unknown[]
    flatten: (grads: unknown[]) => Float64Array
    reused: () => Compiled
  }
  /** raw data for the peers */
  vectors?: { a: Float64Array; b?: Float64Array }
  gmm?: GmmInstance
  mlp?: MlpInstance
}

const R1 = { kind: 'array', elem: { kind: 'R' } } as const

/**
 * A deep copy in which every Float64Array owns its buffer: the instances' arrays may be views
 * into one buffer, which V8 reads several times slower in the generated loops (made once in setup).
 */
function ownCopy(x: unknown): unknown {
  if (x instanceof Float64Array) return x.slice()
  if (Array.isArray(x)) return x.map(ownCopy)
  return x
}

/** The program compiled as users get it, and (lazily) with `reuseResults`. */
function compiledPair(
  params: Parameters<typeof compile>[0],
  body: Parameters<typeof compile>[1],
  options: CompileOptions = {},
) {
  let reused: Compiled | undefined
  return {
    compiled: compile(params, body, options),
    reused: () => (reused ??= compile(params, body, { ...options, reuseResults: true })),
  }
}

function vectorCase(name: 'dot' | 'prod' | 'logsumexp', n: number): UnfCase {
  const rng = createRng(n + name.length)
  const a = Float64Array.from({ length: n }, () => (name === 'prod' ? 1 + 0.001 * rng.normal() : rng.normal()))
  const b = Float64Array.from({ length: n }, () => rng.normal())
  const f =
    name === 'dot'
      ? (x: Float64Array) => dotPlain(x.subarray(0, n), x.subarray(n))
      : name === 'prod'
        ? prodPlain
        : logsumexpPlain
  const params = name === 'dot' ? Float64Array.from([...a, ...b]) : a
  let cached: ReturnType<UnfCase['unf']> | undefined
  return {
    name,
    params,
    objectiveAt: f,
    vectors: { a, b },
    objective: name === 'dot' ? () => dotPlain(a, b) : () => f(a),
    unf: () =>
      (cached ??= (() => {
        if (name === 'dot') {
          const { params: ps, body } = dotObjective()
          return {
            ...compiledPair(ps, body),
            args: [a, b],
            flatten: (g) => Float64Array.from([...(g[0] as Float64Array), ...(g[1] as Float64Array)]),
          }
        }
        const body = name === 'prod' ? prod(v('A')) : logsumexp(v('A'))
        return { ...compiledPair([['A', R1]], body), args: [a], flatten: (g) => g[0] as Float64Array }
      })()),
  }
}

function gmmUnfCase(d: number, k: number, n: number): UnfCase {
  const inst = generateGmm({ d, k, n, seed: 1000 * d + k })
  const ws = createGmmWorkspace(d, k)
  let cached: ReturnType<UnfCase['unf']> | undefined
  return {
    name: 'gmm',
    gmm: inst,
    params: gmmPackParameters(inst),
    objective: () => gmmObjectivePlain(inst, ws),
    objectiveAt: (flat) => gmmObjectivePlain(gmmWithParameters(inst, flat)),
    unf: () =>
      (cached ??= (() => {
        // the factor's strictly lower part as a triangle (row j: its j entries), as ADBench packs it
        const { params, body } = gmmObjective({ triangular: true })
        const icfSz = (d * (d + 1)) / 2
        const args = [
          inst.alphas,
          rows(inst.means, k, d),
          Array.from({ length: k }, (_, c) => inst.icf.slice(c * icfSz, c * icfSz + d)),
          gmmDenseLower(inst).map((rowsOfK) => rowsOfK.map((row, j) => row.slice(0, j))),
          rows(inst.x, n, d),
          inst.wishart.gamma,
          inst.wishart.m,
          n,
          gmmConstant(inst),
        ]
        const flatten = (g: unknown[]) => {
          const means = g[1] as Float64Array[],
            logdiag = g[2] as Float64Array[],
            lower = g[3] as Float64Array[][]
          return gmmPackGradient(
            d,
            k,
            g[0] as Float64Array,
            Float64Array.from(means.flatMap((r) => [...r])),
            Float64Array.from(logdiag.flatMap((r) => [...r])),
            (c, row, col) => lower[c]![row]![col]!,
          )
        }
        return {
          ...compiledPair(params, body, { wrt: ['alphas', 'means', 'logdiag', 'lower'] }),
          args: args.map(ownCopy),
          flatten,
        }
      })()),
  }
}

function mlpUnfCase(d: number, h: number, o: number, n: number): UnfCase {
  const m = generateMlp(d, h, o, n, 17 * d + h)
  const hidden = new Float64Array(h)
  let cached: ReturnType<UnfCase['unf']> | undefined
  return {
    name: 'mlp',
    mlp: m,
    params: mlpPack(m),
    objective: () => mlpPlain(m, hidden),
    objectiveAt: (flat) => mlpPlain(mlpWithParameters(m, flat)),
    unf: () =>
      (cached ??= (() => {
        const { params, body } = mlpObjective()
        const args = [rows(m.w1, h, d), m.b1, rows(m.w2, o, h), m.b2, rows(m.xs, n, d), rows(m.ys, n, o)]
        const flatten = (g: unknown[]) =>
          Float64Array.from([
            ...(g[0] as Float64Array[]).flatMap((r) => [...r]),
            ...(g[1] as Float64Array),
            ...(g[2] as Float64Array[]).flatMap((r) => [...r]),
            ...(g[3] as Float64Array),
          ])
        return { ...compiledPair(params, body, { wrt: ['w1', 'b1', 'w2', 'b2'] }), args: args.map(ownCopy), flatten }
      })()),
  }
}

/**
 * Directional finite-difference check: g·u against (f(x+hu) − f(x−hu))/2h for a random unit u
 * (two objective evaluations, affordable on every case).
 */
export function directionalCheck(c: UnfCase, g: Float64Array, tolerance = 1e-5): CheckResult {
  if (g.length !== c.params.length)
    return { ok: false, error: Infinity, reason: `gradient has ${g.length} entries, expected ${c.params.length}` }
  const rng = createRng(7)
  const u = Float64Array.from({ length: g.length }, rng.normal)
  let norm = 0
  for (const x of u) norm += x * x
  norm = Math.sqrt(norm)
  let dot = 0
  for (let i = 0; i < u.length; i++) dot += (u[i] /= norm) * g[i]
  const h = 1e-6 * Math.max(1, Math.sqrt(c.params.reduce((s, x) => s + x * x, 0) / c.params.length))
  const at = (s: number) => c.objectiveAt(c.params.map((x, i) => x + s * u[i]))
  const fd = (at(h) - at(-h)) / (2 * h)
  const error = Math.abs(dot - fd) / Math.max(1, Math.abs(fd))
  return { ok: error < tolerance, error }
}

function cases(options: CaseOptions): CaseSpec<UnfCase>[] {
  const big = options.full
  return [
    {
      label: `dot n=${big ? '1M' : '100k'}`,
      params: { n: big ? 1e6 : 1e5 },
      make: () => vectorCase('dot', big ? 1e6 : 1e5),
    },
    {
      label: `prod n=${big ? '1M' : '100k'}`,
      params: { n: big ? 1e6 : 1e5 },
      make: () => vectorCase('prod', big ? 1e6 : 1e5),
    },
    {
      label: `logsumexp n=${big ? '1M' : '100k'}`,
      params: { n: big ? 1e6 : 1e5 },
      make: () => vectorCase('logsumexp', big ? 1e6 : 1e5),
    },
    { label: 'GMM d=2 K=5 n=1k', params: { d: 2, k: 5, n: 1000 }, make: () => gmmUnfCase(2, 5, 1000) },
    { label: 'GMM d=10 K=25 n=1k', params: { d: 10, k: 25, n: 1000 }, make: () => gmmUnfCase(10, 25, 1000) },
    {
      label: 'MLP 64-128-10 n=256',
      params: { d: 64, h: 128, o: 10, n: 256 },
      make: () => mlpUnfCase(64, 128, 10, 256),
    },
  ]
}

/** The warm-up budget per row, ms (tests that only check the rows set it to 0). */
export const warmUpBudget = { ms: 2000 }

/**
 * Steady state before timing, for every row of this family alike (baseline, UNF rows, peers):
 * V8 takes up to seconds to compile a large generated function with its optimising compiler on
 * a loaded machine, longer than the harness's quick warm-up, and a row timed before that
 * measures the interpreter. Calls repeat in batches of at least 50 ms until two successive
 * batches agree within 10 % per call, at most `maxMs` (`warmUpBudget`, 2 s).
 */
export function warmUp(run: () => unknown, maxMs = warmUpBudget.ms): void {
  const start = performance.now()
  let prev = Infinity
  while (performance.now() - start < maxMs) {
    const t0 = performance.now()
    let calls = 0
    do {
      run()
      calls++
    } while (performance.now() - t0 < 50)
    const per = (performance.now() - t0) / calls
    if (Math.abs(per - prev) < 0.1 * Math.min(per, prev)) return
    prev = per
  }
}

/** Timed results are added here, so their work is never dead code. */
const sink = new Float64Array(1)

export const unfWorkload: Workload<UnfCase> = {
  id: 'unf',
  title: 'Functional array programs (UNF reverse AD, seed 004)',
  description:
    'dot, prod, logsumexp, ADBench GMM and a two-layer MLP written in the functional array language; gradient by the pure UNF reverse transform after partial evaluation.',
  cases,
  baseline: {
    name: 'plain TS objective',
    setup: (c) => {
      const run = () => {
        sink[0] += c.objective()
      }
      warmUp(run)
      return { run }
    },
  },
  rows: [
    {
      name: 'UNF objective (generated JS)',
      family: 'UNF',
      kind: 'objective',
      setup(c) {
        const { compiled, args } = c.unf()
        const run = () => {
          sink[0] += compiled.value(...args) as number
        }
        warmUp(run)
        return {
          run,
          check: () => {
            const v = compiled.value(...args) as number,
              ref = c.objective()
            const error = Math.abs(v - ref) / Math.max(1, Math.abs(ref))
            return { ok: error < 1e-10, error }
          },
        }
      },
    },
    {
      name: 'UNF gradient (Tenet)',
      family: 'UNF',
      kind: 'gradient',
      setup(c) {
        const { compiled, args, flatten } = c.unf()
        const run = () => {
          sink[0] += compiled.gradient(...args)[0]
        }
        warmUp(run)
        return {
          run,
          check: () => directionalCheck(c, flatten(compiled.gradient(...args)[1])),
        }
      },
    },
    {
      // the same gradient compiled with `reuseResults`: the arrays computed once per call (the
      // gradient of prod and logsumexp) are buffers kept across calls instead of fresh ones
      name: 'UNF gradient (reused results)',
      family: 'UNF',
      kind: 'gradient',
      setup(c) {
        const { args, flatten } = c.unf()
        const compiled = c.unf().reused()
        const run = () => {
          sink[0] += compiled.gradient(...args)[0]
        }
        warmUp(run)
        return {
          run,
          check: () => directionalCheck(c, flatten(compiled.gradient(...args)[1])),
        }
      },
    },
    // A dual-numbers reverse AD row (`@tenet/dual`, seed 003) goes here: same cases, same check.
  ],
}
