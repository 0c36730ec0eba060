import { arrayPrimitive } from '../array-primitive.js'
import { TenetError } from '../errors.js'

/**
 * `dot(x, y)`: Σᵢ xᵢ·yᵢ of two f64 arrays of one length, with ∂/∂x = y and ∂/∂y = x. Not in the
 * default registry (user programs often name a function `dot`): register it with
 * `registry.registerPrimitive(dot)`.
 */
export const dot = arrayPrimitive({
  name: 'dot',
  args: ['array', 'array'],
  description: 'the dot product of two f64 arrays of one length',
  evaluate: (x, y) => {
    if (x.length !== y.length)
      throw new TenetError('runtime/length', `\`dot\` needs two arrays of one length, got ${x.length} and ${y.length}`)
    let s = 0
    for (let i = 0; i < x.length; i++) s += x[i]! * y[i]!
    return s
  },
  partials: (x, y) => [y.slice(), x.slice()],
})
