/**
 * Pass `unroll` on printed IR, and what its copies print in run-time errors (`printAsWritten`:
 * the loop variable and the sums folded around it as the source wrote them, `Substituted.shown`).
 * The compiled programs' messages are compared with the interpreter's in `@tenet/backend-wasm`'s
 * `substituted-messages.test.ts` (cpu and wasm).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type FunctionDef, type Stmt } from '../index.js'
import { walk } from '../check.js'
import { printAsWritten } from '../printer.js'
import { unrollLoops } from './index.js'

const registry = createRegistry()
const fnOf = (text: string, name = 'f'): FunctionDef =>
  check(parse(text, []).functions, [], registry).functions.get(name)!

/** Each update of `f`, printed as the IR (`printFunction`) and as a run-time error words it. */
function updates(f: FunctionDef): Array<[string, string]> {
  const out: Array<[string, string]> = []
  walk(f.body, (s: Stmt) => {
    if (s.kind === 'update') {
      const text = printFunction({ ...f, body: [s] })
        .split('\n')[1]!
        .trim()
      out.push([text, `${printAsWritten(s.target)} ${s.op} ${printAsWritten(s.value)}`])
    }
  })
  return out
}

describe('pass `unroll`', () => {
  it('copies the body per value; a copy prints the variable, and sums folded around it, as written', () => {
    const f = unrollLoops(
      fnOf(`fn f(y: f64[], x: f64[], k: i32) {
  for c in 0..2 {
    y[c] += x[k + c] * x[2 * (k + c) - 1] + x[k + c - 1]
  }
}`),
    )
    expect(updates(f)).toEqual([
      ['y[0] += x[k] * x[2 * k - 1] + x[k - 1]', 'y[c] += x[k + c] * x[2 * (k + c) - 1] + x[k + c - 1]'],
      ['y[1] += x[k + 1] * x[2 * (k + 1) - 1] + x[k]', 'y[c] += x[k + c] * x[2 * (k + c) - 1] + x[k + c - 1]'],
    ])
  })

  it('the mark is what prints the variable: without it a copy prints the value', () => {
    const f = unrollLoops(fnOf('fn f(y: f64[]) { for c in 0..2 { y[c] *= 2.0 } }'))
    const shown = {
      ...f,
      body: f.body.map((s) =>
        s.kind === 'update'
          ? { ...s, target: { ...s.target, index: { ...(s.target as { index: object }).index, shown: undefined } } }
          : s,
      ),
    } as FunctionDef
    // (without the mark it prints the value)
    expect(updates(shown).map(([, w]) => w)).toEqual(['y[0] *= 2.0', 'y[1] *= 2.0'])
    expect(updates(f).map(([, w]) => w)).toEqual(['y[c] *= 2.0', 'y[c] *= 2.0'])
  })
})
