/** Test helpers: calling the `rev` tag on source text that is not a template literal. */
import { rev, type Rev, type TenetModule } from './index.js'

/**
 * `parts` as the strings of a tagged template (with `raw`): `tag(template(source))` is
 * `` tag`source` ``, and `tag(template(a, b), v)` is `` tag`a${v}b` ``.
 */
export function template(...parts: string[]): TemplateStringsArray {
  return Object.assign([...parts], { raw: [...parts] }) as unknown as TemplateStringsArray
}

/** Compiles `source` with `tag` as if it were written `` tag`source` ``. */
export function compile(source: string, tag: Rev = rev): TenetModule {
  return tag(template(source))
}
