import { TenetSyntaxError } from './errors.js'
import { locationIn, type SourceLocation, type SourceText } from './loc.js'

export type TokenKind = 'ident' | 'number' | 'string' | 'punct' | 'interp' | 'newline' | 'eof'

export interface Token {
  kind: TokenKind
  /** The token's text (for `interp`, the interpolation index as a string). */
  text: string
  loc: SourceLocation
}

// Longest first, so that `<->` wins over `<-` and `..=` over `..`.
const PUNCT = [
  '<->',
  '..=',
  '**',
  '+=',
  '-=',
  '^=',
  '*=',
  '/=',
  '<-',
  '->',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '..',
  '←',
  '→',
  '↔',
  '⊻=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '^',
  '&',
  '|',
  '!',
  '<',
  '>',
  '=',
  '~',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  ';',
  ':',
  '.',
  '@',
]
/** The punctuators by their first character, longest first (one lookup per token). */
const PUNCT_BY_FIRST = new Map<string, string[]>()
for (const p of PUNCT) {
  const list = PUNCT_BY_FIRST.get(p[0]!) ?? []
  list.push(p)
  PUNCT_BY_FIRST.set(p[0]!, list)
}

// After these a newline does not end the statement (the expression goes on).
const CONTINUES = new Set([
  '+',
  '-',
  '*',
  '/',
  '%',
  '**',
  '^',
  '&',
  '|',
  '&&',
  '||',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  ',',
  '(',
  '[',
  '+=',
  '-=',
  '^=',
  '*=',
  '/=',
  '<-',
  '->',
  '←',
  '→',
  '<->',
  '↔',
  '⊻=',
  '=',
  '..',
  '..=',
  ':',
  '.',
  '!',
  '~',
  '@',
])

const NUMBER = /(?:\d+(?:\.(?!\.)\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y
const INTERP = /\$\{(\d+)\}/y
const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '/': '/',
}

/** Splits Tenet source into tokens; `${N}` becomes an `interp` token for host value N. */
export function tokenize(source: SourceText): Token[] {
  const text = source.text
  const out: Token[] = []
  let i = 0
  let line = 1
  let lineStart = 0
  // columns count code points: the low surrogates of the current line before `scanned`
  let scanned = 0
  let surrogates = 0
  let depth = 0 // ( and [ nesting: newlines inside are not separators
  const newLine = (at: number) => {
    line++
    lineStart = scanned = at
    surrogates = 0
  }
  const isLow = (k: number) => {
    const c = text.charCodeAt(k)
    return c >= 0xdc00 && c <= 0xdfff
  }
  const loc = (at: number): SourceLocation => {
    let s: number
    if (at >= scanned) {
      for (; scanned < at; scanned++) if (isLow(scanned)) surrogates++
      s = surrogates
    } else {
      s = 0
      for (let k = lineStart; k < at; k++) if (isLow(k)) s++
    }
    return locationIn(source, line, at - lineStart - s + 1, at)
  }
  const fail = (where: number | SourceLocation, msg: string): never => {
    throw new TenetSyntaxError('syntax', msg, typeof where === 'number' ? loc(where) : where)
  }
  while (i < text.length) {
    const c = text[i]!
    if (c === '\n') {
      const prev = out[out.length - 1]
      if (depth === 0 && prev && prev.kind !== 'newline' && !(prev.kind === 'punct' && CONTINUES.has(prev.text))) {
        out.push({ kind: 'newline', text: '\n', loc: loc(i) })
      }
      i++
      newLine(i)
      continue
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++
      continue
    }
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++
      continue
    }
    if (c === '/' && text[i + 1] === '*') {
      const start = loc(i)
      i += 2
      while (i < text.length && !(text[i] === '*' && text[i + 1] === '/')) {
        if (text[i] === '\n') newLine(i + 1)
        i++
      }
      if (i >= text.length) fail(start, 'unterminated comment: expected `*/`')
      i += 2
      continue
    }
    if (c === '$' && text[i + 1] === '{') {
      INTERP.lastIndex = i
      const m = INTERP.exec(text)
      if (!m) fail(i, 'unexpected `${`')
      out.push({ kind: 'interp', text: m![1]!, loc: loc(i) })
      i += m![0].length
      continue
    }
    if ((c >= '0' && c <= '9') || (c === '.' && /[0-9]/.test(text[i + 1] ?? '') && text[i - 1] !== '.')) {
      NUMBER.lastIndex = i
      const m = NUMBER.exec(text)!
      out.push({ kind: 'number', text: m[0], loc: loc(i) })
      i += m[0].length
      if (/[A-Za-z_]/.test(text[i] ?? '')) fail(i, `unexpected \`${text[i]}\` after number \`${m[0]}\``)
      continue
    }
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c === '_') {
      IDENT.lastIndex = i
      const m = IDENT.exec(text)!
      out.push({ kind: 'ident', text: m[0], loc: loc(i) })
      i += m[0].length
      continue
    }
    if (c === '"' || c === "'") {
      const at = loc(i)
      let value = ''
      let j = i + 1
      while (j < text.length && text[j] !== c && text[j] !== '\n') {
        if (text[j] !== '\\') {
          value += text[j]
          j++
          continue
        }
        const e = text[j + 1] ?? ''
        if (Object.hasOwn(SIMPLE_ESCAPES, e) && !(e === '0' && /[0-9]/.test(text[j + 2] ?? ''))) {
          value += SIMPLE_ESCAPES[e]
          j += 2
          continue
        }
        const hex =
          e === 'x'
            ? /^[0-9A-Fa-f]{2}/.exec(text.slice(j + 2, j + 4))?.[0]
            : e === 'u'
              ? (/^\{([0-9A-Fa-f]{1,6})\}/.exec(text.slice(j + 2, j + 10)) ??
                  /^[0-9A-Fa-f]{4}/.exec(text.slice(j + 2, j + 6)))?.[0]
              : undefined
        const cp = hex === undefined ? NaN : parseInt(hex.replace(/[{}]/g, ''), 16)
        if (!(cp <= 0x10ffff)) {
          fail(
            j,
            e === 'x' || e === 'u'
              ? `malformed escape \`\\${e}\` in a string literal (write \`\\x\` with 2 hex digits, \`\\u\` with 4 or \`\\u{...}\`)`
              : e === '' || e === '\n'
                ? 'unterminated string literal'
                : `unknown escape \`\\${e}\` in a string literal`,
          )
        }
        value += String.fromCodePoint(cp)
        j += 2 + hex!.length
      }
      if (text[j] !== c) fail(at, 'unterminated string literal')
      out.push({ kind: 'string', text: value, loc: at })
      i = j + 1
      continue
    }
    const p = PUNCT_BY_FIRST.get(c)?.find((q) => text.startsWith(q, i))
    if (!p) {
      const ch = String.fromCodePoint(text.codePointAt(i)!)
      fail(
        i,
        `unexpected character \`${ch}\`${ch === '\\' ? ' (a backslash is only allowed in comments and strings)' : ''}`,
      )
    }
    if (p === '(' || p === '[') depth++
    if ((p === ')' || p === ']') && depth > 0) depth--
    out.push({ kind: 'punct', text: p!, loc: loc(i) })
    i += p!.length
  }
  out.push({ kind: 'eof', text: '', loc: loc(i) })
  return out
}
