import { describe, expect, it } from 'vitest'
import { parse } from '@tenet/ir'
import { compileSource, gradientOf, graphOf, printed, readArgs, runFunction, scheduleOf } from '../src/engine.js'
import { gatesOf, memoryGraphSvg } from '../src/graph.js'
import { EXAMPLES } from '../src/examples.js'

describe('engine', () => {
  it('compiles, prints the inverse and adjoint, runs both ways, differentiates', async () => {
    const c = await compileSource('fn f(y: f64, x: f64[]) { for i in 0..len(x) { y += x[i] * x[i] } }', 'cpu')
    if (!c.ok) throw new Error(c.error)
    const f = c.module.f!
    expect(printed(f).inverse).toContain('y -= x[i] * x[i]')
    expect(printed(f).adjoint).toMatch(/^fn f\$adj\(/)
    expect(runFunction(f, ['1', '[1, 2]'], false).text).toBe('y = 6\nx = [1, 2]')
    expect(runFunction(f, ['6', '[1, 2]'], true).text).toBe('y = 1\nx = [1, 2]')
    const g = gradientOf(f, ['0', '[1, -2]'], 0)
    expect(g.text).toContain('∂y/∂x = [2, -4]')
    expect(g.fdOk).toBe(true)
  })

  it('reports errors as text with the caret, never throws', async () => {
    const c = await compileSource('fn f(y: f64) {\n  y += y\n}', 'interpreter')
    expect(c.ok).toBe(false)
    if (c.ok) return
    expect(c.error).toMatch(/\n2 \| {3}y \+= y\n\s+\^/)
    expect(c.line).toBe(2)
    const ok = await compileSource('fn f(y: f64, x: f64) { y += x }', 'wasm')
    if (!ok.ok) throw new Error(ok.error)
    expect(ok.backend).toBe('wasm')
    expect(runFunction(ok.module.f!, ['1', 'x'], false)).toEqual({
      ok: false,
      text: expect.stringMatching(/x: cannot read "x"/),
    })
    expect(() => readArgs(ok.module.f!, ['1', '[1]'])).not.toThrow()
  })

  it('every example compiles, runs forwards then backwards to its arguments', async () => {
    for (const e of EXAMPLES) {
      const c = await compileSource(e.source, 'cpu')
      if (!c.ok) throw new Error(`${e.title}: ${c.error}`)
      const f = c.module[e.fn]!
      const fwd = runFunction(f, e.args, false)
      expect(fwd.ok, `${e.title}: ${fwd.text}`).toBe(true)
      const back = f.inverse(...fwd.values!)
      const orig = readArgs(f, e.args)
      back.forEach((v, i) => {
        const a = ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : [v as number]
        const b = ArrayBuffer.isView(orig[i]) ? Array.from(orig[i] as Float64Array) : [orig[i] as number]
        a.forEach((x, k) => expect(x, `${e.title} argument ${i}`).toBeCloseTo(b[k]!, 8))
      })
      expect(graphOf(f)).toMatch(/^<svg/)
    }
  })

  it('schedules: Bennett and revolve pictures with their costs', () => {
    const b = scheduleOf('bennett', 16, 2)
    expect(b.svg).toMatch(/^<svg/)
    expect(b.cost).toMatch(/at most \d+ states held \(store-all: 17\)/)
    expect(scheduleOf('revolve', 16, 3).cost).toMatch(/forward/)
  })
})

describe('the memory-oriented graph', () => {
  const fn = (text: string) => parse({ text, name: 't' }).functions[0]!
  it('gates write boxes and read dots; the uncompute is the routine mirrored', () => {
    const f = fn(`fn f(r: f64, x: f64) {
      routine { s <- 0.0; s += x * x }
      r += sqrt(s)
      ~routine
    }`)
    const gates = gatesOf(f.body, false)
    expect(gates.map((g) => g.label)).toEqual(['s ←', '+= x * x', '+= sqrt(s)', '-= x * x', 's →'])
    expect(gates.map((g) => g.mirrored)).toEqual([false, false, false, true, true])
    expect(gates[1]).toMatchObject({ writes: ['s'], reads: ['x'] })
    expect(gates[4]!.dealloc).toBe('s')
    const svg = memoryGraphSvg(f)
    expect(svg.match(/class="gate/g)).toHaveLength(5)
    expect(svg.match(/class="gate mirrored"/g)).toHaveLength(2)
  })

  it('loops and calls are one gate over what they touch', () => {
    const f = fn(`fn f(y: f64, x: f64[], n: i32) {
      for i in 0..n { y += x[i] }
      SWAP(y, x[0])
      ~g(y, n)
    }`)
    const gates = gatesOf(f.body, false)
    expect(gates[0]).toMatchObject({ label: 'for i', writes: ['y'], block: true })
    expect(gates[0]!.reads.sort()).toEqual(['n', 'x'])
    expect(gates[1]).toMatchObject({ label: 'SWAP', writes: ['y', 'x'] })
    expect(gates[2]).toMatchObject({ label: '~g', writes: ['y', 'n'] })
  })
})
