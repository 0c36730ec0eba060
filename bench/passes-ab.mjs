// A/B timing of a few Tenet programs against their plain-TS functions, for one built checkout:
//   node bench/passes-ab.mjs <checkout>   (default: this one; after `npx turbo run build`)
// Run it alternately on two checkouts (before and after a compiler change) and compare the
// ratios. Prints the minimum time per call (ms) over 60 rounds of ~2 ms batches: the minimum is
// what a loaded machine disturbs least. Used for the compiler-pass figures in the root README.
import { fileURLToPath } from 'node:url'
const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url))
const { rev, grad } = await import(`${root}/packages/tenet/dist/index.js`)
const P = await import(`${root}/apps/bench/dist/tenet/programs.js`)
const O = await import(`${root}/apps/bench/dist/objectives/leapfrog.js`)
const OB = await import(`${root}/apps/bench/dist/objectives/bessel.js`)
const OU = await import(`${root}/apps/bench/dist/objectives/unitary.js`)
const tag = rev.with({ checks: false })
const compile = (src) => tag(Object.assign([src], { raw: [src] }))
const cases = {}
{
  // leapfrog f64, 5 bodies, 1000 steps
  const m = compile(P.leapfrogSource('f64'))
  const nb = 5,
    x = Float64Array.from({ length: 15 }, (_, i) => Math.sin(i + 1) * 3),
    v = Float64Array.from({ length: 15 }, (_, i) => Math.cos(i) * 0.01),
    ms = Float64Array.from([1, 1e-3, 2e-3, 3e-4, 5e-4])
  const F = m.leapfrog.core
  const x0 = x.slice(),
    v0 = v.slice()
  cases['leapfrog f64 forward (1000 steps)'] = () => {
    x.set(x0)
    v.set(v0)
    F(x, v, ms, nb, 1e-3, 0.01, 1000)
  }
  const sys = O.solarSystem()
  cases['plain leapfrog f64 (1000 steps, solar system)'] = () => O.leapfrogF64(sys, 0.01, 1000)
  const xs = Float64Array.from(sys.x ?? sys.positions ?? x),
    vs = Float64Array.from(sys.v ?? sys.velocities ?? v),
    mass = Float64Array.from(sys.mass ?? ms)
  const xs0 = xs.slice(),
    vs0 = vs.slice()
  cases['leapfrog f64 forward (solar system)'] = () => {
    xs.set(xs0)
    vs.set(vs0)
    F(xs, vs, mass, mass.length, O.G_SOLAR, 0.01, 1000)
  }
}
{
  const m = compile(P.unitaryLossSource)
  const M = 64,
    N = 64
  const x = Float64Array.from({ length: M * N }, (_, i) => Math.sin(i)),
    th = Float64Array.from({ length: (M * (M - 1)) / 2 }, (_, i) => 0.01 * i)
  const F = m.i_umm.core
  const xu0 = x.slice()
  cases['unitary forward M=N=64'] = () => {
    x.set(xu0)
    F(x, th, M, N)
  }
  cases['plain unitary step M=N=64'] = () => OU.unitaryStepPlain(x, M, N, th)
  const c = Float64Array.from({ length: M * N }, (_, i) => Math.cos(i))
  const g = grad(m.umm_loss, { loss: 0 })
  cases['unitary gradient M=N=64'] = () => {
    x.set(xu0)
    g.run(0, x, th, c, M, N)
  }
}
{
  const m = compile(P.besselSource)
  const F = m.ibesselj.core
  cases['bessel forward'] = () => F(0, 2, 1.0)
  cases['plain bessel'] = () => OB.besselJPlain(2, 1.0)
  const g = grad(m.ibesselj, { loss: 0 })
  cases['bessel gradient'] = () => g.run(0, 2, 1.0)
}
const names = Object.keys(cases)
const best = Object.fromEntries(names.map((n) => [n, Infinity]))
for (let round = 0; round < 60; round++)
  for (const n of names) {
    const f = cases[n]
    let reps = 1
    const t0 = performance.now()
    f()
    const one = performance.now() - t0
    reps = Math.max(1, Math.min(20000, Math.floor(2 / Math.max(one, 1e-4))))
    const t1 = performance.now()
    for (let i = 0; i < reps; i++) f()
    const per = (performance.now() - t1) / reps
    if (round > 3) best[n] = Math.min(best[n], per)
  }
console.log(JSON.stringify(best))
