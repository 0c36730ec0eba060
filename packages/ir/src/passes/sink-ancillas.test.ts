/**
 * The passes `sink-ancillas` and `contract-arrays` on printed IR: a branch keeper (paper 000's
 * sparse dot product, its `~{ }` written out as preprocessing expands it) and the cases that must
 * stay as they are. The compiled programs are checked against the interpreter in
 * `@tenet/backend-cpu`'s `keeper-programs.test.ts` and the conformance suite.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts, type Stmt } from '../index.js'
import { contractArrays, optimize, restores, sinkAncillas } from './index.js'

const fn = (text: string): FunctionDef => {
  const m = parse(text)
  return check(m.functions, [], createRegistry()).functions.get('f')!
}
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)

/** The merge of two sorted index lists with a branch keeper, the decisions undone per column. */
const keeper = (uncompute: string, between = '') => `
fn f(r: f64, n: i32, m: i32, ap: i32[], ar: i32[], av: f64[], bp: i32[], br: i32[], bv: f64[]) {
  keeper: bool[] <- zeros(2 * m)
  for j in 0..n {
    ia: i32 <- ap[j]
    ib: i32 <- bp[j]
    for i in 0..ap[j + 1] - ap[j] + bp[j + 1] - bp[j] {
      if (ia < ap[j + 1] && ib < bp[j + 1] && ar[ia] == br[ib], ~) {
        r += av[ia] * bv[ib]
      }
      keeper[i] ^= ia == ap[j + 1] || ib < bp[j + 1] && br[ib] < ar[ia]
      if (keeper[i], ~) {
        ib += 1
      } else {
        ia += 1
      }
    }
    ${between}
    ${uncompute}
    ia -> ap[j]
    ib -> bp[j]
  }
  keeper -> zeros(2 * m)
}`
const inverse = `for i in reverse 0..ap[j + 1] - ap[j] + bp[j + 1] - bp[j] {
      if (keeper[i], ~) {
        ib -= 1
      } else {
        ia -= 1
      }
      keeper[i] ^= ia == ap[j + 1] || ib < bp[j + 1] && br[ib] < ar[ia]
    }`

describe('pass `sink-ancillas`', () => {
  it('gives a branch keeper that every column restores to the column', () => {
    const f = fn(keeper(inverse))
    const j = f.body[1] as Extract<FunctionDef['body'][number], { kind: 'for' }>
    expect(restores(j.body, 'keeper')).toBe(true)
    const text = body(sinkAncillas(f))
    expect(text.split('\n').slice(0, 3).join('\n')).toBe(`for j in 0..n {
  keeper: bool[] <- zeros(2 * m)
  ia: i32 <- ap[j]`)
    expect(text.split('\n').slice(-3).join('\n')).toBe(`  ib -> bp[j]
  keeper -> zeros(2 * m)
}`)
  })

  it('with the others, leaves one merge loop per column and the keeper as one bool per step', () => {
    const p = check(parse(keeper(inverse)).functions, [], createRegistry())
    const f = optimize(p, new Map(), { checks: false, tolerance: 1e-8 }).program.functions.get('f')!
    expect(body(f)).toBe(`for j in 0..n {
  ia: i32 <- ap[j]
  ib: i32 <- bp[j]
  i$inv0: i32 <- bp[j + 1]
  i$inv1: i32 <- ap[j + 1]
  for i in 0..ap[j + 1] - ap[j] + bp[j + 1] - bp[j] {
    if (ia < i$inv1 && ib < i$inv0 && ar[ia] == br[ib], ~) {
      r += av[ia] * bv[ib]
    }
    keeper$ct: bool <- ia == i$inv1 || ib < i$inv0 && br[ib] < ar[ia]
    if (keeper$ct, ~) {
      ib += 1
    } else {
      ia += 1
    }
    @unchecked {
      keeper$ct -> false
    }
  }
  @unchecked {
    i$inv1 -> ap[j + 1]
    i$inv0 -> bp[j + 1]
  }
  ia -> ap[j]
  ib -> bp[j]
}`)
  })

  it('matches an uncompute with other work in it (an adjoint sweep) and reads between the pair', () => {
    const adjoint = inverse.replace(
      '\n    }',
      `
      if (ia < ap[j + 1] && ib < bp[j + 1] && ar[ia] == br[ib], ~) {
        r -= av[ia] * bv[ib]
      }
    }`,
    )
    expect(body(sinkAncillas(fn(keeper(adjoint, 'r += f64(ia - ib)'))))).toMatch(
      /^for j in 0..n {\n {2}keeper: bool\[\]/,
    )
  })

  it('leaves the keeper where the uncompute is not the inverse, or something between writes what the decisions read', () => {
    const cases = [
      // a condition written differently
      inverse.replace('br[ib] < ar[ia]\n', 'ar[ia] > br[ib]\n'),
      // an update the inverse does not undo
      inverse.replace('ib -= 1', 'ib -= 2'),
      // no uncompute at all
      '',
    ]
    for (const u of cases) expect(body(sinkAncillas(fn(keeper(u))))).toMatch(/^keeper: bool\[\] <- zeros/)
    // `ia` decides the next steps: writing it between compute and uncompute breaks the pair
    expect(body(sinkAncillas(fn(keeper(inverse, 'ia += 1\n    ia -= 1'))))).toMatch(/^keeper: bool\[\] <- zeros/)
  })

  it('refuses float state (an inverse undoes a float update only up to rounding)', () => {
    const f = fn(`fn f(r: f64, x: f64[], n: i32) {
  keeper: bool[] <- zeros(n)
  for j in 0..n {
    s: f64 <- 0.0
    for i in 0..n {
      keeper[i] ^= s < x[i]
      if (keeper[i], ~) { s += x[j] }
    }
    r += s
    for i in reverse 0..n {
      if (keeper[i], ~) { s -= x[j] }
      keeper[i] ^= s < x[i]
    }
    s -> 0.0
  }
  keeper -> zeros(n)
}`)
    expect(body(sinkAncillas(f))).toMatch(/^keeper: bool\[\] <- zeros/)
  })

  it('leaves an array that the loop only reads, or writes only in straight-line statements, before the loop (a per-iteration allocation of the whole array would make the loop quadratic)', () => {
    // read only (a tangent array no statement writes): every iteration "restores" it trivially
    const readOnly = fn(`fn f(g: f64[], x: f64[]) {
  t: f64[] <- zeros(len(x))
  w: f64[] <- zeros(len(x))
  for i in 0..len(x) {
    w[i] += g[i] * t[i] + x[i]
    SWAP(x[i], w[i])
  }
  t -> zeros(len(x))
  w -> zeros(len(x))
}`)
    expect(body(sinkAncillas(readOnly))).toBe(body(readOnly))
    // an i32 element written and restored at the loop's own index, in straight-line statements
    const ownIndex = fn(`fn f(r: f64, k: i32[], n: i32) {
  c: i32[] <- zeros(n)
  for i in 0..n {
    c[i] += k[i]
    r += f64(c[i])
    c[i] -= k[i]
  }
  c -> zeros(n)
}`)
    expect(body(sinkAncillas(ownIndex))).toBe(body(ownIndex))
    // (where `contract-arrays` makes it one scalar per iteration)
    expect(body(contractArrays(sinkAncillas(ownIndex)))).toMatch(/^for i in 0..n {\n {2}c\$ct: i32 <- k\[i\]/)
    // the same pair inside an inner loop is sunk, as the keeper is
    const inner = fn(`fn f(r: f64, k: i32[], n: i32) {
  c: i32[] <- zeros(n)
  for j in 0..n {
    for i in 0..n { c[i] += k[i] }
    r += f64(c[j])
    for i in reverse 0..n { c[i] -= k[i] }
  }
  c -> zeros(n)
}`)
    expect(body(sinkAncillas(inner))).toMatch(/^for j in 0..n {\n {2}c: i32\[\] <- zeros\(n\)/)
  })
})

describe('pass `contract-arrays`', () => {
  it('turns an array used only at its loop index into a scalar per iteration', () => {
    const f = fn(`fn f(r: f64, x: f64[], n: i32) {
  t: f64[] <- zeros(n)
  for i in 0..n {
    t[i] += x[i] * x[i]
    r += t[i]
  }
  t -> zeros(n)
}`)
    expect(body(contractArrays(f))).toBe(`for i in 0..n {
  t$ct: f64 <- 0.0
  t$ct += x[i] * x[i]
  r += t$ct
  @unchecked {
    t$ct -> 0.0
  }
}`)
  })

  it('allocates the scalar with its first exact update (a bool xor, an i32 sum), never a float one', () => {
    const f = fn(`fn f(r: f64, x: f64[], k: i32[], n: i32) {
  b: bool[] <- zeros(n)
  c: i32[] <- zeros(n)
  d: f64[] <- zeros(n)
  for i in 0..n {
    r += x[i]
    b[i] ^= x[i] > 0.0
    c[i] += k[i] * 2
    d[i] += x[i] * x[i]
    if (b[i] && c[i] > 3, ~) { r += d[i] }
  }
  d -> zeros(n)
  c -> zeros(n)
  b -> zeros(n)
}`)
    // (a float sum stays: 0.0 + -0.0 is +0.0, where the value alone could be -0.0)
    expect(body(contractArrays(f))).toBe(`for i in 0..n {
  d$ct: f64 <- 0.0
  r += x[i]
  b$ct: bool <- x[i] > 0.0
  c$ct: i32 <- k[i] * 2
  d$ct += x[i] * x[i]
  if (b$ct && c$ct > 3, ~) {
    r += d$ct
  }
  @unchecked {
    b$ct -> false
  }
  @unchecked {
    c$ct -> 0
  }
  @unchecked {
    d$ct -> 0.0
  }
}`)
  })

  it('drops the element writes nothing reads from the last loop of an array it cannot contract', () => {
    const f = fn(`fn f(r: f64, x: f64[], n: i32) {
  t: f64[] <- zeros(n)
  for i in 0..n { t[i] += x[i] }
  for i in reverse 0..n {
    r += t[i] * 2.0
    t[i] -= x[i]
  }
  t -> zeros(n)
}`)
    expect(body(contractArrays(f))).toBe(`t: f64[] <- zeros(n)
for i in 0..n {
  t[i] += x[i]
}
for i in reverse 0..n {
  r += t[i] * 2.0
}
t -> zeros(n)`)
  })

  it('leaves arrays used at other positions, after the loop, or in a loop whose indices may repeat', () => {
    const cases = [
      'for i in 0..n - 1 { t[i + 1] += x[i] }\n  r += t[1]',
      'for i in 0..n { t[i] += x[i] }\n  r += t[0]',
      'for i in 0..n by s { t[i] += x[i] }',
      'for i in 0..n { r += f64(len(t)) * t[i] }',
    ]
    for (const c of cases) {
      const f = fn(`fn f(r: f64, x: f64[], n: i32, s: i32) {
  t: f64[] <- zeros(n)
  ${c}
  t -> zeros(n)
}`)
      expect(body(contractArrays(f))).toMatch(/^t: f64\[\] <- zeros\(n\)/)
    }
  })

  /** `f` with the parameters named in `names` marked scratch (as the AD layer marks them). */
  const scratch = (f: FunctionDef, ...names: string[]): FunctionDef => ({
    ...f,
    params: f.params.map((p) => (names.includes(p.name) ? { ...p, scratch: true } : p)),
  })
  const lengths = `fn f(r: f64, x: f64[], q: f64[], d: f64[], k: i32, n: i32) {
  for e in 0..len(d) {
    for j in 0..k {
      q[e] += x[e * k + j] ** 2
    }
    d[e] += sqrt(q[e])
  }
  for e in 0..len(q) {
    r += d[e] * 2.0
  }
}`

  it('contracts a scratch parameter (zeros at entry, nothing read back) like a zero ancilla; its length stays readable', () => {
    const f = scratch(fn(lengths), 'q', 'd')
    // q: one loop at its index (len(q) elsewhere reads only the length); d: read by a later loop
    expect(body(contractArrays(f, true))).toBe(`for e in 0..len(d) {
  q$ct: f64 <- 0.0
  for j in 0..k {
    q$ct += x[e * k + j] ** 2
  }
  d[e] += sqrt(q$ct)
  @unchecked {
    q$ct -> 0.0
  }
}
for e in 0..len(q) {
  r += d[e] * 2.0
}`)
    // d, not contracted, is written first by \`d[e] += ...\`: marked \`init\` (zero there; not printed)
    const loop = contractArrays(f, true).body[0] as Extract<Stmt, { kind: 'for' }>
    const first = loop.body.find((s) => s.kind === 'update' && s.target.kind === 'index' && s.target.array.name === 'd')
    expect((first as { init?: boolean }).init).toBe(true)
    expect(contractArrays(f).body.some((s) => s.kind === 'for' && s.body.some((t) => 'init' in t))).toBe(false)
  })

  it('drops the writes nothing reads from the last loop of a scratch parameter it cannot contract', () => {
    const f = scratch(
      fn(`fn f(r: f64, x: f64[], g: f64[], n: i32) {
  for i in 0..n { g[i] += x[i] }
  for i in reverse 0..n {
    r += g[i] * 2.0
    g[i] -= x[i]
  }
}`),
      'g',
    )
    expect(body(contractArrays(f, true))).toBe(`for i in 0..n {
  g[i] += x[i]
}
for i in reverse 0..n {
  r += g[i] * 2.0
}`)
  })

  it('leaves parameters without the hint, the inverse (scratch false), and a scratch array the caller may read at another index', () => {
    const plain = fn(lengths)
    expect(body(contractArrays(plain, true))).toBe(body(plain))
    const f = scratch(plain, 'q', 'd')
    expect(body(contractArrays(f))).toBe(body(plain))
    const shifted = scratch(
      fn(`fn f(r: f64, x: f64[], q: f64[], n: i32) {
  for i in 0..n - 1 { q[i + 1] += x[i] }
  r += q[1]
}`),
      'q',
    )
    expect(body(contractArrays(shifted, true))).toBe(body(contractArrays(shifted)))
  })
})
