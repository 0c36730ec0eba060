import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from '@tenet/backend-wasm'
import { checkpointedGradient, type ArrayStep, type StateMemory } from './index.js'
import { tenetStep } from './tenet-step.js'

/** One explicit diffusion step on a periodic 1-D grid: dest += F(src). */
const diffusionSource = `
fn diffusion(dest: f64[], src: f64[], c: f64) {
  n: i32 <- len(src)
  for i in 0..n {
    dest[i] += src[i] + c * (src[(i + 1) % n] + src[(i + n - 1) % n] - 2.0 * src[i])
  }
  n -> len(src)
}`

/**
 * A nonlinear step with an array ancilla of `m` elements: dest[i] += src[i] + 0.1·sin(src[i+1])·src[i−1]
 * + 10⁻³·Σ_j tmp[j] (tmp = src[j mod n]·(1/m)). A large `m` makes the first call of each of its
 * programs grow the wasm memory (its heap lies above the resident blocks), detaching their views.
 */
const ancillaSource = (m: number) => `
fn step(dest: f64[], src: f64[], c: f64) {
  n: i32 <- len(src)
  routine {
    tmp: f64[] <- zeros(${m})
    for j in 0..${m} { tmp[j] += src[j % n] * ${1 / m} }
    acc <- 0.0
    for j in 0..${m} { acc += tmp[j] }
  }
  for i in 0..n {
    dest[i] += src[i] + c * sin(src[(i + 1) % n]) * src[(i + n - 1) % n] + 0.001 * acc
  }
  ~routine
  n -> len(src)
}`

const vector = (n: number, f: (i: number) => number) => Float64Array.from({ length: n }, (_, i) => f(i))

/** A fresh wasm backend (its own memory, one page at first) and the cpu backend in one registry. */
function compileBoth(source: string, checks: boolean) {
  const registry = createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend())
  const on = (backend: string) => {
    const m = compileModule(parse(source), { registry, backend, checks })
    return Object.values(m)[0]!
  }
  return { cpu: on('cpu'), wasm: on('wasm') }
}

/** The step's memory, counting what store-all allocates and gives back. */
function counted(memory: StateMemory) {
  const log = { allocated: 0, released: 0 }
  const wrapped: StateMemory = {
    allocate(elem, n) {
      const block = memory.allocate(elem, n)
      log.allocated += n
      return {
        get array() {
          return block.array
        },
        release() {
          log.released += n
          block.release()
        },
      }
    },
  }
  return { wrapped, log }
}

describe('a Tenet step compiled on the wasm backend', () => {
  const n = 50,
    T = 60,
    c = 0.2
  const s0 = vector(n, (i) => Math.exp(-((i - 20) ** 2) / 30) + 0.1 * Math.sin(i))
  const seed = vector(n, (i) => Math.cos(i / 5))
  const schedules = [
    { schedule: 'store-all' },
    { schedule: 'bennett', k: 4 },
    { schedule: 'knill', budget: 8 },
    { schedule: 'binomial', budget: 5 },
    { schedule: 'recompute-all' },
  ] as const

  it.each([true, false])(
    'runs under every schedule with the cpu step’s s_T and gradient, bit for bit (checks %s)',
    (checks) => {
      const { cpu, wasm } = compileBoth(diffusionSource, checks)
      for (const o of schedules) {
        const a = checkpointedGradient(cpu, s0, T, { ...o, seed, args: [c] })
        const b = checkpointedGradient(wasm, s0, T, { ...o, seed, args: [c] })
        expect([...b.final], o.schedule).toEqual([...a.final])
        expect([...b.gradient], o.schedule).toEqual([...a.gradient])
        expect(b.cost, o.schedule).toMatchObject({ ...a.cost, wallTimeMs: b.cost.wallTimeMs })
      }
    },
  )

  it('carries its backend memory, in which store-all keeps its states (given back after the run); `memory: host` does not', () => {
    const { cpu, wasm } = compileBoth(diffusionSource, false)
    expect(tenetStep(cpu, [c]).memory).toBeUndefined()
    const step = tenetStep(wasm, [c])
    expect(step.memory).toBeDefined()
    const { wrapped, log } = counted(step.memory!)
    const withLog: ArrayStep = { ...step, memory: wrapped }
    const resident = checkpointedGradient(withLog, s0, T, { schedule: 'store-all', seed })
    expect(log).toEqual({ allocated: n * (T + 3), released: n * (T + 3) })
    const host = checkpointedGradient(withLog, s0, T, { schedule: 'store-all', seed, memory: 'host' })
    expect(log.allocated).toBe(n * (T + 3))
    const reference = checkpointedGradient(cpu, s0, T, { schedule: 'store-all', seed, args: [c] })
    // the results are host arrays, valid after the block went back and was written over
    const junk = step.memory!.allocate('f64', n * (T + 3))
    const a = junk.array
    new Float64Array(a.buffer, a.byteOffset, n * (T + 3)).fill(Number.NaN)
    junk.release()
    for (const r of [resident, host]) {
      expect([...r.gradient]).toEqual([...reference.gradient])
      expect([...r.final]).toEqual([...reference.final])
    }
    // s₀ and the seed as passed
    expect(s0[20]).toBe(1 + 0.1 * Math.sin(20))
    expect(seed[0]).toBe(1)
  })

  it('store-all in backend memory that grows during the calls (an ancilla above the states) keeps the gradient', () => {
    for (const checks of [true, false]) {
      // 2¹⁷ doubles (1 MiB) of ancilla against a one-page memory: the first forward call grows it,
      // and so does the first adjoint call (a program of its own, with the same ancilla)
      const { cpu, wasm } = compileBoth(ancillaSource(1 << 17), checks)
      const step = tenetStep(wasm, [c])
      let grown = 0
      let last: ArrayBufferLike | undefined
      const watch: StateMemory = {
        allocate(elem, k) {
          const block = step.memory!.allocate(elem, k)
          return {
            get array() {
              const a = block.array
              if (last && a.buffer !== last) grown++
              last = a.buffer
              return a
            },
            release: () => block.release(),
          }
        },
      }
      const r = checkpointedGradient({ ...step, memory: watch }, s0, 8, { schedule: 'store-all', seed })
      expect(grown, `checks ${checks}`).toBeGreaterThan(0)
      const ref = checkpointedGradient(cpu, s0, 8, { schedule: 'store-all', seed, args: [c] })
      expect([...r.final]).toEqual([...ref.final])
      for (let i = 0; i < n; i++) expect(Math.abs(r.gradient[i]! - ref.gradient[i]!)).toBeLessThan(1e-14)
    }
  })
})

describe('store-all in a step’s own memory (views detached between calls)', () => {
  /** dst[i] += src[i] + 0.1·sin(0.05·k·src[i+1])·src[i−1] (periodic), with its hand vjp. */
  const forward = (dst: Float64Array, src: Float64Array, k: number) => {
    const n = src.length
    for (let i = 0; i < n; i++)
      dst[i]! += src[i]! + 0.1 * Math.sin(0.05 * k * src[(i + 1) % n]!) * src[(i + n - 1) % n]!
  }
  const vjp = (srcBar: Float64Array, src: Float64Array, dstBar: Float64Array, k: number) => {
    const n = src.length
    for (let i = 0; i < n; i++) {
      const r = (i + 1) % n,
        l = (i + n - 1) % n,
        g = dstBar[i]!
      srcBar[i]! += g
      srcBar[r]! += g * 0.1 * 0.05 * k * Math.cos(0.05 * k * src[r]!) * src[l]!
      srcBar[l]! += g * 0.1 * Math.sin(0.05 * k * src[r]!)
    }
  }
  const n = 13,
    T = 30
  const s0 = vector(n, (i) => Math.cos(i) + 0.2)
  const seed = vector(n, (i) => Math.sin(i / 3))

  /**
   * A memory like wasm's: one buffer that "grows" (its contents move to a new buffer and the old
   * one is detached) when `grow()` is called, as a call whose heap needs more memory does.
   */
  function movingMemory() {
    let buffer = new ArrayBuffer(8 * 4096)
    let at = -1
    const memory: StateMemory = {
      allocate(_elem, k) {
        at = 64
        return {
          get array() {
            return new Float64Array(buffer, at, k)
          },
          release() {
            at = -1
          },
        }
      },
    }
    return {
      memory,
      grow() {
        buffer = structuredClone(buffer, { transfer: [buffer] })
      },
      live: () => at >= 0,
    }
  }

  it('makes its views anew after a grow in either sweep, with the host run’s results to the last bit', () => {
    const host = checkpointedGradient({ forward, vjp }, s0, T, { schedule: 'store-all', seed })
    for (const growAt of [
      { forward: [1, 17], adjoint: [] },
      { forward: [], adjoint: [T, 9, 1] },
      { forward: [T], adjoint: [T] },
    ]) {
      const m = movingMemory()
      const step: ArrayStep = {
        memory: m.memory,
        forward(dst, src, k) {
          expect(dst.length).toBe(n)
          forward(dst, src, k)
          if (growAt.forward.includes(k as never)) m.grow()
        },
        vjp(srcBar, src, dstBar, k) {
          expect(srcBar.length + src.length + dstBar.length).toBe(3 * n)
          vjp(srcBar, src, dstBar, k)
          if (growAt.adjoint.includes(k as never)) m.grow()
        },
      }
      const r = checkpointedGradient(step, s0, T, { schedule: 'store-all', seed })
      expect([...r.final], JSON.stringify(growAt)).toEqual([...host.final])
      expect([...r.gradient], JSON.stringify(growAt)).toEqual([...host.gradient])
      expect(m.live()).toBe(false)
    }
  })

  it('keeps the states on the host when the block does not fit the memory (a RangeError), and gives a failed run’s block back', () => {
    const host = checkpointedGradient({ forward, vjp }, s0, T, { schedule: 'store-all', seed })
    const full: StateMemory = {
      allocate() {
        throw new RangeError('does not fit')
      },
    }
    const r = checkpointedGradient({ forward, vjp, memory: full }, s0, T, { schedule: 'store-all', seed })
    expect([...r.gradient]).toEqual([...host.gradient])
    const m = movingMemory()
    const failing: ArrayStep = {
      memory: m.memory,
      forward(dst, src, k) {
        if (k === 5) throw new Error('step 5 fails')
        forward(dst, src, k)
      },
      vjp,
    }
    expect(() => checkpointedGradient(failing, s0, T, { schedule: 'store-all', seed })).toThrow('step 5 fails')
    expect(m.live()).toBe(false)
  })
})
