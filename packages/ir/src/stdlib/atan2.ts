import type { PurePrimitiveSpec } from '../plugin.js'

/** `atan2`: the angle of the point (x, y): atan2(y, x) */
export const atan2: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'atan2',
  kind: 'pure',
  arity: 2,
  description: 'the angle of the point (x, y): atan2(y, x)',
  evaluate: (y, x) => Math.atan2(y, x),
  partials: (y, x) => { const r = x * x + y * y; return [x / r, -y / r] },
  emit: { cpu: (y, x) => `Math.atan2(${y}, ${x})`, wgsl: (y, x) => `tenet_atan2(${y}, ${x})` },
}
