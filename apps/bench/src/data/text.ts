import { readFileSync, writeFileSync } from 'node:fs'

/** Whitespace-separated numeric tokens of an ADBench text file. */
export function tokenize(text: string): Float64Array {
  const parts = text.split(/\s+/).filter((t) => t.length > 0)
  const out = new Float64Array(parts.length)
  for (let i = 0; i < parts.length; i++) {
    const v = Number(parts[i])
    if (Number.isNaN(v)) throw new SyntaxError(`not a number: ${JSON.stringify(parts[i])} (token ${i})`)
    out[i] = v
  }
  return out
}

/** ADBench writes its inputs with C's `%f` (6 decimals) followed by a space. */
export function formatFixed(v: number): string {
  return `${v.toFixed(6)} `
}

/** Round to what `%f` keeps, so that generated instances survive write + read exactly. */
export function roundFixed(v: number): number {
  return Number(v.toFixed(6))
}

export function readText(path: string): string {
  return readFileSync(path, 'utf8')
}

export function writeText(path: string, text: string): void {
  writeFileSync(path, text)
}
