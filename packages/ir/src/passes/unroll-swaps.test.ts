/**
 * Pass `unroll-swaps` on printed IR before and after, and the loops it must leave as they are.
 * The compiled programs are checked against the interpreter (random programs with swaps in
 * `while` loops, checks on and off) in `@tenet/backend-cpu`'s `swap-loops.test.ts` and
 * `@tenet/backend-wasm`'s `swap-loops.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printFunction, printStmts } from '../index.js'
import { calledInCountingLoops, insertChecks, unrollCheckedSwaps, unrollSwaps } from './index.js'

const registry = createRegistry()
const fnOf = (text: string, name = 'f'): FunctionDef =>
  check(parse(text, []).functions, [], registry).functions.get(name)!
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const unrolled = (text: string) => body(unrollSwaps(fnOf(text)))
const unchanged = (text: string) => {
  const f = fnOf(text)
  return printFunction(unrollSwaps(f)) === printFunction(f)
}

/** Paper 001's series loop after inlining `imul` (the shape the backends see). */
const series = `fn f(out: f64, h2: f64, s: f64, nu: i32) {
  k: i32 <- 0
  anc: f64 <- 0.0
  x: f64 <- 0.0
  while (abs(s) > 1e-8 && abs(anc) < 1e-8, k != 0) {
    k += 1
    x -= h2 / (f64(k) * f64(k + nu))
    anc += s * x
    s -= anc / x
    SWAP(s, anc)
    out += identity(s)
    x += h2 / (f64(k) * f64(k + nu))
  }
  x -> 0.0
  anc -> 0.0
  k -> 0
}`

describe('pass `unroll-swaps`', () => {
  it('prints the IR before and after: the second copy under the exchanged names, the exchange left at the exit', () => {
    expect(unrolled(series)).toMatchInlineSnapshot(`
      "k: i32 <- 0
      anc: f64 <- 0.0
      x: f64 <- 0.0
      while (abs(s) > 1e-8 && abs(anc) < 1e-8, k != 0) {
        k += 1
        x -= h2 / (f64(k) * f64(k + nu))
        anc += s * x
        s -= anc / x
        out += identity(anc)
        x += h2 / (f64(k) * f64(k + nu))
        if (abs(anc) > 1e-8 && abs(s) < 1e-8, ~) {
          k += 1
          x -= h2 / (f64(k) * f64(k + nu))
          s += anc * x
          anc -= s / x
          out += identity(s)
          x += h2 / (f64(k) * f64(k + nu))
        } else {
          SWAP(s, anc)
        }
      }
      x -> 0.0
      anc -> 0.0
      k -> 0"
    `)
  })

  it('composes disjoint exchanges (two pairs, at two places in the body), `<->` included', () => {
    expect(
      unrolled(`fn f(a: f64, b: f64, c: i32, d: i32, n: i32) {
  i: i32 <- 0
  while (i < n, i > 0) {
    a += b
    a <-> b
    c += d * i
    SWAP(d, c)
    i += 1
  }
  i -> n
}`),
    ).toMatchInlineSnapshot(`
      "i: i32 <- 0
      while (i < n, i > 0) {
        a += b
        c += d * i
        i += 1
        if (i < n, ~) {
          b += a
          d += c * i
          i += 1
        } else {
          SWAP(a, b)
          SWAP(d, c)
        }
      }
      i -> n"
    `)
  })

  it('leaves a swap loop inside a counting loop as it is (a batch: runs the processor overlaps)', () => {
    const loop = `i: i32 <- 0
    while (i < n, i > 0) {
      a[0] += b
      SWAP(b, c)
      i += 1
    }
    i -> n`
    const text = `fn f(a: f64[], b: f64, c: f64, n: i32) {
  for j in 0..len(a) {
    ${loop}
  }
}`
    expect(unrolled(text)).not.toContain('if (')
    // the same loop outside it is unrolled
    expect(unrolled(`fn f(a: f64[], b: f64, c: f64, n: i32) {\n${loop}\n}`)).toContain('if (')
  })

  it('finds the functions a counting loop calls, directly or through others (their loops stay)', () => {
    const text = `fn leaf(a: f64, b: f64) { SWAP(a, b) }
fn mid(a: f64, b: f64) { leaf(a, b) }
fn once(a: f64, b: f64) { a += b }
fn batch(x: f64[], b: f64) {
  for j in 0..len(x) {
    if (b > 0.0, ~) { ~mid(x[j], b) }
  }
  once(x[0], b)
}`
    const fns = check(parse(text, []).functions, [], registry).functions
    expect([...calledInCountingLoops(fns.values())].sort()).toEqual(['leaf', 'mid'])
    // the batch's loop inside a called function stays rolled
    const loop = `fn f(a: f64, b: f64, c: f64, n: i32) {
  i: i32 <- 0
  while (i < n, i > 0) {
    a += b
    SWAP(b, c)
    i += 1
  }
  i -> n
}`
    expect(body(unrollSwaps(fnOf(loop), true))).not.toContain('if (')
    expect(body(unrollSwaps(fnOf(loop)))).toContain('if (')
  })

  it('unrolls an inner loop inside an outer one, and leaves a swap nested in an `if` as a swap (renamed)', () => {
    expect(
      unrolled(`fn f(a: f64, b: f64, c: f64, n: i32, m: i32) {
  if (m > 0, ~) {
    i: i32 <- 0
    while (i < n, i > 0) {
      if (a > 0.0, ~) { SWAP(b, c) }
      a += b
      a <-> c
      i += 1
    }
    i -> n
  }
}`),
    ).toMatchInlineSnapshot(`
      "if (m > 0, ~) {
        i: i32 <- 0
        while (i < n, i > 0) {
          if (a > 0.0, ~) {
            SWAP(b, c)
          }
          a += b
          i += 1
          if (i < n, ~) {
            if (c > 0.0, ~) {
              SWAP(b, a)
            }
            c += b
            i += 1
          } else {
            SWAP(a, c)
          }
        }
        i -> n
      }"
    `)
  })

  it('leaves loops alone: no swap, a cycle of three, two swaps that cancel, array elements, a rebound name, a host call', () => {
    // no swap
    expect(
      unchanged('fn f(a: f64, n: i32) { i: i32 <- 0\n while (i < n, i > 0) { a += 1.0\n i += 1 }\n i -> n }'),
    ).toBe(true)
    // a ↔ b then b ↔ c: a cycle of three names (three iterations would be needed)
    expect(
      unchanged(
        'fn f(a: f64, b: f64, c: f64, n: i32) { i: i32 <- 0\n while (i < n, i > 0) { SWAP(a, b)\n SWAP(b, c)\n i += 1 }\n i -> n }',
      ),
    ).toBe(true)
    // the same pair twice: nothing moves at the back edge
    expect(
      unchanged(
        'fn f(a: f64, b: f64, n: i32) { i: i32 <- 0\n while (i < n, i > 0) { SWAP(a, b)\n a += b\n SWAP(a, b)\n i += 1 }\n i -> n }',
      ),
    ).toBe(true)
    // elements of an array are memory, not names
    expect(
      unchanged(
        'fn f(x: f64[], n: i32) { i: i32 <- 0\n while (i < n, i > 0) { x[0] += x[1]\n SWAP(x[0], x[1])\n i += 1 }\n i -> n }',
      ),
    ).toBe(true)
    // the body binds an exchanged name (a `for` loop's variable... here an ancilla inside the loop)
    expect(
      unchanged(
        'fn f(a: f64, n: i32) { i: i32 <- 0\n while (i < n, i > 0) { t <- 1.0\n a <-> t\n a += t\n a <-> t\n t -> 1.0\n i += 1 }\n i -> n }',
      ),
    ).toBe(true)
  })

  it('leaves a loop whose condition calls the host (it would run once more)', () => {
    const f = check(
      parse(
        'fn f(a: f64, b: f64, n: i32) { i: i32 <- 0\n while (${0}(i) < n, i > 0) { a += b\n a <-> b\n i += 1 }\n i -> n }',
        [(i: number) => i],
      ).functions,
      [(i: number) => i],
      registry,
    ).functions.get('f')!
    expect(printFunction(unrollSwaps(f))).toBe(printFunction(f))
  })
})

describe('pass `unroll-swaps` with checks on (`unrollCheckedSwaps`, after `insertChecks`)', () => {
  const options = { checks: true, tolerance: 1e-8 }
  const program = (text: string) => check(parse(text, []).functions, [], registry)
  const asserted = (text: string) => {
    const p = program(text)
    return insertChecks(p, new Map([...p.functions]), options)
  }

  it('prints the IR before and after: each copy keeps its iteration check, renamed; the entry check stays before the loop', () => {
    const before = asserted(series)
    expect(body(before.program.functions.get('f')!)).toMatchInlineSnapshot(`
      "k: i32 <- 0
      anc: f64 <- 0.0
      x: f64 <- 0.0
      assert postWhileStart(!(k != 0)) else ("k != 0")
      while (abs(s) > 1e-8 && abs(anc) < 1e-8, k != 0) {
        k += 1
        x -= h2 / (f64(k) * f64(k + nu))
        anc += s * x
        s -= anc / x
        SWAP(s, anc)
        out += identity(s)
        x += h2 / (f64(k) * f64(k + nu))
        assert postWhileIteration(k != 0) else ("k != 0")
      }
      assert dealloc($near(x, 0.0)) else ("x", "0.0", x, 0.0)
      x -> 0.0
      assert dealloc($near(anc, 0.0)) else ("anc", "0.0", anc, 0.0)
      anc -> 0.0
      assert dealloc(k == 0) else ("k", "0", k, 0)
      k -> 0"
    `)
    const after = unrollCheckedSwaps(before.program, before.inverses, options)
    expect(body(after.program.functions.get('f')!)).toMatchInlineSnapshot(`
      "k: i32 <- 0
      anc: f64 <- 0.0
      x: f64 <- 0.0
      assert postWhileStart(!(k != 0)) else ("k != 0")
      while (abs(s) > 1e-8 && abs(anc) < 1e-8, k != 0) {
        k += 1
        x -= h2 / (f64(k) * f64(k + nu))
        anc += s * x
        s -= anc / x
        out += identity(anc)
        x += h2 / (f64(k) * f64(k + nu))
        assert postWhileIteration(k != 0) else ("k != 0")
        if (abs(anc) > 1e-8 && abs(s) < 1e-8, ~) {
          k += 1
          x -= h2 / (f64(k) * f64(k + nu))
          s += anc * x
          anc -= s / x
          out += identity(s)
          x += h2 / (f64(k) * f64(k + nu))
          assert postWhileIteration(k != 0) else ("k != 0")
        } else {
          SWAP(s, anc)
        }
      }
      assert dealloc($near(x, 0.0)) else ("x", "0.0", x, 0.0)
      x -> 0.0
      assert dealloc($near(anc, 0.0)) else ("anc", "0.0", anc, 0.0)
      anc -> 0.0
      assert dealloc(k == 0) else ("k", "0", k, 0)
      k -> 0"
    `)
  })

  it('changes nothing with checks off, or for a function a counting loop calls', () => {
    const p = program(series)
    const inverses = new Map([...p.functions])
    const off = unrollCheckedSwaps(p, inverses, { checks: false, tolerance: 1e-8 })
    expect(off.program).toBe(p)
    const batch = asserted(`${series}
fn g(out: f64[], h2: f64, s: f64[], nu: i32) {
  for i in 0..len(out) { f(out[i], h2, s[i], nu) }
}`)
    const after = unrollCheckedSwaps(batch.program, batch.inverses, options)
    expect(printFunction(after.program.functions.get('f')!)).toBe(printFunction(batch.program.functions.get('f')!))
  })
})
