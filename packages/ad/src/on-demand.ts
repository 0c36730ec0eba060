/**
 * The generation queue that the adjoint and tangent builders share: `request` names the
 * transformed version of a (function, direction) and queues it; `build` generates everything
 * queued, including what the generated functions request in turn (callees, recursion).
 */
import { TenetStaticError, type FunctionDef, type Program } from '@tenet/ir'
import { invert } from '@tenet/reversible'

export abstract class OnDemandTransform {
  private readonly queue: Array<{ name: string; inverse: boolean }> = []
  private readonly generated = new Map<string, FunctionDef>()

  constructor(
    readonly program: Program,
    readonly inverses: Map<string, FunctionDef>,
  ) {}

  /** The name of the transformed version of function `name` (of its inverse when `inverse`). */
  protected abstract nameOf(name: string, inverse: boolean): string
  /** Transforms `f` (the function or its inverse) into the function called `name`. */
  protected abstract transform(f: FunctionDef, name: string): FunctionDef

  /** The transformed function's name; queues its generation. */
  request(name: string, inverse: boolean): string {
    const t = this.nameOf(name, inverse)
    if (!this.generated.has(t) && !this.queue.some((q) => q.name === name && q.inverse === inverse)) {
      if (!this.program.functions.has(name))
        throw new TenetStaticError('ad/unsupported', `no function \`${name}\` to differentiate`)
      this.queue.push({ name, inverse })
    }
    return t
  }

  /** Generates everything queued; returns every function generated so far. */
  build(): FunctionDef[] {
    while (this.queue.length) {
      const { name, inverse } = this.queue.shift()!
      const t = this.nameOf(name, inverse)
      if (this.generated.has(t)) continue
      const f = inverse
        ? (this.inverses.get(name) ?? invert(this.program.functions.get(name)!))
        : this.program.functions.get(name)!
      this.generated.set(t, this.transform(f, t))
    }
    return [...this.generated.values()]
  }
}
