/**
 * Exported entries (see \`ownEntry\` and \`returnedParam\` in codegen.ts): every entry returns the
 * final value of its last scalar parameter that is not passed through, instead of storing it; a
 * function of a closed module that no function calls is its own entry (one call into wasm, no
 * thunk), and the others keep their thunks. Random programs of f64, f32, i32 and bool scalars and
 * an array, in every order of parameters, run forwards and backwards as the interpreter runs them,
 * with checks on and off: called and uncalled functions, closed modules and a module that grows
 * its memory (whose thunks also set the heap top).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { createWasmBackend, type WasmProgram } from './index.js'
import { exact } from './test-util.js'
import { mulberry32 as rng } from '@tenet/testing'

/** Compiles `text` on the wasm backend (and the interpreter), returning the module and the wasm program. */
function compile(text: string, backend: 'wasm' | 'interpreter', checks: boolean) {
  const spec = createWasmBackend()
  let program: WasmProgram | undefined
  const wasm = {
    ...spec,
    doCompile: (...a: Parameters<typeof spec.doCompile>) => {
      program = spec.doCompile(...a) as WasmProgram
      return program
    },
  }
  const m = compileModule(parse({ text, name: 'entries' }), {
    registry: createRegistry().registerBackend(wasm).registerBackend(interpreterBackend),
    backend,
    checks,
  })
  return { m, program }
}

/** The parameters a random program draws from, with an update of each written one and an argument. */
const PARAMS = [
  { decl: 'a: f64', update: 'a += x[0] * c', arg: (r: () => number) => r() * 4 - 2 },
  { decl: 'b: f32', update: 'b += f32(c) * f32(0.5)', arg: (r: () => number) => Math.fround(r() * 4 - 2) },
  { decl: 'k: i32', update: 'k += i32(c * 3.0)', arg: (r: () => number) => Math.floor(r() * 20) - 10 },
  { decl: 't: bool', update: 't ^= c > 0.0', arg: (r: () => number) => r() < 0.5 },
  { decl: 'x: f64[]', update: 'x[1] += c * x[0]', arg: (r: () => number) => Float64Array.of(r(), r() - 0.5, r()) },
  { decl: 'c: f64', update: '', arg: (r: () => number) => r() * 2 - 1 },
]

/**
 * A random function \`f\`: its parameters in a random order, a random set of them written, and a
 * caller \`g\` of it whose extra parameter \`u\` it writes (\`f\` padded past the inliner's limit of
 * statements, and called in a loop, which \`inlineOnceCalls\` leaves alone, so that the call stays one).
 */
function randomFunctions(r: () => number) {
  const order = PARAMS.map((p) => ({ p, key: r() }))
    .sort((u, v) => u.key - v.key)
    .map((u) => u.p)
  const updates = order.filter((p) => p.update && r() < 0.7).map((p) => p.update)
  if (updates.length === 0) updates.push('a += c')
  const decls = order.map((p) => p.decl).join(', ')
  const f = `fn f(${decls}) {\n  ${updates.join('\n  ')}\n}`
  const padded = `fn f(${decls}) {\n  ${[...updates, ...Array(17).fill('x[2] += c')].join('\n  ')}\n}`
  const names = order.map((p) => p.decl.split(':')[0]).join(', ')
  return {
    f,
    called: `${padded}\nfn g(${decls}, u: f64) {\n  for j in 0..1 { f(${names}) }\n  u += c\n}`,
    args: (r2: () => number) => order.map((p) => p.arg(r2)),
  }
}

/** The results of a forward and a backward run of \`f\`, as comparable text. */
function runs(f: ((...a: unknown[]) => unknown[]) & { inverse(...a: unknown[]): unknown[] }, args: unknown[]): string {
  const fwd = f(...args)
  const back = f.inverse(...fwd)
  return JSON.stringify(
    [fwd, back].map((r) => r.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v)))),
  )
}

describe('exported entries of wasm functions', () => {
  for (const checks of [false, true]) {
    it(`return the last written scalar and store the others as the interpreter computes them, checks ${checks ? 'on' : 'off'}`, () => {
      const r = rng(checks ? 29 : 3)
      for (let n = 0; n < 12; n++) {
        const fs = randomFunctions(r)
        // uncalled: its own entry (and its inverse); called by another function: behind a thunk
        // (\`g\` and its inverse are their own entries); a module that grows its memory (an
        // array ancilla): thunks that set the heap top
        const grows =
          'fn h(y: f64, n: i32) {\n  w: f64[] <- zeros(n)\n  w[0] += 1.0\n  y += w[0]\n  w[0] -= 1.0\n  w -> zeros(n)\n}'
        const texts = [
          { text: fs.f, own: 2 },
          { text: fs.called, own: 2 },
          { text: `${fs.f}\n${grows}`, own: 0 },
        ]
        for (const { text, own } of texts) {
          const { m: wasm, program } = compile(text, 'wasm', checks)
          const { m: interp } = compile(text, 'interpreter', checks)
          expect(program!.ownEntries, text).toBe(own)
          const seed = Math.floor(r() * 1e9)
          const want = runs(interp.f! as never, fs.args(rng(seed)))
          expect(runs(wasm.f! as never, fs.args(rng(seed))), text).toBe(want)
        }
      }
    })
  }
})
