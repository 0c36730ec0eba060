import { describe, expect, it } from 'vitest'
import { finiteDifference, Random } from '@tenet/testing'
import { defineRule, grad, valueAndGrad, type Dual, type Real } from './index.js'
import { MAX_TRACES } from './staged.js'
import { flatInput, randomProgram, runProgram, type ProgramInput } from './test-util.js'

/** The interpreter's and the staged engine's gradients agree exactly (the same additions in the same order). */
function sameAsInterpreter<X>(f: (d: Dual, x: X) => Real, inputs: unknown[]): ReturnType<typeof grad> {
  const gi = grad(f as never),
    gs = grad(f as never, { stage: true })
  for (const x of inputs) {
    const a = gi(x as never) as unknown,
      b = gs(x as never) as unknown
    expect(flatten(b)).toHaveLength(flatten(a).length)
    flatten(a).forEach((v, k) =>
      expect(
        flatten(b)[k] === v || (Number.isNaN(v) && Number.isNaN(flatten(b)[k]!)),
        `component ${k}: ${flatten(b)[k]} vs ${v}`,
      ).toBe(true),
    )
    expect(gs.value === gi.value || (Number.isNaN(gs.value) && Number.isNaN(gi.value))).toBe(true)
  }
  return gs
}

function flatten(v: unknown): number[] {
  if (typeof v === 'number') return [v]
  if (v instanceof Float64Array) return Array.from(v)
  if (Array.isArray(v)) return v.flatMap(flatten)
  if (v && typeof v === 'object') return Object.values(v).flatMap(flatten)
  return []
}

const rnd = (n: number, seed: number): Float64Array => {
  const r = new Random(seed)
  return Float64Array.from({ length: n }, () => r.next() * 2 - 1)
}

// seed 003's Table 1 functions, small sizes, written as the bench writes them
const dot =
  (n: number) =>
  (d: Dual, x: Real[]): Real => {
    let s = d.mul(x[0]!, x[n]!)
    for (let i = 1; i < n; i++) s = d.add(s, d.mul(x[i]!, x[n + i]!))
    return s
  }
const sumMatVec =
  (n: number) =>
  (d: Dual, x: Real[]): Real => {
    let s = d.constant(0)
    for (let i = 0; i < n; i++) {
      let r = d.mul(x[i * n]!, x[n * n]!)
      for (let j = 1; j < n; j++) r = d.add(r, d.mul(x[i * n + j]!, x[n * n + j]!))
      s = d.add(s, r)
    }
    return s
  }
const rotate =
  (n: number) =>
  (d: Dual, x: Real[]): Real => {
    let s = d.constant(0)
    for (let k = 0; k < n; k++) {
      const [vx, vy, vz, ux, uy, uz, w] = [0, 1, 2, 3, 4, 5, 6].map((i) => x[7 * k + i]!) as [
        Real,
        Real,
        Real,
        Real,
        Real,
        Real,
        Real,
      ]
      const a = d.scale(d.add(d.add(d.mul(ux, vx), d.mul(uy, vy)), d.mul(uz, vz)), 2)
      const b = d.sub(d.square(w), d.add(d.add(d.square(ux), d.square(uy)), d.square(uz)))
      const c = d.scale(w, 2)
      const rx = d.add(d.add(d.mul(a, ux), d.mul(b, vx)), d.mul(c, d.sub(d.mul(uy, vz), d.mul(uz, vy))))
      const ry = d.add(d.add(d.mul(a, uy), d.mul(b, vy)), d.mul(c, d.sub(d.mul(uz, vx), d.mul(ux, vz))))
      s = d.add(s, d.combine(1, rx, -2, ry))
    }
    return s
  }
const particles =
  (n: number, steps: number) =>
  (d: Dual, x: Real[]): Real => {
    let s = d.constant(0)
    for (let k = 0; k < n; k++) {
      let px = x[4 * k]!,
        py = x[4 * k + 1]!,
        vx = x[4 * k + 2]!,
        vy = x[4 * k + 3]!
      for (let t = 0; t < steps; t++) {
        const ax = d.combine(-0.5, px, -0.2, vx),
          ay = d.combine(-0.5, py, -0.2, vy)
        px = d.addScaled(px, vx, 0.05)
        py = d.addScaled(py, vy, 0.05)
        vx = d.addScaled(vx, ax, 0.05)
        vy = d.addScaled(vy, ay, 0.05)
      }
      s = d.add(s, d.mul(px, py))
    }
    return s
  }
// a small MLP with n-ary nodes: linear (constant inputs), dot, tanh, a loss with per-sample targets
const inputs = rnd(3 * 4, 5),
  targets = rnd(3 * 2, 6)
const mlp = (d: Dual, x: Real[]): Real => {
  let loss = d.constant(0)
  for (let s = 0; s < 3; s++) {
    const h: Real[] = []
    for (let o = 0; o < 5; o++) h.push(d.tanh(d.add(d.linear(inputs, x, 4 * s, 4 * o, 4), x[20 + o]!)))
    for (let o = 0; o < 2; o++)
      loss = d.add(loss, d.square(d.offset(d.dot(x, h, 25 + 5 * o, 0, 5), -targets[2 * s + o]!)))
  }
  return d.scale(loss, 1 / 3)
}

describe('staged gradients (grad(f, { stage: true }))', () => {
  it.each([
    ['scalar multiplication', (d: Dual, x: Real[]) => d.mul(x[0]!, x[1]!), 2],
    ['dot product', dot(40), 80],
    ['sum of a matrix–vector product', sumMatVec(7), 56],
    ['rotate_vec_by_quat', rotate(6), 42],
    ['particles', particles(3, 40), 12],
    ['MLP (n-ary nodes)', mlp, 35],
  ] as const)('%s: the same gradient as the interpreter, to the bit, and compiled', (_, f, n) => {
    const g = sameAsInterpreter(f, [rnd(n, 1), rnd(n, 2), rnd(n, 3)])
    expect(g.stage?.state).toBe('compiled')
    expect(g.stage?.traces).toBe(1)
  })

  it('loop bodies with zero adjoints and infinite inputs: the same gradient as the interpreter', () => {
    // rotations whose vector is zero (zero adjoints reach the products' locals), one infinite
    // quaternion component (0 · ∞ where an adjoint is zero), an all-zero rotation
    const x = rnd(42, 7)
    x.fill(0, 0, 3)
    x[7 + 4] = Infinity
    x.fill(0, 14, 21)
    x[28 + 6] = -Infinity
    const g = sameAsInterpreter(rotate(6), [x, rnd(42, 8), x])
    expect(g.stage?.state).toBe('compiled')
  })

  it('the staged gradient matches finite differences (rotate_vec_by_quat, particles)', () => {
    for (const [f, n] of [
      [rotate(3), 21],
      [particles(2, 30), 8],
    ] as const) {
      const g = grad(f, { stage: true })
      const x = rnd(n, 9)
      g(x)
      g(x)
      const ours = g(x) as Float64Array
      expect(g.stage?.state).toBe('compiled')
      // the function's value (forward arithmetic only) at perturbed points
      const value = (v: number[]): number => {
        const h = grad(f)
        h(Float64Array.from(v))
        return h.value
      }
      const fd = finiteDifference(value, Array.from(x))
      fd.forEach((v, k) => expect(Math.abs(ours[k]! - v)).toBeLessThan(1e-6 * Math.max(1, Math.abs(v))))
    }
  })

  it('loops are rerolled: the printed program is proportional to the code, not to the run', () => {
    const g = grad(dot(1000), { stage: true })
    g(rnd(2000, 4))
    expect(g.stage?.loops).toBe(1)
    expect(g.stage?.instructions).toBeLessThanOrEqual(4)
    const m = grad(sumMatVec(30), { stage: true })
    m(rnd(930, 5))
    expect(m.stage?.instructions).toBeLessThanOrEqual(12)
    expect(m.stage!.sourceLength).toBeLessThan(4000)
  })

  it('random plain-TS programs with branches (d.compare guards), loops and recursion: same as the interpreter at many points', () => {
    const flat = (x: number[]) => flatInput(x) as ProgramInput<number>
    const states: Record<string, number> = {}
    for (let seed = 1000; seed < 1040; seed++) {
      const p = randomProgram(seed, 10)
      const f = (d: Dual, input: ProgramInput<Real>) => runProgram(d, p, input)
      const gi = grad(f),
        gs = grad(f, { stage: true })
      const rng = new Random(seed)
      for (let t = 0; t < 8; t++) {
        const x = flat(Array.from({ length: 7 }, () => rng.next() * 2 - 1))
        const a = flatten(gi(x)),
          b = flatten(gs(x))
        a.forEach((v, k) => expect(b[k] === v, `seed ${seed} point ${t} component ${k}: ${b[k]} vs ${v}`).toBe(true))
        expect(gs.value).toBe(gi.value)
      }
      // the programs read no values (only guards): they stay staged unless their branches keep flipping
      if (gs.stage!.state === 'interpreted') expect(gs.stage!.reason).toMatch(/traced/)
      states[gs.stage!.state] = (states[gs.stage!.state] ?? 0) + 1
    }
    expect(states.compiled).toBeGreaterThanOrEqual(30)
  })

  it('a guard that fails re-traces; one that keeps failing falls back to the interpreter', () => {
    const f = (d: Dual, x: Real[]) => (d.sign(x[0]!) > 0 ? d.mul(x[0]!, x[1]!) : d.sin(x[1]!))
    const g = grad(f, { stage: true })
    const pos = Float64Array.of(2, 3),
      neg = Float64Array.of(-2, 3)
    expect(Array.from(g(pos) as Float64Array)).toEqual([3, 2])
    expect(Array.from(g(pos) as Float64Array)).toEqual([3, 2])
    expect(g.stage?.traces).toBe(1)
    expect(Array.from(g(neg) as Float64Array)).toEqual([0, Math.cos(3)])
    expect(g.stage).toMatchObject({ state: 'compiled', traces: 2 })
    for (let k = 0; k < MAX_TRACES + 2; k++) {
      const x = k % 2 ? pos : neg
      expect(Array.from(g(x) as Float64Array)).toEqual(k % 2 ? [3, 2] : [0, Math.cos(3)])
    }
    expect(g.stage?.state).toBe('interpreted')
    expect(g.stage?.reason).toMatch(/traced/)
    // d.compare is a guard too
    const h = grad((d: Dual, x: Real[]) => (d.compare(x[0]!, x[1]!) < 0 ? d.square(x[0]!) : d.square(x[1]!)), {
      stage: true,
    })
    expect(Array.from(h(Float64Array.of(1, 2)) as Float64Array)).toEqual([2, 0])
    expect(Array.from(h(Float64Array.of(1, 2)) as Float64Array)).toEqual([2, 0])
    expect(Array.from(h(Float64Array.of(3, 2)) as Float64Array)).toEqual([0, 4])
    expect(h.stage?.traces).toBe(2)
  })

  it('what cannot be replayed is interpreted, with the reason: d.value, registry primitives, custom rules, static leaves', () => {
    const byValue = grad((d: Dual, x: Real[]) => (d.value(x[0]!) > 0 ? d.square(x[0]!) : x[0]!), { stage: true })
    expect(Array.from(byValue(Float64Array.of(3)) as Float64Array)).toEqual([6])
    expect(Array.from(byValue(Float64Array.of(-3)) as Float64Array)).toEqual([1])
    expect(byValue.stage).toMatchObject({ state: 'interpreted', reason: expect.stringMatching(/d\.value/) })
    const applied = grad((d: Dual, x: Real[]) => d.apply('sin', x[0]!), { stage: true })
    expect((applied(Float64Array.of(1)) as Float64Array)[0]).toBeCloseTo(Math.cos(1), 15)
    expect(applied.stage?.reason).toMatch(/registry primitive `sin`/)
    const hyp = defineRule({
      name: 'hyp',
      inputs: 1,
      outputs: 1,
      forward: (x, y) => {
        y[0] = 2 * x[0]!
      },
      pullback: (_x, _y, yb, xb) => {
        xb[0] += 2 * yb[0]!
      },
    })
    const ruled = grad((d: Dual, x: Real[]) => d.call(hyp, [x[0]!])[0]!, { stage: true })
    expect(Array.from(ruled(Float64Array.of(1)) as Float64Array)).toEqual([2])
    expect(ruled.stage?.reason).toMatch(/custom rule `hyp`/)
    const withFlag = grad((d: Dual, p: { x: Real; on: boolean }) => (p.on ? d.square(p.x) : p.x), { stage: true })
    expect((withFlag({ x: 3, on: true }) as { x: number }).x).toBe(6)
    expect((withFlag({ x: 3, on: false }) as { x: number }).x).toBe(1)
    expect(withFlag.stage?.reason).toMatch(/static leaves/)
  })

  it('trees, a new shape, into, valueAndGrad', () => {
    type P = { w: Real[]; b: Real; xs: [Real, Real] }
    const f = (d: Dual, p: P) => {
      let s = d.square(p.b)
      for (let i = 0; i < p.w.length; i++) s = d.add(s, d.mul(p.w[i]!, p.xs[i % 2]!))
      return d.tanh(s)
    }
    const at = (n: number, s: number) => ({ w: rnd(n, s), b: 0.3 * s, xs: [0.1 * s, -0.2] as [number, number] })
    sameAsInterpreter(f, [at(5, 1), at(5, 2), at(9, 3), at(5, 4)])
    const g = grad(f, { stage: true }),
      gi = grad(f)
    const out = { w: new Float64Array(5), b: 0, xs: [0, 0] as [number, number] },
      ref = { w: new Float64Array(5), b: 0, xs: [0, 0] as [number, number] }
    for (const s of [1, 2, 3]) {
      g.into(out as never, at(5, s) as never)
      gi.into(ref as never, at(5, s) as never)
      expect(flatten(out)).toEqual(flatten(ref))
      expect(g.value).toBe(gi.value)
    }
    expect(g.stage?.state).toBe('compiled')
    const vg = valueAndGrad(f, { stage: true })
    const r1 = vg(at(5, 1) as never),
      r2 = vg(at(5, 1) as never)
    expect(r2.value).toBe(r1.value)
    expect(flatten(r2.grad)).toEqual(flatten(gi(at(5, 1) as never)))
    // a flat Float64Array into a number[] gradient (not the direct path)
    const h = grad(dot(3), { stage: true }),
      x = rnd(6, 7),
      o: number[] = [0, 0, 0, 0, 0, 0]
    h.into(o as never, x)
    h.into(o as never, x)
    expect(o).toEqual(Array.from(x.subarray(3)).concat(Array.from(x.subarray(0, 3))))
  })

  it('edge cases: unused inputs, the result is an input or a constant, zero adjoints through infinite partials, non-finite constants', () => {
    sameAsInterpreter((d: Dual, x: Real[]) => d.mul(x[1]!, x[3]!), [rnd(5, 1), rnd(5, 2)])
    sameAsInterpreter((d: Dual, x: Real[]) => x[2]!, [rnd(4, 1), rnd(4, 2)])
    sameAsInterpreter((d: Dual, _x: Real[]) => d.constant(3), [rnd(2, 1), rnd(2, 2)])
    // max(x, √y) at y = 0 with x winning: the √ node's adjoint is 0 and its partial ∞; no NaN
    const zeroInf = sameAsInterpreter(
      (d: Dual, x: Real[]) => {
        let s = d.constant(0)
        for (let i = 0; i < 6; i++) s = d.add(s, d.max(x[i]!, d.sqrt(x[6 + i]!)))
        return s
      },
      [Float64Array.of(1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0)],
    )
    expect(
      Array.from(zeroInf(Float64Array.of(1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0)) as unknown as Float64Array).every(
        Number.isFinite,
      ),
    ).toBe(true)
    sameAsInterpreter((d: Dual, x: Real[]) => d.add(d.scale(x[0]!, Infinity), d.offset(x[1]!, -Infinity)), [rnd(2, 1)])
    // a node used twice by one operation, and a dot product of a vector with itself
    sameAsInterpreter(
      (d: Dual, x: Real[]) => {
        let s = d.mul(x[0]!, x[0]!)
        for (let i = 1; i < 8; i++) s = d.add(s, d.mul(x[i]!, x[i]!))
        return d.add(s, d.dot(x, x))
      },
      [rnd(8, 3)],
    )
    // a loop's running sum starts from a node that an n-ary node reads after the loop too
    sameAsInterpreter(
      (d: Dual, x: Real[]) => {
        const s0 = d.mul(x[0]!, x[1]!)
        let s = s0
        for (let k = 0; k < 10; k++) s = d.add(s, d.mul(x[2 + k]!, x[2 + k]!))
        return d.add(s, d.sum([s0, x[0]!, s0]))
      },
      [rnd(12, 1), rnd(12, 2)],
    )
    // every elementary operation, in a loop
    const all = (d: Dual, x: Real[]) => {
      let s = d.constant(0.5)
      for (let i = 0; i < 4; i++) {
        const a = x[2 * i]!,
          b = x[2 * i + 1]!
        const p = d.offset(d.square(b), 1)
        const terms = [
          d.div(a, p),
          d.neg(a),
          d.inv(p),
          d.powConst(p, 1.5),
          d.pow(p, a),
          d.sin(a),
          d.cos(a),
          d.tan(d.scale(a, 0.3)),
          d.exp(a),
          d.log(p),
          d.sqrt(p),
          d.sinh(a),
          d.cosh(a),
          d.tanh(a),
          d.asin(d.scale(a, 0.5)),
          d.acos(d.scale(a, 0.5)),
          d.atan(a),
          d.abs(a),
          d.atan2(a, p),
          d.min(a, b),
          d.max(a, b),
          d.sub(a, b),
          d.combine(2, a, 3, b),
          d.addScaled(a, b, -1),
        ]
        s = d.add(s, d.sum(terms))
      }
      return s
    }
    sameAsInterpreter(all, [rnd(8, 4), rnd(8, 5)])
  })
})

/**
 * Random loop kernels: a state vector updated by a random body of operations over the state, the
 * body's own temporaries, per-iteration inputs and shared inputs, iterated in nested loops (so the
 * trace rerolls into loops with iteration-local, loop-carried and per-iteration-input values), with
 * an occasional guarded branch and n-ary node.
 */
function randomKernel(seed: number): { f: (d: Dual, x: Real[]) => Real; inputs: number } {
  const rng = new Random(seed)
  const nState = rng.int(1, 3),
    outer = rng.int(1, 3),
    inner = rng.int(3, 12),
    width = rng.int(1, 3),
    shared = rng.int(1, 3)
  const bodyLen = rng.int(2, 7)
  type Ref = { kind: 'state' | 'temp' | 'iter' | 'shared'; i: number }
  const ops = [
    'add',
    'sub',
    'mul',
    'div',
    'sin',
    'tanh',
    'square',
    'scale',
    'offset',
    'combine',
    'addScaled',
    'max',
    'abs',
    'sqrt',
    'sum',
  ] as const
  const body = Array.from({ length: bodyLen }, (_, t) => {
    const ref = (): Ref => {
      const r = rng.next()
      if (r < 0.3 || t === 0)
        return { kind: r < 0.15 ? 'state' : rng.next() < 0.5 ? 'iter' : 'shared', i: rng.int(0, 2) }
      if (r < 0.7) return { kind: 'temp', i: rng.int(0, t - 1) }
      return { kind: 'state', i: rng.int(0, nState - 1) }
    }
    return { op: rng.pick([...ops]), a: ref(), b: ref(), c: Math.round((rng.next() * 2 - 1) * 100) / 100 }
  })
  const updates = Array.from({ length: nState }, () => rng.int(0, bodyLen - 1))
  const guarded = rng.next() < 0.4
  const base = nState,
    sharedBase = nState + inner * width
  const f = (d: Dual, x: Real[]): Real => {
    const state = Array.from({ length: nState }, (_, i) => x[i]!)
    let acc = d.constant(0.25)
    for (let o = 0; o < outer; o++) {
      for (let k = 0; k < inner; k++) {
        const temps: Real[] = []
        const get = (r: Ref): Real =>
          r.kind === 'state'
            ? state[r.i % nState]!
            : r.kind === 'temp'
              ? temps[r.i]!
              : r.kind === 'iter'
                ? x[base + k * width + (r.i % width)]!
                : x[sharedBase + (r.i % shared)]!
        for (const s of body) {
          const a = get(s.a),
            b = get(s.b)
          let y: Real
          switch (s.op) {
            case 'add':
              y = d.add(a, b)
              break
            case 'sub':
              y = d.sub(a, b)
              break
            case 'mul':
              y = d.tanh(d.mul(a, b))
              break
            case 'div':
              y = d.div(a, d.offset(d.square(b), 1))
              break
            case 'sin':
              y = d.sin(a)
              break
            case 'tanh':
              y = d.tanh(a)
              break
            case 'square':
              y = d.tanh(d.square(a))
              break
            case 'scale':
              y = d.scale(a, s.c)
              break
            case 'offset':
              y = d.offset(a, s.c)
              break
            case 'combine':
              y = d.combine(s.c, a, 0.5, b)
              break
            case 'addScaled':
              y = d.addScaled(a, b, s.c)
              break
            case 'max':
              y = d.max(a, b)
              break
            case 'abs':
              y = d.abs(a)
              break
            case 'sqrt':
              y = d.sqrt(d.offset(d.square(a), 0.5))
              break
            case 'sum':
              y = d.scale(d.sum([a, b, a]), 0.3)
              break
          }
          temps.push(y)
        }
        if (guarded && d.sign(temps[0]!) > 0) temps[temps.length - 1] = d.cos(temps[temps.length - 1]!)
        updates.forEach((t, i) => {
          state[i] = d.tanh(d.add(d.scale(state[i]!, 0.5), temps[t]!))
        })
        acc = d.addScaled(acc, temps[bodyLen - 1]!, 0.1)
      }
    }
    let out = acc
    for (const s of state) out = d.add(out, s)
    return out
  }
  return { f, inputs: sharedBase + shared }
}

describe('staged random loop kernels', () => {
  it('60 kernels at 3 points each: bit-identical to the interpreter', () => {
    let compiled = 0,
      loops = 0
    for (let seed = 0; seed < 60; seed++) {
      const { f, inputs } = randomKernel(seed)
      const gi = grad(f),
        gs = grad(f, { stage: true })
      for (let t = 0; t < 3; t++) {
        const x = rnd(inputs, 100 * seed + t)
        const a = gi(x) as Float64Array,
          b = gs(x) as Float64Array
        for (let k = 0; k < inputs; k++)
          expect(b[k] === a[k], `kernel ${seed} point ${t} component ${k}: ${b[k]} vs ${a[k]}`).toBe(true)
        expect(gs.value).toBe(gi.value)
      }
      if (gs.stage!.state === 'compiled') {
        compiled++
        loops += gs.stage!.loops!
      }
    }
    expect(compiled).toBeGreaterThanOrEqual(45)
    expect(loops).toBeGreaterThanOrEqual(45)
  })
})
