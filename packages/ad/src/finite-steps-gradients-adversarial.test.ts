/**
 * Adversarial review (round 15, c): gradients with checks on through loops of steps that
 * `finite-steps` rewrites (scalars that read the previous step's history element, two history
 * elements a step, f32), cpu and wasm, with the pass and without, and the interpreter's.
 */
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend, TENET_FUNCTION } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { describe, expect, it } from 'vitest'
import { gradient } from './index.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)

const src = `
fn f(loss: f64, x: f64[], k: f64, n: i32) {
  routine {
    A: f64[] <- zeros(2 * n + 2)
    A[0] += x[0]
    A[1] += x[1]
    for t in 0..n {
      routine {
        q <- A[2 * t] * k + sin(A[2 * t + 1])
        r <- A[2 * t + 1] * q
      }
      A[2 * t + 2] += A[2 * t] + q * 0.125
      A[2 * t + 3] += r * 0.25 - A[2 * t + 1]
      ~routine
    }
  }
  loss += A[2 * n] * A[2 * n + 1]
  ~routine
}`

function compile(backend: string, on: boolean, checks: boolean) {
  if (!on) disabledPasses.add('finite-steps')
  try {
    return compileModule(parse({ text: on ? src : `${src}\n`, name: 'test' }), {
      registry: registry(),
      backend,
      checks,
    })
  } finally {
    disabledPasses.delete('finite-steps')
  }
}

function outcome(run: () => unknown): unknown {
  try {
    const v = run() as unknown[]
    return JSON.stringify(
      v.map((x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x)),
      (_k, x) => (typeof x === 'number' ? (Object.is(x, -0) ? '-0' : String(x)) : x),
    )
  } catch {
    return raisedError(run)
  }
}

describe('gradients through rewritten loops of steps, checks on', () => {
  it('cpu and wasm, with the pass and without: the same bits and errors as the interpreter', () => {
    const cases: unknown[][] = [
      [0, Float64Array.of(0.5, 0.25), 0.75, 6],
      [0, Float64Array.of(0.5, 0.25), 0.75, 0],
      [0, Float64Array.of(Number.NaN, 0.25), 0.75, 3],
      [0, Float64Array.of(1e300, 1e300), 1e10, 4],
      [0, Float64Array.of(0.5), 0.75, 2],
    ]
    const js = (m: ReturnType<typeof compile>) =>
      (m.f![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }).compiled.sourceOf('f', false)
    // (the pass rewrites the uncompute: its updates subtract the element from itself)
    expect(js(compile('cpu', true, true))).toMatch(/(v\d+)\[(\w+)\] = \(\1\[\2\] - \1\[\2\]\)/)
    expect(js(compile('cpu', false, true))).not.toMatch(/(v\d+)\[(\w+)\] = \(\1\[\2\] - \1\[\2\]\)/)
    for (const checks of [true, false]) {
      const ref = compile('interpreter', false, checks)
      for (const backend of ['cpu', 'wasm'])
        for (const on of [true, false]) {
          const m = compile(backend, on, checks)
          for (const c of checks ? cases : cases.slice(0, 4)) {
            const a = () => c.map((x) => (ArrayBuffer.isView(x) ? (x as Float64Array).slice() : x))
            const want = outcome(() => gradient(ref.f!, a(), { loss: 0 }))
            expect(
              outcome(() => gradient(m.f!, a(), { loss: 0 })),
              `${backend} ${on} ${checks} ${c}`,
            ).toEqual(want)
            const fw = outcome(() => ref.f!(...a()))
            expect(
              outcome(() => m.f!(...a())),
              `${backend} ${on} ${checks} ${c} forward`,
            ).toEqual(fw)
          }
        }
    }
  })
})
