/**
 * Mutations that turn valid Tenet sources and argument lists into (mostly) invalid ones, for
 * the fuzzer's bad-input campaigns: whatever a user types or passes, Tenet must answer with
 * one of its own error classes (a `code`, and a source location for source errors), never a
 * raw JS error, and must leave the caller's arrays as they were.
 */
import type { Random } from '../random.js'

/** Tokens that are inserted into sources: syntax, escapes, odd literals, keywords, names. */
const TOKENS = [
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  ',',
  ';',
  '+=',
  '-=',
  '^=',
  '*=',
  '<-',
  '->',
  '<->',
  '~',
  '~routine',
  'routine',
  '@safe',
  '@unchecked',
  '\\',
  '"',
  "'",
  '`',
  '\\u',
  '\\x41',
  '\\u{1F600}',
  '/*',
  '*/',
  '//',
  '..',
  '..=',
  'by',
  '#',
  '$',
  '?',
  ':',
  '9999999999999',
  '2147483648',
  '-2147483649',
  '1e400',
  '-0.0',
  '0x10',
  '1_000',
  '.5',
  '5.',
  'NaN',
  'Infinity',
  '__proto__',
  'constructor',
  'toString',
  'prototype',
  'true',
  'false',
  'fn',
  'if',
  'else',
  'while',
  'for',
  'in',
  'f64',
  'i32',
  'bool',
  'fixed',
  'ulog',
  'complex',
  'stack<f64>',
  'f64[]',
  'zeros(3)',
  'len(x)',
  'sin',
  'SWAP',
  'ROT',
  'NEG',
  '😀',
  '\t',
  '\u00a0',
  '\u2028',
  'é',
  'x.re',
  'x.log',
  '.constructor',
  'div(1, 0)',
  '(1 / 0)',
  'i32(1e300)',
  // the forms of issue 20
  '[..]',
  'x[..]',
  'top(s)',
  'top(x)',
  'a, b <-',
  'a, b ->',
  ', 2',
  'for v in x',
  'in reverse',
  '*= 0.0',
  '/= 0.0',
  '} ~routine',
]

/** One random mutation of `source` (possibly still valid). */
export function mutateSource(source: string, rng: Random): string {
  const lines = source.split('\n')
  const at = () => rng.int(0, source.length)
  switch (rng.int(0, 9)) {
    case 0: {
      // delete a span
      const a = at(),
        n = rng.int(1, 6)
      return source.slice(0, a) + source.slice(a + n)
    }
    case 1: {
      // insert a token
      const a = at()
      return `${source.slice(0, a)} ${rng.pick(TOKENS)} ${source.slice(a)}`
    }
    case 2: {
      // duplicate a line
      const i = rng.int(0, lines.length - 1)
      return [...lines.slice(0, i + 1), lines[i]!, ...lines.slice(i + 1)].join('\n')
    }
    case 3: {
      // swap two lines
      const i = rng.int(0, lines.length - 1),
        j = rng.int(0, lines.length - 1)
      const c = lines.slice()
      ;[c[i], c[j]] = [c[j]!, c[i]!]
      return c.join('\n')
    }
    case 4: {
      // truncate
      return source.slice(0, at())
    }
    case 5: {
      // replace a word with another word or token
      const words = [...source.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)]
      if (!words.length) return source
      const w = rng.pick(words)
      const replacement = rng.chance(0.5) ? rng.pick(words)[0] : rng.pick(TOKENS)
      return source.slice(0, w.index!) + replacement + source.slice(w.index! + w[0].length)
    }
    case 6: {
      // a type changed
      return source.replace(
        /\b(f64|i32|fixed)\b/,
        rng.pick(['i32', 'f64', 'bool', 'fixed', 'ulog', 'complex', 'f32', 'f64[]', 'stack<f64>', 'tropical']),
      )
    }
    case 7: {
      // deep nesting of an expression
      const d = rng.pick([50, 300, 1000, 5000])
      const m = /(\+=|-=) /.exec(source)
      if (!m) return source
      const a = m.index + m[0].length
      return `${source.slice(0, a)}${'('.repeat(d)}1.0${')'.repeat(d)} + ${source.slice(a)}`
    }
    case 8: {
      // a comment with odd content
      const a = source.indexOf('\n')
      const c = rng.pick(['// \\u{zz} \\x', '/* unterminated', '/* \\u0041 */', '// `${}`', '/* nested /* */ */'])
      return a < 0 ? `${source} ${c}` : `${source.slice(0, a)} ${c}${source.slice(a)}`
    }
    default: {
      // two mutations
      return mutateSource(mutateSource(source, rng), rng)
    }
  }
}

/** A detached typed array of the same type and length as `a`. */
function detached(a: ArrayBufferView & { length: number }): unknown {
  const copy = (a as unknown as { slice(): ArrayBufferView }).slice()
  structuredClone(copy.buffer, { transfer: [copy.buffer as ArrayBuffer] })
  return copy
}

/**
 * One random mutation of an argument list (possibly still valid). The input is not changed.
 * `extremeNumbers: false` leaves out huge and non-finite numbers (for programs whose loop bounds
 * come from their arguments, which would then run for minutes).
 */
export function mutateArgs(
  args: readonly unknown[],
  rng: Random,
  options: { extremeNumbers?: boolean } = {},
): unknown[] {
  // copies, except of an array a previous mutation detached (it stays detached)
  const out = args.map((a) =>
    ArrayBuffer.isView(a) && a.byteLength > 0 ? (a as unknown as { slice(): unknown }).slice() : a,
  )
  const i = rng.int(0, Math.max(0, out.length - 1))
  const a = out[i]
  switch (rng.int(0, 6)) {
    case 0:
      out.pop()
      return out
    case 1:
      out.push(rng.pick([1, new Float64Array(2), 'extra']))
      return out
    case 2:
      out[i] = rng.pick<unknown>(['1', null, undefined, {}, true, 1n, Symbol('s'), () => 1, [1, 2]])
      return out
    case 3:
      out[i] =
        options.extremeNumbers === false
          ? rng.pick([-0, 1.5, -1])
          : rng.pick([Number.NaN, Number.POSITIVE_INFINITY, -0, 2 ** 31, -(2 ** 31) - 1, 1.5, 1e300])
      return out
    case 4:
      if (ArrayBuffer.isView(a)) {
        // (an array an earlier mutation detached reads as empty: copy from an empty one, not from it)
        const t = (a.byteLength > 0 ? a : new Float64Array(0)) as unknown as Float64Array
        out[i] = rng.pick<() => unknown>([
          () => Array.from(t),
          () => Float32Array.from(t),
          () => Int32Array.from(t),
          () => t.subarray(1),
          () => detached(t),
          () => new Float64Array(0),
          () => Uint8Array.from(t),
        ])()
      } else out[i] = rng.pick<unknown>([new Float64Array(3), new Int32Array(3), [1]])
      return out
    case 5:
      return []
    default:
      return mutateArgs(mutateArgs(args, rng, options), rng, options)
  }
}
