import { checkClose, lazy } from '../harness/check.js'
import { leapfrogFunctions, tenetLeapfrog } from '../tenet/programs.js'
import type { CaseSpec, StudyResult, Workload } from '../harness/types.js'
import {
  leapfrogDoubleDouble,
  leapfrogF32,
  leapfrogF64,
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

let sink = 0

const copyState = (s: LeapfrogState): LeapfrogState => ({ x: s.x.slice(), v: s.v.slice(), a: s.a.slice() })

export const leapfrogWorkload: Workload<LeapfrogCase> = {
  id: 'leapfrog',
  title: 'Leapfrog solar system (round-off study)',
  description:
    'Sun + 8 planets, Δt = 1 day. Timed: float64 steps (baseline), float32 steps, and the time-reversed run; study: mean planet position error against a double-double reference versus the number of steps.',
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
    setup: (c) => ({ run: () => void (sink += leapfrogF64(c.sys, c.dt, c.steps)[3]) }),
  },
  rows: [
    {
      name: 'plain TS float32',
      family: 'plain TS',
      kind: 'objective',
      setup: (c) => ({
        run: () => void (sink += leapfrogF32(c.sys, c.dt, c.steps)[3]),
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
    const stepsList = o.full ? [10, 100, 1000, 10000, 100000] : [10, 100, 1000, 10000]
    // integrate once, sampling along the way (each integrator is deterministic step by step)
    const f64: [number, number][] = []
    const f32: [number, number][] = []
    // the Tenet programs (paper 000 Fig. 6): reversible (Listing 25) and accumulative (Listing 26)
    const reversible: ['f64' | 'f32', boolean, [number, number][]][] = [
      ['f64', false, []],
      ['f32', false, []],
      ['f64', true, []],
      ['f32', true, []],
    ]
    for (const steps of stepsList) {
      const ref = leapfrogDoubleDouble(sys, DT, steps)
      f64.push([steps, meanPlanetError(leapfrogF64(sys, DT, steps), ref)])
      f32.push([steps, meanPlanetError(leapfrogF32(sys, DT, steps), ref)])
      for (const [T, accumulative, out] of reversible)
        out.push([steps, meanPlanetError(tenetLeapfrog(leapfrogFunctions(T, accumulative), T, sys, DT, steps), ref)])
    }
    return {
      title: 'Leapfrog round-off: mean planet position error vs steps',
      xLabel: 'steps',
      yLabel: 'error (AU)',
      logX: true,
      logY: true,
      series: [
        { name: 'float64 (regular)', points: f64 },
        { name: 'float32 (regular)', points: f32 },
        ...reversible.map(([T, accumulative, points]) => ({
          name: `${T === 'f64' ? 'float64' : 'float32'} (${accumulative ? 'accumulative' : 'reversible'}, Tenet)`,
          points,
        })),
      ],
    }
  },
}

export const leapfrogSink = (): number => sink
