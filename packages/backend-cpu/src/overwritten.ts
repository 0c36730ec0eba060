/**
 * Which scratch parameters of a compiled function need no zeroing by its caller (see
 * \`CompiledFunction.overwritten\` of \`@tenet/ir\`): the generated code reads none of their
 * elements before it writes them.
 */
import type { Expr, FunctionDef, Stmt } from '@tenet/ir'
import { usedOnlyAtIndex, walk } from '@tenet/ir/backend'

/** Whether statement \`s\` uses an element of array \`x\` (or the whole array), beyond its length \`len(x)\`. */
const usesElements = (s: Stmt, x: string): boolean => !usedOnlyAtIndex([s], x, '', true)

/** The array \`y\` where \`e\` is \`len(y)\`. */
const lenOf = (e: Expr): string | undefined =>
  e.kind === 'call' && e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var'
    ? e.args[0]!.name
    : undefined

/**
 * Whether the code generated for \`body\` (a function's body, run at its entry) reads no element
 * of array \`x\` before writing it, and below which length: \`x\` itself where no statement uses an
 * element; where the first that does is a loop over \`0..len(y)\` (step 1, either direction),
 * each index once, that uses \`x\` only at its own index \`x[i]\`, and whose first statement that
 * uses \`x\` is a first write (\`UpdateStmt.init\`, compiled as zero plus the value, see the code
 * generator's \`update\`) of \`x[i]\`, the array \`y\`: every element of \`x\` is then written
 * before anything reads it where \`x\` is no longer than \`y\` (the caller knows; \`y\` may be \`x\`).
 * Null otherwise.
 */
export function writtenFirst(body: Stmt[], x: string): string | null {
  const k = body.findIndex((s) => usesElements(s, x))
  if (k < 0) return x
  const s = body[k]!
  if (s.kind !== 'for' || s.each || s.inclusive || s.step !== null) return null
  const y = lenOf(s.stop)
  if (!(s.start.kind === 'num' && s.start.value === 0) || y === undefined) return null
  const v = s.variable
  const u = s.body.find((t) => usesElements(t, x))
  if (
    u?.kind !== 'update' ||
    u.init !== true ||
    u.target.kind !== 'index' ||
    u.target.array.name !== x ||
    u.target.index.kind !== 'var' ||
    u.target.index.name !== v
  )
    return null
  // x only at the loop's index, which nothing in the body rebinds or writes; y keeps its length
  let ok = usedOnlyAtIndex(s.body, x, v, true)
  walk(s.body, (t) => {
    if (t.kind === 'for' && t.variable === v) ok = false
    if ((t.kind === 'alloc' || t.kind === 'dealloc') && (t.name === v || t.name === x || t.name === y)) ok = false
    if (t.kind === 'update' && t.target.kind === 'var' && t.target.name === v) ok = false
    if (t.kind === 'callstmt' && t.args.some((a) => a.kind === 'var' && a.name === v)) ok = false
  })
  return ok ? y : null
}

/**
 * Per parameter of \`f\`: for a scratch array parameter that \`writtenFirst\` holds for, the index of
 * the parameter whose length the first writes cover (its own, or another array parameter's); −1
 * otherwise (see \`CompiledFunction.overwritten\`).
 */
export function overwrittenScratch(f: FunctionDef): number[] {
  return f.params.map((p) => {
    if (p.scratch !== true || p.type.kind !== 'array') return -1
    const y = writtenFirst(f.body, p.name)
    return y === null ? -1 : f.params.findIndex((q) => q.name === y && q.type.kind === 'array')
  })
}
