/**
 * The staging state of one `grad(f, { stage: true })` site: the compiled program for the current
 * input shape and guard outcomes, and the policy for re-tracing. A call whose shape matches runs the
 * compiled program; a guard that fails, a new shape, or no program yet makes the call run `f` on a
 * `Tracer` (which also answers that call) and compiles the new trace. A function that cannot be
 * staged (it reads values with `d.value`, uses registry primitives or custom rules, has static
 * leaves in its arguments), or keeps failing its guards, is interpreted from then on.
 */
import { compileTrace, defaultMaker, type FunctionMaker, type StagedProgram } from './compile.js'
import { hasStatic, type Shape } from './structure.js'
import type { Tracer } from './trace.js'

/** Re-traces allowed before a site gives up staging (guards that keep failing, shapes that keep changing). */
export const MAX_TRACES = 8

/** What a staged gradient reports about itself (`grad(f, { stage: true }).stage`). */
export interface StageInfo {
  /** `compiled`: the next matching call runs generated code; `tracing`: the next call traces; `interpreted`: staging gave up. */
  state: 'compiled' | 'tracing' | 'interpreted'
  /** Why staging gave up (state `interpreted`). */
  reason?: string
  /** Calls that ran the function on the tracer so far. */
  traces: number
  /** The current program's recorded instructions (after rerolling: printed statements) and loops. */
  instructions?: number
  loops?: number
  sourceLength?: number
}

/** The staging state of one transformed function. */
export class Stage {
  program: StagedProgram | undefined
  /** Set when staging gave up: the reason. */
  off: string | undefined
  traces = 0
  /** Whether the program's input is one flat `Float64Array` argument (callers skip the tree walk). */
  flat = false

  constructor(private readonly maker: FunctionMaker = defaultMaker) {}

  /** Whether the next interpreted call should trace. */
  get tracing(): boolean {
    return this.off === undefined
  }

  /** Forgets the program (a guard failed or the shape changed). */
  invalidate(): void {
    this.program = undefined
  }

  /** Compiles the trace of the call that just ran on `t` (result node `out`). */
  learn(t: Tracer, out: number, shape: Shape): void {
    this.traces++
    const items = shape.kind === 'array' ? shape.items : []
    this.flat = items.length === 1 && items[0]!.kind === 'vector'
    if (hasStatic(shape)) {
      this.off = 'its arguments have static leaves (booleans, strings, integer arrays): they are not guarded'
      return
    }
    const made = compileTrace(t, out, this.maker)
    if (typeof made === 'string') {
      this.off = made
      this.program = undefined
      return
    }
    this.program = made
    if (this.traces > MAX_TRACES) {
      this.off = `it was traced ${this.traces} times (guards or shapes keep changing)`
      this.program = undefined
    }
  }

  info(): StageInfo {
    const p = this.program
    return {
      state: this.off !== undefined ? 'interpreted' : p ? 'compiled' : 'tracing',
      ...(this.off !== undefined ? { reason: this.off } : {}),
      traces: this.traces,
      ...(p ? { instructions: p.instructions, loops: p.loops, sourceLength: p.sourceLength } : {}),
    }
  }
}

/**
 * The `into` entry of one staged gradient for one flat `Float64Array` argument and gradient, as code
 * of its own (see `grad`); any other call goes to `slow`. Undefined where code generation is off.
 */
export function flatEntry(
  stage: Stage,
  last: Float64Array,
  slow: (out: unknown, x: unknown) => void,
): ((out: unknown, x: unknown) => void) | undefined {
  const made = defaultMaker(
    ['stage', 'last', 'slow'],
    `'use strict';
return function into(out, x) {
  const p = stage.program;
  if (p !== undefined && stage.flat && x instanceof Float64Array && out instanceof Float64Array && x.length === p.inputs && out.length === p.inputs && p.run(x, out)) { last[0] = p.v[p.out]; return; }
  slow(out, x);
};`,
  )
  return typeof made === 'string' ? undefined : (made(stage, last, slow) as (out: unknown, x: unknown) => void)
}
