/**
 * The gradient driver that calls wasm modules without their JS wrappers (driver-direct.ts): used
 * for modules that do not call out (also those that take heap and may grow the memory, laid out
 * again and run again after a call that grew it), in each gradient program (one-pass,
 * two sweeps, forward tangent), with run-time checks on and off. Gradients against central
 * differences of the same objective in plain JS and against the cpu backend; the errors (codes)
 * those of the driver with wrappers; views laid out again after a length change, a grown memory
 * and \`release\`, and from a host function while another module's call grew the memory.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, TenetError } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from '@tenet/backend-wasm'
import { compileModule, TENET_FUNCTION, type TenetFunctionInfo } from '@tenet/reversible'
import { compileFused, grad, type GradientFunction } from './index.js'
import { DRIVER } from './driver.js'

const text = `
fn mul(s: f64, x: f64[]) { s += x[0] * x[1] }
fn two(y: f64, x: f64[], k: i32) {
  x[0] += 0.5 * x[1]
  for i in 0..len(x) { y += sin(x[i]) * f64(k) }
}
fn tan1(y: f64, t: f64) { y += t * exp(t) }
fn idx(s: f64, x: f64[], j: i32) { s += x[j] }
`
// (another module of the same backend, which grows the memory the first one lives in)
const grower = `fn big(y: f64, m: i32) {
  t: f64[] <- zeros(m)
  t[0] += y
  t[0] -= y
  t -> zeros(m)
}`

/** The plain-JS objectives of \`text\` (the loss after a call), for central differences. */
const objectives: Record<string, (a: unknown[]) => number> = {
  mul: ([s, x]) => (s as number) + (x as Float64Array)[0]! * (x as Float64Array)[1]!,
  two: ([y, x, k]) => {
    const v = Float64Array.from(x as Float64Array)
    v[0]! += 0.5 * v[1]!
    let s = y as number
    for (const e of v) s += Math.sin(e) * (k as number)
    return s
  },
  tan1: ([y, t]) => (y as number) + (t as number) * Math.exp(t as number),
}

/** Central differences of \`f\` along every float input (arrays element by element; i32 arguments skipped). */
function centralDifferences(
  f: (a: unknown[]) => number,
  args: unknown[],
  skip: number[],
): Array<number | number[] | null> {
  const h = 1e-6
  return args.map((a, i) => {
    if (skip.includes(i)) return null
    if (typeof a === 'number') {
      const up = args.slice(),
        down = args.slice()
      up[i] = a + h
      down[i] = a - h
      return (f(up) - f(down)) / (2 * h)
    }
    return Array.from(a as Float64Array, (_, j) => {
      const up = Float64Array.from(a as Float64Array),
        down = Float64Array.from(a as Float64Array)
      up[j]! += h
      down[j]! -= h
      const u = args.slice(),
        d = args.slice()
      u[i] = up
      d[i] = down
      return (f(u) - f(d)) / (2 * h)
    })
  })
}

function modules(checks: boolean) {
  const registry = createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend())
  const make = (backend: string, source = text) =>
    compileModule(parse({ text: source, name: `direct-${backend}` }), { registry, backend, checks })
  return { wasm: make('wasm'), cpu: make('cpu'), grow: make('wasm', grower) }
}

const sourceOf = (g: GradientFunction): string => (g as unknown as Record<symbol, { source: string }>)[DRIVER]!.source

describe('the direct gradient driver (wasm without wrappers)', () => {
  for (const checks of [false, true]) {
    it(`gives the gradients of central differences and of the cpu backend, checks ${checks ? 'on' : 'off'}`, () => {
      const { wasm, cpu } = modules(checks)
      const cases: Array<[string, unknown[], number[]]> = [
        ['mul', [0.25, Float64Array.of(3, -4)], []],
        ['two', [0, Float64Array.of(0.3, -1.2, 2.5), 3], [2]],
        ['tan1', [0.5, 0.7], []],
      ]
      for (const [name, args, skip] of cases) {
        const gw = grad(wasm[name]!, { loss: 0 }),
          gc = grad(cpu[name]!, { loss: 0 })
        // the direct driver is the one generated (its source calls the entries)
        expect(sourceOf(gw)).toContain('EA.call(')
        const w = gw(...args),
          c = gc(...args)
        const fd = centralDifferences(objectives[name]!, args, skip)
        fd.forEach((want, i) => {
          if (want === null) return
          const got = w[i]
          if (typeof want === 'number') {
            expect(got as number).toBeCloseTo(want, 6)
            expect(got).toBe(c[i])
          } else {
            Array.from(got as Float64Array).forEach((v, j) => expect(v).toBeCloseTo(want[j]!, 6))
            expect(Array.from(got as Float64Array)).toEqual(Array.from(c[i] as Float64Array))
          }
        })
        expect(gw.lastLoss).toBe(gc.lastLoss)
        expect(gw.lastLoss).toBeCloseTo(objectives[name]!(args), 12)
      }
    })
  }

  it('lays its views out again after a length change, a grown memory and release', () => {
    const { wasm, cpu, grow } = modules(false)
    const gw = grad(wasm.two!, { loss: 0 }),
      gc = grad(cpu.two!, { loss: 0 })
    const same = (n: number, s: number) => {
      const x = Float64Array.from({ length: n }, (_, i) => s + 0.1 * i)
      gw.run(0, x, 2)
      gc.run(0, x, 2)
      expect(Array.from(gw.buffers[1]!)).toEqual(Array.from(gc.buffers[1]!))
      expect(gw.lastLoss).toBe(gc.lastLoss)
    }
    same(3, 1)
    same(3, 2)
    // 2²¹ doubles in the other module's ancilla grow the memory the gradient's views live in
    grow.big!(1, 2 ** 21)
    same(3, 3)
    same(5, 4)
    same(2, 5)
    gw.release()
    same(2, 6)
    same(40, 7)
  })

  it('runs programs that take heap (array ancillas) directly, also on a call that grows the memory', () => {
    // t is an ancilla of n ≥ len(x) doubles: each call of the gradient programs takes 8n bytes of
    // heap (read in reverse order, so that no pass fuses the loops and makes t a scalar)
    const ancilla = `fn anc(y: f64, x: f64[], n: i32) {
  t: f64[] <- zeros(n)
  for i in 0..len(x) { t[i] += x[i] * x[i] }
  for i in 0..len(x) { y += sin(t[len(x) - 1 - i]) * x[i] }
  for i in 0..len(x) { t[i] -= x[i] * x[i] }
  t -> zeros(n)
}`
    const loss = ([y, x]: unknown[]) => {
      const a = x as Float64Array
      return (y as number) + Array.from(a, (v, i) => Math.sin(a[a.length - 1 - i]! ** 2) * v).reduce((p, q) => p + q, 0)
    }
    for (const checks of [false, true]) {
      const registry = createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend())
      const make = (backend: string) =>
        compileModule(parse({ text: ancilla, name: `ancilla-${backend}` }), { registry, backend, checks }).anc!
      const w = make('wasm'),
        c = make('cpu')
      for (const fuse of [true, false]) {
        const gw = grad(w, { loss: 0, fuse }),
          gc = grad(c, { loss: 0, fuse })
        expect(sourceOf(gw)).toContain('.heapStart()')
        // 2²¹ doubles: the call grows the memory under the driver's views (then runs again)
        for (const n of [4, 4, 2 ** 21, 3, 2 ** 21 + 8, 4]) {
          const x = Float64Array.from({ length: 3 }, (_, i) => 0.4 + 0.3 * i + n * 1e-9)
          const args = [0.25, x, n]
          const got = gw(...args),
            want = gc(...args)
          expect(Array.from(got[1] as Float64Array)).toEqual(Array.from(want[1] as Float64Array))
          expect(gw.lastLoss).toBe(gc.lastLoss)
          expect(gw.lastLoss).toBeCloseTo(loss(args), 12)
          const fd = centralDifferences(loss, args, [2])
          ;(fd[1] as number[]).forEach((v, j) => expect((got[1] as Float64Array)[j]).toBeCloseTo(v, 6))
          expect(got[0]).toBe(1)
        }
      }
    }
  })

  it('runs from a host function while another module’s call grew the memory, leaving that call intact', () => {
    const registry = createRegistry().registerBackend(createWasmBackend())
    const inner = compileModule(parse({ text, name: 'nested-inner' }), { registry, backend: 'wasm', checks: true })
    const g = grad(inner.mul!, { loss: 0 })
    expect(sourceOf(g)).toContain('EA.call(')
    g.run(0, Float64Array.of(3, 4))
    const seen: unknown[] = []
    // an ancilla of n doubles (the memory grows under the gradient's views), then the host call
    const outerText = `fn o(x: f64[], n: i32, y: f64) {
  a: f64[] <- zeros(n)
  a[n - 1] += y
  @safe \${0}()
  x[0] += a[n - 1]
  a[n - 1] -= y
  a -> zeros(n)
}`
    const host = () => {
      g.run(0, Float64Array.of(5, 6))
      seen.push(Array.from(g.buffers[1]!), g.lastLoss)
    }
    const outer = compileModule(parse({ text: outerText, name: 'nested-outer' }, [host]), {
      registry,
      backend: 'wasm',
      checks: true,
    })
    for (const n of [1 << 18, 4, 1 << 19]) {
      seen.length = 0
      const r = outer.o!(Float64Array.of(0.5), n, 2.25) as unknown[]
      expect(seen).toEqual([[6, 5], 30])
      expect(Array.from(r[0] as Float64Array)).toEqual([2.75])
    }
    g.run(0, Float64Array.of(3, 4))
    expect(Array.from(g.buffers[1]!)).toEqual([4, 3])
    expect(g.lastLoss).toBe(12)
  })

  it('raises the errors of the driver with wrappers: arity, types, out of range, disposed', () => {
    const code = (f: () => unknown): string => {
      try {
        f()
      } catch (e) {
        expect(e).toBeInstanceOf(TenetError)
        return (e as TenetError).code
      }
      return 'no error'
    }
    for (const checks of [false, true]) {
      const { wasm, cpu } = modules(checks)
      const gw = grad(wasm.idx!, { loss: 0 }),
        gc = grad(cpu.idx!, { loss: 0 })
      expect(sourceOf(gw)).toContain('EA.call(')
      const x = Float64Array.of(1, 2)
      for (const bad of [
        [0, x],
        [0, x, 1, 2],
        ['0', x, 1],
        [0, [1, 2], 1],
        [0, Float32Array.of(1, 2), 1],
      ]) {
        const want = code(() => gc.run(...bad))
        expect(want).not.toBe('no error')
        expect(code(() => gw.run(...bad))).toBe(want)
      }
      // with checks, an index out of range fails with the cpu backend's code (without, the cpu
      // backend reads \`undefined\`, and wasm's guard still throws)
      const oob = code(() => gw.run(0, x, 2))
      expect(oob).not.toBe('no error')
      if (checks) expect(code(() => gc.run(0, x, 2))).toBe(oob)
      // and the next call works
      gw.run(0, x, 1)
      expect(Array.from(gw.buffers[1]!)).toEqual([0, 1])
    }
    const { wasm } = modules(false)
    const g = grad(wasm.mul!, { loss: 0 })
    g.run(0, Float64Array.of(1, 2))
    g.dispose()
    expect(code(() => g.run(0, Float64Array.of(1, 2)))).toBe('ad/disposed')
    // the program the gradient runs (the one-pass fused program), disposed under it: nothing is
    // written into the memory it gave back, and the call is \`call/disposed\`
    const h = grad(wasm.mul!, { loss: 0 })
    h.run(0, Float64Array.of(1, 2))
    expect(h.plan.program).toBe('one-pass')
    const fused = compileFused(wasm.mul!, 0)!
    ;(fused as unknown as Record<symbol, TenetFunctionInfo>)[TENET_FUNCTION]!.compiled.dispose!()
    expect(code(() => h.run(0, Float64Array.of(1, 2)))).toBe('call/disposed')
  })
})
