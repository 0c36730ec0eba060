/**
 * Every ```ts block of the guide runs here, so the documentation cannot rot. A line
 * `EXPR //=> VALUE` asserts that EXPR equals VALUE (deep equality; numbers to 1e-12 relative;
 * typed arrays compare with plain arrays element by element). Blocks tagged ```ts no-run are
 * skipped — none should be, and the count is checked below.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const guide = join(root, 'guide')
const work = join(root, '.blocks')
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface Block {
  file: string
  line: number
  code: string
}

/** The ```ts blocks of a Markdown file, with the line each starts on. */
export function blocksOf(file: string, text: string): Block[] {
  const out: Block[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```ts\s*$/.exec(lines[i]!)
    if (!open) continue
    const start = i + 1
    let j = start
    while (j < lines.length && !lines[j]!.startsWith('```')) j++
    out.push({ file, line: start + 1, code: lines.slice(start, j).join('\n') })
    i = j
  }
  return out
}

/** Turns `EXPR //=> VALUE` lines into assertions. */
export function instrument(code: string): string {
  return code
    .split('\n')
    .map((l, k) => {
      const m = /^(\s*)(.+?)\s*\/\/=>\s*(.+)$/.exec(l)
      return m ? `${m[1]}__check(${m[2]}, ${m[3]}, ${k + 1})` : l
    })
    .join('\n')
}

/** Deep equality with a relative tolerance on numbers; typed arrays equal plain arrays. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b)
    return a === b || Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b))
  }
  const list = (v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v)
  const x = list(a),
    y = list(b)
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => same(v, y[i]))
  if (x && y && typeof x === 'object' && typeof y === 'object') {
    const kx = Object.keys(x),
      ky = Object.keys(y)
    return (
      kx.length === ky.length &&
      kx.every((k) => same((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]))
    )
  }
  return Object.is(x, y)
}

const PRELUDE = `
const __show = (v) => { try { return JSON.stringify(ArrayBuffer.isView(v) ? Array.from(v) : v, (_k, x) => ArrayBuffer.isView(x) ? Array.from(x) : x) } catch { return String(v) } }
function __check(actual, expected, line) {
  if (!globalThis.__docsSame(actual, expected)) throw new Error('line ' + line + ' of the block: got ' + __show(actual) + ', expected ' + __show(expected))
}
`

;(globalThis as Record<string, unknown>).__docsSame = same

const files = readdirSync(guide)
  .filter((f) => f.endsWith('.md'))
  .sort()
const all = files.flatMap((f) => blocksOf(f, readFileSync(join(guide, f), 'utf8')))

describe('the guide', () => {
  it('has code blocks on every page, none of them skipped', () => {
    for (const f of files) {
      const text = readFileSync(join(guide, f), 'utf8')
      expect(text, `${f}: a skipped block`).not.toMatch(/^```ts\s+no-run/m)
      if (f !== 'cli.md') expect(blocksOf(f, text).length, `${f} has no ts block`).toBeGreaterThan(0)
    }
    expect(all.filter((b) => /\/\/=>/.test(b.code)).length).toBeGreaterThan(10)
  })

  for (const [n, b] of all.entries()) {
    it(`${b.file}:${b.line} runs and its //=> values hold`, async () => {
      const path = join(work, `block-${n}.ts`)
      writeFileSync(path, PRELUDE + instrument(b.code) + '\nexport {}\n')
      await import(pathToFileURL(path).href)
    })
  }
})

/**
 * The language tour on every engine: each block of `language.md` again, with `rev` bound to the
 * interpreter and to the wasm backend (its `import { …, rev, … } from 'tenet'` rewritten to take
 * `rev` from a shim). A block the wasm backend cannot compile (stacks, number systems: see its
 * README) must fail with `backend/unsupported`, said in the test's name; every other one runs.
 */
const SHIM = `import { createRegistry, rev as base } from 'tenet'
import { wasmBackend } from '@tenet/backend-wasm'
export const interpreter = base.with({ backend: 'interpreter' })
export const wasm = base.with({ backend: 'wasm', registry: createRegistry().registerBackend(wasmBackend) })
`
writeFileSync(join(work, 'engines.ts'), SHIM)
/** The block with `rev` taken from the shim's `engine`. */
export function onEngine(code: string, engine: 'interpreter' | 'wasm'): string {
  return code.replace(/import \{([^}]*)\} from 'tenet'/, (_m, names: string) => {
    const rest = names
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n && n !== 'rev')
    return `${rest.length ? `import { ${rest.join(', ')} } from 'tenet'\n` : ''}import { ${engine} as rev } from './engines.ts'`
  })
}
const tour = all.filter((b) => b.file === 'language.md')
/** Blocks of the tour that use what the wasm backend does not lower (checked: they must fail with backend/unsupported). */
const WASM_UNSUPPORTED = /stack<|\bpush\(|\bpop\(|\btop\(|: (fixed|ulog|tropical)\b/

describe('the language tour on the interpreter and wasm', () => {
  it('has blocks that use rev', () => {
    expect(tour.filter((b) => /\brev\b/.test(b.code)).length).toBeGreaterThan(3)
  })
  for (const [n, b] of tour.entries()) {
    if (!/import \{[^}]*\brev\b[^}]*\} from 'tenet'/.test(b.code)) continue
    it(`${b.file}:${b.line} on the interpreter`, async () => {
      const path = join(work, `tour-${n}-interpreter.ts`)
      writeFileSync(path, PRELUDE + instrument(onEngine(b.code, 'interpreter')) + '\nexport {}\n')
      await import(pathToFileURL(path).href)
    })
    const unsupported = WASM_UNSUPPORTED.test(b.code)
    it(`${b.file}:${b.line} on wasm${unsupported ? ' (stacks or number systems: backend/unsupported)' : ''}`, async () => {
      const path = join(work, `tour-${n}-wasm.ts`)
      writeFileSync(path, PRELUDE + instrument(onEngine(b.code, 'wasm')) + '\nexport {}\n')
      if (unsupported)
        await expect(import(pathToFileURL(path).href)).rejects.toMatchObject({ code: 'backend/unsupported' })
      else await import(pathToFileURL(path).href)
    })
  }
})

describe('the //=> harness', () => {
  it('rewrites assertion lines and compares with tolerance', () => {
    expect(instrument('m.f(0, 3) //=> [9, 3]')).toBe('__check(m.f(0, 3), [9, 3], 1)')
    expect(same(new Float64Array([1, 2]), [1, 2])).toBe(true)
    expect(same(1 / 3, 0.3333333333333333)).toBe(true)
    expect(same([1, 2], [1, 3])).toBe(false)
    expect(same({ re: 1, im: 2 }, { re: 1, im: 2.5 })).toBe(false)
  })

  it('fails a block whose value is wrong', async () => {
    const path = join(work, 'wrong.ts')
    writeFileSync(path, `${PRELUDE}${instrument('1 + 1 //=> 3')}\nexport {}\n`)
    await expect(import(pathToFileURL(path).href)).rejects.toThrow(/got 2, expected 3/)
  })
})
