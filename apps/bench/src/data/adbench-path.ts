import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

/** apps/bench (from src/ or dist/ alike). */
export const benchPackageRoot = resolve(here, '..', '..')

/** The monorepo root (two levels above apps/bench). */
export const repoRoot = resolve(benchPackageRoot, '..', '..')

/**
 * ADBench's own files, where the checkout has the shared folder beside it
 * (`../shared/data/adbench` from the repo root). `undefined` when absent.
 */
export function findAdbenchData(): string | undefined {
  const candidates = [process.env.TENET_ADBENCH_DIR, resolve(repoRoot, '..', 'shared', 'data', 'adbench')]
  for (const c of candidates) if (c && existsSync(resolve(c, 'gmm', 'test.txt'))) return c
  return undefined
}
