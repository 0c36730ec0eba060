import type { PrimitiveSpec, NumberSystemSpec } from '../plugin.js'
import { AddConst } from './AddConst.js'
import { DEC } from './DEC.js'
import { FLIP } from './FLIP.js'
import { HADAMARD } from './HADAMARD.js'
import { INC } from './INC.js'
import { INV } from './INV.js'
import { IROT } from './IROT.js'
import { NEG } from './NEG.js'
import { ROT } from './ROT.js'
import { SWAP } from './SWAP.js'
import { SubConst } from './SubConst.js'
import { abs } from './abs.js'
import { abs2 } from './abs2.js'
import { acos } from './acos.js'
import { asin } from './asin.js'
import { atan } from './atan.js'
import { atan2 } from './atan2.js'
import { cos } from './cos.js'
import { cosh } from './cosh.js'
import { exp } from './exp.js'
import { gaussian_log } from './gaussian_log.js'
import { identity } from './identity.js'
import { log } from './log.js'
import { max } from './max.js'
import { min } from './min.js'
import { pow } from './pow.js'
import { sign } from './sign.js'
import { sin } from './sin.js'
import { sincos } from './sincos.js'
import { sincos_inverse } from './sincos_inverse.js'
import { sinh } from './sinh.js'
import { sqrt } from './sqrt.js'
import { tan } from './tan.js'
import { tanh } from './tanh.js'
import { f64, f32, i32, bool } from './number-systems.js'

/** The standard instruction set: pure primitives (for `y += f(x)`) and bijections. */
export const standardPrimitives: PrimitiveSpec[] = [
  AddConst,
  DEC,
  FLIP,
  HADAMARD,
  INC,
  INV,
  IROT,
  NEG,
  ROT,
  SWAP,
  SubConst,
  abs,
  abs2,
  acos,
  asin,
  atan,
  atan2,
  cos,
  cosh,
  exp,
  gaussian_log,
  identity,
  log,
  max,
  min,
  pow,
  sign,
  sin,
  sincos,
  sincos_inverse,
  sinh,
  sqrt,
  tan,
  tanh,
]

/** The number systems every registry starts with. */
export const standardNumberSystems: NumberSystemSpec[] = [f64, f32, i32, bool]

export { det } from './det.js'
export { dot } from './dot.js'
export { logsumexp } from './logsumexp.js'
