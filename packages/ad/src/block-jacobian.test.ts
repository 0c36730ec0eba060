import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, parse, TenetError } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetFunction } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { blockJacobian, jacobian, type BlockJacobianOptions } from './index.js'
import { expectClose, randomExpressions } from './test-util.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)

const compile = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend, checks })

/** Block sizes of the generated programs' parameters: r: f64[2], x: f64[3], s: f64, q: f64, k: i32, ws: f64[4]. */
const SIZES = [2, 3, null, null, null, 4]

/**
 * A random block program over one block `blk(r, x, s, q, k, ws)`: workspace elements computed at
 * literal indices, residuals from them, a written scalar, a loop over x (indices not literal), a
 * branch, a routine with an ancilla, ROT, and a call of a function on elements.
 */
function blockProgram(seed: number): string {
  const { rnd, pick, expr } = randomExpressions(seed)
  const lines: string[] = []
  const known = ['x[0]', 'x[1]', 'x[2]', 'q']
  for (let j = 0; j < 4; j++) {
    if (rnd() < 0.8) {
      lines.push(`ws[${j}] += ${expr(known, 3)}`)
      known.push(`ws[${j}]`)
    }
  }
  const n = 2 + Math.floor(rnd() * 4)
  for (let t = 0; t < n; t++) {
    const kind = rnd()
    const target = pick(['r[0]', 'r[1]'])
    if (kind < 0.35) lines.push(`${target} ${rnd() < 0.7 ? '+=' : '-='} ${expr([...known, 's'], 3)}`)
    else if (kind < 0.5) lines.push(`s += ${expr(known, 2)} * f64(k)`)
    else if (kind < 0.65) lines.push(`for i in 0..len(x) { ${target} += ${expr(['x[i]', 's', 'q'], 2)} }`)
    else if (kind < 0.8)
      lines.push(`if (q > 0.1, ~) { ${target} += ${expr([...known, 's'], 2)} } else { ${target} -= ${expr(known, 2)} }`)
    else if (kind < 0.85) {
      const e = expr(known, 2)
      lines.push(`t <- 0.0`, `t += ${e}`, `${target} += t * ${expr(['s', 'x[1]'], 1)}`, `t -= ${e}`, `t -> 0.0`)
    } else if (kind < 0.91) lines.push('ROT(r[0], r[1], q)')
    else lines.push(`h(${target}, x[${Math.floor(rnd() * 3)}], q)`)
  }
  // every program has one of the kinds that must be covered (a loop over x, a call on elements),
  // whatever the random draws above
  if (seed % 2 === 0) lines.push(`for i in 0..len(x) { r[1] += ${expr(['x[i]', 's', 'q'], 2)} }`)
  else lines.push(`h(r[0], x[${seed % 3}], q)`)
  lines.push(`r[0] += ${expr([...known, 's'], 2)}`)
  return `fn h(a: f64, b: f64, c: f64) {\n  a += b * sin(c)\n  b += exp(0.5 * c)\n}\nfn blk(r: f64[], x: f64[], s: f64, q: f64, k: i32, ws: f64[]) {\n  ${lines.join('\n  ')}\n}`
}

/** n blocks of random arguments (r starts nonzero; q on both sides of the branch). */
function batchedArgs(n: number, seed: number) {
  let s = seed
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1
  return {
    r: Float64Array.from({ length: 2 * n }, rnd),
    x: Float64Array.from({ length: 3 * n }, rnd),
    s: Float64Array.from({ length: n }, rnd),
    q: Float64Array.from({ length: n }, rnd),
    k: 3,
  }
}

type Batched = ReturnType<typeof batchedArgs>

/** Block b's arguments of `blk` (workspace zero). */
const blockArgs = (a: Batched, b: number): unknown[] => [
  a.r.slice(2 * b, 2 * b + 2),
  a.x.slice(3 * b, 3 * b + 3),
  a.s[b]!,
  a.q[b]!,
  a.k,
  new Float64Array(4),
]

/** The final values of the parameters `outputs` of `blk` on `args` (arrays flattened in order). */
function outputsOf(f: TenetFunction, args: unknown[], outputs: number[]): number[] {
  const copy = args.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v))
  const res = f(...copy)
  return outputs.flatMap((p) => {
    const v = res[p]
    return typeof v === 'number' ? [v] : Array.from(v as Float64Array)
  })
}

/** Central differences of `blk`'s outputs with respect to its inputs at one block (rows × columns, row-major). */
function finiteDifferences(f: TenetFunction, args: unknown[], inputs: number[], outputs: number[]): number[] {
  const cols: Array<[number, number]> = []
  for (const p of inputs) {
    const v = args[p]
    if (typeof v === 'number') cols.push([p, -1])
    else for (let e = 0; e < (v as Float64Array).length; e++) cols.push([p, e])
  }
  const h = 1e-6
  const columns = cols.map(([p, e]) => {
    const at = (d: number) => {
      const a = args.map((v) => (ArrayBuffer.isView(v) ? (v as Float64Array).slice() : v))
      if (e < 0) a[p] = (a[p] as number) + d
      else (a[p] as Float64Array)[e]! += d
      return outputsOf(f, a, outputs)
    }
    const up = at(h),
      down = at(-h)
    return up.map((u, i) => (u - down[i]!) / (2 * h))
  })
  const nr = columns[0]!.length
  const J: number[] = []
  for (let r = 0; r < nr; r++) for (const c of columns) J.push(c[r]!)
  return J
}

const configs = [
  { backend: 'cpu', checks: true },
  { backend: 'cpu', checks: false },
  { backend: 'interpreter', checks: true },
  { backend: 'wasm', checks: false },
  { backend: 'wasm', checks: true },
  // wasm's default stores too (its \`jacobianStores\` capability, the stores in map lanes): adds too
  { backend: 'wasm', checks: false, store: false },
  // and cpu's default stores: adds too
  { backend: 'cpu', checks: false, store: false },
] as ReadonlyArray<{ backend: 'cpu' | 'interpreter' | 'wasm'; checks: boolean; store?: boolean }>

describe.each(configs)(
  'block Jacobians of random blocked programs ($backend, checks $checks, store entries $store)',
  ({ backend, checks, store }) => {
    it('match the per-block `jacobian` (1e-12) and central differences (1e-6), forward and reverse, across chunks', () => {
      const n = 7
      const sources: string[] = []
      for (let seed = 1; seed <= 5; seed++) {
        const src = blockProgram(seed * 7919 + (checks ? 1 : 2))
        sources.push(src)
        const m = compile(src, backend, checks)
        const f = m.blk!
        const a = batchedArgs(n, seed)
        const args = [a.r, a.x, a.s, a.q, a.k, null]
        const before = [a.r.slice(), a.x.slice(), a.s.slice(), a.q.slice()]
        const shapes: Array<Pick<BlockJacobianOptions, 'inputs' | 'outputs'>> = [
          { inputs: [1, 2, 3], outputs: [0, 2] },
          { inputs: [1], outputs: [0] },
        ]
        let J: Float64Array = new Float64Array(0)
        for (const shape of shapes) {
          const inputs = shape.inputs!,
            outputs = shape.outputs!
          const refs = Array.from({ length: n }, (_, b) => jacobian(f, blockArgs(a, b), { inputs, outputs }))
          const modes = shape === shapes[0] ? (['forward', 'reverse', 'auto'] as const) : (['reverse'] as const)
          for (const mode of modes) {
            const width = mode === 'auto' ? undefined : 1 + (seed % 3)
            const bj = blockJacobian(f, {
              sizes: SIZES,
              workspace: [5],
              ...shape,
              mode,
              chunk: 3,
              width,
              ...(store === undefined ? {} : { storeEntries: store }),
            })
            const Jm = bj.run(n, args)
            const B = bj.plan.rows * bj.plan.columns
            expect(Jm.length).toBe(n * B)
            for (let b = 0; b < n; b++)
              expectClose(Jm.subarray(b * B, (b + 1) * B), refs[b]!, 1e-12, `${src}\n${mode} block ${b}`)
            // into an `out` holding stale values (NaN): the same bits (checks off, the entries are
            // stored and `out` is not zeroed; with checks, it is zeroed)
            expect(bj.plan.storesEntries).toBe(!checks && (store ?? backend !== 'interpreter'))
            const stale = new Float64Array(n * B).fill(Number.NaN)
            expect(Array.from(bj.run(n, args, stale))).toEqual(Array.from(Jm))
            if (mode === 'auto') J = Jm
          }
        }
        // the caller's arrays are left as they were
        expect([a.r, a.x, a.s, a.q]).toEqual(before)
        // central differences on two blocks (inputs x, s, q; outputs r, s)
        for (const b of [0, n - 1]) {
          const fd = finiteDifferences(f, blockArgs(a, b), [1, 2, 3], [0, 2])
          expectClose(J.subarray(b * 15, (b + 1) * 15), fd, 1e-6, `${src}\nfinite differences, block ${b}`)
        }
      }
      // the programs include a call on elements and a loop over a block's array
      expect(sources.some((t) => /\n {2}h\(/.test(t))).toBe(true)
      expect(sources.some((t) => t.includes('for i in 0..len(x)'))).toBe(true)
    })
  },
)

describe('blockJacobian', () => {
  const m = compile(
    `fn one(r: f64[], x: f64[], k: i32) {
       r[0] += sin(x[0]) * x[1] + f64(k)
       r[1] += x[0] * x[0] * x[2]
     }
     fn many(r: f64[], x: f64[]) {
       for j in 0..len(r) { r[j] += x[0] * f64(j) + x[1] * x[1] }
     }
     fn whole(r: f64[], x: f64[]) { many(r, x) }
     fn writesK(r: f64[], x: f64[], k: i32) { r[0] += x[0]
       k += 1 }`,
    'cpu',
    false,
  )

  it('chooses the cheaper mode by counting rows and columns, and says so', () => {
    // 2 rows, 3 columns: reverse ⌈2/2⌉·4 = 4 vs forward ⌈3/3⌉·4 = 4 (ties go forward)
    const tie = blockJacobian(m.one!, { sizes: [2, 3, null], inputs: [1] })
    expect(tie.plan.mode).toBe('forward')
    // 6 rows, 2 columns: forward ⌈2/2⌉·3 = 3 < reverse ⌈6/6⌉·8 = 8
    const tall = blockJacobian(m.many!, { sizes: [6, 2], inputs: [1], outputs: [0] })
    expect([tall.plan.mode, tall.plan.width, tall.plan.sweeps]).toEqual(['forward', 2, 1])
    // 1 row, 40 columns: reverse
    const wide = blockJacobian(m.one!, { sizes: [2, 40, null], inputs: [1], outputs: [0] })
    expect(wide.plan.mode).toBe('reverse')
    expect(wide.plan.toString()).toMatch(/block Jacobian of `one` \(2 rows × 40 columns per block\): reverse/)
    expect(wide.plan.toString()).toMatch(/by counts: forward ⌈40\/8⌉·\(1 \+ 8\) = 45, reverse ⌈2\/2⌉·\(2 \+ 2\) = 4/)
    const asked = blockJacobian(m.one!, { sizes: [2, 3, null], inputs: [1], mode: 'reverse' })
    expect(asked.plan.toString()).toMatch(/asked for/)
    // the values: x = (0.5, 2, 3), k = 1 (shared)
    const J = asked.run(1, [new Float64Array(2), Float64Array.of(0.5, 2, 3), 1])
    expectClose(J, [Math.cos(0.5) * 2, Math.sin(0.5), 0, 2 * 0.5 * 3, 0, 0.25], 1e-15)
    expect(asked.run(0, [new Float64Array(0), new Float64Array(0), 1])).toEqual(new Float64Array(0))
  })

  it('with checks, or an f32 derivative, adds into a zeroed `out` (shared memory too); without, stores the entries', () => {
    const text = `fn one(r: f64[], x: f64[], k: i32) {
       r[0] += sin(x[0]) * x[1] + f64(k)
       r[1] += x[0] * x[0] * x[2]
     }
     fn low(r: f64[], x: f32[]) { r[0] += f64(x[0]) * f64(x[1]) }`
    const n = 5
    const x = Float64Array.from({ length: 3 * n }, (_, i) => Math.cos(i + 2))
    const options: BlockJacobianOptions = { sizes: [2, 3, null], inputs: [1], outputs: [0], mode: 'reverse', chunk: 2 }
    const off = blockJacobian(compile(text, 'cpu', false).one!, options)
    const on = blockJacobian(compile(text, 'cpu', true).one!, options)
    expect([off.plan.storesEntries, on.plan.storesEntries]).toEqual([true, false])
    expect(off.plan.toString()).toMatch(/entries stored \(out is not zeroed\)/)
    expect(on.plan.toString()).not.toMatch(/entries stored/)
    const ref = off.run(n, [new Float64Array(2 * n), x, 3])
    const shared = new Float64Array(new SharedArrayBuffer(8 * ref.length)).fill(Number.NaN)
    expect(Array.from(on.run(n, [new Float64Array(2 * n), x, 3], shared))).toEqual(Array.from(ref))
    // reverse with an f32 input: its derivative is converted, so it is added into a zeroed `out`
    const low = blockJacobian(compile(text, 'cpu', false).low!, {
      sizes: [1, 2],
      inputs: [1],
      outputs: [0],
      mode: 'reverse',
    })
    expect(low.plan.storesEntries).toBe(false)
    // the option is checked
    expect(() => blockJacobian(compile(text, 'cpu', false).one!, { ...options, storeEntries: 1 as never })).toThrow(
      /`storeEntries` must be a boolean/,
    )
    const xs = Float32Array.of(0.5, 3, -2, 0.25)
    const J = low.run(2, [new Float64Array(2), xs], new Float64Array(4).fill(9))
    expectClose(J, [3, 0.5, 0.25, -2], 1e-15)
  })

  it('writes into an `out` in shared memory the bits it writes into an ArrayBuffer', () => {
    // 11 blocks in chunks of 4 (a partial last chunk); `out` starts with stale values
    const n = 11
    const x = Float64Array.from({ length: 3 * n }, (_, i) => Math.sin(i + 1) * 2)
    const bj = blockJacobian(m.one!, { sizes: [2, 3, null], inputs: [1], outputs: [0], mode: 'reverse', chunk: 4 })
    const plain = bj.run(n, [new Float64Array(2 * n), x, 3])
    const shared = new Float64Array(new SharedArrayBuffer(8 * plain.length)).fill(7.5)
    expect(bj.run(n, [new Float64Array(2 * n), x, 3], shared)).toBe(shared)
    expect(Array.from(shared)).toEqual(Array.from(plain))
    // again (the zeros are kept between runs), and into a view that ends inside a chunk
    shared.fill(-1)
    bj.run(n, [new Float64Array(2 * n), x, 3], shared)
    expect(Array.from(shared)).toEqual(Array.from(plain))
    const part = shared.subarray(0, 6 * 5).fill(2)
    bj.run(5, [new Float64Array(10), x.subarray(0, 15), 3], part)
    expect(Array.from(part)).toEqual(Array.from(plain.subarray(0, 30)))
    // block 0 by hand: x = (x0, x1, x2), J = [[cos(x0)·x1, sin(x0), 0], [2·x0·x2, 0, x0²]]
    const [x0, x1, x2] = [x[0]!, x[1]!, x[2]!]
    expectClose(plain.subarray(0, 6), [Math.cos(x0) * x1, Math.sin(x0), 0, 2 * x0 * x2, 0, x0 * x0], 1e-15)
  })

  it('on wasm, keeps its chunk buffers in the module memory and uses arguments and `out` living there in place', () => {
    const text = `fn blk(r: f64[], x: f64[], s: f64, ws: f64[]) {
       ws[0] += sin(x[0]) * s
       ws[1] += cos(x[0]) * x[1]
       r[0] += ws[0] * ws[1] + s * s
       r[1] += ws[1] / (1.0 + x[1] * x[1])
     }`
    const options: BlockJacobianOptions = {
      sizes: [2, 2, null, 2],
      inputs: [1, 2],
      outputs: [0],
      workspace: [3],
      chunk: 4,
    }
    const n = 11
    const a = batchedArgs(n, 5)
    const r = a.r,
      x = a.x.subarray(0, 2 * n),
      s = a.s
    const cpu = blockJacobian(compile(text, 'cpu', false).blk!, options)
    const wasm = blockJacobian(compile(text, 'wasm', false).blk!, options)
    const want = cpu.run(n, [r, x, s, null])
    // host arrays in, a host array out: copied through the chunk buffers
    expect(Array.from(wasm.run(n, [r, x, s, null]))).toEqual(Array.from(want))
    // central differences at one block
    const one = compile(text, 'cpu', false).blk!
    const fd = finiteDifferences(one, [r.slice(2, 4), x.slice(2, 4), s[1]!, new Float64Array(2)], [1, 2], [0])
    expectClose(want.subarray(6, 12), fd, 1e-6, 'finite differences')
    // the arguments and out in the module's memory
    const memory = wasm.programs[0]!.core.resident!
    const held = [memory.allocate('f64', r.length), memory.allocate('f64', x.length), memory.allocate('f64', s.length)]
    const out = memory.allocate('f64', want.length)
    held.forEach((h, i) => (h.array as Float64Array).set([r, x, s][i]!))
    const args = () => [held[0]!.array, held[1]!.array, held[2]!.array, null]
    const values = () => held.map((h) => Array.from(h.array))
    const before = values()
    wasm.run(n, args(), out.array as Float64Array)
    expect(Array.from(out.array)).toEqual(Array.from(want))
    // a resident argument the program writes (r) is copied, not written: all are left as they were
    expect(values()).toEqual(before)
    // released, then allocated again by the next run
    wasm.release()
    wasm.release()
    expect(Array.from(wasm.run(n, [r, x, s, null]))).toEqual(Array.from(want))
    for (const h of [...held, out]) h.release()
    // the cpu backend holds nothing of the kind
    expect(() => cpu.release()).not.toThrow()
  })

  it('runs all blocks in one call where it needs no chunk buffer, with the bits of a chunked run (cpu, wasm)', () => {
    const text = `fn blk(r: f64[], x: f64[], s: f64, ws: f64[]) {
       ws[0] += sin(x[0]) * s
       ws[1] += cos(x[0]) * x[1]
       r[0] += ws[0] * ws[1] + s * s
       r[1] += ws[1] / (1.0 + x[1] * x[1])
     }
     fn loose(r: f64[], x: f64[], s: f64, ws: f64[]) {
       for i in 0..2 { ws[i] += x[i] * s }
       r[0] += ws[0] * ws[1]
       r[1] += ws[1] * s
     }`
    const base: BlockJacobianOptions = { sizes: [2, 2, null, 2], inputs: [1, 2], outputs: [0], workspace: [3] }
    const n = 11
    const a = batchedArgs(n, 7)
    const r = a.r,
      x = a.x.subarray(0, 2 * n),
      s = a.s
    const cpu = compile(text, 'cpu', false)
    const whole = blockJacobian(cpu.blk!, base)
    const chunked = blockJacobian(cpu.blk!, { ...base, chunk: 4 })
    // (2 × 3 entries of J per block are its widest: 2³¹ − 1 over 6)
    expect([whole.plan.wholeRuns, whole.plan.maxBlocksPerCall, chunked.plan.wholeRuns]).toEqual([
      true,
      357913941,
      false,
    ])
    expect(whole.plan.toString()).toMatch(/up to 357913941 blocks per call \(no chunk buffers/)
    const want = chunked.run(n, [r, x, s, null])
    expect(Array.from(whole.run(n, [r, x, s, null]))).toEqual(Array.from(want))
    // a view of a longer array, into a stale `out`
    const out = new Float64Array(6 * 5).fill(Number.NaN)
    whole.run(5, [r.subarray(4, 14), x.subarray(4, 14), s.subarray(2, 7), null], out)
    expect(Array.from(out)).toEqual(Array.from(want.subarray(12, 42)))
    // central differences at one block
    const fd = finiteDifferences(cpu.blk!, [r.slice(2, 4), x.slice(2, 4), s[1]!, new Float64Array(2)], [1, 2], [0])
    expectClose(want.subarray(6, 12), fd, 1e-6, 'finite differences')
    // chunks where a buffer is needed: with checks (derivatives in arrays), or a workspace read at
    // an index that is not a literal (kept as an array)
    const checked = blockJacobian(compile(text, 'cpu', true).blk!, base)
    expect(checked.plan.wholeRuns).toBe(false)
    expectClose(checked.run(n, [r, x, s, null]), want, 1e-15)
    const loose = blockJacobian(cpu.loose!, base)
    expect(loose.plan.wholeRuns).toBe(false)
    expect(Array.from(loose.run(n, [r, x, s, null]))).toEqual(
      Array.from(blockJacobian(cpu.loose!, { ...base, chunk: 3 }).run(n, [r, x, s, null])),
    )
    // wasm: one call where the arguments and `out` live in the module's memory, chunks otherwise
    const wasm = blockJacobian(compile(text, 'wasm', false).blk!, base)
    expect(wasm.plan.wholeRuns).toBe(true)
    expect(Array.from(wasm.run(n, [r, x, s, null]))).toEqual(Array.from(want))
    const memory = wasm.programs[0]!.core.resident!
    const held = [memory.allocate('f64', r.length), memory.allocate('f64', x.length), memory.allocate('f64', s.length)]
    const J = memory.allocate('f64', want.length)
    held.forEach((h, i) => (h.array as Float64Array).set([r, x, s][i]!))
    const args = () => [held[0]!.array, held[1]!.array, held[2]!.array, null]
    ;(J.array as Float64Array).fill(Number.NaN)
    wasm.run(n, args(), J.array as Float64Array)
    expect(Array.from(J.array)).toEqual(Array.from(want))
    // (some in memory, some not: chunks)
    ;(J.array as Float64Array).fill(Number.NaN)
    wasm.run(n, [held[0]!.array, x, held[2]!.array, null], J.array as Float64Array)
    expect(Array.from(J.array)).toEqual(Array.from(want))
    expect(Array.from(held[1]!.array)).toEqual(Array.from(x))
    for (const h of [...held, J]) h.release()
    wasm.release()
  })

  it('rejects bad shapes, arguments and programs with clear errors', () => {
    const code = (f: () => unknown) => {
      try {
        f()
      } catch (e) {
        return TenetError.isInstance(e) ? e.code : String(e)
      }
      return 'no error'
    }
    expect(code(() => blockJacobian(m.one!, { sizes: [2, 3] }))).toBe('ad/argument')
    expect(code(() => blockJacobian(m.one!, { sizes: [2, 0, null] }))).toBe('ad/argument')
    expect(code(() => blockJacobian(m.one!, { sizes: [2, 3, null], inputs: [2] }))).toBe('ad/argument')
    expect(code(() => blockJacobian(m.writesK!, { sizes: [1, 1, null] }))).toBe('ad/argument')
    expect(code(() => blockJacobian(m.whole!, { sizes: [2, 2] }))).toBe('ad/unsupported')
    const ok = blockJacobian(m.one!, { sizes: [2, 3, null] })
    expect(code(() => ok.run(2, [new Float64Array(4), new Float64Array(5), 1]))).toBe('ad/argument')
    expect(code(() => ok.run(2, [new Float64Array(4), new Float64Array(6), new Float64Array(2)]))).toBe('ad/argument')
    expect(code(() => ok.run(1, [new Float64Array(2), new Float64Array(3), 1], new Float64Array(5)))).toBe(
      'ad/argument',
    )
  })
})
