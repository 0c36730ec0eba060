/**
 * Many generated programs as one: their functions renamed apart, and an entry that runs the
 * program its first argument selects. A backend whose compile step is costly per function (a
 * GPU pipeline) then compiles once for a whole batch of programs, each item of the batch
 * running one of them.
 */

/** One program to bundle: its source, its entry, and the entry's parameters with their Tenet types. */
export interface BundleMember {
  source: string
  entry: string
  params: Array<{ name: string; type: string }>
}

/** A bundle of programs (see `bundlePrograms`). */
export interface ProgramBundle {
  /** Tenet source: every member's functions (suffixed `_k`) and the entry `bundle`. */
  source: string
  entry: 'bundle'
  /** The entry's parameters after `sel`: member k's parameter `name` is `m{k}_{name}`. */
  params: Array<{ member: number; name: string; type: string; bundled: string }>
}

/**
 * Bundles programs into one module: `fn bundle(sel: i32, m0_x: …, m1_x: …, …)` runs member
 * `sel` on its own parameters (`if (sel == k, ~) { f_k(…) }` for each k; the others are left
 * as they are). Function names are renamed with a suffix, so members may share them.
 */
export function bundlePrograms(members: BundleMember[]): ProgramBundle {
  const texts: string[] = []
  const params: ProgramBundle['params'] = []
  const calls: string[] = []
  members.forEach((m, k) => {
    const names = [...m.source.matchAll(/\bfn\s+([A-Za-z_]\w*)\s*\(/g)].map((x) => x[1]!)
    let text = m.source
    for (const name of names) text = text.replace(new RegExp(`\\b${name}\\s*\\(`, 'g'), `${name}_${k}(`)
    texts.push(text)
    const args = m.params.map((p) => {
      const bundled = `m${k}_${p.name}`
      params.push({ member: k, name: p.name, type: p.type, bundled })
      return bundled
    })
    calls.push(`  if (sel == ${k}, ~) { ${m.entry}_${k}(${args.join(', ')}) }`)
  })
  const head = `fn bundle(sel: i32${params.map((p) => `, ${p.bundled}: ${p.type}`).join('')}) {`
  return { source: [...texts, [head, ...calls, '}'].join('\n')].join('\n\n') + '\n', entry: 'bundle', params }
}
