/**
 * The translation UNF from the source language to Source UNF (seed 004, §4.1 and Fig. 9).
 *
 * A Source UNF program is a sequence of unary primitives over a context, a list of typed slots:
 * every primitive reads the last slots and returns its whole context with its result appended
 * (`var`, `const`, `op`, `π`, and the array constructs), replaces the last slots by their tuple
 * (`pair`), or hides slots (`proj`). Sequencing mimics left-to-right call-by-value evaluation;
 * the weakening of the paper (passing earlier results through a later term) is implicit, since
 * a term reads its variables by name from anywhere in the context.
 *
 * Slots carry names so that UNF⁻¹ can name its variables: source variables keep their (made
 * unique) names, intermediate results get fresh `t#k` names.
 */
import { inferType } from './check.js'
import { UnfError } from './errors.js'
import type { OpTable } from './ops.js'
import { fresh, printTerm, renameFree, type Term } from './term.js'
import { printType, type Type } from './types.js'

/** A context entry of Source UNF. */
export interface Slot {
  name: string
  type: Type
}

/** An array construct or conditional of the source, kept whole as one primitive (Fig. 6's map2, reduce). */
export type ConstructTerm = Extract<
  Term,
  { k: 'map' | 'reduce' | 'fold' | 'scanl' | 'scanr' | 'shift1L' | 'shift1R' | 'prefix' | 'if' }
>

/** A Source UNF primitive. `ctx` is its input context; `inputs` how many of its last slots it reads. */
export type Prim =
  | { p: 'var'; ctx: Slot[]; inputs: 0; index: number; out: Slot }
  | { p: 'const'; ctx: Slot[]; inputs: 0; value: number | boolean; out: Slot }
  | { p: 'op'; ctx: Slot[]; inputs: number; op: string; out: Slot }
  | { p: 'pi'; ctx: Slot[]; inputs: 1; index: number; out: Slot }
  | { p: 'construct'; ctx: Slot[]; inputs: number; term: ConstructTerm; out: Slot }
  | { p: 'pair'; ctx: Slot[]; inputs: number; out: Slot }
  | { p: 'proj'; ctx: Slot[]; keep: number; drop: number }

/** A Source UNF program: `input ⊢ prims : output` (output = input, result). */
export interface UnfProgram {
  input: Slot[]
  prims: Prim[]
  output: Slot[]
}

/** The context after a primitive. */
export function after(pr: Prim): Slot[] {
  switch (pr.p) {
    case 'pair':
      return [...pr.ctx.slice(0, pr.ctx.length - pr.inputs), pr.out]
    case 'proj':
      return [...pr.ctx.slice(0, pr.keep), ...pr.ctx.slice(pr.keep + pr.drop)]
    default:
      return [...pr.ctx, pr.out]
  }
}

/**
 * UNF (Fig. 9): translates a source term, typed in `input`, into Source UNF. Binders in `t` must
 * be unique and distinct from the input names (`uniquify` ensures it).
 */
export function toUnf(t: Term, input: Slot[], ops: OpTable): UnfProgram {
  const prims: Prim[] = []
  let ctx: Slot[] = [...input]
  const emit = (pr: Prim) => {
    prims.push(pr)
    ctx = after(pr)
  }
  // source name → slot name (a let's variable is the slot holding its value)
  const scope = new Map(input.map((s) => [s.name, s.name]))
  const typeOfSlot = (name: string) => ctx.find((s) => s.name === name)!.type
  const env = () => new Map([...scope].map(([src, sl]) => [src, typeOfSlot(sl)]))
  const slotRename = () => new Map([...scope].filter(([a, b]) => a !== b))
  const slot = (type: Type, base = 't'): Slot => ({ name: fresh(base), type })
  const hide = (keep: number, drop: number) => {
    if (drop > 0) emit({ p: 'proj', ctx, keep, drop })
  }

  // translates `x` in the current context; on return the context has grown by exactly one slot
  const go = (x: Term): void => {
    const n = ctx.length
    switch (x.k) {
      case 'const':
        emit({ p: 'const', ctx, inputs: 0, value: x.value, out: slot({ kind: 'R' }, 'c') })
        return
      case 'bool':
        emit({ p: 'const', ctx, inputs: 0, value: x.value, out: slot({ kind: 'B' }, 'c') })
        return
      case 'var': {
        const index = ctx.map((s) => s.name).lastIndexOf(scope.get(x.name) ?? x.name)
        if (index < 0) throw new UnfError('unf/unbound', `unknown variable \`${x.name}\``)
        emit({ p: 'var', ctx, inputs: 0, index, out: slot(ctx[index]!.type) })
        return
      }
      case 'let': {
        go(x.value)
        // the value's slot takes the let's name (slots are shared by every context that holds them)
        const bound = ctx[ctx.length - 1]!
        if (!ctx.slice(0, -1).some((s) => s.name === x.name)) bound.name = x.name
        scope.set(x.name, bound.name)
        go(x.body)
        scope.delete(x.name)
        hide(n, 1) // UNF(e₁); UNF(e₂); proj_{Γ;A;B}
        return
      }
      case 'tuple': {
        x.items.forEach(go)
        emit({ p: 'pair', ctx, inputs: x.items.length, out: slot(inferType(x, env(), ops)) })
        return
      }
      case 'proj': {
        go(x.of)
        const ty = ctx[ctx.length - 1]!.type
        if (ty.kind !== 'tuple') throw new UnfError('unf/type', `π${x.index + 1} of ${printType(ty)}`)
        emit({ p: 'pi', ctx, inputs: 1, index: x.index, out: slot(ty.items[x.index]!) })
        hide(n, 1) // UNF(e); πᵢ; proj_{Γ;A₁×A₂;Aᵢ}
        return
      }
      case 'op': {
        const type = inferType(x, env(), ops)
        x.args.forEach(go)
        emit({ p: 'op', ctx, inputs: x.args.length, op: x.op, out: slot(type) })
        hide(n, x.args.length) // UNF(e₁); UNF(e₂); op; proj_{Γ;R,R;R}
        return
      }
      case 'map':
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr':
      case 'shift1L':
      case 'shift1R':
      case 'prefix':
      case 'if': {
        const type = inferType(x, env(), ops)
        const args = constructArgs(x)
        args.forEach(go)
        emit({
          p: 'construct',
          ctx,
          inputs: args.length,
          term: renameFree(x, slotRename()) as ConstructTerm,
          out: slot(type),
        })
        hide(n, args.length)
        return
      }
      default:
        throw new UnfError('unf/unsupported', `\`${x.k}\` is not a source construct`)
    }
  }
  go(t)
  return { input, prims, output: ctx }
}

/**
 * The arguments a construct takes from the context, in evaluation order: the arrays of a map;
 * the unit and the array of a fold or scan (a reduce's unit is a constant of the operator, as in
 * Fig. 9, so only its array); the array of a shift; the array and the length-giving array of a
 * prefix; the condition of a conditional.
 */
export function constructArgs(x: ConstructTerm): Term[] {
  switch (x.k) {
    case 'map':
      return x.arrays
    case 'reduce':
      return [x.array]
    case 'fold':
    case 'scanl':
    case 'scanr':
      return [x.init, x.array]
    case 'shift1L':
    case 'shift1R':
      return [x.array]
    case 'prefix':
      return [x.array, x.len]
    case 'if':
      return [x.cond]
  }
}

/** Prints a context as the paper does: the list of its types. */
const printCtx = (s: Slot[]) => s.map((x) => printType(x.type)).join(',') || '[]'

/** Prints one Source UNF primitive with its context index, e.g. `*_{R,R,R,R,R;2}`. */
export function printPrim(pr: Prim): string {
  const T = printCtx(pr.ctx.slice(0, pr.ctx.length - ('inputs' in pr ? pr.inputs : 0)))
  switch (pr.p) {
    case 'var':
      return `var_{${printCtx(pr.ctx)};${pr.index + 1}}`
    case 'const':
      return `${pr.value}_{${printCtx(pr.ctx)};0}`
    case 'op':
      return `${pr.op}_{${T};${pr.inputs}}`
    case 'pi':
      return `π${pr.index + 1}_{${T};1}`
    case 'pair':
      return `pair_{${T};${printType(pr.out.type)}}`
    case 'proj':
      return `proj_{${printCtx(pr.ctx.slice(0, pr.keep))};${printCtx(pr.ctx.slice(pr.keep, pr.keep + pr.drop))};${printCtx(pr.ctx.slice(pr.keep + pr.drop))}}`
    case 'construct':
      return `${constructName(pr.term)}_{${T};${printTerm(pr.term).replace(/\s+/g, ' ').slice(0, 40)}}`
  }
}

function constructName(x: ConstructTerm): string {
  return x.k === 'map' ? (x.arrays.length === 1 ? 'map' : `map${x.arrays.length}`) : x.k
}

/** Prints a Source UNF program as the paper writes it: primitives joined by `;`. */
export function printUnf(u: UnfProgram): string {
  return u.prims.map(printPrim).join(';\n')
}
