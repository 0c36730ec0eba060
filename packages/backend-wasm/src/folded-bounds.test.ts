/**
 * Bounds asserts folded into the loads they guard (`folded-bounds.ts`, checks on): which asserts
 * the heads' loads take over (the asserts printed, and the `foldedBounds` diagnostic), and that the
 * values and the errors (code, message, location, which check fails first) are the reference
 * interpreter's and those of the same module without folding, on hand-written programs and on
 * random heads with indices in and out of range.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type Expr, type FunctionDef, type Stmt } from '@tenet/ir'
import { hoistBounds, insertChecks, key, walk } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, invert, preprocess } from '@tenet/reversible'
import { Random, raisedError } from '@tenet/testing'
import { foldableBounds, foldedSuffix, loadGuards } from './folded-bounds.js'
import { createWasmBackend, type WasmProgram } from './index.js'

let folded = 0
const spec = createWasmBackend()
const wasm = {
  ...spec,
  doCompile: (...a: Parameters<typeof spec.doCompile>) => {
    const p = spec.doCompile(...a) as WasmProgram
    folded += p.foldedBounds
    return p
  },
}
const unfolded = { ...createWasmBackend({ foldBounds: false }), name: 'wasm_unfolded' }
const registry = () =>
  createRegistry().registerBackend(wasm).registerBackend(unfolded).registerBackend(interpreterBackend)
const compile = (text: string, backend: string) =>
  compileModule(parse({ text, name: 'fb' }), { registry: registry(), backend, checks: true })
const modules = new Map<string, ReturnType<typeof compile>>()
/** \`compile\`, once per program and backend. */
const compiled = (text: string, backend: string) => {
  const k = `${backend}\n${text}`
  let m = modules.get(k)
  if (!m) modules.set(k, (m = compile(text, backend)))
  return m
}

/** What a call does on the interpreter, wasm, and wasm without folding: its results, or its error (code, message, location). */
function outcomes(text: string, name: string, args: () => unknown[]): string[] {
  return ['interpreter', 'wasm', 'wasm_unfolded'].map((b) => {
    const f = compiled(text, b)[name]!
    let r: unknown
    const err = raisedError(() => {
      r = f(...args())
    })
    if (err !== 'no error') return err
    return JSON.stringify(r, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))
  })
}

/** The function as the wasm code generator gets it with checks on (asserts inserted, bounds hoisted). */
function asserted(text: string, name: string): FunctionDef {
  const m = parse({ text, name: 'fb' })
  const p = check(m.functions.map(preprocess), m.hosts, createRegistry())
  const inverses = new Map([...p.functions].map(([n, f]) => [n, invert(f)]))
  const options = { checks: true, tolerance: 1e-9 }
  const a = insertChecks(p, inverses, options)
  return hoistBounds(a.program, a.inverses, options).program.functions.get(name)!
}

/** One statement, printed. */
const printed = (f: FunctionDef, s: Stmt): string =>
  printFunction({ ...f, body: [s] })
    .split('\n')[1]!
    .trim()

/** A merge step (the keeper-free sparse dot's shape): a guarded head, an update, post-conditions. */
const merge = `fn f(r: f64, ia: i32, ib: i32, ea: i32, eb: i32, sa: i32, sb: i32, ar: i32[], br: i32[], av: f64[], bv: f64[]) {
  if (ia == ea || ib < eb && br[ib] < ar[ia], ib > sb && (ia == sa || br[ib - 1] >= ar[ia - 1])) {
    ib += 1
  } else {
    if (ib < eb && ar[ia] == br[ib], ~) {
      r += av[ia] * bv[ib]
    }
    ia += 1
  }
}`

describe('folded bounds: which asserts the loads take over', () => {
  it('finds each bounds assert’s condition among its head’s load guards', () => {
    const f = asserted(merge, 'f')
    // every foldable bounds assert before a statement, with the guards of that statement's head
    const pairs: Array<[string, string[]]> = []
    const visit = (body: Stmt[]) => {
      body.forEach((s, k) => {
        if (s.kind === 'if') {
          visit(s.then)
          visit(s.else)
        }
        if (!foldableBounds(s)) return
        let n = k + 1
        while (n < body.length && foldableBounds(body[n]!)) n++
        const head = body[n]!
        const guards = new Map<Expr, string>()
        const heads =
          head.kind === 'if'
            ? [head.pre]
            : head.kind === 'assert'
              ? [head.cond]
              : head.kind === 'update'
                ? [head.value]
                : []
        for (const e of heads) loadGuards(e, guards)
        pairs.push([printed(f, s), [...guards.values()]])
      })
    }
    visit(f.body)
    expect(pairs.map(([a]) => a)).toEqual([
      'assert outOfBounds(!(!(ia == ea) && ib < eb) || $inrange(ib, len(br))) else ("br", ib, len(br))',
      'assert outOfBounds(!(!(ia == ea) && ib < eb) || $inrange(ia, len(ar))) else ("ar", ia, len(ar))',
      'assert outOfBounds(!(ib > sb && !(ia == sa)) || $inrange(ib - 1, len(br))) else ("br", ib - 1, len(br))',
      'assert outOfBounds(!(ib > sb && !(ia == sa)) || $inrange(ia - 1, len(ar))) else ("ar", ia - 1, len(ar))',
      'assert outOfBounds(!(ib < eb) || $inrange(ia, len(ar))) else ("ar", ia, len(ar))',
      'assert outOfBounds(!(ib < eb) || $inrange(ib, len(br))) else ("br", ib, len(br))',
      'assert outOfBounds($inrange(ia, len(av))) else ("av", ia, len(av))',
      'assert outOfBounds($inrange(ib, len(bv))) else ("bv", ib, len(bv))',
      'assert outOfBounds(!(ib > sb && !(ia == sa)) || $inrange(ib - 1, len(br))) else ("br", ib - 1, len(br))',
      'assert outOfBounds(!(ib > sb && !(ia == sa)) || $inrange(ia - 1, len(ar))) else ("ar", ia - 1, len(ar))',
    ])
    // the condition of each is the guard \`loadGuards\` computes for one load of the head after it
    const fAsserts: Stmt[] = []
    walk(f.body, (s) => {
      if (foldableBounds(s)) fAsserts.push(s)
    })
    fAsserts.forEach((s, k) => {
      expect(pairs[k]![1]).toContain(key((s as Extract<Stmt, { kind: 'assert' }>).cond))
    })
  })

  it('takes over every bounds assert of the merge step, in the function and its inverse', () => {
    folded = 0
    compile(merge, 'wasm')
    expect(folded).toBe(20)
  })

  it('keeps the asserts whose loads do not run where they stand, or run out of order', () => {
    const count = (text: string) => {
      folded = 0
      compile(text, 'wasm')
      return folded
    }
    const fn = (body: string) => `fn f(s: f64, u: f64, x: f64[], y: f64[], i: i32, j: i32) {\n  ${body}\n}`
    // the value's loads, in order: both (and in the inverse)
    expect(count(fn('s += x[i] * y[j]'))).toBe(4)
    // inside a math call: none; after one: none
    expect(count(fn('s += sin(x[i]) * y[j]'))).toBe(0)
    expect(count(fn('s += sin(u) + x[i]'))).toBe(0)
    // in a power: none (its code may repeat an operand)
    expect(count(fn('s += x[i] ** 2'))).toBe(0)
    // the same element twice: its one assert, taken by the first load
    expect(count(fn('s += x[i] * x[i] + y[j]'))).toBe(4)
    // a target's assert is not the value's: the value's alone (it runs last)
    expect(count(fn('x[i] += y[j]'))).toBe(2)
  })

  it('leaves out only the asserts of a suffix taken over in order', () => {
    expect(foldedSuffix(3, [0, 1, 2])).toBe(0)
    expect(foldedSuffix(3, [1, 2])).toBe(1)
    // (loads in another order than the asserts: only the last one)
    expect(foldedSuffix(3, [0, 2, 1])).toBe(2)
    expect(foldedSuffix(2, [])).toBe(2)
  })
})

describe('folded bounds: the reference’s values and errors', () => {
  it('on the merge step, for indices in range and out of it at each access', () => {
    const args =
      (ia: number, ib: number, ea: number, eb: number, sa: number, sb: number, lenA = 3, lenB = 3) =>
      () => [
        0,
        ia,
        ib,
        ea,
        eb,
        sa,
        sb,
        Int32Array.from({ length: lenA }, (_, k) => 2 * k),
        Int32Array.from({ length: lenB }, (_, k) => 3 * k),
        Float64Array.from({ length: lenA }, (_, k) => 1.5 + k),
        Float64Array.from({ length: lenB }, (_, k) => 0.25 - k),
      ]
    const cases: Array<() => unknown[]> = []
    for (const ia of [-1, 0, 1, 2, 3])
      for (const ib of [-1, 0, 1, 2, 3])
        for (const [ea, eb] of [
          [3, 3],
          [2, 3],
          [3, 1],
          [4, 4],
        ] as const)
          for (const [sa, sb] of [
            [0, 0],
            [1, 0],
            [0, 2],
          ] as const)
            cases.push(args(ia, ib, ea, eb, sa, sb))
    cases.push(args(1, 1, 3, 3, 0, 0, 1, 3), args(1, 1, 3, 3, 0, 0, 3, 1), args(0, 0, 1, 1, 0, 0, 0, 0))
    const seen = new Set<string>()
    for (const a of cases) {
      const [want, ...got] = outcomes(merge, 'f', a)
      expect(got).toEqual([want, want])
      seen.add(want!.split(' | ')[0]!)
    }
    // (values, out-of-range reads and failed post-conditions all among them)
    expect([...seen].filter((s) => s.startsWith('runtime/'))).toEqual(
      expect.arrayContaining(['runtime/out-of-bounds', 'runtime/post-condition']),
    )
  })

  it('in a loop (the sparse dot merge), with the matrices’ lengths too short for their pointers', () => {
    const text = `fn d(r: f64, n: i32, ap: i32[], ar: i32[], av: f64[], bp: i32[], br: i32[], bv: f64[]) {
  for j in 0..n {
    ia: i32 <- ap[j]
    ib: i32 <- bp[j]
    while (ia < ap[j + 1] || ib < bp[j + 1], ia > ap[j] || ib > bp[j]) {
      if (ia == ap[j + 1] || ib < bp[j + 1] && br[ib] < ar[ia], ib > bp[j] && (ia == ap[j] || br[ib - 1] >= ar[ia - 1])) {
        ib += 1
      } else {
        if (ib < bp[j + 1] && ar[ia] == br[ib], ~) {
          r += av[ia] * bv[ib]
        }
        ia += 1
      }
    }
    ia -> ap[j + 1]
    ib -> bp[j + 1]
  }
}`
    const csc = (rows: number[][]) => {
      const p = [0]
      for (const c of rows) p.push(p[p.length - 1]! + c.length)
      return {
        p: Int32Array.from(p),
        r: Int32Array.from(rows.flat()),
        v: Float64Array.from(rows.flat(), (x) => x + 0.5),
      }
    }
    const A = csc([[0, 2, 5], [1], [], [0, 3, 4, 6]])
    const B = csc([[2, 5], [0, 1, 7], [3], [4, 6]])
    const cut = (x: Int32Array | Float64Array, n: number) => x.slice(0, n)
    for (const [la, lb, lv] of [
      [A.r.length, B.r.length, A.v.length],
      [A.r.length - 1, B.r.length, A.v.length],
      [A.r.length, B.r.length - 2, A.v.length],
      [A.r.length, B.r.length, A.v.length - 1],
    ] as const) {
      const [want, ...got] = outcomes(text, 'd', () => [0, 4, A.p, cut(A.r, la), cut(A.v, lv), B.p, cut(B.r, lb), B.v])
      expect(got).toEqual([want, want])
    }
  })

  it('on random heads of guarded loads, nested indices and updates, in range and out of it', () => {
    const rng = new Random(29)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng.next() * xs.length)]!
    const index = (depth: number): string =>
      depth > 0 && rng.next() < 0.25 ? `k[${index(depth - 1)}]` : pick(['i', 'j', 'i + 1', 'j - 1', '0'])
    const load = (depth: number) => `${pick(['x', 'y'])}[${index(depth)}]`
    const atom = (depth: number): string =>
      pick([
        () => `${load(depth)} < ${load(depth)}`,
        () => `${load(depth)} > 0.5`,
        () => `i < ${pick(['2', '3', 'j'])}`,
        () => `k[${index(depth)}] == ${pick(['0', '1', '2'])}`,
      ])()
    const cond = (depth: number): string =>
      depth === 0 || rng.next() < 0.3
        ? atom(1)
        : `(${cond(depth - 1)} ${pick(['&&', '||', '&&', '||', '&', '|'])} ${cond(depth - 1)})`
    const value = (): string =>
      pick([() => load(1), () => `${load(1)} * ${load(1)}`, () => `${load(1)} - 2.0 * ${load(1)}`])()
    const stmt = (): string =>
      pick([
        () => `if (${cond(3)}, ~) {\n    s += ${value()}\n  } else {\n    s -= ${value()}\n  }`,
        () => `s += ${value()}`,
        () => `t: f64 <- ${value()}\n  s += t * 0.5\n  t -> ${value()}`,
        () => `z[${index(1)}] += ${value()}`,
      ])()
    let errors = 0
    for (let p = 0; p < 60; p++) {
      const body = Array.from({ length: 1 + Math.floor(rng.next() * 3) }, stmt).join('\n  ')
      const text = `fn f(s: f64, x: f64[], y: f64[], z: f64[], k: i32[], i: i32, j: i32) {\n  ${body}\n}`
      for (let c = 0; c < 8; c++) {
        const i = Math.floor(rng.next() * 6) - 1
        const j = Math.floor(rng.next() * 6) - 1
        const n = 1 + Math.floor(rng.next() * 4)
        const ks = Int32Array.from({ length: 1 + Math.floor(rng.next() * 4) }, () => Math.floor(rng.next() * 6) - 1)
        const args = () => [
          0,
          Float64Array.from({ length: n }, (_, q) => 0.25 * q + 0.125),
          Float64Array.from({ length: 3 }, (_, q) => 0.5 - q),
          new Float64Array(2),
          ks.slice(),
          i,
          j,
        ]
        const [want, ...got] = outcomes(text, 'f', args)
        expect(got, `${text}\n(i = ${i}, j = ${j}, len(x) = ${n}, k = ${ks})`).toEqual([want, want])
        if (want!.startsWith('runtime/out-of-bounds')) errors++
      }
    }
    // (a good part of the calls read out of range)
    expect(errors).toBeGreaterThan(100)
  })
})
