import { defineConfig } from 'vitest/config'

/** Shared vitest settings: every package's `vitest.config.ts` re-exports this. */
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    pool: 'threads',
  },
})
