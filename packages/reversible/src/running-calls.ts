/**
 * The calls under way that may call the caller's code back (their module interpolates a plain JS
 * function, which the program may call from the middle of a loop), and the aliasing rule across
 * them: a call made while such a call runs (from one of its host functions, a reentrant call, of
 * any module) must not read or write an array that the running call writes, nor write one that it
 * reads. A running call may keep elements of the arrays it writes in locals (the cpu backend's
 * promoted elements and reused loads) or in a copy (the wasm backend's linear memory) until it
 * returns, so a nested call on the same memory would see, and leave, values that no backend agrees
 * on; it is a `call/overlap` error instead, raised before the nested call runs anything. (A host
 * function that reads such an array directly, not through a Tenet call, is not seen: the arrays of
 * a running call are its own until it returns.)
 *
 * The cost is three stores per call of a function that can call out, and per call of any function
 * one comparison and the count put back (nothing more unless a call is under way). A nested call is tested against every
 * running call: a recursion through host functions d deep costs O(d) per call, O(d²) in all.
 *
 * Not seen (documented limits): AD entry points (\`grad\`, \`jvp\`, …) called from a host function
 * (they call \`.core\`, which tests nothing of the host boundary); a running call's view of a wasm
 * memory that a nested call grew (detached, it shares no memory any more); two
 * \`SharedArrayBuffer\` objects over one memory (memory is compared by buffer object, as for the
 * rule within one call).
 */
import { TenetError, typeToString, type Param } from '@tenet/ir'
import { sharesMemory } from './host-boundary.js'

/** What the rule needs of a function: its name as called, its parameters, which arrays it changes. */
export interface CallShape {
  name: string
  params: readonly Param[]
  /** The indices of the array (and stack) parameters. */
  arrays: readonly number[]
  /** Per parameter: whether the call changes it (writes it, or converts it in place on entry). */
  changes: readonly boolean[]
}

/**
 * The running calls, innermost last: \`count\` of them in \`shapes\` and \`values\`. A wrapper
 * reads \`count\` as it starts a call and puts it back as the call ends, returning or throwing
 * (\`RUNNING.count = running\`, a store, not a call: a call on an exhausted stack would throw again and
 * leave an entry behind, and every later call of any module would be tested against it).
 */
export const RUNNING: {
  count: number
  shapes: Array<CallShape | undefined>
  values: Array<readonly unknown[] | undefined>
} = {
  count: 0,
  shapes: [],
  values: [],
}

/**
 * Tests a call of `shape` on `vals` made while other calls run: throws `call/overlap` where one of
 * its arrays shares memory with an array of a running call and either of the two calls changes it.
 */
export function checkNested(shape: CallShape, vals: readonly unknown[]): void {
  const { count, shapes, values } = RUNNING
  for (const i of shape.arrays) {
    const a = vals[i]
    for (let r = count - 1; r >= 0; r--) {
      const outer = shapes[r]!,
        ov = values[r]!
      for (const j of outer.arrays) {
        if (!(shape.changes[i] || outer.changes[j]) || !sharesMemory(a, ov[j])) continue
        throw nestedOverlapError(shape, i, outer, j)
      }
    }
  }
}

function nestedOverlapError(inner: CallShape, i: number, outer: CallShape, j: number): TenetError {
  const arg = (s: CallShape, k: number): string =>
    `argument ${k + 1} (\`${s.params[k]!.name}: ${typeToString(s.params[k]!.type)}\`) of \`${s.name}\``
  const who = outer.changes[j] ? `\`${outer.name}\` writes` : `\`${outer.name}\` reads and \`${inner.name}\` writes`
  return new TenetError(
    'call/overlap',
    `\`${inner.name}\` was called while \`${outer.name}\` runs (from a host function), and its ${arg(inner, i)} shares memory with ${arg(outer, j)}, which ${who}: a call nested in another must not read or write an array the running call writes, nor write one it reads (the running call may hold the array's new values elsewhere until it returns; pass a copy, e.g. \`${inner.params[i]!.name}.slice()\`)`,
  )
}
