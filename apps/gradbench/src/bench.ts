#!/usr/bin/env node
/**
 * The GradBench bench report: for every eval, on its recorded inputs, the time of one evaluation
 * of the objective and of the derivative (in process, after warm-up, JSON handling excluded, as
 * the tool times them) and their ratio — the figure of merit of the rest of the bench.
 *
 * usage: node apps/gradbench/dist/bench.js [eval …] [--rounds 3] [--time-ms 300] [--data <dir>]
 *
 * Each round times every function for at least --time-ms (and 3 runs) and takes the median run;
 * the table gives the median over the rounds and the range of the ratio across rounds.
 * particle and saddle: the objective is the crossing cost (the outer max-objective), the
 * derivative its nested derivative in each (outer, inner) mode, and the full solve is timed too.
 */
import { resolve } from 'node:path'
import { MODULES } from './evals/index.js'
import { argminStats } from './evals/argmin.js'
import { particleFunctions } from './evals/particle.js'
import { saddleFunctions } from './evals/saddle.js'
import type { Prepared } from './evals/types.js'
import { dataDir, recorded } from './replay.js'

/** The (objective, derivative) function names of each eval. */
const PAIRS: Record<string, [string, string]> = {
  hello: ['square', 'double'],
  llsq: ['primal', 'gradient'],
  lse: ['primal', 'gradient'],
  det: ['primal', 'gradient'],
  ode: ['primal', 'gradient'],
  gmm: ['objective', 'jacobian'],
  lstm: ['objective', 'jacobian'],
  kmeans: ['cost', 'dir'],
  ba: ['objective', 'jacobian'],
  ht: ['objective', 'jacobian'],
}

/**
 * Median time of one call of `run` in ms: after warm-up, samples of a batch of calls sized to
 * last about 2 ms (timer resolution), for at least `timeMs` and 3 samples.
 */
function timeOf(run: () => void, timeMs: number): number {
  const w0 = performance.now()
  let calls = 0
  for (; calls < 2 || performance.now() - w0 < Math.min(timeMs / 3, 100); calls++) run()
  const batch = Math.max(1, Math.ceil(2 / ((performance.now() - w0) / calls)))
  const times: number[] = []
  const t0 = performance.now()
  while (times.length < 3 || performance.now() - t0 < timeMs) {
    const s = performance.now()
    for (let i = 0; i < batch; i++) run()
    times.push((performance.now() - s) / batch)
  }
  times.sort((a, b) => a - b)
  return times[times.length >> 1]!
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const fmt = (ms: number): string =>
  ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms >= 0.01 ? ms.toFixed(4) : ms.toExponential(2)

interface Row {
  eval: string
  workload: string
  objective: string
  derivative: string
  objectiveMs: number[]
  derivativeMs: number[]
}

function pairs(
  evalName: string,
  dir: string,
): Array<{ workload: string; obj: () => Prepared; der: () => Prepared; names: [string, string] }> {
  const mod = MODULES[evalName]!
  const [o, d] = PAIRS[evalName]!
  const msgs = recorded(evalName, dir)
    .map((l) => l.message)
    .filter((m) => m.kind === 'evaluate')
  const out: ReturnType<typeof pairs> = []
  for (const m of msgs) {
    if (m.function !== o) continue
    const label = String(m.description ?? `input ${String(m.input)}`)
    const dm = msgs.find(
      (x) =>
        x.function === d && x.description === m.description && (evalName !== 'hello' || x.id === (m.id as number) + 2),
    )
    if (!dm) continue
    out.push({ workload: label, obj: () => mod[o]!(m.input), der: () => mod[d]!(dm.input), names: [o, d] })
  }
  return out
}

function main(): void {
  const args = process.argv.slice(2)
  const opt = (name: string, def: string): string => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1]! : def
  }
  const rounds = Number(opt('--rounds', '3'))
  const timeMs = Number(opt('--time-ms', '300'))
  const dir = resolve(opt('--data', dataDir))
  const optionValues = new Set(['--rounds', '--time-ms', '--data'].map((o) => args.indexOf(o) + 1).filter((i) => i > 0))
  const names = args.filter((a, i) => !a.startsWith('--') && !optionValues.has(i))
  const evals = names.length ? names : [...Object.keys(PAIRS), 'particle', 'saddle']
  const rows: Row[] = []
  const solves: Array<{ eval: string; mode: string; ms: number[]; counts: string }> = []
  for (const e of evals) {
    process.stderr.write(`${e} …\n`)
    if (e === 'particle' || e === 'saddle') {
      for (const mode of ['rr', 'ff', 'fr', 'rf'] as const) {
        const [outer, inner] = [mode[0] as 'f' | 'r', mode[1] as 'f' | 'r']
        const row: Row = { eval: e, workload: mode, objective: '', derivative: '', objectiveMs: [], derivativeMs: [] }
        const input = recorded(e, dir).find((l) => l.message.function === mode)!.message.input
        const solve = MODULES[e]![mode]!(input)
        const solveMs: number[] = []
        if (e === 'particle') {
          const f = particleFunctions(outer, inner)
          Object.assign(row, { objective: 'cost(w = 0)', derivative: `d/dw (outer ${outer}, inner ${inner})` })
          for (let r = 0; r < rounds; r++) {
            row.objectiveMs.push(timeOf(() => f.cost(0), timeMs))
            row.derivativeMs.push(timeOf(() => f.derivative(0), timeMs))
            solveMs.push(timeOf(() => solve.run(), timeMs))
          }
        } else {
          const start = Float64Array.from([1, 1]),
            a = Float64Array.from([0.5, 0.5]),
            g = new Float64Array(2)
          const F = saddleFunctions(outer, inner).outer(start)
          Object.assign(row, { objective: 'F(p₁) (inner ascent)', derivative: `∇F (outer ${outer}, inner ${inner})` })
          for (let r = 0; r < rounds; r++) {
            row.objectiveMs.push(timeOf(() => F.value(a), timeMs))
            row.derivativeMs.push(timeOf(() => F.gradient(a, g), timeMs))
            solveMs.push(timeOf(() => solve.run(), timeMs))
          }
        }
        rows.push(row)
        argminStats.values = argminStats.gradients = 0
        solve.run()
        solves.push({ eval: e, mode, ms: solveMs, counts: `${argminStats.values} / ${argminStats.gradients}` })
      }
      continue
    }
    for (const p of pairs(e, dir)) {
      const obj = p.obj(),
        der = p.der()
      const row: Row = {
        eval: e,
        workload: p.workload,
        objective: p.names[0],
        derivative: p.names[1],
        objectiveMs: [],
        derivativeMs: [],
      }
      for (let r = 0; r < rounds; r++) {
        row.objectiveMs.push(timeOf(obj.run, timeMs))
        row.derivativeMs.push(timeOf(der.run, timeMs))
      }
      rows.push(row)
    }
  }
  const lines = [
    `GradBench evals on Tenet: median time of one evaluation over ${rounds} round(s) of ≥ ${timeMs} ms each (ratio range across rounds)`,
    '',
    '| eval | workload | objective | ms | derivative | ms | derivative ÷ objective |',
    '|---|---|---|---|---|---|---|',
  ]
  for (const r of rows) {
    const ratios = r.derivativeMs.map((d, i) => d / r.objectiveMs[i]!)
    const lo = Math.min(...ratios),
      hi = Math.max(...ratios)
    lines.push(
      `| ${r.eval} | ${r.workload} | ${r.objective} | ${fmt(median(r.objectiveMs))} | ${r.derivative} | ${fmt(median(r.derivativeMs))} | ${median(ratios).toFixed(2)}× (${lo.toFixed(2)}–${hi.toFixed(2)}) |`,
    )
  }
  if (solves.length) {
    lines.push(
      '',
      '| eval | mode | full solve (the evaluate GradBench times), ms | objective / derivative evaluations per solve (all descents) |',
      '|---|---|---|---|',
    )
    for (const s of solves)
      lines.push(
        `| ${s.eval} | ${s.mode} | ${fmt(median(s.ms))} (${fmt(Math.min(...s.ms))}–${fmt(Math.max(...s.ms))}) | ${s.counts} |`,
      )
  }
  process.stdout.write(lines.join('\n') + '\n')
}

main()
