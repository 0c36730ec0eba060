/**
 * The plan of the code generators' \`hoist-pools\` (the cpu backend's \`hoistAllocs\`, the wasm
 * backend's): the array allocations a counting loop can take out of its body, so that their
 * length is checked and their memory taken once before the loop, where it runs, and each
 * iteration only zeroes the array as the allocation would (or not at all: a table never zeroed).
 * They are the body's leading run of allocations `a <- zeros(n)` — nothing before them in an
 * iteration, so a length that fails fails at the same point, with the same message and nothing
 * else done — whose length has one value in every iteration and cannot fail to evaluate
 * (\`invariantLength\`). The run stops at the first allocation that does not qualify (one after
 * it would move before its check).
 */
import type { AllocStmt, Expr, ForStmt } from './ast.js'
import { writtenNames } from './passes/hoist-invariants.js'

/**
 * The leading allocations of \`loop\`'s body that can be hoisted (see the module comment);
 * \`effectful\`: the functions with a host effect (a call of one may write anything).
 */
export function hoistableAllocs(loop: ForStmt, effectful: ReadonlySet<string> = new Set()): AllocStmt[] {
  const out: AllocStmt[] = []
  let written: Set<string> | undefined
  for (const s of loop.body) {
    if (s.kind !== 'alloc' || s.value.kind !== 'call' || s.value.callee !== 'zeros') break
    if (typeof s.type !== 'object' || s.type.kind !== 'array') break
    written ??= writtenNames(loop.body, effectful)
    const len = s.value.args[0]
    if (!written || !len || !invariantLength(len, written, loop.variable)) break
    out.push(s)
  }
  return out
}

/**
 * Whether an allocation's length \`e\` has the same value in every iteration of a loop whose body
 * writes \`written\` (its variable \`variable\`), and evaluating it cannot fail: literals, scalars
 * the loop does not write, \`len\` of an array it does not allocate (a fixed length), and \`+\`,
 * \`-\`, \`*\` and unary minus of those (no element read, division or other call).
 */
export function invariantLength(e: Expr, written: ReadonlySet<string>, variable: string): boolean {
  switch (e.kind) {
    case 'num':
      return true
    case 'var':
      return typeof e.type !== 'object' && e.name !== variable && !written.has(e.name)
    case 'call': {
      const a = e.args[0]
      return (
        e.callee === 'len' &&
        e.args.length === 1 &&
        a?.kind === 'var' &&
        typeof a.type === 'object' &&
        a.type.kind === 'array' &&
        !written.has(a.name)
      )
    }
    case 'binary':
      return (
        (e.op === '+' || e.op === '-' || e.op === '*') &&
        invariantLength(e.left, written, variable) &&
        invariantLength(e.right, written, variable)
      )
    case 'unary':
      return e.op === '-' && invariantLength(e.arg, written, variable)
    default:
      return false
  }
}
