import { describe, expect, it } from 'vitest'
import { TenetError, createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { gradient, jacobian, jvp, vjp } from './index.js'
import { expectClose, randomExpressions, rev, tag } from './test-util.js'

/**
 * Random differentiable programs with several outputs: scalars y, a, b, c and an array x are all
 * updated, so the Jacobian between initial and final values is dense.
 */
function generator(seed: number) {
  const { rnd, pick, expr } = randomExpressions(seed)
  const scalars = ['y', 'a', 'b', 'c']
  function program(): string {
    const lines: string[] = []
    const n = 3 + Math.floor(rnd() * 5)
    for (let k = 0; k < n; k++) {
      const kind = rnd()
      if (kind < 0.5) {
        const target = pick(scalars)
        const vars = scalars.filter((v) => v !== target)
        if (rnd() < 0.4) vars.push('x[1]')
        lines.push(`${target} ${rnd() < 0.7 ? '+=' : '-='} ${expr(vars, 3)}`)
      } else if (kind < 0.75) {
        const target = pick(scalars)
        lines.push(`for i in 0..len(x) { ${target} += ${expr([...scalars.filter((v) => v !== target), 'x[i]'], 2)} }`)
      } else if (kind < 0.9) {
        lines.push(`for i in 0..len(x) { x[i] += ${expr(scalars, 2)} }`)
      } else {
        const [u, v] = [pick(scalars), pick(scalars)]
        lines.push(u !== v ? `SWAP(${u}, ${v})` : `NEG(${u})`)
      }
    }
    lines.push(`y += ${expr(['a', 'b', 'c', 'x[0]'], 2)}`)
    // k is a size-like integer argument: it has no cotangent and must be passed through
    return `fn f(y: f64, a: f64, b: f64, c: f64, x: f64[], k: i32) {\n  ${lines.join('\n  ')}\n  y += f64(k) * 0.25\n}`
  }
  return { program, rnd }
}

/** Flattens per-argument values (numbers and arrays) into one list of scalars. */
const flat = (vs: ReadonlyArray<number | ArrayLike<number>>): number[] =>
  vs.flatMap((v) => (typeof v === 'number' ? [v] : Array.from(v)))

describe.each(['cpu', 'interpreter'] as const)('vjp and jvp rules on random programs (%s)', (backend) => {
  const tenet = tag({ backend })
  it('pullback of random cotangents = uᵀJ and jvp of random tangents = Jv, with J from `jacobian`; the loss row = `gradient`', () => {
    const gen = generator(backend === 'cpu' ? 2024 : 77)
    for (let t = 0; t < 40; t++) {
      const src = gen.program()
      const m = tenet(src)
      const args = [
        gen.rnd() - 0.5,
        gen.rnd() - 0.5,
        gen.rnd() - 0.5,
        gen.rnd() - 0.5,
        Float64Array.from({ length: 3 }, () => gen.rnd() - 0.5),
        3,
      ]
      // a random choice of inputs and outputs among the float arguments
      const floats = [0, 1, 2, 3, 4]
      const wrt = floats.filter(() => gen.rnd() < 0.6)
      const outputs = floats.filter(() => gen.rnd() < 0.6)
      if (wrt.length === 0) wrt.push(4)
      if (outputs.length === 0) outputs.push(0)
      const J = jacobian(m.f!, args, { inputs: wrt, outputs })
      const nIn = flat(wrt.map((i) => args[i] as number | Float64Array)).length
      const nOut = flat(outputs.map((i) => args[i] as number | Float64Array)).length
      const shaped = (idx: number[]) =>
        idx.map((i) =>
          typeof args[i] === 'number' ? gen.rnd() - 0.5 : Float64Array.from({ length: 3 }, () => gen.rnd() - 0.5),
        )

      const before = (args[4] as Float64Array).slice()
      const { outputs: outs, values, pullback } = vjp(m.f!, { wrt, outputs })(...args)
      expect(args[4], 'caller arrays are left as passed').toEqual(before)
      // the outputs are the final values, as a call of f returns them
      const direct = m.f!(...args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a))) as unknown[]
      expectClose(flat(outs), flat(outputs.map((i) => direct[i] as number | Float64Array)), 1e-12, `${src}\noutputs`)
      expect(values[5]).toBe(3)
      const u = shaped(outputs)
      const uJ = new Float64Array(nIn)
      const uf = flat(u)
      for (let r = 0; r < nOut; r++) for (let col = 0; col < nIn; col++) uJ[col]! += uf[r]! * J[r * nIn + col]!
      expectClose(flat(pullback(u)), uJ, 1e-9, `${src}\nwrt ${wrt} outputs ${outputs}: pullback`)
      // a second pullback from the same forward run gives the same (residuals are not consumed)
      expectClose(flat(pullback(u)), uJ, 1e-12, `${src}\nsecond pullback`)

      const v = shaped(wrt)
      const vf = flat(v)
      const Jv = new Float64Array(nOut)
      for (let r = 0; r < nOut; r++) for (let col = 0; col < nIn; col++) Jv[r]! += J[r * nIn + col]! * vf[col]!
      const fr = jvp(m.f!, { wrt, outputs })(args, v)
      expectClose(flat(fr.tangents), Jv, 1e-9, `${src}\njvp`)
      expectClose(flat(fr.outputs), flat(outs), 1e-12, `${src}\njvp outputs`)

      // the loss row: pullback of a unit cotangent on y = `gradient` with respect to the inputs
      const g = gradient(m.f!, args, { loss: 0 })
      const [dy, ...rest] = vjp(m.f!, { wrt: [0, 1, 2, 3, 4], outputs: [0] })(...args).pullback([1])
      expectClose(flat([dy!, ...rest]), flat(g.slice(0, 5) as Array<number | Float64Array>), 1e-12, `${src}\ngradient`)
    }
  })
})

describe('vjp / jvp rules: defaults, types and errors', () => {
  const m = rev`
    fn norm(out: f64, x: f64[], n: i32) {
      routine { s <- 0.0; for i in 0..n { s += x[i] * x[i] } }
      out += sqrt(s)
      ~routine
    }
    fn single(out: f32, x: f32[]) { for i in 0..len(x) { out += x[i] * x[i] } }
    fn twice(x: f64[]) { x[1] += 2.0 * x[0] }`

  it('the norm of seed 000 Appendix E: the pullback is x/‖x‖ times the cotangent; integer arguments pass through', () => {
    const x = Float64Array.from([3, 4, 12])
    const rule = vjp(m.norm!, { wrt: [1], outputs: [0] })
    expect(rule.wrt).toEqual([1])
    const { outputs, pullback } = rule(0, x, 3)
    expect(outputs).toEqual([13])
    const [dx] = pullback([2])
    expectClose(dx as Float64Array, [6 / 13, 8 / 13, 24 / 13], 1e-15)
    expect(dx).toBeInstanceOf(Float64Array)
  })

  it('borrow: arrays f only reads are taken as passed (same results; a wrong type is still rejected)', () => {
    const x = Float64Array.from([3, 4, 12])
    const rule = vjp(m.norm!, { wrt: [1], outputs: [0], borrow: true })
    const r = rule(0, x, 3)
    expect(r.outputs).toEqual([13])
    expectClose(r.pullback([1])[0] as Float64Array, [3 / 13, 4 / 13, 12 / 13], 1e-15)
    expect(Array.from(r.values[1] as Float64Array)).toEqual([3, 4, 12])
    expect(() => rule(0, [3, 4, 12], 3)).toThrow(/argument 2 \(`x: f64\[\]`\) of `norm` must be a Float64Array/)
    // an array f writes is copied even when borrowing
    const y = Float64Array.from([1, 2])
    const t = vjp(m.twice!, { borrow: true })(y)
    expect(Array.from(y)).toEqual([1, 2])
    expect(Array.from(t.outputs[0] as Float64Array)).toEqual([1, 4])
  })

  it('defaults: wrt every float argument, outputs every written float argument; f32 arrays get f32 cotangents', () => {
    const r = vjp(m.norm!)
    expect([r.wrt, r.outputs]).toEqual([[0, 1], [0]])
    const s = vjp(m.single!)
    const res = s(0, Float32Array.from([1, 2]))
    expect(res.outputs).toEqual([5])
    const [dout, dx] = res.pullback([1])
    expect(dout).toBe(1)
    expect(dx).toBeInstanceOf(Float32Array)
    expect(Array.from(dx as Float32Array)).toEqual([2, 4])
    const j = jvp(m.single!)
    expect([j.wrt, j.outputs]).toEqual([[0, 1], [0]])
    expect(j([0, Float32Array.from([1, 2])], [0, [1, 1]]).tangents).toEqual([6])
  })

  it('null cotangents and tangents mean zero', () => {
    const r = vjp(m.norm!, { wrt: [0, 1], outputs: [0] })(0, Float64Array.from([3, 4]), 2)
    expect(flat(r.pullback([null]))).toEqual([0, 0, 0])
    expect(jvp(m.norm!, { wrt: [0, 1] })([0, Float64Array.from([3, 4]), 2], [null, undefined]).tangents).toEqual([0])
  })

  it('an array output and input at once (x[1] += 2 x[0] in place)', () => {
    const r = vjp(m.twice!)(Float64Array.from([1, 2]))
    expect(Array.from(r.outputs[0] as Float64Array)).toEqual([1, 4])
    expect(Array.from(r.pullback([[1, 10]])[0] as Float64Array)).toEqual([21, 10])
    expect(Array.from(jvp(m.twice!)([Float64Array.from([1, 2])], [[1, 0]]).tangents[0] as Float64Array)).toEqual([1, 2])
  })

  const code = (fn: () => unknown): string => {
    try {
      fn()
    } catch (e) {
      expect(TenetError.isInstance(e), String(e)).toBe(true)
      return `${(e as TenetError).code}: ${(e as Error).message}`
    }
    throw new Error('expected an error')
  }

  it('wrong cotangent shapes: clear errors that say what is expected', () => {
    const { pullback } = vjp(m.norm!, { wrt: [1], outputs: [0] })(0, Float64Array.from([3, 4]), 2)
    expect(code(() => pullback([]))).toMatch(
      /^ad\/shape: the cotangents of `norm`'s outputs must have 1 entries \(one per output \(arguments 0\)\), got 0/,
    )
    expect(code(() => pullback([1, 2]))).toMatch(/must have 1 entries.*got 2/)
    expect(code(() => pullback([[1, 2]]))).toMatch(
      /^ad\/shape: cotangent 0 \(argument 0\) for scalar `out` must be a number, got an array of 2/,
    )
    expect(code(() => pullback(1 as never))).toMatch(/must be an array with one entry per output/)
    const tw = vjp(m.twice!)(Float64Array.from([1, 2]))
    expect(code(() => tw.pullback([[1, 2, 3]]))).toMatch(
      /^ad\/shape: cotangent 0 \(argument 0\) for array `x` must have 2 elements \(the length of `x`\), got 3/,
    )
    expect(code(() => tw.pullback([5]))).toMatch(
      /for array `x` must be an array of 2 numbers \(its length\), got the number 5/,
    )
  })

  it('wrong tangent shapes and specs: clear errors', () => {
    const j = jvp(m.norm!, { wrt: [1], outputs: [0] })
    expect(code(() => j([0, Float64Array.from([3, 4]), 2], [[1]]))).toMatch(
      /^ad\/shape: tangent 0 \(argument 1\) for array `x` must have 2 elements/,
    )
    expect(code(() => j([0, Float64Array.from([3, 4]), 2], []))).toMatch(
      /^ad\/shape: the tangents of `norm`'s inputs must have 1 entries/,
    )
    expect(code(() => vjp(m.norm!, { wrt: [2] }))).toMatch(
      /^ad\/argument: vjp\(f, spec\): `spec.wrt` names argument 2 \(`n`: i32\) of `norm`, which has no derivative \(float arguments: 0 `out`, 1 `x`\)/,
    )
    expect(code(() => jvp(m.norm!, { outputs: [7] }))).toMatch(
      /`spec.outputs` has 7, which is not an argument index of `norm` \(0..2: out, x, n\)/,
    )
    expect(code(() => vjp(m.norm!, { wrt: [1, 1] }))).toMatch(/names argument 1 twice/)
    expect(code(() => vjp(m.norm!)(0, [3, 4], 2))).toMatch(
      /argument 2 \(`x: f64\[\]`\) of `norm` must be a Float64Array/,
    )
    // the directional-derivative form of jvp is unchanged
    expect(jvp(m.norm!, [0, Float64Array.from([3, 4]), 2], { v: [0, [1, 0], null] }).tangent[0]).toBeCloseTo(0.6, 14)
  })
})

describe('vjp / jvp rules on the wasm backend', () => {
  it('the same outputs, cotangents and tangents as on cpu (graph-embedding-like loss with arrays written and read)', () => {
    const src = `fn f(y: f64, x: f64[], w: f64[], n: i32) {
      for i in 0..n { x[i] += w[i] * sin(w[i]) }
      for i in 0..n { y += x[i] * x[i] * w[i] }
    }`
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
    const [w, c] = ['wasm', 'cpu'].map(
      (backend) => compileModule(parse({ text: src, name: 'test' }), { registry, backend }).f!,
    )
    const args = () => [0.5, Float64Array.from([0.1, -0.2, 0.3]), Float64Array.from([0.7, 0.4, -0.9]), 3]
    const [rw, rc] = [w!, c!].map((f) => vjp(f, { wrt: [1, 2], outputs: [0, 1], borrow: true })(...args()))
    expectClose(flat(rw!.outputs), flat(rc!.outputs), 1e-14, 'outputs')
    const u = [1.5, [1, -1, 2]]
    expectClose(flat(rw!.pullback(u)), flat(rc!.pullback(u)), 1e-13, 'pullback')
    expectClose(flat(rw!.pullback(u)), flat(rc!.pullback(u)), 1e-13, 'second pullback')
    const [jw, jc] = [w!, c!].map((f) =>
      jvp(f, { wrt: [1, 2], outputs: [0, 1] })(args(), [
        [1, 0, 0],
        [0, 1, 0],
      ]),
    )
    expectClose(flat(jw!.tangents), flat(jc!.tangents), 1e-13, 'tangents')
  })
})
