import { rev, type TenetFunction, type TenetModule } from 'tenet'

/** Generated JavaScript without run-time reversibility checks: the fast path for timed runs. */
const fast = rev.with({ checks: false })

const cache = new Map<string, TenetModule>()

/**
 * Compiles Tenet source text given as a string (the programs here are generated per size or
 * template, so they are not tagged-template literals), cached by the text.
 */
export function compile(source: string): TenetModule {
  let m = cache.get(source)
  if (!m) cache.set(source, (m = fast(Object.assign([source], { raw: [source] }) as unknown as TemplateStringsArray)))
  return m
}

/**
 * Compiles source pieces with interpolated values between them, as the `rev` tag would see
 * `rev\`${pieces[0]}${values[0]}${pieces[1]}…\``: a Tenet function value is a callee (here, the
 * generated gradient programs of another function). Not cached.
 */
export function compileWith(pieces: readonly string[], values: readonly unknown[]): TenetModule {
  if (pieces.length !== values.length + 1)
    throw new Error(
      `compileWith: ${pieces.length} source pieces need ${pieces.length - 1} values, got ${values.length}`,
    )
  return fast(Object.assign([...pieces], { raw: [...pieces] }) as unknown as TemplateStringsArray, ...values)
}

/** A function of a compiled module, or a clear error. */
export function fn(m: TenetModule, name: string): TenetFunction {
  const f = m[name]
  if (!f) throw new Error(`Tenet module has no function \`${name}\``)
  return f
}
