import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  // the WebGPU page runs on Dawn; without a GPU, on SwiftShader (VK_ICD_FILENAMES, set in the main process)
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    pool: 'threads',
    globalSetup: ['../vitest.webgpu-setup.ts'],
  },
})
