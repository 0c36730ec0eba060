/**
 * The primitive table: one row per primitive of a registry and per scalar type it takes (f64,
 * f32, and i32 or bool where a bijection accepts them), read from the registry — no list of
 * names here, so a user's primitive registered with the same call gets its rows too. Each row
 * has four columns, each with its own tolerance:
 *
 * - value: the backend's result against the primitive's JS reference semantics (`evaluate` /
 *   `apply`, rounded to the row's type), within `tolerance.value` ulps of the scale;
 * - inverse: running the compiled inverse on the forward results gives the inputs back (within
 *   `tolerance.inverse` ulps; bit for bit for i32 and bool);
 * - gradient: the adjoint gradient of a loss through the primitive against central finite
 *   differences of the JS reference (relative error `tolerance.gradient`);
 * - hessian: the forward-over-reverse Hessian against central finite differences of the
 *   adjoint gradient of the same loss in f64 (relative error `tolerance.hessian`).
 */
import type { BijectionSpec, PrimitiveSpec, PurePrimitiveSpec, Registry, ScalarTypeName } from '@tenet/ir'
import type { TenetFunction, TenetModule } from '@tenet/reversible'
import { finiteDifference, relativeError } from '../finite-difference.js'

/** The scalar types of the table's rows. */
export type RowType = 'f64' | 'f32' | 'i32' | 'bool'

/** The columns of the table. */
export type PrimitiveColumn = 'value' | 'inverse' | 'gradient' | 'tangent' | 'hessian'

/** A row's tolerances: ulps of the scale for value and inverse, relative errors for derivatives. */
export interface RowTolerances {
  value: number
  inverse: number
  /** Relative error of the gradient and of the forward-mode tangent. */
  gradient: number
  hessian: number
}

/** What the derivative columns need: `gradient` and `hessian` as `@tenet/ad` exports them. */
export interface ConformanceAd {
  /** The gradient of argument `loss` (as returned) with respect to every argument. */
  gradient(f: TenetFunction, args: unknown[], options: { loss: number }): unknown[]
  /** The Hessian of argument `loss` over the float arguments but `loss`, row-major. */
  hessian(f: TenetFunction, args: unknown[], options: { loss: number }): ArrayLike<number>
  /** Forward mode: the derivative of every result along the direction `v` (optional: the tangent column). */
  jvp?(f: TenetFunction, args: unknown[], options: { v: unknown[] }): { tangent: unknown[] }
}

/** One row: a primitive at one type. */
export interface PrimitiveRow {
  primitive: string
  kind: 'pure' | 'bijection'
  type: RowType
  /** The arguments the primitive is applied to (rounded to the type). */
  point: number[]
  tolerance: RowTolerances
  /** Why a derivative column does not apply to this row, by column (absent: it applies). */
  notDifferentiable: Partial<Record<'gradient' | 'tangent' | 'hessian', string>>
  /** `fn f(...)` applying the primitive once (pure: `y += p(x…)`; bijection: `B(x…)`). */
  valueSource: string
  /** The arguments of `valueSource`'s `f`. */
  valueArgs: unknown[]
  /** The reference results of `valueSource`'s `f` at `valueArgs`. */
  expected: unknown[]
  /** `fn f(y: T, x…: T)`: y += a smooth loss of the primitive's results (for the derivatives). */
  lossSource(type: RowType): string
  /** The same loss in plain JS, from the JS reference semantics. */
  loss(x: number[]): number
}

const POINT = [0.35, 0.8, 0.55]
const INT_POINT = [7, -3, 5]

/** Default tolerances by type; a row of an ill-conditioned primitive may widen them. */
const TOLERANCES: Record<RowType, RowTolerances> = {
  f64: { value: 2, inverse: 2, gradient: 1e-7, hessian: 1e-6 },
  f32: { value: 2, inverse: 2, gradient: 2e-5, hessian: 1e-4 },
  i32: { value: 0, inverse: 0, gradient: 0, hessian: 0 },
  bool: { value: 0, inverse: 0, gradient: 0, hessian: 0 },
}
/**
 * Per-row widenings: bijections are compared with their JS `apply` computed in f64 and rounded
 * once, while a backend rounds after every operation of the formula (ROT: four products and two
 * sums; sincos: a product after each function).
 */
const WIDER: Partial<Record<string, Partial<Record<RowType, Partial<RowTolerances>>>>> = {
  ROT: { f64: { value: 4, inverse: 8 }, f32: { value: 4, inverse: 8 } },
  IROT: { f64: { value: 4, inverse: 8 }, f32: { value: 4, inverse: 8 } },
  HADAMARD: { f64: { value: 4, inverse: 4 }, f32: { value: 4, inverse: 4 } },
  sincos: { f64: { value: 4, inverse: 8 }, f32: { value: 4, inverse: 8 } },
  sincos_inverse: { f64: { value: 4, inverse: 8 }, f32: { value: 4, inverse: 8 } },
  INV: { f64: { inverse: 4 }, f32: { inverse: 4 } },
}

/** A number rounded to a row's type. */
export function roundTo(type: RowType, v: number): number {
  return type === 'f32' ? Math.fround(v) : type === 'i32' ? v | 0 : v
}

/** One unit in the last place of `scale` in a row's type (0 for exact types). */
function ulp(type: RowType, scale: number): number {
  if (type === 'i32' || type === 'bool') return 0
  const bits = type === 'f32' ? 23 : 52
  const s = Math.max(Math.abs(scale), type === 'f32' ? 2 ** -126 : 2 ** -1022)
  return 2 ** (Math.floor(Math.log2(s)) - bits)
}

/** The types a bijection's rows use, from its declared argument types. */
function bijectionTypes(spec: BijectionSpec): RowType[] {
  const types = spec.types ?? []
  const every = (ok: (t: string) => boolean) => types.every(ok)
  const out: RowType[] = []
  if (every((t) => t === 'float' || t === 'numeric' || t === 'f64')) out.push('f64')
  if (every((t) => t === 'float' || t === 'numeric' || t === 'f32')) out.push('f32')
  if (every((t) => t === 'integer' || t === 'numeric' || t === 'i32')) out.push('i32')
  if (types.length > 0 && every((t) => t === 'bool')) out.push('bool')
  return out
}

/** The types a pure primitive's rows use: those its signature accepts among f64 and f32. */
function pureTypes(spec: PurePrimitiveSpec): RowType[] {
  if ((spec.argKinds ?? []).some((k) => k === 'array')) return []
  return (['f64', 'f32'] as const).filter((t) => {
    const r = spec.signature?.(Array(spec.arity).fill(t) as ScalarTypeName[]) ?? t
    return !r.startsWith('error:')
  })
}

function tolerances(name: string, type: RowType): RowTolerances {
  return { ...TOLERANCES[type], ...WIDER[name]?.[type] }
}

function pureRow(spec: PurePrimitiveSpec, type: RowType): PrimitiveRow {
  const point = POINT.slice(0, spec.arity).map((v, i) =>
    roundTo(type, spec.name === 'min' || spec.name === 'max' ? v + i : v),
  )
  const xs = point.map((_, i) => `x${i}`)
  const params = xs.map((x) => `${x}: ${type}`).join(', ')
  const call = `${spec.name}(${xs.join(', ')})`
  const notDifferentiable: PrimitiveRow['notDifferentiable'] = {}
  if (!spec.partials && !spec.partialExprs) {
    notDifferentiable.gradient = `not applicable: \`${spec.name}\` has no partial derivatives`
    notDifferentiable.tangent = notDifferentiable.gradient
  }
  if (!spec.partialExprs)
    notDifferentiable.hessian = `not applicable: \`${spec.name}\` has no partial-derivative expressions (partialExprs)`
  return {
    primitive: spec.name,
    kind: 'pure',
    type,
    point,
    tolerance: tolerances(spec.name, type),
    notDifferentiable,
    valueSource: `fn f(y: ${type}, ${params}) { y += ${call} }`,
    valueArgs: [0, ...point],
    expected: [roundTo(type, spec.evaluate(...point)), ...point],
    // y = f(x)·f(x) + f(x): a nonzero second derivative even where f's own is zero
    lossSource: (t) => `fn f(y: ${t}, ${xs.map((x) => `${x}: ${t}`).join(', ')}) { y += ${call} * ${call} + ${call} }`,
    loss: (x) => {
      const v = spec.evaluate(...x)
      return v * v + v
    },
  }
}

function bijectionRow(spec: BijectionSpec, type: RowType): PrimitiveRow {
  const n = spec.roles.length
  const base = type === 'i32' ? INT_POINT : type === 'bool' ? [1, 0, 1] : POINT
  const point = Array.from({ length: n }, (_, i) => roundTo(type, base[i % base.length]! + Math.floor(i / 3) * 0.05))
  const xs = point.map((_, i) => `x${i}`)
  const inout = spec.roles.flatMap((r, i) => (r === 'inout' ? [i] : []))
  const out = spec.apply(...point)
  const expected: unknown[] = point.slice()
  inout.forEach((i, k) => {
    expected[i] = roundTo(type, out[k]!)
  })
  const float = type === 'f64' || type === 'f32'
  const notDifferentiable: PrimitiveRow['notDifferentiable'] = {}
  if (!float) {
    notDifferentiable.gradient = `not applicable: ${type} is not differentiable`
    notDifferentiable.tangent = notDifferentiable.gradient
    notDifferentiable.hessian = notDifferentiable.gradient
  } else {
    if (!spec.selfAdjoint && !spec.adjoint)
      notDifferentiable.gradient = `not applicable: \`${spec.name}\` has no adjoint rule`
    if (!spec.selfAdjoint && !spec.tangent)
      notDifferentiable.tangent = `not applicable: \`${spec.name}\` has no tangent rule`
    if (!spec.selfAdjoint && !(spec.adjoint && spec.tangent))
      notDifferentiable.hessian = `not applicable: \`${spec.name}\` has no tangent and adjoint rules`
  }
  const asValue = (v: number) => (type === 'bool' ? v !== 0 : v)
  // loss = Σ (k+1)·(new inout k)², read after the bijection
  const lossExpr = inout.map((i, k) => `${k + 1}.0 * x${i} * x${i}`).join(' + ')
  return {
    primitive: spec.name,
    kind: 'bijection',
    type,
    point,
    tolerance: tolerances(spec.name, type),
    notDifferentiable,
    valueSource: `fn f(${xs.map((x) => `${x}: ${type}`).join(', ')}) { ${spec.name}(${xs.join(', ')}) }`,
    valueArgs: point.map(asValue),
    expected: expected.map((v) => asValue(v as number)),
    lossSource: (t) =>
      `fn f(y: ${t}, ${xs.map((x) => `${x}: ${t}`).join(', ')}) {\n  ${spec.name}(${xs.join(', ')})\n  y += ${lossExpr}\n}`,
    loss: (x) => {
      const o = spec.apply(...x)
      return inout.reduce((s, _, k) => s + (k + 1) * o[k]! * o[k]!, 0)
    },
  }
}

/** Every row of `registry`'s primitives (in name order), or, for one that has none, why. */
export function primitiveRows(registry: Registry): { rows: PrimitiveRow[]; without: Array<[string, string]> } {
  const rows: PrimitiveRow[] = []
  const without: Array<[string, string]> = []
  for (const name of registry.names()) {
    const spec: PrimitiveSpec | undefined = registry.findPrimitive(name)
    if (!spec) continue
    if (spec.kind === 'pure') {
      const types = pureTypes(spec)
      if (!types.length)
        without.push([name, 'array arguments or no float signature: the table covers scalar primitives'])
      for (const t of types) rows.push(pureRow(spec, t))
    } else if (spec.kind === 'bijection') {
      const types = bijectionTypes(spec)
      if (!types.length) without.push([name, `argument types ${JSON.stringify(spec.types)} mix scalar types`])
      for (const t of types) rows.push(bijectionRow(spec, t))
    } else {
      without.push([name, `a ${(spec as { kind: string }).kind} primitive: the table covers pure and bijection ones`])
    }
  }
  return { rows, without }
}

/** Problems of the value column: the compiled forward against the JS reference. */
export function valueProblems(row: PrimitiveRow, m: TenetModule): string[] {
  const got = m.f!(...row.valueArgs)
  return compare(row, got, row.expected, row.tolerance.value, 'value')
}

/** Problems of the inverse column: inverse(forward(x)) against x. */
export function inverseProblems(row: PrimitiveRow, m: TenetModule): string[] {
  // a nonzero y for pure rows, so that `y += v` then `y -= v` rounds
  const args = row.kind === 'pure' ? [roundTo(row.type, 0.125), ...row.valueArgs.slice(1)] : row.valueArgs
  const out = m.f!(...args)
  const back = m.f!.inverse(...out)
  return compare(row, back, args, row.tolerance.inverse, 'inverse(forward(x))', out)
}

function compare(
  row: PrimitiveRow,
  got: unknown[],
  want: unknown[],
  ulps: number,
  what: string,
  scaleOf: unknown[] = want,
): string[] {
  if (got.length !== want.length) return [`${what}: ${got.length} results, expected ${want.length}`]
  const scale = Math.max(...[...scaleOf, ...row.point].map((v) => (typeof v === 'number' ? Math.abs(v) : 0)))
  const bound = ulps * ulp(row.type, scale)
  const problems: string[] = []
  want.forEach((w, i) => {
    const g = got[i]
    const ok =
      typeof w === 'number' && typeof g === 'number' ? Object.is(g, w) || Math.abs(g - w) <= bound : Object.is(g, w)
    if (!ok)
      problems.push(
        `${what}: result ${i} is ${String(g)}, expected ${String(w)} (within ${ulps} ulp of ${scale}, ${bound})`,
      )
  })
  return problems
}

/** The float inputs of the loss program, rounded to the row's type. */
const lossArgs = (row: PrimitiveRow, x: readonly number[]): number[] => [0, ...x.map((v) => roundTo(row.type, v))]

/** Problems of the gradient column: the adjoint gradient against finite differences of the JS loss. */
export function gradientProblems(row: PrimitiveRow, m: TenetModule, ad: ConformanceAd): string[] {
  const g = ad.gradient(m.f!, lossArgs(row, row.point), { loss: 0 }).slice(1) as number[]
  const fd = finiteDifference(row.loss, row.point)
  return fd.flatMap((d, i) => {
    const e = relativeError(g[i]!, d)
    return e <= row.tolerance.gradient
      ? []
      : [
          `gradient ${i}: ${g[i]} vs finite differences ${d} (relative error ${e.toPrecision(3)} > ${row.tolerance.gradient})`,
        ]
  })
}

/**
 * Problems of the tangent column: forward mode along v = (1, 0.7, 0.4, …) against the
 * directional central difference of the JS loss.
 */
export function tangentProblems(row: PrimitiveRow, m: TenetModule, ad: ConformanceAd): string[] {
  const v = row.point.map((_, i) => 1 - 0.3 * i)
  const t = ad.jvp!(m.f!, lossArgs(row, row.point), { v: [0, ...v] }).tangent[0] as number
  const [d] = finiteDifference(([s]: number[]) => row.loss(row.point.map((x, i) => x + s! * v[i]!)), [0])
  const e = relativeError(t, d!)
  return e <= row.tolerance.gradient
    ? []
    : [
        `tangent along ${JSON.stringify(v)}: ${t} vs finite differences ${d} (relative error ${e.toPrecision(3)} > ${row.tolerance.gradient})`,
      ]
}

/**
 * Problems of the Hessian column: the Hessian of the row's type against central differences of
 * the f64 adjoint gradient of the same loss (`m64`) on the same backend.
 */
export function hessianProblems(row: PrimitiveRow, m: TenetModule, m64: TenetModule, ad: ConformanceAd): string[] {
  const n = row.point.length
  const H = ad.hessian(m.f!, lossArgs(row, row.point), { loss: 0 })
  if (H.length !== n * n) return [`the Hessian has ${H.length} entries, expected ${n * n}`]
  const grad = (x: number[]) => ad.gradient(m64.f!, [0, ...x], { loss: 0 }).slice(1) as number[]
  const J = finiteDifference(grad, row.point)
  const problems: string[] = []
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      const e = relativeError(H[i * n + j]!, J[i]![j]!)
      if (!(e <= row.tolerance.hessian))
        problems.push(
          `Hessian [${i}][${j}]: ${H[i * n + j]} vs finite differences of the gradient ${J[i]![j]} (relative error ${e.toPrecision(3)} > ${row.tolerance.hessian})`,
        )
    }
  return problems
}
