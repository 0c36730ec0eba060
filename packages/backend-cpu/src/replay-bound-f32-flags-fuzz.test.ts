/**
 * Randomized programs against the
 * interpreter (bits, NaN payloads aside from which of two quiet NaNs survives; errors by code
 * and message, locations aside).
 * - f32 elements kept in locals with a written flag: writes under branches, SWAPs, nested loops,
 *   up, down and stepped loops, signalling NaNs and −0 in the array, checks on (the checked entry
 *   and `.core`) and off, forwards and backwards, failures part-way (checks on: restored arrays).
 * - replay-bound: f64 and f32 terms of many magnitudes (ulps around the tolerance, NaN, Infinity, subnormal,
 *   −0) under branches, five tolerances, forwards and backwards.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, generatedCode, interpreterBackend, type TenetFunction } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend } from './index.js'

type Fn = TenetFunction & { inverse: TenetFunction & { core: (...a: unknown[]) => unknown } } & {
  core: (...a: unknown[]) => unknown
}
const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const compile = (source: string, backend: string, checks: boolean, tolerance?: number): Fn =>
  (
    compileModule(parse({ text: source, name: 'p' }), {
      registry: registry(),
      backend,
      checks,
      ...(tolerance !== undefined ? { tolerance } : {}),
    }) as unknown as Record<string, Fn>
  ).f!
let seed = 1
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
const head = (e: string) => e.split('\n')[0]!.replace(/ \(at \d+:\d+\)/, '')
const call = (f: Fn, inverse: boolean, args: readonly unknown[]) =>
  raisedError(() => (inverse ? f.inverse : f)(...(args as unknown[])))

describe('f32 promotion flags, random loops', () => {
  const bits = (a: Float32Array) =>
    Array.from(new Uint32Array(a.buffer.slice(0)), (x) =>
      (x & 0x7fc00000) === 0x7fc00000 ? 'qNaN' : x.toString(16),
    ).join(' ')
  function stmt(depth: number, els: string[]): string {
    const r = rnd()
    if (r < 0.3 && depth < 2) {
      const c = pick(['s > 0.0', 'i == k', 'i != k', 'f32(i) < s', 'i > 1'])
      const th = Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => stmt(depth + 1, els)).join('\n')
      const el = rnd() < 0.4 ? ` else {\n${stmt(depth + 1, els)}\n}` : ''
      return `if (${c}, ~) {\n${th}\n}${el}`
    }
    if (r < 0.4) {
      const [p, q] = [pick(els), pick(els)]
      if (p !== q) return `SWAP(${p}, ${q})`
    }
    const t = pick(els)
    const o = pick(els.filter((e) => e !== t))
    const v = pick(['s', 's * f32(i)', `${o} * 0.25`, 's - 0.125', `${o} + s`, `${o} / (s + f32(i))`])
    return `${t} ${pick(['+=', '-='])} ${v}`
  }
  function program(): string {
    const nested = rnd() < 0.5
    const els = nested
      ? pick([
          ['a[o]', 'a[o + 1]'],
          ['a[0]', 'a[1]'],
        ])
      : pick([
          ['a[0]', 'a[1]'],
          ['a[k]', 'a[k + 1]'],
          ['a[0]', 'a[2]', 'a[1]'],
        ])
    const body = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => stmt(0, els)).join('\n')
    const loop = pick(['for i in 0..n', 'for i in 0..n by 2', 'for i in n - 1..=0 by -1'])
    const inner = `  ${loop} {\n${body}\n  }`
    const extra = rnd() < 0.5 ? `\n  ${pick(els)} += s * 0.5` : ''
    return nested
      ? `fn f(a: f32[], s: f32, k: i32, n: i32) {\n for o in 0..k {\n${inner}${extra}\n }\n}`
      : `fn f(a: f32[], s: f32, k: i32, n: i32) {\n${inner}\n}`
  }
  const SPECIAL = [0x7f800001, 0xffa00005, 0x7fc00003, 0x80000000]
  function args(n: number, la: number, k: number) {
    const a = Float32Array.from({ length: la }, (_, q) => q / 8 - 0.3)
    const u = new Uint32Array(a.buffer)
    for (let q = 0; q < la; q++) if (rnd() < 0.5) u[q] = pick(SPECIAL)
    return [a, pick([0.5, -0.25, Number.NaN, -0, 0, Number.POSITIVE_INFINITY, Math.fround(1e-40)]), k, n] as const
  }
  it("the interpreter's bits and errors (checks on and off, .core, both directions)", () => {
    seed = 44
    const bad: string[] = []
    let flagged = 0
    for (let t = 0; t < 120; t++) {
      const src = program()
      const [ri, rc, ro, co] = [
        compile(src, 'interpreter', true),
        compile(src, 'cpu', true),
        compile(src, 'interpreter', false),
        compile(src, 'cpu', false),
      ]
      if (/let w\d+ = false/.test(generatedCode(rc)!)) flagged++
      for (let trial = 0; trial < 5; trial++) {
        const n = pick([0, 1, 2, 3, 5]),
          la = pick([2, 3, 4]),
          k = pick([0, 1, 2, -1])
        const s0 = seed
        for (const inverse of [false, true])
          for (const checks of [true, false]) {
            const [ref, cpu] = checks ? [ri, rc] : [ro, co]
            seed = s0
            const A = args(n, la, k)
            seed = s0
            const B = args(n, la, k)
            const ea = head(call(ref, inverse, A))
            const eb = head(call(cpu, inverse, B))
            // (checks off: an index out of range is the caller's error)
            const inRange = k >= 0 && k + 1 < la && !(src.includes('a[2]') && la < 3)
            if (!checks && (ea !== 'no error' || eb !== 'no error' || !inRange)) continue
            if (`${ea} | ${bits(A[0])}` !== `${eb} | ${bits(B[0])}`)
              bad.push(`checks ${checks} inverse ${inverse} ${[n, la, k]}\n${src}`)
            if (checks && ea === 'no error') {
              seed = s0
              const C = args(n, la, k)
              ;(inverse ? cpu.inverse : cpu).core(...C)
              if (bits(C[0]) !== bits(A[0])) bad.push(`.core inverse ${inverse} ${[n, la, k]}\n${src}`)
            }
          }
      }
    }
    expect(bad.slice(0, 3)).toEqual([])
    // (most programs keep an element with a flag)
    expect(flagged).toBeGreaterThan(40)
  })
})

describe('replay-bound, random recording calls', () => {
  function program(T = 'f64'): string {
    const stmts = Array.from({ length: 17 }, (_, k) => {
      const e = pick(['x[j]', `x[j] * ${k}.25`, 's * x[j]', 'x[j] * x[j]'])
      const upd = `a[${pick([k % 4, (k * 3) % 4])}] ${pick(['+=', '-='])} ${e}`
      return rnd() < 0.3 ? `if (j > ${k % 3}, ~) { ${upd} }` : upd
    })
    return `fn acc(a: ${T}[], x: ${T}[], s: ${T}, n: i32) {
  for j in 0..n {
${stmts.map((t) => `    ${t}`).join('\n')}
  }
}
fn f(y: ${T}[], x: ${T}[], s: ${T}, n: i32) {
  a: ${T}[] <- zeros(4)
  acc(a, x, s, n)
  for k in 0..4 { y[k] += a[k] }
  ~acc(a, x, s, n)
  a -> zeros(4)
}`
  }
  const VALUES = [1, 1e7, 3e7, 0.1, 3, -0, 1e8, -7.5, 0.3, 5e-324, 1e-3, 2.5e7, Number.NaN, Number.POSITIVE_INFINITY]
  const show = (v: number) => (Object.is(v, -0) ? '-0' : String(v))
  for (const T of ['f64', 'f32'] as const)
    it(`${T}: the interpreter's values and errors, five tolerances, both directions`, () => {
      seed = 3
      const A_ = T === 'f64' ? Float64Array : Float32Array
      const bad: string[] = []
      let errors = 0,
        runs = 0
      for (let t = 0; t < 12; t++) {
        const src = program(T)
        for (const tolerance of [1e-8, 1e-300, 1e-3, 0, 1e-12]) {
          const ref = compile(src, 'interpreter', true, tolerance)
          const cpu = compile(src, 'cpu', true, tolerance)
          expect(generatedCode(cpu)).toMatch(/mv\d+ <= \$tol/)
          for (let trial = 0; trial < 6; trial++) {
            const n = pick([1, 2, 3, 5])
            const xs = Array.from({ length: n }, () =>
              rnd() < 0.7 ? pick(VALUES.slice(0, 12)) * (rnd() < 0.5 ? -1 : 1) : pick(VALUES),
            )
            const s = pick(VALUES)
            for (const inverse of [false, true]) {
              const A = [new A_(4), A_.from(xs), s, n] as const
              const B = [new A_(4), A_.from(xs), s, n] as const
              const ea = head(call(ref, inverse, A))
              const eb = head(call(cpu, inverse, B))
              runs++
              if (ea !== 'no error') errors++
              if (`${ea} | ${Array.from(A[0], show)}` !== `${eb} | ${Array.from(B[0], show)}`)
                bad.push(`tolerance ${tolerance} inverse ${inverse} x ${xs} s ${s}\n${src}`)
            }
          }
        }
      }
      expect(bad.slice(0, 3)).toEqual([])
      // (both outcomes well represented)
      expect(errors).toBeGreaterThan(runs / 5)
      // (f32: more round-off past the tolerances)
      expect(errors).toBeLessThan((runs * (T === 'f64' ? 4 : 9)) / (T === 'f64' ? 5 : 10))
    })
})
