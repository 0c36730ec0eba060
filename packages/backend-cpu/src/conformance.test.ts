/**
 * The `@tenet/testing` conformance suite on the cpu backend: round trips, the primitive table's
 * value and inverse columns, and error parity. Its derivative parts run in `@tenet/ad`'s
 * conformance test (this package cannot depend on `@tenet/ad`, whose tests depend on it).
 */
import { describeConformance } from '@tenet/testing/vitest'
import { cpuBackend } from './index.js'

describeConformance(cpuBackend)
