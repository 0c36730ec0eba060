/**
 * V8's *protectors*: isolate-wide promises that let optimised code skip checks — no ArrayBuffer
 * has ever been detached, `Array.prototype` holds no elements, and so on. The first time one is
 * broken, V8 throws away the code that relied on it, and all code compiled afterwards in that
 * process carries the checks. The one that matters for the suite is `ArrayBufferDetaching`: a wasm
 * `memory.grow` (the old buffer is detached), a transfer (`postMessage`, `structuredClone` with
 * `transfer`) or a WebGPU buffer unmapped after a map breaks it, and from then on typed-array
 * loops run slower in that process (a dot-product-and-exp loop over Float64Arrays: 175–188 ms of
 * CPU before, 255–265 ms after, on the 2-core development machine; the GMM 10k gradient 64 → 99
 * ms). Growing a *shared* wasm memory or resizing a resizable ArrayBuffer detaches nothing.
 *
 * There is no JS API to ask whether a protector still holds, but with
 * `--trace-protector-invalidation` V8 prints `Invalidating protector cell <Name>` on stdout when
 * one breaks, and flushes it at once. A process whose stdout is a file can read that file back
 * to learn which protectors are gone, and when.
 */
import { readFileSync } from 'node:fs'

/** The V8 flag that makes a process report protector invalidations on its stdout. */
export const PROTECTOR_FLAG = '--trace-protector-invalidation'

/** The protector a detached ArrayBuffer breaks. */
export const DETACH_PROTECTOR = 'ArrayBufferDetaching'

/** The protectors a log names as invalidated, in order, each once. */
export function invalidatedProtectors(log: string): string[] {
  const seen = new Set<string>()
  for (const m of log.matchAll(/^Invalidating protector cell (\w+)/gm)) seen.add(m[1]!)
  return [...seen]
}

/** Reads, on demand, which protectors the log file at `path` says are gone (an absent file: none). */
export function protectorLog(path: string): { read(): string[] } {
  return {
    read() {
      try {
        return invalidatedProtectors(readFileSync(path, 'latin1'))
      } catch {
        return []
      }
    },
  }
}
