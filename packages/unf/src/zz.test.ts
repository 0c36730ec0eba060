import { test } from 'vitest'
import { compile } from './compile.js'
import { gmmObjective, mlpObjective } from './models.js'
import { printTerm, canonicalNames } from './term.js'
test('x', () => {
  const { params, body } = gmmObjective()
  const c = compile(params, body, { wrt: ["alphas", "means", "logdiag", "lower"] })
  console.log(printTerm(canonicalNames(c.stages.optimized)))
  console.log(c.source.gradient)
})
