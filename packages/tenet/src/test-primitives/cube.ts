import { unary } from '../index.js'

/**
 * `cube(x)` = x³, a user primitive in one file: its value, its derivative as Tenet expression
 * text (so it has second derivatives: Hessians, forward mode through its gradient, and Taylor
 * mode, whose rule Taylor mode derives from it: y′ = 3x²·x′), and its
 * lowerings for the cpu backend (a JS expression) and the wasm backend (an emitter function).
 */
export const cube = unary({
  name: 'cube',
  description: 'x³',
  evaluate: (x) => x * x * x,
  partials: ['3.0 * x * x'],
  emit: {
    cpu: (x) => `((${x}) * (${x}) * (${x}))`,
    wasm: (w) => {
      w.arg(0)
      w.arg(0)
      w.op('mul')
      w.arg(0)
      w.op('mul')
    },
  },
})
