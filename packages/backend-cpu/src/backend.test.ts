import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetFunction } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

const source = `
fn kernel(y: f64, z: f32, x: f64[], k: i32[], flags: bool[], n: i32, b: bool) {
  routine {
    t <- 0.0
    t += sin(y) * 2.0 + x[4] ** 2
  }
  for i in 0..len(x) - 1 by 2 { x[i] += t * f64(k[i]) }
  for i in n..=0 by -1 { k[i] ^= i * 7 + 1 }
  z += f32(t)
  flags[1] ^= b || x[0] > 1.0
  if (flags[1], ~) { ROT(x[0], x[1], y) } else { HADAMARD(x[2], x[3]) }
  ~routine
  s: stack<f64> <- []
  push(s, y)
  y += 1.5
  ~helper(y, n)
  pop(s, t2)
  s -> []
}
fn helper(a: f64, m: i32) {
  w: i32 <- 0
  while (w < m, w > 0) { a += f64(w); INC(w) }
  w -> m
}`

describe('cpu backend', () => {
  it('agrees with the interpreter bit for bit, forwards and backwards', () => {
    // pop into a fresh name is not allowed: use a variant that pops back into y
    const src = source
      .replace('pop(s, t2)', 'NEG(y)')
      .replace('  push(s, y)\n', '')
      .replace('  s: stack<f64> <- []\n', '')
      .replace('  s -> []\n', '')
    const results = ['cpu', 'interpreter'].map((backend) => {
      const m = compileModule(parse(src), { registry, backend })
      const x = Float64Array.from([0.3, -1.2, 2.5, 0.7, 1.1])
      const k = Int32Array.from([3, -2, 5, 1, 9])
      const flags = new Uint8Array(3)
      const fwd = m.kernel!(0.8, 0.25, x, k, flags, 3, true) as unknown[]
      const snapshot = [fwd[0], fwd[1], Array.from(x), Array.from(k), Array.from(flags)]
      const back = m.kernel!.inverse(...fwd) as unknown[]
      return { snapshot, back: [back[0], back[1], Array.from(x), Array.from(k), Array.from(flags)] }
    })
    expect(results[0]).toEqual(results[1])
    const back = results[0]!.back as [number, number, number[], number[], number[]]
    expect(back[0]).toBeCloseTo(0.8, 14) // floats: += then -= may leave round-off
    expect(back[1]).toBeCloseTo(0.25, 6) // f32
    back[2].forEach((v, i) => expect(v).toBeCloseTo([0.3, -1.2, 2.5, 0.7, 1.1][i]!, 14))
    expect(back.slice(3)).toEqual([
      [3, -2, 5, 1, 9],
      [0, 0, 0],
    ]) // integers and bools: exact
  })

  it('generates names of its own: user identifiers never reach the generated code', () => {
    const m = compileModule(parse('fn f(constructor: f64, __proto__: f64) { constructor += __proto__ }'), {
      registry,
      backend: 'cpu',
    })
    expect(m.f!(1, 2)).toEqual([3, 2])
  })

  it('squares a compound base where the expression stands, so && and || still short-circuit', () => {
    // (x[i] - 1.0) ** 2 is read only when i is in bounds; hoisting it failed the index check
    const text =
      'fn f(flag: bool, x: f64[], i: i32) { flag ^= (i < len(x)) && ((x[i] - 1.0) ** 2 > 0.0)\n flag ^= (i >= len(x)) || ((x[i] + 2.0) ** 2 > 1.0) }'
    const run = (backend: string, i: number) =>
      compileModule(parse({ text, name: 'sq' }), { registry, backend, checks: true }).f!(
        false,
        Float64Array.from([3]),
        i,
      )
    for (const i of [0, 5]) expect(run('cpu', i)).toEqual(run('interpreter', i))
  })

  it('writes scalar results into a preallocated buffer', () => {
    const m = compileModule(parse('fn f(a: f64, b: i32, c: bool) { a += 1.0; INC(b); c ^= true }'), {
      registry,
      backend: 'cpu',
    })
    const core = m.f!.core
    core(1, 2, false)
    expect(Array.from(core.results)).toEqual([2, 3, 1])
  })
})

describe('results of the scalars a function never writes', () => {
  const bodyOf = (m: Record<string, unknown>, name: string) => {
    const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
      compiled: { sourceOf(n: string, inv: boolean): string }
    }
    return info.compiled.sourceOf(name, false).split('\n').slice(1)
  }

  it('are stored on entry, before the body, in a function that cannot reach itself', () => {
    const m = compileModule(parse('fn f(y: f64, x: f64, n: i32) { for i in 0..n { y += x * f64(i) } }'), {
      registry,
      backend: 'cpu',
    })
    const body = bodyOf(m, 'f')
    expect(body[0]).toMatch(/^ {2}RF[0-9]+\[1\] = p1;$/)
    expect(body[1]).toMatch(/^ {2}RF[0-9]+\[2\] = p2;$/)
    expect(body.findIndex((l) => /\[0\] = p0;/.test(l))).toBeGreaterThan(body.findIndex((l) => l.includes('for (')))
    const core = m.f!.core
    core(0.5, 2, 4)
    expect(Array.from(core.results)).toEqual([0.5 + 2 * 6, 2, 4])
  })

  it('stay at the end of a recursive function: an inner call must not leave its own value for the outer call', () => {
    const src = `
fn down(acc: f64, n: i32) { if (n > 0, ~) { acc += f64(n); down(acc, n - 1) } }
fn ping(acc: f64, n: i32) { if (n > 0, ~) { acc += 1.0; pong(acc, n - 1) } }
fn pong(acc: f64, n: i32) { if (n > 0, ~) { acc += 2.0; ping(acc, n - 1) } }`
    for (const backend of ['cpu', 'interpreter']) {
      const m = compileModule(parse(src), { registry, backend })
      for (const [name, acc] of [
        ['down', 6],
        ['ping', 4],
      ] as const) {
        const core = m[name]!.core
        core(0, 3)
        expect([backend, name, Array.from(core.results)]).toEqual([backend, name, [acc, 3]])
        expect(m[name]!(0, 3)).toEqual([acc, 3])
      }
    }
  })

  it('stay at the end of a function that calls out to JS (and of its callers): the callback may call it again', () => {
    const m: Record<string, TenetFunction> = {}
    let depth = 0
    // on its first call, the host function calls the Tenet function again with another n
    const reenter = (name: string) => () => {
      if (depth++ === 0) m[name]!(0, 7)
      return 0
    }
    const src = 'fn f(y: f64, n: i32) { y += f64(n)\n @safe ${0}() }\nfn g(y: f64, n: i32) { f(y, n) }'
    for (const name of ['f', 'g']) {
      Object.assign(m, compileModule(parse(src, [reenter(name)]), { registry, backend: 'cpu' }))
      depth = 0
      expect([name, m[name]!(0, 3)]).toEqual([name, [3, 3]])
      expect(depth).toBe(2)
    }
  })
})

describe('inlining of small leaf functions', () => {
  const src = `
fn imul(out: f64, x: f64, anc: f64) {
  anc += out * x
  out -= anc / x
  SWAP(out, anc)
}
fn step(a: f64[], i: i32, t: f64) {
  k: i32 <- i
  a[k] += t * 2.0
  k -> i
}
fn outer(y: f64, x: f64, z: f64, a: f64[], n: i32) {
  imul(y, x, z)
  for i in 0..n { step(a, i, y) }
  ~imul(y, x, z)
  step(a, n - 1, -1.5)
}`
  it('gives the same results as the interpreter, forwards and backwards', () => {
    const out = ['cpu', 'interpreter'].map((backend) => {
      const m = compileModule(parse(src), { registry, backend })
      const a = new Float64Array([1, 2, 3])
      const fwd = m.outer!(2, 3, 0, a, 3) as unknown[]
      const after = Array.from(a)
      m.outer!.inverse(...fwd)
      return [fwd.slice(0, 3), after, Array.from(a)]
    })
    expect(out[0]).toEqual(out[1])
  })
  it('leaves no call to an inlined function in the generated code', () => {
    const m = compileModule(parse(src), { registry, backend: 'cpu' })
    const info = m.outer![Symbol.for('tenet.function') as never] as {
      compiled: { sourceOf(n: string, inv: boolean): string }
    }
    const code = info.compiled.sourceOf('outer', false).split('\n').slice(1).join('\n') // the body
    expect(code).not.toMatch(/\bF[0-9]+\(/)
    expect(code).not.toMatch(/\bB[0-9]+\(/)
  })
})
