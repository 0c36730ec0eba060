/** A position in Tenet source text (1-based line and column; the column counts code points). */
export interface SourceLocation {
  line: number
  column: number
  /** Offset into the source text, in UTF-16 code units (JS string indices). */
  offset: number
  /**
   * The source text this location points into. Locations made by the parser reach it through
   * a getter on their prototype, so a node's own properties never include the text: serialising
   * or copying a tree costs the size of the tree, not the size of the source for every node.
   */
  readonly source?: SourceText
}

/** The source a set of nodes was parsed from, used for error excerpts. */
export interface SourceText {
  text: string
  /** A short name for messages, e.g. `rev template`. */
  name: string
}

/** A location in parsed text; the text is shared through the class, never an own property. */
class TextLocation implements SourceLocation {
  readonly #source: SourceText
  constructor(
    public line: number,
    public column: number,
    public offset: number,
    source: SourceText,
  ) {
    this.#source = source
  }
  get source(): SourceText {
    return this.#source
  }
}

/** A location inside `source` (the parser's locations; `column` counts code points). */
export function locationIn(source: SourceText, line: number, column: number, offset: number): SourceLocation {
  return new TextLocation(line, column, offset, source)
}

/**
 * How many terminal columns a code point takes: 0 for combining marks, format characters
 * (zero-width joiner, variation selectors); 2 for emoji and East Asian wide characters; else 1.
 */
function displayWidth(ch: string): number {
  if (/^[\p{M}\p{Cf}]$/u.test(ch)) return 0
  const cp = ch.codePointAt(0)!
  if (/^\p{Extended_Pictographic}$/u.test(ch) && cp >= 0x1f000) return 2
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  )
    return 2
  return 1
}

/**
 * Returns the source line of `loc` with a caret under it, for error messages. The caret line
 * repeats the tabs of the source line and counts code points and wide characters, so it stays
 * under the right character after tabs, emoji and astral characters.
 */
export function excerpt(loc: SourceLocation | undefined): string {
  const source = loc?.source
  if (!loc || !source) return ''
  const text = source.text
  let start: number, offset: number
  if (Number.isInteger(loc.offset) && loc.offset >= 0 && loc.offset <= text.length) {
    offset = loc.offset
    start = offset === 0 ? 0 : text.lastIndexOf('\n', offset - 1) + 1
  } else {
    // a location without a usable offset: its line, and its column counted in code points
    const lines = text.split('\n')
    if (loc.line < 1 || loc.line > lines.length) return ''
    start = lines.slice(0, loc.line - 1).reduce((n, l) => n + l.length + 1, 0)
    offset = start + [...lines[loc.line - 1]!].slice(0, Math.max(0, loc.column - 1)).join('').length
  }
  let end = text.indexOf('\n', start)
  if (end < 0) end = text.length
  const line = text.slice(start, end).replace(/\r$/, '')
  let pad = ''
  for (const ch of text.slice(start, offset)) pad += ch === '\t' ? '\t' : ' '.repeat(displayWidth(ch))
  const gutter = `${loc.line} | `
  return `${gutter}${line}\n${' '.repeat(gutter.length)}${pad}^`
}

/** `line:column` for messages. */
export function where(loc: SourceLocation | undefined): string {
  return loc ? `${loc.line}:${loc.column}` : '?:?'
}
