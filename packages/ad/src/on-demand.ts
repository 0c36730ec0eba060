/**
 * The generation queue that the adjoint and tangent builders share: `request` names the
 * transformed version of a (function, direction) and queues it; `build` generates everything
 * queued, including what the generated functions request in turn (callees, recursion). A
 * request may name a variant (a string the subclass defines, '' for none): each (function,
 * direction, variant) is transformed once.
 */
import { TenetStaticError, type FunctionDef, type Program } from '@tenet/ir'
import { invert } from '@tenet/reversible'

export abstract class OnDemandTransform {
  private readonly queue: Array<{ name: string; inverse: boolean; variant: string }> = []
  private readonly generated = new Map<string, FunctionDef>()

  constructor(
    readonly program: Program,
    readonly inverses: Map<string, FunctionDef>,
  ) {}

  /** The name of the transformed version of function `name` (of its inverse when `inverse`) in `variant`. */
  protected abstract nameOf(name: string, inverse: boolean, variant: string): string
  /** Transforms `f` (the function or its inverse) into the function called `name`, in `variant`. */
  protected abstract transform(f: FunctionDef, name: string, variant: string): FunctionDef

  /** The transformed function's name; queues its generation. */
  request(name: string, inverse: boolean, variant = ''): string {
    const t = this.nameOf(name, inverse, variant)
    if (
      !this.generated.has(t) &&
      !this.queue.some((q) => q.name === name && q.inverse === inverse && q.variant === variant)
    ) {
      if (!this.program.functions.has(name))
        throw new TenetStaticError('ad/unsupported', `no function \`${name}\` to differentiate`)
      this.queue.push({ name, inverse, variant })
    }
    return t
  }

  /** Generates everything queued; returns every function generated so far. */
  build(): FunctionDef[] {
    while (this.queue.length) {
      const { name, inverse, variant } = this.queue.shift()!
      const t = this.nameOf(name, inverse, variant)
      if (this.generated.has(t)) continue
      const f = inverse
        ? (this.inverses.get(name) ?? invert(this.program.functions.get(name)!))
        : this.program.functions.get(name)!
      this.generated.set(t, this.transform(f, t, variant))
    }
    return [...this.generated.values()]
  }
}
