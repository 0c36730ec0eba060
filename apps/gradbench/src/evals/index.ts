/** Every eval module the tool implements, by GradBench module name. */
import { det } from './det.js'
import { hello } from './hello.js'
import { kmeans } from './kmeans.js'
import { llsq } from './llsq.js'
import { lse } from './lse.js'
import { ode } from './ode.js'
import { gmm } from './gmm.js'
import { ba } from './ba.js'
import { lstm } from './lstm.js'
import { ht } from './ht.js'
import { particle } from './particle.js'
import { saddle } from './saddle.js'
import type { EvalModule } from './types.js'

export const MODULES: Readonly<Record<string, EvalModule>> = {
  hello,
  llsq,
  lse,
  det,
  ode,
  kmeans,
  gmm,
  ba,
  lstm,
  ht,
  particle,
  saddle,
}
