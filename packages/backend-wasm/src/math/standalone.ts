/**
 * A module of math routines alone, each exported under its name: what the tests and the
 * benchmark call to compare the routines with `Math.*` (a compiled Tenet program links them
 * into its own module instead).
 */
import { encodeModule, type Bytes } from '../encoder.js'
import { MathLibrary } from './index.js'
import { writeMathConstants } from './constants.js'

/** Instantiates the routines `names` (and those they call) and returns them by name. */
export function mathModule(names: string[]): Record<string, (...a: number[]) => number> {
  const calls: Array<[Bytes, number, number]> = []
  const lib = new MathLibrary(0, (body, at, target) => calls.push([body, at, target]))
  for (const n of names) lib.use(n)
  const functions = lib.functions()
  for (const [body, at, target] of calls) body.patchU32(at, target)
  names.forEach((n, k) => {
    functions[k]!.export = n
  })
  // (one page: the routines read their constants from the table in memory, see constants.ts)
  const bytes = encodeModule({ imports: [], functions, memoryPages: 1, globals: [] })
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {})
  writeMathConstants(instance.exports.memory as WebAssembly.Memory)
  return instance.exports as unknown as Record<string, (...a: number[]) => number>
}
