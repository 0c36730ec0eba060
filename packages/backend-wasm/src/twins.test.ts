import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printStmts, type Stmt } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend, type WasmProgram } from './index.js'
import { scheduleTwins, twinLocals } from './twins.js'
import { exact } from './test-util.js'

let lastTwins = -1
const compile = (text: string, backend: string, twins = true) => {
  const spec = createWasmBackend({ twins })
  const wasm = {
    ...spec,
    doCompile: (...a: Parameters<typeof spec.doCompile>) => {
      const p = spec.doCompile(...a) as WasmProgram
      lastTwins = p.twinLocals
      return p
    },
  }
  return compileModule(parse({ text, name: 'twins' }), {
    registry: createRegistry().registerBackend(cpuBackend).registerBackend(wasm).registerBackend(interpreterBackend),
    backend,
    checks: false,
  })
}

/** Two rows of one computation (as a vector adjoint's), each row's updates apart from its twin's. */
const rows = `
fn f(x: f64[], out: f64[], c: f64) {
  a0 <- 0.0
  a1 <- 0.0
  b0 <- 0.0
  b1 <- 0.0
  a0 += x[0] * c
  a1 += a0 * x[2] + c
  a1 += a0 / (1.5 + x[3] * x[3])
  b0 += x[1] * c
  b1 += b0 * x[2] + c
  b1 += b0 / (1.5 + x[3] * x[3])
  out[0] += a1 * a0
  out[1] += b1 * b0
  b1 -= b0 / (1.5 + x[3] * x[3])
  b1 -= b0 * x[2] + c
  b0 -= x[1] * c
  a1 -= a0 / (1.5 + x[3] * x[3])
  a1 -= a0 * x[2] + c
  a0 -= x[0] * c
  b1 -> 0.0
  b0 -> 0.0
  a1 -> 0.0
  a0 -> 0.0
}`

const body = (text: string): Stmt[] => {
  const m = compileModule(parse({ text, name: 'twins' }), {
    registry: createRegistry().registerBackend(cpuBackend),
    backend: 'cpu',
  })
  return Object.values(m)[0]!.ir.body
}

describe('twin statements', () => {
  it('are moved next to each other where they commute with what they pass (printed IR)', () => {
    const before = body(rows)
    const after = scheduleTwins(before)
    expect(printStmts(after, 0)).toBe(
      [
        'a0 <- 0.0',
        'a1 <- 0.0',
        'b0 <- 0.0',
        'b1 <- 0.0',
        'a0 += x[0] * c',
        'b0 += x[1] * c',
        'a1 += a0 * x[2] + c',
        'b1 += b0 * x[2] + c',
        'a1 += a0 / (1.5 + x[3] * x[3])',
        'b1 += b0 / (1.5 + x[3] * x[3])',
        'out[0] += a1 * a0',
        'out[1] += b1 * b0',
        'a1 -= a0 / (1.5 + x[3] * x[3])',
        'b1 -= b0 / (1.5 + x[3] * x[3])',
        'a1 -= a0 * x[2] + c',
        'b1 -= b0 * x[2] + c',
        'a0 -= x[0] * c',
        'b0 -= x[1] * c',
        'b1 -> 0.0',
        'b0 -> 0.0',
        'a1 -> 0.0',
        'a0 -> 0.0',
      ].join('\n'),
    )
    // the pairs held in f64x2 locals: (a0, b0) and (a1, b1)
    const held = twinLocals(after)
    expect(held.get('a0')).toEqual({ partner: 'b0', lane: 0 })
    expect(held.get('b1')).toEqual({ partner: 'a1', lane: 1 })
  })

  it('stay where a statement between writes what the twin reads', () => {
    const text = `
fn f(x: f64[], c: f64) {
  a <- 0.0
  b <- 0.0
  a += x[0] * c
  c += 1.0
  b += x[1] * c
  x[2] += a + b
  b -= x[1] * c
  c -= 1.0
  a -= x[0] * c
  b -> 0.0
  a -> 0.0
}`
    const before = printStmts(body(text), 0)
    expect(printStmts(scheduleTwins(body(text)), 0)).toBe(before)
  })

  it('give the scalar code’s bits with their locals held in f64x2 locals (cpu, interpreter, wasm without twins)', () => {
    const twins = compile(rows, 'wasm')
    // (four locals in f, four in its inverse)
    expect(lastTwins).toBe(8)
    const plain = compile(rows, 'wasm', false)
    expect(lastTwins).toBe(0)
    const cpu = compile(rows, 'cpu'),
      interp = compile(rows, 'interpreter')
    for (const seed of [1, 2, 3, 4]) {
      const x = Float64Array.from({ length: 4 }, (_, i) => Math.sin(seed * 7.1 + i * 1.3) * 3)
      const out = [cpu, interp, plain, twins].map((m) => {
        const o = new Float64Array(2)
        m.f!.core(x.slice(), o, 0.37 * seed)
        return Array.from(o, exact)
      })
      for (const o of out.slice(1)) expect(o).toEqual(out[0])
    }
  })
})
