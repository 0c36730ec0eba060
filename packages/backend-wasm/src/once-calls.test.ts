/**
 * `inlineOnceCalls` (see once-calls.ts): the printed IR before and after (a top-level call of a
 * callee with a loop is inlined, with its callee's own top-level calls; calls in loops and
 * uncalls stay calls), and the wasm module against the interpreter with run-time checks on and
 * off, forwards and backwards, including a failed check inside an inlined body (the same error,
 * with the user's names and the callee's source location). With checks on a call of an exact
 * function stays a call through the passes (so that `exact-uncompute` and
 * `hoist-lane-calls` see it) and is inlined after them, its checks placed.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction } from '@tenet/ir'
import { exactFunctions, inlineSmallCalls, optimize } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, invert } from '@tenet/reversible'
import { createWasmBackend } from './index.js'
import { inlineOnceCalls } from './once-calls.js'
import { exact } from './test-util.js'

/** A factorial by the approximate integer multiplier (paper 001's), called once and in a loop. */
const source = `fn imul(out: i32, x: i32, anc: i32) {
  anc += out * x
  out -= div(anc, x)
  SWAP(out, anc)
}
fn fact(out: i32, n: i32) {
  anc <- 0
  out += 1
  for i in 1..=n { imul(out, i, anc) }
  anc -> 0
}
fn scaled(y: f64, n: i32, z: f64) {
  f <- 0
  fact(f, n)
  y += z / f64(f)
  ~fact(f, n)
  f -> 0
}
fn looped(y: f64, n: i32, z: f64) {
  for j in 0..2 {
    f <- 0
    fact(f, n)
    y += z / f64(f)
    ~fact(f, n)
    f -> 0
  }
}`

const registry = createRegistry()

describe('inlineOnceCalls', () => {
  it('inlines the calls a function makes once, with their own; not those in loops, nor uncalls', () => {
    const p = check(parse(source, []).functions, [], registry)
    const small = inlineSmallCalls(p, new Map([...p.functions].map(([name, f]) => [name, invert(f)])))
    // before: the small-call inliner left the top-level call of `fact` (whose body has a loop)
    expect(printFunction(small.program.functions.get('scaled')!)).toBe(`fn scaled(y: f64, n: i32, z: f64) {
  f <- 0
  fact(f, n)
  y += z / f64(f)
  ~fact(f, n)
  f -> 0
}`)
    const out = inlineOnceCalls(small.program, small.inverses).program.functions
    expect(printFunction(out.get('scaled')!)).toBe(`fn scaled(y: f64, n: i32, z: f64) {
  f <- 0
  $top0$anc <- 0
  f += 1
  for $top0$i in 1..=n {
    $top0$anc += f * $top0$i
    f -= div($top0$anc, $top0$i)
    SWAP(f, $top0$anc)
  }
  $top0$anc -> 0
  y += z / f64(f)
  ~fact(f, n)
  f -> 0
}`)
    // a call in a loop runs more than once: it stays a call
    expect(printFunction(out.get('looped')!)).toBe(printFunction(small.program.functions.get('looped')!))
    // nothing to inline: the same objects back
    const leaf = check(parse('fn g(a: f64) { a += 1.0 }', []).functions, [], registry)
    const same = inlineOnceCalls(leaf, new Map())
    expect(same.program).toBe(leaf)
  })

  for (const checks of [false, true]) {
    it(`computes what the interpreter computes, forwards and backwards, checks ${checks ? 'on' : 'off'}`, () => {
      const run = (backend: 'wasm' | 'interpreter') => {
        const m = compileModule(parse({ text: source, name: 'once' }), {
          registry: createRegistry().registerBackend(createWasmBackend()).registerBackend(interpreterBackend),
          backend,
          checks,
        })
        const out: unknown[] = []
        for (const name of ['scaled', 'looped'])
          for (const args of [
            [0.25, 4, 1.5],
            [1, 0, -2],
            [-3, 7, 0.125],
          ]) {
            const f = m[name]!
            const fwd = f(...args)
            out.push([fwd, f.inverse(...fwd)].map((r) => r.map(exact)))
          }
        return { out: JSON.stringify(out) }
      }
      expect(run('wasm').out).toBe(run('interpreter').out)
    })
  }

  it('a failed check in an inlined body raises the callee’s error, in the user’s names', () => {
    const bad = `fn seed(a: f64, n: i32) {
  t <- 0.0
  t += f64(n)
  a += t
  t -> 1.0
}
fn caller(y: f64, n: i32) {
  seed(y, n)
}`
    const errorOf = (backend: 'wasm' | 'interpreter') => {
      const m = compileModule(parse({ text: bad, name: 'bad' }), {
        registry: createRegistry().registerBackend(createWasmBackend()).registerBackend(interpreterBackend),
        backend,
        checks: true,
      })
      try {
        m.caller!(0.5, 3)
      } catch (e) {
        return (e as Error).message
      }
      return 'no error'
    }
    const message = errorOf('wasm')
    expect(message).not.toMatch(/\$top/)
    expect(message).toContain('5:3')
    expect(message).toBe(errorOf('interpreter'))
  })

  it('with checks on, keeps the calls of exact functions for the passes, and inlines them after', () => {
    const p = check(parse(source, []).functions, [], registry)
    const small = inlineSmallCalls(p, new Map([...p.functions].map(([name, f]) => [name, invert(f)])))
    const kept = inlineOnceCalls(small.program, small.inverses, (callee) => callee !== 'fact')
    // `fact` is exact (integer updates, SWAP, a loop): its call stays a call
    expect(printFunction(kept.program.functions.get('scaled')!)).toBe(
      printFunction(small.program.functions.get('scaled')!),
    )
    // so that `exact-uncompute` (checks on) turns its uncall into `f -= f`
    const optimized = optimize(kept.program, kept.inverses, { checks: true, tolerance: 1e-10 })
    expect(printFunction(optimized.program.functions.get('scaled')!)).toBe(`fn scaled(y: f64, n: i32, z: f64) {
  f <- 0
  fact(f, n)
  y += z / f64(f)
  f -= f
  f -> 0
}`)
    // and the call, still made once, is inlined afterwards (the backend: after the checks are placed)
    const late = inlineOnceCalls(optimized.program, optimized.inverses, (callee) => callee === 'fact')
    expect(printFunction(late.program.functions.get('scaled')!)).toBe(`fn scaled(y: f64, n: i32, z: f64) {
  f <- 0
  $top0$anc <- 0
  f += 1
  for $top0$i in 1..=n {
    $top0$anc += f * $top0$i
    f -= div($top0$anc, $top0$i)
    SWAP(f, $top0$anc)
  }
  $top0$anc -> 0
  y += z / f64(f)
  f -= f
  f -> 0
}`)
    // the backend's choice: the exact functions (`fact` and the multiplier it calls), by `exactFunctions`
    expect([...exactFunctions(small.program.functions.values())].sort()).toEqual(['fact', 'imul'])
    // a callee that is not exact (a float update) is not among them: inlined at once, as with checks off
    const mixed = check(
      parse(
        `fn seed(a: f64, n: i32) {
  t <- 0.0
  for i in 0..n { t += 1.0 }
  a += t
  for i in 0..n { t -= 1.0 }
  t -> 0.0
}
fn caller(y: f64, n: i32) {
  seed(y, n)
}`,
        [],
      ).functions,
      [],
      registry,
    )
    const inv = new Map([...mixed.functions].map(([name, f]) => [name, invert(f)]))
    const exactMixed = exactFunctions(mixed.functions.values())
    expect(exactMixed.has('seed')).toBe(false)
    const once = inlineOnceCalls(mixed, inv, (callee) => !exactMixed.has(callee)).program.functions.get('caller')!
    expect(printFunction(once)).not.toContain('seed(')
  })

  it('a failed check in an exact callee inlined after the passes raises the interpreter’s error, in the user’s names', () => {
    const text = `fn tally(out: i32, n: i32) {
  t: i32 <- 0
  t += n
  out += t
  t -> 1
}
fn caller(y: f64, n: i32) {
  c: i32 <- 0
  tally(c, n)
  y += f64(c)
  ~tally(c, n)
  c -> 0
}`
    const run = (backend: 'wasm' | 'interpreter', n: number) => {
      const m = compileModule(parse({ text, name: 'tally' }), {
        registry: createRegistry().registerBackend(createWasmBackend()).registerBackend(interpreterBackend),
        backend,
        checks: true,
      })
      try {
        const r = m.caller!(0.5, n)
        return JSON.stringify([r, m.caller!.inverse(...r)].map((x) => x.map(exact)))
      } catch (e) {
        return (e as Error).message
      }
    }
    // t -> 1 holds for n = 1 only: the call passes, and its uncall (`c -= c` after the pass)
    expect(run('wasm', 1)).toBe(run('interpreter', 1))
    expect(run('wasm', 1)).not.toMatch(/error/i)
    const message = run('wasm', 3)
    expect(message).not.toMatch(/\$top/)
    expect(message).toContain('5:3')
    expect(message).toBe(run('interpreter', 3))
  })

  it('an exact call left inside an inlined body gets locals of its own when inlined after the passes', () => {
    // `outer` (not exact: a float local `anc`) is inlined at once into `top`; the call of `fact`
    // it makes stays a call through the passes, inside its body, where `outer`'s `anc` is live;
    // inlined after them, `fact`'s own `anc` must not be `outer`'s
    const text = `${source}
fn outer(y: f64, n: i32, z: f64) {
  anc <- 0.0
  anc += z
  f <- 0
  fact(f, n)
  y += anc / f64(f)
  ~fact(f, n)
  f -> 0
  anc -= z
  anc -> 0.0
}
fn top(y: f64, n: i32, z: f64) {
  outer(y, n, z)
}`
    const p = check(parse(text, []).functions, [], registry)
    const small = inlineSmallCalls(p, new Map([...p.functions].map(([name, f]) => [name, invert(f)])))
    const exactNames = exactFunctions(small.program.functions.values())
    const early = inlineOnceCalls(small.program, small.inverses, (callee) => !exactNames.has(callee))
    const late = inlineOnceCalls(early.program, early.inverses, (callee) => exactNames.has(callee))
    const printed = printFunction(late.program.functions.get('top')!)
    expect(printed).toContain('$top0$anc <- 0.0')
    expect(printed).toContain('$top1$anc <- 0')
    // (the forward call inlined; the uncall, which `exact-uncompute` takes in the backend, stays)
    expect(printed).not.toMatch(/^ *fact\(/m)
    const run = (backend: 'wasm' | 'interpreter') => {
      const m = compileModule(parse({ text, name: 'nested' }), {
        registry: createRegistry().registerBackend(createWasmBackend()).registerBackend(interpreterBackend),
        backend,
        checks: true,
      })
      return JSON.stringify(
        [
          [0.25, 4, 1.5],
          [1, 0, -2],
          [-3, 6, 0.125],
        ].map((args) => {
          const r = m.top!(...args)
          return [r, m.top!.inverse(...r)].map((x) => x.map(exact))
        }),
      )
    }
    expect(run('wasm')).toBe(run('interpreter'))
  })
})
