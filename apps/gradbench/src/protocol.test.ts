/** The protocol, through the tool process: failures answer `success: false`, runs, stdout hygiene, large lines. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { haveData } from './data.js'
import { mainJs, recorded } from './replay.js'
import { startTool, type ToolSession } from './session.js'
import { checkResponse } from './check.js'

describe('the tool process', () => {
  let tool: ToolSession
  let sent = 0
  const send = (m: unknown): Promise<Record<string, unknown>> => {
    sent++
    return tool.send(m)
  }
  beforeAll(() => {
    tool = startTool(process.execPath, [mainJs])
  })
  afterAll(async () => {
    expect(await tool.close()).toBe(0)
  })

  it('answers start with its name and analysis with the id', async () => {
    expect(await send({ id: 0, kind: 'start', eval: 'llsq' })).toEqual({ id: 0, tool: 'tenet' })
    expect(await send({ id: 1, kind: 'analysis', of: 0, valid: true })).toEqual({ id: 1 })
  })

  it('answers define of an unknown module with success: false', async () => {
    const r = await send({ id: 2, kind: 'define', module: 'nosuchmodule' })
    expect(r.id).toBe(2)
    expect(r.success).toBe(false)
    expect(String(r.error)).toMatch(/not implemented.*available: hello, llsq/)
    expect(await send({ id: 3, kind: 'define', module: 'llsq' })).toEqual({ id: 3, success: true })
  })

  it('answers an unknown function and a thrown error with success: false and the message', async () => {
    const a = await send({ id: 4, kind: 'evaluate', module: 'llsq', function: 'hessian', input: {} })
    expect(a).toMatchObject({ id: 4, success: false })
    expect(String(a.error)).toMatch(/no function `hessian`/)
    const b = await send({ id: 5, kind: 'evaluate', module: 'llsq', function: 'primal', input: { n: 4 } })
    expect(b).toEqual({ id: 5, success: false, error: 'input field `x` must be a (nested) array of numbers' })
    const c = await send({ id: 6, kind: 'evaluate', module: 'det', function: 'primal', input: { A: [], ell: 0 } })
    expect(c).toEqual({ id: 6, success: false, error: 'det needs ell ≥ 1' })
    // the tool goes on after a failure
    const d = await send({
      id: 7,
      kind: 'evaluate',
      module: 'det',
      function: 'primal',
      input: { A: [1, 2, 3, 4], ell: 2, min_runs: 1, min_seconds: 0 },
    })
    expect(d).toMatchObject({ id: 7, success: true, output: -2 })
  })

  it('repeats a function until min_runs and min_seconds are met, one timing per run, the same output', async () => {
    const input = { A: [2, 1, 0, 1, 3, 1, 0, 1, 4], ell: 3, min_runs: 5, min_seconds: 0 }
    const r = await send({ id: 8, kind: 'evaluate', module: 'det', function: 'gradient', input })
    const runs = (r.timings as Array<{ name: string; nanoseconds: number }>).filter((t) => t.name === 'evaluate')
    expect(runs).toHaveLength(5)
    for (const t of runs) expect(Number.isInteger(t.nanoseconds)).toBe(true)
    // the cofactors of [[2,1,0],[1,3,1],[0,1,4]]
    expect(r.output).toEqual([11, -4, 1, -4, 8, -2, 1, -2, 5])
    const s = await send({
      id: 9,
      kind: 'evaluate',
      module: 'det',
      function: 'primal',
      input: { ...input, min_runs: 1, min_seconds: 0.05 },
    })
    const total = (s.timings as Array<{ name: string; nanoseconds: number }>)
      .filter((t) => t.name === 'evaluate')
      .reduce((a, t) => a + t.nanoseconds, 0)
    expect(total).toBeGreaterThanOrEqual(0.05e9)
    expect(s.output).toBe(18)
    // older evals name the run count `runs`
    const o = await send({
      id: 10,
      kind: 'evaluate',
      module: 'det',
      function: 'primal',
      input: { A: input.A, ell: 3, runs: 2 },
    })
    expect((o.timings as Array<{ name: string }>).filter((t) => t.name === 'evaluate')).toHaveLength(2)
  })

  it.skipIf(!haveData)(
    'gives the same outputs when runs repeat (no state left between runs)',
    async () => {
      for (const name of ['lstm', 'ode', 'ht', 'gmm', 'det', 'kmeans', 'ba', 'llsq']) {
        const lines = recorded(name)
          .filter((l) => l.message.kind === 'evaluate')
          .slice(0, 2)
        for (const { message, expected } of lines) {
          const m = { ...message, id: 100 + sent, input: { ...(message.input as object), min_runs: 3 } }
          const r = await send(m)
          expect(checkResponse(name, m, expected, r)).toBeNull()
        }
      }
    },
    120_000,
  )

  it('takes a million values on one line (lse), without stack or heap trouble', async () => {
    const n = 1_000_000
    const x = Array.from({ length: n }, (_, i) => Math.sin(i) * 3)
    let max = -Infinity
    for (const v of x) max = Math.max(max, v)
    let s = 0
    for (const v of x) s += Math.exp(v - max)
    const r = await send({
      id: 200,
      kind: 'evaluate',
      module: 'lse',
      function: 'primal',
      input: { x, min_runs: 1, min_seconds: 0 },
    })
    expect(r.success).toBe(true)
    expect(r.output as number).toBeCloseTo(max + Math.log(s), 9)
    const g = await send({
      id: 201,
      kind: 'evaluate',
      module: 'lse',
      function: 'gradient',
      input: { x, min_runs: 1, min_seconds: 0 },
    })
    const out = g.output as number[]
    expect(out).toHaveLength(n)
    expect(out[7]!).toBeCloseTo(Math.exp(x[7]! - max) / s, 15)
    expect(out.reduce((a, v) => a + v, 0)).toBeCloseTo(1, 9)
  }, 120_000)

  it('writes nothing but one JSON response line per message to stdout', async () => {
    const bad = await tool.send('this is not json')
    sent++
    expect(bad.success).toBe(false)
    expect(tool.lines).toHaveLength(sent)
    for (const line of tool.lines) expect(typeof JSON.parse(line)).toBe('object')
  })
})
