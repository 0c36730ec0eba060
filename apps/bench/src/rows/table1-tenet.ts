/**
 * Tenet (reversible) rows for seed 003's Table 1, each written as a reversible program would be:
 * the products accumulate into the loss (`s += …`); rotate_vec_by_quat computes its three scalars
 * in a `routine` that `~routine` uncomputes; the MLP keeps each sample's pre-activations and
 * activations in array ancillas of a `routine`; the particles' Euler step, which reads the
 * velocity it updates, is rewritten as a scaling and an update (see `particlesSource`).
 */
import { grad } from 'tenet'
import { blackBox } from '../harness/black-box.js'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { NotApplicable, PreparedRow } from '../harness/types.js'
import { type MlpData, PARTICLE_DT, ROT_COTANGENT } from '../objectives/table1.js'
import { compile, fn } from '../tenet/compile.js'
import type { DualCase } from '../workloads/dual.js'
import { TENET_ROW } from './tenet.js'

const lit = (v: number) => (Number.isInteger(v) ? `${v}.0` : `${v}`).replace(/^(-?)(\d)/, '$1$2')

const SOURCES: Partial<Record<DualCase['id'], string>> = {
  'scalar-mul': `fn f(s: f64, x: f64[]) { s += x[0] * x[1] }`,
  dot: `fn f(s: f64, x: f64[], n: i32) { for i in 0..n { s += x[i] * x[n + i] } }`,
  'sum-mat-vec': `fn f(s: f64, x: f64[], n: i32) { for i in 0..n { for j in 0..n { s += x[i * n + j] * x[n * n + j] } } }`,
  'rotate-vec-by-quat': `
    fn f(s: f64, x: f64[], n: i32) {
      for k in 0..n {
        routine {
          a <- 0.0
          b <- 0.0
          c <- 0.0
          a += 2.0 * (x[7*k+3] * x[7*k] + x[7*k+4] * x[7*k+1] + x[7*k+5] * x[7*k+2])
          b += x[7*k+6] * x[7*k+6] - (x[7*k+3] * x[7*k+3] + x[7*k+4] * x[7*k+4] + x[7*k+5] * x[7*k+5])
          c += 2.0 * x[7*k+6]
        }
        s += ${lit(ROT_COTANGENT[0])} * (a * x[7*k+3] + b * x[7*k] + c * (x[7*k+4] * x[7*k+2] - x[7*k+5] * x[7*k+1]))
        s += ${lit(ROT_COTANGENT[1])} * (a * x[7*k+4] + b * x[7*k+1] + c * (x[7*k+5] * x[7*k] - x[7*k+3] * x[7*k+2]))
        s += ${lit(ROT_COTANGENT[2])} * (a * x[7*k+5] + b * x[7*k+2] + c * (x[7*k+3] * x[7*k+1] - x[7*k+4] * x[7*k]))
        ~routine
      }
    }`,
}

/**
 * The particles in Tenet. The Euler step `v += dt·(−0.5p − 0.2v)` reads the velocity it updates,
 * which no reversible update may do; with p already advanced (p' = p + dt·v) the same step is
 * `v *= 1 − 0.2dt + 0.5dt²; v −= 0.5dt·p'` — a scaling (a bijection; `/=` undoes it) and an
 * update. The same function up to rounding; each particle's state lives in four scalar ancillas.
 */
export function particlesSource(dt = PARTICLE_DT): string {
  return `
    fn f(s: f64, x: f64[], n: i32, steps: i32) {
      for k in 0..n {
        routine {
          px <- 0.0; py <- 0.0; vx <- 0.0; vy <- 0.0
          px += x[4*k]; py += x[4*k+1]; vx += x[4*k+2]; vy += x[4*k+3]
          for t in 0..steps {
            px += ${lit(dt)} * vx
            py += ${lit(dt)} * vy
            vx *= ${lit(1 - 0.2 * dt + 0.5 * dt * dt)}
            vx -= ${lit(0.5 * dt)} * px
            vy *= ${lit(1 - 0.2 * dt + 0.5 * dt * dt)}
            vy -= ${lit(0.5 * dt)} * py
          }
        }
        s += px * py
        ~routine
      }
    }`
}

/**
 * The MLP in Tenet: per sample, a `routine` fills array ancillas with each layer's
 * pre-activations z = b + W·prev and (hidden layers) activations tanh(z), the squared errors of
 * the last layer are added to the loss (scaled by 1/batch), and `~routine` uncomputes the layers.
 * The sizes are constants of the source; the inputs and targets are arguments held constant.
 */
export function mlpSource(data: Pick<MlpData, 'layers' | 'batch'>): string {
  const { layers, batch } = data
  const L = layers.length
  let ancillas = ''
  let body = ''
  let p = 0
  for (let l = 1; l < L; l++) {
    const nin = layers[l - 1]!
    const nout = layers[l]!
    const bias = p + nout * nin
    const read = l === 1 ? `inp[s * ${nin} + i]` : `a${l - 1}[i]`
    ancillas += `      z${l}: f64[] <- zeros(${nout})\n`
    if (l < L - 1) ancillas += `      a${l}: f64[] <- zeros(${nout})\n`
    body += `      for o in 0..${nout} {
        z${l}[o] += x[${bias} + o]
        for i in 0..${nin} { z${l}[o] += x[${p} + o * ${nin} + i] * ${read} }
${l < L - 1 ? `        a${l}[o] += tanh(z${l}[o])\n` : ''}      }\n`
    p = bias + nout
  }
  const m = layers[L - 1]!
  const e = `(z${L - 1}[o] - tgt[s * ${m} + o])`
  return `
fn f(loss: f64, x: f64[], inp: f64[], tgt: f64[]) {
  for s in 0..${batch} {
    routine {
${ancillas}${body}    }
    for o in 0..${m} { loss += ${lit(1 / batch)} * (${e} * ${e}) }
    ~routine
  }
}`
}

/**
 * \`() => run(a0, a1, …)\` as code of its own per case, its arguments bound: as the plain rows'
 * \`ownRun\`, so the call site sees one function, and no spread call (\`run(...args)\` cost about
 * 11 ns, more than the 4 ns scalar multiplication itself).
 */
let calls = 0
function ownCall(run: (...a: unknown[]) => unknown, args: unknown[]): () => void {
  const names = args.map((_, i) => `a${i}`)
  // (numbered, and named for this instance of the module: V8 caches the code of \`new Function\` by
  // its text, feedback included, so that identical texts from the cpu row and its wasm twin, a
  // second instance of this module, shared one call site of both drivers)
  const tag = `${import.meta.url} ${++calls}`.replace(/[^\w:/.?=-]/g, '_')
  // (the arguments read through the harness's black box, as the case's inputs are: bound as
  // parameters of the closure, V8 folded them into the optimised code as constants; black-box.ts)
  const a = blackBox(Object.fromEntries(names.map((n, i) => [n, args[i]])))
  return new Function(
    'run',
    'a',
    `'use strict'; // call ${tag}\nreturn () => { run(${names.map((n) => `a.${n}`).join(', ')}) }`,
  )(run, a) as () => void
}

function tenetRow(c: DualCase): PreparedRow | NotApplicable {
  const x = c.x.slice()
  let source = SOURCES[c.id]
  let args: unknown[] = c.id === 'scalar-mul' ? [0, x] : [0, x, c.sizes.n]
  let constants: number[] | undefined
  if (c.id === 'particles') {
    source = particlesSource()
    args = [0, x, c.sizes.n, c.sizes.steps ?? 0]
  } else if (c.id === 'neural') {
    if (!c.mlp) return { na: 'the neural case carries no MLP data' }
    source = mlpSource(c.mlp)
    args = [0, x, c.mlp.inputs, c.mlp.targets]
    constants = [2, 3]
  }
  if (!source) return { na: `no Tenet source for ${c.id}` }
  const g = grad(fn(compile(source), 'f'), constants ? { loss: 0, constants } : { loss: 0 })
  return {
    run: ownCall(g.run, args),
    check: () => {
      g.run(...args)
      return checkClose(g.buffers[1]!, c.gradient(), TOLERANCE.f64, 'gradient')
    },
  }
}

export const table1TenetRows = defineRowFamily({
  family: 'Tenet',
  rows: { dual: [{ name: TENET_ROW, kind: 'gradient', setup: tenetRow }] },
})
