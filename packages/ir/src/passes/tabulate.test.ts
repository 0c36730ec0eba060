/**
 * Pass `tabulate` on printed IR before and after (the backends' tests check that compiled
 * programs with tables compute what the interpreter does).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type FunctionDef } from '../index.js'
import { iterationVariant, tabulate } from './index.js'

const registry = createRegistry()
const fnOf = (text: string, name = 'f'): FunctionDef =>
  check(parse(text, []).functions, [], registry).functions.get(name)!
const body = (f: FunctionDef): string =>
  printFunction(f)
    .split('\n')
    .slice(1, -1)
    .map((l) => l.slice(2))
    .join('\n')
const tabulated = (text: string, name = 'f') => body(tabulate(fnOf(text, name), registry))

const umm = `fn f(x: f64[], theta: f64[], m: i32, n: i32) {
  for l in 0..n {
    k: i32 <- 0
    for j in 0..m {
      for i in m - 2..=j by -1 {
        ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        INC(k)
      }
    }
    k -> len(theta)
  }
}`

describe('pass `tabulate`', () => {
  it('dbg', () => {
    console.log(tabulated(umm))
  })
})
