import { binary } from '../primitive.js'

/** `atan2`: the angle of the point (x, y): atan2(y, x) */
export const atan2 = binary({
  name: 'atan2',
  description: 'the angle of the point (x, y): atan2(y, x)',
  params: ['y', 'x'],
  evaluate: (y, x) => Math.atan2(y, x),
  partials: ['x / (x * x + y * y)', '-(y / (x * x + y * y))'],
  emit: { cpu: (y, x) => `Math.atan2(${y}, ${x})`, wasm: { math: 'atan2' }, wgsl: (y, x) => `tenet_atan2(${y}, ${x})` },
})
