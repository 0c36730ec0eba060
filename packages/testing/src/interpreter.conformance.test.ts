/**
 * The conformance suite on the reference interpreter of `@tenet/reversible` (which cannot run it
 * in its own tests: `@tenet/testing` depends on it). Against itself the round trips and error
 * parity only check that it runs; the primitive table checks it against the JS reference
 * semantics. The derivative parts run in `@tenet/ad`'s conformance test, which has the AD engine.
 */
import { interpreterBackend } from '@tenet/reversible'
import { describeConformance } from './vitest.js'

describeConformance(interpreterBackend)
