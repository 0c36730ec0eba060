/**
 * Vitest global setup of the packages whose tests run WebGPU in Node (Dawn, the `webgpu` package):
 * on machines without a GPU, Dawn finds the SwiftShader Vulkan driver through VK_ICD_FILENAMES.
 * It runs in the main process, whose environment the test threads (and Dawn inside them) share;
 * setting it inside a test thread would not reach the native loader.
 */
import { existsSync } from 'node:fs'

/** Where Debian's chromium package puts the SwiftShader Vulkan driver. */
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json'

/** Points the Vulkan loader at SwiftShader when nothing else is configured (machines without a GPU). */
export default function setup(): void {
  if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD
}
