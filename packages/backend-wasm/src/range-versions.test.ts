/**
 * `range-versions.ts`: which accesses a loop checks once at its start (the plan, printed), and
 * the compiled loops against the same module without range versions and the interpreter, over
 * random affine loops run in range, across its ends and far out of it: the same results, or the
 * same error at the same access having written the same elements (resident arrays show what a
 * failed call wrote).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printExpr, printStmts, type Expr, type FunctionDef, type Stmt } from '@tenet/ir'
import { walk } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, preprocess } from '@tenet/reversible'
import { planRangeVersion, type RangeVersion } from './range-versions.js'
import { createWasmBackend, type WasmProgram } from './index.js'

/** The plan of the first loop of `f` in `text`. */
function plan(text: string): { loop: Extract<Stmt, { kind: 'for' }>; version: RangeVersion | null } {
  const m = parse({ text, name: 'rv' })
  const p = check(m.functions.map(preprocess), m.hosts, createRegistry())
  const f = p.functions.get('f') as FunctionDef
  let loop: Extract<Stmt, { kind: 'for' }> | undefined
  walk(f.body, (s) => {
    if (s.kind === 'for' && !loop) loop = s
  })
  return { loop: loop!, version: planRangeVersion(loop!, { writes: (c) => p.writes.get(c) }) }
}

/** The accesses of a block, printed with their marks, in order. */
function accesses(body: Stmt[]): string[] {
  const out: string[] = []
  const visit = (e: unknown): void => {
    if (!e || typeof e !== 'object') return
    const x = e as { kind?: string; inBounds?: boolean }
    if (x.kind === 'index') out.push(`${printExpr(x as Expr)}${x.inBounds ? ' ✓' : ''}`)
    for (const v of Object.values(x)) if (v && typeof v === 'object') visit(v)
  }
  walk(body, (s) => {
    const { kind, ...rest } = s
    if (kind === 'for' || kind === 'if' || kind === 'while' || kind === 'unchecked') {
      for (const k of ['start', 'stop', 'step', 'pre'] as const) visit((rest as Record<string, unknown>)[k])
    } else visit(rest)
  })
  return out
}

const groups = (v: RangeVersion) =>
  v.groups.map(
    (g) =>
      `${g.array}[${g.scale ? `(${g.factor} + ${printExpr(g.scale)})` : g.factor}·i + ${g.terms ? printExpr(g.terms) : '0'} + ${g.low}..${g.high}]`,
  )

describe('range versions: the plan', () => {
  it('checks affine indices of names the body does not write, grouped by array, factor and terms', () => {
    const { loop, version } = plan(`fn f(y: f64[], x: f64[], p: i32[], n: i32, a: i32) {
  for i in 0..n {
    y[i] += x[2 * i + 1] * x[p[i]]
    y[i + 1] -= x[a + i] - x[i + a + 2] * x[3 - i]
  }
}`)
    expect(printStmts(loop.body)).toContain('x[p[i]]')
    expect(groups(version!)).toEqual([
      'y[1·i + 0 + 0..1]',
      'x[2·i + 0 + 1..1]',
      'p[1·i + 0 + 0..0]',
      'x[1·i + a + 0..2]',
      'x[-1·i + 0 + 3..3]',
    ])
    // x[p[i]] reads its index from memory: guarded in the copy too; every other access is marked
    expect(accesses(version!.body)).toEqual([
      'y[i] ✓',
      'x[2 * i + 1] ✓',
      'x[p[i]]',
      'p[i] ✓',
      'y[i + 1] ✓',
      'x[a + i] ✓',
      'x[i + a + 2] ✓',
      'x[3 - i] ✓',
    ])
    // the loop itself is unchanged (its accesses keep their guards)
    expect(accesses(loop.body).every((a) => !a.endsWith('✓'))).toBe(true)
    expect(version!.minTrips).toBe(Math.ceil((4 * 5 + 2) / 7))
  })

  it('leaves out names the body writes or declares, inner loops, branches, and arrays it allocates', () => {
    const { version } = plan(`fn f(y: f64[], x: f64[], n: i32, a: i32, b: i32) {
  for i in 0..n {
    a += 1
    y[a + i] += 1.0
    c: i32 <- b * 2
    y[c + i] += x[b * 2 + i]
    c -> b * 2
    if (x[i] > 0.0, ~) { y[i + 1] += 1.0 }
    for j in 0..n { y[i + j] += x[i] }
    t: f64[] <- zeros(n)
    t[i] += 1.0
    t[i] -= 1.0
    t -> zeros(n)
  }
}`)
    expect(groups(version!)).toEqual(['x[1·i + 2 * b + 0..0]', 'x[1·i + 0 + 0..0]'])
    expect(accesses(version!.body)).toEqual([
      'y[a + i]',
      'y[c + i]',
      'x[b * 2 + i] ✓',
      'x[i] ✓',
      'y[i + 1]',
      'y[i + j]',
      'x[i]',
      't[i]',
      't[i]',
    ])
  })

  it('checks a factor known at run time: an invariant value times an affine index (a column of a matrix)', () => {
    const { version } = plan(`fn f(x: f64[], g: f64[], m: i32, n: i32, i: i32) {
  for l in 0..n {
    x[i + m * l] += x[i + 1 + m * l] * 0.5
    x[i + 1 + l * m] -= x[i + m * l]
    g[m * (l + 1) - 1] += x[(m + 1) * l] + g[2 * m * l + i]
    g[m * l * l] += 1.0
  }
}`)
    expect(groups(version!)).toEqual([
      'x[(0 + m)·i + i + 0..1]',
      'g[(0 + m)·i + m + -1..-1]',
      'x[(0 + m + 1)·i + 0 + 0..0]',
      'g[(0 + 2 * m)·i + i + 0..0]',
    ])
    // m·l·l is not affine in l: guarded in the copy too
    expect(accesses(version!.body)).toEqual([
      'x[i + m * l] ✓',
      'x[i + 1 + m * l] ✓',
      'x[i + 1 + l * m] ✓',
      'x[i + m * l] ✓',
      'g[m * (l + 1) - 1] ✓',
      'x[(m + 1) * l] ✓',
      'g[2 * m * l + i] ✓',
      'g[m * l * l]',
    ])
    // only in a loop with no loop inside (a versioned loop's inner loops have no versions)
    const nested = plan(`fn f(x: f64[], g: f64[], m: i32, n: i32, i: i32) {
  for l in 0..n {
    x[i + m * l] += g[l]
    for j in 0..m { x[j + m * l] += 1.0 }
  }
}`).version!
    expect(groups(nested)).toEqual(['g[1·i + 0 + 0..0]'])
    expect(accesses(nested.body)).toEqual(['x[i + m * l]', 'g[l] ✓', 'x[j + m * l]'])
  })

  it('versions nothing where no index is affine or every affine one is in a branch', () => {
    expect(plan('fn f(y: f64[], n: i32) { for i in 0..n { y[i * i] += 1.0 } }').version).toBeNull()
    expect(plan('fn f(y: f64[], n: i32) { for i in 0..n { if (n > 2, ~) { y[i] += 1.0 } } }').version).toBeNull()
  })
})

/** A small deterministic generator. */
function rng(seed: number): () => number {
  let s = seed * 2654435761 + 7
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    return ((s >>> 8) & 0xffff) / 0x10000
  }
}

/** A random loop of step ±1 over affine accesses of y (written) and x (read), and an inner loop. */
function randomLoop(seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const index = (v: string) => {
    const c = pick([1, 1, 1, -1, 2, 0])
    const term = pick(['', ' + a', ' - b', ' + a * 2', ' + len(x) - 8'])
    const k = pick([0, 0, 1, -1, 3])
    const cv = c === 0 ? '0' : c === 1 ? v : c === -1 ? `-${v}` : `${c} * ${v}`
    return `${cv}${term}${k ? ` + ${k}` : ''}`
  }
  const header = pick([
    'for i in lo..hi',
    'for i in lo..=hi',
    'for i in reverse lo..hi',
    'for i in hi..lo by -1',
    'for i in reverse hi..=lo by -1',
  ])
  const statements = Array.from({ length: 1 + Math.floor(r() * 3) }, () =>
    pick([
      `y[${index('i')}] += x[${index('i')}] * 0.5`,
      `y[${index('i')}] -= x[${index('i')}] + x[${index('i')}]`,
      `s += x[${index('i')}]`,
      `for j in 0..2 { y[${index('j')} + i] += x[${index('i')}] }`,
    ]),
  )
  return `fn f(y: f64[], x: f64[], s: f64, lo: i32, hi: i32, a: i32, b: i32) {\n  ${header} {\n    ${statements.join('\n    ')}\n  }\n}`
}

/**
 * A random loop whose indices have factors known only at run time (\`a * i\`, \`i * b\`, \`(a + 1) * i\`,
 * \`b * (i + 1)\`), beside literal ones.
 */
function randomScaledLoop(seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const index = () => {
    const cv = pick(['a * i', 'i * b', '(a + 1) * i', 'b * (i + 1)', 'i', '2 * a * i'])
    const term = pick(['', ' + a', ' - b', ' + 3', ' + len(x) - 8'])
    const k = pick([0, 0, 1, -1])
    return `${cv}${term}${k ? ` + ${k}` : ''}`
  }
  const header = pick(['for i in lo..hi', 'for i in lo..=hi', 'for i in reverse lo..hi', 'for i in hi..lo by -1'])
  const statements = Array.from({ length: 1 + Math.floor(r() * 3) }, () =>
    pick([
      `y[${index()}] += x[${index()}] * 0.5`,
      `y[${index()}] -= x[${index()}] + x[${index()}]`,
      `s += x[${index()}]`,
    ]),
  )
  return `fn f(y: f64[], x: f64[], s: f64, lo: i32, hi: i32, a: i32, b: i32) {\n  ${header} {\n    ${statements.join('\n    ')}\n  }\n}`
}

/** The wasm backend with and without range versions; \`versioned\` counts the loops compiled with one. */
let versioned = 0
const on = createWasmBackend()
const wasmOn = {
  ...on,
  name: 'wasm_on',
  doCompile: (...a: Parameters<typeof on.doCompile>) => {
    const p = on.doCompile(...a) as WasmProgram
    versioned += p.rangeVersions
    return p
  },
}
const wasmOff = { ...createWasmBackend({ rangeVersions: false }), name: 'wasm_off' }
const registry = () =>
  createRegistry().registerBackend(wasmOn).registerBackend(wasmOff).registerBackend(interpreterBackend)

type Call = (...a: unknown[]) => unknown
interface Core {
  (...a: unknown[]): void
  results: Float64Array
  resident: { allocate(elem: string, n: number): { array: Float64Array } }
}

/** A wasm core's outcome on resident arrays: y and s, or the error and what y holds after it. */
function residentOutcome(core: Core, args: number[]): string {
  const y = core.resident.allocate('f64', 8).array,
    x = core.resident.allocate('f64', 8).array
  y.set(Array.from({ length: 8 }, (_, k) => k + 0.25))
  x.set(Array.from({ length: 8 }, (_, k) => 10 * k + 1))
  try {
    core(y, x, 0.5, ...args)
    return `y = ${Array.from(y).join(', ')}; s = ${core.results[2]}`
  } catch (e) {
    const err = e as { code?: string; message: string }
    return `${err.code}: ${err.message.split('\n')[0]} | y = ${Array.from(y).join(', ')}`
  }
}

/** A module function's outcome on host arrays: y and s, or the error's code. */
function outcome(f: Call, args: number[]): string {
  const y = Float64Array.from({ length: 8 }, (_, k) => k + 0.25),
    x = Float64Array.from({ length: 8 }, (_, k) => 10 * k + 1)
  try {
    const r = f(y, x, 0.5, ...args) as unknown[]
    return `y = ${Array.from(r[0] as Float64Array).join(', ')}; s = ${r[2]}`
  } catch (e) {
    return `${(e as { code?: string }).code}`
  }
}

describe('range versions: compiled loops', () => {
  it('give the same results, or the same error having written the same elements, as the guarded loops and the interpreter', () => {
    versioned = 0
    let failed = 0,
      passed = 0
    for (let seed = 0; seed < 60; seed++) {
      const text = randomLoop(seed)
      const [mOn, mOff, mRef] = (['wasm_on', 'wasm_off', 'interpreter'] as const).map((backend) =>
        compileModule(parse({ text, name: 'rv' }), { registry: registry(), backend, checks: false }),
      )
      const r = rng(seed + 1000)
      for (let run = 0; run < 12; run++) {
        const args = [
          Math.floor(r() * 12) - 3,
          Math.floor(r() * 14) - 3,
          Math.floor(r() * 8) - 2,
          Math.floor(r() * 6) - 2,
        ]
        const what = `${text}\nlo, hi, a, b = ${args.join(', ')}`
        expect(residentOutcome(mOn!.f!.core as unknown as Core, args), what).toBe(
          residentOutcome(mOff!.f!.core as unknown as Core, args),
        )
        const want = outcome(mRef!.f as unknown as Call, args)
        expect(outcome(mOn!.f as unknown as Call, args), what).toBe(want)
        if (want.startsWith('runtime/')) failed++
        else passed++
      }
    }
    expect(failed, 'some runs go out of range').toBeGreaterThan(50)
    expect(passed, 'some runs stay in range').toBeGreaterThan(50)
    expect(versioned, 'the loops have range versions').toBeGreaterThan(30)
  })

  it.each([false, true])(
    'with factors known at run time (checks %s): the same results or errors, also where the factor is negative or its products wrap',
    (checks) => {
      versioned = 0
      let failed = 0,
        passed = 0
      // (factors whose products wrap around 2³²: a multiple of 2³¹ times an even i is 0 in i32)
      const big = [2 ** 30, 2 ** 31 - 1, -(2 ** 31), 2 ** 29 + 1, -1]
      for (let seed = 0; seed < 60; seed++) {
        const text = randomScaledLoop(seed)
        const [mOn, mOff, mRef] = (['wasm_on', 'wasm_off', 'interpreter'] as const).map((backend) =>
          compileModule(parse({ text, name: 'rv' }), { registry: registry(), backend, checks }),
        )
        const r = rng(seed + 2000)
        for (let run = 0; run < 12; run++) {
          const args = [
            Math.floor(r() * 8) - 2,
            Math.floor(r() * 10) - 2,
            run === 11 ? big[seed % big.length]! : Math.floor(r() * 5) - 1,
            run === 10 ? big[(seed + 2) % big.length]! : Math.floor(r() * 5) - 1,
          ]
          const what = `${text}\nlo, hi, a, b = ${args.join(', ')}`
          expect(residentOutcome(mOn!.f!.core as unknown as Core, args), what).toBe(
            residentOutcome(mOff!.f!.core as unknown as Core, args),
          )
          const want = outcome(mRef!.f as unknown as Call, args)
          expect(outcome(mOn!.f as unknown as Call, args), what).toBe(want)
          if (want.startsWith('runtime/')) failed++
          else passed++
        }
      }
      expect(failed, 'some runs go out of range').toBeGreaterThan(50)
      expect(passed, 'some runs stay in range').toBeGreaterThan(50)
      // (with checks on, `hoist-bounds` of @tenet/ir moves these bounds asserts before the loop
      // first, so none is left for a range version: the results and errors are what is compared)
      if (!checks) expect(versioned, 'the loops have range versions').toBeGreaterThan(30)
    },
  )

  it('a factor that wraps to an index in range: the unguarded copy runs only where no guard could fail', () => {
    // m = 2³¹: m·l is 0 for even l and −2³¹ for odd l in i32; x[i + m·l] is x[i] at l = 0 and
    // out of range at l = 1, so the call fails there, as the guarded loop does
    const text = `fn f(y: f64[], x: f64[], s: f64, lo: i32, hi: i32, a: i32, b: i32) {
  for i in lo..hi { s += x[b + a * i] }
}`
    const [mOn, mOff, mRef] = (['wasm_on', 'wasm_off', 'interpreter'] as const).map((backend) =>
      compileModule(parse({ text, name: 'rv' }), { registry: registry(), backend, checks: false }),
    )
    for (const args of [
      [0, 2, -(2 ** 31), 1],
      [0, 3, 2 ** 30, 0],
      [0, 1, -(2 ** 31), 1],
      [2, 4, 2 ** 30 + 2 ** 29, 0],
      [0, 8, 1, 0],
      [0, 4, 2, 0],
      [0, 5, 2, 0],
      [3, 5, -3, 7],
    ]) {
      const want = outcome(mRef!.f as unknown as Call, args)
      expect(outcome(mOn!.f as unknown as Call, args), args.join(', ')).toBe(want)
      expect(residentOutcome(mOn!.f!.core as unknown as Core, args)).toBe(
        residentOutcome(mOff!.f!.core as unknown as Core, args),
      )
    }
  })
})

describe('range versions with checks on, after hoist-bounds', () => {
  it('versions none of the loops that hoist-bounds runs only to fail (its `else` arm, the loop as written)', () => {
    // every bounds check of the loop hoisted: its two versions, one without checks, the other
    // (which a range version of its own would copy once more) left as it is
    const text = `fn f(y: f64[], x: f64[], s: f64, lo: i32, hi: i32, a: i32, b: i32) {
  for i in lo..hi { s += x[i + a] * x[i] }
}`
    const before = versioned
    const [m, ref] = (['wasm_on', 'interpreter'] as const).map((backend) =>
      compileModule(parse({ text, name: 'rv' }), { registry: registry(), backend, checks: true }),
    )
    expect(versioned - before).toBe(0)
    // (and it runs, or fails, as the reference does)
    for (const args of [
      [0, 8, 0, 0],
      [0, 5, 3, 0],
      [2, 8, 1, 0],
      [0, 3, -1, 0],
    ])
      expect(outcome(m!.f as unknown as Call, args), args.join(', ')).toBe(outcome(ref!.f as unknown as Call, args))
  })
})
