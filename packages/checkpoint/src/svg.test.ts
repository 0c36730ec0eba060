import { describe, expect, it } from 'vitest'
import { bennettGradientSchedule, bennettSchedule } from './bennett.js'
import { binomialSchedule } from './binomial.js'
import { costOf } from './cost.js'
import { scheduleSvg } from './svg.js'

const count = (svg: string, re: RegExp): number => svg.match(re)?.length ?? 0

describe('scheduleSvg', () => {
  it('draws one segment per forward, uncompute and adjoint (Bennett, as in seed 000 Fig. 1b)', () => {
    const schedule = bennettGradientSchedule({ steps: 16, k: 2 })
    const svg = scheduleSvg(schedule)
    const cost = costOf(schedule)
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true)
    expect(count(svg, /stroke="#1f77b4"/g)).toBe(cost.forward)
    expect(count(svg, /stroke="#d62728"/g)).toBe(cost.uncompute)
    expect(count(svg, /stroke="#2ca02c"/g)).toBe(cost.adjoint)
    expect(svg).toContain('<title>bennett-gradient(k=2)</title>')
    for (const label of ['forward', 'uncompute', 'adjoint', 'store', 'restore', 'free'])
      expect(svg).toContain(`>${label}</text>`)
  })

  it('marks stores, restores and frees of a checkpointing schedule (seed 000 Fig. 1a)', () => {
    const schedule = binomialSchedule({ steps: 20, snapshots: 3 })
    const svg = scheduleSvg(schedule, { width: 400, height: 200, showMemory: false })
    const cost = costOf(schedule)
    expect(count(svg, /fill="#9467bd"\/>/g)).toBe(cost.stores + 1) // + the legend swatch
    expect(count(svg, /<circle /g)).toBe(cost.restores)
    expect(svg).toContain('width="464"')
  })

  it('escapes the title and cuts long schedules', () => {
    const svg = scheduleSvg(bennettSchedule({ steps: 64, k: 2 }), { title: 'a < b & "c"', maxActions: 100 })
    expect(svg).toContain('a &#60; b &#38; &#34;c&#34;')
    expect(svg).toContain('(first 100 actions)')
    expect(count(svg, /<line x1/g)).toBe(100 + 2) // actions + the two axes
  })
})
