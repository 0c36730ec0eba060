// CPU time per call of the GMM d=10 K=25 n=10k rows in this process, measured twice: with
// `detach`, a Tenet (wasm) row runs in between (its memory grows, which detaches an ArrayBuffer);
// without, nothing does. Run each way in a fresh process, several times, alternating:
//   node apps/bench/scripts/detach-effect.mjs; node apps/bench/scripts/detach-effect.mjs detach
// (after building @tenet/bench). See the README, *Isolation*.
import { assembleWorkloads, ROW_FAMILIES } from '../dist/index.js'

const detach = process.argv[2] === 'detach'
const [w] = assembleWorkloads(ROW_FAMILIES, ['gmm'])
const spec = w.cases({ full: false }).find((c) => c.label.includes('10k'))
const instance = spec.make()
const base = w.baseline.setup(instance)
const row = (name, kind) => w.rows.find((r) => r.name === name && r.kind === kind).setup(instance)
const grad = await row('Tenet (cpu)', 'gradient')
const obj = await row('Tenet (cpu)', 'objective')
/** CPU ms per call of `fn` over `n` calls, after three warm-up calls. */
const cpu = (fn, n) => {
  for (let i = 0; i < 3; i++) fn()
  const t = process.cpuUsage()
  for (let i = 0; i < n; i++) fn()
  const d = process.cpuUsage(t)
  return ((d.user + d.system) / 1000 / n).toFixed(1)
}
const times = () =>
  `plain objective ${cpu(() => base.run(), 10)} ms, Tenet (cpu) objective ${cpu(() => obj.run(), 10)} ms, Tenet (cpu) gradient ${cpu(() => grad.run(), 10)} ms`
console.log('before:', times())
if (detach) {
  const wasm = await row('Tenet (wasm)', 'objective')
  await wasm.check()
  wasm.run()
  wasm.dispose?.()
}
console.log(detach ? 'after a Tenet (wasm) row:' : 'no wasm row:', times())
