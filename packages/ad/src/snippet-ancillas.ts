/**
 * The float type of a bijection rule's literal-initialised ancillas. A rule (`adjoint` or
 * `tangent` snippet) is written once for every float type, so an ancilla it allocates from a
 * float literal (`s <- 0.0`) must take the float type of the derivatives it works with at the
 * call: f32 where the gradients or tangents are f32 (else `SWAP(s, g_a)` would meet an f64 ancilla
 * and an f32 gradient). Ancillas with a declared type, or initialised otherwise, keep theirs.
 */
import type { Expr, Stmt, Type } from '@tenet/ir'

/** Whether e is a float literal (`0.0`, `-1.5`). */
function isFloatLiteral(e: Expr): boolean {
  if (e.kind === 'num') return e.isFloat
  return e.kind === 'unary' && e.op === '-' && isFloatLiteral(e.arg)
}

/**
 * `body` with every undeclared ancilla allocated from a float literal declared `type`
 * (blocks included). `body` itself is not changed.
 */
export function typeLiteralAncillas(body: Stmt[], type: Type): Stmt[] {
  return body.map((s): Stmt => {
    switch (s.kind) {
      case 'alloc':
        return s.declared === undefined && s.value.kind !== 'emptystack' && isFloatLiteral(s.value)
          ? { ...s, declared: type }
          : s
      case 'if':
        return { ...s, then: typeLiteralAncillas(s.then, type), else: typeLiteralAncillas(s.else, type) }
      case 'while':
      case 'for':
      case 'unchecked':
      case 'routine':
      case 'invblock':
        return { ...s, body: typeLiteralAncillas(s.body, type) } as Stmt
      default:
        return s
    }
  })
}
