/**
 * How the wasm backend carries out a primitive's own lowering (`emit.wasm` in its spec, see
 * `PureWasmLowering` and `BijectionWasmLowering` in `@tenet/ir`): the native float instructions
 * a lowering may name, the math library behind `{ math: … }` and `WasmEmitter.math`, and the
 * emitter handed to a lowering function. No primitive is named here: each primitive's file
 * says how it lowers.
 */
import { RegistryError, type WasmEmitter, type WasmFloatOp, type WasmMathFunction } from '@tenet/ir'
import { F32, Op, type ValType } from './encoder.js'

/** f64.convert_i32_u, f32.convert_i32_u: a comparison's 0/1 as a float. */
const TO_FLOAT = { f64: 0xb8, f32: 0xb3 }

/**
 * The native float instructions (applied in the float type), with their operand counts; a
 * comparison is followed by \`then\` (the unsigned conversion of its 0/1 to the float type).
 */
export const NATIVE: Record<
  WasmFloatOp | 'identity',
  { f64: number | null; f32: number | null; arity: number; then?: { f64: number; f32: number } }
> = {
  identity: { f64: null, f32: null, arity: 1 },
  sqrt: { f64: Op.f64_sqrt, f32: Op.f32_sqrt, arity: 1 },
  abs: { f64: Op.f64_abs, f32: Op.f32_abs, arity: 1 },
  neg: { f64: Op.f64_neg, f32: Op.f32_neg, arity: 1 },
  floor: { f64: Op.f64_floor, f32: Op.f32_floor, arity: 1 },
  ceil: { f64: Op.f64_ceil, f32: Op.f32_ceil, arity: 1 },
  trunc: { f64: Op.f64_trunc, f32: Op.f32_trunc, arity: 1 },
  nearest: { f64: Op.f64_nearest, f32: Op.f32_nearest, arity: 1 },
  min: { f64: Op.f64_min, f32: Op.f32_min, arity: 2 },
  max: { f64: Op.f64_max, f32: Op.f32_max, arity: 2 },
  copysign: { f64: Op.f64_copysign, f32: Op.f32_copysign, arity: 2 },
  add: { f64: Op.f64_add, f32: Op.f32_add, arity: 2 },
  sub: { f64: Op.f64_sub, f32: Op.f32_sub, arity: 2 },
  mul: { f64: Op.f64_mul, f32: Op.f32_mul, arity: 2 },
  div: { f64: Op.f64_div, f32: Op.f32_div, arity: 2 },
  eq: { f64: Op.f64_eq, f32: Op.f32_eq, arity: 2, then: TO_FLOAT },
  ne: { f64: Op.f64_ne, f32: Op.f32_ne, arity: 2, then: TO_FLOAT },
  lt: { f64: Op.f64_lt, f32: Op.f32_lt, arity: 2, then: TO_FLOAT },
  gt: { f64: Op.f64_gt, f32: Op.f32_gt, arity: 2, then: TO_FLOAT },
  le: { f64: Op.f64_le, f32: Op.f32_le, arity: 2, then: TO_FLOAT },
  ge: { f64: Op.f64_ge, f32: Op.f32_ge, arity: 2, then: TO_FLOAT },
}

/** Emits native instruction \`n\` in type \`t\` (with its conversion, for a comparison). */
export function emitNative(n: (typeof NATIVE)[keyof typeof NATIVE], t: ValType, op: (code: number) => void): void {
  const code = t === F32 ? n.f32 : n.f64
  if (code !== null) op(code)
  if (n.then) op(t === F32 ? n.then.f32 : n.then.f64)
}

/** The native instruction `name`, if it is one. */
export function nativeOp(name: unknown): (typeof NATIVE)[keyof typeof NATIVE] | undefined {
  return typeof name === 'string' && Object.hasOwn(NATIVE, name) ? NATIVE[name as keyof typeof NATIVE] : undefined
}

/**
 * The math library: each function's operand count and the JS function the module calls for it.
 * (A function computed inside the module replaces its import here; the primitives' files do not
 * change.)
 */
export const MATH: Record<WasmMathFunction, { arity: number; js: (...a: number[]) => number }> = {
  sin: { arity: 1, js: Math.sin },
  cos: { arity: 1, js: Math.cos },
  tan: { arity: 1, js: Math.tan },
  exp: { arity: 1, js: Math.exp },
  log: { arity: 1, js: Math.log },
  pow: { arity: 2, js: Math.pow },
  atan: { arity: 1, js: Math.atan },
  atan2: { arity: 2, js: Math.atan2 },
  asin: { arity: 1, js: Math.asin },
  acos: { arity: 1, js: Math.acos },
  sinh: { arity: 1, js: Math.sinh },
  cosh: { arity: 1, js: Math.cosh },
  tanh: { arity: 1, js: Math.tanh },
}

/** What the emitter writes through (the function being generated). */
export interface LoweringSink {
  op(code: number): void
  get(local: number): void
  constant(t: ValType, v: number): void
  /** Emits a call of math-library function `name` in type `t` (its operands are on the stack). */
  math(name: WasmMathFunction, t: ValType): void
}

/**
 * Runs the lowering function `lower` of primitive `primitive` with its arguments in `args`
 * (locals of type `t`); it must leave `results` values. Errors name the primitive.
 */
export function runLowering(
  primitive: string,
  lower: (w: WasmEmitter) => void,
  t: ValType,
  args: number[],
  results: number,
  sink: LoweringSink,
): void {
  const type = t === F32 ? 'f32' : 'f64'
  let depth = 0
  const fail = (why: string): never => {
    throw new RegistryError('backend/lowering', `the wasm lowering of primitive \`${primitive}\` ${why}`)
  }
  const need = (n: number, what: string) => {
    if (depth < n) fail(`applies ${what} to ${depth} value${depth === 1 ? '' : 's'}; it needs ${n}`)
  }
  const w: WasmEmitter = {
    type,
    arg(k) {
      if (!Number.isInteger(k) || k < 0 || k >= args.length) fail(`reads argument ${k}; it has ${args.length}`)
      sink.get(args[k]!)
      depth++
    },
    const(x) {
      sink.constant(t, x)
      depth++
    },
    op(name) {
      const n = nativeOp(name)
      if (!n || (name as string) === 'identity')
        return fail(`names \`${String(name)}\`, which is not a wasm float instruction`)
      need(n.arity, `\`${name}\``)
      emitNative(n, t, sink.op)
      depth -= n.arity - 1
    },
    math(name) {
      if (!Object.hasOwn(MATH, name))
        fail(
          `calls \`${String(name)}\`, which the wasm math library does not have (it has ${Object.keys(MATH).join(', ')})`,
        )
      need(MATH[name].arity, `\`${name}\``)
      sink.math(name, t)
      depth -= MATH[name].arity - 1
    },
  }
  lower(w)
  if (depth !== results) fail(`leaves ${depth} value${depth === 1 ? '' : 's'}; it must leave ${results}`)
}
