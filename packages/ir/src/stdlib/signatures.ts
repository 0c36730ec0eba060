import type { ScalarTypeName } from '../ast.js'

/**
 * The signature of a primitive defined on every numeric type, i32 included (`abs`, `min`,
 * `max`, `sign`, as NiLang's integer `abs`/`min`/`max`): all arguments of one type, not bool,
 * and a result of that type. Integer literals take the type of the other arguments.
 */
export function floatOrI32(name: string): (types: ScalarTypeName[]) => ScalarTypeName | `error:${string}` {
  return (types) => {
    const t0 = types[0] ?? 'f64'
    if (t0 === 'bool') return `error: \`${name}\` takes numbers, not bool`
    for (const t of types)
      if (t !== t0) return `error: the arguments of \`${name}\` must have one type, not ${t0} and ${t}`
    return t0
  }
}
