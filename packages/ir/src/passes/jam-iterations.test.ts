/**
 * Pass `jam-iterations` on printed IR before and after, and the loops it must leave as they are.
 * The compiled programs are checked bit for bit with and without the pass (cpu and wasm, the
 * objective and the gradient) in `tenet`'s `jam-iterations.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printFunction, printStmts } from '../index.js'
import { insertChecks, jamIterations, optimize } from './index.js'

const registry = createRegistry()
const fnOf = (text: string, name = 'f'): FunctionDef =>
  check(parse(text, []).functions, [], registry).functions.get(name)!
const jammed = (text: string) => printStmts(jamIterations(fnOf(text)).body, 0)
const unchanged = (text: string) => printFunction(jamIterations(fnOf(text))) === printFunction(fnOf(text))

/** Horner's rule per point into a history array, the loss a reduction over the points. */
const horner = `fn f(loss: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    loss += acc[len(c) - 1]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] + c[k] }
    acc -> zeros(len(c))
  }
}`

describe('pass `jam-iterations`', () => {
  it('prints the IR before and after', () => {
    expect(jammed(horner)).toMatchInlineSnapshot(`
      "if (0 < len(xs) && (len(xs) - 1 - 0 >= 3 && len(xs) - 1 - 0 <= 1073741824) && len(c) <= 65536, ~) {
        for j in 0..=len(xs) - 1 - 3 by 4 {
          acc: f64[] <- zeros(len(c))
          acc$b: f64[] <- zeros(len(c))
          acc$c: f64[] <- zeros(len(c))
          acc$d: f64[] <- zeros(len(c))
          for k in 1..len(c) {
            acc[k] += acc[k - 1] * xs[j] + c[k]
            acc$b[k] += acc$b[k - 1] * xs[j + 1] + c[k]
            acc$c[k] += acc$c[k - 1] * xs[j + 2] + c[k]
            acc$d[k] += acc$d[k - 1] * xs[j + 3] + c[k]
          }
          loss += acc[len(c) - 1]
          loss += acc$b[len(c) - 1]
          loss += acc$c[len(c) - 1]
          loss += acc$d[len(c) - 1]
          for k in reverse 1..len(c) {
            acc[k] -= acc[k - 1] * xs[j] + c[k]
            acc$b[k] -= acc$b[k - 1] * xs[j + 1] + c[k]
            acc$c[k] -= acc$c[k - 1] * xs[j + 2] + c[k]
            acc$d[k] -= acc$d[k - 1] * xs[j + 3] + c[k]
          }
          acc -> zeros(len(c))
          acc$b -> zeros(len(c))
          acc$c -> zeros(len(c))
          acc$d -> zeros(len(c))
        }
        if ((len(xs) - 1 - 0 + 1) % 4 != 0, ~) {
          for j in 0 + (len(xs) - 1 - 0 + 1 - (len(xs) - 1 - 0 + 1) % 4)..=len(xs) - 1 by 1 {
            acc: f64[] <- zeros(len(c))
            for k in 1..len(c) {
              acc[k] += acc[k - 1] * xs[j] + c[k]
            }
            loss += acc[len(c) - 1]
            for k in reverse 1..len(c) {
              acc[k] -= acc[k - 1] * xs[j] + c[k]
            }
            acc -> zeros(len(c))
          }
        }
      } else {
        for j in 0..len(xs) {
          acc: f64[] <- zeros(len(c))
          for k in 1..len(c) {
            acc[k] += acc[k - 1] * xs[j] + c[k]
          }
          loss += acc[len(c) - 1]
          for k in reverse 1..len(c) {
            acc[k] -= acc[k - 1] * xs[j] + c[k]
          }
          acc -> zeros(len(c))
        }
      }"
    `)
  })

  it('jams a gradient summed over the iterations where the elements are proved apart (guarded span)', () => {
    const text = `fn f(c: f64[], xs: f64[], g: f64[]) {
  for j in reverse 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 0..len(c) - 1 { acc[k + 1] += acc[k] * xs[j]; g[k] += acc[k] }
    g[len(c) - 1] += acc[len(c) - 1]
    for k in reverse 0..len(c) - 1 { acc[k + 1] -= acc[k] * xs[j] }
    acc -> zeros(len(c))
  }
}`
    const out = jammed(text)
    // the pairs, the guard on the inner loop's span, the shared elements in the iterations' order
    expect(out).toContain('for j in len(xs) - 1..=3 by -4 {')
    expect(out).toContain('len(c) - 1 - 1 - 0 <= 1073741824')
    expect(out).toContain(
      '      g[k] += acc[k]\n      acc$b[k + 1] += acc$b[k] * xs[j - 1]\n      g[k] += acc$b[k]\n      acc$c[k + 1] += acc$c[k] * xs[j - 2]\n',
    )
    expect(out).toContain(
      '    g[len(c) - 1] += acc[len(c) - 1]\n    g[len(c) - 1] += acc$b[len(c) - 1]\n    g[len(c) - 1] += acc$c[len(c) - 1]\n',
    )
  })

  it('leaves a loop whose next iteration reads what this one writes', () => {
    // (reading another array's element j − 1 instead, it jams)
    expect(
      unchanged(`fn f(x: f64[], c: f64[], y: f64[]) {
  for j in 1..len(x) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * y[j - 1] + c[k] }
    x[j] += acc[len(c) - 1]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * y[j - 1] + c[k] }
    acc -> zeros(len(c))
  }
}`),
    ).toBe(false)
    expect(
      unchanged(`fn f(x: f64[], c: f64[]) {
  for j in 1..len(x) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * x[j - 1] + c[k] }
    x[j] += acc[len(c) - 1]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * x[j - 1] + c[k] }
    acc -> zeros(len(c))
  }
}`),
    ).toBe(true)
  })

  it('guards the jammed loop with $apart tests of the array parameters it writes and the ones it reads, and caps the ancillas', () => {
    const text = `fn f(xs: f64[], out: f64[], c: f64[], m: i32) {
  for j in 0..len(xs) - 1 {
    acc: f64[] <- zeros(m)
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    out[j + 1] += acc[len(c) - 1]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] + c[k] }
    acc -> zeros(m)
  }
}`
    const first = jammed(text).split('\n')[0]
    // (the unchecked entry may pass one array as \`xs\` and \`out\`: four iterations' reads of
    // \`xs\` would then come before earlier iterations' writes of \`out\`)
    expect(first).toContain('$apart(c, out)')
    expect(first).toContain('$apart(out, xs)')
    // (four iterations' ancillas live at once: each at most 2^16 elements, else the loop as written)
    expect(first).toContain('m <= 65536')
    expect(jammed(text)).toContain('} else {')
  })

  it('leaves a loop whose range reads what the body writes (the range is evaluated again after the groups)', () => {
    const src = (range: string, write: string) => `fn f(loss: f64, m: i32, n: i32[], c: f64[], xs: f64[]) {
  for j in ${range} {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    loss += acc[len(c) - 1]
    ${write}
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] + c[k] }
    acc -> zeros(len(c))
  }
}`
    expect(unchanged(src('0..m', 'm -= 1'))).toBe(true)
    expect(unchanged(src('0..n[0]', 'n[0] += 1'))).toBe(true)
    // (the length of an array the body writes is no read of what it writes)
    expect(unchanged(src('0..len(xs)', 'xs[j] += 1.0'))).toBe(false)
    expect(unchanged(src('0..len(xs)', 'm += 1'))).toBe(false)
  })

  it('leaves a loop whose inner loop sums into a variable of the function (the order of the sum would change)', () => {
    // (the sum after the inner loop keeps its order: it jams)
    expect(
      unchanged(`fn f(s: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    s += acc[len(c) - 1] * xs[j]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] + c[k] }
    acc -> zeros(len(c))
  }
}`),
    ).toBe(false)
    expect(
      unchanged(`fn f(s: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k]; s += c[k] * xs[j] }
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] + c[k] }
    acc -> zeros(len(c))
  }
}`),
    ).toBe(true)
  })

  it('leaves shared elements that an inner loop may reach (g[len(c) − 1] inside the column g[k])', () => {
    // (the column one shorter, 1..len(c) − 1, is proved apart from g[len(c) − 1]: it jams)
    expect(
      unchanged(`fn f(c: f64[], xs: f64[], g: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) - 1 { acc[k] += acc[k - 1] * xs[j]; g[k] += acc[k] }
    g[len(c) - 1] += acc[0]
    for k in reverse 1..len(c) - 1 { acc[k] -= acc[k - 1] * xs[j] }
    acc -> zeros(len(c))
  }
}`),
    ).toBe(false)
    expect(
      unchanged(`fn f(c: f64[], xs: f64[], g: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j]; g[k] += acc[k] }
    g[len(c) - 1] += acc[0]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] }
    acc -> zeros(len(c))
  }
}`),
    ).toBe(true)
  })

  it('leaves a loop with no recurrence to overlap (it would not pay)', () => {
    expect(
      unchanged(`fn f(loss: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 0..len(c) { acc[k] += c[k] * xs[j] }
    loss += acc[0]
    for k in 0..len(c) { acc[k] -= c[k] * xs[j] }
    acc -> zeros(len(c))
  }
}`),
    ).toBe(true)
  })

  it('leaves a body that may fail part-way (an i32 division) or allocates a length that changes per iteration', () => {
    // (a later iteration's failure would come before an earlier one's remaining statements)
    expect(
      unchanged(`fn f(loss: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    loss += acc[len(c) - 1] * f64(div(7, j - 3))
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] + c[k] }
    acc -> zeros(len(c))
  }
}`),
    ).toBe(true)
    expect(
      unchanged(`fn f(loss: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c) - j)
    for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
    loss += acc[len(c) - 1]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * xs[j] + c[k] }
    acc -> zeros(len(c) - j)
  }
}`),
    ).toBe(true)
  })

  it('runs in `optimize` with run-time checks too, before `hoist-invariants` (whose guarded hoisting would put the inner loop under an `if`)', () => {
    const program = {
      functions: new Map([['f', fnOf(horner)]]),
      hosts: [],
      writes: new Map([['f', [true, false, false]]]),
      registry,
    }
    const options = { checks: true, tolerance: 1e-8 }
    const f = optimize(program, new Map(), options).program.functions.get('f')!
    const text = printFunction(f)
    // the four lanes' inner loops fused, each lane's read of xs[j + m] hoisted before it
    expect(text).toMatch(/k\$inv0: f64 <- xs\[j\]\n *k\$inv1: f64 <- xs\[j \+ 1\]/)
    expect(text).toMatch(/for k in 1\.\.len\(c\) \{\n *acc\[k\] \+= [^\n]*\n *acc\$b\[k\] \+= [^\n]*k\$inv1/)
    // the checks placed on the copies read as the loop as written: \`acc\` and \`xs[j]\`, not \`acc$b\`, \`xs[j + 1]\`
    const checked = insertChecks({ ...program, functions: new Map([['f', f]]) }, new Map(), options)
    const messages = new Set<string>()
    const visit = (body: import('../ast.js').Stmt[]) => {
      for (const s of body) {
        if (s.kind === 'assert' && (s.check === 'deallocArray' || s.check === 'outOfBounds'))
          messages.add(s.args.filter((a) => typeof a === 'string').join(' '))
        if ('body' in s && Array.isArray(s.body)) visit(s.body)
        if (s.kind === 'if') {
          visit(s.then)
          visit(s.else)
        }
      }
    }
    visit(checked.program.functions.get('f')!.body)
    expect([...messages].some((m) => m.includes('$'))).toBe(false)
    expect(messages).toContain('acc zeros(len(c))')
  })

  it('with checks on, jams at most JAM_ITERATIONS_MAX_CHECKED_STATEMENTS statements of bodies per function (review 18c: three jammed loops, 97 KB of JavaScript V8 did not optimize)', () => {
    const loop = (q: number) => `
  for j in 0..len(xs) {
    acc${q}: f64[] <- zeros(len(c))
    for k in 1..len(c) { acc${q}[k] += acc${q}[k - 1] * xs[j] + c[k] }
    loss += acc${q}[len(c) - 1]
    for k in reverse 1..len(c) { acc${q}[k] -= acc${q}[k - 1] * xs[j] + c[k] }
    acc${q} -> zeros(len(c))
  }`
    const three = `fn f(loss: f64, c: f64[], xs: f64[]) {${[0, 1, 2].map(loop).join('')}\n}`
    const run = (checks: boolean) =>
      printFunction(
        optimize(
          {
            functions: new Map([['f', fnOf(three)]]),
            hosts: [],
            writes: new Map([['f', [true, false, false]]]),
            registry,
          },
          new Map(),
          { checks, tolerance: 1e-8 },
        ).program.functions.get('f')!,
      )
    const jammed = (text: string) => [0, 1, 2].filter((q) => text.includes(`acc${q}$b`))
    // (each body 7 statements: two fit in 16, the third does not)
    expect(jammed(run(true))).toEqual([0, 1])
    expect(jammed(run(false))).toEqual([0, 1, 2])
  })

  it("with checks on, renames the scalars that `scalar-arrays` made of a copy's array after the array, as its check reads them", () => {
    const text = printFunction(
      optimize(
        {
          functions: new Map([
            [
              'f',
              fnOf(`fn f(loss: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    d: f64[] <- zeros(2)
    d[0] += xs[j]
    for k in 1..len(c) { acc[k] += acc[k - 1] * d[0] + c[k] }
    loss += acc[len(c) - 1]
    for k in reverse 1..len(c) { acc[k] -= acc[k - 1] * d[0] + c[k] }
    d[0] -= xs[j]
    d -> zeros(2)
    acc -> zeros(len(c))
  }
}`),
            ],
          ]),
          hosts: [],
          writes: new Map([['f', [true, false, false]]]),
          registry,
        },
        new Map(),
        { checks: true, tolerance: 1e-8 },
      ).program.functions.get('f')!,
    )
    expect(text).toContain('d$b$sr0 += xs[j + 1]')
    expect(text).not.toContain('d$sr0$b')
  })
})
