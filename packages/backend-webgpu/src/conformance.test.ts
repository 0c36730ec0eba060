/**
 * The conformance suite of @tenet/testing on webgpu, for its f32/i32 subset. Random reversible
 * programs are bundled (`bundlePrograms`: one shader runs a batch of programs, each item one of
 * them, so the per-pipeline compile cost is paid once per bundle) and run on batches of
 * argument sets; the cpu backend runs each program alone as the reference.
 *
 * - i32 programs (`randomProgram`, stacks off; those that convert to f64 are left out, WGSL has
 *   none): forward results bit for bit, and the inverse gives back the inputs bit for bit.
 * - f32 programs (`randomRealProgram` with type f32: sums, products, sin, cos, tanh, atan, ROT,
 *   loops over an array, ifs, whiles, routines, calls and uncalls): forward results against the
 *   cpu's from the same arguments, and the inverse of the device's forward results against the
 *   cpu's inverse of the same values, within one ulp per operation: |webgpu − cpu| ≤ ops ·
 *   ulp(scale) · max(1, κ), with κ the computation's measured amplification (see the package
 *   README, "Conformance", for why).
 *
 * `WEBGPU_CONFORMANCE_I32` and `WEBGPU_CONFORMANCE_F32` set the number of programs of each kind.
 */
import { describe, expect, it } from 'vitest'
import { conformanceStats, f32Bundle, i32Bundle, ITEMS } from './device-checks.js'
import { testGpu } from './test-util.js'

const gpu = await testGpu()

/**
 * Programs of each kind. SwiftShader compiles shaders slowly (about 1 s per i32 program and 5 s
 * per f32 one on a loaded 2-core machine: the precise math routines are inlined at every call),
 * so the suite runs a few; the README reports longer runs (`device-check.cli.ts`).
 */
const PROGRAMS_I32 = Number(process.env.WEBGPU_CONFORMANCE_I32 ?? 20)
const PROGRAMS_F32 = Number(process.env.WEBGPU_CONFORMANCE_F32 ?? 5)
/** Programs per bundle (one forward and one inverse pipeline each). */
const PER_BUNDLE = 5

const batches = (count: number): number[][] =>
  Array.from({ length: Math.ceil(count / PER_BUNDLE) }, (_, b) =>
    Array.from({ length: Math.min(PER_BUNDLE, count - b * PER_BUNDLE) }, (_, i) => b * PER_BUNDLE + i),
  )

describe.skipIf(!gpu)('conformance on webgpu: bundles of random programs against the cpu backend', () => {
  const stats = conformanceStats()
  for (const seeds of batches(PROGRAMS_I32)) {
    it(`i32 programs ${seeds[0]}..${seeds.at(-1)}: bit for bit, forward and inverse`, async () => {
      expect((await i32Bundle(gpu!, seeds, stats)).slice(0, 2).join('\n\n')).toBe('')
    }, 300_000)
  }
  for (const seeds of batches(PROGRAMS_F32)) {
    it(`f32 programs ${seeds[0]}..${seeds.at(-1)}: within one ulp per operation, forward and inverse`, async () => {
      expect((await f32Bundle(gpu!, seeds, stats)).slice(0, 2).join('\n\n')).toBe('')
    }, 300_000)
  }
  it('ran the programs (i32 ones that convert to f64 are left out)', () => {
    console.log(
      `[backend-webgpu] conformance: ${stats.i32.run} i32 programs bit for bit (${stats.i32.skipped} left out: f64), ${stats.f32.run} f32 programs × ${ITEMS} items × forward and inverse: ${stats.f32.exact} of ${stats.f32.compared} bit for bit, largest difference ${stats.f32.worst.toPrecision(3)} ulp of the scale`,
    )
    expect(stats.i32.run + stats.i32.skipped).toBe(PROGRAMS_I32)
    expect(stats.i32.run).toBeGreaterThan(PROGRAMS_I32 / 2)
    expect(stats.f32.run).toBe(PROGRAMS_F32)
  })
})
