/**
 * Helpers of the NiLang port suite (tests only): the backends a program runs on, a registry with
 * the wasm backend, finite differences of a Tenet function through its own forward runs, and a
 * plain-TS complex reference.
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { finiteDifference } from '@tenet/testing'
import { createRegistry, gradient, rev, InvertibilityError, type Rev, type TenetModule } from '../index.js'
import { template } from '../test-util.js'

/** Every backend; the wasm backend lowers neither stacks nor the fixed-point type (its README says so). */
export const ALL = ['interpreter', 'cpu', 'wasm'] as const
/** The backends of programs with stacks or fixed-point numbers. */
export const NO_WASM = ['interpreter', 'cpu'] as const
export type BackendName = (typeof ALL)[number]

/** The default registry and the wasm backend. */
export const registry = createRegistry().registerBackend(wasmBackend)

/** The `rev` tag on `backend`. */
export const on = (backend: BackendName, options: { checks?: boolean } = {}): Rev =>
  rev.with({ backend, registry, ...options })

/** Compiles `source` on `backend` (as `` on(backend)`source` ``). */
export const compileOn = (backend: BackendName, source: string, options: { checks?: boolean } = {}): TenetModule =>
  on(backend, options)(template(source))

type Arg = number | Float64Array | { re: number; im: number } | unknown[]

/** A deep copy of arguments (typed arrays, complex values and stacks). */
export function copyArgs(args: readonly Arg[]): Arg[] {
  return args.map((a) =>
    a instanceof Float64Array
      ? a.slice()
      : Array.isArray(a)
        ? structuredClone(a)
        : typeof a === 'object'
          ? { ...a }
          : a,
  )
}

/** The float inputs of `args` as one vector (scalars, array elements, complex parts), and the way back. */
function flatten(args: readonly Arg[], skip: ReadonlySet<number>): { x: number[]; rebuild: (x: number[]) => Arg[] } {
  const x: number[] = []
  args.forEach((a, i) => {
    if (skip.has(i) || Array.isArray(a)) return
    if (typeof a === 'number') x.push(a)
    else if (a instanceof Float64Array) x.push(...a)
    else x.push(a.re, a.im)
  })
  const rebuild = (v: number[]): Arg[] => {
    let k = 0
    return args.map((a, i) => {
      if (skip.has(i) || Array.isArray(a)) return Array.isArray(a) ? structuredClone(a) : a
      if (typeof a === 'number') return v[k++]!
      if (a instanceof Float64Array) {
        const b = Float64Array.from(v.slice(k, k + a.length))
        k += a.length
        return b
      }
      const z = { re: v[k]!, im: v[k + 1]! }
      k += 2
      return z
    })
  }
  return { x, rebuild }
}

/** The loss (a scalar result, or the real part of a complex one) after a forward run. */
function lossOf(r: unknown[], loss: number): number {
  const v = r[loss] as number | { re: number }
  return typeof v === 'number' ? v : v.re
}

/**
 * Central differences of result `loss` of `f` with respect to every float input (scalars,
 * array elements, complex parts, in order), by forward runs of `f` itself; `skip` lists
 * arguments held constant (integers, the loss).
 */
export function fdGradient(
  f: (...a: unknown[]) => unknown[],
  args: readonly Arg[],
  loss: number,
  skip: readonly number[] = [],
  h?: number,
): number[] {
  const { x, rebuild } = flatten(args, new Set(skip))
  return finiteDifference((v) => lossOf(f(...rebuild(v)), loss), x, h)
}

/** The reverse-mode gradient of `f` flattened like `fdGradient` (constants skipped). */
export function adGradient(
  f: (...a: unknown[]) => unknown[],
  args: readonly Arg[],
  loss: number,
  skip: readonly number[] = [],
): number[] {
  const g = gradient(f as never, copyArgs(args), { loss })
  const out: number[] = []
  g.forEach((v, i) => {
    if (skip.includes(i) || v === null || Array.isArray(args[i])) return
    if (typeof v === 'number') out.push(v)
    else if (v instanceof Float64Array || v instanceof Float32Array) out.push(...v)
    else if (Array.isArray(v)) for (const z of v as Array<{ re: number; im: number }>) out.push(z.re, z.im)
    else out.push((v as { re: number }).re, (v as { im: number }).im)
  })
  return out
}

/**
 * Checks the reverse-mode gradient of result `loss` against central differences, elementwise
 * within `tol` (absolute for small values, relative for large ones).
 */
export function expectGradientMatchesFd(
  f: (...a: unknown[]) => unknown[],
  args: readonly Arg[],
  loss: number,
  skip: readonly number[] = [],
  tol = 1e-6,
): number[] {
  const ad = adGradient(f, args, loss, [loss, ...skip])
  const fd = fdGradient(f, args, loss, [loss, ...skip])
  expect(ad.length).toBe(fd.length)
  ad.forEach((a, k) =>
    expect(Math.abs(a - fd[k]!), `∂/∂input ${k}: AD ${a}, FD ${fd[k]}`).toBeLessThanOrEqual(
      tol * Math.max(1, Math.abs(fd[k]!)),
    ),
  )
  return ad
}

/** Whether two numbers agree within `tol` (relative above 1). */
export const close = (a: number, b: number, tol = 1e-12): boolean => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b))

/** A complex number of the plain-TS reference. */
export interface C {
  re: number
  im: number
}
/** Plain-TS complex arithmetic, the reference of the complex programs (principal branches). */
export const cx = {
  of: (re: number, im = 0): C => ({ re, im }),
  add: (a: C, b: C): C => ({ re: a.re + b.re, im: a.im + b.im }),
  sub: (a: C, b: C): C => ({ re: a.re - b.re, im: a.im - b.im }),
  mul: (a: C, b: C): C => ({ re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re }),
  div: (a: C, b: C): C => {
    const d = b.re * b.re + b.im * b.im
    return { re: (a.re * b.re + a.im * b.im) / d, im: (a.im * b.re - a.re * b.im) / d }
  },
  abs: (a: C): number => Math.hypot(a.re, a.im),
  exp: (a: C): C => ({ re: Math.exp(a.re) * Math.cos(a.im), im: Math.exp(a.re) * Math.sin(a.im) }),
  log: (a: C): C => ({ re: Math.log(Math.hypot(a.re, a.im)), im: Math.atan2(a.im, a.re) }),
  sin: (a: C): C => ({ re: Math.sin(a.re) * Math.cosh(a.im), im: Math.cos(a.re) * Math.sinh(a.im) }),
  cos: (a: C): C => ({ re: Math.cos(a.re) * Math.cosh(a.im), im: -Math.sin(a.re) * Math.sinh(a.im) }),
  /** tanh z = (e^{2z} − 1) / (e^{2z} + 1): another formula than the lowering's. */
  tanh: (a: C): C => {
    const e = cx.exp({ re: 2 * a.re, im: 2 * a.im })
    return cx.div(cx.sub(e, cx.of(1)), cx.add(e, cx.of(1)))
  },
  /** The principal root by the polar form: another formula than the lowering's. */
  sqrt: (a: C): C => {
    const r = Math.sqrt(cx.abs(a)),
      t = Math.atan2(a.im, a.re) / 2
    return { re: r * Math.cos(t), im: r * Math.sin(t) }
  },
  pow: (a: C, w: C): C => cx.exp(cx.mul(w, cx.log(a))),
}

/** Expects two complex values to agree within `tol`. */
export function expectComplexClose(got: unknown, want: C, tol = 1e-12): void {
  const g = got as C
  expect(
    close(g.re, want.re, tol) && close(g.im, want.im, tol),
    `got ${g.re} + ${g.im}i, want ${want.re} + ${want.im}i`,
  ).toBe(true)
}

/**
 * One ported program: `source` compiled on each of `backends`, then `check` (values against an
 * independent reference, the inverse, gradients against finite differences).
 */
export function port(
  name: string,
  backends: readonly BackendName[],
  source: string,
  check: (m: TenetModule, backend: BackendName) => void,
): void {
  describe(name, () => {
    for (const b of backends) it(b, () => check(compileOn(b, source), b))
  })
}

/** Expects `fn` to throw an `InvertibilityError` with the given code. */
export function expectInvertibilityError(fn: () => unknown, code: string): void {
  let caught: unknown
  try {
    fn()
  } catch (e) {
    caught = e
  }
  expect(InvertibilityError.isInstance(caught), `expected an InvertibilityError, got ${String(caught)}`).toBe(true)
  expect((caught as InvertibilityError).code).toBe(code)
}

/** Expects every number of `got` to agree with `want` within `tol` (relative above 1). */
export function expectAllClose(got: ArrayLike<number>, want: ArrayLike<number>, tol = 1e-12): void {
  expect(got.length).toBe(want.length)
  for (let i = 0; i < want.length; i++)
    expect(close(got[i]!, want[i]!, tol), `[${i}]: got ${got[i]}, want ${want[i]}`).toBe(true)
}
