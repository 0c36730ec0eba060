import { it, expect } from 'vitest'
import { rev } from './test-util.js'
import { taylor, compileTaylor } from './taylor-mode.js'
import { besselSource } from './examples/papers.js'
it('smoke', () => {
  const m = rev`fn f(y: f64, x: f64) { y += exp(x) * sin(x) }`
  const r = taylor(m.f!, [0, 0.5], { direction: [0, 1], order: 4 })
  console.log(r.derivatives.map((d) => d[0]))
  console.log(compileTaylor(m.f!, 2).taylor.source)
  const b = rev(besselSource)
  const rb = taylor(b.ibesselj!, [0, 2, 1.0], { direction: [0, 0, 1], order: 4 })
  console.log(rb.derivatives.map((d) => d[0]))
})
