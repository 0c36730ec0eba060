import { checkClose, lazy } from '../harness/check.js'
import { leapfrogFunctions, tenetLeapfrogSamples } from '../tenet/programs.js'
import type { CaseSpec, StudyResult, Workload } from '../harness/types.js'
import {
  leapfrogDoubleDouble,
  leapfrogDoubleDoubleSamples,
  leapfrogF32,
  leapfrogF32Samples,
  leapfrogF64,
  leapfrogF64Samples,
  leapfrogStartF64,
  leapfrogStepsF64,
  leapfrogStepsInverseF64,
  meanPlanetError,
  solarSystem,
  type LeapfrogState,
  type SolarSystem,
} from '../objectives/leapfrog.js'

export interface LeapfrogCase {
  sys: SolarSystem
  dt: number
  steps: number
  /** double-double positions after `steps` steps */
  reference: () => Float64Array
}

const DT = 1 // day

/** Timed results are added here, so their work is never dead code (a typed array: a module variable would box every double stored into it). */
const sink = new Float64Array(1)

const copyState = (s: LeapfrogState): LeapfrogState => ({ x: s.x.slice(), v: s.v.slice(), a: s.a.slice() })

export const leapfrogWorkload: Workload<LeapfrogCase> = {
  id: 'leapfrog',
  title: 'Leapfrog solar system (round-off study)',
  description:
    'Sun + 8 planets, Δt = 1 day. Timed: float64 steps (baseline), float32 steps, and the time-reversed run; study: mean planet position error against a double-double reference after 2^k steps (k ≤ 16; ≤ 20 with --full), float64 and float32, irreversible (plain TS), reversible and reversible-accumulating (Tenet).',
  cases: (o): CaseSpec<LeapfrogCase>[] =>
    (o.full ? [1000, 10000] : [1000]).map((steps) => ({
      label: `${steps} steps`,
      params: { steps, bodies: 9, dt: DT },
      make: () => {
        const sys = solarSystem()
        return { sys, dt: DT, steps, reference: lazy(() => leapfrogDoubleDouble(sys, DT, steps)) }
      },
    })),
  baseline: {
    name: 'plain TS float64',
    setup: (c) => ({ run: () => void (sink[0] += leapfrogF64(c.sys, c.dt, c.steps)[3]) }),
  },
  rows: [
    {
      name: 'plain TS float32',
      family: 'plain TS',
      kind: 'objective',
      setup: (c) => ({
        run: () => void (sink[0] += leapfrogF32(c.sys, c.dt, c.steps)[3]),
        check: () => {
          const error = meanPlanetError(leapfrogF32(c.sys, c.dt, c.steps), c.reference())
          // float32 is expected to drift; "ok" means it is still on the orbit (< 0.01 AU)
          return { ok: error < 1e-2, error, reason: 'mean planet position error (AU) vs double-double' }
        },
      }),
    },
    {
      name: 'plain TS float64',
      family: 'plain TS',
      kind: 'inverse',
      setup(c) {
        const start = leapfrogStartF64(c.sys, c.dt)
        const end = copyState(start)
        leapfrogStepsF64(end, c.sys.mass, c.dt, c.steps)
        const work = copyState(end)
        return {
          run: () => {
            work.x.set(end.x)
            work.v.set(end.v)
            leapfrogStepsInverseF64(work, c.sys.mass, c.dt, c.steps)
          },
          check: () => {
            work.x.set(end.x)
            work.v.set(end.v)
            leapfrogStepsInverseF64(work, c.sys.mass, c.dt, c.steps)
            const r = checkClose(work.x, start.x, 1e-10, 'recovered start')
            return { ...r, reason: r.reason ?? 'start state recovered by the time-reversed run' }
          },
        }
      },
    },
  ],
  study(o): StudyResult {
    const sys = solarSystem()
    // 2^k steps, k = 0..20 with --full (≈ 1.5 min, most of it the double-double reference), ..16 quick
    const stepsList = Array.from({ length: (o.full ? 20 : 16) + 1 }, (_, k) => 2 ** k)
    // each integrator runs once, sampled along the way (it is deterministic step by step)
    const ref = leapfrogDoubleDoubleSamples(sys, DT, stepsList)
    const series = (xs: Float64Array[]): [number, number][] =>
      xs.map((x, i) => [stepsList[i]!, meanPlanetError(x, ref[i]!)])
    const f64 = series(leapfrogF64Samples(sys, DT, stepsList))
    const f32 = series(leapfrogF32Samples(sys, DT, stepsList))
    // the Tenet programs (paper 000 Fig. 6): reversible (Listing 25) and accumulative (Listing 26)
    const reversible = (
      [
        ['f64', false],
        ['f32', false],
        ['f64', true],
        ['f32', true],
      ] as const
    ).map(
      ([T, accumulative]) =>
        [
          T,
          accumulative,
          series(tenetLeapfrogSamples(leapfrogFunctions(T, accumulative), T, sys, DT, stepsList)),
        ] as const,
    )
    return {
      title: 'Leapfrog round-off: mean planet position error vs steps',
      xLabel: 'steps',
      yLabel: 'error (AU)',
      logX: true,
      logY: true,
      series: [
        { name: 'float64 (irreversible)', points: f64 },
        { name: 'float32 (irreversible)', points: f32 },
        ...reversible.map(([T, accumulative, points]) => ({
          name: `${T === 'f64' ? 'float64' : 'float32'} (${accumulative ? 'accumulative' : 'reversible'}, Tenet)`,
          points,
        })),
      ],
    }
  },
}
