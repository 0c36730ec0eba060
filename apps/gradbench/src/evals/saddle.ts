/**
 * saddle: f(p₁, p₂) = p₁·p₁ − p₂·p₂ on ℝ² × ℝ²; p₁* = argmin over p₁ of max over p₂ of f, the max
 * by an inner gradient ascent, then p₂* = argmax over p₂ of f(p₁*, p₂); both by GradBench's
 * descent from `start`.
 *
 * Nested AD: the inner gradient ∇_{p₂} f is Tenet's generated adjoint of `saddle_f` (inner `r`)
 * or its width-2 tangent (inner `f`), called from the Tenet program `inner_grad`. The outer
 * objective F(p₁) = f(p₁, p₂*(p₁)) is differentiated through the inner ascent: the host runs the
 * ascent once and records the step size of every accepted step (its branch decisions, which AD
 * does not differentiate), and the Tenet program `replay` repeats those steps,
 * p₂ ← p₂ + η_k ∇_{p₂} f(p₁, p₂), each with the inner gradient program, keeping the iterates in
 * an array, and ends with f(p₁, p₂_K). `grad` of `replay` (outer `r`) or its width-2 tangent along
 * p₁ (outer `f`) gives ∇F, derivatives of the inner derivative included.
 */
import { compileAdjoint, compileTangent, grad, type TenetFunction } from 'tenet'
import { argmin, type Objective, type Steps } from './argmin.js'
import { compile, compileWith, fn } from './compile.js'
import { flat, list, record } from './input.js'
import { reparsed } from './particle.js'
import type { EvalModule, Prepared } from './types.js'

export const saddleSource = `
fn saddle_f(y: f64, a0: f64, a1: f64, b0: f64, b1: f64) {
  y += a0 * a0 + a1 * a1 - b0 * b0 - b1 * b1
}
`

const replayTail = `
fn replay(F: f64, a0: f64, a1: f64, b: f64[], etas: f64[], K: i32) {
  for k in 0..K {
    routine {
      g0 <- 0.0
      g1 <- 0.0
      inner_grad(g0, g1, a0, a1, b[2 * k], b[2 * k + 1])
    }
    b[2 * k + 2] += b[2 * k] + etas[k] * g0
    b[2 * k + 3] += b[2 * k + 1] + etas[k] * g1
    ~routine
  }
  saddle_f(F, a0, a1, b[2 * K], b[2 * K + 1])
}
`

/** The module with `inner_grad(g0, g1, a0, a1, b0, b1)` (adds ∇_b f) in mode `inner`, `replay` and `saddle_f`. */
function moduleFor(inner: 'f' | 'r'): { replay: TenetFunction; innerGrad: TenetFunction; f: TenetFunction } {
  const f = fn(compile(saddleSource), 'saddle_f')
  const m =
    inner === 'r'
      ? compileWith(
          [
            saddleSource +
              `
fn inner_grad(g0: f64, g1: f64, a0: f64, a1: f64, b0: f64, b1: f64) {
  routine {
    y <- 0.0
    saddle_f(y, a0, a1, b0, b1)
    gy <- 1.0
    ga0 <- 0.0
    ga1 <- 0.0
    gb0 <- 0.0
    gb1 <- 0.0
    sink <- 0.0
    `,
            `(y, a0, a1, b0, b1, gy, ga0, ga1, gb0, gb1, sink)
  }
  g0 += gb0
  g1 += gb1
  ~routine
}
` + replayTail,
          ],
          [reparsed(compileAdjoint(f).adjoint)],
        )
      : compileWith(
          [
            saddleSource +
              `
fn inner_grad(g0: f64, g1: f64, a0: f64, a1: f64, b0: f64, b1: f64) {
  routine {
    y <- 0.0
    dy0 <- 0.0
    dy1 <- 0.0
    a00 <- 0.0
    a01 <- 0.0
    a10 <- 0.0
    a11 <- 0.0
    b00 <- 1.0
    b01 <- 0.0
    b10 <- 0.0
    b11 <- 1.0
    `,
            `(y, a0, a1, b0, b1, dy0, dy1, a00, a01, a10, a11, b00, b01, b10, b11)
  }
  g0 += dy0
  g1 += dy1
  ~routine
}
` + replayTail,
          ],
          [reparsed(compileTangent(f, 2).tangent)],
        )
  return { replay: fn(m, 'replay'), innerGrad: fn(m, 'inner_grad'), f }
}

/** The outer objective F(p₁) = max over p₂ of f(p₁, p₂) (by the inner ascent) and its gradient, and the ascent itself. */
export interface SaddleFunctions {
  outer(start: Float64Array): Objective
  ascent(a: Float64Array, start: Float64Array): Float64Array
}

/** The saddle functions for (outer, inner) modes, compiled before it returns. */
export function saddleFunctions(outer: 'f' | 'r', inner: 'f' | 'r'): SaddleFunctions {
  const { replay, innerGrad, f } = moduleFor(inner)
  const F = f.core,
    G = innerGrad.core
  const value = (a: Float64Array, b: ArrayLike<number>): number => {
    F(0, a[0]!, a[1]!, b[0]!, b[1]!)
    return F.results[0]!
  }
  /** argmax over b of f(a, b) from `start`, recording the steps. */
  const ascent = (a: Float64Array, start: Float64Array, steps?: Steps): Float64Array =>
    argmin(
      {
        value: (b) => -value(a, b),
        gradient: (b, out) => {
          G(0, 0, a[0]!, a[1]!, b[0]!, b[1]!)
          out[0] = -G.results[0]!
          out[1] = -G.results[1]!
        },
      },
      start,
      steps,
    )
  const g = outer === 'r' ? grad(replay, { loss: 0 }) : null
  const tangent = outer === 'f' ? compileTangent(replay, 2).tangent.core : null
  return {
    ascent: (a, start) => ascent(a, start),
    outer: (start) => ({
      value: (a: Float64Array): number => value(a, ascent(a, start)),
      gradient: (a: Float64Array, out: Float64Array): void => {
        const steps: Steps = []
        ascent(a, start, steps)
        const K = steps.length
        const etas = Float64Array.from(steps)
        const b = new Float64Array(2 * K + 2)
        b.set(start)
        if (g) {
          g.run(0, a[0]!, a[1]!, b, etas, K)
          out[0] = g.scalars[1]!
          out[1] = g.scalars[2]!
        } else {
          // tangent parameters: F, a0, a1, b, etas, K, then ḟ (2), ȧ0 (2), ȧ1 (2), ḃ, ėtas; p₁'s unit directions
          tangent!(
            0,
            a[0]!,
            a[1]!,
            b,
            etas,
            K,
            0,
            0,
            1,
            0,
            0,
            1,
            new Float64Array(b.length * 2),
            new Float64Array(K * 2),
          )
          out[0] = tangent!.results[6]!
          out[1] = tangent!.results[7]!
        }
      },
    }),
  }
}

/** The solver for (outer, inner) modes, compiled before it returns: start ↦ [p₁*, p₂*]. */
function solver(outer: 'f' | 'r', inner: 'f' | 'r'): (start: Float64Array) => number[] {
  const s = saddleFunctions(outer, inner)
  return (start) => {
    const p1 = argmin(s.outer(start), start)
    return [...list(p1), ...list(s.ascent(p1, start))]
  }
}

const modes =
  (outer: 'f' | 'r', inner: 'f' | 'r') =>
  (input: unknown): Prepared => {
    const start = flat(record(input), 'start', 2)
    const solve = solver(outer, inner)
    let out: number[] = []
    return { run: () => (out = solve(start)), output: () => out }
  }

export const saddle: EvalModule = { rr: modes('r', 'r'), ff: modes('f', 'f'), fr: modes('f', 'r'), rf: modes('r', 'f') }
