#!/usr/bin/env node
// The main job: until the benchmark suite is wired in, run an example program forwards and
// backwards and print both directions.
import { rev } from 'tenet'

const m = rev`
  fn multiplier(a: f64, b: f64, c: f64) {
    a += b * c
  }

  fn rrfib(out: i32, n: i32) {
    if (n >= 1, ~) {
      counter: i32 <- 0
      counter += n
      while (counter > 1, counter != n) {
        rrfib(out, counter - 1)
        counter -= 2
      }
      counter -= n % 2
      counter -> 0
    }
    out += 1
  }
`
console.log(m.multiplier.source)
console.log('multiplier(2, 3, 5)          =', m.multiplier(2, 3, 5))
console.log('multiplier.inverse(17, 3, 5) =', m.multiplier.inverse(17, 3, 5))
console.log()
console.log(m.rrfib.inverse.source)
console.log('rrfib(0, 20)                 =', m.rrfib(0, 20))
console.log('rrfib.inverse(10946, 20)     =', m.rrfib.inverse(10946, 20))
