/**
 * The code generators' \`hoist-pools\` (see \`hoistableAllocs\` of \`@tenet/ir\`; the cpu backend's
 * and the wasm backend's \`hoistAllocs\`) as vitest tests for any backend: the programs of
 * \`hoistPoolsSource\` against the reference interpreter, checks on and off, forwards and
 * backwards, with the hoist and without it (\`TENET_DISABLE_PASSES=hoist-pools\`), one module
 * called many times in a row: lengths that fail (in a loop that runs and in one that does not),
 * elements out of range, lengths the loop writes, a second allocation sized by the first, a
 * statement before the allocation, a step of 2, recursion, and a host function that calls the
 * program again while the loop runs.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, type BackendSpec } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { raisedError } from './checked-programs.js'

/**
 * Loops whose bodies allocate arrays: \`f\` two hoisted allocations (one zeroed in each iteration,
 * it reads \`a[n - 1]\` as written or not), \`g\` one after another statement (not hoisted), \`h\`
 * one whose length the loop writes (not hoisted), \`k\` a step of 2 and a second allocation sized
 * by the first (\`len(a)\`: not hoisted), \`r\` recursion inside the loop.
 */
export const hoistPoolsSource = `
fn f(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) {
    a: f64[] <- zeros(n)
    b: f64[] <- zeros(2 * n - 1)
    a[0] += x[j]
    out[j] += a[n - 1]
    b[n - 1] += a[0] * 2.0
    out[j] += a[0] + b[n - 1]
    b[n - 1] -= a[0] * 2.0
    a[0] -= x[j]
    b -> zeros(2 * n - 1)
    a -> zeros(n)
  }
}
fn g(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) {
    out[j] += x[j]
    a: f64[] <- zeros(n)
    a[0] += x[j]
    out[j] += a[0]
    a[0] -= x[j]
    a -> zeros(n)
  }
}
fn h(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) {
    a: f64[] <- zeros(n)
    a[n - 1] += x[j]
    out[j] += a[n - 1] * f64(n)
    a[n - 1] -= x[j]
    a -> zeros(n)
    n += 1
  }
  n -= len(out)
}
fn k(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) by 2 {
    a: f64[] <- zeros(n)
    b: f64[] <- zeros(len(a) + 1)
    a[0] += x[j]
    b[n] += a[0]
    out[j] += b[n]
    b[n] -= a[0]
    a[0] -= x[j]
    b -> zeros(len(a) + 1)
    a -> zeros(n)
  }
}
fn r(out: f64[], x: f64[], n: i32, d: i32) {
  for j in 0..len(out) {
    a: f64[] <- zeros(n)
    a[n - 1] += x[j]
    if (d > 0, ~) {
      d -= 1
      r(out, x, n, d)
      d += 1
    }
    out[j] += a[n - 1]
    a[n - 1] -= x[j]
    a -> zeros(n)
  }
}
fn down(out: f64[], x: f64[], n: i32) {
  for j in reverse 0..len(out) {
    a: f64[] <- zeros(n)
    c: f64[] <- zeros(n + 2)
    a[n - 1] += x[j]
    c[n + 1] += a[n - 1] * x[j]
    out[j] += c[n + 1] - a[n - 1]
    c[n + 1] -= a[n - 1] * x[j]
    a[n - 1] -= x[j]
    c -> zeros(n + 2)
    a -> zeros(n)
  }
}`

/** A loop whose host function (\`\${0}\`) may call the program again while an iteration runs. */
export const hoistPoolsHostSource = `fn e(out: f64[], x: f64[], n: i32) {
  for j in 0..len(out) {
    a: f64[] <- zeros(n)
    a[0] += x[j]
    @safe \${0}()
    out[j] += a[0] * 2.0
    a[0] -= x[j]
    a -> zeros(n)
  }
}`

/** \`f()\` with \`hoist-pools\` switched off. */
export function withoutHoistPools<T>(f: () => T): T {
  disabledPasses.add('hoist-pools')
  try {
    return f()
  } finally {
    disabledPasses.delete('hoist-pools')
  }
}

/** The result (arrays as lists, −0 kept) or the error. */
function outcome(run: () => unknown): unknown {
  try {
    return JSON.stringify(run(), (_k, v) =>
      ArrayBuffer.isView(v) ? Array.from(v as Float64Array, (y) => (Object.is(y, -0) ? '-0' : String(y))) : v,
    )
  } catch {
    return raisedError(run)
  }
}

/** Registers the \`hoist-pools\` tests of the backend \`spec\` (see the module comment). */
export function describeHoistPools(spec: BackendSpec): void {
  const registry = createRegistry().registerBackend(spec).registerBackend(interpreterBackend)
  const compile = (src: string, backend: string, checks: boolean, hosts: unknown[] = []): TenetModule =>
    compileModule(parse(src, hosts as never), { registry, backend, checks })

  describe(`hoist-pools (${spec.name})`, () => {
    it('gives the interpreter’s results and errors, forwards and backwards, checks on and off, with and without the hoist', () => {
      const cases: Array<[string, number, number]> = []
      // (n = 0: an element out of range; n = -1: a length that fails)
      for (const name of ['f', 'g', 'h', 'k', 'down'])
        for (const len of [0, 1, 4, 5]) for (const n of [-1, 0, 1, 2, 3]) cases.push([name, len, n])
      for (const checks of [false, true]) {
        const ref = compile(hoistPoolsSource, 'interpreter', checks)
        const mods = [
          compile(hoistPoolsSource, spec.name, checks),
          withoutHoistPools(() => compile(hoistPoolsSource, spec.name, checks)),
        ]
        // one module called many times in a row: failed calls between passing ones
        for (let round = 0; round < 2; round++)
          for (const [name, len, n] of cases) {
            const args = () => [
              Float64Array.from({ length: len }, (_, i) => i - 0.5),
              Float64Array.of(1.5, -2, 0.25, 3, -0),
              n,
            ]
            const want = outcome(() => ref[name]!(...args()))
            const failed = typeof want === 'string' && want.startsWith('runtime/')
            // (an element out of range with checks off is not defined: only the runs that pass, and
            // the length that fails, which is checked either way)
            if (!checks && failed && !want.startsWith('runtime/array-length')) continue
            for (const m of mods) {
              expect(
                outcome(() => m[name]!(...args())),
                `${name} len ${len} n ${n} checks ${checks}`,
              ).toEqual(want)
              if (failed) continue
              const fwd = () =>
                (m[name]!(...args()) as unknown[]).map((v) => (v instanceof Float64Array ? v.slice() : v))
              const back = fwd()
              expect(outcome(() => m[name]!.inverse(...back))).toEqual(outcome(() => ref[name]!.inverse(...fwd())))
              // (the inverse takes the arguments back)
              expect(outcome(() => back)).toEqual(outcome(args))
            }
          }
      }
    })

    it('a length that fails throws the allocation’s error only where the loop runs', () => {
      for (const checks of [false, true]) {
        const m = compile(hoistPoolsSource, spec.name, checks)
        const ref = compile(hoistPoolsSource, 'interpreter', checks)
        const out = new Float64Array(0)
        expect(m.f!(out, Float64Array.of(1), -1)).toEqual([out, Float64Array.of(1), -1])
        const bad = () => [new Float64Array(2), Float64Array.of(1, 2), -1] as const
        expect(raisedError(() => m.f!(...bad()))).toBe(raisedError(() => ref.f!(...bad())))
        expect(raisedError(() => m.down!(...bad()))).toBe(raisedError(() => ref.down!(...bad())))
      }
    })

    it('recursion and a host function that calls the program again: the interpreter’s results', () => {
      const ref = compile(hoistPoolsSource, 'interpreter', true)
      for (const checks of [false, true]) {
        const c = compile(hoistPoolsSource, spec.name, checks)
        for (const d of [0, 1, 3]) {
          const args = () => [new Float64Array(3), Float64Array.of(1.5, -2, 0.25), 2, d]
          expect(outcome(() => c.r!(...args()))).toEqual(outcome(() => ref.r!(...args())))
        }
      }
      // the host function calls the same function again (other arrays) the first time it runs
      const results: unknown[] = []
      for (const backend of [spec.name, 'interpreter']) {
        let depth = 0
        const mods: Record<string, TenetModule> = {}
        const reenter = () => {
          if (depth++ === 0) mods.m!.e!(new Float64Array(2), Float64Array.of(7, 8), 3)
          return 0
        }
        mods.m = compile(hoistPoolsHostSource, backend, false, [reenter])
        results.push([outcome(() => mods.m!.e!(new Float64Array(3), Float64Array.of(1, 2, 3), 2)), depth])
      }
      expect(results[0]).toEqual(results[1])
    })
  })
}
