/**
 * The eval-free path: with code generation from strings forbidden (what a strict
 * Content-Security-Policy does in a page), every public function of `tenet` works on the
 * interpreter backend, and the cpu backend says to use it. Runs the built package in a child
 * Node with --disallow-code-generation-from-strings.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { finiteDifference } from '@tenet/testing'

const dist = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '../dist/index.js')).href

const script = `
import * as t from ${JSON.stringify(dist)}
const out = {}
try { new Function('return 1'); out.evalWorks = true } catch { out.evalWorks = false }
try { t.rev\`fn f(y: f64) { y += 1.0 }\` } catch (e) { out.cpu = { code: e.code, message: e.message } }
const r = t.rev.with({ backend: 'interpreter' })
const m = r\`
  fn f(y: f64, x: f64[]) {
    for i in 0..len(x) { y += sin(x[i]) * x[i] }
  }
  fn one(y: f64, x: f64) { y += x * x * x }
  fn step(dst: f64[], src: f64[]) { for i in 0..len(src) { dst[i] += src[i] + 0.1 * sin(src[i]) } }
\`
const x = Float64Array.from([0.5, 1.5])
out.forward = m.f(0, x)[0]
out.inverse = m.f.inverse(out.forward, x)[0]
out.gradient = Array.from(t.gradient(m.f, [0, x], { loss: 0 })[1])
const g = t.grad(m.f, { loss: 0 })
out.grad = Array.from(g(0, x)[1])
out.gradForward = t.grad(m.one, { loss: 0 })(0, 2)[1]
out.checkGrad = t.checkGrad(m.f, [0, x], { loss: 0 }).ok
out.jvp = t.jvp(m.f, [0, x], { v: [0, Float64Array.from([1, 0])] }).tangent[0]
out.jacobian = Array.from(t.jacobian(m.f, [0, x], { outputs: [0], inputs: [1] }))
out.hessian = Array.from(t.hessian(m.f, [0, x], { loss: 0, wrt: [1] }))
out.hvp = Array.from(t.hvp(m.f, [0, x], { loss: 0, v: [0, Float64Array.from([1, 0])] })[1])
const seed = Float64Array.from([1, 1])
out.checkpointed = Array.from(t.checkpointedGradient(m.step, Float64Array.from([0.5, 1]), 8, { schedule: 'bennett', k: 2, seed }).gradient)
out.storeAll = Array.from(t.checkpointedGradient(m.step, Float64Array.from([0.5, 1]), 8, { schedule: 'store-all', seed }).gradient)
console.log(JSON.stringify(out))
`

describe('eval-free (node --disallow-code-generation-from-strings)', () => {
  const run = spawnSync(
    process.execPath,
    ['--disallow-code-generation-from-strings', '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  )
  const out = run.status === 0 ? JSON.parse(run.stdout) : undefined

  it('the child ran with code generation forbidden', () => {
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    expect(out.evalWorks).toBe(false)
  })

  it('the cpu backend says to use the interpreter', () => {
    expect(out.cpu.code).toBe('backend/eval-forbidden')
    expect(out.cpu.message).toMatch(/use the interpreter backend, rev\.with\(\{ backend: 'interpreter' \}\)/)
  })

  it('forward, inverse and every AD entry point work on the interpreter', () => {
    const x = [0.5, 1.5]
    const value = x.reduce((s, v) => s + Math.sin(v) * v, 0)
    const d = x.map((v) => Math.cos(v) * v + Math.sin(v))
    const dd = x.map((v) => -Math.sin(v) * v + 2 * Math.cos(v))
    expect(out.forward).toBeCloseTo(value, 14)
    expect(out.inverse).toBeCloseTo(0, 14)
    for (const k of ['gradient', 'grad', 'jacobian'])
      out[k].forEach((v: number, i: number) => expect(v, k).toBeCloseTo(d[i]!, 12))
    expect(out.gradForward).toBeCloseTo(12, 12)
    expect(out.checkGrad).toBe(true)
    expect(out.jvp).toBeCloseTo(d[0]!, 12)
    expect(out.hessian).toHaveLength(4)
    expect(out.hessian[0]).toBeCloseTo(dd[0]!, 10)
    expect(out.hessian[3]).toBeCloseTo(dd[1]!, 10)
    expect(out.hessian[1]).toBe(0)
    expect(out.hvp[0]).toBeCloseTo(dd[0]!, 10)
    // every schedule gives the same gradient of the 8-step chain
    out.checkpointed.forEach((v: number, i: number) => expect(v).toBeCloseTo(out.storeAll[i], 12))
    const chain = (s: number) => {
      for (let k = 0; k < 8; k++) s = s + 0.1 * Math.sin(s)
      return s
    }
    const [fd] = finiteDifference(([s]: number[]) => chain(s!), [0.5], 1e-6)
    expect(out.storeAll[0]).toBeCloseTo(fd, 6)
  })
})
