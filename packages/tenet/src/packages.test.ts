/**
 * Ready to publish: every public workspace package has its publishing metadata (repository with
 * its directory, homepage, keywords, `./package.json` exported, a `files` list without tests and
 * with the changelog, provenance, a LICENSE beside it, an install line in its README) —
 * `scripts/package-metadata.mjs --check` says which are missing; run it without `--check` to fill
 * them in.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..')

it('every public package carries its publishing metadata', () => {
  const r = spawnSync(process.execPath, [join(root, 'scripts/package-metadata.mjs'), '--check'], { encoding: 'utf8' })
  expect(r.stdout, r.stderr).toBe('')
  expect(r.status).toBe(0)
})
