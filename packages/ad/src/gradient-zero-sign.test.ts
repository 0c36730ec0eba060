/**
 * The sign of a zero gradient (review 18b): a scalar ancilla's gradient starts at +0.0
 * (\`gradientZero\` of transform.ts). Started at -0.0 (tried this round so that a first update could
 * be the value alone), a gradient that no update touches reached the caller as -0 through the
 * adjoint of a \`SWAP\` (the idiom \`t <- 0.0; t += e; SWAP(t, z); t -> 0.0\` that moves a value into
 * an output) on every backend, and with checks off \`zero-updates\` dropped an update \`g += 0·x\`
 * that turned the -0 into +0, so cpu and wasm differed in sign from the interpreter. The
 * stage-history programs (stages exchanged, allocated at -0.0, set in branches; 0, 1 and 3 steps)
 * are bit for bit the interpreter's and agree with central differences (cpu, checks off).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetFunction } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { gradient, grad, jacobian, vjp } from './index.js'
import { centralDifferences, expectClose } from './test-util.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)
const build = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'review18-b' }), { registry: registry(), backend, checks })

/** Numbers and arrays flattened, each a string that tells −0 from +0. */
const bits = (vs: ReadonlyArray<unknown>): string[] =>
  vs.flatMap((v) =>
    typeof v === 'number'
      ? [Object.is(v, -0) ? '-0' : String(v)]
      : ArrayBuffer.isView(v)
        ? Array.from(v as Float64Array, (x) => (Object.is(x, -0) ? '-0' : String(x)))
        : [],
  )

const BACKENDS = ['cpu', 'wasm', 'interpreter'] as const

// z is an output written by a move: its initial value must be 0, its gradient is 0 (+0 before)
const moved = (T: 'f64' | 'f32') => `fn f(y: ${T}, z: ${T}, x: ${T}) {
  t: ${T} <- 0.0
  t += x * x
  SWAP(t, z)
  t -> 0.0
  y += z * x
}`

describe('the sign of a zero gradient reaches the caller through a SWAP', () => {
  for (const T of ['f64', 'f32'] as const)
    for (const backend of BACKENDS)
      for (const checks of [false, true])
        it(`gradient with respect to an output moved into by SWAP is +0 as before (${T}, ${backend}, checks ${checks ? 'on' : 'off'})`, () => {
          const f = build(moved(T), backend, checks).f!
          const g = gradient(f, [0, 0, 1.5], { loss: 0 })
          expect(bits(g)).toEqual(['1', '0', '6.75'])
          // (the same through a reusable gradient function in reverse mode, and a pullback)
          expect(bits(grad(f, { loss: 0, mode: 'reverse' })(0, 0, 2))).toEqual(['1', '0', '12'])
          const r = vjp(f, { wrt: [0, 1, 2], outputs: [0, 1] })(0, 0, 1.5)
          expect(bits(r.pullback([0, 1]))).toEqual(['0', '0', '3'])
        })

  it('a reverse-mode Jacobian entry that is 0 is +0 as before (cpu)', () => {
    const f = build(
      `fn f(y: f64, z: f64, x: f64[]) {
  t <- 0.0
  t += x[0] * x[1]
  SWAP(t, z)
  t -> 0.0
  y += z * x[2]
}`,
      'cpu',
      false,
    ).f!
    expect(bits([jacobian(f, [0, 0, Float64Array.of(1, 2, 3, 4)], { inputs: [1, 2], outputs: [0] })])).toEqual([
      '0',
      '6',
      '3',
      '2',
      '0',
    ])
  })

  it('an ancilla whose only gradient update is in the branch not taken: +0 as before (cpu)', () => {
    const f = build(
      `fn f(y: f64, z: f64, x: f64) {
  t <- 0.0
  SWAP(t, z)
  if (x > 0.0, ~) { y += t * x } else { y += x }
  t -> 0.0
}`,
      'cpu',
      true,
    ).f!
    expect(bits(gradient(f, [0, 0, -1], { loss: 0 }))).toEqual(['1', '0', '1'])
    expect(bits(gradient(f, [0, 0, 1], { loss: 0 }))).toEqual(['1', '1', '0'])
  })
})

describe('with checks off, the backends give the interpreter’s gradients bit for bit', () => {
  // the adjoint of `y += t * 0.0` is `g_t += g_y * 0.0`: −0 + 0 is +0 in the interpreter, and
  // `zero-updates` (checks off) drops it in the cpu and wasm programs, leaving −0
  const zeroUpdate = (T: 'f64' | 'f32') => `fn f(y: ${T}, z: ${T}, x: ${T}) {
  t: ${T} <- 0.0
  SWAP(t, z)
  y += t * 0.0
  y += x * x
  t -> 0.0
}`
  for (const T of ['f64', 'f32'] as const)
    for (const backend of ['cpu', 'wasm'] as const)
      it(`a gradient ancilla updated only by a zero, then moved into the caller's (${T}, ${backend})`, () => {
        const want = bits(gradient(build(zeroUpdate(T), 'interpreter', false).f!, [0, 0, 1.5], { loss: 0 }))
        expect(want).toEqual(['1', '0', '3'])
        expect(bits(gradient(build(zeroUpdate(T), backend, false).f!, [0, 0, 1.5], { loss: 0 }))).toEqual(want)
      })
})

describe('stage histories (checks off) with exchanged, −0.0 and branch-set stages: what held', () => {
  const programs: Record<string, string> = {
    exchanged: `fn f(loss: f64, x: f64[], n: i32) {
  routine {
    s: f64[] <- zeros(n + 1)
    s[0] += x[0]
    for t in 0..n {
      routine {
        a, b, c <- 0.0, 0.0, 0.0
        a += s[t] * x[1]
        SWAP(a, b)
        a -= s[t] * x[2]
      }
      s[t + 1] += s[t] + a * b + c
      ~routine
    }
  }
  loss += s[n] * x[3]
  ~routine
}`,
    negative: `fn f(loss: f64, x: f64[], n: i32) {
  routine {
    s: f64[] <- zeros(n + 1)
    s[0] += x[0]
    for t in 0..n {
      routine {
        a, b <- -0.0, 0.0
        a -= s[t] * x[1]
        b += sin(a)
      }
      s[t + 1] += s[t] * x[2] + b
      ~routine
    }
  }
  loss += s[n] * x[3]
  ~routine
}`,
    branch: `fn f(loss: f64, x: f64[], n: i32) {
  routine {
    s: f64[] <- zeros(n + 1)
    s[0] += x[0]
    for t in 0..n {
      routine {
        a, b <- 0.0, 0.0
        if (x[1] > 0.0, ~) { a += s[t] * x[1] } else { b -= s[t] * x[2] }
      }
      s[t + 1] += s[t] + a + b
      ~routine
    }
  }
  loss += s[n] * x[3]
  ~routine
}`,
  }
  const inputs = [
    [0.5, 0.25, -0.75, 1.5],
    [-0, -0, -0, -0],
    [0, 0, 0, 0],
    [1, -0, 0, 1],
    [-1, -0.5, 0.5, -0],
  ]
  for (const [name, text] of Object.entries(programs))
    it(`${name}: cpu bit for bit with the interpreter, and central differences (0, 1, 3 steps)`, () => {
      const ref = grad(build(text, 'interpreter', false).f!, { loss: 0 })
      const fs: TenetFunction[] = [build(text, 'cpu', false).f!]
      const gs = fs.map((f) => grad(f, { loss: 0 }))
      for (const n of [0, 1, 3])
        for (const x of inputs) {
          const want = bits(ref(0, Float64Array.from(x), n))
          for (const g of gs) expect(bits(g(0, Float64Array.from(x), n))).toEqual(want)
        }
      const x = Float64Array.from(inputs[0]!)
      const got = gs[0]!(0, x, 3)[1] as Float64Array
      expectClose(got, centralDifferences(fs[0]!, [0, x, 3], [1]), 1e-6, name)
    })
})
