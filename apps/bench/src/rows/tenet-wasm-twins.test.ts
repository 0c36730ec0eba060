import { describe, expect, it } from 'vitest'
import { isNotApplicable, type PreparedRow, type Row } from '../harness/types.js'
import { checkpointWorkload } from '../workloads/checkpoint.js'
import { table1Cases } from '../workloads/dual.js'
import { normWorkload } from '../workloads/norm.js'
import { adapterRows } from './adapter.js'
import { table1TenetRows } from './table1-tenet.js'
import { backendOf, diffusionOnWasm, tenetWasmTwinRows, wasmName, wasmTwin } from './tenet-wasm-twins.js'
import { benchBackend } from '../tenet/compile.js'

/** Sets a row up on a case, runs it once as the timing loop would, and returns its check. */
async function checked<C>(row: Row<C>, c: C) {
  const p = await row.setup(c)
  if (isNotApplicable(p)) throw new Error(`${row.name}: n/a (${p.na})`)
  const prepared = p as PreparedRow
  await prepared.run()
  const r = await prepared.check()
  prepared.dispose?.()
  return r
}

/** The quick suite's row filter (`cli.ts`): a name or family containing one of the parts. */
const QUICK_FILTER = 'Tenet (cpu,(wasm,plain,UNF,store-all'.split(',').map((s) => s.toLowerCase())
const selected = (r: Row<unknown>) =>
  QUICK_FILTER.some((x) => r.name.toLowerCase().includes(x) || (r.family ?? '').toLowerCase().includes(x))

describe('Tenet (wasm) twins of dual, norm and checkpoint', () => {
  const rows = tenetWasmTwinRows.rows

  it('are named "Tenet (wasm) …", one per cpu row, and the quick suite’s filter selects them', () => {
    expect(rows.dual!.map((r) => [r.name, r.kind])).toEqual(
      table1TenetRows.rows.dual!.map((r) => [r.name.replace('(cpu)', '(wasm)'), r.kind]),
    )
    expect(rows.norm!.map((r) => [r.name, r.kind])).toEqual([['Tenet (wasm)', 'gradient']])
    expect(rows.checkpoint!.map((r) => [r.name, r.kind])).toEqual([['Tenet (wasm) store-all', 'gradient']])
    for (const r of [...rows.dual!, ...rows.norm!, ...rows.checkpoint!]) {
      expect(r.family).toBe('Tenet (wasm)')
      expect(r.name).toContain('(wasm')
      expect(selected(r as Row<unknown>)).toBe(true)
    }
    expect(wasmName('Tenet binomial s=10')).toBe('Tenet (wasm) binomial s=10')
  })

  it('a twin runs its setup with wasm as the bench backend, and only its setup', async () => {
    const seen: string[] = []
    const probe: Row<number> = {
      name: 'Tenet (cpu) probe',
      kind: 'gradient',
      setup: (c) => {
        seen.push(`${benchBackend()} ${c}`)
        return { run: () => void seen.push(benchBackend()), check: () => ({ ok: true, error: 0 }) }
      },
    }
    const twin = wasmTwin(probe, wasmName(probe.name))
    expect(twin.name).toBe('Tenet (wasm) probe')
    await checked(twin, 7)
    await checked(probe, 8)
    expect(seen).toEqual(['wasm 7', 'cpu', 'cpu 8', 'cpu'])
  })

  it.each(table1Cases({ full: false }).map((s) => [s.label, s] as const))(
    'dual %s: the wasm row runs and passes the cpu row’s check',
    async (_l, spec) => {
      const r = await checked(rows.dual![0]!, spec.make())
      expect(r.ok, r.reason).toBe(true)
    },
  )

  it('dual: the check fails against a wrong reference (the twin is checked, not trusted)', async () => {
    const spec = table1Cases({ full: false }).find((s) => s.label.startsWith('dot'))!
    const c = spec.make()
    const wrong = { ...c, gradient: () => c.gradient().map((v, i) => (i === 3 ? v + 1e-3 : v)) }
    const r = await checked(rows.dual![0]!, wrong)
    expect(r.ok).toBe(false)
  })

  it('norm n = 10³: the wasm row passes x/‖x‖, and its program is compiled on wasm (the cpu row’s on cpu)', async () => {
    const c = normWorkload.cases({ full: false })[0]!.make()
    const r = await checked(rows.norm![0]!, c)
    expect(r.ok, r.reason).toBe(true)
    const bad = await checked(rows.norm![0]!, { ...c, gradient: () => c.gradient().map((v) => -v) })
    expect(bad.ok).toBe(false)
    // the cpu row still passes after the wasm one compiled the norm (one module per backend)
    const cpu = adapterRows.rows.norm!.find((row) => row.name === 'Tenet (cpu)')!
    expect((await checked(cpu, c)).ok).toBe(true)
  })

  it('checkpoint store-all, 100 cells × 1000 steps: the wasm step is compiled on wasm and the row passes', async () => {
    expect(backendOf(diffusionOnWasm())).toBe('wasm')
    const c = checkpointWorkload.cases({ full: false })[0]!.make()
    expect(c.steps).toBe(1000)
    expect(backendOf(c.step)).toBe('cpu')
    const r = await checked(rows.checkpoint![0]!, c)
    expect(r.ok, r.reason).toBe(true)
    expect(r.reason).toMatch(/peak 1001 states, 1000 forward \(0 inside the step's adjoints\)/)
    const bad = await checked(rows.checkpoint![0]!, { ...c, gradient: () => c.gradient().map((v) => v * (1 + 1e-6)) })
    expect(bad.ok).toBe(false)
  })
})
