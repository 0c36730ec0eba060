import { excerpt, where, type SourceLocation } from './loc.js'

const MARKER = Symbol.for('tenet.error')

/**
 * Base class of every error Tenet throws. `code` is stable across versions; `line` and
 * `column` point at the offending source (when there is one) and the message ends with
 * the source line and a caret.
 */
export class TenetError extends Error {
  readonly [MARKER] = true
  readonly code: string
  readonly line: number | undefined
  readonly column: number | undefined
  /** The message without the location and excerpt. */
  readonly detail: string

  constructor(code: string, detail: string, loc?: SourceLocation) {
    const ex = excerpt(loc)
    super(loc ? `${detail} (at ${where(loc)})${ex ? '\n' + ex : ''}` : detail)
    this.name = new.target.name
    this.code = code
    this.detail = detail
    this.line = loc?.line
    this.column = loc?.column
  }

  /** True for any Tenet error, even one thrown by a duplicate copy of this package. */
  static isInstance(e: unknown): e is TenetError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[MARKER] === true
  }
}

function guard<T extends TenetError>(name: string) {
  return (e: unknown): e is T => TenetError.isInstance(e) && (e as Error).name === name
}

/** The text could not be parsed: the message names the line, the column and what was expected. */
export class TenetSyntaxError extends TenetError {
  static override isInstance = guard<TenetSyntaxError>('TenetSyntaxError')
}

/** The program breaks a static rule of reversible programming (or a type rule). */
export class TenetStaticError extends TenetError {
  static override isInstance = guard<TenetStaticError>('TenetStaticError')
}

/**
 * A run-time reversibility check failed: a deallocation of a value other than the declared
 * one, a violated post-condition, a changed loop range, a pop from an empty stack, aliasing.
 * `restored` says whether the caller's arrays were put back to their values before the call.
 */
export class InvertibilityError extends TenetError {
  restored = false
  static override isInstance = guard<InvertibilityError>('InvertibilityError')
}

/** A registry lookup or registration failed (unknown primitive, duplicate name, no kernel). */
export class RegistryError extends TenetError {
  static override isInstance = guard<RegistryError>('RegistryError')
}

/**
 * Runs `f`, turning a JavaScript stack overflow inside it (a program nested deeper than the
 * compiler's passes can recurse, below the parser's limits only when the host's own stack is
 * already deep) into a `TenetError` with code `limit/stack` that says what was being done.
 */
export function withStackGuard<T>(what: string, f: () => T): T {
  try {
    return f()
  } catch (e) {
    if (e instanceof RangeError && /call stack/i.test(e.message)) {
      throw new TenetError(
        'limit/stack',
        `${what}: the program is nested too deeply for the JavaScript stack (${e.message}); split long expressions or deep blocks into ancillas or functions`,
      )
    }
    throw e
  }
}

/** Levenshtein distance, for "did you mean" suggestions. */
export function editDistance(a: string, b: string): number {
  const d: number[] = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0]!
    d[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = d[j]!
      d[j] = Math.min(d[j]! + 1, d[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = tmp
    }
  }
  return d[b.length]!
}

/** Up to three known names closest to `name`, formatted for a message ("did you mean ..."). */
export function suggest(name: string, known: Iterable<string>): string {
  const scored = [...new Set(known)]
    .map((k) => ({ k, d: editDistance(name.toLowerCase(), k.toLowerCase()) }))
    .filter(({ k, d }) => d <= Math.max(2, Math.floor(k.length / 2)))
    .sort((x, y) => x.d - y.d || x.k.localeCompare(y.k))
    .slice(0, 3)
    .map(({ k }) => `\`${k}\``)
  return scored.length ? `; did you mean ${scored.join(' or ')}?` : ''
}
