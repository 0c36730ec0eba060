/**
 * `tfOp`: a Tenet function as a TensorFlow.js op. The forward pass runs the Tenet function on the
 * tensors' data; the gradient is Tenet's generated adjoint (the `vjp` rule of `@tenet/ad`),
 * registered with TF.js through `tf.customGrad`, so `tf.grad`, `tf.variableGrads`, optimizers and
 * layers differentiate through the op without TF.js recording anything inside it.
 */
import * as tf from '@tensorflow/tfjs'
import { vjp, type RuleValue, type VjpRule } from '@tenet/ad'
import type { TenetFunction } from '@tenet/reversible'
import { adapterError, planArguments, type ArgumentPlan, type ElementInputs } from './arguments.js'

/**
 * The value of a parameter that no tensor feeds: a number, boolean, typed array (or a JS array
 * for a stack), or a function of one batch element's inputs that returns one.
 */
export type ArgSource = number | boolean | ArrayLike<number> | unknown[] | ((inputs: ElementInputs) => unknown)

/** A parameter of the Tenet function, by name or index. */
export type ParamRef = number | string

/** How a Tenet function becomes a TF.js op. */
export interface TfOpOptions {
  /** The parameters fed by the op's tensor arguments, in the op's argument order. */
  inputs: readonly ParamRef[]
  /**
   * The float parameters whose final values are the op's results, in order. One output: the op
   * returns a tensor; several: an array of tensors.
   */
  outputs: readonly ParamRef[]
  /**
   * Initial values of the other parameters, by name: a number, boolean or typed array, or a
   * function of one (batch element's) inputs, by parameter name, that returns one — sizes, index
   * tables, zeroed output arrays: `{ n: ({ x }) => x.length, y: ({ x }) => new Float64Array(x.length) }`.
   * A float scalar parameter that is neither an input nor given here starts at 0.
   */
  args?: Readonly<Record<string, ArgSource>>
  /**
   * The TF.js shape of each output, without the batch dimension. Default: `[]` for a scalar; for
   * an array that is also an input, that input's shape; otherwise `[length]`.
   */
  outputShapes?: ReadonlyArray<readonly number[] | undefined>
  /**
   * Map the function over a leading batch dimension: `true` for every input, or one flag per
   * input (`false`: the input is shared by the whole batch, e.g. weights; its gradient is summed
   * over the batch). Every batched input must have the same leading size B; each output gets it.
   */
  batch?: boolean | readonly boolean[]
}

/** A TF.js op made by `tfOp`. */
export interface TfOp<R extends tf.Tensor | tf.Tensor[] = tf.Tensor | tf.Tensor[]> {
  (...inputs: tf.Tensor[]): R
  /** The Tenet function it runs. */
  readonly fn: TenetFunction
  /** The reverse rule its gradient runs (see `vjp` in `@tenet/ad`). */
  readonly rule: VjpRule
}

/**
 * Turns the Tenet function `f` into a TF.js op whose gradient is Tenet's adjoint of `f`.
 * ```ts
 * const m = rev`fn norm(out: f64, x: f64[]) {
 *   routine { s <- 0.0; for i in 0..len(x) { s += x[i] * x[i] } }
 *   out += sqrt(s)
 *   ~routine
 * }`
 * const norm = tfOp(m.norm, { inputs: ['x'], outputs: ['out'] })
 * tf.grad((x) => norm(x))(tf.tensor1d([3, 4]))   // [0.6, 0.8]
 * ```
 * At the boundary the tensors' float32 data are copied into the arrays of the parameters' types
 * (exactly widened for f64 parameters) and the results rounded back to float32; i32 parameters
 * take int32 tensors and get zero gradients. The op reads its inputs with `dataSync()` (a
 * synchronous download on GPU backends).
 */
export function tfOp<const O extends readonly ParamRef[]>(
  f: TenetFunction,
  options: TfOpOptions & { outputs: O },
): TfOp<O extends readonly [ParamRef] ? tf.Tensor : tf.Tensor[]> {
  const plan = planArguments(f, options)
  const rule = vjp(f, { wrt: plan.wrt, outputs: plan.outputs, borrow: true })
  const single = plan.outputs.length === 1
  // the forward and its gradient as one TF.js node: every output packed into one tensor
  // ([B?, total]) unless there is only one (then it has its own shape)
  const node = tf.customGrad(((...xs: unknown[]) => {
    xs.pop() // TF.js's save function: the op saves no tensors, its residuals are plain arrays
    return forward(plan, rule, xs as tf.Tensor[], single)
  }) as Parameters<typeof tf.customGrad>[0]) as (...inputs: tf.Tensor[]) => tf.Tensor
  const op = (...inputs: tf.Tensor[]): tf.Tensor | tf.Tensor[] => {
    checkInputs(plan, inputs)
    if (single) return node(...inputs)
    return tf.tidy(() => {
      const packed = node(...inputs)
      const batched = plan.batchSize(inputs) !== null
      const sizes = plan.lastShapes!.map(sizeOf)
      const parts = tf.split(packed, sizes, batched ? 1 : 0)
      return parts.map((p, k) =>
        p.reshape(batched ? [packed.shape[0]!, ...plan.lastShapes![k]!] : [...plan.lastShapes![k]!]),
      )
    })
  }
  Object.defineProperties(op, { fn: { value: f }, rule: { value: rule } })
  return op as unknown as TfOp<O extends readonly [ParamRef] ? tf.Tensor : tf.Tensor[]>
}

function checkInputs(plan: ArgumentPlan, inputs: tf.Tensor[]): void {
  if (inputs.length !== plan.inputs.length)
    adapterError(
      'adapter/argument',
      `the op of \`${plan.name}\` takes ${plan.inputs.length} tensors (${plan.inputs.map((p) => plan.params[p]!.name).join(', ')}), got ${inputs.length}`,
    )
  inputs.forEach((t, k) => {
    const p = plan.params[plan.inputs[k]!]!
    if (!(t instanceof tf.Tensor))
      adapterError(
        'adapter/argument',
        `input ${k} (\`${p.name}\`) of the op of \`${plan.name}\` must be a tf.Tensor, got ${t === null ? 'null' : typeof t}`,
      )
    const want = plan.isInt[k] ? 'int32' : 'float32'
    if (t.dtype !== want)
      adapterError(
        'adapter/argument',
        `input ${k} (\`${p.name}\`: ${plan.typeName(plan.inputs[k]!)}) of the op of \`${plan.name}\` must be a ${want} tensor, got ${t.dtype}`,
      )
  })
  plan.batchSize(inputs)
}

/** The forward pass inside `tf.customGrad`: runs the rule per batch element, keeps the pullbacks. */
function forward(
  plan: ArgumentPlan,
  rule: VjpRule,
  inputs: tf.Tensor[],
  single: boolean,
): { value: tf.Tensor; gradFunc: (dy: tf.Tensor) => tf.Tensor[] } {
  const B = plan.batchSize(inputs)
  if (B === 0) adapterError('adapter/shape', `the op of \`${plan.name}\` got an empty batch (leading dimension 0)`)
  const count = B ?? 1
  const data = inputs.map((t) => t.dataSync() as Float32Array | Int32Array)
  // per input: its element length and shape (without the batch dimension)
  const batchedAt = inputs.map((_, k) => B !== null && plan.batched[k]!)
  const elemShape = inputs.map((t, k) => (batchedAt[k] ? t.shape.slice(1) : t.shape.slice()))
  const elemLen = inputs.map((t, k) => (batchedAt[k] ? t.size / count : t.size))
  // inputs shared by the batch are converted once (the rule borrows read-only arrays)
  const shared = inputs.map((_, k) => (batchedAt[k] ? undefined : plan.convert(k, data[k]!, 0, elemLen[k]!)))
  const pullbacks: Array<(c: ArrayLike<number | ArrayLike<number>>) => RuleValue[]> = []
  let packed: Float32Array | undefined
  let shapes: number[][] = []
  let offsets: number[] = []
  let total = 0
  for (let b = 0; b < count; b++) {
    const values: ElementInputs = {}
    const args = new Array<unknown>(plan.params.length)
    inputs.forEach((_, k) => {
      const v = shared[k] ?? plan.convert(k, data[k]!, b * elemLen[k]!, elemLen[k]!)
      values[plan.params[plan.inputs[k]!]!.name] = v
      args[plan.inputs[k]!] = v
    })
    plan.fill(args, values)
    const r = rule(...args)
    pullbacks.push(r.pullback as never)
    if (b === 0) {
      shapes = plan.outputShapes(r.outputs, elemShape)
      offsets = []
      for (const o of r.outputs) {
        offsets.push(total)
        total += typeof o === 'number' ? 1 : o.length
      }
      packed = new Float32Array(count * total)
    }
    r.outputs.forEach((o, j) => {
      const at = b * total + offsets[j]!
      if (typeof o === 'number') packed![at] = o
      else {
        const want = j + 1 < offsets.length ? offsets[j + 1]! - offsets[j]! : total - offsets[j]!
        if (o.length !== want)
          adapterError(
            'adapter/shape',
            `output ${j} (\`${plan.params[plan.outputs[j]!]!.name}\`) of \`${plan.name}\` has ${o.length} elements in batch element ${b}, but ${want} in element 0: every element of a batch must give outputs of the same sizes`,
          )
        packed!.set(o, at)
      }
    })
  }
  plan.lastShapes = shapes
  const value = single
    ? tf.tensor(packed!, B === null ? shapes[0]! : [B, ...shapes[0]!], 'float32')
    : tf.tensor(packed!, B === null ? [total] : [B, total], 'float32')
  const gradFunc = (dy: tf.Tensor): tf.Tensor[] => {
    const d = dy.dataSync() as Float32Array
    // per input: its gradient, accumulated in f64 when a batch of several shares it
    const grads = inputs.map((t, k) =>
      plan.isInt[k] ? null : batchedAt[k] || count === 1 ? new Float32Array(t.size) : new Float64Array(t.size),
    )
    for (let b = 0; b < count; b++) {
      const cot = offsets.map((o, j) =>
        plan.isScalarOutput[j] ? d[b * total + o]! : d.subarray(b * total + o, b * total + o + sizeOf(shapes[j]!)),
      )
      const g = pullbacks[b]!(cot)
      inputs.forEach((_, k) => {
        const at = plan.wrtPosition[k]!
        if (at < 0) return
        const gk = g[at]!,
          out = grads[k]!
        const base = batchedAt[k] ? b * elemLen[k]! : 0
        if (typeof gk === 'number') out[base] = batchedAt[k] || count === 1 ? gk : out[base]! + gk
        else if (batchedAt[k] || count === 1) out.set(gk, base)
        else accumulate(out as Float64Array, gk)
      })
    }
    return inputs.map((t, k) => {
      const g = grads[k]
      // TF.js wants float32 gradients even for int32 inputs
      if (!g) return tf.zeros(t.shape, 'float32')
      if (g instanceof Float32Array) return tf.tensor(g, t.shape, 'float32')
      const g32 = new Float32Array(g.length)
      g32.set(g)
      return tf.tensor(g32, t.shape, 'float32')
    })
  }
  return { value, gradFunc }
}

const sizeOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1)

/** out += g, elementwise (a shared input's gradient summed over the batch). */
function accumulate(out: Float64Array, g: Float64Array | Float32Array): void {
  for (let e = 0; e < g.length; e++) out[e]! += g[e]!
}
