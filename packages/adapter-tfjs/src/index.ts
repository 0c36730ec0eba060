/**
 * `@tenet/adapter-tfjs`: Tenet functions inside TensorFlow.js. `tfOp` makes a Tenet function a
 * TF.js op whose gradient is Tenet's generated adjoint (through `tf.customGrad`); `TenetLayer`
 * makes it a layer with trainable weights. TF.js is a peer dependency.
 */
export { tfOp, type TfOp, type TfOpOptions, type ParamRef, type ArgSource } from './tf-op.js'
export { TenetLayer, type TenetLayerArgs, type TenetWeight, type LayerArgs, type Shape } from './layer.js'
export type { ElementInputs } from './arguments.js'
export { unitaryRnnLayer, unitaryRnnSource, unitaryRnnPlain, givensAngles } from './examples/unitary-rnn.js'
