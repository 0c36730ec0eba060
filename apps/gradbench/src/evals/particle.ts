/**
 * particle: a charged particle in the field of two unit charges at (10, 10 − w) and (10, 0),
 * Euler steps of Δt = 0.1 with acceleration −∇ₓp until it crosses y = 0; the cost is the square
 * of the crossing's x. The answer is argmin_w cost(w) by GradBench's descent.
 *
 * Nested AD, in Tenet all the way: the potential is a Tenet function; its gradient ∇ₓp (the
 * inner derivative) is Tenet's generated adjoint (inner `r`) or its width-2 tangent (inner `f`),
 * called from the trajectory program inside a compute–copy–uncompute `routine`. The trajectory
 * program is then differentiated with respect to w as a whole (the outer derivative): `grad`,
 * whose adjoint differentiates the inner gradient program once more (outer `r`), or its tangent
 * (outer `f`). The trajectory keeps every position and velocity (its tape) in arrays; the loop
 * is a reversible `while` whose post-condition is "at least one step taken".
 */
import { compileAdjoint, compileTangent, grad, type TenetFunction, type TenetModule } from 'tenet'
import { argmin } from './argmin.js'
import { compile, compileWith, fn } from './compile.js'
import { num, record } from './input.js'
import type { EvalModule, Prepared } from './types.js'

/**
 * p(x) = Σ 1/‖x − charge‖, one statement per intermediate (compute–copy–uncompute): small
 * statements keep the generated derivative programs small, which matters once they are
 * differentiated a second time.
 */
export const potentialSource = `
fn potential(p: f64, x0: f64, x1: f64, w: f64) {
  routine {
    q0 <- 0.0
    q0 += (x0 - 10.0) * (x0 - 10.0) + (x1 - 10.0 + w) * (x1 - 10.0 + w)
    r0 <- 0.0
    r0 += sqrt(q0)
    q1 <- 0.0
    q1 += (x0 - 10.0) * (x0 - 10.0) + x1 * x1
    r1 <- 0.0
    r1 += sqrt(q1)
  }
  p += 1.0 / r0 + 1.0 / r1
  ~routine
}
`

/** The most steps a trajectory may take (its arrays are this long). */
const MAX_STEPS = 1000

/** The trajectory program, with `accel(ax, ay, x0, x1, w)` adding ∇ₓp to (ax, ay). */
const trajectoryTail = `
fn trajectory(cost: f64, w: f64, pos: f64[], vel: f64[], t: i32) {
  pos[1] += 8.0
  vel[0] += 0.75
  while ((pos[2 * t + 1] > 0.0) & (t < ${MAX_STEPS}), t > 0) {
    routine {
      ax <- 0.0
      ay <- 0.0
      accel(ax, ay, pos[2 * t], pos[2 * t + 1], w)
    }
    pos[2 * t + 2] += pos[2 * t] + 0.1 * vel[2 * t]
    pos[2 * t + 3] += pos[2 * t + 1] + 0.1 * vel[2 * t + 1]
    vel[2 * t + 2] += vel[2 * t] - 0.1 * ax
    vel[2 * t + 3] += vel[2 * t + 1] - 0.1 * ay
    ~routine
    t += 1
  }
  cost += (pos[2 * t] - pos[2 * t + 1] / vel[2 * t - 1] * vel[2 * t - 2]) * (pos[2 * t] - pos[2 * t + 1] / vel[2 * t - 1] * vel[2 * t - 2])
}
`

/**
 * A generated function as a user function: its printed source, with the \`$\` of generated names
 * replaced. Works around a limitation of \`@tenet/ad\`: the adjoint of a generated adjoint declares
 * \`g$sink\` twice (the callee's sink parameter and its own), so reverse-over-reverse needs the
 * inner adjoint under other names.
 */
export function reparsed(f: TenetFunction): TenetFunction {
  const m = compile(f.source.replaceAll('$', '_'))
  return fn(m, f.name.replaceAll('$', '_'))
}

/** ∇ₓp by the adjoint of `potential` (inner reverse mode): run it, run its adjoint seeded with 1, copy, uncompute. */
function accelReverse(potential: TenetFunction): TenetModule {
  const adj = reparsed(compileAdjoint(potential).adjoint)
  return compileWith(
    [
      `
fn accel(ax: f64, ay: f64, x0: f64, x1: f64, w: f64) {
  routine {
    p <- 0.0
    `,
      `(p, x0, x1, w)
    gp <- 1.0
    gx <- 0.0
    gy <- 0.0
    gw <- 0.0
    sink <- 0.0
    `,
      `(p, x0, x1, w, gp, gx, gy, gw, sink)
  }
  ax += gx
  ay += gy
  ~routine
}
` + trajectoryTail,
    ],
    [potential, adj],
  )
}

/** ∇ₓp by the width-2 tangent of `potential` (inner forward mode), seeded with the unit vectors of x. */
function accelForward(potential: TenetFunction): TenetModule {
  const tan = compileTangent(potential, 2).tangent
  return compileWith(
    [
      `
fn accel(ax: f64, ay: f64, x0: f64, x1: f64, w: f64) {
  routine {
    p <- 0.0
    dp0 <- 0.0
    dp1 <- 0.0
    e00 <- 1.0
    e01 <- 0.0
    e10 <- 0.0
    e11 <- 1.0
    w0 <- 0.0
    w1 <- 0.0
    `,
      `(p, x0, x1, w, dp0, dp1, e00, e01, e10, e11, w0, w1)
  }
  ax += dp0
  ay += dp1
  ~routine
}
` + trajectoryTail,
    ],
    [tan],
  )
}

const modules = new Map<string, TenetFunction>()
/** The trajectory program with the inner gradient in mode `inner`. */
export function trajectoryFor(inner: 'f' | 'r'): TenetFunction {
  let f = modules.get(inner)
  if (!f) {
    const potential = fn(compile(potentialSource), 'potential')
    modules.set(inner, (f = fn(inner === 'r' ? accelReverse(potential) : accelForward(potential), 'trajectory')))
  }
  return f
}

/** The crossing cost and its derivative with respect to w, as the descent uses them. */
export interface ParticleFunctions {
  cost(w: number): number
  derivative(w: number): number
}

/**
 * The cost and its derivative with the outer and inner derivatives in the modes named
 * (everything compiled before it returns).
 */
export function particleFunctions(outer: 'f' | 'r', inner: 'f' | 'r'): ParticleFunctions {
  const traj = trajectoryFor(inner)
  const pos = new Float64Array(2 * MAX_STEPS + 4),
    vel = new Float64Array(2 * MAX_STEPS + 4)
  const tPos = new Float64Array(pos.length),
    tVel = new Float64Array(pos.length)
  const core = traj.core
  // the arrays are cleared up to where the last run wrote (2 entries per step)
  let written = pos.length
  const clear = (): void => {
    for (const a of [pos, vel, tPos, tVel]) a.fill(0, 0, written)
  }
  const steps = (t: number, w: number): void => {
    if (t >= MAX_STEPS) throw new Error(`the particle did not reach the ground in ${MAX_STEPS} steps (w = ${w})`)
    written = 2 * t + 4
  }
  // outer reverse: the gradient program; outer forward: the tangent program, parameters
  // (cost, w, pos, vel, t, ṫcost, ẇ, ṗos, v̇el), seeded with ẇ = 1
  const g = outer === 'r' ? grad(traj, { loss: 0 }) : null
  const tangent = outer === 'f' ? compileTangent(traj, 1).tangent.core : null
  return {
    cost(w) {
      clear()
      core(0, w, pos, vel, 0)
      steps(core.results[4]!, w)
      return core.results[0]!
    },
    derivative(w) {
      clear()
      if (g) {
        g.run(0, w, pos, vel, 0) // on its own copies of pos and vel
        return g.scalars[1]!
      }
      tangent!(0, w, pos, vel, 0, 0, 1, tPos, tVel)
      steps(tangent!.results[4]!, w)
      return tangent!.results[5]!
    },
  }
}

/** argmin over w of the crossing cost from w0, by GradBench's descent. */
function solver(outer: 'f' | 'r', inner: 'f' | 'r'): (w0: number) => number {
  const f = particleFunctions(outer, inner)
  return (w0) => argmin({ value: (v) => f.cost(v[0]!), gradient: (v, out) => (out[0] = f.derivative(v[0]!)) }, [w0])[0]!
}

const modes =
  (outer: 'f' | 'r', inner: 'f' | 'r') =>
  (input: unknown): Prepared => {
    const w0 = num(record(input), 'w')
    const solve = solver(outer, inner)
    let w = 0
    return { run: () => (w = solve(w0)), output: () => w }
  }

export const particle: EvalModule = {
  rr: modes('r', 'r'),
  ff: modes('f', 'f'),
  fr: modes('f', 'r'),
  rf: modes('r', 'f'),
}
