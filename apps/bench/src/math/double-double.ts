/**
 * Double-double arithmetic (about 106 bits): a value is hi + lo with |lo| ≤ ulp(hi)/2. Used only
 * as the high-precision reference for the leapfrog round-off study. Error-free transformations
 * by Knuth (two-sum) and Dekker (split / two-product), so no FMA is needed.
 */
export type DD = [hi: number, lo: number]

const SPLITTER = 134217729 // 2^27 + 1

function twoSum(a: number, b: number): DD {
  const s = a + b
  const bb = s - a
  const e = a - (s - bb) + (b - bb)
  return [s, e]
}

function quickTwoSum(a: number, b: number): DD {
  const s = a + b
  return [s, b - (s - a)]
}

function twoProd(a: number, b: number): DD {
  const p = a * b
  let t = SPLITTER * a
  const ah = t - (t - a)
  const al = a - ah
  t = SPLITTER * b
  const bh = t - (t - b)
  const bl = b - bh
  const e = ah * bh - p + ah * bl + al * bh + al * bl
  return [p, e]
}

export const dd = (x: number): DD => [x, 0]

export function ddAdd(a: DD, b: DD): DD {
  const [s, e1] = twoSum(a[0], b[0])
  const [t, e2] = twoSum(a[1], b[1])
  let [hi, lo] = quickTwoSum(s, e1 + t)
  ;[hi, lo] = quickTwoSum(hi, lo + e2)
  return [hi, lo]
}

export function ddNeg(a: DD): DD {
  return [-a[0], -a[1]]
}

export function ddSub(a: DD, b: DD): DD {
  return ddAdd(a, ddNeg(b))
}

export function ddMul(a: DD, b: DD): DD {
  const [p, e] = twoProd(a[0], b[0])
  return quickTwoSum(p, e + (a[0] * b[1] + a[1] * b[0]))
}

export function ddDiv(a: DD, b: DD): DD {
  const q1 = a[0] / b[0]
  let r = ddSub(a, ddMul(b, [q1, 0]))
  const q2 = r[0] / b[0]
  r = ddSub(r, ddMul(b, [q2, 0]))
  const q3 = r[0] / b[0]
  return ddAdd(quickTwoSum(q1, q2), [q3, 0])
}

export function ddSqrt(a: DD): DD {
  if (a[0] <= 0) return [0, 0]
  const x = Math.sqrt(a[0])
  // one Newton step in double-double: x + (a − x²)/(2x)
  const r = ddSub(a, twoProd(x, x))
  return ddAdd([x, 0], [r[0] / (2 * x), 0])
}

export const ddToNumber = (a: DD): number => a[0] + a[1]
