import { defineConfig } from 'vitest/config'

/** Shared vitest settings: every package's `vitest.config.ts` re-exports this. */
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // allocation tests run alone after the suite (vitest.alloc.config.ts at the root)
    exclude: ['**/node_modules/**', '**/*.alloc.test.ts'],
    testTimeout: 60_000,
    pool: 'threads',
  },
})
