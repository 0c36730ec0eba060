/**
 * Edges of the aliasing rule across reentrant calls (\`running-calls.ts\` of @tenet/reversible,
 * review 19a): a stack overflow in a recursion through a host function leaves no call "running"
 * (the wrapper puts the count back by a store, not by a call that could overflow again) and is
 * \`runtime/stack-overflow\`, wherever the stack ends; a resident array of a running call is
 * refused to a nested call (while the memory has not grown: a grown memory detaches the running
 * call's view, a documented limit); recursion on disjoint arrays and a failed nested call caught by
 * the host function run as the interpreter.
 */
import { describe, expect, it } from 'vitest'
import { TenetError, createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from './index.js'

const registry = createRegistry()
  .registerBackend(cpuBackend)
  .registerBackend(wasmBackend)
  .registerBackend(interpreterBackend)
type M = Record<string, (...a: unknown[]) => unknown[]> & { [k: string]: any }
const code = (f: () => unknown): string => {
  try {
    f()
    return 'ok'
  } catch (e) {
    return e instanceof TenetError ? e.code : String(e).slice(0, 60)
  }
}

const pad = (k: number, f: () => unknown): unknown => (k === 0 ? f() : [pad(k - 1, f)][0])
/** The deepest `pad` this stack holds (to run a recursion a few hundred levels from the stack's end). */
function maxPad(): number {
  let lo = 0,
    hi = 1 << 20
  while (lo + 1 < hi) {
    const mid = (lo + hi) >> 1
    try {
      pad(mid, () => 0)
      lo = mid
    } catch {
      hi = mid
    }
  }
  return lo
}

describe('running calls across a stack overflow', () => {
  // (first in the file: the desync shows on a cold wrapper, before V8 inlines `leaveRunning`)
  it('after a recursion through a host function overflows the stack, a sequential call on the outermost array is not call/overlap (cpu, checks on)', () => {
    let m: M = {} as M
    const host = (v: number) => {
      m.f!(new Float64Array(1), v)
      return v
    }
    m = compileModule(
      parse(`fn inc(y: f64[], k: i32) { y[k] += 10.0 }\nfn f(y: f64[], x: f64) { y[0] += \${0}(x) }`, [host]),
      {
        registry,
        backend: 'cpu',
      },
    ) as M
    const other = compileModule(parse('fn g(y: f64[]) { y[0] += 1.0 }'), { registry, backend: 'cpu' }) as M
    const P = maxPad()
    const after: string[] = []
    const ys: Float64Array[] = []
    for (let k = 0; k < 2; k++) {
      const y = new Float64Array(1)
      ys.push(y)
      // the overflow itself: runtime/stack-overflow (or whatever the stack allows), caught here
      code(() => pad(P - 3000 + k * 13, () => m.f!(y, 1)))
      // nothing runs now: every earlier array is free again, in this module and any other
      for (const a of ys)
        after.push(
          code(() => m.inc!(a, 0)),
          code(() => other.g!(a)),
        )
    }
    expect(after.filter((c) => c !== 'ok')).toEqual([])
  })
})

describe('resident arrays of a running call after the memory grows', () => {
  const src = `fn inc(y: f64[], k: i32) { y[k] += 10.0 }
fn big(s: f64, n: i32) {
  t: f64[] <- zeros(n)
  t[0] += 1.0
  s += t[0]
  t[0] -= 1.0
  t -> zeros(n)
}
fn f(y: f64[], x: f64[], z: f64[], k: i32, n: i32) {
  for i in 0..n { y[k] += 1.0 ; z[i] += \${0}(x[i]) }
}`
  const run = (grow: boolean): string => {
    let m: M = {} as M
    let r: { array: Float64Array } | undefined
    const host = (v: number) => {
      if (grow) m.big!(0, 1 << 20) // an 8 MiB ancilla: the memory grows, the running call's view detaches
      m.inc!(r!.array, 1) // the running call's written array, through a fresh view
      return v
    }
    m = compileModule(parse(src, [host]), { registry, backend: 'wasm' }) as M
    r = m.f!.core.resident!.allocate('f64', 3) as unknown as { array: Float64Array }
    return code(() => m.f!(r!.array, Float64Array.of(1, 2, 3), new Float64Array(3), 1, 3))
  }
  it('refused while the memory has not grown', () => {
    expect(run(false)).toBe('call/overlap')
  })
})

describe('what holds', () => {
  it('a recursion through a host function on disjoint arrays (the read-only x shared) runs as the interpreter', () => {
    const src = `fn f(y: f64[], x: f64[], z: f64[], k: i32, n: i32) {
  for i in 0..n { y[k] += 1.0 ; z[i] += \${0}(x[i]) }
}`
    const go = (backend: string, checks: boolean) => {
      let m: M = {} as M
      let lvl = 0
      const x = Float64Array.of(1, 2, 3)
      const host = (v: number) => {
        if (lvl >= 3) return v
        lvl++
        const z = new Float64Array(3)
        m.f!(new Float64Array(3), x, z, 1, 3)
        lvl--
        return v + z[0]!
      }
      m = compileModule(parse(src, [host]), { registry, backend, checks }) as M
      const y = new Float64Array(3),
        z = new Float64Array(3)
      m.f!(y, x, z, 1, 3)
      return JSON.stringify([Array.from(y), Array.from(z)])
    }
    for (const checks of [true, false]) {
      const want = go('interpreter', checks)
      expect(go('cpu', checks)).toBe(want)
      expect(go('wasm', checks)).toBe(want)
    }
  })
  it('a nested call that fails (caught by the host function) leaves nothing running; the outer call continues', () => {
    for (const backend of ['interpreter', 'cpu', 'wasm']) {
      let m: M = {} as M
      const y = new Float64Array(3)
      const seen: string[] = []
      const host = (v: number) => {
        seen.push(code(() => m.inc!(y, 1))) // overlap: refused
        seen.push(code(() => m.inc!(new Float64Array(1), 5))) // out of bounds inside the nested call
        return v
      }
      m = compileModule(
        parse(`fn inc(y: f64[], k: i32) { y[k] += 10.0 }\nfn f(y: f64[], x: f64) { y[0] += \${0}(x) }`, [host]),
        { registry, backend },
      ) as M
      m.f!(y, 2)
      expect(seen, backend).toEqual(['call/overlap', seen[1]])
      expect(seen[1], backend).not.toBe('ok')
      expect(Array.from(y)).toEqual([2, 0, 0])
      expect(code(() => m.inc!(y, 1))).toBe('ok')
    }
  })
})

describe('the wrapper catch itself at the end of the stack (pre-existing, same place)', () => {
  it('a recursion through a host function that overflows is runtime/stack-overflow (not a SyntaxError from the catch’s own regex) and restores the outermost array, wherever the stack ends', () => {
    for (const backend of ['interpreter', 'wasm']) {
      let m: M = {} as M
      const host = (v: number) => {
        m.f!(new Float64Array(1), v)
        return v
      }
      m = compileModule(parse('fn f(y: f64[], x: f64) {\n  y[0] += 1.0\n  y[0] += ${0}(x)\n}', [host]), {
        registry,
        backend,
      }) as M
      const P = maxPad()
      const got: string[] = []
      for (let k = 0; k < 4; k++) {
        const y = new Float64Array(1)
        const c = code(() => pad(P - 3000 + k * 13, () => m.f!(y, 1)))
        got.push(`${c} y=${y[0]}`)
      }
      // (the regex test of the catch, \`/call stack/i.test(e.message)\`, can itself overflow: a
      // SyntaxError escapes before \`depth--\` and the restore of the snapshots)
      expect(got, backend).toEqual(got.map(() => 'runtime/stack-overflow y=0'))
    }
  })
})
