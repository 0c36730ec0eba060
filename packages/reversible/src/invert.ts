/**
 * Inversion (`~`): maps statements to the statements that undo them (seed 001, Table
 * "Basic statements"). Works on surface and core IR alike; expressions are shared, not copied,
 * because they are pure.
 */
import type { FunctionDef, Stmt, Type, UpdateOp } from '@tenet/ir'

const INVERSE_OP: Record<UpdateOp, UpdateOp> = { '+=': '-=', '-=': '+=', '^=': '^=', '*=': '/=', '/=': '*=' }

/** The inverse of one statement. */
export function invertStmt(s: Stmt): Stmt {
  switch (s.kind) {
    case 'update': {
      const { distinct, ...rest } = s
      return { ...rest, op: INVERSE_OP[s.op], ...(distinct ? { distinct } : {}) }
    }
    case 'callstmt':
      return { ...s, inverse: !s.inverse }
    case 'alloc':
      return {
        kind: 'dealloc',
        name: s.name,
        value: s.value,
        ...(s.type ? { type: s.type } : {}),
        ...(s.loc ? { loc: s.loc } : {}),
        ...(s.declared ? { declared: s.declared } : {}),
      } as Stmt
    case 'dealloc': {
      const d = s as typeof s & { declared?: Type }
      const declared = d.declared ?? s.type
      return {
        kind: 'alloc',
        name: s.name,
        value: s.value,
        ...(s.type ? { type: s.type } : {}),
        ...(declared ? { declared } : {}),
        ...(s.loc ? { loc: s.loc } : {}),
      } as Stmt
    }
    case 'if':
      return {
        ...s,
        pre: s.post ?? s.pre,
        post: s.post ? s.pre : null,
        then: invertBody(s.then),
        else: invertBody(s.else),
      }
    case 'while':
      return { ...s, pre: s.post, post: s.pre, body: invertBody(s.body) }
    case 'for':
      return { ...s, reverse: !s.reverse, body: invertBody(s.body) }
    case 'push':
      return { ...s, kind: 'pop' }
    case 'pop':
      return { ...s, kind: 'push' }
    case 'safe':
      return s
    case 'unchecked':
      return { ...s, body: invertBody(s.body) }
    case 'assert':
      // a check changes nothing, so it undoes itself; but it guards the statement beside it, whose
      // inverse needs another check (see `invertBody`)
      return s
    case 'routine':
    case 'invblock':
    case 'unroutine':
      throw new Error(`invert: \`${s.kind}\` must be expanded by preprocess() first`)
  }
}

/**
 * The inverse of a block: the inverted statements in reverse order. Run-time checks (`assert`)
 * are dropped: each guards the statement next to it (`t -> v` checks that t holds v; its inverse
 * `t <- v` needs none, while an allocation's inverse needs one), so they are not moved but placed
 * again on the inverse by the `insert-checks` pass, which every engine runs last.
 */
export function invertBody(body: Stmt[]): Stmt[] {
  const out: Stmt[] = []
  for (let i = body.length - 1; i >= 0; i--) if (body[i]!.kind !== 'assert') out.push(invertStmt(body[i]!))
  return out
}

/** The inverse of a function: same name and parameters, inverted body. */
export function invert(f: FunctionDef): FunctionDef {
  return { ...f, body: invertBody(f.body) }
}

/**
 * The inverse of a surface block, keeping the sugar: a `routine { R } ... ~routine` pair stays
 * a pair (the inverse of compute–copy–uncompute is compute–uncopy–uncompute), and `~{ B }`
 * becomes B. Used to print readable inverses.
 */
export function invertSurfaceBody(body: Stmt[]): Stmt[] {
  const partner = new Map<number, number>()
  const open: number[] = []
  body.forEach((s, i) => {
    if (s.kind === 'routine') open.push(i)
    else if (s.kind === 'unroutine' && open.length) partner.set(i, open.pop()!)
  })
  const out: Stmt[] = []
  for (let i = body.length - 1; i >= 0; i--) {
    const s = body[i]!
    if (s.kind === 'unroutine') {
      const r = body[partner.get(i)!] as Extract<Stmt, { kind: 'routine' }>
      out.push(r)
    } else if (s.kind === 'routine') {
      out.push({ kind: 'unroutine', ...(s.loc ? { loc: s.loc } : {}) })
    } else if (s.kind === 'invblock') {
      out.push(...s.body)
    } else if (s.kind === 'if') {
      out.push({
        ...invertStmt({ ...s, then: [], else: [] }),
        then: invertSurfaceBody(s.then),
        else: invertSurfaceBody(s.else),
      } as Stmt)
    } else if (s.kind === 'while' || s.kind === 'for' || s.kind === 'unchecked') {
      out.push({ ...invertStmt({ ...s, body: [] }), body: invertSurfaceBody(s.body) } as Stmt)
    } else out.push(invertStmt(s))
  }
  return out
}
