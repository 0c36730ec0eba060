/**
 * The eval-free path: with code generation from strings forbidden (a strict Content-Security-Policy),
 * a staged gradient is interpreted, says why, and gives the same gradients. Runs the built package
 * in a child Node with --disallow-code-generation-from-strings.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

const dist = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '../dist/index.js')).href

const script = `
import { grad } from ${JSON.stringify(dist)}
const out = {}
try { new Function('return 1'); out.evalWorks = true } catch { out.evalWorks = false }
const f = (d, x) => { let s = d.mul(x[0], x[3]); for (let i = 1; i < 3; i++) s = d.add(s, d.mul(x[i], x[3 + i])); return d.sign(s) > 0 ? d.tanh(s) : s }
const x = Float64Array.of(0.5, -1, 2, 1.5, 0.25, -0.75)
const staged = grad(f, { stage: true }), plain = grad(f)
out.staged = [Array.from(staged(x)), Array.from(staged(x))]
out.plain = Array.from(plain(x))
out.stage = staged.stage
console.log(JSON.stringify(out))
`

describe('eval-free (node --disallow-code-generation-from-strings)', () => {
  const run = spawnSync(
    process.execPath,
    ['--disallow-code-generation-from-strings', '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  )
  const out = run.status === 0 ? JSON.parse(run.stdout) : undefined

  it('the child ran with code generation forbidden', () => {
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    expect(out.evalWorks).toBe(false)
  })

  it('a staged gradient falls back to the interpreter, says why, and gives the same numbers', () => {
    expect(out.stage.state).toBe('interpreted')
    expect(out.stage.reason).toMatch(/code generation from strings is disallowed/)
    expect(out.staged[0]).toEqual(out.plain)
    expect(out.staged[1]).toEqual(out.plain)
    const s = 0.5 * 1.5 - 0.25 - 2 * 0.75,
      t = 1 - Math.tanh(s) ** 2
    expect(out.plain[0]).toBeCloseTo(s > 0 ? t * 1.5 : 1.5, 14)
  })
})
