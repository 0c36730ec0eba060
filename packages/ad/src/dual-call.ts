/**
 * A Tenet function as one primitive of the dual-numbers engine (`@tenet/dual`): inside a function
 * written against the dual API, `call(d, …args)` runs the Tenet function forwards on the values and
 * records a single node whose reverse step is the Tenet adjoint (the `vjp` rule of this package).
 * The dual engine never sees the Tenet function's internals; its gradient comes from reversibility.
 */
import { defineRule, DualError, HANDLE_BASE, type Dual, type Real } from '@tenet/dual'
import type { TenetFunction } from '@tenet/reversible'
import { vjp, type RuleSeed, type RuleSpec } from './vjp.js'
import { infoOf } from './compile.js'

/** An argument of a Tenet function called from the dual engine. */
export type DualCallArg = Real | readonly Real[] | number | boolean | ArrayLike<number>

/**
 * Makes `f` callable inside dual-engine functions: `call(d, ...args)` takes one argument per
 * parameter of `f` — handles (`Real`, `Real[]`) for the differentiated inputs (`spec.wrt`, default:
 * every float argument), handles or plain values for the others (their values are used, without a
 * derivative) — and returns the final values of `spec.outputs` (default: every float argument `f`
 * writes) as handles: a `Real` per scalar output, a `Real[]` per array output.
 *
 * ```ts
 * const m = rev`fn kernel(y: f64, x: f64[]) { for i in 0..len(x) { y += sin(x[i]) } }`
 * const kernel = dualCall(m.kernel, { wrt: [1], outputs: [0] })
 * const g = grad((d, x: Real[]) => d.square(kernel(d, d.constant(0), x)[0] as Real))
 * ```
 */
export function dualCall(f: TenetFunction, spec?: RuleSpec): (d: Dual, ...args: DualCallArg[]) => Array<Real | Real[]> {
  const rule = vjp(f, spec)
  const info = infoOf(f)
  const params = f.ir.params
  const wrt = new Set(rule.wrt)
  return (d, ...args) => {
    if (args.length !== params.length)
      throw new DualError(
        'dual/tenet-arity',
        `\`${info.name}\` takes ${params.length} arguments (${params.map((p) => p.name).join(', ')}), got ${args.length}`,
      )
    // the differentiated inputs, flattened, and where each argument's values start
    const xs: Real[] = []
    const starts: number[] = []
    for (const i of rule.wrt) {
      const a = args[i]
      starts.push(xs.length)
      if (typeof a === 'number' && isHandle(a, d)) xs.push(a as Real)
      else if (Array.isArray(a) && a.every((h) => typeof h === 'number' && isHandle(h, d))) xs.push(...(a as Real[]))
      else
        throw new DualError(
          'dual/tenet-argument',
          `argument ${i} (\`${params[i]!.name}\`) of \`${info.name}\` is differentiated (spec.wrt): pass a handle (Real) or an array of handles of this call, got ${describe(a)}`,
        )
    }
    // plain values of the other arguments (handles give their values)
    const plain = args.map((a, i) => {
      if (wrt.has(i)) return undefined
      if (Array.isArray(a) && params[i]!.type.kind === 'array') return Float64Array.from(a as Real[], (h) => d.value(h))
      if (typeof a === 'number' && params[i]!.type.kind === 'scalar' && isHandle(a, d)) return d.value(a as Real)
      return a
    })
    const lengths = rule.outputs.map((i) =>
      params[i]!.type.kind === 'array' ? (args[i] as ArrayLike<unknown>).length : -1,
    )
    const m = lengths.reduce((s, n) => s + Math.max(n, 1), 0)
    const r = defineRule({
      name: info.name,
      inputs: xs.length,
      outputs: m,
      forward: (x, y) => {
        const callArgs = plain.slice()
        rule.wrt.forEach((i, k) => {
          const a = args[i]
          callArgs[i] =
            typeof a === 'number' ? x[starts[k]!]! : x.slice(starts[k]!, starts[k]! + (a as ArrayLike<unknown>).length)
        })
        const res = rule(...callArgs)
        let o = 0
        res.outputs.forEach((v) => {
          if (typeof v === 'number') y[o++] = v
          else {
            y.set(v, o)
            o += v.length
          }
        })
        return (ybar, xbar) => {
          let q = 0
          const seeds: RuleSeed[] = lengths.map((n) => (n < 0 ? ybar[q++]! : ybar.slice(q, (q += n))))
          const cot = res.pullback(seeds)
          cot.forEach((c, k) => {
            const s = starts[k]!
            if (typeof c === 'number') xbar[s] += c
            else for (let e = 0; e < c.length; e++) xbar[s + e] += c[e]!
          })
        }
      },
    })
    const ys = d.call(r, xs)
    let o = 0
    return lengths.map((n) => (n < 0 ? ys[o++]! : ys.slice(o, (o += n))))
  }
}

function isHandle(a: number, d: Dual): boolean {
  return Number.isInteger(a) && a >= HANDLE_BASE && a - HANDLE_BASE < d.top
}

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (typeof v === 'number') return `the plain number ${v} (wrap constants with d.constant)`
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name} (plain values: differentiated inputs must be handles)`
  return typeof v
}
