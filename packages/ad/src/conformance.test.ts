/**
 * The derivative parts of the `@tenet/testing` conformance suite (the primitive table's gradient,
 * tangent and Hessian columns, and the gradients of random programs) on the interpreter, the cpu backend
 * and the wasm backend. They run here because the suite needs this package's `gradient` and
 * `hessian`, and the backends' own packages cannot depend on `@tenet/ad` (its tests depend on
 * them: a cycle). The other sections run in each backend's package.
 */
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { interpreterBackend } from '@tenet/reversible'
import { describeConformance } from '@tenet/testing/vitest'
import { gradient, hessian, jvp } from './index.js'

const ad = {
  gradient: (f: Parameters<typeof gradient>[0], args: unknown[], o: { loss: number }) => gradient(f, args, o),
  hessian: (f: Parameters<typeof hessian>[0], args: unknown[], o: { loss: number }) => hessian(f, args, o),
  jvp: (f: Parameters<typeof jvp>[0], args: unknown[], o: { v: unknown[] }) => jvp(f, args, { v: o.v as never }),
}
for (const backend of [interpreterBackend, cpuBackend, wasmBackend])
  describeConformance(backend, { ad, sections: ['primitives', 'gradients'] })
