/**
 * What crosses the boundary between TF.js and a Tenet function: which parameter each tensor
 * feeds, how the other parameters get their values, how tensor data become the parameters'
 * arrays, and the shapes of the results. Resolved once per op.
 */
import { TenetError, type Param } from '@tenet/ir'
import type { TenetFunction } from '@tenet/reversible'
import type { RuleValue } from '@tenet/ad'
import type { Tensor } from '@tensorflow/tfjs'
import type { ParamRef, TfOpOptions } from './tf-op.js'

/** Throws a `TenetError` with one of the adapter's codes. */
export const adapterError = (code: 'adapter/argument' | 'adapter/shape', msg: string): never => {
  throw new TenetError(code, msg)
}

/** One batch element's inputs, by parameter name (numbers for scalars, typed arrays for arrays). */
export type ElementInputs = Record<string, number | Float64Array | Float32Array | Int32Array>

/** The resolved plan of one op (see `planArguments`). */
export interface ArgumentPlan {
  name: string
  params: Param[]
  /** Per op input: the parameter it feeds. */
  inputs: number[]
  /** The output parameters. */
  outputs: number[]
  /** The float inputs (the rule's `wrt`). */
  wrt: number[]
  /** Per op input: its index among `wrt`, −1 for an integer input. */
  wrtPosition: number[]
  /** Per op input: whether it feeds an i32 parameter (an int32 tensor, zero gradient). */
  isInt: boolean[]
  /** Per op input: whether it carries the batch dimension (when batching). */
  batched: boolean[]
  /** Per output: whether it is a scalar parameter. */
  isScalarOutput: boolean[]
  /** The output shapes of the last forward run (without the batch dimension). */
  lastShapes: number[][] | undefined
  typeName(p: number): string
  /** The batch size of these inputs, or null without batching; checks that batched inputs agree. */
  batchSize(inputs: Tensor[]): number | null
  /** Tensor data of input k, elements [at, at + len), as the value of its parameter. */
  convert(
    k: number,
    data: Float32Array | Int32Array,
    at: number,
    len: number,
  ): number | Float64Array | Float32Array | Int32Array
  /** Sets the parameters that are not inputs, from `options.args` (or 0 for float scalars). */
  fill(args: unknown[], inputs: ElementInputs): void
  /** The shape of each output of one element (checked against `options.outputShapes`). */
  outputShapes(outputs: RuleValue[], inputShapes: number[][]): number[][]
}

const typeName = (p: Param): string =>
  p.type.kind === 'scalar' ? p.type.name : p.type.kind === 'array' ? `${p.type.elem}[]` : 'stack'

/** Resolves `options` against the parameters of `f`, with clear errors for what does not fit. */
export function planArguments(f: TenetFunction, options: TfOpOptions): ArgumentPlan {
  const params = typeof f === 'function' ? (f as { ir?: { params: Param[]; name: string } }).ir?.params : undefined
  if (!params)
    return adapterError(
      'adapter/argument',
      'tfOp(f, options): `f` must be a Tenet function (from `rev` or `compileModule`), e.g. `m.norm`',
    )
  const name = f.ir.name
  if (typeof options !== 'object' || options === null)
    adapterError(
      'adapter/argument',
      `tfOp(f, options): \`options\` must be an object { inputs, outputs, args?, outputShapes?, batch? }`,
    )
  const list = params.map((p, i) => `${i} \`${p.name}\`: ${typeName(p)}`).join(', ')
  const resolve = (ref: ParamRef, key: string): number => {
    const i = typeof ref === 'number' ? ref : params.findIndex((p) => p.name === ref)
    if (!Number.isInteger(i) || i < 0 || i >= params.length)
      adapterError(
        'adapter/argument',
        `tfOp: \`${key}\` names ${typeof ref === 'string' ? `\`${ref}\`` : ref}, which is not a parameter of \`${name}\` (${list})`,
      )
    return i
  }
  const elem = (p: Param): string | null =>
    p.type.kind === 'scalar' ? p.type.name : p.type.kind === 'array' ? p.type.elem : null
  const isFloat = (p: Param) => elem(p) === 'f64' || elem(p) === 'f32'
  if (!Array.isArray(options.inputs))
    adapterError(
      'adapter/argument',
      `tfOp: \`inputs\` must be an array of parameters of \`${name}\` (names or indices), got ${String(options.inputs)}`,
    )
  if (!Array.isArray(options.outputs) || options.outputs.length === 0)
    adapterError(
      'adapter/argument',
      `tfOp: \`outputs\` must be a non-empty array of parameters of \`${name}\` (names or indices)`,
    )
  const inputs = options.inputs.map((r) => resolve(r, 'inputs'))
  const outputs = options.outputs.map((r) => resolve(r, 'outputs'))
  for (const [key, idx] of [
    ['inputs', inputs],
    ['outputs', outputs],
  ] as const) {
    if (new Set(idx).size !== idx.length)
      adapterError('adapter/argument', `tfOp: \`${key}\` names a parameter of \`${name}\` twice`)
  }
  for (const i of inputs) {
    const p = params[i]!
    if (!isFloat(p) && elem(p) !== 'i32')
      adapterError(
        'adapter/argument',
        `tfOp: input \`${p.name}\` of \`${name}\` is ${typeName(p)}; a tensor can feed f64, f32 and i32 parameters (scalars and arrays); give the others in \`args\``,
      )
  }
  for (const i of outputs) {
    const p = params[i]!
    if (!isFloat(p))
      adapterError(
        'adapter/argument',
        `tfOp: output \`${p.name}\` of \`${name}\` is ${typeName(p)}; outputs must be f64 or f32 scalars or arrays`,
      )
  }
  const given = options.args ?? {}
  if (typeof given !== 'object' || given === null)
    adapterError('adapter/argument', 'tfOp: `args` must be an object of parameter values by name')
  for (const key of Object.keys(given)) {
    const i = params.findIndex((p) => p.name === key)
    if (i < 0)
      adapterError(
        'adapter/argument',
        `tfOp: \`args\` gives \`${key}\`, which is not a parameter of \`${name}\` (${list})`,
      )
    if (inputs.includes(i))
      adapterError('adapter/argument', `tfOp: \`args\` gives \`${key}\`, which is an input of the op`)
  }
  // every parameter that is not an input: from args, or 0 for a float scalar
  const others = params.flatMap((p, i) => {
    if (inputs.includes(i)) return []
    if (Object.hasOwn(given, p.name)) return [[i, given[p.name]] as const]
    if (p.type.kind === 'scalar' && isFloat(p)) return [[i, 0] as const]
    return adapterError(
      'adapter/argument',
      `tfOp: parameter \`${p.name}\` (${typeName(p)}) of \`${name}\` is neither an input nor given in \`args\` (give a value, or a function of the inputs such as \`({ x }) => x.length\`)`,
    )
  })
  const batch = options.batch ?? false
  const batched = inputs.map((_, k) => (typeof batch === 'boolean' ? batch : batch[k] === true))
  if (Array.isArray(batch) && batch.length !== inputs.length)
    adapterError(
      'adapter/argument',
      `tfOp: \`batch\` must be a boolean or one flag per input (${inputs.length}), got ${batch.length}`,
    )
  const batching = typeof batch === 'boolean' ? batch : batch.some(Boolean)
  const isInt = inputs.map((i) => elem(params[i]!) === 'i32')
  const wrt = inputs.filter((_, k) => !isInt[k])
  let w = 0
  const wrtPosition = isInt.map((int) => (int ? -1 : w++))
  const shapesOpt = options.outputShapes
  if (shapesOpt !== undefined && (!Array.isArray(shapesOpt) || shapesOpt.length !== outputs.length))
    adapterError('adapter/argument', `tfOp: \`outputShapes\` must have one entry per output (${outputs.length})`)
  return {
    name,
    params,
    inputs,
    outputs,
    wrt,
    wrtPosition,
    isInt,
    batched,
    isScalarOutput: outputs.map((i) => params[i]!.type.kind === 'scalar'),
    lastShapes: undefined,
    typeName: (i) => typeName(params[i]!),
    batchSize(ts) {
      if (!batching) return null
      let B: number | null = null
      ts.forEach((t, k) => {
        if (!batched[k]) return
        const p = params[inputs[k]!]!
        if (t.rank < 1)
          adapterError(
            'adapter/shape',
            `input ${k} (\`${p.name}\`) of the op of \`${name}\` is batched, so it needs a leading batch dimension; got a scalar`,
          )
        if (B === null) B = t.shape[0]!
        else if (t.shape[0] !== B)
          adapterError(
            'adapter/shape',
            `the batched inputs of the op of \`${name}\` must share their leading dimension: input ${k} (\`${p.name}\`) has ${t.shape[0]}, an earlier one ${B}`,
          )
        if (p.type.kind === 'scalar' && t.rank !== 1)
          adapterError(
            'adapter/shape',
            `input ${k} (\`${p.name}\`) feeds a scalar, so with batching it must have shape [B], got [${t.shape.join(', ')}]`,
          )
      })
      return B
    },
    convert(k, data, at, len) {
      const p = params[inputs[k]!]!
      if (p.type.kind === 'scalar') {
        if (len !== 1)
          adapterError(
            'adapter/shape',
            `input ${k} (\`${p.name}\`) of the op of \`${name}\` feeds a scalar (${p.type.name}), so it must have one element${batched[k] ? ' per batch element' : ''}, got ${len}`,
          )
        return data[at]!
      }
      const view = data.subarray(at, at + len)
      // own copies: the rule may keep (borrow) the arrays f only reads until its pullback
      const e = elem(p)
      // (\`set\` converts natively; \`from\` goes through the iterator protocol, several times slower)
      const out = e === 'f64' ? new Float64Array(len) : e === 'f32' ? new Float32Array(len) : new Int32Array(len)
      out.set(view)
      return out
    },
    fill(args, values) {
      for (const [i, v] of others) {
        const x = typeof v === 'function' ? (v as (inputs: ElementInputs) => unknown)(values) : v
        // arrays and stacks are copied by the rule; a scalar is taken as it is
        args[i] = x
      }
    },
    outputShapes(outs, inputShapes) {
      return outs.map((o, j) => {
        const p = params[outputs[j]!]!
        const len = typeof o === 'number' ? 1 : o.length
        const given = shapesOpt?.[j]
        if (given) {
          const size = given.reduce((a: number, b: number) => a * b, 1)
          if (size !== len)
            adapterError(
              'adapter/shape',
              `outputShapes[${j}] = [${given.join(', ')}] does not fit output \`${p.name}\` of \`${name}\`, which is ${typeof o === 'number' ? 'a scalar (shape [])' : `an array of ${len} elements`}`,
            )
          return given.slice()
        }
        if (typeof o === 'number') return []
        const k = inputs.indexOf(outputs[j]!)
        if (k >= 0) return inputShapes[k]!.slice()
        return [len]
      })
    },
  }
}
