import { defineConfig } from 'vitest/config'

// relative asset paths: the built page works from any folder, and offline from static files
export default defineConfig({
  base: './',
  resolve: { conditions: ['source'] },
  build: { outDir: 'dist', target: 'es2022', sourcemap: true },
  test: { include: ['test/**/*.test.ts'], testTimeout: 120_000, pool: 'threads' },
})
