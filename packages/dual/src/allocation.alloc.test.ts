/**
 * Allocation test: run by itself after the parallel suite (vitest.alloc.config.ts at the root),
 * because it counts garbage collections.
 */
import { describe, expect, it } from 'vitest'
import { collectionsDuring, optimizeNow } from '@tenet/testing'
import { defineRule, grad, type Dual, type Real } from './index.js'

describe('grad(f).into allocates nothing per call in steady state', () => {
  const hypot = defineRule({
    name: 'hypot',
    inputs: 2,
    outputs: 1,
    forward: (x, y) => {
      y[0] = Math.sqrt(x[0]! * x[0]! + x[1]! * x[1]!)
    },
    pullback: (x, y, ybar, xbar) => {
      xbar[0] += (ybar[0]! * x[0]!) / y[0]!
      xbar[1] += (ybar[0]! * x[1]!) / y[0]!
    },
  })
  const pair: Real[] = [0 as Real, 0 as Real]
  const one: Real[] = [0 as Real]
  // a small MLP-like loss over a record of Float64Arrays (numbers inside records box: see `into`): loops, a branch on a value, n-ary nodes, a custom rule
  type P = { w: Real[]; b: Real[]; x: Real[] }
  const loss = (d: Dual, p: P): Real => {
    let s = d.constant(0)
    for (let i = 0; i < p.x.length; i++) {
      const h = d.tanh(d.add(d.mul(p.w[i]!, p.x[i]!), p.b[0]!))
      s = d.value(h) > 0 ? d.add(s, d.square(h)) : d.sub(s, d.sin(h))
    }
    pair[0] = s
    pair[1] = p.b[0]!
    const r = d.call(hypot, pair, one)[0]!
    return d.add(r, d.dot(p.w, p.x))
  }
  const n = 8
  const p = {
    w: Float64Array.from({ length: n }, (_, i) => Math.sin(i)),
    b: Float64Array.of(0.1),
    x: Float64Array.from({ length: n }, (_, i) => Math.cos(i)),
  }
  const out = { w: new Float64Array(n), b: new Float64Array(1), x: new Float64Array(n) }
  const g = grad(loss)

  it('10⁶ gradient calls of an 8-term loss with a record argument: (almost) no garbage collection', async () => {
    function drive(calls: number): number {
      let acc = 0
      for (let i = 0; i < calls; i++) {
        g.into(out, p)
        acc += g.value + out.b[0]!
      }
      return acc
    }
    for (let r = 0; r < 200; r++) drive(10)
    expect(
      optimizeNow(drive, () => drive(100)),
      'the driver loop is optimised',
    ).toBe(true)
    // the answer is right (a spot check; the unit tests check gradients thoroughly)
    const before = out.b[0]!
    expect(Number.isFinite(before)).toBe(true)
    // the fewer of two measurements: an allocation per call collects every time (a boxed double
    // per call is ~16 MB over 10⁶ calls, many scavenges), a stray collection of the process's own
    // (one fresh-clone CI run counted 3 where local runs count 0–1) need not come back
    const gcs = Math.min(
      await collectionsDuring(() => drive(1_000_000)),
      await collectionsDuring(() => drive(1_000_000)),
    )
    expect(gcs).toBeLessThanOrEqual(2)
  })

  it('staged: 10⁶ calls of the compiled gradient, a flat argument and a record of Float64Arrays: (almost) no garbage collection', async () => {
    // the same loss without the custom rule (which is not staged), branches by a guard
    const lossStaged = (d: Dual, p: P): Real => {
      let s = d.constant(0)
      for (let i = 0; i < p.x.length; i++) {
        const h = d.tanh(d.add(d.mul(p.w[i]!, p.x[i]!), p.b[0]!))
        s = d.sign(h) > 0 ? d.add(s, d.square(h)) : d.sub(s, d.sin(h))
      }
      return d.add(s, d.dot(p.w, p.x))
    }
    const gs = grad(lossStaged, { stage: true })
    const flat = grad(
      (d: Dual, x: Real[]) => {
        let s = d.mul(x[0]!, x[1]!)
        for (let i = 2; i < x.length; i++) s = d.add(s, d.mul(s, x[i]!))
        return s
      },
      { stage: true },
    )
    const x = Float64Array.from({ length: 16 }, (_, i) => 0.9 + 0.01 * i),
      gx = new Float64Array(16)
    function drive(calls: number): number {
      let acc = 0
      for (let i = 0; i < calls; i++) {
        gs.into(out, p)
        flat.into(gx, x)
        acc += out.b[0]! + gx[3]!
      } // (not g.value: a getter returning a double, boxed wherever V8 does not inline it)
      return acc
    }
    for (let r = 0; r < 200; r++) drive(10)
    expect(gs.stage?.state).toBe('compiled')
    expect(flat.stage?.state).toBe('compiled')
    expect(
      optimizeNow(drive, () => drive(100)),
      'the driver loop is optimised',
    ).toBe(true)
    // the fewer of two measurements: an allocation per call collects every time (a boxed double
    // per call is ~16 MB over 10⁶ calls, many scavenges), a stray collection of the process's own
    // (one fresh-clone CI run counted 3 where local runs count 0–1) need not come back
    const gcs = Math.min(
      await collectionsDuring(() => drive(1_000_000)),
      await collectionsDuring(() => drive(1_000_000)),
    )
    expect(gcs).toBeLessThanOrEqual(2)
    expect(gs.stage?.traces).toBe(1)
  })
})
