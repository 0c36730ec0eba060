/**
 * The memory-oriented computational graph of a Tenet function (the NiLang paper's picture):
 * every variable is a horizontal line — parameters across the whole width, an ancilla from its
 * allocation to its deallocation — and every instruction a gate acting on the lines: a box on
 * each variable it writes, a dot on each it reads, joined by a vertical wire. A compound
 * statement (a loop, a branch, a call) is one wide gate over everything it touches. The
 * uncompute of `routine { R } … ~routine` appears as R's gates mirrored, so the picture shows
 * the compute–copy–uncompute symmetry.
 */
import { printExpr, type Arg, type Expr, type FunctionDef, type Stmt } from '@tenet/ir'
import { readNames, rootName } from '@tenet/ir/backend'

/** One gate: what it writes and reads, its label, and whether it is part of an uncompute. */
export interface Gate {
  label: string
  writes: string[]
  reads: string[]
  /** An ancilla allocated (line starts) or deallocated (line ends) here. */
  alloc?: string
  dealloc?: string
  mirrored: boolean
  /** A compound statement (drawn as a wide box). */
  block: boolean
}

const uniq = (xs: Iterable<string>) => [...new Set(xs)]

/** Roots written and read anywhere in a block. */
function touched(body: Stmt[]): { writes: Set<string>; reads: Set<string> } {
  const writes = new Set<string>(),
    reads = new Set<string>()
  for (const g of gatesOf(body, false)) {
    g.writes.forEach((w) => writes.add(w))
    g.reads.forEach((r) => reads.add(r))
    if (g.alloc) writes.add(g.alloc)
  }
  return { writes, reads }
}

const INVERSE_OP: Record<string, string> = { '+=': '-=', '-=': '+=', '*=': '/=', '/=': '*=', '^=': '^=' }

function callGate(s: Extract<Stmt, { kind: 'callstmt' }>, mirrored: boolean): Gate {
  const writes: string[] = [],
    reads: string[] = []
  s.args.forEach((a: Arg) => {
    const r = rootName(a)
    if (r && (a.kind === 'var' || a.kind === 'index' || a.kind === 'field' || a.kind === 'neg')) {
      writes.push(r)
      if (a.kind === 'index') readNames(a.index).forEach((n) => reads.push(n))
    } else readNames(a).forEach((n) => reads.push(n))
  })
  const inverse = s.inverse !== mirrored
  return {
    label: `${inverse ? '~' : ''}${s.callee}`,
    writes: uniq(writes),
    reads: uniq(reads).filter((r) => !writes.includes(r)),
    mirrored,
    block: false,
  }
}

/** The gates of a statement list, in execution order; `mirrored` marks (and inverts) an uncompute. */
export function gatesOf(body: Stmt[], mirrored: boolean): Gate[] {
  const out: Gate[] = []
  let routine: Stmt[] | undefined
  for (const s of body) {
    switch (s.kind) {
      case 'update': {
        const t = rootName(s.target)!
        const reads = readNames(s.value)
        if (s.target.kind === 'index') readNames(s.target.index).forEach((n) => reads.add(n))
        const op = mirrored ? INVERSE_OP[s.op]! : s.op
        const text = printExpr(s.value as Expr)
        out.push({
          label: `${op} ${text.length > 11 ? `${text.slice(0, 10)}…` : text}`,
          writes: [t],
          reads: uniq(reads).filter((r) => r !== t),
          mirrored,
          block: false,
        })
        break
      }
      case 'callstmt':
        out.push(callGate(s, mirrored))
        break
      case 'alloc':
        out.push(
          mirrored
            ? { label: `${s.name} →`, writes: [s.name], reads: [], dealloc: s.name, mirrored, block: false }
            : {
                label: `${s.name} ←`,
                writes: [s.name],
                reads: s.value.kind === 'emptystack' ? [] : uniq(readNames(s.value as Expr)),
                alloc: s.name,
                mirrored,
                block: false,
              },
        )
        break
      case 'dealloc':
        out.push(
          mirrored
            ? { label: `${s.name} ←`, writes: [s.name], reads: [], alloc: s.name, mirrored, block: false }
            : {
                label: `${s.name} →`,
                writes: [s.name],
                reads: s.value.kind === 'emptystack' ? [] : uniq(readNames(s.value as Expr)),
                dealloc: s.name,
                mirrored,
                block: false,
              },
        )
        break
      case 'push':
      case 'pop': {
        const v = rootName(s.value)!
        out.push({
          label: (s.kind === 'push') !== mirrored ? 'push' : 'pop',
          writes: uniq([s.stack.name, v]),
          reads: [],
          mirrored,
          block: false,
        })
        break
      }
      case 'for':
      case 'while':
      case 'if':
      case 'unchecked':
      case 'invblock': {
        const inner = s.kind === 'if' ? [...s.then, ...s.else] : s.body
        const t = touched(inner)
        const cond =
          s.kind === 'for'
            ? [...readNames(s.start), ...readNames(s.stop), ...(s.step ? readNames(s.step) : [])]
            : s.kind === 'while' || s.kind === 'if'
              ? [...readNames(s.pre), ...(s.post ? readNames(s.post) : [])]
              : []
        const local = s.kind === 'for' ? [s.variable] : []
        const writes = [...t.writes].filter((w) => !local.includes(w))
        const label =
          s.kind === 'for'
            ? `for ${s.variable}`
            : s.kind === 'invblock'
              ? '~{ }'
              : s.kind === 'unchecked'
                ? '@unchecked'
                : s.kind
        out.push({
          label: mirrored && s.kind !== 'unchecked' ? `~${label}` : label,
          writes,
          reads: uniq([...t.reads, ...cond]).filter((r) => !writes.includes(r) && !local.includes(r)),
          mirrored,
          block: true,
        })
        break
      }
      case 'routine':
        routine = s.body
        out.push(...gatesOf(s.body, mirrored))
        break
      case 'unroutine':
        if (routine) out.push(...gatesOf(routine, !mirrored).reverse())
        break
      case 'safe':
        out.push({ label: '@safe', writes: [], reads: uniq(readNames(s.expr)), mirrored, block: false })
        break
    }
  }
  return out
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** The graph of `f` (its surface form, routines kept) as a self-contained SVG document. */
export function memoryGraphSvg(f: FunctionDef): string {
  const gates = gatesOf(f.body, false)
  const vars: string[] = f.params.map((p) => p.name)
  for (const g of gates)
    for (const v of [...g.writes, ...g.reads, g.alloc ?? '']) if (v && !vars.includes(v)) vars.push(v)
  const dx = 104,
    dy = 34,
    left = 70,
    top = 26
  const W = left + Math.max(1, gates.length) * dx + 20,
    H = top + vars.length * dy + 10
  const y = (v: string) => top + vars.indexOf(v) * dy
  const x = (k: number) => left + k * dx + dx / 2
  const span = new Map<string, [number, number]>()
  vars.forEach((v) => span.set(v, f.params.some((p) => p.name === v) ? [left - 10, W - 10] : [W - 10, left - 10]))
  gates.forEach((g, k) => {
    if (g.alloc) {
      const s = span.get(g.alloc)!
      s[0] = Math.min(s[0], x(k))
    }
    if (g.dealloc) {
      const s = span.get(g.dealloc)!
      s[1] = Math.max(s[1], x(k))
    }
  })
  for (const [v, s] of span) {
    // an ancilla never deallocated in view (a parameter is always drawn across)
    if (s[0] > s[1]) span.set(v, [left - 10, W - 10])
    else if (s[1] === left - 10) s[1] = W - 10
  }
  const parts: string[] = []
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="ui-monospace, monospace" font-size="11" role="img" aria-label="memory-oriented computational graph of ${esc(f.name)}">`,
  )
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`)
  for (const v of vars) {
    const [a, b] = span.get(v)!
    parts.push(`<text x="${left - 14}" y="${y(v) + 4}" text-anchor="end" fill="#333">${esc(v)}</text>`)
    parts.push(`<line x1="${a}" y1="${y(v)}" x2="${b}" y2="${y(v)}" stroke="#888" stroke-width="1.5"/>`)
  }
  gates.forEach((g, k) => {
    const on = [...g.writes, ...g.reads].filter((v) => vars.includes(v))
    if (!on.length) return
    const ys = on.map(y)
    const color = g.mirrored ? '#b45309' : g.block ? '#4338ca' : '#0f766e'
    const cx = x(k)
    parts.push(`<g class="gate${g.mirrored ? ' mirrored' : ''}" data-label="${esc(g.label)}">`)
    if (g.block) {
      const y0 = Math.min(...ys) - 12,
        y1 = Math.max(...ys) + 12
      parts.push(
        `<rect x="${cx - dx / 2 + 6}" y="${y0}" width="${dx - 12}" height="${y1 - y0}" rx="6" fill="${color}" fill-opacity="0.08" stroke="${color}"/>`,
      )
      for (const v of g.reads)
        if (vars.includes(v)) parts.push(`<circle cx="${cx}" cy="${y(v)}" r="3.5" fill="${color}"/>`)
      for (const v of g.writes)
        parts.push(`<rect x="${cx - 5}" y="${y(v) - 5}" width="10" height="10" fill="${color}"/>`)
      parts.push(`<text x="${cx}" y="${y0 - 3}" text-anchor="middle" fill="${color}">${esc(g.label)}</text>`)
    } else {
      parts.push(
        `<line x1="${cx}" y1="${Math.min(...ys)}" x2="${cx}" y2="${Math.max(...ys)}" stroke="${color}" stroke-width="1.5"/>`,
      )
      for (const v of g.reads)
        if (vars.includes(v)) parts.push(`<circle cx="${cx}" cy="${y(v)}" r="3.5" fill="${color}"/>`)
      for (const v of g.writes) {
        parts.push(
          `<rect x="${cx - dx / 2 + 8}" y="${y(v) - 9}" width="${dx - 16}" height="18" rx="3" fill="#fff" stroke="${color}"/>`,
        )
        parts.push(`<text x="${cx}" y="${y(v) + 4}" text-anchor="middle" fill="${color}">${esc(g.label)}</text>`)
      }
    }
    parts.push('</g>')
  })
  parts.push('</svg>')
  return parts.join('\n')
}
