/**
 * The device checks on whatever adapter Dawn finds (a real GPU, or SwiftShader): the precise math
 * routines against `Math` (and, for comparison, the device's built-ins), then bundles of random
 * i32 and f32 programs against the cpu backend, for a time budget. Writes `device-check.json` and
 * `device-check.md` to `--out`. Not part of the package build; `scripts/gpu-bench-pack.mjs`
 * bundles it for `scripts/gpu-bench.sh`.
 *
 *   node device-check.mjs [--out DIR] [--math N] [--seconds S] [--per-bundle P]
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { requestGpu } from './index.js'
import {
  accuracyCases,
  conformanceStats,
  f32Bundle,
  flushesSubnormals,
  i32Bundle,
  measureAccuracy,
  type AccuracyResult,
} from './device-checks.js'

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback
}

async function main(): Promise<void> {
  const out = arg('out', '.')
  const N = Number(arg('math', String(2 ** 16)))
  const seconds = Number(arg('seconds', '60'))
  const perBundle = Number(arg('per-bundle', '10'))
  const { create } = await import('webgpu')
  const gpu = await requestGpu(create([]) as unknown as GPU)
  const adapter = `${gpu.adapter}${gpu.fallback ? ' — emulated (SwiftShader/fallback adapter)' : ''}`
  console.log(`[device-check] adapter: ${adapter}`)
  const ftz = await flushesSubnormals(gpu)
  console.log(`[device-check] subnormal f32: ${ftz ? 'flushed to zero' : 'kept'}`)
  mkdirSync(out, { recursive: true })
  const math: Array<{ precise: AccuracyResult; builtin: AccuracyResult }> = []
  const stats = conformanceStats()
  const failures: string[] = []
  let seed = 0
  /** Writes what is known so far (after the math checks and after each bundle: a run stopped by a time limit keeps them). */
  const write = (): string => {
    const conformance = {
      seeds: seed,
      i32Programs: stats.i32.run,
      i32LeftOut: stats.i32.skipped,
      f32Programs: stats.f32.run,
      f32Compared: stats.f32.compared,
      f32BitForBit: stats.f32.exact,
      f32WorstUlpOfScale: stats.f32.worst,
      failures: failures.slice(0, 10),
      failureCount: failures.length,
    }
    writeFileSync(
      join(out, 'device-check.json'),
      JSON.stringify({ adapter, fallback: gpu.fallback, subnormalsFlushed: ftz, math, conformance }, null, 2),
    )
    const md = [
      `# Device check: ${adapter}`,
      '',
      `Subnormal f32 values ${ftz ? 'are flushed to zero by this device (compared as such)' : 'are kept'}.`,
      '',
      "Distances in representable f32 steps from `Math.fround(Math.f(x))`, over each function's whole test domain (huge arguments included: WGSL specifies the built-ins on narrower ranges).",
      '',
      '| function | inputs | precise: max ulp | at 1 ulp | built-in: max ulp |',
      '|---|---|---|---|---|',
      ...math.map(
        ({ precise: p, builtin: b }) => `| ${p.name} | ${p.inputs} | ${p.maxUlp} | ${p.ones} | ${b.maxUlp} |`,
      ),
      '',
      `Conformance (seeds 0..${seed - 1}): ${stats.i32.run} i32 programs bit for bit (${stats.i32.skipped} left out: f64), ${stats.f32.run} f32 programs (forward and inverse, ${stats.f32.compared} comparisons): ${stats.f32.exact} bit for bit, largest difference ${stats.f32.worst.toPrecision(3)} ulp of the scale; ${failures.length} failures.`,
      ...failures.slice(0, 3).map((f) => `\n\`\`\`\n${f}\n\`\`\``),
      '',
    ].join('\n')
    writeFileSync(join(out, 'device-check.md'), md)
    return md
  }
  for (const c of accuracyCases(N)) {
    const precise = await measureAccuracy(gpu, c, ftz, true)
    const builtin = await measureAccuracy(gpu, c, ftz, false)
    math.push({ precise, builtin })
    write()
    console.log(
      `[device-check] ${c.name}: precise max ${precise.maxUlp} ulp (${precise.ones} at 1 ulp, ${precise.flushed} flushed) over ${precise.inputs} inputs; built-in max ${builtin.maxUlp} ulp${precise.bad.length ? `; over 1 ulp: ${precise.bad.join('; ')}` : ''}`,
    )
  }
  const t0 = performance.now()
  while ((performance.now() - t0) / 1000 < seconds) {
    const seeds = Array.from({ length: perBundle }, (_, i) => seed + i)
    failures.push(...(await i32Bundle(gpu, seeds, stats)))
    failures.push(...(await f32Bundle(gpu, seeds, stats)))
    seed += perBundle
    write()
    console.log(
      `[device-check] conformance: seeds 0..${seed - 1}, ${stats.i32.run} i32 and ${stats.f32.run} f32 programs, ${failures.length} failures, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    )
  }
  console.log(write())
  gpu.device.destroy()
  process.exit(failures.length || math.some((m) => m.precise.maxUlp > 1) ? 1 : 0)
}

main().catch((e) => {
  console.error(`[device-check] failed: ${e instanceof Error ? e.stack : String(e)}`)
  process.exit(2)
})
