import { existsSync } from 'node:fs'

/** Where Debian's chromium package puts the SwiftShader Vulkan driver. */
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json'

/** Points the Vulkan loader at SwiftShader when nothing else is configured (machines without a GPU). */
export default function setup(): void {
  if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD
}
