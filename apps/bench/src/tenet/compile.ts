import { rev, TENET_FUNCTION, type TenetFunction, type TenetModule } from 'tenet'

/** The fast path: generated JavaScript, no run-time reversibility checks. */
export const fast = rev.with({ checks: false })

/** Compile Tenet source text given as a string (not a template). */
export function compile(source: string, checks = false): TenetModule {
  const tag = checks ? rev : fast
  return tag(Object.assign([source], { raw: [source] }) as unknown as TemplateStringsArray)
}

/** A function of a module, or a clear error. */
export function fn(m: TenetModule, name: string): TenetFunction {
  const f = m[name]
  if (!f) throw new Error(`Tenet module has no function \`${name}\``)
  return f
}

/** The compiled JavaScript of a function (for looking at what the cpu backend generated). */
export function generatedSource(f: TenetFunction, name = f.name): string {
  const info = f[TENET_FUNCTION]
  return info.compiled.sourceOf?.(name, false) ?? ''
}
