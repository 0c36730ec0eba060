import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import * as ad from '@tenet/ad'
const src = `
fn spmul(yre: f64[], yim: f64[], colptr: i32[], rowval: i32[], are: f64[], aim: f64[], xre: f64[], xim: f64[], n: i32) {
  for j in 0..n {
    for q in colptr[j]..colptr[j + 1] {
      yre[rowval[q]] += are[q] * xre[j] - aim[q] * xim[j]
      yim[rowval[q]] += are[q] * xim[j] + aim[q] * xre[j]
    }
  }
}
fn spmul_loss(loss: f64, yre: f64[], yim: f64[], colptr: i32[], rowval: i32[], are: f64[], aim: f64[], xre: f64[], xim: f64[], n: i32, bre: f64[], bim: f64[]) {
  spmul(yre, yim, colptr, rowval, are, aim, xre, xim, n)
  for i in 0..len(yre) {
    loss += bre[i] * yre[i] + bim[i] * yim[i]
  }
}`
const registry = createRegistry().registerBackend(cpuBackend)
const m = compileModule(parse({ text: src, name: 'x' }), { registry, backend: 'cpu', checks: false })
const p = ad.planGradient(m.spmul_loss, { loss: 0 })
console.log(JSON.stringify(p.plan, null, 1).slice(0, 1500))
const f = p.fused
if (f) { const info = f[Symbol.for('tenet.function')]; console.log(info.compiled.sourceOf(info.name, false)) }
else {
  const c = ad.compileAdjoint ? ad.compileAdjoint(m.spmul_loss) : null
  console.log(Object.keys(ad).filter(k=>/adj|compile/i.test(k)))
}
const c = ad.compileAdjoint(m.spmul_loss)
const info = c.adjoint[Symbol.for('tenet.function')]
for (const [name] of info.program.functions) { const s = info.compiled.sourceOf(name, false); if (s) console.log(s) }
