import { describe, expect, it } from 'vitest'
import { tenetRows } from './tenet.js'
import { secondInstanceRows, tenetWasmRows } from './tenet-wasm.js'
import { besselWorkload } from '../workloads/bessel.js'
import { isNotApplicable } from '../harness/types.js'

describe('the Tenet (wasm) rows', () => {
  it('are the rows of a second instance of tenet.ts (closures with V8 feedback of their own)', () => {
    expect(secondInstanceRows).not.toBe(tenetRows)
    const cpu = tenetRows.rows.bessel!,
      wasm = tenetWasmRows.rows.bessel!
    expect(wasm.map((r) => [r.name, r.kind])).toEqual(cpu.map((r) => [r.name.replace('(cpu)', '(wasm)'), r.kind]))
    expect(secondInstanceRows.rows.bessel![0]!.setup).not.toBe(cpu[0]!.setup)
  })

  it('run on the wasm backend and pass their checks (single-z Bessel objective and gradient)', async () => {
    const spec = besselWorkload.cases({ full: false })[0]!
    const c = spec.make()
    for (const row of tenetWasmRows.rows.bessel!.filter((r) => r.kind === 'objective' || r.kind === 'gradient')) {
      const prepared = await row.setup(c as never)
      if (isNotApplicable(prepared)) throw new Error(`${row.name} ${row.kind}: n/a (${prepared.na})`)
      expect(await prepared.check!()).toMatchObject({ ok: true })
    }
  })
})
