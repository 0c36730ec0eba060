/** A position in Tenet source text (1-based line and column). */
export interface SourceLocation {
  line: number
  column: number
  /** Character offset into the source text. */
  offset: number
  /** The source text this location points into (shared by every node of one template). */
  source?: SourceText
}

/** The source a set of nodes was parsed from, used for error excerpts. */
export interface SourceText {
  text: string
  /** A short name for messages, e.g. `rev template`. */
  name: string
}

/** Returns the source line of `loc` with a caret under its column, for error messages. */
export function excerpt(loc: SourceLocation | undefined): string {
  if (!loc || !loc.source) return ''
  const lines = loc.source.text.split('\n')
  const text = lines[loc.line - 1] ?? ''
  const gutter = `${loc.line} | `
  return `${gutter}${text}\n${' '.repeat(gutter.length + Math.max(0, loc.column - 1))}^`
}

/** `line:column` for messages. */
export function where(loc: SourceLocation | undefined): string {
  return loc ? `${loc.line}:${loc.column}` : '?:?'
}
