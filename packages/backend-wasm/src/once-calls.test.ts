/**
 * `inlineOnceCalls` (see once-calls.ts): the printed IR before and after (a top-level call of a
 * callee with a loop is inlined, with its callee's own top-level calls; calls in loops and
 * uncalls stay calls), and the wasm module against the interpreter with run-time checks on and
 * off, forwards and backwards, including a failed check inside an inlined body (the same error,
 * with the user's names and the callee's source location).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction } from '@tenet/ir'
import { inlineSmallCalls } from '@tenet/ir/backend'
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
    // before: the small-call inliner left the top-level call of \`fact\` (whose body has a loop)
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
})
