import { isSchedule, type Action } from './action.js'
import { ScheduleSimulator } from './check.js'

/** Options of {@link scheduleSvg}. */
export interface SvgOptions {
  /** Plot width in pixels, axes excluded (default 720). */
  width?: number
  /** Plot height in pixels, axes excluded (default 360). */
  height?: number
  /** Title (default: the schedule's name). */
  title?: string
  /** Draw at most this many actions; longer schedules are cut with a note (default 20 000). */
  maxActions?: number
  /** Shade the states held in memory at each time (default true). */
  showMemory?: boolean
}

const COLORS = {
  forward: '#1f77b4',
  uncompute: '#d62728',
  adjoint: '#2ca02c',
  store: '#9467bd',
  restore: '#ff7f0e',
  free: '#7f7f7f',
  memory: '#e8eef6',
  snapshot: '#efe6f6',
} as const

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(2)
}

/**
 * Draw a schedule as SVG (like Fig. 1 of seed 000): time (action number) runs left to right,
 * the state index bottom to top. A forward step is a blue segment rising from s_{i−1} to s_i,
 * an uncompute a red one falling back, an adjoint a thick green one; stores are purple squares,
 * restores orange circles, frees grey crosses. The states held at each moment are shaded
 * (snapshots in lilac). Returns a self-contained SVG document as a string.
 */
export function scheduleSvg(schedule: Iterable<Action>, options: SvgOptions = {}): string {
  const meta = isSchedule(schedule) ? schedule : undefined
  const W = options.width ?? 720
  const H = options.height ?? 360
  const maxActions = options.maxActions ?? 20_000
  const showMemory = options.showMemory ?? true
  const actions: Action[] = []
  let cut = false
  for (const a of schedule) {
    if (actions.length >= maxActions) {
      cut = true
      break
    }
    actions.push(a)
  }
  let T = meta?.steps ?? 1
  for (const a of actions)
    T = Math.max(T, a.kind === 'store' || a.kind === 'restore' || a.kind === 'free' ? a.state : a.step)
  const n = Math.max(actions.length, 1)
  const left = 48
  const top = 36
  const bottom = 40
  const legendH = 22
  const dx = W / n
  const dy = H / Math.max(T, 1)
  const x = (t: number): number => left + t * dx
  const y = (state: number): number => top + H - state * dy
  const mark = Math.max(1.5, Math.min(5, dx * 0.45, dy * 0.45))
  const stroke = Math.max(0.6, Math.min(2, dx * 0.6))
  const parts: string[] = []
  const title = options.title ?? meta?.name ?? 'schedule'
  const totalW = left + W + 16
  const totalH = top + H + bottom + legendH

  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${fmt(totalW)}" height="${fmt(totalH)}" viewBox="0 0 ${fmt(totalW)} ${fmt(totalH)}" font-family="sans-serif" font-size="11">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${fmt(totalW)}" height="${fmt(totalH)}" fill="white"/>`,
    `<text x="${fmt(left)}" y="20" font-size="14">${escapeXml(title)}${cut ? ` (first ${maxActions} actions)` : ''}</text>`,
  )

  if (showMemory) {
    // One rectangle per (state, interval it stayed held): cheap even for long schedules.
    const sim = new ScheduleSimulator({ initial: meta?.initial ?? [0] })
    const since = new Map<string, number>()
    const open = (key: string, t: number): void => {
      if (!since.has(key)) since.set(key, t)
    }
    const close = (key: string, t: number): void => {
      const t0 = since.get(key)
      if (t0 === undefined) return
      since.delete(key)
      const [pool, s] = key.split(':') as [string, string]
      const idx = Number(s)
      parts.push(
        `<rect x="${fmt(x(t0))}" y="${fmt(y(idx) - dy / 2)}" width="${fmt(x(t) - x(t0))}" height="${fmt(dy)}" fill="${pool === 'L' ? COLORS.memory : COLORS.snapshot}"/>`,
      )
    }
    for (const s of sim.live) open(`L:${s}`, 0)
    actions.forEach((a, t) => {
      sim.apply(a)
      for (const key of [...since.keys()]) {
        const [pool, s] = key.split(':') as [string, string]
        const held = pool === 'L' ? sim.live.has(Number(s)) : sim.stored.has(Number(s))
        if (!held) close(key, t + 1)
      }
      for (const s of sim.live) open(`L:${s}`, t)
      for (const s of sim.stored) open(`S:${s}`, t)
    })
    for (const key of [...since.keys()]) close(key, n)
  }

  // Axes.
  parts.push(
    `<line x1="${fmt(left)}" y1="${fmt(top + H)}" x2="${fmt(left + W)}" y2="${fmt(top + H)}" stroke="black"/>`,
    `<line x1="${fmt(left)}" y1="${fmt(top)}" x2="${fmt(left)}" y2="${fmt(top + H)}" stroke="black"/>`,
    `<text x="${fmt(left + W / 2)}" y="${fmt(top + H + 28)}" text-anchor="middle">time (action)</text>`,
    `<text x="14" y="${fmt(top + H / 2)}" text-anchor="middle" transform="rotate(-90 14 ${fmt(top + H / 2)})">state index</text>`,
  )
  const yTicks = Math.min(T, 8)
  for (let j = 0; j <= yTicks; j++) {
    const s = Math.round((j * T) / Math.max(yTicks, 1))
    parts.push(`<text x="${fmt(left - 4)}" y="${fmt(y(s) + 4)}" text-anchor="end">${s}</text>`)
  }
  const xTicks = Math.min(n, 6)
  for (let j = 0; j <= xTicks; j++) {
    const t = Math.round((j * n) / Math.max(xTicks, 1))
    parts.push(`<text x="${fmt(x(t))}" y="${fmt(top + H + 14)}" text-anchor="middle">${t}</text>`)
  }

  // Actions.
  actions.forEach((a, t) => {
    switch (a.kind) {
      case 'forward':
        parts.push(
          `<line x1="${fmt(x(t))}" y1="${fmt(y(a.step - 1))}" x2="${fmt(x(t + 1))}" y2="${fmt(y(a.step))}" stroke="${COLORS.forward}" stroke-width="${fmt(stroke)}"/>`,
        )
        break
      case 'uncompute':
        parts.push(
          `<line x1="${fmt(x(t))}" y1="${fmt(y(a.step))}" x2="${fmt(x(t + 1))}" y2="${fmt(y(a.step - 1))}" stroke="${COLORS.uncompute}" stroke-width="${fmt(stroke)}"/>`,
        )
        break
      case 'adjoint':
        parts.push(
          `<line x1="${fmt(x(t))}" y1="${fmt(y(a.step))}" x2="${fmt(x(t + 1))}" y2="${fmt(y(a.step - 1))}" stroke="${COLORS.adjoint}" stroke-width="${fmt(stroke * 2)}"/>`,
        )
        break
      case 'store':
        parts.push(
          `<rect x="${fmt(x(t + 0.5) - mark)}" y="${fmt(y(a.state) - mark)}" width="${fmt(2 * mark)}" height="${fmt(2 * mark)}" fill="${COLORS.store}"/>`,
        )
        break
      case 'restore':
        parts.push(
          `<circle cx="${fmt(x(t + 0.5))}" cy="${fmt(y(a.state))}" r="${fmt(mark)}" fill="${COLORS.restore}"/>`,
        )
        break
      case 'free': {
        const cx = x(t + 0.5)
        const cy = y(a.state)
        const r = mark * 0.8
        parts.push(
          `<path d="M${fmt(cx - r)} ${fmt(cy - r)}L${fmt(cx + r)} ${fmt(cy + r)}M${fmt(cx - r)} ${fmt(cy + r)}L${fmt(cx + r)} ${fmt(cy - r)}" stroke="${COLORS.free}" stroke-width="1"/>`,
        )
        break
      }
    }
  })

  // Legend.
  const entries: [string, string][] = [
    ['forward', COLORS.forward],
    ['uncompute', COLORS.uncompute],
    ['adjoint', COLORS.adjoint],
    ['store', COLORS.store],
    ['restore', COLORS.restore],
    ['free', COLORS.free],
  ]
  const ly = top + H + bottom + 8
  entries.forEach(([label, color], j) => {
    const lx = left + j * 96
    parts.push(
      `<rect x="${fmt(lx)}" y="${fmt(ly - 8)}" width="10" height="10" fill="${color}"/>`,
      `<text x="${fmt(lx + 14)}" y="${fmt(ly + 1)}">${label}</text>`,
    )
  })
  parts.push('</svg>')
  return parts.join('\n')
}
