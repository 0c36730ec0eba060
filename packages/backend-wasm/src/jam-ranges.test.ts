/**
 * Pass `jam` (see `@tenet/ir`) on loops whose first or last value lies at an end of the i32 range:
 * the pairs' stop and the trip count's parity are computed from the loop's last value, which
 * wraps for an empty `for i in a..b` with b = −2³¹ (its last value b − 1 is 2³¹ − 1). The pairs
 * run only where the range fits (`rangeFits`), the loop as written elsewhere. Before, such an empty
 * loop ran its pairs over the whole i32 range: a false out-of-bounds error with checks on, and
 * with checks off (cpu) 40 s of writes into the array. cpu and wasm against the interpreter, with
 * checks on and off, the error (or none) and the arrays after the call.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { raisedError } from '@tenet/testing'
import { createWasmBackend } from './index.js'

const MIN = -(2 ** 31),
  MAX = 2 ** 31 - 1

/** The loop heads, each with a body that `jam` pairs (`y[i]` one element per iteration, `x` by column). */
const heads = [
  'for i in a..b',
  'for i in a..=b',
  'for i in reverse a..b',
  'for i in a..=b by -1',
  'for i in a..b by -1',
  'for i in reverse a..=b',
  'for i in reverse a..b by -1',
  'for i in reverse a..=b by -1',
]
const source = (head: string) => `fn f(y: f64[], x: f64[], a: i32, b: i32, n: i32) {
  ${head} { for l in 0..n { ROT(y[i], x[l], 0.5) } }
}`
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend()).registerBackend(interpreterBackend)

type Module = { f: (...args: unknown[]) => void }
const modules = new Map<string, Module>()
const compiled = (head: string, backend: string, checks: boolean): Module => {
  const k = `${head}|${backend}|${checks}`
  let m = modules.get(k)
  if (!m) {
    m = compileModule(parse({ text: source(head), name: 'p' }), {
      registry: registry(),
      backend,
      checks,
    }) as unknown as Module
    modules.set(k, m)
  }
  return m
}

/** The error code (or "no error") and both arrays after `f(y, x, a, b, 2)`. */
function run(head: string, backend: string, checks: boolean, a: number, b: number): string {
  const m = compiled(head, backend, checks)
  const y = Float64Array.from({ length: 8 }, (_, i) => i + 1)
  const x = Float64Array.from([0.25, -1.5])
  const e = raisedError(() => m.f(y, x, a, b, 2)).split('\n')[0]
  return `${e} | ${[...y, ...x].join(',')}`
}

describe('jam: loops whose last value wraps', () => {
  // empty loops with a bound at an end of the range, one or two iterations next to it, and ranges
  // inside the arrays for reference
  const ranges: Array<[number, number]> = [
    [5, MIN],
    [0, MIN],
    [MIN, MIN],
    [MAX, 3],
    [MAX, MAX],
    [3, MAX],
    [MAX - 1, MAX],
    [1, 6],
    [6, 1],
    [2, 3],
    [MIN, MIN + 1],
    [MIN + 1, MIN],
    [MIN, MAX],
    [MAX, MIN],
    [MIN + 2, MIN],
    [MAX - 2, MAX],
    [MAX, MAX - 2],
    [7, 8],
    [8, 7],
    [6, 9],
    [9, 6],
    [-1, 2],
    [2, -1],
    [0, 8],
    [8, 0],
    [7, 0],
    [0, 7],
    [MIN, 4],
    [4, MIN],
    [MAX, 4],
    [4, MAX],
    [-(2 ** 30), 2 ** 30],
    [2 ** 30, -(2 ** 30)],
    [1, 2 ** 30 + 2],
    [2 ** 30 + 2, 1],
  ]
  for (const head of heads)
    it(head, () => {
      for (const [a, b] of ranges)
        for (const checks of [true, false]) {
          const ref = run(head, 'interpreter', checks, a, b)
          for (const backend of ['cpu', 'wasm']) {
            // with checks off, a program that reads out of range may do anything: only valid calls compare
            if (!checks && ref.startsWith('runtime/')) continue
            expect(`${backend} ${a}, ${b}, checks ${checks}: ${run(head, backend, checks, a, b)}`).toBe(
              `${backend} ${a}, ${b}, checks ${checks}: ${ref}`,
            )
          }
        }
    })
})
