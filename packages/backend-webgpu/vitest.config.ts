import { mergeConfig } from 'vitest/config'
import shared from '../../vitest.shared.ts'

// the global setup points Vulkan at SwiftShader in the main process, whose environment the
// test threads (and Dawn inside them) share
export default mergeConfig(shared, { test: { globalSetup: ['./vitest.setup.ts'] } })
