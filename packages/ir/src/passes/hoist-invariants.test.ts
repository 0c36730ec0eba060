import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type FunctionDef, type Program } from '../index.js'
import { hoistInvariants } from './index.js'

const checked = (text: string): Program => check(parse(text, []).functions, [], createRegistry())
const body = (f: FunctionDef): string =>
  printFunction(f)
    .split('\n')
    .slice(1, -1)
    .map((l) => l.slice(2))
    .join('\n')

describe('pass `hoist-invariants`', () => {
  it('dbg', () => {
    const p = checked(`fn f(y: f64[], x: f64[], theta: f64[], j: i32, n: i32, a: f64) {
      for i in 0..n { y[i] += x[i] * cos(theta[j]) + sin(a) * x[i] }
      for i in 0..4 { for k in 0..n { y[k] += exp(a) } }
    }`)
    console.log(body(hoistInvariants(p.functions.get('f')!)))
  })
})
