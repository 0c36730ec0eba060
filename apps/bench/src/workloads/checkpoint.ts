import { checkpointedGradient, rev, type TenetFunction } from 'tenet'
import { checkClose, lazy } from '../harness/check.js'
import type { CaseSpec, Row, StudyResult, Workload } from '../harness/types.js'

/**
 * Gradients of a long chain in bounded memory (issue: `@tenet/checkpoint`): a 1-D periodic
 * diffusion step written in Tenet, iterated T times, differentiated under store-all, Bennett
 * (reverse computing, k-ary) and binomial checkpointing (revolve) at several budgets.
 */
export interface ChainCase {
  step: TenetFunction
  cells: number
  steps: number
  coefficient: number
  s0: Float64Array
  seed: Float64Array
  /** ∂⟨seed, s_T⟩/∂s₀ by a plain-TS store-all adjoint */
  gradient: () => Float64Array
}

/** The diffusion step's Tenet source (the wasm rows compile it on their backend). */
export const diffusionSource = `
fn diffusion(dest: f64[], src: f64[], c: f64) {
  n: i32 <- len(src)
  for i in 0..n {
    dest[i] += src[i] + c * (src[(i + 1) % n] + src[(i + n - 1) % n] - 2.0 * src[i])
  }
  n -> len(src)
}`

const diffusion = rev.with({ checks: false })(
  Object.assign([diffusionSource], { raw: [diffusionSource] }) as unknown as TemplateStringsArray,
).diffusion!

function plainStep(dst: Float64Array, src: Float64Array, c: number): void {
  const n = src.length
  for (let i = 0; i < n; i++) dst[i] = src[i]! + c * (src[(i + 1) % n]! + src[(i + n - 1) % n]! - 2 * src[i]!)
}

/** The reference: store every state, then the transposed stencil backwards. */
function plainGradient(s0: Float64Array, T: number, c: number, seed: Float64Array): Float64Array {
  const n = s0.length
  let bar = seed.slice()
  const next = new Float64Array(n)
  for (let t = 0; t < T; t++) {
    // the stencil is symmetric and linear: its transpose is itself
    plainStep(next, bar, c)
    bar = next.slice()
  }
  return bar
}

/** Timed results are added here, so their work is never dead code (a typed array: a module variable would box every double stored into it). */
const sink = new Float64Array(1)

const SCHEDULES: Array<{
  label: string
  options: Parameters<typeof checkpointedGradient>[3] extends infer O ? Omit<O & object, 'seed' | 'args'> : never
  maxSteps?: number
}> = [
  { label: 'store-all', options: { schedule: 'store-all' } },
  { label: 'Bennett k=16', options: { schedule: 'bennett', k: 16 } },
  { label: 'Bennett k=4', options: { schedule: 'bennett', k: 4 } },
  { label: 'Bennett k=2', options: { schedule: 'bennett', k: 2 }, maxSteps: 1_000 },
  { label: 'binomial s=100', options: { schedule: 'binomial', budget: 100 } },
  { label: 'binomial s=30', options: { schedule: 'binomial', budget: 30 } },
  { label: 'binomial s=10', options: { schedule: 'binomial', budget: 10 } },
  { label: 'Knill s=12', options: { schedule: 'knill', budget: 12 }, maxSteps: 2_000 },
]

function chainCase(steps: number): CaseSpec<ChainCase> {
  const cells = 100
  return {
    label: `${cells} cells × ${steps} steps`,
    params: { cells, steps },
    make: () => {
      const s0 = Float64Array.from({ length: cells }, (_, i) => Math.exp(-((i - 40) ** 2) / 50) + 0.1 * Math.sin(i))
      const seed = Float64Array.from({ length: cells }, (_, i) => Math.cos(i / 7))
      const coefficient = 0.2
      return {
        step: diffusion,
        cells,
        steps,
        coefficient,
        s0,
        seed,
        gradient: lazy(() => plainGradient(s0, steps, coefficient, seed)),
      }
    },
  }
}

/** The Tenet rows, one per schedule, on the case's own `step` (a cpu-compiled Tenet function). */
export const checkpointRows: Row<ChainCase>[] = SCHEDULES.map(({ label, options, maxSteps }) => ({
  name: `Tenet ${label}`,
  family: 'Tenet',
  kind: 'gradient' as const,
  setup(c: ChainCase) {
    if (maxSteps !== undefined && c.steps > maxSteps)
      return {
        na: `${label} is too slow at T = ${c.steps} (its cost grows as T^${label.startsWith('Knill') ? '2 to build the table' : 'log₂3'})`,
      }
    const run = () =>
      checkpointedGradient(c.step, c.s0, c.steps, { ...options, seed: c.seed, args: [c.coefficient] } as never)
    return {
      run: () => void (sink[0] += run().gradient[0]!),
      check: () => {
        const r = run()
        const check = checkClose(r.gradient, c.gradient(), 1e-10, 'gradient')
        return {
          ...check,
          reason: `${check.reason ?? 'gradient vs plain store-all adjoint'}; peak ${r.cost.peakStates} states, ${r.cost.forward + r.cost.adjointForward} forward (${r.cost.adjointForward} inside the step's adjoints) + ${r.cost.uncompute} uncompute steps`,
        }
      },
    }
  },
}))

export const checkpointWorkload: Workload<ChainCase> = {
  id: 'checkpoint',
  title: 'Long chains in bounded memory (diffusion, Tenet step)',
  description:
    'A periodic 1-D diffusion step written in Tenet, iterated T times; gradient of ⟨seed, s_T⟩ w.r.t. s₀ under store-all, Bennett (reverse computing) and binomial checkpointing. Baseline: the plain-TS forward chain. Study: time versus peak live states (memory) for each schedule.',
  cases: (o) => (o.full ? [1_000, 10_000, 100_000] : [1_000, 10_000]).map(chainCase),
  baseline: {
    name: 'plain TS forward chain',
    setup(c) {
      const a = new Float64Array(c.cells),
        b = new Float64Array(c.cells)
      return {
        run: () => {
          a.set(c.s0)
          let src = a,
            dst = b
          for (let t = 0; t < c.steps; t++) {
            plainStep(dst, src, c.coefficient)
            const tmp = src
            src = dst
            dst = tmp
          }
          sink[0] += src[0]!
        },
      }
    },
  },
  rows: checkpointRows,
  study(o): StudyResult {
    const c = chainCase(o.full ? 100_000 : 10_000).make()
    const series = new Map<string, [number, number][]>()
    for (const { label, options, maxSteps } of SCHEDULES) {
      if (maxSteps !== undefined && c.steps > maxSteps) continue
      const family = label.split(' ')[0]!
      const t0 = performance.now()
      const r = checkpointedGradient(c.step, c.s0, c.steps, {
        ...options,
        seed: c.seed,
        args: [c.coefficient],
      } as never)
      const ms = performance.now() - t0
      if (!series.has(family)) series.set(family, [])
      series.get(family)!.push([r.cost.peakStates, ms])
    }
    return {
      title: `Gradient of a ${c.steps}-step diffusion chain: time vs peak live states`,
      xLabel: 'peak live states (memory)',
      yLabel: 'time (ms)',
      logX: true,
      logY: true,
      series: [...series].map(([name, points]) => ({ name, points: points.sort((p, q) => p[0] - q[0]) })),
    }
  },
}
