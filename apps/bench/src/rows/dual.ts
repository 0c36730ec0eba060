/**
 * The dual-numbers engine (`@tenet/dual`) as the "tape" row: each workload's plain-TS objective
 * rewritten against the scalar API, differentiated by one recorded forward run and one reverse
 * sweep over a typed-array arena (`grad(f).into`, which allocates nothing per call). Every
 * reversible-AD figure thereby stands beside a well-built tape on the same code.
 */
import { grad, type Dual, type Real } from '@tenet/dual'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { PreparedRow } from '../harness/types.js'
import { PETERSEN_E1, PETERSEN_E2 } from '../objectives/graph-embedding.js'
import { factorial } from '../objectives/bessel.js'
import { ownGradientRun, type DualCase } from '../workloads/dual.js'

export const DUAL_ROW = 'tape (dual numbers)'

const sink = new Float64Array(1)

/** A gradient row over a flat Float64Array input. */
function flatRow(
  f: (d: Dual, x: Real[]) => Real,
  x: Float64Array,
  reference: () => ArrayLike<number>,
  what = 'gradient',
  tolerance: number = TOLERANCE.f64,
  stage = false,
): PreparedRow {
  const g = grad(f, { stage })
  const out = new Float64Array(x.length)
  if (stage) {
    // the first call traces and compiles; V8 then optimises the generated functions after some
    // calls (concurrently, 0.1–0.2 s on a loaded machine): warm them up like any JIT-compiled code
    const until = performance.now() + 500
    for (let n = 0; n < 20 || (n < 100_000 && performance.now() < until); n++) g.into(out, x)
  }
  const into = g.into
  return {
    run: ownGradientRun(into, out, x),
    check: () => {
      g.into(out, x)
      return checkClose(out, reference(), tolerance, what)
    },
  }
}

/** Σ xᵢ·yᵢ as one n-ary node per dot product (the `d.dot` form of the same functions). */
function dotNary(d: Dual, x: Real[], n: number): Real {
  return d.dot(x, x, 0, n, n)
}
const rowDots: Real[] = []
function sumMatVecNary(d: Dual, x: Real[], n: number): Real {
  rowDots.length = n
  for (let i = 0; i < n; i++) rowDots[i] = d.dot(x, x, i * n, n * n, n)
  return d.sum(rowDots)
}

/** J_ν(z) by its series with the atol stop (as `besselJPlain`), against the scalar API. */
function besselDual(d: Dual, z: Real, nu: number, atol = 1e-8): Real {
  const half = d.scale(z, 0.5)
  let s = d.scale(d.powConst(half, nu), 1 / factorial(nu))
  let out = s
  const h2 = d.square(half)
  let k = 0
  while (Math.abs(d.value(s)) > atol) {
    k += 1
    s = d.scale(d.mul(s, h2), -1 / (k * (k + nu)))
    out = d.add(out, s)
  }
  return out
}

/** The Petersen-graph embedding loss (as `embeddingLossPlain`), against the scalar API. */
function embeddingDual(d: Dual, x: Real[], k: number): Real {
  const distances = (pairs: Int32Array): Real[] => {
    const out: Real[] = []
    for (let e = 0; e < pairs.length / 2; e++) {
      const a = pairs[2 * e]! * k,
        b = pairs[2 * e + 1]! * k
      let s = d.square(d.sub(x[a]!, x[b]!))
      for (let i = 1; i < k; i++) s = d.add(s, d.square(d.sub(x[a + i]!, x[b + i]!)))
      out.push(d.sqrt(s))
    }
    return out
  }
  const variance = (v: Real[], mean: Real): Real => {
    let s = d.square(d.sub(v[0]!, mean))
    for (let i = 1; i < v.length; i++) s = d.add(s, d.square(d.sub(v[i]!, mean)))
    return d.scale(s, 1 / (v.length - 1))
  }
  const d1 = distances(PETERSEN_E1),
    d2 = distances(PETERSEN_E2)
  const m1 = d.scale(d.sum(d1), 1 / d1.length),
    m2 = d.scale(d.sum(d2), 1 / d2.length)
  const t = d.offset(d.sub(m1, m2), 0.1)
  const relu = d.value(t) > 0 ? t : d.constant(0)
  return d.offset(d.add(d.add(variance(d1, m1), variance(d2, m2)), d.exp(relu)), -1)
}

export const dualRows = defineRowFamily({
  family: DUAL_ROW,
  rows: {
    dual: [
      { name: DUAL_ROW, kind: 'gradient', setup: (c: DualCase) => flatRow(c.dual, c.x, c.gradient) },
      {
        // the same code staged: traced once, compiled to JS with its loops rerolled, guards checked
        name: `${DUAL_ROW}, staged`,
        kind: 'gradient',
        setup: (c: DualCase) => flatRow(c.dual, c.x, c.gradient, 'gradient', TOLERANCE.f64, true),
      },
      {
        name: `${DUAL_ROW}, n-ary dot`,
        kind: 'gradient',
        setup: (c: DualCase) => {
          if (c.id === 'dot') return flatRow((d, x) => dotNary(d, x, c.sizes.n), c.x, c.gradient)
          if (c.id === 'sum-mat-vec') return flatRow((d, x) => sumMatVecNary(d, x, c.sizes.n), c.x, c.gradient)
          return { na: 'no dot product to write as one n-ary node' }
        },
      },
    ],
    bessel: [
      {
        name: DUAL_ROW,
        kind: 'gradient',
        setup(c) {
          const g = grad((d, z: Real[]) => besselDual(d, z[0]!, c.nu))
          const z = new Float64Array(1),
            out = new Float64Array(1)
          const b = c.batch
          if (!b) {
            z[0] = c.z
            return {
              run: () => {
                g.into(out, z)
                sink[0] += out[0]!
              },
              check: () => {
                g.into(out, z)
                return checkClose(out, [c.derivative], 1e-7, 'dJ/dz')
              },
            }
          }
          // one gradient call per z (each z has its own term count)
          const all = new Float64Array(b.zs.length)
          const once = () => {
            for (let i = 0; i < b.zs.length; i++) {
              z[0] = b.zs[i]!
              g.into(out, z)
              all[i] = out[0]!
            }
            return all
          }
          return { run: () => void once(), check: () => checkClose(once(), b.derivative(), 1e-7, 'dJ/dz') }
        },
      },
    ],
    'sparse-dot': [
      {
        name: DUAL_ROW,
        kind: 'gradient',
        setup(c) {
          const { A, B } = c
          const nA = A.values.length
          // trace(AᵀB) over the CSC patterns: the same merge as the plain objective
          // (sizes read from the black-boxed case inside `f`, not closure constants: see black-box.ts)
          const f = (d: Dual, v: Real[]): Real => {
            const nA = A.values.length
            let r = d.constant(0)
            for (let j = 0; j < A.cols; j++) {
              let ia = A.colPtr[j]!,
                ib = B.colPtr[j]!
              const iaEnd = A.colPtr[j + 1]!,
                ibEnd = B.colPtr[j + 1]!
              while (ia < iaEnd && ib < ibEnd) {
                const ra = A.rowIdx[ia]!,
                  rb = B.rowIdx[ib]!
                if (ra < rb) ia++
                else if (ra > rb) ib++
                else {
                  r = d.add(r, d.mul(v[ia]!, v[nA + ib]!))
                  ia++
                  ib++
                }
              }
            }
            return r
          }
          const x = new Float64Array(nA + B.values.length)
          x.set(A.values)
          x.set(B.values, nA)
          return flatRow(f, x, () => {
            const { gA, gB } = c.gradient()
            const r = new Float64Array(x.length)
            r.set(gA)
            r.set(gB, nA)
            return r
          })
        },
      },
    ],
    'sparse-mul': [
      {
        name: DUAL_ROW,
        kind: 'gradient',
        setup(c) {
          const { A, x, y0, yBar } = c
          const n = A.cols,
            nnz = A.values.length
          // inputs [Re A | Im A | Re x | Im x]; the loss ⟨ȳ, y0 + A x⟩ (real inner product), so its
          // gradient is the reverse pass for ȳ
          const f = (d: Dual, v: Real[]): Real => {
            const n = A.cols,
              nnz = A.values.length
            const yr: Real[] = [],
              yi: Real[] = []
            for (let i = 0; i < n; i++) {
              yr.push(d.constant(y0.re[i]!))
              yi.push(d.constant(y0.im[i]!))
            }
            for (let j = 0; j < n; j++) {
              const xr = v[2 * nnz + j]!,
                xi = v[2 * nnz + n + j]!
              for (let k = A.colPtr[j]!; k < A.colPtr[j + 1]!; k++) {
                const r = A.rowIdx[k]!,
                  ar = v[k]!,
                  ai = v[nnz + k]!
                yr[r] = d.add(yr[r]!, d.sub(d.mul(ar, xr), d.mul(ai, xi)))
                yi[r] = d.add(yi[r]!, d.add(d.mul(ar, xi), d.mul(ai, xr)))
              }
            }
            return d.add(d.linear(yBar.re, yr), d.linear(yBar.im, yi))
          }
          const input = new Float64Array(2 * nnz + 2 * n)
          input.set(A.values)
          input.set(A.imag, nnz)
          input.set(x.re, 2 * nnz)
          input.set(x.im, 2 * nnz + n)
          return flatRow(
            f,
            input,
            () => {
              const b = c.backward()
              const r = new Float64Array(input.length)
              r.set(b.aBarRe)
              r.set(b.aBarIm, nnz)
              r.set(b.xBar.re, 2 * nnz)
              r.set(b.xBar.im, 2 * nnz + n)
              return r
            },
            'x̄, Ā',
          )
        },
      },
    ],
    'graph-embedding': [
      { name: DUAL_ROW, kind: 'gradient', setup: (c) => flatRow((d, x) => embeddingDual(d, x, c.k), c.x, c.gradient) },
    ],
  },
})
