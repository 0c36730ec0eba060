import { test } from 'vitest'
import { compile } from './compile.js'
import { gmmObjective, mlpObjective } from './models.js'
import { printTerm, canonicalNames } from './term.js'
test('x', () => {
  const { params, body } = mlpObjective()
  const c = compile(params, body, { wrt: ["w1", "b1", "w2", "b2"] })
  console.log(printTerm(canonicalNames(c.stages.optimized)))
  console.log(c.source.gradient)
})
