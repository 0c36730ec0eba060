import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printExpr, type Stmt } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { planLoopPairs } from './loop-pairs.js'
import { compile, expectSameRuns, lastPairs } from './test-util.js'

/** The body of the first loop of the only function of `text` (checked). */
function loopBody(text: string): { variable: string; body: Stmt[] } {
  const m = compileModule(parse({ text, name: 'pairs' }), {
    registry: createRegistry().registerBackend(cpuBackend),
    backend: 'cpu',
  })
  const loop = Object.values(m)[0]!.ir.body.find((s) => s.kind === 'for') as Extract<Stmt, { kind: 'for' }>
  return { variable: loop.variable, body: loop.body }
}

const params = 'g: f64[], x: f64[], y: f64[], c: f64, a: i32, b: i32, n: i32'
const plan = (stmts: string, accumulators = false) => {
  const { variable, body } = loopBody(`fn f(${params}) {\n for j in 0..n {\n${stmts}\n }\n}`)
  return planLoopPairs(variable, body, (name) => (['g', 'x', 'y'].includes(name) ? 'f64' : undefined), accumulators)
}

describe('planLoopPairs', () => {
  it('pairs the gradient loop of a distance: iterations j and j + 1, one guard for the two written indices', () => {
    const p = plan('g[a + j] += c * (x[a + j] - x[b + j])\n g[b + j] -= c * (x[a + j] - x[b + j])')
    expect(p).not.toBeNull()
    expect(p!.body).toHaveLength(4)
    const targets = p!.body.map((s) => printExpr((s as Extract<Stmt, { kind: 'update' }>).target as never))
    expect(targets).toEqual(['g[a + j]', 'g[a + j + 1]', 'g[b + j]', 'g[b + j + 1]'])
    expect(p!.guards.map(([u, v]) => [printExpr(u), printExpr(v)])).toEqual([['a + j', 'b + j']])
    // and g must not share memory with x (one typed array passed for both)
    expect(p!.apart).toEqual([['g', 'x']])
    // a constant offset folds, so that the two lanes' indices are neighbours for the lane pairs
    expect(
      printExpr((plan('g[j + 2] += x[a + j]')!.body[1] as Extract<Stmt, { kind: 'update' }>).target as never),
    ).toBe('g[j + 3]')
    // reads of other arrays need no guard; a known distance other than ±1 neither
    expect(plan('g[j] += x[j] * x[a]\n y[j + 4] += c * x[j + 1]')?.guards).toEqual([])
    expect(plan('g[j] += x[j] * c\n g[j + 2] += c * x[j + 1]')?.guards).toEqual([])
  })

  it('leaves loops it cannot keep exact to the scalar code', () => {
    // neighbours at a known distance collide in every pair
    expect(plan('g[j] += x[j] * c\n g[j + 1] += c * x[j + 1]')).toBeNull()
    // the loop variable outside an index, or in an index that is not c + j
    expect(plan('g[j] += f64(j) * c')).toBeNull()
    expect(plan('g[2 * j] += x[j] * c')).toBeNull()
    expect(plan('g[a - j] += x[j] * c')).toBeNull()
    // a written array read at an index that does not move with j (a loop-carried value)
    expect(plan('g[j] += x[j] * g[a]')).toBeNull()
    // an update that does not move with j, a scalar target, a statement that is not an update
    expect(plan('g[a] += x[j] * c')).toBeNull()
    expect(plan('c += x[j]')).toBeNull()
    expect(plan('SWAP(g[j], x[j])')).toBeNull()
  })
})

describe('planLoopPairs with accumulators', () => {
  it('pairs an update that adds into one place every iteration (a sum, a log-sum-exp)', () => {
    const p = plan('y[j] += x[j] - c\n g[a] += exp(y[j])', true)
    const targets = p!.body.map((s) => printExpr((s as Extract<Stmt, { kind: 'update' }>).target as never))
    expect(targets).toEqual(['y[j]', 'y[j + 1]', 'g[a]', 'g[a]'])
    // no guard for the accumulator; it must not share memory with the arrays the body reads
    expect(p!.guards).toEqual([])
    expect(p!.apart).toEqual(
      expect.arrayContaining([
        ['g', 'x'],
        ['g', 'y'],
      ]),
    )
    expect(plan('c += x[j] * x[j]', true)?.body).toHaveLength(2)
    // without the option, as before
    expect(plan('y[j] += x[j] - c\n g[a] += exp(y[j])')).toBeNull()
  })

  it('leaves an accumulator that another statement reads or writes, or whose place moves, to the scalar code', () => {
    // read by another statement (its order of additions would show)
    expect(plan('g[a] += x[j]\n y[j] += g[a] * c', true)).toBeNull()
    expect(plan('c += x[j]\n y[j] += c', true)).toBeNull()
    // two statements adding into it, or into the same array at a moving index
    expect(plan('g[a] += x[j]\n g[a] -= y[j]', true)).toBeNull()
    expect(plan('g[a] += x[j]\n g[j] += y[j]', true)).toBeNull()
    // its index reads what the body writes
    expect(plan('y[j] += x[j]\n g[b] += y[j]\n b += 1', true)).toBeNull()
  })
})

describe('paired loops in generated code', () => {
  // the adjoint of a distance's square, upwards and downwards, for any a, b (neighbours included)
  const src = (reverse: boolean) => `fn f(g: f64[], x: f64[], a: i32, b: i32, n: i32, c: f64) {
    for j in ${reverse ? 'reverse ' : ''}0..n {
      g[a + j] += c * (2.0 * (x[a + j] - x[b + j]))
      g[b + j] -= c * (2.0 * (x[a + j] - x[b + j]))
    }
  }`
  // values of many magnitudes, so that a changed order of the additions changes bits
  const g0 = Float64Array.from({ length: 40 }, (_, i) => Math.sin(3.1 * i) * 10 ** ((i % 7) - 3))
  const x0 = Float64Array.from({ length: 40 }, (_, i) => Math.cos(1.3 * i) * 10 ** ((i % 5) - 2))

  for (const reverse of [false, true]) {
    it(`runs ${reverse ? 'downward' : 'upward'} iterations in pairs with the bits of the scalar code and the cpu backend`, () => {
      const modules = [compile(src(reverse), 'wasm')]
      // f and its inverse (which runs the loop the other way) each pair their two statements
      expect(lastPairs).toBe(4)
      modules.push(compile(src(reverse), 'wasm', false, false), compile(src(reverse), 'cpu'))
      for (const [a, b] of [
        [0, 20],
        [20, 0],
        [3, 4],
        [4, 3],
        [5, 5],
        [0, 2],
        [10, 12],
        [17, 0],
      ]) {
        for (const n of [0, 1, 2, 3, 7, 10, 11]) {
          expectSameRuns(modules, () => [g0.slice(), x0.slice(), a, b, n, 1.5])
        }
      }
    })
  }

  it('runs neighbouring rows (b = a ± 1) one iteration at a time: pairing them would reorder the sums', () => {
    // the scalar order adds the two updates of one element in a different order than the pairs
    // would, so the results differ from a forced pairing; the guard keeps the scalar order
    const wasm = compile(src(false), 'wasm'),
      cpu = compile(src(false), 'cpu')
    for (const [a, b] of [
      [3, 4],
      [4, 3],
    ]) {
      const run = (m: typeof wasm) =>
        Array.from((m.f!(g0.slice(), x0.slice(), a, b, 16, 1.5) as unknown[])[0] as Float64Array)
      expect(run(wasm)).toEqual(run(cpu))
    }
  })

  it('pairs no loop with run-time checks, nor one that reads a neighbour of what it writes', () => {
    compile(src(false), 'wasm', true)
    expect(lastPairs).toBe(0)
    const reads = (offset: number) =>
      `fn f(g: f64[], h: f64[], x: f64[], y: f64[], n: i32) { for j in 0..n { g[j] += x[j]\n h[j] += y[j] * g[j + ${offset}] } }`
    compile(reads(1), 'wasm')
    expect(lastPairs).toBe(0)
    // two elements further on, g[j + 2] is read before either lane writes it: f and its inverse pair
    const modules = [compile(reads(2), 'wasm')]
    expect(lastPairs).toBe(4)
    modules.push(compile(reads(2), 'wasm', false, false), compile(reads(2), 'cpu'))
    for (const n of [0, 1, 4, 7])
      expectSameRuns(modules, () => [g0.slice(0, 10), g0.slice(10, 20), x0.slice(0, 10), x0.slice(10, 20), n])
  })

  it('runs one iteration at a time when the host passes one typed array for two parameters', () => {
    // g and h are one region: the paired order would add h[a + j] before g[j + 1] where they meet
    const text = `fn f(g: f64[], h: f64[], x: f64[], y: f64[], n: i32, a: i32) { for j in 0..n { g[j] += x[j]\n h[a + j] += y[j] } }`
    const results = [compile(text, 'wasm'), compile(text, 'cpu')].map((m) => {
      const g = new Float64Array(5).fill(1e16)
      // a call breaks the aliasing rule (\`g\`, \`h\` written and one array); the unchecked core runs it
      expect(() => m.f!(g, g, new Float64Array(5).fill(1), new Float64Array(5).fill(-1e16), 4, 1)).toThrow(
        /^arguments 1 \(`g: f64\[\]`\) and 2 \(`h: f64\[\]`\) of `f` share memory, and `f` writes `g`/,
      )
      m.f!.core(g, g, new Float64Array(5).fill(1), new Float64Array(5).fill(-1e16), 4, 1)
      return Array.from(g)
    })
    expect(results[0]).toEqual(results[1])
    expect(results[1]).toEqual([1e16, 1, 1, 1, 0])
  })

  for (const reverse of [false, true]) {
    it(`pairs a sum of exponentials ${reverse ? 'downwards' : 'upwards'} with the bits of the scalar code and the cpu backend`, () => {
      // the log-sum-exp of a GMM point: t[j] = m[j] − top, s[0] += exp(t[j]) (s[0] held by the loop)
      const text = `fn f(s: f64[], t: f64[], m: f64[], n: i32, top: f64) { for j in ${reverse ? 'reverse ' : ''}0..n { t[j] += m[j] - top\n s[0] += exp(t[j]) } }`
      const modules = [compile(text, 'wasm')]
      // f and its inverse (which runs the loop the other way) each pair both statements
      expect(lastPairs).toBe(4)
      modules.push(compile(text, 'wasm', false, false), compile(text, 'cpu'))
      // (values of many magnitudes: a changed order of the additions into s[0] changes bits)
      for (const n of [0, 1, 2, 5, 10, 11])
        expectSameRuns(modules, () => [g0.slice(0, 1), g0.slice(0, 12), x0.slice(0, 12), n, 0.375])
    })
  }

  it('pairs updates at constant offsets (the two lanes of g[j + 2] are g[j + 2] and g[j + 3])', () => {
    const text = `fn f(g: f64[], x: f64[], n: i32, c: f64) { for j in reverse 0..n { g[j + 2] -= c * x[j + 1]\n g[j + 12] += x[j] * x[j + 1] } }`
    const modules = [compile(text, 'wasm')]
    expect(lastPairs).toBe(4)
    modules.push(compile(text, 'wasm', false, false), compile(text, 'cpu'))
    for (const n of [0, 1, 5, 10]) expectSameRuns(modules, () => [g0.slice(0, 24), x0.slice(0, 12), n, -0.75])
  })
})
