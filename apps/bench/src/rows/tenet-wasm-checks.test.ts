import { TENET_FUNCTION } from 'tenet'
import { describe, expect, it } from 'vitest'
import { isNotApplicable } from '../harness/types.js'
import { withBackend, withChecks } from '../tenet/compile.js'
import * as P from '../tenet/programs.js'
import { besselWorkload } from '../workloads/bessel.js'
import { tenetRows } from './tenet.js'
import { TENET_WASM_CHECKS_ROW, tenetWasmChecksRows } from './tenet-wasm-checks.js'

describe('the Tenet (wasm, checks on) rows', () => {
  it('are the objective rows of tenet.ts, one for one, renamed', () => {
    const expected = Object.entries(tenetRows.rows)
      .map(([id, rows]) => [id, rows!.filter((r) => r.kind === 'objective').map((r) => r.name)] as const)
      .filter(([, names]) => names.length > 0)
    const got = Object.entries(tenetWasmChecksRows.rows).map(([id, rows]) => [id, rows!.map((r) => r.name)])
    expect(got).toEqual(
      expected.map(([id, names]) => [id, names.map((n) => n.replace('Tenet (cpu)', TENET_WASM_CHECKS_ROW))]),
    )
    expect(got.length).toBeGreaterThanOrEqual(7)
  })

  it('compile on wasm with the checks on, in caches of their own', () => {
    const plainWasm = withBackend('wasm', () => P.besselFunction())
    const checked = withBackend('wasm', () => withChecks(true, () => P.besselFunction()))
    expect(checked).not.toBe(plainWasm)
    expect(checked).not.toBe(withChecks(true, () => P.besselFunction()))
    expect(checked[TENET_FUNCTION].options.checks).toBe(true)
    expect(checked[TENET_FUNCTION].options.backend).toBe('wasm')
    expect(withBackend('wasm', () => withChecks(true, () => P.besselFunction()))).toBe(checked)
  })

  it('pass the cpu rows’ checks (single-z and batch Bessel objective)', async () => {
    for (const spec of besselWorkload.cases({ full: false })) {
      const c = spec.make()
      for (const row of tenetWasmChecksRows.rows.bessel!) {
        const prepared = await row.setup(c as never)
        if (isNotApplicable(prepared)) throw new Error(`${row.name}: n/a (${prepared.na})`)
        expect(await prepared.check()).toMatchObject({ ok: true })
      }
    }
  })
})
