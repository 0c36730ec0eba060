import { TenetSyntaxError } from './errors.js'
import type { SourceLocation, SourceText } from './loc.js'

export type TokenKind = 'ident' | 'number' | 'string' | 'punct' | 'interp' | 'newline' | 'eof'

export interface Token {
  kind: TokenKind
  /** The token's text (for `interp`, the interpolation index as a string). */
  text: string
  loc: SourceLocation
}

// Longest first, so that `<->` wins over `<-` and `..=` over `..`.
const PUNCT = [
  '<->', '..=', '**',
  '+=', '-=', '^=', '*=', '/=', '<-', '->', '==', '!=', '<=', '>=', '&&', '||', '..',
  '←', '→', '↔', '⊻=',
  '+', '-', '*', '/', '%', '^', '&', '|', '!', '<', '>', '=', '~', '(', ')', '[', ']', '{', '}',
  ',', ';', ':', '.', '@',
]

// After these a newline does not end the statement (the expression goes on).
const CONTINUES = new Set([
  '+', '-', '*', '/', '%', '**', '^', '&', '|', '&&', '||', '==', '!=', '<', '<=', '>', '>=',
  ',', '(', '[', '+=', '-=', '^=', '*=', '/=', '<-', '->', '←', '→', '<->', '↔', '⊻=', '=', '..', '..=', ':', '.', '!', '~', '@',
])

/** Splits Tenet source into tokens; `${N}` becomes an `interp` token for host value N. */
export function tokenize(source: SourceText): Token[] {
  const text = source.text
  const out: Token[] = []
  let i = 0
  let line = 1
  let lineStart = 0
  let depth = 0 // ( and [ nesting: newlines inside are not separators
  const loc = (at: number): SourceLocation => ({ line, column: at - lineStart + 1, offset: at, source })
  const fail = (at: number, msg: string): never => {
    throw new TenetSyntaxError('syntax', msg, loc(at))
  }
  while (i < text.length) {
    const c = text[i]!
    if (c === '\n') {
      const prev = out[out.length - 1]
      if (depth === 0 && prev && prev.kind !== 'newline' && !(prev.kind === 'punct' && CONTINUES.has(prev.text))) {
        out.push({ kind: 'newline', text: '\n', loc: loc(i) })
      }
      i++
      line++
      lineStart = i
      continue
    }
    if (c === ' ' || c === '\t' || c === '\r') { i++; continue }
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++
      continue
    }
    if (c === '/' && text[i + 1] === '*') {
      const start = i
      i += 2
      while (i < text.length && !(text[i] === '*' && text[i + 1] === '/')) {
        if (text[i] === '\n') { line++; lineStart = i + 1 }
        i++
      }
      if (i >= text.length) fail(start, 'unterminated comment: expected `*/`')
      i += 2
      continue
    }
    if (c === '$' && text[i + 1] === '{') {
      const m = /^\$\{(\d+)\}/.exec(text.slice(i))
      if (!m) fail(i, 'unexpected `${`')
      out.push({ kind: 'interp', text: m![1]!, loc: loc(i) })
      i += m![0].length
      continue
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? '') && text[i - 1] !== '.')) {
      const m = /^(?:\d+(?:\.(?!\.)\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(text.slice(i))!
      out.push({ kind: 'number', text: m[0], loc: loc(i) })
      i += m[0].length
      if (/[A-Za-z_]/.test(text[i] ?? '')) fail(i, `unexpected \`${text[i]}\` after number \`${m[0]}\``)
      continue
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))!
      out.push({ kind: 'ident', text: m[0], loc: loc(i) })
      i += m[0].length
      continue
    }
    if (c === '"' || c === "'") {
      let j = i + 1
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1
      if (text[j] !== c) fail(i, 'unterminated string literal')
      out.push({ kind: 'string', text: JSON.parse('"' + text.slice(i + 1, j).replace(/"/g, '\\"') + '"'), loc: loc(i) })
      i = j + 1
      continue
    }
    const p = PUNCT.find((q) => text.startsWith(q, i))
    if (!p) fail(i, `unexpected character \`${c}\``)
    if (p === '(' || p === '[') depth++
    if ((p === ')' || p === ']') && depth > 0) depth--
    out.push({ kind: 'punct', text: p!, loc: loc(i) })
    i += p!.length
  }
  out.push({ kind: 'eof', text: '', loc: loc(i) })
  return out
}
