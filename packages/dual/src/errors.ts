import { TenetError } from '@tenet/ir'

/**
 * An error of the dual-numbers engine: bad input (a value that is not a number, array or record),
 * a result that is not a handle, a stale pullback, a rule of the wrong arity. `code` is stable
 * (`dual/...`).
 */
export class DualError extends TenetError {
  static override isInstance = (e: unknown): e is DualError =>
    TenetError.isInstance(e) && (e as Error).name === 'DualError'
}
