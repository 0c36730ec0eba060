import { defineConfig } from 'vitest/config'

/**
 * The allocation tests (`*.alloc.test.ts`): they count garbage collections over millions of calls,
 * so they run after the parallel suite, one file at a time (`npm test` does this).
 */
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    include: ['packages/*/src/**/*.alloc.test.ts'],
    fileParallelism: false,
    // child processes with natives syntax and synchronous optimisation: the tests force V8 to
    // optimise the code they measure before measuring
    pool: 'forks',
    execArgv: ['--allow-natives-syntax', '--no-concurrent-recompilation'],
    testTimeout: 120_000,
  },
})
