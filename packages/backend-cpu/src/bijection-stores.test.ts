/**
 * What the cpu backend stores and loads around bijection calls: a value a bijection call stores
 * that a later statement of the run rewrites unread is not stored (see `Shared.overwrittenBy` of
 * `@tenet/ir`), and a loop keeps an element that it passes only as an `in` argument (θ of ROT)
 * as an element it reads, never stored back, or does not load it at all where the lowering reads
 * it only through tables (see `promotableElements`).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

function body(m: Record<string, unknown>, name: string, inverse = false): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, inverse)
}

type Run = ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }

// two rotations of overlapping rows per column, as the unroll-and-jam of a Givens sweep leaves
// them: the second reads x[i + m·l], which the first wrote, and writes it again
const jammed = `
fn two(x: f64[], t: f64[], i: i32, m: i32, n: i32, k: i32) {
  for l in 0..n {
    ROT(x[i + m * l], x[i + 1 + m * l], t[k])
    ROT(x[i - 1 + m * l], x[i + m * l], t[k + 1])
  }
}
fn swap_then_add(x: f64[], y: f64[], j: i32) {
  SWAP(x[j], y[j])
  x[j] += 2.0 * y[j]
}
fn read_between(x: f64[], y: f64[], k: i32[], j: i32) {
  SWAP(x[j], y[j])
  y[0] += x[k[0]]
  x[j] += 1.5
}
fn inarg(x: f64[], y: f64[], t: f64[], n: i32, k: i32) {
  for l in 0..n {
    ROT(x[l], y[l], t[k])
    x[l] += t[k] * y[l]
  }
}
fn tabled(x: f64[], t: f64[], n: i32) {
  for k in 0..len(t) {
    for l in 0..n {
      ROT(x[2 * l], x[2 * l + 1], t[k])
    }
  }
}`

/**
 * The generated code of a loop the passes guard with \`$apart\` tests (see \`apart.ts\` of
 * \`@tenet/ir\`): the branch the tests lead to (the \`else\` holds the loop as written); the whole
 * code where there is no such test.
 */
function movedBranch(code: string): string {
  const lines = code.split('\n')
  const at = lines.findIndex((l) => l.includes('$apart('))
  if (at < 0) return code
  const head = lines.findIndex((l, i) => i > at && /^\s*if \(c\d+\) \{$/.test(l))
  const indent = lines[head]!.length - lines[head]!.trimStart().length
  const end = lines.findIndex((l, i) => i > head && l === `${' '.repeat(indent)}} else {`)
  expect(end).toBeGreaterThan(head)
  return lines.slice(head, end).join('\n')
}

describe('stores and loads around bijection calls (cpu backend)', () => {
  const m = compileModule(parse({ text: jammed, name: 'bij' }), { registry, backend: 'cpu', checks: false })

  it('stores an element that a later call of the run rewrites from the kept value once (printed JS)', () => {
    // (the jammed loop, where x and θ are apart: see \`movedBranch\`)
    const code = movedBranch(body(m, 'two'))
    // before: x[i + m·l] stored by both rotations (`p0[((p2 + c) | 0)] = o…;` and again);
    // after: the first rotation's new value is kept in a local that the second reads, and only
    // the second stores it; every other element is stored once
    const stores = code.match(/p0\[[^\]]+\] = /g) ?? []
    expect(stores).toHaveLength(3)
    expect(code).toMatch(/const (o\d+) = [^;]+;[\s\S]*const t\d+ = \1;/)
    // the inverse rotates back: the same, the other way round
    expect(movedBranch(body(m, 'two', true)).match(/p0\[[^\]]+\] = /g)).toHaveLength(3)
  })

  it('drops the store of a call that an update then rewrites, and keeps it where another element of the array may be read in between (printed JS)', () => {
    // SWAP's new x[j] is the update's old value: stored once, by the update
    expect(body(m, 'swap_then_add').match(/p0\[p2\] = /g)).toHaveLength(1)
    // x[k[0]] may be x[j]: the swapped value is stored before it is read
    expect(body(m, 'read_between').match(/p0\[p3\] = /g)).toHaveLength(2)
  })

  it('loads the angle a loop passes as ROT’s `in` argument before the loop and never stores it back, or not at all where tables hold cos θ and sin θ (printed JS)', () => {
    // before: \`let r = p2[x]\` before the loop and \`p2[x] = r\` after it (ROT may have written
    // t[k], as far as the promotion knew); after: loaded once, never stored
    const code = movedBranch(body(m, 'inarg'))
    expect(code).toMatch(/let (r\d+) = p2\[x\d+\];/)
    expect(code).not.toMatch(/p2\[[^\]]+\] =/)
    // the update rewrites x[l] from the value ROT kept: stored once (and y[l] once)
    expect(code.match(/p0\[i\d+\] =/g)).toHaveLength(1)
    expect(code.match(/p1\[i\d+\] =/g)).toHaveLength(1)
    // hoist-calls (two) and the tables of tabulate (tabled) give the rotations cos θ and sin θ:
    // the loops over l load θ neither inside nor before them, and never store it
    for (const f of ['two', 'tabled']) {
      expect(movedBranch(body(m, f))).not.toMatch(/let r\d+ = p1\[/)
      expect(movedBranch(body(m, f))).not.toMatch(/p1\[[^\]]+\] =/)
    }
  })

  it('gives the interpreter’s results bit for bit on these functions, forwards and backwards, checks on and off', () => {
    for (const checks of [false, true]) {
      const go = (backend: string) => {
        const c = compileModule(parse({ text: jammed, name: 'bij' }), { registry, backend, checks })
        const x = Float64Array.from({ length: 12 }, (_, i) => Math.sin(i + 1))
        const y = Float64Array.from({ length: 12 }, (_, i) => Math.cos(2 * i))
        const t = Float64Array.from([0.3, -1.1, 2.2])
        const k = Int32Array.from([4])
        const out: number[][] = []
        const calls: Array<[string, unknown[]]> = [
          ['two', [x, t, 1, 4, 3, 1]],
          ['swap_then_add', [x, y, 5]],
          ['read_between', [x, y, k, 4]],
          ['read_between', [x, y, k, 3]],
          ['inarg', [x, y, t, 12, 2]],
          ['tabled', [x, t, 6]],
        ]
        for (const [name, args] of calls) {
          const f = c[name] as unknown as Run
          f(...args)
          out.push(Array.from(x), Array.from(y))
          f.inverse(...args)
          out.push(Array.from(x), Array.from(y))
        }
        return out
      }
      expect(go('cpu'), `checks ${checks}`).toEqual(go('interpreter'))
    }
  })

  it('random runs of updates and bijection calls over two arrays: the interpreter’s results bit for bit, checks on and off', () => {
    // indices a constant apart (provably different), equal, or unknown (k[i]); calls SWAP, ROT and
    // IROT (inout arguments written, θ read) mixed with updates, so that a call's stores are
    // rewritten by later calls and updates, or read (from memory or from the kept value) first
    let state = 4242
    const rand = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0
      return (state >>> 8) % n
    }
    const indices = ['i', 'i + 1', 'i + 2', '2 * i', '2 * i + 1', 'k[i]', '0']
    const elem = (arr: string) => `${arr}[${indices[rand(indices.length)]}]`
    // two different elements (a bijection's arguments must not alias)
    const pair = (): [string, string] => {
      const a = rand(2) === 0 ? 'x' : 'y'
      const b = rand(2) === 0 ? 'x' : 'y'
      if (a !== b) return [elem(a), elem(b)]
      const base = ['i', '2 * i', 'k[i]'][rand(3)]!
      return [`${a}[${base}]`, `${a}[${base} + ${1 + rand(2)}]`]
    }
    for (let program = 0; program < 20; program++) {
      const lines: string[] = []
      for (let s = 0; s < 10; s++) {
        const kind = rand(5)
        if (kind < 3) {
          const [a, b] = pair()
          const call = ['SWAP', 'ROT', 'IROT'][kind]!
          // (an angle of an array nothing writes: t[i] is the same element in every ROT of an iteration)
          const angle = call === 'SWAP' ? '' : `, ${['c', 't[i]', 't[0]', 't[i + 1] * 0.5'][rand(4)]!}`
          lines.push(`    ${call}(${a}, ${b}${angle})`)
        } else {
          const target = rand(2) === 0 ? 'x' : 'y'
          const other = target === 'x' ? 'y' : 'x'
          const op = ['+=', '-=', '*='][rand(3)]!
          const value = op === '*=' ? '1.5' : [`${elem(other)} * 0.5`, `${elem(other)} + c`][rand(2)]!
          lines.push(`    ${target}[${indices[rand(indices.length)]}] ${op} ${value}`)
        }
      }
      const text = `
fn run(x: f64[], y: f64[], t: f64[], k: i32[], c: f64) {
  for i in 0..4 {
${lines.join('\n')}
  }
}`
      for (const checks of [false, true]) {
        const go = (backend: string) => {
          const c = compileModule(parse({ text, name: 'rand' }), { registry, backend, checks })
          const t = Float64Array.from([0.3, -1.2, 2.5, 0.8, -0.4])
          const x = Float64Array.from([0.5, -1.25, 2, 0.75, 0.1, -0.3, 1.7, 0.9, 0.4, -0.2]),
            y = Float64Array.from([1, 0.3, -0.6, 1.1, 0.2, 0.4, -0.8, 1.3, 0.7, 0.05])
          const f = c.run as unknown as Run
          const k = Int32Array.from([3, 5, 0, 1])
          f(x, y, t, k, 0.7)
          const after = [Array.from(x), Array.from(y)]
          f.inverse(x, y, t, k, 0.7)
          return [after, Array.from(x), Array.from(y)]
        }
        expect(go('cpu'), `${text}\nchecks ${checks}`).toEqual(go('interpreter'))
      }
    }
  })
})
