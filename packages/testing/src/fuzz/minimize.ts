/**
 * A line-based minimiser for failing programs: it removes statements (a single line, or a
 * line that opens a block together with everything up to its closing brace) for as long as
 * the program still fails the same way, so a fuzzer's failure is reported as the smallest
 * program it could find that still shows it.
 */

/** The line ranges [start, end] (inclusive) that can be removed as a unit. */
function units(lines: readonly string[]): Array<[number, number]> {
  const out: Array<[number, number]> = []
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!.trim()
    if (t === '}' || t.startsWith('fn ') || t === '' || t.startsWith('} else')) continue
    if (t.endsWith('{')) {
      // the block and its body, up to the matching close (an `else` continues the statement)
      let depth = 0,
        j = i
      for (; j < lines.length; j++) {
        for (const ch of lines[j]!) depth += ch === '{' ? 1 : ch === '}' ? -1 : 0
        if (depth === 0 && !lines[j + 1]?.trim().startsWith('} else')) break
      }
      out.push([i, j])
    }
    out.push([i, i])
  }
  // larger units first: they shrink the program fastest
  return out.sort((a, b) => b[1] - b[0] - (a[1] - a[0]))
}

/**
 * The smallest source (by repeated removal of statement units) for which `stillFails` holds.
 * `stillFails(source)` is true for the input; it should return false for programs that no
 * longer compile, so the result stays a valid program. At most `maxTries` candidates are tried.
 */
export function minimizeSource(source: string, stillFails: (source: string) => boolean, maxTries = 400): string {
  let lines = source.split('\n')
  let tries = 0
  let progress = true
  while (progress && tries < maxTries) {
    progress = false
    for (const [a, b] of units(lines)) {
      if (tries++ >= maxTries) break
      const candidate = [...lines.slice(0, a), ...lines.slice(b + 1)]
      let fails = false
      try {
        fails = stillFails(candidate.join('\n'))
      } catch {
        fails = false
      }
      if (fails) {
        lines = candidate
        progress = true
        break
      }
    }
  }
  return lines.join('\n')
}
