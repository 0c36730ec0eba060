import { TenetError } from '@tenet/ir'

/**
 * An error of the UNF engine: a type error in a source program (`unf/type`), an unknown variable
 * or operation (`unf/unbound`, `unf/unknown-op`), a construct outside the supported fragment
 * (`unf/unsupported`), a primitive without derivative (`unf/no-derivative`), or a run-time shape
 * mismatch (`unf/shape`). `code` is stable.
 */
export class UnfError extends TenetError {
  static override isInstance(e: unknown): e is UnfError {
    return TenetError.isInstance(e) && (e as Error).name === 'UnfError'
  }
}
