/**
 * The fuzzer in CI: about a minute of random programs and random bad input against the
 * interpreter, the cpu backend (checks on and off) and the wasm backend (checks on and off).
 * The seed is `TENET_FUZZ_SEED` when set, otherwise derived from the current commit, so one
 * commit always fuzzes the same programs and every new commit explores new ones; it is printed
 * with the counts, and a failure prints it with the (minimised) program that shows it.
 */
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { checkGrad, jvp } from '@tenet/ad'
import { compileModule } from '@tenet/reversible'
import { parse } from '@tenet/ir'
import { wasmBackend } from '@tenet/backend-wasm'
import { formatReport, fuzz, type FuzzBackend } from '@tenet/testing'
import { createRegistry } from './index.js'

const TIME_MS = Number(process.env.TENET_FUZZ_MS ?? 60_000)

/** The seed of this run: the environment's, or one derived from the commit being tested. */
function fuzzSeed(): number {
  if (process.env.TENET_FUZZ_SEED) return Number(process.env.TENET_FUZZ_SEED)
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
    return Number.parseInt(head.slice(0, 7), 16)
  } catch {
    return 20261126
  }
}

const registry = createRegistry().registerBackend(wasmBackend)
function backend(name: string, backendName: string, checks: boolean, extra: Partial<FuzzBackend> = {}): FuzzBackend {
  const cache = new Map<string, ReturnType<typeof compileModule>>()
  return {
    name,
    checks,
    ...extra,
    compile(source) {
      let m = cache.get(source)
      if (!m) {
        m = compileModule(parse({ text: source, name: 'fuzz program' }), { registry, backend: backendName, checks })
        if (cache.size > 16) cache.clear()
        cache.set(source, m)
      }
      return m
    },
  }
}

const backends: FuzzBackend[] = [
  backend('interpreter', 'interpreter', true),
  backend('cpu', 'cpu', true),
  backend('cpu (checks off)', 'cpu', false),
  // the wasm backend lowers neither stacks nor the fixed-point type (its README says so)
  backend('wasm', 'wasm', true, { stacks: false, fixed: false }),
  backend('wasm (checks off)', 'wasm', false, { stacks: false, fixed: false }),
]

describe('fuzzing', () => {
  it(
    `random programs and bad input for ${TIME_MS / 1000} s: no failures`,
    () => {
      const report = fuzz({
        seed: fuzzSeed(),
        timeMs: TIME_MS,
        backends,
        gradient(source, args) {
          const f = backends[1]!.compile(source).f!
          const r = checkGrad(f, args, { loss: 0, atol: 1e-5, rtol: 1e-5, mode: 'reverse' })
          if (r.ok) return { ok: true, detail: '' }
          if (r.worst && !Number.isFinite(r.worst.fd))
            return { ok: false, detail: '', skip: 'finite differences overflow' }
          // a second step size: a mismatch at both is not finite-difference noise ...
          const again = checkGrad(f, args, { loss: 0, atol: 1e-5, rtol: 1e-5, mode: 'reverse', step: 1e-4 })
          if (again.ok) return { ok: true, detail: '' }
          // ... unless the function grows so fast that neither step is small enough: then the
          // tangent program (forward mode, which never uncomputes) is the independent reference
          const w = r.worst!
          const v = args.map((a, i) =>
            ArrayBuffer.isView(a)
              ? Float64Array.from(a as Float64Array, (_, k) => (i === w.arg && k === w.index ? 1 : 0))
              : i === w.arg
                ? 1
                : 0,
          )
          const t = jvp(f, args, { v }).tangent[0] as number
          if (Math.abs(t - w.ad) <= 1e-7 * Math.max(1, Math.abs(t)))
            return { ok: false, detail: '', skip: 'finite differences inaccurate (forward mode agrees)' }
          return { ok: false, detail: `${JSON.stringify(w)}, forward mode ${t}` }
        },
      })
      const text = formatReport(report)
      // the counts of every CI run, in its log
      console.log(text)
      if (process.env.TENET_FUZZ_SUMMARY) {
        const kinds = new Map<string, number>()
        for (const f of report.failures) {
          const k = `${f.campaign}: ${f.problem
            .split('\n')[0]!
            .replace(/[-0-9.e+]+/g, 'N')
            .slice(0, 140)}`
          kinds.set(k, (kinds.get(k) ?? 0) + 1)
        }
        console.log(
          [...kinds]
            .sort((a, b) => b[1] - a[1])
            .map(([k, n]) => `${n}× ${k}`)
            .join('\n'),
        )
      }
      for (const c of Object.keys(report.counts) as Array<keyof typeof report.counts>)
        expect(report.counts[c], `campaign ${c} ran`).toBeGreaterThan(0)
      expect(report.failures.length, `${text}\nreproduce with TENET_FUZZ_SEED=${report.seed}`).toBe(0)
    },
    TIME_MS * 3 + 60_000,
  )
})
