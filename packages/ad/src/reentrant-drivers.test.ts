/**
 * Reentrancy of the derivative drivers other than `grad` (see reentrant-gradient.test.ts): a host
 * function of the program calls the same driver object (a rule, a block Jacobian) or the same
 * driver function on the same Tenet function (`jacobian(f, …)`, `hessian(f, …)`, …) while the
 * outer call runs. Either both calls give the values they give one after the other, or the inner
 * call throws `ad/reentrant` (a clear error) and the outer call still gives its value; and the
 * driver gives the same values afterwards in any case.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, TenetError } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetFunction } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import {
  blockJacobian,
  grad,
  gradient,
  hessian,
  hvp,
  jacobian,
  jvp,
  jvpRule,
  secondOrderAdjoint,
  vjp,
  type BlockJacobian,
} from './index.js'

// y, x: 2 elements; c a float scalar; d an i32 the host function takes (d = 0: no host call effect)
const text = `
fn f(loss: f64, y: f64[], x: f64[], c: f64, d: i32) {
  for i in 0..2 {
    y[i] += x[i] * x[(i + 1) % 2] * c * \${0}(d)
  }
  loss += y[0] * y[1] * \${0}(d) + c * c * x[0]
}
`
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)

const argsA = (d: number) => [0.25, Float64Array.of(0.5, -0.3), Float64Array.of(0.3, -0.7), 1.2, d]
const argsB = (d: number) => [0.5, Float64Array.of(-0.1, 0.4), Float64Array.of(0.9, 0.2), -0.8, d]

/** The value of a call, or the error it threw (its code and message). */
type Outcome = { value: unknown } | { error: { code: string | undefined; message: string } }
const outcome = (call: () => unknown): Outcome => {
  try {
    // (typed arrays as plain arrays: a reused buffer changed later would show)
    return {
      value: JSON.parse(JSON.stringify(call(), (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))),
    }
  } catch (e) {
    return { error: { code: e instanceof TenetError ? e.code : undefined, message: (e as Error).message } }
  }
}

/**
 * A driver under test: made once per module (`make`), then `outer(d)` and `inner(d)` call the same
 * object (or function) on different arguments (`argsA`, `argsB`).
 */
interface Subject {
  outer: (d: number) => unknown
  inner: (d: number) => unknown
}

/**
 * Runs `make`'s subject on a module whose host function calls `inner(1)` (once per host call, not
 * from inside an inner call) while `outer(1)` runs. `propagate`: the host function lets an inner
 * error through (the outer call then fails with it) instead of catching it.
 */
function probe(backend: string, checks: boolean, make: (f: TenetFunction) => Subject, propagate = false) {
  let reenter: (() => void) | undefined
  let depth = 0
  const inner: Outcome[] = []
  const h = (d: number) => {
    if (d > 0 && reenter && depth === 0) {
      depth++
      try {
        reenter()
      } finally {
        depth--
      }
    }
    return d > 0 ? 1.5 : 1
  }
  const m = compileModule(parse({ text, name: 'r' }, [h]), { registry: registry(), backend, checks })
  const s = make(m.f!)
  const plainOuter = outcome(() => s.outer(1))
  const plainInner = outcome(() => s.inner(1))
  reenter = () => {
    const o = outcome(() => s.inner(1))
    inner.push(o)
    if (propagate && 'error' in o) throw new TenetError(o.error.code as never, o.error.message)
  }
  const outer = outcome(() => s.outer(1))
  reenter = undefined
  const after = outcome(() => s.outer(1))
  const afterInner = outcome(() => s.inner(1))
  return { plainOuter, plainInner, outer, inner, after, afterInner }
}

/** Either every call gives its value, or an inner call is refused with ad/reentrant; the driver works after. */
function expectSafe(r: ReturnType<typeof probe>, expected: 'right' | 'refused' | 'either', propagate = false) {
  expect('value' in r.plainOuter, JSON.stringify(r.plainOuter)).toBe(true)
  expect('value' in r.plainInner, JSON.stringify(r.plainInner)).toBe(true)
  expect(r.inner.length).toBeGreaterThan(0)
  const refused = r.inner.some((o) => 'error' in o)
  for (const o of r.inner) {
    if ('error' in o) {
      expect(o.error.code, o.error.message).toBe('ad/reentrant')
      expect(o.error.message).toMatch(/called again from inside its own call/)
    } else expect(o).toEqual(r.plainInner)
  }
  if (expected === 'right') expect(refused).toBe(false)
  if (expected === 'refused') expect(refused).toBe(true)
  if (refused && propagate) {
    expect('error' in r.outer && r.outer.error.code).toBe('ad/reentrant')
  } else expect(r.outer).toEqual(r.plainOuter)
  expect(r.after).toEqual(r.plainOuter)
  expect(r.afterInner).toEqual(r.plainInner)
}

const cases: Array<[string, (f: TenetFunction) => Subject, 'right' | 'refused' | 'either']> = [
  [
    'a vjp rule (forward run and pullback)',
    (f) => {
      const rule = vjp(f, { wrt: [1, 2, 3], outputs: [0, 1] })
      const use = (args: unknown[]) => {
        const r = rule(...args)
        return [r.outputs, r.pullback([1, Float64Array.of(0.5, -2)])]
      }
      return { outer: (d) => use(argsA(d)), inner: (d) => use(argsB(d)) }
    },
    'right',
  ],
  [
    "a vjp result's pullback called from inside itself",
    (f) => {
      const rule = vjp(f, { wrt: [1, 2, 3], outputs: [0, 1] })
      // (made with d = 1: the pullback's adjoint calls the host function)
      const a = rule(...argsA(1)),
        b = rule(...argsB(1))
      return {
        outer: () => a.pullback([1, Float64Array.of(0.5, -2)]),
        inner: () => b.pullback([2, Float64Array.of(-1, 0.25)]),
      }
    },
    'right',
  ],
  [
    'a borrowing vjp rule',
    (f) => {
      const rule = vjp(f, { wrt: [1, 2, 3], outputs: [0, 1], borrow: true })
      const use = (args: unknown[]) => {
        const r = rule(...args)
        return [r.outputs, r.pullback([1, Float64Array.of(0.5, -2)])]
      }
      return { outer: (d) => use(argsA(d)), inner: (d) => use(argsB(d)) }
    },
    'right',
  ],
  [
    'a jvp rule',
    (f) => {
      const rule = jvpRule(f, { wrt: [2, 3], outputs: [0, 1] })
      return {
        outer: (d) => rule(argsA(d), [Float64Array.of(1, 0.5), 0.25]),
        inner: (d) => rule(argsB(d), [Float64Array.of(-1, 2), 1]),
      }
    },
    'right',
  ],
  [
    'jvp(f, args, { v })',
    (f) => ({
      outer: (d) => jvp(f, argsA(d), { v: [0, [1, 0], [0.5, 0.5], 1, null] }),
      inner: (d) => jvp(f, argsB(d), { v: [1, [0, 1], [-0.5, 2], 0, null] }),
    }),
    'right',
  ],
  ...(['forward', 'reverse'] as const).map((mode): [string, (f: TenetFunction) => Subject, 'right'] => [
    `jacobian (${mode})`,
    (f) => ({
      outer: (d) => jacobian(f, argsA(d), { mode, width: 2 }),
      inner: (d) => jacobian(f, argsB(d), { mode, width: 2 }),
    }),
    'right',
  ]),
  [
    'hessian (forward over reverse)',
    (f) => ({
      outer: (d) => hessian(f, argsA(d), { loss: 0, width: 2 }),
      inner: (d) => hessian(f, argsB(d), { loss: 0, width: 2 }),
    }),
    'right',
  ],
  [
    'hessian into `out`',
    (f) => {
      const outA = new Float64Array(25),
        outB = new Float64Array(25)
      return {
        outer: (d) => hessian(f, argsA(d), { loss: 0, out: outA }),
        inner: (d) => hessian(f, argsB(d), { loss: 0, out: outB }),
      }
    },
    'right',
  ],
  [
    'hvp',
    (f) => ({
      outer: (d) => hvp(f, argsA(d), { loss: 0, v: [0, [1, 0], [0.5, 0.5], 1, null] }),
      inner: (d) => hvp(f, argsB(d), { loss: 0, v: [0, [0, 1], [-0.5, 2], 0, null] }),
    }),
    'right',
  ],
  [
    'hessian (reverse over forward)',
    (f) => ({
      outer: (d) => hessian(f, argsA(d), { loss: 0, method: 'reverse-over-forward' }),
      inner: (d) => hessian(f, argsB(d), { loss: 0, method: 'reverse-over-forward' }),
    }),
    'right',
  ],
  [
    'secondOrderAdjoint',
    (f) => ({
      outer: (d) => secondOrderAdjoint(f, argsA(d), { loss: 0, v: [0, [1, 0], [0.5, 0.5], 1, null] }),
      inner: (d) => secondOrderAdjoint(f, argsB(d), { loss: 0, v: [0, [0, 1], [-0.5, 2], 0, null] }),
    }),
    'right',
  ],
  [
    'gradient(f, args)',
    (f) => ({
      outer: (d) => gradient(f, argsA(d), { loss: 0 }),
      inner: (d) => gradient(f, argsB(d), { loss: 0 }),
    }),
    'right',
  ],
  // (on wasm the inner calls run while a call of the memory is under way, which refuses resident
  // allocations: the drivers they make pass host arrays)
  [
    'hessian, hvp and gradient from inside a plain call of f',
    (f) => ({
      outer: (d) => f(...argsA(d)),
      inner: (d) => [
        hessian(f, argsB(d), { loss: 0 }),
        hvp(f, argsB(d), { loss: 0, v: [0, [0, 1], [-0.5, 2], 0, null] }),
        gradient(f, argsB(d), { loss: 0 }),
      ],
    }),
    'right',
  ],
  ...(['forward', 'reverse'] as const).map((mode): [string, (f: TenetFunction) => Subject, 'refused'] => [
    `a block Jacobian (${mode})`,
    (f) => {
      const bj: BlockJacobian = blockJacobian(f, { sizes: [1, 2, 2, 1, null], mode, width: 2, chunk: 2 })
      // three blocks of each argument, laid out one after another
      const blocks = (args: unknown[], d: number) =>
        args.map((a, i) =>
          i === 4
            ? d
            : typeof a === 'number'
              ? Float64Array.of(a, a + 0.5, a - 0.5)
              : Float64Array.of(
                  ...(a as Float64Array),
                  ...(a as Float64Array).map((v) => v * 2),
                  ...(a as Float64Array).map((v) => -v),
                ),
        )
      return {
        outer: (d) => bj.run(3, blocks(argsA(d), d)),
        inner: (d) => bj.run(3, blocks(argsB(d), d)),
      }
    },
    'refused',
  ]),
]

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['wasm', true],
  ['wasm', false],
  ['interpreter', true],
] as const)('drivers re-entered from a host function on %s (checks %s)', (backend, checks) => {
  for (const [what, make, expected] of cases) {
    it(`${what}: ${expected === 'right' ? 'both calls right' : 'the inner call refused (ad/reentrant), the outer right'}, and right after`, () => {
      expectSafe(probe(backend, checks, make), expected)
    })
    if (expected !== 'right')
      it(`${what}: a refusal that the host function lets through fails the outer call, and the driver works after`, () => {
        expectSafe(probe(backend, checks, make, true), expected, true)
      })
  }
})

// (a driver's arrays in the wasm memory are reallocated for new lengths, which the memory refuses
// while a call of the module is under way: the allocation came first, the old arrays were given
// back before it, and the gradient function kept a released array, so that every later call threw)
describe.each(['cpu', 'wasm', 'interpreter'])(
  'a grad object called with new lengths from a host function on %s',
  (backend) => {
    it('gives the gradient or a clear error, and the right gradients after', () => {
      let inner: (() => unknown) | undefined
      const got: Outcome[] = []
      const h = (d: number) => {
        const f = inner
        inner = undefined
        if (d > 0 && f) got.push(outcome(f))
        return 1
      }
      const src = 'fn f(loss: f64, x: f64[], d: i32) { for i in 0..len(x) { loss += x[i] * x[i] * ${0}(d) } }'
      const m = compileModule(parse({ text: src, name: 'r' }, [h]), { registry: registry(), backend, checks: false })
      const g = grad(m.f!, { loss: 0 })
      const two = () => g(0, Float64Array.of(1, 2), 0)
      const three = () => g(0, Float64Array.of(1, 2, 3), 0)
      const want2 = outcome(two),
        want3 = outcome(three)
      expect(want3).toEqual({ value: [1, [2, 4, 6], null] })
      outcome(two)
      inner = three
      m.f!(0, Float64Array.of(1), 1)
      expect(got).toHaveLength(1)
      if ('error' in got[0]!) {
        expect(backend).toBe('wasm')
        expect(got[0].error.message).toMatch(/cannot be allocated while a call of the module is under way/)
      } else expect(got[0]).toEqual(want3)
      expect(outcome(two)).toEqual(want2)
      expect(outcome(three)).toEqual(want3)
    })
  },
)
