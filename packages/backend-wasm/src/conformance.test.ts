/**
 * The `@tenet/testing` conformance suite on the wasm backend: round trips, the primitive table's
 * value and inverse columns, and error parity (stacks are not lowered: those parts say so). Its
 * derivative parts run in `@tenet/ad`'s conformance test (this package cannot depend on
 * `@tenet/ad`, whose tests depend on it).
 */
import { describeConformance } from '@tenet/testing/vitest'
import { wasmBackend } from './index.js'

describeConformance(wasmBackend)
