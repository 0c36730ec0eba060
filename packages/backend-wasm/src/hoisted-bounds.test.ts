/**
 * `hoisted-bounds.ts`: without run-time checks, the bounds checks of loop-affine indices run once
 * before their loops (printed IR before and after), the other accesses keep their guard, and an
 * index out of range still fails with `runtime/out-of-bounds` at its location.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type FunctionDef, type Stmt } from '@tenet/ir'
import { walk } from '@tenet/ir/backend'
import { compileModule, invert, preprocess } from '@tenet/reversible'
import { hoistedBoundsOnly } from './hoisted-bounds.js'
import { createWasmBackend, wasmBackend } from './index.js'

const source = `fn f(y: f64[], x: f64[], p: i32[], n: i32) {
  for i in 0..n {
    y[i] += x[2 * i + 1] * x[p[i]]
    y[i + 1] -= x[i] - x[i + 1]
  }
}`

function program(text: string) {
  const m = parse({ text, name: 'hb' })
  const p = check(m.functions.map(preprocess), m.hosts, createRegistry())
  const inverses = new Map([...p.functions].map(([n, f]) => [n, invert(f)]))
  return { p, inverses }
}

/** The accesses of a function, printed with their marks. */
function accesses(f: FunctionDef): string[] {
  const out: string[] = []
  const visit = (e: unknown): void => {
    if (!e || typeof e !== 'object') return
    const x = e as { kind?: string; array?: { name: string }; index?: unknown; inBounds?: boolean }
    if (x.kind === 'index') out.push(`${x.array!.name}${x.inBounds ? ' (in bounds)' : ''}`)
    for (const v of Object.values(x)) if (v && typeof v === 'object') visit(v)
  }
  walk(f.body, (s: Stmt) => {
    if (s.kind !== 'assert' && s.kind !== 'for') visit(s)
  })
  return out.sort()
}

describe('hoisted bounds without run-time checks', () => {
  it('checks loop-affine indices once before the loop and leaves the rest to the guard of each access', () => {
    const { p, inverses } = program(source)
    const before = printFunction(p.functions.get('f')!)
    const out = hoistedBoundsOnly(p, inverses, { checks: false, tolerance: 1e-9 })
    const f = out.program.functions.get('f')!
    const after = printFunction(f)
    expect(before).not.toContain('assert')
    // four hoisted asserts per affine index (two ends each), all before the loop; none inside it
    const loop = f.body.find((s) => s.kind === 'for')!
    expect(f.body.filter((s) => s.kind === 'assert').length).toBeGreaterThan(0)
    let inside = 0
    walk((loop as { body: Stmt[] }).body, (s) => {
      if (s.kind === 'assert') inside++
    })
    expect(inside).toBe(0)
    expect(after).toMatch(/assert outOfBounds\(/)
    // x[p[i]] has an index read from memory: not hoisted, so not marked; p[i] is, y[i], x[2i + 1] too
    expect(accesses(f)).toEqual([
      'p (in bounds)',
      'x',
      'x (in bounds)',
      'x (in bounds)',
      'x (in bounds)',
      'y (in bounds)',
      'y (in bounds)',
    ])
    // the inverse gets the same treatment
    expect(printFunction(out.inverses.get('f')!)).toMatch(/assert outOfBounds\(/)
  })

  it('spells out offset ancillas (generated code indexes from them), so that their accesses hoist too', () => {
    const text = `fn h(y: f64[], x: f64[], m: i32[], n: i32) {
  for i in 0..n {
    p: i32 <- i * 2
    for c in 0..2 {
      o: i32 <- (p + c) * 3
      y[o + 2] += x[o + 1] * x[c]
      o -> (p + c) * 3
    }
    q: i32 <- m[i]
    y[q] += 1.0
    q -> m[i]
    p -> i * 2
  }
}`
    const { p, inverses } = program(text)
    const out = hoistedBoundsOnly(p, inverses, { checks: false, tolerance: 1e-9 })
    const h = out.program.functions.get('h')!
    const printed = printFunction(h)
    // the inner loop's asserts went before it, then (affine in i through p) before the outer one
    const outer = h.body.find((s) => s.kind === 'for') as { body: Stmt[] }
    const inner = outer.body.find((s) => s.kind === 'for') as { body: Stmt[] }
    expect(inner.body.some((s) => s.kind === 'assert')).toBe(false)
    expect(printed).toMatch(/assert outOfBounds\(/)
    // y[q] (q read from m) keeps its guard; the rest are marked
    expect(accesses(h)).toEqual([
      'm (in bounds)',
      'm (in bounds)',
      'x (in bounds)',
      'x (in bounds)',
      'y',
      'y (in bounds)',
    ])
    // and the compiled program: right values, and an out-of-range offset fails before the loops
    const m = compileModule(parse({ text, name: 'hb' }), {
      registry: createRegistry().registerBackend(wasmBackend),
      backend: 'wasm',
      checks: false,
    })
    const x = Float64Array.from({ length: 12 }, (_, k) => k + 1)
    const y = new Float64Array(12)
    m.h!(y, x, new Int32Array([0, 1]), 2)
    const want = new Float64Array(12)
    for (let i = 0; i < 2; i++) {
      for (let c = 0; c < 2; c++) want[(2 * i + c) * 3 + 2]! += x[(2 * i + c) * 3 + 1]! * x[c]!
      want[[0, 1][i]!]! += 1
    }
    expect(Array.from(y)).toEqual(Array.from(want))
    expect(() => m.h!(new Float64Array(12), x, new Int32Array([0, 1, 2]), 3)).toThrow(/out of bounds for `[xy]`/)
  })

  it('keeps alias pairs on their statements, and checks nothing else', () => {
    const { p, inverses } = program(
      'fn g(x: f64[], i: i32, j: i32, t: f64) { x[i] += x[j] * t\n a: f64 <- t\n a -> t }',
    )
    const out = hoistedBoundsOnly(p, inverses, { checks: false, tolerance: 1e-9 })
    const g = out.program.functions.get('g')!
    expect(g.body.some((s) => s.kind === 'assert')).toBe(false)
    const u = g.body.find((s) => s.kind === 'update') as { distinct?: unknown[] }
    expect(u.distinct).toHaveLength(1)
  })

  it.each([
    ['hoisted (hoistBounds: true)', createWasmBackend({ hoistBounds: true })],
    ['guarded at each access (the default)', wasmBackend],
  ])('an index out of range fails with runtime/out-of-bounds and its location, %s', (_, backend) => {
    const m = compileModule(parse({ text: source, name: 'hb' }), {
      registry: createRegistry().registerBackend(backend),
      backend: 'wasm',
      checks: false,
    })
    const y = new Float64Array(5),
      x = Float64Array.from({ length: 9 }, (_, i) => i + 1)
    const p = new Int32Array([0, 1, 2, 3])
    m.f!(y, x, p, 4)
    // y[i] += x[2i + 1]·x[p[i]]; then y[i + 1] −= x[i] − x[i + 1] = −1 (i ≥ 0)
    const want = new Float64Array(5)
    for (let i = 0; i < 4; i++) {
      want[i]! += (2 * i + 2) * (p[i]! + 1)
      want[i + 1]! += 1
    }
    expect(Array.from(y)).toEqual(Array.from(want))
    const fails = (run: () => void): { code: string; message: string } => {
      try {
        run()
      } catch (e) {
        return e as { code: string; message: string }
      }
      throw new Error('no error')
    }
    // x[2i + 1] at i = 4 is x[9] (hoisted: fails before the loop)
    const e1 = fails(() => m.f!(new Float64Array(6), x, new Int32Array(5), 5))
    expect(e1.code).toBe('runtime/out-of-bounds')
    expect(e1.message).toMatch(/at 3:13/)
    // x[p[i]] with p[2] = 40 (guarded at the access)
    const e2 = fails(() => m.f!(new Float64Array(5), x, new Int32Array([0, 1, 40, 0]), 4))
    expect(e2.code).toBe('runtime/out-of-bounds')
    expect(e2.message).toMatch(/40/)
  })
})
