/**
 * `TenetLayer`: a TF.js layer around a Tenet function with trainable weights. The layer's inputs
 * and then its weights are the tensors of a `tfOp`; the gradient (for the weights and for the
 * layer's input) is Tenet's adjoint, so a reversible layer keeps no activations of its own.
 */
import * as tf from '@tensorflow/tfjs'
import type { TenetFunction } from '@tenet/reversible'
import { adapterError } from './arguments.js'
import { tfOp, type ParamRef, type TfOp, type TfOpOptions } from './tf-op.js'

/** The base options of a TF.js layer (name, inputShape, trainable, …). */
export type LayerArgs = NonNullable<ConstructorParameters<typeof tf.layers.Layer>[0]>
/** A TF.js shape (`null` for an unknown dimension, e.g. the batch). */
export type Shape = Array<number | null>

/** One trainable weight of a `TenetLayer`: the Tenet parameter it feeds and how it starts. */
export interface TenetWeight {
  /** The parameter of the Tenet function (name); also the weight's name. */
  param: string
  /** Its TF.js shape. */
  shape: number[]
  /** Initializer (default `glorotUniform` for rank ≥ 2, `randomUniform` in [−0.5, 0.5] otherwise). */
  initializer?: ReturnType<typeof tf.initializers.zeros>
  /** Whether the optimizer updates it (default true). */
  trainable?: boolean
}

/** Options of a `TenetLayer`. */
export interface TenetLayerArgs extends LayerArgs {
  /** The Tenet function the layer runs. */
  fn: TenetFunction
  /** The parameters fed by the layer's input tensor(s), in order; each carries the batch dimension. */
  inputs: readonly ParamRef[]
  /** The parameter whose final value is the layer's output. */
  output: ParamRef
  /** The layer's weights: parameters fed by variables shared by the whole batch. */
  variables: readonly TenetWeight[]
  /** Values of the other parameters, as `TfOpOptions.args`. */
  args?: TfOpOptions['args']
  /** The output's shape without the batch dimension, from the input shape(s) (with the batch dimension). */
  outputShape: (inputShape: Shape | Shape[]) => number[]
}

/**
 * A TF.js layer whose computation is a Tenet function: `call(x)` runs it on every batch element
 * of x with the layer's weights, and its gradient is Tenet's adjoint (see `tfOp`).
 * ```ts
 * const layer = new TenetLayer({ fn: m.urnn, inputs: ['xs'], output: 'h', variables: [{ param: 'theta', shape: [6] }],
 *   args: { h: () => new Float64Array(4), m: 4, steps: ({ xs }) => xs.length / 4 }, outputShape: () => [4], inputShape: [20] })
 * const model = tf.sequential({ layers: [layer] })
 * ```
 * The layer is not serialisable to JSON (a Tenet function is code): save its weights
 * (`getWeights`) and rebuild the layer to restore a model.
 */
export class TenetLayer extends tf.layers.Layer {
  static readonly className = 'TenetLayer'
  /** The op the layer calls: its inputs, then its weights. */
  readonly op: TfOp<tf.Tensor>
  private readonly spec: TenetLayerArgs
  private vars: tf.LayerVariable[] = []

  constructor(args: TenetLayerArgs) {
    const { fn, inputs, output, variables, args: given, outputShape, ...base } = args
    super(base)
    if (!Array.isArray(variables))
      adapterError('adapter/argument', 'TenetLayer: `variables` must be an array of { param, shape }')
    if (typeof outputShape !== 'function')
      adapterError('adapter/argument', 'TenetLayer: `outputShape` must be a function of the input shape')
    this.spec = args
    this.op = tfOp(fn, {
      inputs: [...inputs, ...variables.map((w) => w.param)],
      outputs: [output] as const,
      ...(given ? { args: given } : {}),
      batch: [...inputs.map(() => true), ...variables.map(() => false)],
    })
  }

  /** Creates the weights (TF.js calls it before the first `call`). */
  override build(_inputShape: Shape | Shape[]): void {
    this.vars = this.spec.variables.map((w) => {
      const init =
        w.initializer ??
        (w.shape.length >= 2
          ? tf.initializers.glorotUniform({})
          : tf.initializers.randomUniform({ minval: -0.5, maxval: 0.5 }))
      return this.addWeight(w.param, w.shape, 'float32', init, undefined, w.trainable ?? true)
    })
    this.built = true
  }

  /** Runs the Tenet function on every batch element of the input(s) with the current weights. */
  override call(inputs: tf.Tensor | tf.Tensor[]): tf.Tensor {
    return tf.tidy(() => {
      const xs = Array.isArray(inputs) ? inputs : [inputs]
      return this.op(...xs, ...this.vars.map((v) => v.read()))
    })
  }

  /** The batch dimension of the input, then `outputShape(inputShape)`. */
  override computeOutputShape(inputShape: Shape | Shape[]): Shape {
    const first = (Array.isArray(inputShape[0]) ? inputShape[0] : inputShape) as Shape
    return [first[0] ?? null, ...this.spec.outputShape(inputShape)]
  }

  /** `'TenetLayer'`. */
  override getClassName(): string {
    return TenetLayer.className
  }
}
