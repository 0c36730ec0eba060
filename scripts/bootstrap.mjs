#!/usr/bin/env node
// Installs the workspace on a fresh clone (Node >= 20 and npm are all that is needed):
// pnpm is fetched through npx at the pinned version, then `pnpm install` links everything.
// It is a no-op when node_modules is already up to date with pnpm-lock.yaml.
import { execSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const marker = join(root, 'node_modules', '.modules.yaml')
const lock = join(root, 'pnpm-lock.yaml')
const pkg = join(root, 'package.json')

const major = Number(process.versions.node.split('.')[0])
if (major < 20) {
  console.error(`Tenet needs Node >= 20 (this is ${process.versions.node}).`)
  process.exit(1)
}

const fresh =
  existsSync(marker) &&
  statSync(marker).mtimeMs >= statSync(lock).mtimeMs &&
  statSync(marker).mtimeMs >= statSync(pkg).mtimeMs &&
  existsSync(join(root, 'node_modules', '.bin', 'turbo'))

if (!fresh) {
  const frozen = process.env.CI ? ' --frozen-lockfile' : ''
  console.log('[bootstrap] installing the workspace with pnpm 10.34.9 ...')
  execSync(`npx --yes pnpm@10.34.9 install${frozen}`, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, npm_config_yes: 'true' },
  })
}
