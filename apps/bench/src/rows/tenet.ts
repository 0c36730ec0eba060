/**
 * Tenet rows (cpu backend, generated JavaScript, `checks: false`). Every workload is a Tenet
 * program (src/tenet/); derivatives come from the generated adjoints (`grad`: one forward run
 * plus one adjoint run, no tape) and, for Hessians, `hessian` of @tenet/ad. Answers are checked
 * against the float64 references before timing, with the float64 tolerance.
 */
import { grad, hessian, hvp } from 'tenet'
import { blackBox } from '../harness/black-box.js'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { CheckResult, PreparedRow } from '../harness/types.js'
import { PETERSEN_E1 as E1, PETERSEN_E2 as E2 } from '../objectives/graph-embedding.js'
import { G_SOLAR, leapfrogStartF64, leapfrogStepsF64, meanPlanetError } from '../objectives/leapfrog.js'
import { checkBaJacobian } from '../workloads/ba.js'
import { directionalCheck } from '../workloads/gmm.js'
import { heapGrowth, tapeBytes } from '../workloads/unitary-rnn.js'
import { formatBytes } from '../report/format.js'
import { baModule, baObjectiveTenet, createBaJacobianTenet, createBaResidualsTenet } from '../tenet/ba.js'
import { createGmmTenet } from '../tenet/gmm.js'
import * as P from '../tenet/programs.js'
import * as K from '../workloads/kernels.js'
import { tenetLeapfrog } from '../tenet/programs.js'
import { BA_CAMERA_PARAMS } from '../data/ba-data.js'
import { besselJPlain } from '../objectives/bessel.js'

export const TENET_ROW = 'Tenet (cpu)'
export const TENET_WASM_ROW = 'Tenet (wasm)'
const name = TENET_ROW
const tol = TOLERANCE.f64
/**
 * Timed results are added here, so their work is never dead code: a typed array, since a module
 * variable holds a double as a heap number and allocated a box on every store (about 5 ns, which
 * the single-z Bessel baseline counted: 8.4 ns with the array, so every ratio to it read low).
 */
const sink = new Float64Array(1)

function both(a: CheckResult, b: CheckResult): CheckResult {
  return a.ok && b.ok ? { ok: true, error: Math.max(a.error, b.error) } : !a.ok ? a : b
}

export const tenetRows = defineRowFamily({
  family: 'Tenet',
  rows: {
    bessel: [
      {
        name,
        kind: 'objective',
        setup(c) {
          const b = c.batch
          if (b) {
            const F = P.besselBatchFunctions().batch.core
            const out = new Float64Array(b.zs.length)
            return {
              run: () => {
                out.fill(0)
                F(out, c.nu, b.zs)
                sink[0] += out[0]!
              },
              check: () => {
                out.fill(0)
                F(out, c.nu, b.zs)
                // the loop stops on a different term than the plain one at some z: agreement to the series' atol
                return checkClose(out, b.value(), 1e-8, 'J')
              },
            }
          }
          const F = P.besselFunction().core
          return {
            run: () => {
              F(0, c.nu, c.z)
              sink[0] += F.results[0]!
            },
            check: () => {
              F(0, c.nu, c.z)
              // the same series (atol 1e-8) in plain TS; Tenet's approximate multiplier agrees to ~1e-12
              return checkClose([F.results[0]!], [besselJPlain(c.nu, c.z)], 1e-10, 'J')
            },
          }
        },
      },
      {
        name,
        kind: 'inverse',
        setup(c) {
          const b = c.batch
          if (b) {
            const f = P.besselBatchFunctions().batch
            const J = new Float64Array(b.zs.length)
            f.core(J, c.nu, b.zs)
            const out = J.slice()
            const call = () => {
              out.set(J)
              f.inverse.core(out, c.nu, b.zs)
            }
            return {
              run: call,
              check: () => {
                call()
                const r = checkClose(out, new Float64Array(out.length), 1e-12, 'out after uncall')
                return { ...r, reason: r.reason ?? 'uncall: out = J(z) back to 0 at every z' }
              },
            }
          }
          const f = P.besselFunction()
          f.core(0, c.nu, c.z)
          // J(z) comes from the case: a field of a black-boxed object, like the case's own inputs
          // (a closure constant would be folded into `run` once V8 inlines it)
          const at = blackBox({ J: f.core.results[0]! })
          return {
            run: () => {
              f.inverse.core(at.J, c.nu, c.z)
              sink[0] += f.inverse.core.results[0]!
            },
            check: () => {
              f.inverse.core(at.J, c.nu, c.z)
              const r = checkClose([f.inverse.core.results[0]!], [0], 1e-12, 'out after uncall')
              return { ...r, reason: r.reason ?? 'uncall: out = J(z) back to 0' }
            },
          }
        },
      },
      {
        name,
        kind: 'gradient',
        setup(c) {
          const b = c.batch
          if (b) {
            // ∂(Σ J(z_i))/∂z_i = J′(z_i): one forward run plus one adjoint run over the batch
            const g = grad(P.besselBatchFunctions().sum, { loss: 0 })
            const out = new Float64Array(b.zs.length)
            return {
              run: () => g.run(0, out, c.nu, b.zs),
              check: () => {
                g.run(0, out, c.nu, b.zs)
                return checkClose(g.buffers[3]!, b.derivative(), 1e-7, 'dJ/dz')
              },
            }
          }
          // a function of one variable: grad runs one tangent sweep (forward mode)
          const g = grad(P.besselFunction(), { loss: 0 })
          return {
            run: () => g.run(0, c.nu, c.z),
            check: () => {
              g.run(0, c.nu, c.z)
              return checkClose([g.scalars[2]!], [c.derivative], 1e-7, 'dJ/dz')
            },
          }
        },
      },
      {
        name,
        kind: 'hessian',
        setup(c) {
          const b = c.batch
          if (b) {
            // the Hessian of Σ J(z_i) is diagonal: its diagonal is H·1, one forward-over-reverse sweep
            const f = P.besselBatchFunctions().sum
            const args = [0, new Float64Array(b.zs.length), c.nu, b.zs]
            const v = [null, null, null, new Float64Array(b.zs.length).fill(1)]
            const h = () => hvp(f, args, { loss: 0, v })[3] as Float64Array
            return {
              run: () => void (sink[0] += h()[0]!),
              check: () => {
                const r = checkClose(h(), b.second(), 1e-6, 'd²J/dz²')
                return { ...r, reason: r.reason ?? 'diagonal Hessian as one Hessian-vector product H·1 (`hvp`)' }
              },
            }
          }
          const f = P.besselFunction()
          const args = [0, c.nu, c.z]
          return {
            run: () => void (sink[0] += hessian(f, args, { loss: 0, wrt: [2] })[0]!),
            check: () => checkClose(hessian(f, args, { loss: 0, wrt: [2] }), [c.second], 1e-6, 'd²J/dz²'),
          }
        },
      },
    ],
    'sparse-dot': [
      ...(['keeper', 'merge'] as const).flatMap((variant) => {
        const rowName = variant === 'keeper' ? `${name} branch keeper` : `${name} keeper-free`
        const f = () => (variant === 'keeper' ? P.sparseDotFunction() : P.sparseDotMergeFunction())
        const args = (c: {
          A: { rows: number; cols: number; colPtr: Int32Array; rowIdx: Int32Array; values: Float64Array }
          B: { colPtr: Int32Array; rowIdx: Int32Array; values: Float64Array }
        }) => [0, c.A.rows, c.A.cols, c.A.colPtr, c.A.rowIdx, c.A.values, c.B.colPtr, c.B.rowIdx, c.B.values] as const
        return [
          {
            name: rowName,
            kind: 'objective' as const,
            setup(c: Parameters<typeof args>[0] & { value: () => number }): PreparedRow {
              const F = f().core
              const a = args(c)
              return {
                run: () => {
                  F(...a)
                  sink[0] += F.results[0]!
                },
                check: () => {
                  F(...a)
                  return checkClose([F.results[0]!], [c.value()], tol, 'A·B')
                },
              }
            },
          },
          // grad's default (the one-pass program), and the paper's forward then backward sweep
          ...[true, false].map((fuse) => ({
            name: fuse ? rowName : `${rowName}, two sweeps`,
            kind: 'gradient' as const,
            setup(
              c: Parameters<typeof args>[0] & { gradient: () => { gA: Float64Array; gB: Float64Array } },
            ): PreparedRow {
              const g = grad(f(), { loss: 0, fuse })
              const a = args(c)
              return {
                run: () => g.run(...a),
                check: () => {
                  g.run(...a)
                  const ref = c.gradient()
                  return both(
                    checkClose(g.buffers[5]!, ref.gA, tol, '∂/∂A'),
                    checkClose(g.buffers[8]!, ref.gB, tol, '∂/∂B'),
                  )
                },
              }
            },
          })),
        ]
      }),
    ],
    'sparse-mul': [
      {
        name,
        kind: 'objective',
        setup(c) {
          const F = P.sparseMulFunctions().mul.core
          const yre = c.y0.re.slice(),
            yim = c.y0.im.slice()
          const call = () => F(yre, yim, c.A.colPtr, c.A.rowIdx, c.A.values, c.A.imag, c.x.re, c.x.im, c.A.cols)
          return {
            run: call,
            check: () => {
              yre.set(c.y0.re)
              yim.set(c.y0.im)
              call()
              const y = c.y()
              return checkClose([...yre, ...yim], [...y.re, ...y.im], 1e-12, 'y')
            },
          }
        },
      },
      {
        name,
        kind: 'inverse',
        setup(c) {
          const F = P.sparseMulFunctions().mul.inverse.core
          const yre = c.y0.re.slice(),
            yim = c.y0.im.slice()
          const call = () => F(yre, yim, c.A.colPtr, c.A.rowIdx, c.A.values, c.A.imag, c.x.re, c.x.im, c.A.cols)
          return {
            run: call,
            check: () => {
              yre.set(c.y().re)
              yim.set(c.y().im)
              call()
              return checkClose([...yre, ...yim], [...c.y0.re, ...c.y0.im], 1e-12, 'y after the generated inverse')
            },
          }
        },
      },
      {
        name,
        kind: 'gradient',
        setup(c) {
          const g = grad(P.sparseMulFunctions().loss, { loss: 0 })
          const call = () =>
            g.run(
              0,
              c.y0.re,
              c.y0.im,
              c.A.colPtr,
              c.A.rowIdx,
              c.A.values,
              c.A.imag,
              c.x.re,
              c.x.im,
              c.A.cols,
              c.yBar.re,
              c.yBar.im,
            )
          return {
            run: call,
            check: () => {
              call()
              const ref = c.backward()
              const x = checkClose([...g.buffers[7]!, ...g.buffers[8]!], [...ref.xBar.re, ...ref.xBar.im], tol, 'x̄')
              const a = checkClose([...g.buffers[5]!, ...g.buffers[6]!], [...ref.aBarRe, ...ref.aBarIm], tol, 'Ā')
              return both(x, a)
            },
          }
        },
      },
    ],
    'graph-embedding': [
      {
        name,
        kind: 'gradient',
        setup(c) {
          // q1, d1, q2, d2 are work arrays the program fills (passed as zeros): scratch, not copied per call
          const g = grad(P.embeddingFunction(), { loss: 0, scratch: [2, 3, 4, 5] })
          // (four arrays: one the program writes must share no memory with another argument)
          const q1 = new Float64Array(15),
            d1 = new Float64Array(15),
            q2 = new Float64Array(30),
            d2 = new Float64Array(30)
          const call = () => g.run(0, c.x, q1, d1, q2, d2, c.k, E1, E2)
          return {
            run: call,
            check: () => {
              call()
              return checkClose(g.buffers[1]!, c.gradient(), tol, 'gradient')
            },
          }
        },
      },
      {
        name,
        kind: 'hessian',
        setup(c) {
          const f = P.embeddingFunction()
          const args = [
            0,
            c.x,
            new Float64Array(15),
            new Float64Array(15),
            new Float64Array(30),
            new Float64Array(30),
            c.k,
            E1,
            E2,
          ]
          // into one array, as a Newton loop would call it (the hand gradient row reuses its `out` too)
          const out = new Float64Array(100 * c.k * c.k)
          const h = () => hessian(f, args, { loss: 0, wrt: [1], out })
          return {
            run: () => void (sink[0] += h()[0]!),
            // the reference is itself central differences of the exact gradient (~1e-8)
            check: () => checkClose(h(), c.hessian(), 1e-6, 'Hessian'),
          }
        },
      },
    ],
    gmm: [
      {
        name,
        kind: 'objective',
        setup(c) {
          const t = createGmmTenet(c.inst.d, c.inst.k)
          return {
            run: () => void (sink[0] += t.objective(c.inst)),
            check: () => checkClose([t.objective(c.inst)], [c.objective()], 1e-12, 'objective'),
          }
        },
      },
      {
        name,
        kind: 'gradient',
        setup(c) {
          const t = createGmmTenet(c.inst.d, c.inst.k)
          const out = new Float64Array(c.gradient().length)
          return {
            run: () => void t.gradient(c.inst, out),
            check: () => {
              const r = checkClose(t.gradient(c.inst, out), c.gradient(), tol, 'gradient')
              const fd = directionalCheck(c, out)
              return r.ok && !fd.ok ? { ok: false, error: fd.error, reason: 'directional finite difference' } : r
            },
          }
        },
      },
    ],
    ba: [
      {
        name,
        kind: 'objective',
        setup(c) {
          // one residual buffer, reused, as the plain baseline does (on wasm in the module's
          // memory, as the Jacobian's values are: see \`createBaResidualsTenet\`)
          const m = baModule()
          const out = createBaResidualsTenet(c.inst.p, m)
          return {
            run: () => void baObjectiveTenet(c.inst, out, m),
            dispose: () => out.release(),
            check: () => {
              const r = baObjectiveTenet(c.inst, out, m)
              const ref = c.residuals()
              return both(
                checkClose(r.reprojErr, ref.reprojErr, 1e-12, 'reprojection error'),
                checkClose(r.wErr, ref.wErr, 1e-12, 'weight error'),
              )
            },
          }
        },
      },
      {
        name,
        kind: 'jacobian',
        setup(c) {
          const j = createBaJacobianTenet(c.inst)
          return {
            run: () => void j.run(),
            check: () => {
              const r = checkBaJacobian(c, j.run().vals, tol)
              return {
                ...r,
                reason:
                  r.reason ??
                  `block Jacobian over per-observation copies (${BA_CAMERA_PARAMS} + 3 + 1 columns): ${j.jac.plan.mode}, ${j.jac.plan.sweeps} sweep of ${j.jac.plan.width} rows fused with the forward run${j.jac.programs[0]!.core.resident ? '; data and Jacobian values in wasm memory' : ''}`,
              }
            },
          }
        },
      },
    ],
    unitary: [
      {
        name,
        kind: 'objective',
        setup(c) {
          const F = P.unitaryFunctions().umm.core
          const x = toColumnMajor(c.x, c.M, c.N)
          return {
            run: () => F(x, c.theta, c.M, c.N),
            check: () => {
              const y = toColumnMajor(c.x, c.M, c.N)
              F(y, c.theta, c.M, c.N)
              let loss = 0
              const cc = toColumnMajor(c.c, c.M, c.N)
              for (let i = 0; i < y.length; i++) loss += cc[i]! * y[i]!
              let ref = 0
              const g = c.gradient().gx // Σ c ⊙ Ux = Σ (Uᵀc) ⊙ x
              for (let i = 0; i < g.length; i++) ref += g[i]! * c.x[i]!
              return checkClose([loss], [ref], 1e-10, 'Σ c ⊙ U(θ)x')
            },
          }
        },
      },
      {
        name,
        kind: 'inverse',
        setup(c) {
          const U = P.unitaryFunctions().umm
          const x = toColumnMajor(c.x, c.M, c.N)
          return {
            run: () => U.inverse.core(x, c.theta, c.M, c.N),
            check: () => {
              const y = toColumnMajor(c.x, c.M, c.N)
              U.core(y, c.theta, c.M, c.N)
              U.inverse.core(y, c.theta, c.M, c.N)
              return checkClose(y, toColumnMajor(c.x, c.M, c.N), 1e-12, 'x after U⁻¹U')
            },
          }
        },
      },
      {
        name: `${name} (no tape)`,
        kind: 'gradient',
        setup(c) {
          const g = grad(P.unitaryFunctions().loss, { loss: 0 })
          const x = toColumnMajor(c.x, c.M, c.N)
          const cc = toColumnMajor(c.c, c.M, c.N)
          return {
            run: () => g.run(0, x, c.theta, cc, c.M, c.N),
            check: () => {
              g.run(0, x, c.theta, cc, c.M, c.N)
              const ref = c.gradient()
              return both(
                checkClose(g.buffers[2]!, ref.theta, tol, '∂L/∂θ'),
                checkClose(g.buffers[1]!, toColumnMajor(ref.gx, c.M, c.N), tol, '∂L/∂x'),
              )
            },
          }
        },
      },
    ],
    'unitary-rnn': [
      {
        name,
        kind: 'objective',
        setup(c) {
          const F = P.unitaryRnnFunctions().layers.core
          const x = toColumnMajor(c.x, c.M, c.N)
          const y = x.slice()
          const cc = toColumnMajor(c.c, c.M, c.N)
          const call = (): number => {
            y.set(x)
            F(y, c.theta, c.M, c.N, c.T)
            let loss = 0
            for (let i = 0; i < y.length; i++) loss += cc[i]! * y[i]!
            return loss
          }
          return {
            run: () => void (sink[0] += call()),
            check: () => checkClose([call()], [c.loss()], 1e-10, 'Σ c ⊙ U(θ)ᵀx'),
          }
        },
      },
      {
        name,
        kind: 'inverse',
        setup(c) {
          const U = P.unitaryRnnFunctions().layers
          const x0 = toColumnMajor(c.x, c.M, c.N)
          const end = x0.slice()
          U.core(end, c.theta, c.M, c.N, c.T)
          const y = end.slice()
          const call = () => {
            y.set(end)
            U.inverse.core(y, c.theta, c.M, c.N, c.T)
          }
          return {
            run: call,
            check: () => {
              call()
              return checkClose(y, x0, 1e-10, 'x₀ recovered by the generated inverse')
            },
          }
        },
      },
      {
        name: `${name} (no stored activations)`,
        kind: 'gradient',
        setup(c) {
          const g = grad(P.unitaryRnnFunctions().loss, { loss: 0 })
          const x = toColumnMajor(c.x, c.M, c.N)
          const cc = toColumnMajor(c.c, c.M, c.N)
          const call = () => g.run(0, x, c.theta, cc, c.M, c.N, c.T)
          return {
            run: call,
            check: () => {
              call()
              call()
              // heap growth over one more gradient (the arrays of the gradient program are allocated once, in setup)
              const grown = heapGrowth(call)
              const r = checkClose(g.buffers[2]!, c.gradient(), tol, '∂L/∂θ')
              return {
                ...r,
                reason:
                  r.reason ??
                  `no stored activations: the adjoint un-rotates x through the ${c.T} layers (heap +${formatBytes(grown)} over one gradient; a tape would hold ${formatBytes(tapeBytes(c.M, c.N, c.T))})`,
              }
            },
          }
        },
      },
    ],
    leapfrog: [
      ...(['f64', 'f32'] as const).map((T) => ({
        name: `${name} ${T === 'f64' ? 'float64' : 'float32'}`,
        kind: 'objective' as const,
        setup(c: {
          sys: { x: Float64Array; v: Float64Array; mass: Float64Array; bodies: number }
          dt: number
          steps: number
          reference: () => Float64Array
        }): PreparedRow {
          const f = P.leapfrogFunctions(T)
          const run = (): Float64Array => tenetLeapfrog(f, T, c.sys, c.dt, c.steps)
          return {
            run: () => void (sink[0] += run()[3]!),
            check: () => {
              const error = meanPlanetError(run(), c.reference())
              return {
                ok: error < (T === 'f64' ? 1e-9 : 1e-2),
                error,
                reason: 'mean planet position error (AU) vs double-double',
              }
            },
          }
        },
      })),
      {
        name: `${name} float64`,
        kind: 'inverse',
        setup(c) {
          const f = P.leapfrogFunctions('f64').steps
          const start = leapfrogStartF64(c.sys, c.dt)
          const end = { x: start.x.slice(), v: start.v.slice(), a: start.a.slice() }
          leapfrogStepsF64(end, c.sys.mass, c.dt, c.steps)
          const x = end.x.slice(),
            v = end.v.slice()
          const call = () => {
            x.set(end.x)
            v.set(end.v)
            f.inverse.core(x, v, c.sys.mass, c.sys.bodies, G_SOLAR, c.dt, c.steps)
          }
          return {
            run: call,
            check: () => {
              call()
              const r = checkClose(x, start.x, 1e-10, 'recovered start')
              return { ...r, reason: r.reason ?? 'start state recovered by the generated inverse' }
            },
          }
        },
      },
    ],
    kernels: [
      {
        name,
        kind: 'objective',
        setup(c) {
          // the positional entry, called with the case's argument list (apply: no spread array per call)
          const F = K.kernelsModule()[c.fn]!.core
          const a = c.args
          return {
            run: () => {
              F.apply(undefined, a as never)
              sink[0] += F.results[0]!
            },
            check: () => {
              F.apply(undefined, a as never)
              return checkClose([F.results[0]!], [c.plain()], 1e-10, 'loss')
            },
          }
        },
      },
      {
        name,
        kind: 'gradient',
        setup(c) {
          const g = grad(K.kernelsModule()[c.fn]!, { loss: 0 })
          const a = c.args
          return {
            run: () => g.run.apply(g, a),
            check: () => {
              g.run.apply(g, a)
              const error = K.kernelGradientError(K.flattenGradient(c.wrt, g.scalars, g.buffers), c)
              return error <= K.KERNEL_FD_TOLERANCE
                ? { ok: true, error }
                : { ok: false, error, reason: `gradient vs central differences: ${error.toExponential(2)}` }
            },
          }
        },
      },
    ],
  },
})

/** Row-major M × N (x[i·N + l]) to the column-major layout of `i_umm` (x[i + M·l]). */
export function toColumnMajor(a: Float64Array, M: number, N: number): Float64Array {
  const out = new Float64Array(a.length)
  for (let i = 0; i < M; i++) for (let l = 0; l < N; l++) out[i + M * l] = a[i * N + l]!
  return out
}
