/**
 * The reverse-mode transformation on UNF, D⃖_ρ (seed 004, §4.3 and Fig. 8): Source UNF → Target UNF.
 *
 * Every primitive P becomes F(P, JᵀP) = ⟨proj; P, proj ∘ (proj; JᵀP)⟩: the primal primitive on
 * the primal part of the context, and the continuation pre-composed with P's transpose Jacobian.
 * Sequential composition is preserved (D⃖(e₁; e₂) = D⃖(e₁); D⃖(e₂)), so a Target UNF program is the
 * list of these pairs; what each JᵀP computes is given by UNF⁻¹ (Fig. 10, `unf-inverse.ts`).
 */
import { printPrim, type Prim, type UnfProgram } from './unf.js'

/** One step of Target UNF: F(P, JᵀP). */
export interface TargetStep {
  primal: Prim
  /** the transpose Jacobian JᵀP, as a primitive of Target UNF indexed like P */
  transpose: { p: 'J^T'; of: Prim }
}

/** A Target UNF program: the image of a Source UNF program under D⃖_ρ. */
export interface TargetUnf {
  source: UnfProgram
  steps: TargetStep[]
}

/** D⃖_ρ (Fig. 8): pairs every primitive with its transpose Jacobian. */
export function reverseUnf(u: UnfProgram): TargetUnf {
  return { source: u, steps: u.prims.map((primal) => ({ primal, transpose: { p: 'J^T', of: primal } })) }
}

/** Prints Target UNF as `F(P, JᵀP)` steps joined by `;` (F(A,B) = ⟨proj; A, proj ∘ (proj; B)⟩). */
export function printTargetUnf(t: TargetUnf): string {
  return t.steps
    .map((s) => {
      const p = printPrim(s.primal)
      return `F(${p}, Jᵀ${p})`
    })
    .join(';\n')
}
