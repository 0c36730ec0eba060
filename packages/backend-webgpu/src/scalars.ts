/**
 * How each Tenet scalar type lives on the GPU: f32, i32 and bool natively, a fixed-point type as
 * the i32 multiple of its grid step. f64 is rejected: WGSL has no f64.
 */
import {
  TenetStaticError,
  type NumberSystemSpec,
  type Registry,
  type ScalarTypeName,
  type SourceLocation,
} from '@tenet/ir'

/** A scalar type's GPU representation. */
export type GpuScalar =
  | { kind: 'f32' }
  | { kind: 'i32' }
  | { kind: 'bool' }
  | { kind: 'fixed'; name: string; fractionBits: number; integerBits: number }

/** Largest I + F of a fixed-point type held in an i32: sums of two values then never wrap. */
export const MAX_FIXED_BITS = 30

/** The GPU representation of scalar type `t`, or a static error saying why there is none. */
export function gpuScalar(registry: Registry, t: ScalarTypeName, loc?: SourceLocation): GpuScalar {
  if (t === 'f32' || t === 'i32' || t === 'bool') return { kind: t as 'f32' | 'i32' | 'bool' }
  if (t === 'f64') {
    throw new TenetStaticError(
      'webgpu/f64',
      'the webgpu backend has no f64: WGSL has no 64-bit floats. Declare the values f32 (or a fixed-point type for exact sums)',
      loc,
    )
  }
  const ns: NumberSystemSpec | undefined = registry.findNumberSystem(t)
  const fp = ns?.fixedPoint
  if (fp) {
    if (fp.fractionBits + fp.integerBits > MAX_FIXED_BITS) {
      throw new TenetStaticError(
        'webgpu/fixed-format',
        `the webgpu backend holds a fixed-point value in an i32, which needs integerBits + fractionBits ≤ ${MAX_FIXED_BITS}; \`${t}\` has ${fp.integerBits} + ${fp.fractionBits} (use e.g. fixedPoint({ name: 'q16', fractionBits: 16, integerBits: 14 }))`,
        loc,
      )
    }
    return { kind: 'fixed', name: t, fractionBits: fp.fractionBits, integerBits: fp.integerBits }
  }
  throw new TenetStaticError(
    'webgpu/type',
    `the webgpu backend has no representation for \`${t}\` (it runs f32, i32, bool and fixed-point types with at most ${MAX_FIXED_BITS} bits)`,
    loc,
  )
}

/** The WGSL type of a value of this representation (in registers). */
export function wgslType(s: GpuScalar): 'f32' | 'i32' | 'bool' {
  return s.kind === 'fixed' ? 'i32' : s.kind
}

/** The WGSL element type of a storage buffer holding such values (bool is not host-shareable). */
export function storageType(s: GpuScalar): 'f32' | 'i32' | 'u32' {
  return s.kind === 'bool' ? 'u32' : s.kind === 'f32' ? 'f32' : 'i32'
}

/**
 * A fixed-point host number as its grid integer: x·2^F rounded, ties away from zero (as
 * `@tenet/numbers` rounds), or undefined when it is outside (−2^I, 2^I).
 */
export function fixedToInt(x: number, s: Extract<GpuScalar, { kind: 'fixed' }>): number | undefined {
  const k = x * 2 ** s.fractionBits
  const r = k < 0 ? -Math.round(-k) : Math.round(k)
  if (!(Math.abs(r) < 2 ** (s.integerBits + s.fractionBits))) return undefined
  return r === 0 ? 0 : r
}

/** A WGSL literal of an f32 value. */
export function f32Literal(v: number): string {
  const x = Math.fround(v)
  // through private variables: a constant expression may not be infinite or NaN
  if (Number.isNaN(x)) return 'bitcast<f32>(tenet_nan)'
  if (!Number.isFinite(x)) return x > 0 ? 'bitcast<f32>(tenet_pinf)' : 'bitcast<f32>(tenet_ninf)'
  if (Object.is(x, -0)) return '-0.0f'
  const s = String(x)
  return x < 0 ? `(${s}f)` : `${s}f`
}

/** A WGSL literal of an i32 value (the most negative one spelled so that it parses). */
export function i32Literal(v: number): string {
  const x = v | 0
  if (x === -2147483648) return '(-2147483647i - 1i)'
  return x < 0 ? `(${x}i)` : `${x}i`
}
