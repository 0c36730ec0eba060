/**
 * Types of the source and target languages (seed 004, Fig. 2 and Fig. 3): reals `R`, booleans
 * `B` (results of comparisons, §7.2), tuples and arrays. Arrays carry no static size: a size is
 * a run-time property, as the paper's `A[R]^n` indices are external to the language.
 * Function types exist only in the target language (the continuations of the reverse transform).
 */
export type Type =
  | { kind: 'R' }
  | { kind: 'B' }
  | { kind: 'tuple'; items: Type[] }
  | { kind: 'array'; elem: Type }
  | { kind: 'fun'; params: Type[]; result: Type }

/** The real type. */
export const R: Type = { kind: 'R' }
/** The boolean type (conditions only; it carries no gradient). */
export const B: Type = { kind: 'B' }
/** A tuple type `A₁ × … × Aₙ`. */
export const tupleType = (...items: Type[]): Type => ({ kind: 'tuple', items })
/** An array type `A[elem]`. */
export const arrayType = (elem: Type = R): Type => ({ kind: 'array', elem })
/** A function type (target language only). */
export const funType = (params: Type[], result: Type): Type => ({ kind: 'fun', params, result })
/** The empty tuple, the cotangent type of a boolean. */
export const UNIT: Type = { kind: 'tuple', items: [] }

/** Structural equality of types. */
export function sameType(a: Type, b: Type): boolean {
  if (a.kind !== b.kind) return false
  switch (a.kind) {
    case 'R':
    case 'B':
      return true
    case 'tuple': {
      const bi = (b as { items: Type[] }).items
      return a.items.length === bi.length && a.items.every((t, i) => sameType(t, bi[i]!))
    }
    case 'array':
      return sameType(a.elem, (b as { elem: Type }).elem)
    case 'fun': {
      const f = b as { params: Type[]; result: Type }
      return (
        a.params.length === f.params.length &&
        a.params.every((t, i) => sameType(t, f.params[i]!)) &&
        sameType(a.result, f.result)
      )
    }
  }
}

/** Prints a type: `R`, `B`, `(R × R[])`, `R[][]`, `(R, R) → R`. */
export function printType(t: Type): string {
  switch (t.kind) {
    case 'R':
      return 'R'
    case 'B':
      return 'B'
    case 'tuple':
      return `(${t.items.map(printType).join(' × ')})`
    case 'array':
      return `${t.elem.kind === 'tuple' || t.elem.kind === 'fun' ? `(${printType(t.elem)})` : printType(t.elem)}[]`
    case 'fun':
      return `(${t.params.map(printType).join(', ')}) → ${printType(t.result)}`
  }
}

/**
 * The cotangent type of a ground type: the same type, with booleans replaced by the empty tuple
 * (a boolean is a non-smooth value external to differentiation, §7.3).
 */
export function cotangentType(t: Type): Type {
  switch (t.kind) {
    case 'R':
      return R
    case 'B':
      return UNIT
    case 'tuple':
      return tupleType(...t.items.map(cotangentType))
    case 'array':
      return arrayType(cotangentType(t.elem))
    case 'fun':
      throw new Error('a function type has no cotangent')
  }
}

/** Whether a type is ground (no function types): reals, booleans, and tuples and arrays of them. */
export function isGround(t: Type): boolean {
  switch (t.kind) {
    case 'R':
    case 'B':
      return true
    case 'tuple':
      return t.items.every(isGround)
    case 'array':
      return isGround(t.elem)
    case 'fun':
      return false
  }
}
