import { unitaryFunctions, unitaryRnnFunctions, sparseDotFunction } from '../dist/tenet/programs.js'
import { grad, TENET_FUNCTION } from 'tenet'
const which = process.argv[2] ?? 'unitary'
const u = which === 'rnn' ? unitaryRnnFunctions() : unitaryFunctions()
const g = grad(u.loss, { loss: 0 })
console.log(g.plan.program, g.plan.toString())
const ctx = g[Object.getOwnPropertySymbols(g).find(s=>String(s).includes('river')) ?? Object.getOwnPropertySymbols(g)[0]]
console.log(Object.keys(ctx))
const adj = g.adjoint
const info = adj[TENET_FUNCTION]
console.log(info.compiled.sourceOf?.(process.argv[3] ?? adj.name, false) ?? Object.keys(info))
console.log([...info.program.functions.keys()])
for (const n of info.program.functions.keys()) console.log(n, '\n', info.compiled.sourceOf?.(n, false))
