import { arrayPrimitive } from '../array-primitive.js'

/** log Σ exp(xᵢ), shifted by the maximum so that large entries do not overflow (−∞ for an empty array). */
function logSumExp(x: Float64Array): number {
  let m = -Infinity
  for (let i = 0; i < x.length; i++) if (x[i]! > m) m = x[i]!
  if (m === -Infinity || m === Infinity) return m
  let s = 0
  for (let i = 0; i < x.length; i++) s += Math.exp(x[i]! - m)
  return m + Math.log(s)
}

/**
 * `logsumexp(x)`: log Σᵢ exp(xᵢ) of an f64 array, computed stably; its partials are the softmax
 * exp(xᵢ − logsumexp(x)). Not in the default registry (user programs often name a function
 * `logsumexp`): register it with `registry.registerPrimitive(logsumexp)`.
 */
export const logsumexp = arrayPrimitive({
  name: 'logsumexp',
  args: ['array'],
  description: 'log of the sum of exponentials of an f64 array (stable)',
  evaluate: (x) => logSumExp(x),
  partials: (x) => {
    const l = logSumExp(x)
    const p = new Float64Array(x.length)
    for (let i = 0; i < x.length; i++) p[i] = Math.exp(x[i]! - l)
    return [p]
  },
})
