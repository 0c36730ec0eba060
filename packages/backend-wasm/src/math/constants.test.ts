/**
 * The math routines' constants table (`constants.ts`): the routines read their double literals
 * from a table at a fixed place of every memory, written into each memory a module is compiled
 * into; the heap starts above it, so nothing else is put there.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { createWasmBackend } from '../index.js'
import { HEAP_START, RESULTS_BYTES } from '../memory.js'
import { MATH_CONSTANTS_AT, MATH_CONSTANTS_BYTES, mathConstantCount } from './constants.js'
import { MATH_ROUTINES } from './index.js'
import { mathModule } from './standalone.js'

const text = `fn f(y: f64[], x: f64[]) { for i in 0..len(x) { y[i] += exp(x[i]) + log(x[i] + 1.0) + sin(x[i]) } }`

/** A program of `text` compiled by a backend of its own (a memory of its own). */
const compile = () =>
  compileModule(parse({ text, name: 'consts' }), {
    registry: createRegistry().registerBackend(createWasmBackend()),
    backend: 'wasm',
    checks: false,
  }).f!.core

const xs = Float64Array.from({ length: 9 }, (_, i) => i * 0.37 - 1.2 + 1e-3)
const expected = Array.from(xs, (x) => Math.exp(x) + Math.log(x + 1) + Math.sin(x))

describe('the math constants table', () => {
  it('follows the results area, below the heap, and holds every routine’s constants', () => {
    expect(MATH_CONSTANTS_AT).toBe(RESULTS_BYTES)
    expect(HEAP_START).toBe(MATH_CONSTANTS_AT + MATH_CONSTANTS_BYTES)
    mathModule(Object.keys(MATH_ROUTINES))
    // every routine built: none of their literals was left out for want of room
    expect(mathConstantCount()).toBeGreaterThan(50)
    expect(8 * mathConstantCount()).toBeLessThanOrEqual(MATH_CONSTANTS_BYTES)
  })

  it('is what the routines read, and every memory gets its own copy', () => {
    // two backends, two memories; the routines (built once) read the table of their own memory
    const a = compile(),
      b = compile()
    for (const f of [a, b]) {
      const y = new Float64Array(xs.length)
      f(y, xs)
      expect(Array.from(y)).toEqual(expected)
      // resident arrays start above the table
      const r = f.resident!.allocate('f64', 4)
      expect(r.array.byteOffset).toBeGreaterThanOrEqual(HEAP_START)
      r.release()
    }
    // overwrite a's table: its results change (the routines read it), b's do not
    const table = new Float64Array(a.resident!.allocate('f64', 1).array.buffer, MATH_CONSTANTS_AT, mathConstantCount())
    const saved = table.slice()
    table.fill(0.5)
    try {
      const ya = new Float64Array(xs.length),
        yb = new Float64Array(xs.length)
      a(ya, xs)
      b(yb, xs)
      expect(Array.from(ya)).not.toEqual(expected)
      expect(Array.from(yb)).toEqual(expected)
    } finally {
      table.set(saved)
    }
    const y = new Float64Array(xs.length)
    a(y, xs)
    expect(Array.from(y)).toEqual(expected)
  })
})
