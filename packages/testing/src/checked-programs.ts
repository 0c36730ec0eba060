/**
 * Programs for the tests of the passes that run with run-time checks on (`CHECKED_PASSES` of
 * `@tenet/ir`), shared by the cpu and wasm backends' `checked-passes.test.ts`: each backend must
 * raise the reference interpreter's errors (code, message, source location) where it raises them,
 * and compute its values elsewhere.
 */
import { ummSource } from './paper-programs.js'
import { TenetError } from '@tenet/ir'

/** The element types of {@link pairScratchProgram}. */
export type PairScratchType = 'f64' | 'f32' | 'i32'

/**
 * `f(a, x, i, j)`: a pair interaction (paper 000's leapfrog) whose scratch array `dx` of three
 * elements is uncomputed with `dx[c] -= undo` (`undo` reading `x`, `i`, `j`, `c`), followed by
 * `extra` statements before its deallocation: `x[3 * j + c] - x[3 * i + c]` returns it to zeros,
 * an `extra` such as `dx[1] += 1.0` leaves one element non-zero. Pass `scalar-arrays` makes `dx`
 * scalars.
 */
export const pairScratchProgram = (T: PairScratchType, undo: string, extra = ''): string => `
fn f(a: ${T}[], x: ${T}[], i: i32, j: i32) {
  dx: ${T}[] <- zeros(3)
  for c in 0..3 { dx[c] += x[3 * j + c] - x[3 * i + c] }
  r2: ${T} <- ${T === 'i32' ? '0' : '0.0'}
  r2 += dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
  for c in 0..3 { a[3 * i + c] += r2 * dx[c] }
  r2 -= dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
  r2 -> ${T === 'i32' ? '0' : '0.0'}
  for c in 0..3 { dx[c] -= ${undo} }${extra}
  dx -> zeros(3)
}`

/** Fresh arguments of {@link pairScratchProgram}: `a` zeros, two bodies' positions, i = 0, j = 1. */
export const pairScratchArgs = (T: PairScratchType) => {
  const A = T === 'f64' ? Float64Array : T === 'f32' ? Float32Array : Int32Array
  return [new A(6), A.from([1, 2, 3, 5, 7, 11]), 0, 1] as const
}

/**
 * Paper 000 Listing 14 ({@link ummSource} as `f(x, theta, m, n)`: the same rotations applied to
 * every column), and `g(y, x, theta, m, n)`, which reads `cos(theta[j])` in a column loop: pass
 * `tabulate` builds tables of both.
 */
export const unitaryMultiplySource = `${ummSource.trim().replace('fn i_umm(', 'fn f(')}
fn g(y: f64[], x: f64[], theta: f64[], m: i32, n: i32) {
  for l in 0..n {
    for j in 0..m { y[j + m * l] += x[j + m * l] * cos(theta[j]) }
  }
}`

/**
 * The error `f()` raises, as `code | message | line:column`; "no error" when it returns, and
 * "not a TenetError: …" for any other exception.
 */
export function raisedError(f: () => unknown): string {
  try {
    f()
  } catch (e) {
    if (!TenetError.isInstance(e)) return `not a TenetError: ${String(e)}`
    const t = e as TenetError
    return `${t.code} | ${t.message} | ${t.line}:${t.column}`
  }
  return 'no error'
}
