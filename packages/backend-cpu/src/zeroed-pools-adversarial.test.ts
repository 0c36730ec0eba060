/**
 * Adversarial review (round 15, c): pooled small arrays zeroed by their deallocation check (checks
 * on). Two sites in one loop (elements swapped between them), a callee writing the caller's
 * array, recursion (a reentrant function: not pooled), arrays of 1, 2, 16 and 17 elements of f64,
 * f32 and i32, values left within the tolerance, -0, NaN, Inf, indices out of range (a throw
 * between the allocation and the check), many calls in a row on one module, forwards and
 * `.inverse`: every call gives the interpreter's result or error.
 */
import { describe, expect, it } from 'vitest'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { cpuBackend } from './index.js'

const cpu = backendUnderTest(cpuBackend, { checks: true })
const reference = referenceBackend({ checks: true })

function outcome(run: () => unknown): unknown {
  try {
    return JSON.stringify(run(), (_k, x) => (typeof x === 'number' ? (Object.is(x, -0) ? '-0' : String(x)) : x))
  } catch {
    return raisedError(run)
  }
}

const prog = (N: number, T: string) => `
fn h(out: ${T}[], a: ${T}[], x: ${T}[], leave: ${T}, k: i32) {
  a[0] += x[0]
  a[k] += leave
  out[0] += a[1] + a[${N - 1}]
  a[0] -= x[0]
}
fn f(out: ${T}[], x: ${T}[], leave: ${T}, k: i32, m: i32) {
  for j in 0..m {
    a: ${T}[] <- zeros(${N})
    b: ${T}[] <- zeros(${N})
    h(out, a, x, leave, k)
    out[1] += a[0] + b[${N - 1}]
    b[${N - 1}] += x[1]
    SWAP(a[${N - 1}], b[${N - 1}])
    out[2] += b[${N - 1}] + a[${N - 1}]
    SWAP(a[${N - 1}], b[${N - 1}])
    b[${N - 1}] -= x[1]
    b -> zeros(${N})
    a -> zeros(${N})
  }
}
fn r(out: ${T}[], x: ${T}[], leave: ${T}, d: i32) {
  if (d > 0, ~) {
    a: ${T}[] <- zeros(${N})
    a[d - 1] += leave
    out[d] += a[0] + a[${N - 1}]
    d -= 1
    r(out, x, leave, d)
    d += 1
    a[d - 1] -= leave
    a -> zeros(${N})
  }
}`

describe('pooled small arrays zeroed by their checks', () => {
  it('the interpreter’s results and errors, call after call', () => {
    for (const N of [1, 2, 16, 17])
      for (const T of ['f64', 'f32', 'i32']) {
        const src = prog(N, T)
        const C = T === 'f64' ? Float64Array : T === 'f32' ? Float32Array : Int32Array
        const leaves =
          T === 'i32' ? [0, 1, -1, 7] : [0, -0, 1e-12, -1e-12, 1e-3, Number.NaN, Number.POSITIVE_INFINITY, 2]
        const mR = reference.compile(src) as Record<
          string,
          ((...a: unknown[]) => unknown) & { inverse: (...a: unknown[]) => unknown }
        >
        const mC = cpu.compile(src) as typeof mR
        const js = (mC.f as unknown as Record<symbol, { compiled: { sourceOf(n: string, i: boolean): string } }>)[
          TENET_FUNCTION
        ]!.compiled.sourceOf('f', false)
        // (a pooled site, its check the zeroing one; `b` may become scalars: scalar-arrays)
        expect(js.match(/\$all(Near|Zero)Z\(/g)?.length ?? 0, js).toBeGreaterThanOrEqual(1)
        for (let rep = 0; rep < 2; rep++)
          for (const leave of leaves)
            for (const k of [0, 1, N - 1, N, -1])
              for (const m of [0, 1, 3])
                for (const inv of [false, true])
                  for (const fn of ['f', 'r']) {
                    const a = () =>
                      fn === 'f'
                        ? [C.of(0, 0, 0), C.of(1, 2), leave, k, m]
                        : [new C(N + 2), C.of(1, 2), leave, Math.min(Math.max(k, 0), N)]
                    const want = outcome(() => (inv ? mR[fn]!.inverse : mR[fn]!)(...a()))
                    const got = outcome(() => (inv ? mC[fn]!.inverse : mC[fn]!)(...a()))
                    expect(got, `${N} ${T} ${fn} ${leave} ${k} ${m} ${inv}`).toEqual(want)
                  }
      }
  })
})
