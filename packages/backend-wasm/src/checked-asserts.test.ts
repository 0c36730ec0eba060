/**
 * The cheaper run-time checks of the wasm backend (checks on): repeated asserts left out
 * (`repeated-asserts.ts`, printed IR before and after), bounds asserts versioned per loop
 * (`planCheckedRangeVersion` of `range-versions.ts`) and `$near` against a constant. Each is
 * checked against the reference interpreter: the same values where it raises nothing, its errors
 * (code, message, location) where it raises them.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type FunctionDef, type Stmt } from '@tenet/ir'
import { hoistBounds, insertChecks, walk } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, invert, preprocess } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { dropRepeatedAsserts } from './repeated-asserts.js'
import { planCheckedRangeVersion } from './range-versions.js'
import { createWasmBackend, type WasmProgram } from './index.js'

const options = { checks: true, tolerance: 1e-9 }

/** The program as the wasm backend's code generator gets it with checks on, before `dropRepeatedAsserts`. */
function asserted(text: string) {
  const m = parse({ text, name: 'ra' })
  const p = check(m.functions.map(preprocess), m.hosts, createRegistry())
  const inverses = new Map([...p.functions].map(([n, f]) => [n, invert(f)]))
  const a = insertChecks(p, inverses, options)
  return hoistBounds(a.program, a.inverses, options)
}

/** The asserts of a function, printed. */
function asserts(f: FunctionDef): string[] {
  const out: string[] = []
  walk(f.body, (s: Stmt) => {
    if (s.kind === 'assert')
      out.push(
        printFunction({ ...f, body: [s] })
          .split('\n')[1]!
          .trim(),
      )
  })
  return out
}

let versioned = 0
const spec = createWasmBackend()
const wasm = {
  ...spec,
  doCompile: (...a: Parameters<typeof spec.doCompile>) => {
    const p = spec.doCompile(...a) as WasmProgram
    versioned += p.rangeVersions
    return p
  },
}
const plain = { ...createWasmBackend({ skipRepeatedAsserts: false, rangeVersions: false }), name: 'wasm_plain' }
const registry = () => createRegistry().registerBackend(wasm).registerBackend(plain).registerBackend(interpreterBackend)
const compile = (text: string, backend: string) =>
  compileModule(parse({ text, name: 'ca' }), { registry: registry(), backend, checks: true })

/** What a call does on every backend: its results, or its error (code, message, location). */
function outcomes(text: string, name: string, args: () => unknown[]): string[] {
  return ['interpreter', 'wasm', 'wasm_plain'].map((b) => {
    const f = compile(text, b)[name]!
    let r: unknown
    const err = raisedError(() => {
      r = f(...args())
    })
    if (err !== 'no error') return err
    return JSON.stringify(r, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))
  })
}

/** A pairwise accumulation in a branch (the n-body acceleration's shape): compute, use, uncompute. */
const pairwise = `fn f(a: f64[], x: f64[], n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (i != j, ~) {
        d <- 0.0
        d += x[j] - x[i]
        a[i] += d * d
        d -= x[j] - x[i]
        d -> 0.0
      }
    }
  }
}`

describe('repeated asserts (checks on)', () => {
  it('leaves out the uncompute’s repeated bounds asserts', () => {
    const { program, inverses } = asserted(pairwise)
    const before = asserts(program.functions.get('f')!)
    const out = dropRepeatedAsserts(program, inverses)
    const after = asserts(out.program.functions.get('f')!)
    expect(before).toEqual([
      'assert outOfBounds($inrange(j, len(x))) else ("x", j, len(x))',
      'assert outOfBounds($inrange(i, len(x))) else ("x", i, len(x))',
      'assert outOfBounds($inrange(i, len(a))) else ("a", i, len(a))',
      'assert outOfBounds($inrange(j, len(x))) else ("x", j, len(x))',
      'assert outOfBounds($inrange(i, len(x))) else ("x", i, len(x))',
      'assert dealloc($near(d, 0.0)) else ("d", "0.0", d, 0.0)',
      // (no post-condition assert: the branch writes nothing \`i != j\` reads, see \`insert-checks\`)
    ])
    expect(after).toEqual([...before.slice(0, 3), ...before.slice(5)])
    // the inverse too (its uncompute reads x[j], x[i] again)
    expect(out.dropped).toBe(4)
  })

  it('keeps an assert when what its condition reads was written in between', () => {
    const text = (between: string) => `fn g(x: f64[], y: f64[], p: i32[], s: f64, k: i32) {
  s += x[k] + x[p[0]]${between}
  s += x[k] + x[p[0]]
}`
    const count = (between: string) => {
      const { program, inverses } = asserted(text(between))
      return asserts(dropRepeatedAsserts(program, inverses).program.functions.get('g')!)
    }
    const first = ['assert outOfBounds($inrange(k, len(x))) else ("x", k, len(x))', expect.stringContaining('len(p)')]
    // nothing written: the second statement's three asserts are the first's
    expect(count('')).toHaveLength(3)
    // k written: its bounds assert again (x[p[0]]'s are not about k)
    expect(count('\n  k += 1')).toEqual([...first, expect.stringContaining('p[0]'), first[0]])
    // an element written (of any array: two parameters may share memory): the assert that reads
    // p[0] again, not the one that reads only k and len(x)
    expect(count('\n  y[0] += 1.0')).toEqual([
      ...first,
      expect.stringContaining('p[0]'),
      expect.stringContaining('len(y)'),
      expect.stringContaining('p[0]'),
    ])
  })

  it('after an if, knows only what both arms know; in a loop, nothing the loop writes', () => {
    const text = `fn b(x: f64[], s: f64, k: i32, n: i32) {
  if (n > 0, ~) {
    s += x[k]
  } else {
    s += 1.0
  }
  s += x[k]
  s += x[k]
  while (k < n, k > 0) {
    s += x[k]
    s += x[k]
    k += 1
    s += x[k]
  }
}`
    const { program, inverses } = asserted(text)
    const before = asserts(program.functions.get('b')!).filter((a) => a.startsWith('assert outOfBounds'))
    const after = asserts(dropRepeatedAsserts(program, inverses).program.functions.get('b')!).filter((a) =>
      a.startsWith('assert outOfBounds'),
    )
    const k = 'assert outOfBounds($inrange(k, len(x))) else ("x", k, len(x))'
    expect(before).toEqual([k, k, k, k, k, k])
    // the arm's x[k]; after the if, x[k] again (the else arm read nothing), then not; in the loop,
    // whose body writes k, at the start of each iteration and after k += 1, not in between
    expect(after).toEqual([k, k, k, k])
  })

  it('keeps the reference’s values and errors', () => {
    const args = (n: number, len: number) => () => [
      new Float64Array(n),
      Float64Array.from({ length: len }, (_, k) => 1.5 * k * k),
      n,
    ]
    for (const [n, len] of [
      [4, 4],
      [4, 3],
      [1, 0],
    ] as const) {
      const [want, ...got] = outcomes(pairwise, 'f', args(n, len))
      expect(got).toEqual([want, want])
    }
    expect(outcomes(pairwise, 'f', args(4, 3))[0]).toMatch(/^runtime\/out-of-bounds/)
  })
})

describe('checked range versions (checks on)', () => {
  it('drops the loop body’s affine bounds asserts in the copy, those in branches too', () => {
    const { program } = asserted(pairwise)
    const outer = program.functions.get('f')!.body.find((s) => s.kind === 'for') as Extract<Stmt, { kind: 'for' }>
    const inner = outer.body.find((s) => s.kind === 'for') as Extract<Stmt, { kind: 'for' }>
    const ctx = { writes: () => undefined }
    // (the outer loop has a loop inside: its inner loop versions the asserts)
    expect(planCheckedRangeVersion(outer, ctx)).toBeNull()
    const plan = planCheckedRangeVersion(inner, ctx)!
    expect(
      plan.groups.map((g) => `${g.array}: ${g.factor}·j + ${g.terms ? 'terms' : '0'} + ${g.low}..${g.high}`),
    ).toEqual(['x: 1·j + 0 + 0..0', 'x: 0·j + terms + 0..0', 'a: 0·j + terms + 0..0'])
    const left: string[] = []
    walk(plan.body, (s) => {
      if (s.kind === 'assert') left.push(s.check)
    })
    expect(left).toEqual(['dealloc'])
  })

  it('computes the reference’s values and raises its errors, in the iteration that fails', () => {
    versioned = 0
    // x[j + 1] is read only where j + 1 < n: the check at the start (j + 1 up to n) fails for
    // len(x) = n, and the loop runs as it is, without error
    const guarded = `fn h(s: f64, x: f64[], n: i32, m: i32) {
  for j in 0..n {
    if (j < m, ~) {
      s += x[j + 1] * x[j]
    }
  }
}`
    const args = (n: number, m: number, len: number) => () => [
      0.5,
      Float64Array.from({ length: len }, (_, k) => k + 0.25),
      n,
      m,
    ]
    for (const [n, m, len] of [
      [6, 5, 6],
      [6, 6, 6],
      [6, 6, 7],
      [6, 3, 4],
      [6, 4, 4],
      [0, 0, 0],
    ] as const) {
      const [want, ...got] = outcomes(guarded, 'h', args(n, m, len))
      expect(got, `n=${n} m=${m} len=${len}`).toEqual([want, want])
    }
    expect(outcomes(guarded, 'h', args(6, 6, 6))[0]).toMatch(/^runtime\/out-of-bounds/)
    expect(versioned).toBeGreaterThan(0)
  })

  it('keeps a failing deallocation check in place (the same error, after the same writes)', () => {
    const text = `fn k(a: f64[], x: f64[], n: i32, bad: i32) {
  for j in 0..n {
    d <- 0.0
    d += x[j]
    a[j] += d
    if (j == bad, ~) { d += 1.0 }
    d -= x[j]
    d -> 0.0
  }
}`
    for (const bad of [-1, 0, 2]) {
      const args = () => [new Float64Array(4), Float64Array.from([1, 2, 3, 4]), 4, bad]
      const [want, ...got] = outcomes(text, 'k', args)
      expect(got).toEqual([want, want])
      if (bad >= 0) expect(want).toMatch(/^runtime\/dealloc/)
    }
  })
})

describe('$near against a constant (checks on)', () => {
  it('decides as the reference does, at and past the tolerance, for NaN, ±0 and ±∞', () => {
    for (const c of ['0.0', '2.5', '-1e12']) {
      const text = `fn f(v: f64) {
  z <- ${c}
  z += v
  z -> ${c}
}`
      for (const v of [0, -0, 1e-9, 1.0000001e-9, 2e-9, -2e-9, 2.5e-9, 1e-3, 2e3, Number.NaN, Infinity, -Infinity]) {
        const [want, ...got] = outcomes(text, 'f', () => [v])
        expect(got, `${c} + ${v}`).toEqual([want, want])
      }
    }
  })

  it('f32: the constant as an f32 literal rounds it', () => {
    const text = `fn f(v: f32) {
  z: f32 <- f32(0.1)
  z += v
  z -> f32(0.1)
}`
    for (const v of [0, 1e-9, 1e-6, -1e-6, 3e-8]) {
      const [want, ...got] = outcomes(text, 'f', () => [v])
      expect(got, `${v}`).toEqual([want, want])
    }
  })
})
