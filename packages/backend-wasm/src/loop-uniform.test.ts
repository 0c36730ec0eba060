/**
 * Loop-uniform names of map lanes (`loopUniform` in `map-lanes.ts`): a counter that a varying
 * `while` of a map body updates from uniform values is kept in one scalar local while the loop
 * runs. Every case compares the lanes' bits with the scalar wasm code, the cpu backend and the
 * reference interpreter.
 */
import { describe, expect, it } from 'vitest'
import { bessel, compile, expectSameForward, expectSameRuns, lastLoopUniform, lastMapLanes } from './test-util.js'
import { mulberry32 as rng } from '@tenet/testing'

const zs = (n: number) => Float64Array.from({ length: n }, (_, i) => 0.1 + ((i * 0.6180339887) % 1) * 7.9)

describe('loop-uniform counters', () => {
  it('the Bessel series’ k: kept in a scalar, the bits of the scalar code and the interpreter, checks on and off', () => {
    const lanes = compile(bessel, 'wasm')
    expect(lastMapLanes).toBeGreaterThan(0)
    // k, in the forward loop and in its inverse's
    expect(lastLoopUniform).toBeGreaterThanOrEqual(2)
    const scalar = compile(bessel, 'wasm', false, false)
    expect(lastLoopUniform).toBe(0)
    const checked = compile(bessel, 'wasm', true)
    expect(lastMapLanes).toBe(0)
    const engines = [
      compile(bessel, 'interpreter'),
      compile(bessel, 'interpreter', true),
      compile(bessel, 'cpu'),
      checked,
      scalar,
      lanes,
    ]
    for (const nu of [0, 2, 3])
      for (const n of [1, 2, 5, 16]) expectSameRuns(engines, () => [new Float64Array(n), nu, zs(n)])
  })

  /** A map of g over a, b and ns, with `LOOP` the loop under test (counter q, values x and y). */
  const map = (loop: string) => `
fn g(x: f64, y: f64, n: i32) {
  c: i32 <- 0
${loop}
  c -> 0
}
fn f(a: f64[], b: f64[], ns: i32[]) {
  for i in 0..len(a) { g(a[i], b[i], ns[i]) }
}`
  const cases: Array<[string, string, boolean]> = [
    [
      'an i32 counter and an f64 one that reads it',
      `q: i32 <- 1
w <- 0.5
while (q < n % 7 + 1 && x < 40.0, q > 1) {
  q += 2
  w += f64(q) * 0.25
  x += w / f64(q + n)
  if (x > y, ~) { y += f64(q) } else { c += q }
}
w -> 0.0
q -> 0`,
      true,
    ],
    [
      'a counter written in a varying if inside the loop',
      `q: i32 <- 0
while (q < n % 7 && x < 40.0, q > 0) {
  x += 1.5
  if (x > y, ~) { q += 1 } else { q += 2 }
}
q -> 0`,
      false,
    ],
    [
      'a counter allocated from a varying value',
      `q: i32 <- n % 3
while (q < 8 && x < 40.0, q > 0) {
  q += 1
  x += f64(q)
}
q -> 0`,
      false,
    ],
    [
      'a counter updated by a varying value',
      `q: i32 <- 0
while (q < 20 && x < 40.0, q > 0) {
  q += n % 3 + 1
  x += f64(q)
}
q -> 0`,
      false,
    ],
    [
      'a counter two loops update',
      `q: i32 <- 0
while (q < n % 5 && x < 40.0, q > 0) {
  q += 1
  x += f64(q)
}
while (q < n % 9 && y < 40.0, q > 0) {
  q += 1
  y += f64(q)
}
q -> 0`,
      false,
    ],
    [
      'a counter read after the loop and a loop in a loop',
      `q: i32 <- 0
for j in 0..3 {
  r: i32 <- j
  while (r < n % 6 + j && x < 60.0, r > 0) {
    r += 1
    q += 1
    x += f64(r) * 0.5
  }
  y += f64(r)
  r -> 0
}
c += q
q -> 0`,
      true,
    ],
  ]
  for (const [what, loop, uniform] of cases)
    it(`${uniform ? 'applies to' : 'leaves in lanes'} ${what}, with the same bits`, () => {
      const text = map(loop)
      const lanes = compile(text, 'wasm')
      expect(lastMapLanes).toBeGreaterThan(0)
      if (uniform) expect(lastLoopUniform).toBeGreaterThan(0)
      else expect(lastLoopUniform).toBe(0)
      const engines = [compile(text, 'interpreter'), compile(text, 'cpu'), compile(text, 'wasm', false, false), lanes]
      for (const n of [1, 2, 3, 9, 20])
        expectSameForward(engines, () => [
          Float64Array.from({ length: n }, (_, i) => Math.sin(i * 1.3) * 9),
          Float64Array.from({ length: n }, (_, i) => Math.cos(i * 0.7) * 4),
          Int32Array.from({ length: n }, (_, i) => (i * 5 + 3) % 13),
        ])
    })
})

/**
 * A random map whose body runs varying \`while\`s with counters: each loop allocates its own i32 or
 * f64 counters before it from uniform values or (sometimes) from the element, updates them at its
 * top level by constants, other counters or (sometimes) varying values, or inside an \`if\`
 * (sometimes), and reads them in its conditions and float arithmetic, so that some counters are
 * loop-uniform and some are not.
 */
function randomCounters(seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  let loops = 0
  const block = (depth: number, counters: string[]): string[] => {
    const out: string[] = []
    for (let s = 0; s < 3; s++) {
      const k = r()
      const fs = [
        'x',
        'y',
        ...counters.filter((c) => c.startsWith('w')),
        ...counters.filter((c) => c.startsWith('q')).map((c) => `f64(${c})`),
      ]
      // (an update does not read its target)
      const fexpr = (target: string) => {
        const vs = fs.filter((v) => v !== target)
        const a = pick(vs),
          b = pick([...vs, 's', '0.75'])
        return pick([
          `${a} * 0.5 + ${b}`,
          `${a} / (abs(${b}) + 1.0)`,
          `sqrt(abs(${a})) - ${b} * 0.25`,
          `sin(${a}) * ${b}`,
        ])
      }
      if (depth > 0 && k < 0.4) {
        const j = loops++
        const q = `q${j}`,
          w = `w${j}`
        const inner = [...counters, q, w]
        out.push(`${q}: i32 <- ${pick(['0', '1', 'c0', r() < 0.2 ? 'n % 3' : '2'])}`)
        out.push(`${w} <- ${pick(['0.0', '0.5', 's', r() < 0.2 ? 'y' : '1.25'])}`)
        out.push(`while (${q} < n % 6 + ${pick(['1', '3'])} && abs(x) < 50.0, ${q} >= 0) {`)
        out.push(`  ${q} += ${pick(['1', '2', r() < 0.2 ? 'c' : '1', counters.find((c) => c.startsWith('q')) ?? '1'])}`)
        out.push(`  ${w} += ${pick([`f64(${q}) * 0.5`, '0.25', r() < 0.2 ? 'x * 0.125' : 'f64(c0)'])}`)
        if (r() < 0.2) out.push(`  if (x > y, ~) { ${q} += 1 }`)
        out.push(...block(depth - 1, inner).map((l) => `  ${l}`))
        out.push('}')
        if (r() < 0.5) out.push(`y += f64(${q}) * 0.125 + ${w}`)
        out.push(`${w} -> 0.0`, `${q} -> 0`)
      } else if (k < 0.6) out.push(`x += ${fexpr('x')}`)
      else if (k < 0.75) out.push(`y -= ${fexpr('y')}`)
      else if (k < 0.85) out.push(`c += ${pick(['1', 'n', ...counters.filter((c) => c.startsWith('q'))])}`)
      else out.push(`if (${pick(fs)} < ${pick(fs)}, ~) { x += ${fexpr('x')} } else { c += 1 }`)
    }
    return out
  }
  return `
fn g(x: f64, y: f64, n: i32, s: f64, c0: i32) {
  c: i32 <- 0
${block(2, []).join('\n')}
  c -> 0
}
fn f(a: f64[], b: f64[], ns: i32[], s: f64, c0: i32) {
  for i in 0..len(a) { g(a[i], b[i], ns[i], s, c0) }
}`
}

describe('loop-uniform counters on random maps', () => {
  it('30 programs: the lanes give the bits of the interpreter, the cpu backend and the scalar wasm code', () => {
    let uniform = 0
    for (let seed = 1; seed <= 30; seed++) {
      const text = randomCounters(seed)
      let lanes: ReturnType<typeof compile>
      try {
        lanes = compile(text, 'wasm')
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${text}`)
      }
      if (lastLoopUniform > 0) uniform++
      const engines = [compile(text, 'interpreter'), compile(text, 'cpu'), compile(text, 'wasm', false, false), lanes]
      const r = rng(seed * 17)
      const n = 2 + Math.floor(r() * 9)
      const a = Float64Array.from({ length: n }, () => r() * 6 - 3)
      const b = Float64Array.from({ length: n }, () => r() * 6 - 3)
      const ns = Int32Array.from({ length: n }, () => Math.floor(r() * 12))
      try {
        expectSameForward(engines, () => [a.slice(), b.slice(), ns.slice(), 0.375, 1])
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${text}`)
      }
    }
    // (most programs have a loop the planner finds uniform counters in)
    expect(uniform).toBeGreaterThanOrEqual(15)
  })
})
