/**
 * The one place where a gradient program is chosen. `grad` (and every function built on it:
 * `gradient`, `checkGrad`, the pools of `@tenet/parallel`) asks `planGradient` which of four
 * programs computes the gradient of `f`, and the answer — the program, why it was taken, why each
 * cheaper one was not, and what the driver checks after a sweep — is kept as a `GradientPlan`
 * that the user can print (`grad(f, …).plan`).
 *
 * The programs, cheapest first:
 * - `forward`: one tangent run of `f` seeded along its only float input (see
 *   `compileForwardGradient`): a scalar function of one variable.
 * - `one-pass`: a single pass that accumulates the gradients while `f` runs (see
 *   `FunctionAdjoint.buildOnePass`): `f` only accumulates the loss from values it never writes.
 * - `adjoint-only`: `f`'s adjoint alone, started at the inputs (see
 *   `FunctionAdjoint.buildAdjointOnly`): `f` only accumulates the loss and writes no other
 *   argument, so its outputs are its inputs but for the loss, and the forward run is skipped.
 * - `routine-fused`: `f`'s top-level compute–copy–uncompute routine with the cancelling uncompute
 *   and recompute dropped (see `FunctionAdjoint.buildFused`; with run-time checks on they are kept,
 *   as the uncompute may fail a check).
 * - `map-forward`: `f` starts by mapping arrays elementwise (`h(x…)`, h one loop touching element
 *   i only); one tangent run of h gives its block-diagonal Jacobian, the rest of f runs forwards
 *   and backwards (see `compileMapForward`). Without run-time checks only.
 * - `two-sweep`: `f` forwards, then its adjoint (the paper's program; always applies). Without
 *   run-time checks, where f's sweep applies an expensive pure primitive to an array nothing
 *   writes, both run as one program that can share those values (see `compileTwoSweep`).
 */
import type { TenetFunction } from '@tenet/reversible'
import { compileMapForward, mapForwardRefusal } from './map-forward.js'
import {
  compileForwardGradient,
  compileFused,
  compileTwoSweep,
  hasForwardGradientShape,
  infoOf,
  type CompiledForwardGradient,
} from './compile.js'

/** The gradient programs, cheapest first. */
export type GradientProgramKind =
  | 'forward'
  | 'one-pass'
  | 'adjoint-only'
  | 'routine-fused'
  | 'map-forward'
  | 'two-sweep'

/** One program the planner looked at: whether it applies, and why (or why not). */
export interface PlanStep {
  readonly program: GradientProgramKind
  readonly applies: boolean
  readonly why: string
}

/** The choice of a gradient program for one function and loss (see `planGradient`). */
export interface GradientPlan {
  /** The program that runs. */
  readonly program: GradientProgramKind
  /** The function and the index of its loss argument. */
  readonly function: string
  readonly loss: number
  /** The programs considered, in the order they were tried (the last one is the choice). */
  readonly considered: readonly PlanStep[]
  /**
   * The check after every sweep that the recomputed arguments equal the inputs (see
   * `GradOptions.uncompute`): the policy asked for, or `'off'` where the program never uncomputes.
   */
  readonly uncomputeCheck: 'error' | 'warn' | 'off'
  /** Whether updates that neither the gradients nor the loss need were dropped (only without run-time checks). */
  readonly deadUpdatesDropped: boolean
  /** A few lines for people: the program, why, and what was ruled out. */
  toString(): string
}

/** What `planGradient` is told (the options of `grad` that bear on the choice). */
export interface PlanOptions {
  loss: number
  mode?: 'auto' | 'forward' | 'reverse'
  fuse?: boolean
  uncompute?: 'error' | 'warn' | 'off'
  /**
   * Arguments held constant (see `GradOptions.constants`): the one-pass, adjoint-only,
   * routine-fused and two-sweep programs have their variant; forward mode and map-forward do not.
   */
  constants?: readonly number[]
  /**
   * Scratch arguments (see `GradOptions.scratch`, validated): the fused programs mark them and
   * their gradients as zero at entry and read by nobody after (see `compileFused`).
   */
  scratch?: readonly number[]
}

/** The plan and the compiled program it chose (null where the driver runs `f` and its adjoint). */
export interface PlannedGradient {
  plan: GradientPlan
  forward: CompiledForwardGradient | null
  fused: TenetFunction | null
}

const WHY = {
  forwardOff: (mode: string) => `mode '${mode}'`,
  fuseOff: 'fuse: false',
  forwardShape: 'not a function of scalars with one float argument besides the loss, only accumulated into the loss',
  forwardTaken: 'a scalar function of one float argument: one tangent run costs about one run of f',
  onePassNo: 'f does more than accumulate the loss from values it never writes',
  onePassTaken: 'f only accumulates the loss from values it never writes: gradients accumulate in the same pass',
  adjointOnlyNo: 'f writes an argument besides the loss, does more than accumulate the loss, or has host effects',
  adjointOnlyTaken:
    'f only accumulates the loss and writes no other argument: its adjoint, started at the inputs, recomputes what it needs, so the forward run is skipped',
  fusedNo: "f's top level is not a compute–copy–uncompute routine",
  fusedTaken:
    "f's top level is a compute–copy–uncompute routine: its uncompute and the adjoint's recompute cancel and are skipped",
  inverse: 'f is an inverse (`~f`): the fused programs are built for forward functions',
  mapTaken:
    'f starts with an elementwise map of arrays: one tangent run of it gives its block-diagonal Jacobian, the rest of f runs forwards and backwards',
  mapChecks: 'run-time checks are on: this program leaves the values unchecked',
  mapNo: (why: string) => `not an elementwise map first: ${why}`,
  constants: (program: string) =>
    `arguments are held constant (\`constants\`): the ${program} program has no variant without their gradients`,
  stacks: 'f has a stack parameter: its gradient stack is sized after the forward run',
  twoSweep: 'always applies: f forwards, then its adjoint',
  twoSweepOne:
    'always applies: f forwards, then its adjoint, as one program (values of a pure primitive both sweeps apply to an array neither writes are computed once, into a table, where that pays)',
}

/**
 * Chooses the gradient program of `f` for `options.loss` and compiles it (cached per function and
 * loss). `mode: 'forward'` that does not apply is the caller's error to raise (the plan says
 * why); `fuse: false` rules out every fused program.
 */
export function planGradient(f: TenetFunction, options: PlanOptions): PlannedGradient {
  const mode = options.mode ?? 'auto'
  const considered: PlanStep[] = []
  const info = infoOf(f)
  let forward: CompiledForwardGradient | null = null
  const held = (options.constants?.length ?? 0) > 0
  if (held) {
    considered.push({ program: 'forward', applies: false, why: WHY.constants('forward-mode') })
  } else if (mode === 'reverse' || (mode === 'auto' && options.fuse === false)) {
    considered.push({
      program: 'forward',
      applies: false,
      why: mode === 'reverse' ? WHY.forwardOff(mode) : WHY.fuseOff,
    })
  } else {
    forward = compileForwardGradient(f, options.loss)
    const shape = forward !== null || hasForwardGradientShape(f, options.loss)
    considered.push({
      program: 'forward',
      applies: forward !== null,
      why: forward ? WHY.forwardTaken : shape ? 'its tangent cannot be built' : WHY.forwardShape,
    })
  }
  let fused: TenetFunction | null = null
  if (!forward && mode !== 'forward') {
    if (options.fuse === false) {
      considered.push(
        { program: 'one-pass', applies: false, why: WHY.fuseOff },
        { program: 'adjoint-only', applies: false, why: WHY.fuseOff },
        { program: 'routine-fused', applies: false, why: WHY.fuseOff },
        { program: 'map-forward', applies: false, why: WHY.fuseOff },
      )
    } else if (info.inverse) {
      considered.push(
        { program: 'one-pass', applies: false, why: WHY.inverse },
        { program: 'adjoint-only', applies: false, why: WHY.inverse },
        { program: 'routine-fused', applies: false, why: WHY.inverse },
        { program: 'map-forward', applies: false, why: WHY.inverse },
      )
    } else if (f.ir.params.some((p) => p.type.kind === 'stack')) {
      considered.push(
        { program: 'one-pass', applies: false, why: WHY.stacks },
        { program: 'adjoint-only', applies: false, why: WHY.stacks },
        { program: 'routine-fused', applies: false, why: WHY.stacks },
        { program: 'map-forward', applies: false, why: WHY.stacks },
      )
    } else {
      fused = compileFused(f, options.loss, options.constants, options.scratch)
      const onePass = fused?.name.endsWith('$onepass') === true
      const adjointOnly = fused?.name.endsWith('$adjonly') === true
      considered.push({ program: 'one-pass', applies: onePass, why: onePass ? WHY.onePassTaken : WHY.onePassNo })
      if (!onePass)
        considered.push({
          program: 'adjoint-only',
          applies: adjointOnly,
          why: adjointOnly ? WHY.adjointOnlyTaken : WHY.adjointOnlyNo,
        })
      if (!onePass && !adjointOnly)
        considered.push({
          program: 'routine-fused',
          applies: fused !== null,
          why: fused ? WHY.fusedTaken : WHY.fusedNo,
        })
      if (!fused && held) considered.push({ program: 'map-forward', applies: false, why: WHY.constants('map-forward') })
      else if (!fused) {
        fused = compileMapForward(f, options.loss)
        considered.push({
          program: 'map-forward',
          applies: fused !== null,
          why: fused
            ? WHY.mapTaken
            : info.options.checks !== false
              ? WHY.mapChecks
              : WHY.mapNo(mapForwardRefusal(f) ?? 'its program cannot be built'),
        })
      }
    }
    if (!fused && !held && options.fuse !== false && !info.inverse) {
      // f and its adjoint as one program, where the sweeps can share values (see compileTwoSweep)
      fused = compileTwoSweep(f, options.loss)
      considered.push({ program: 'two-sweep', applies: true, why: fused ? WHY.twoSweepOne : WHY.twoSweep })
    } else if (!fused) considered.push({ program: 'two-sweep', applies: true, why: WHY.twoSweep })
  }
  const chosen = considered.find((s) => s.applies)?.program ?? 'forward'
  const checks = info.options.checks !== false
  // what the sweep leaves in the values: the inputs after f and its adjoint, and after the
  // routine-fused program with checks on; forward mode, the one-pass and the adjoint-only
  // programs never uncompute an argument (the adjoint-only one never writes one but the loss)
  const recomputes = chosen === 'two-sweep' || (chosen === 'routine-fused' && checks)
  const plan: GradientPlan = {
    program: chosen,
    function: info.name,
    loss: options.loss,
    considered,
    uncomputeCheck: recomputes ? (options.uncompute ?? 'error') : 'off',
    deadUpdatesDropped: !checks && chosen !== 'two-sweep',
    toString() {
      const lines = [`gradient of \`${this.function}\` (loss: argument ${this.loss}): ${this.program}`]
      for (const s of this.considered) lines.push(`  ${s.applies ? '✓' : '✗'} ${s.program}: ${s.why}`)
      lines.push(
        `  uncompute check: ${this.uncomputeCheck}${this.deadUpdatesDropped ? '; updates nothing reads are dropped (checks off)' : ''}`,
      )
      return lines.join('\n')
    },
  }
  return { plan: Object.freeze(plan), forward, fused }
}
