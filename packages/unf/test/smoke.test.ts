import { test } from 'vitest'
import * as U from '../src/index.js'
test('smoke', () => {
  const A = U.arrayType()
  for (const [name, body, ctx] of [['sum', U.sum(U.v('A')), [['A', A]]], ['dot', U.dot(U.v('A'), U.v('B')), [['A', A], ['B', A]]], ['prod', U.prod(U.v('A')), [['A', A]]], ['lse', U.logsumexp(U.v('A')), [['A', A]]]] as const) {
    const c = U.compile(ctx as any, body)
    console.log(name, U.printTerm(c.stages.optimized))
    console.log(c.source.gradient)
    console.log(c.gradient(Float64Array.of(1, 2, 0, 4), Float64Array.of(5, 6, 7, 8)))
  }
})
