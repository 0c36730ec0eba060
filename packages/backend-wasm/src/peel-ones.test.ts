/**
 * Peeled first iterations of counting loops from a literal (see `peel-ones.ts`): which loops are peeled,
 * that the Bessel series' factorial is (the diagnostic count), and that the results and the errors
 * are the reference interpreter's with the run-time checks on and off, for loops that run no
 * iteration, one, and several (forwards and backwards).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, type Stmt } from '@tenet/ir'
import { compileModule, preprocess } from '@tenet/reversible'
import { besselSource } from '@tenet/testing'
import { createWasmBackend } from './index.js'
import { peelsFirstIteration } from './peel-ones.js'
import { compile, expectSameRuns } from './test-util.js'
import type { WasmProgram } from './backend.js'

const registry = createRegistry()
/** The first statement of f's body (a loop) in `body`, a function of x, y: f64, n, m: i32, a: f64[]. */
function loopOf(body: string): Extract<Stmt, { kind: 'for' }> {
  const m = parse({ text: `fn f(x: f64, y: f64, n: i32, m: i32, a: f64[]) {\n${body}\n}`, name: 'p' })
  const f = check(m.functions.map(preprocess), m.hosts, registry).functions.get('f')!
  const s = f.body.find((st) => st.kind === 'for')
  if (s?.kind !== 'for') throw new Error('no loop')
  return s
}

describe('peel-ones', () => {
  it('peels loops from a literal ≥ 1 whose body multiplies or divides by the variable', () => {
    for (const body of [
      'for i in 2..=n { x *= f64(i) }',
      'for i in 7..n { y += x / f64(i) }',
      'for i in 1..=n { x *= f64(i) }',
      'for i in 1..n { y += x / f64(i) }',
      'for i in 1..=n { m += div(n, i) }',
      'for i in 1..=n { y += f64(i) * x }',
      'for k in 1..=n { if (x > 0.0, ~) { y += x * f64(k) } }',
    ])
      expect([body, peelsFirstIteration(loopOf(body))]).toEqual([body, true])
  })

  it('leaves loops from elsewhere, by other steps, with loops inside, long, or without such a product', () => {
    for (const body of [
      'for i in 0..n { y += x * f64(i) }',
      'for i in -5..n { y += x * f64(i) }',
      'for i in m..n { y += x * f64(i) }',
      // (the copy's increment would wrap)
      'for i in 2147483647..=n { y += x * f64(i) }',
      'for i in 1..n by 2 { y += x * f64(i) }',
      'for i in 1..n { y += x + f64(i) }',
      'for i in 1..n { for j in 0..m { y += x * f64(i) } }',
      `for i in 1..n { ${Array.from({ length: 13 }, () => 'y += x * f64(i)').join('\n')} }`,
    ])
      expect([body, peelsFirstIteration(loopOf(body))]).toEqual([body, false])
  })

  it('peels the factorial at the head of the Bessel series (after inlining), not with `peelOnes: false`', () => {
    const peeled = (peelOnes: boolean) => {
      let count = -1
      const spec = createWasmBackend({ peelOnes })
      const wasm = {
        ...spec,
        doCompile: (...a: Parameters<typeof spec.doCompile>) => {
          const p = spec.doCompile(...a) as WasmProgram
          count = p.peeledLoops
          return p
        },
      }
      const m = compileModule(parse({ text: besselSource, name: 'b' }), {
        registry: createRegistry().registerBackend(wasm),
        backend: 'wasm',
        checks: false,
      })
      expect((m.ibesselj!(0, 2, 1) as number[])[0]).toBeCloseTo(0.1149034849319005, 10)
      return count
    }
    expect(peeled(true)).toBeGreaterThan(0)
    expect(peeled(false)).toBe(0)
  })

  const source = `fn imul_int(out: i32, x: i32, anc: i32) {
  anc += out * x
  out -= div(anc, x)
  SWAP(out, anc)
}
fn f(out: i32, n: i32, x: f64, y: f64) {
  anc: i32 <- 0
  out += 1
  for i in 1..=n { imul_int(out, i, anc) }
  anc -> 0
  for i in 1..n { x *= f64(i) }
  for k in 1..=n { y += x / f64(k) }
  for k in 2..=n { y -= x / f64(k) }
  for k in 3..n { y += f64(k) * x }
}`

  it('computes what the interpreter does, forwards and backwards, checks on and off', () => {
    const modules = [
      compile(source, 'interpreter'),
      compile(source, 'cpu'),
      compile(source, 'wasm'),
      compile(source, 'wasm', true),
      compile(source, 'wasm', false, true, undefined, { peelOnes: false }),
    ]
    for (const n of [-3, -1, 0, 1, 2, 3, 7]) expectSameRuns(modules, () => [0, n, 1.5, -0.25])
  })

  it('fails where the interpreter fails, in the peeled iteration and later ones', () => {
    // f's deallocation fails in the second iteration when x is not 0 (t = x·(i−1)), g's in the
    // first (t = x·i, not 2x)
    const failing = `fn f(n: i32, x: f64) {
  for i in 1..=n {
    t <- 0.0
    t += x * f64(i - 1)
    t += x * f64(i)
    t -= x * f64(i)
    t -> 0.0
  }
}
fn g(n: i32, x: f64) {
  for i in 1..=n {
    t <- 0.0
    t += x * f64(i)
    t -> x * 2.0
  }
}`
    const outcome = (m: ReturnType<typeof compile>, entry: string, args: number[]) => {
      try {
        return JSON.stringify(m[entry]!(...args))
      } catch (e) {
        return `${(e as { code?: string }).code} ${(e as Error).message}`
      }
    }
    const modules = [
      compile(failing, 'interpreter', true),
      compile(failing, 'wasm', true),
      compile(failing, 'wasm', true, true, undefined, { peelOnes: false }),
    ]
    const seen = new Set<string>()
    for (const entry of ['f', 'g'])
      for (const args of [
        [0, 1.5],
        [1, 0],
        [1, 1.5],
        [3, 1.5],
        [3, 0],
      ]) {
        const [ref, ...others] = modules.map((m) => outcome(m, entry, args))
        for (const o of others) expect([entry, args, o]).toEqual([entry, args, ref])
        seen.add(ref!.split(' ')[0]!)
      }
    // (both kinds of outcome occur: results, and the deallocation's error)
    expect(seen.size).toBeGreaterThan(1)
  })
})
