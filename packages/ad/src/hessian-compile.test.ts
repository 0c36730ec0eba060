/**
 * What the first `hessian` of a function compiles: one program, the second-order program, and in it
 * only the functions its entry calls. (The gradient program it is made from is checked and
 * inverted for the tangent transform, not compiled; the adjoint is not compiled for the argument
 * checks; the functions that the dead-update pass's specialised copies left uncalled are dropped.)
 * The Hessians stay those of central differences of the exact gradient.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, type BackendSpec, type FunctionDef, type Program } from '@tenet/ir'
import { walk } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { compileSecondOrder, graphEmbeddingArgs, graphEmbeddingSource, grad, hessian } from './index.js'
import { checkGenerated, infoOf, reachableFrom } from './compile.js'
import { expectClose } from './test-util.js'

/** `spec` under the name `counting`, recording the functions of every program it compiles. */
function counting(spec: BackendSpec, compiled: string[][]): BackendSpec {
  return {
    ...spec,
    name: 'counting',
    priority: 100,
    doCompile: (program: Program, inverses, options) => {
      compiled.push([...program.functions.keys()])
      return spec.doCompile(program, inverses, options)
    },
  }
}

/** The callees (calls and uncalls) of `g` among `names`. */
function callees(g: FunctionDef, names: Set<string>): Set<string> {
  const out = new Set<string>()
  walk(g.body, (s) => {
    if (s.kind === 'callstmt' && names.has(s.callee)) out.add(s.callee)
  })
  return out
}

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['wasm', false],
  ['interpreter', true],
] as const)('the first hessian of the graph embedding on %s (checks %s)', (backend, checks) => {
  it('compiles one program, whose functions the entry all reaches, and gives the Hessian of central differences', () => {
    const compiled: string[][] = []
    const spec = { cpu: cpuBackend, wasm: wasmBackend, interpreter: interpreterBackend }[backend]
    const registry = createRegistry().registerBackend(counting(spec, compiled))
    const m = compileModule(parse({ text: graphEmbeddingSource, name: 'ge' }), { registry, checks })
    const f = m.embedding_loss!
    expect(compiled).toHaveLength(1)
    const k = 2
    const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(1.3 * i + 0.2))
    const args = graphEmbeddingArgs(x, k)
    const H = hessian(f, args, { loss: 0, wrt: [1], width: 7 })
    // (f's own module, then the second-order program alone)
    expect(compiled).toHaveLength(2)
    const so = compileSecondOrder(f, 0, 7, [1])
    const names = new Set(so.functions.map((g) => g.name))
    expect(compiled[1]!.slice().sort()).toEqual([...names].sort())
    const entry = so.program.ir.name
    const reached = new Set([entry])
    for (let grew = true; grew; ) {
      grew = false
      for (const g of so.functions)
        if (reached.has(g.name))
          for (const c of callees(g, names))
            if (!reached.has(c)) {
              reached.add(c)
              grew = true
            }
    }
    expect([...reached].sort()).toEqual([...names].sort())
    // central differences of the exact gradient, column by column
    const n = x.length
    const h = 1e-5
    const fd = new Float64Array(n * n)
    const g = grad(f, { loss: 0 })
    for (let j = 0; j < n; j++) {
      const at = (d: number) => {
        const y = x.slice()
        y[j]! += d
        return g(...graphEmbeddingArgs(y, k))[1] as Float64Array
      }
      const p = at(h),
        q = at(-h)
      for (let i = 0; i < n; i++) fd[i * n + j] = (p[i]! - q[i]!) / (2 * h)
    }
    expectClose(H, fd, 1e-6, 'H vs FD')
  })
})

describe('checkGenerated and reachableFrom', () => {
  const registry = createRegistry().registerBackend(cpuBackend)
  const m = compileModule(
    parse({
      text: `
fn a(x: f64) { x += 1.0 }
fn b(x: f64) { ~a(x) }
fn c(x: f64) { b(x) }
fn d(x: f64) { a(x) }`,
      name: 'r',
    }),
    { registry },
  )
  const info = infoOf(m.c!)
  const functions = [...info.program.functions.values()]

  it('reachableFrom keeps the functions an entry reaches by calls and uncalls, in their order', () => {
    expect(reachableFrom(functions, 'c').map((g) => g.name)).toEqual(['a', 'b', 'c'])
    expect(reachableFrom(functions, 'd').map((g) => g.name)).toEqual(['a', 'd'])
    expect(reachableFrom(functions, 'a').map((g) => g.name)).toEqual(['a'])
  })

  it('checkGenerated checks and inverts without compiling: its functions carry the IR and throw when called', () => {
    const checked = checkGenerated(info, registry, functions)
    const c = checked.c!
    expect(c.ir.name).toBe('c')
    expect(c.inverse.ir.name).toBe('c')
    expect(() => c(1)).toThrow(/was checked as IR for a transform, not compiled/)
    // a program that breaks the rules still fails its check
    const bad: FunctionDef = {
      ...functions[0]!,
      name: 'e',
      body: parse({ text: 'fn e(x: f64) { x += x }', name: 'e' }).functions[0]!.body,
    }
    expect(() => checkGenerated(info, registry, [bad])).toThrow()
  })
})
