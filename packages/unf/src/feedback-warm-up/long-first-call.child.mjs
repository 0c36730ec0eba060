// Child of feedback-warm-up.test.ts: compiles a program of the built package, calls its value and
// gradient `calls` times each on one array of `n` elements (run with --trace-deopt, whose lines
// the parent counts), then prints the last results.
import { compileText } from '../../dist/index.js'

const [text, n, calls] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])]
const a = Float64Array.from({ length: n }, (_, i) => 1 + 0.001 * Math.sin(i))
const c = compileText(text)
let value = 0
let gradient = []
for (let k = 0; k < calls; k++) value = c.value(a)
for (let k = 0; k < calls; k++) gradient = c.gradient(a)
console.log(JSON.stringify({ value, gradientValue: gradient[0], first: gradient[1][0][0] }))
